"""Tests of the shared training loop `posteval.models.training.fit`."""

import math

import pytest
import torch

from torch.optim.optimizer import register_optimizer_step_pre_hook

from posteval.models.training import TrainingJob, TrainingSettings, fit

S = TrainingSettings


class Scalar(torch.nn.Module):
    """One trainable number w; the loss is mean (w - y)^2."""

    def __init__(self, start=0.0):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor(float(start)))


def squared(model, batch):
    return ((model.w - batch[0]) ** 2).mean()


def regression_data(n, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5]]) + 0.1 * torch.randn(n, 1, generator=g)
    return x, y


def linear_loss(model, batch):
    x, y = batch
    return ((model(x) - y) ** 2).mean()


def test_early_stopping_restores_the_best_weights():
    # training pulls w to +1 while the validation data sit at -1: the validation loss is
    # lowest after the first epoch and rises afterwards
    model = Scalar(start=-1.0)
    train = (torch.ones(64),)
    val = (-torch.ones(16),)
    hist = fit(model, train, val, S(epochs=100, batch_size=8, lr=0.05, patience=3), loss_fn=squared, disable=True)
    assert hist.stop_reason == "patience"
    assert hist.epochs == hist.best_epoch + 4
    assert hist.best_epoch == 0
    assert all(b > a for a, b in zip(hist.val_loss, hist.val_loss[1:]))
    assert float((model.w.detach() + 1.0) ** 2) == pytest.approx(hist.val_loss[0], rel=1e-5)
    assert hist.best_val_loss == hist.val_loss[0] and hist.seconds > 0


def test_converges_and_runs_all_epochs_while_improving():
    x, y = regression_data(512, seed=0)
    xv, yv = regression_data(128, seed=1)
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 1)
    hist = fit(model, (x, y), (xv, yv), S(epochs=40, batch_size=32, lr=0.05), loss_fn=linear_loss, disable=True)
    assert hist.val_loss[-1] < 0.05 * hist.val_loss[0]
    assert hist.val_loss[hist.best_epoch] == min(hist.val_loss)
    assert len(hist.train_loss) == len(hist.val_loss) == len(hist.lr) == hist.epochs


def test_nan_loss_raises_floating_point_error_naming_the_epoch():
    model = Scalar()

    def exploding(model, batch):
        return squared(model, batch) * (math.nan if model.training and exploding.calls >= 5 else 1.0)

    exploding.calls = 0

    def counting(model, batch):
        exploding.calls += 1
        return exploding(model, batch)

    with pytest.raises(FloatingPointError, match=r"epoch 1"):
        fit(model, (torch.ones(16),), (torch.ones(4),), S(epochs=5, batch_size=4, lr=0.1), loss_fn=counting, disable=True)


def test_nan_validation_loss_raises():
    model = Scalar()

    def bad_val(model, batch):
        return squared(model, batch) + (0.0 if model.training else math.inf)

    with pytest.raises(FloatingPointError, match="validation loss .* epoch 0"):
        fit(model, (torch.ones(8),), (torch.ones(4),), S(epochs=3, batch_size=4, lr=0.1), loss_fn=bad_val, disable=True)


def _train_once(seed):
    x, y = regression_data(256, seed=0)
    xv, yv = regression_data(64, seed=1)
    torch.manual_seed(123)  # same initial weights each time
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Dropout(0.2), torch.nn.Linear(8, 1))
    hist = fit(model, (x, y), (xv, yv), S(epochs=4, batch_size=16, lr=0.01), loss_fn=linear_loss, seed=seed,
               disable=True)
    return hist, torch.cat([p.detach().ravel() for p in model.parameters()])


def test_same_seed_same_result_other_seed_other_result():
    h1, w1 = _train_once(seed=5)
    h2, w2 = _train_once(seed=5)
    h3, w3 = _train_once(seed=6)
    assert h1.train_loss == h2.train_loss and h1.val_loss == h2.val_loss
    assert torch.equal(w1, w2)
    assert not torch.equal(w1, w3)


def test_learning_rate_decays_on_plateau():
    model = Scalar(start=-1.0)
    settings = S(epochs=20, batch_size=8, lr=0.01, patience=6, lr_decay_patience=2, lr_decay_factor=0.5)
    hist = fit(model, (torch.ones(8),), (-torch.ones(4),), settings, loss_fn=squared, disable=True)
    assert hist.lr[0] == 0.01 and min(hist.lr) == pytest.approx(0.01 * 0.5**2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(train=(torch.ones(4), torch.ones(3))), "train\\[1\\] has 3 events"),
        (dict(val=(torch.ones(0),)), "val is empty"),
        (dict(train=(torch.tensor([1.0, math.nan]),)), "train\\[0\\] contains NaN"),
        (dict(val=(torch.ones(2), torch.ones(2))), "train has 1 tensors but val has 2"),
        (dict(loss_fn=None), "has no loss"),
        (dict(loss_fn=3), "loss_fn must be callable"),
        (dict(settings=S(epochs=2, batch_size=2, lr=0.1, lr_decay_patience=2), val=None), "lr_decay_patience needs val"),
        (dict(shuffle=0), "shuffle"),
        (dict(settings=dict(epochs=2, batch_size=2, lr=0.1)), "settings must be a posteval.models.TrainingSettings"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, match):
    args = dict(model=Scalar(), loss_fn=squared, train=(torch.ones(4),), val=(torch.ones(2),),
                settings=S(epochs=2, batch_size=2, lr=0.1), disable=True)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        fit(**args)


BAD_SETTINGS = [
    (dict(epochs=0), "epochs"),
    (dict(batch_size=2.5), "batch_size"),
    (dict(lr=-1.0), "lr"),
    (dict(patience=0), "patience"),
    (dict(weight_decay=-1.0), "weight_decay"),
    (dict(max_seconds=0), "max_seconds"),
    (dict(lr_decay_factor=1.0), "lr_decay_factor"),
    (dict(lr_schedule=3), "lr_schedule must be callable"),
    (dict(grad_clip=0), "grad_clip"),
    (dict(lr_decay_patience=2, lr_schedule=lambda step: 1.0), "excludes lr_schedule"),
]


@pytest.mark.parametrize("kwargs, match", BAD_SETTINGS)
def test_bad_settings_raise_value_error_naming_the_setting(kwargs, match):
    with pytest.raises(ValueError, match=match):
        S(**{**dict(epochs=2, batch_size=2, lr=0.1), **kwargs})


def test_settings_are_frozen_and_picklable():
    import dataclasses
    import pickle

    from posteval.models.schedules import warmup_cosine

    settings = S(epochs=3, batch_size=8, lr=0.1, lr_schedule=warmup_cosine(2, 4))
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.lr = 1.0
    again = pickle.loads(pickle.dumps(settings))
    assert (again.epochs, again.batch_size, again.lr) == (3, 8, 0.1)
    assert again.lr_schedule(3) == settings.lr_schedule(3)
    assert dataclasses.replace(settings, lr=0.5).lr == 0.5


def test_old_keywords_still_work_with_a_deprecation_warning():
    """The keywords `fit`, `train_model`, `training_items` and `train_models` took before `TrainingSettings`
    (one release of backward compatibility): the same training, and a warning naming the new way."""
    from functools import partial

    from posteval.models import PointRegressor, train_model

    x, y = regression_data(64, seed=0)
    settings = S(epochs=3, batch_size=16, lr=0.05, patience=2, lr_decay_patience=1)
    torch.manual_seed(0)
    new_model = torch.nn.Linear(3, 1)
    new = fit(new_model, (x, y), (x, y), settings, loss_fn=linear_loss, disable=True)
    torch.manual_seed(0)
    old_model = torch.nn.Linear(3, 1)
    with pytest.warns(DeprecationWarning, match=r"fit\(epochs=\.\.\., .*settings=TrainingSettings\(") as seen:
        old = fit(old_model, (x, y), (x, y), loss_fn=linear_loss, epochs=3, batch_size=16, lr=0.05, patience=2,
                  lr_decay_patience=1, disable=True)
    assert seen[0].filename == __file__  # points at the caller's line
    assert old.train_loss == new.train_loss and old.val_loss == new.val_loss and old.lr == new.lr
    assert all(torch.equal(a, b) for a, b in zip(old_model.parameters(), new_model.parameters()))

    build = partial(PointRegressor, 1, 3, hidden=(4,))
    with pytest.warns(DeprecationWarning, match="train_model"):
        _, h_old = train_model(build, (x, y), (x, y), epochs=2, batch_size=16, lr=0.05, seed=3, disable=True)
    _, h_new = train_model(build, (x, y), (x, y), S(epochs=2, batch_size=16, lr=0.05), seed=3, disable=True)
    assert h_old.val_loss == h_new.val_loss
    from posteval.models import training_items

    with pytest.warns(DeprecationWarning, match="training_items"):
        item, = training_items([(build, 3)], (x, y), epochs=2, batch_size=16, lr=0.05)
    assert item.settings == S(epochs=2, batch_size=16, lr=0.05)
    for kwargs, match in BAD_SETTINGS[:3]:  # the old keywords are checked as before
        with pytest.raises(ValueError, match=match), pytest.warns(DeprecationWarning):
            fit(Scalar(), (torch.ones(4),), loss_fn=squared, **{**dict(epochs=2, batch_size=2, lr=0.1), **kwargs})
    with pytest.raises(TypeError, match="not both"):
        fit(Scalar(), (torch.ones(4),), settings=S(epochs=2, batch_size=2, lr=0.1), loss_fn=squared, lr=0.2)
    with pytest.raises(TypeError, match="unexpected keyword argument 'epoch'"):
        fit(Scalar(), (torch.ones(4),), loss_fn=squared, epoch=2)


def test_a_training_job_is_a_named_picklable_record():
    import pickle
    from functools import partial

    from posteval.models import PointRegressor, train_item, training_items

    x, y = regression_data(32, seed=0)
    settings = S(epochs=1, batch_size=16, lr=0.05)
    item, = training_items([(partial(PointRegressor, 1, 3, hidden=(4,)), 5)], (x, y), (x, y), settings,
                           train_rows=[[0, 1, 2, 3]], disable=True)
    assert (item.seed, item.threads, item.device, item.rows, item.fit_kwargs) == (5, 1, "cpu", [0, 1, 2, 3],
                                                                                 {"disable": True})
    again = pickle.loads(pickle.dumps(item))
    assert again.settings == settings and torch.equal(again.train[0], x)
    (_, h1), (_, h2) = train_item(item), train_item(again)
    assert h1.train_loss == h2.train_loss
    with pytest.raises(TypeError, match="unexpected keyword argument 'loss'"):
        training_items([], (x, y), settings=settings, loss=linear_loss)


def test_without_validation_runs_every_epoch_and_keeps_the_last_weights():
    model = Scalar(start=-1.0)
    hist = fit(model, (torch.ones(64),), settings=S(epochs=5, batch_size=8, lr=0.05), loss_fn=squared, disable=True)
    assert hist.epochs == 5 and hist.best_epoch == 4 and hist.val_loss == [] and hist.stop_reason == "epochs"
    assert math.isnan(hist.best_val_loss)
    assert hist.train_loss == sorted(hist.train_loss, reverse=True)  # still improving: nothing restored
    assert float((model.w.detach() - 1.0) ** 2) < hist.train_loss[-1]


def test_model_loss_is_the_default_and_schedule_and_clipping_apply():
    class Own(Scalar):
        def loss(self, batch):
            return squared(self, batch)

    model = Own(start=-1.0)
    seen = []
    handle = register_optimizer_step_pre_hook(
        lambda opt, args, kwargs: seen.append(float(model.w.grad.abs())))
    try:
        hist = fit(model, (torch.ones(8),), settings=S(epochs=4, batch_size=4, lr=0.1,
                                                      lr_schedule=lambda step: 1.0 - step / 8, grad_clip=1e-3),
                   disable=True)
    finally:
        handle.remove()
    # two steps per epoch: the learning rate at the end of epoch k is 0.1 * (1 - 2(k+1)/8)
    assert hist.lr == pytest.approx([0.075, 0.05, 0.025, 0.0])
    assert len(seen) == 8 and max(seen) == pytest.approx(1e-3)  # unclipped |grad| = 2|w - 1| >= 2


def test_shared_shuffle_generator_is_used():
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    fit(Scalar(), (torch.arange(8.0),), settings=S(epochs=2, batch_size=4, lr=0.1), loss_fn=squared, shuffle=g1,
        disable=True)
    torch.randperm(8, generator=g2), torch.randperm(8, generator=g2)
    assert torch.equal(torch.rand(3, generator=g1), torch.rand(3, generator=g2))


def test_train_models_same_weights_in_worker_processes_as_here():
    """Each job is seeded and threaded alike wherever it runs: 2 worker processes == serial."""
    from functools import partial

    from posteval.models import PointRegressor, train_models
    from posteval.models.schedules import warmup_cosine

    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, 3, generator=g)
    y = x[:, :1] ** 2 + 0.1 * torch.randn(256, 1, generator=g)
    build = partial(PointRegressor, 1, 3, hidden=(16,))
    jobs = [(build, 0), (build, 7)]
    settings = S(epochs=3, batch_size=64, lr=1e-2, lr_schedule=warmup_cosine(2, 4))
    serial = train_models(jobs, (x, y), (x, y), settings, workers=1, progress=False)
    pooled = train_models(jobs, (x, y), (x, y), settings, workers=2, progress=False)
    for (m1, h1), (m2, h2) in zip(serial, pooled):
        assert h1.val_loss == h2.val_loss
        for p1, p2 in zip(m1.parameters(), m2.parameters()):
            assert torch.equal(p1, p2)
    assert serial[0][1].val_loss != serial[1][1].val_loss  # the seeds matter
    # the same jobs started in the background and waited for in another order: the same weights
    from posteval.models import train_item, training_items
    from posteval.parallel import BackgroundJobs

    items = training_items(jobs, (x, y), (x, y), settings)
    assert all(isinstance(item, TrainingJob) and item.settings == settings for item in items)
    background = BackgroundJobs(train_item, items, workers=2)
    for (m1, h1), (m2, h2) in zip(serial[::-1], background.results([1, 0])):
        assert h1.val_loss == h2.val_loss
        assert all(torch.equal(p1, p2) for p1, p2 in zip(m1.parameters(), m2.parameters()))


def test_train_models_rejects_malformed_jobs():
    from posteval.models import train_models

    settings = S(epochs=1, batch_size=2, lr=0.1)
    with pytest.raises(ValueError, match=r"jobs\[0\]: expected \(build, seed\)"):
        train_models([("not callable", 0)], (torch.zeros(2, 1), torch.zeros(2, 1)), settings=settings)
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        train_models([], (torch.zeros(2, 1), torch.zeros(2, 1)), settings=settings, threads=0)
    with pytest.raises(TypeError, match="needs settings=TrainingSettings"):
        train_models([], (torch.zeros(2, 1), torch.zeros(2, 1)))
    with pytest.raises(TypeError, match="unexpected keyword argument 'epoch'"):
        train_models([], (torch.zeros(2, 1), torch.zeros(2, 1)), settings=settings, epoch=3)


def test_train_models_train_rows_train_each_job_on_its_resample():
    """A job with ``train_rows`` trains exactly as on the resampled tensors; a wrong index fails."""
    from functools import partial

    import numpy as np

    from posteval.models import PointRegressor, train_models

    g = torch.Generator().manual_seed(1)
    x = torch.randn(128, 2, generator=g)
    y = x[:, :1] + 0.1 * torch.randn(128, 1, generator=g)
    build = partial(PointRegressor, 1, 2, hidden=(8,))
    rows = np.random.default_rng(3).integers(0, 128, 128)
    kw = dict(settings=S(epochs=2, batch_size=32, lr=1e-2), progress=False)
    (m1, h1), (m0, h0) = train_models([(build, 4), (build, 4)], (x, y), (x, y), train_rows=[rows, None], **kw)
    (m2, h2), = train_models([(build, 4)], (x[rows], y[rows]), (x, y), **kw)
    assert h1.train_loss == h2.train_loss and h1.train_loss != h0.train_loss
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        assert torch.equal(p1, p2)
    with pytest.raises(ValueError, match="train_rows: expected one index array"):
        train_models([(build, 4)], (x, y), train_rows=[rows, rows], **kw)
    with pytest.raises(ValueError, match=r"train_rows\[0\]"):
        train_models([(build, 4)], (x, y), train_rows=[np.array([0, 128])], **kw)


def _reference_fit(model, train, val, *, epochs, batch_size, lr, patience=10, seed=0, weight_decay=0.0,
                   lr_decay_patience=None, lr_decay_factor=0.5, lr_schedule=None, grad_clip=None):
    """The loop of `fit` as it was before `TrainingSettings` (issue 40, D5), without checks or progress bar:
    the same torch operations in the same order, to pin down that splitting `fit` changed no number."""
    import copy

    from posteval.models.training import _mean_loss, own_loss

    n = train[0].shape[0]
    torch.manual_seed(seed)
    shuffle = torch.Generator(device="cpu").manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = None if lr_schedule is None else torch.optim.lr_scheduler.LambdaLR(optimizer, lr_schedule)
    best_loss, best_state = math.inf, copy.deepcopy(model.state_dict())
    since_best = since_decay = 0
    train_losses, val_losses, lrs = [], [], []
    for _ in range(epochs):
        model.train()
        total = 0.0
        order = torch.randperm(n, generator=shuffle)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            loss = own_loss(model, tuple(t[idx] for t in train))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()
            if schedule is not None:
                schedule.step()
            total += float(loss.detach()) * idx.shape[0]
        train_losses.append(total / n)
        lrs.append(optimizer.param_groups[0]["lr"])
        model.eval()
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed + 1)
            val_loss = _mean_loss(model, own_loss, val, batch_size)
        val_losses.append(val_loss)
        if val_loss < best_loss:
            best_loss, best_state, since_best, since_decay = val_loss, copy.deepcopy(model.state_dict()), 0, 0
        else:
            since_best, since_decay = since_best + 1, since_decay + 1
        if since_best >= patience:
            break
        if lr_decay_patience is not None and since_decay >= lr_decay_patience:
            for group in optimizer.param_groups:
                group["lr"] *= lr_decay_factor
            since_decay = 0
    model.load_state_dict(best_state)
    return train_losses, val_losses, lrs


@pytest.mark.parametrize("kind", ["plateau", "schedule"])
def test_fit_is_bit_identical_to_the_loop_before_the_split(kind):
    """Same weights and losses, bit for bit, as the one-function loop `fit` was (see `_reference_fit`):
    reduce-on-plateau with early stopping on a point regressor, and a learning-rate schedule with a
    stochastic loss (flow matching, which draws from the global torch RNG)."""
    from functools import partial

    from posteval.models import ConditionalFlowMatching, PointRegressor
    from posteval.models.schedules import warmup_cosine

    g = torch.Generator().manual_seed(0)
    c = torch.randn(600, 2, generator=g)
    x = torch.cat([c[:, :1] ** 2, c[:, 1:] * c[:, :1]], 1) + 0.3 * torch.randn(600, 2, generator=g)
    train, val = (c[:480], x[:480]), (c[480:], x[480:])
    if kind == "plateau":
        build = partial(PointRegressor, 2, 2, hidden=(16,))
        kw = dict(epochs=20, batch_size=64, lr=1.0, patience=3, weight_decay=1e-3, lr_decay_patience=1,
                  lr_decay_factor=0.3, grad_clip=2.0)
    else:
        build = partial(ConditionalFlowMatching, 2, 2, hidden=16, layers=2)
        kw = dict(epochs=3, batch_size=64, lr=3e-3, lr_schedule=warmup_cosine(4, 8), grad_clip=0.5)
    torch.manual_seed(4)
    reference = build()
    expected = _reference_fit(reference, train, val, seed=9, **kw)
    torch.manual_seed(4)
    model = build()
    hist = fit(model, train, val, S(**kw), seed=9, disable=True)
    assert (hist.train_loss, hist.val_loss, hist.lr) == expected
    if kind == "plateau":  # the case exercises the decay and the early stop
        assert hist.stop_reason == "patience" and min(hist.lr) < kw["lr"]
    state, ref_state = model.state_dict(), reference.state_dict()
    assert state.keys() == ref_state.keys() and all(torch.equal(state[k], ref_state[k]) for k in state)
