"""Tests of the shared training loop `posteval.models.training.fit`."""

import math

import pytest
import torch

from torch.optim.optimizer import register_optimizer_step_pre_hook

from posteval.models.training import fit


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
    hist = fit(model, train, val, loss_fn=squared, epochs=100, batch_size=8, lr=0.05, patience=3, disable=True)
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
    hist = fit(model, (x, y), (xv, yv), loss_fn=linear_loss, epochs=40, batch_size=32, lr=0.05, disable=True)
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
        fit(model, (torch.ones(16),), (torch.ones(4),), loss_fn=counting, epochs=5, batch_size=4, lr=0.1, disable=True)


def test_nan_validation_loss_raises():
    model = Scalar()

    def bad_val(model, batch):
        return squared(model, batch) + (0.0 if model.training else math.inf)

    with pytest.raises(FloatingPointError, match="validation loss .* epoch 0"):
        fit(model, (torch.ones(8),), (torch.ones(4),), loss_fn=bad_val, epochs=3, batch_size=4, lr=0.1, disable=True)


def _train_once(seed):
    x, y = regression_data(256, seed=0)
    xv, yv = regression_data(64, seed=1)
    torch.manual_seed(123)  # same initial weights each time
    model = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.Tanh(), torch.nn.Dropout(0.2), torch.nn.Linear(8, 1))
    hist = fit(model, (x, y), (xv, yv), loss_fn=linear_loss, epochs=4, batch_size=16, lr=0.01, seed=seed, disable=True)
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
    hist = fit(model, (torch.ones(8),), (-torch.ones(4),), loss_fn=squared, epochs=20, batch_size=8, lr=0.01,
               patience=6, lr_decay_patience=2, lr_decay_factor=0.5, disable=True)
    assert hist.lr[0] == 0.01 and min(hist.lr) == pytest.approx(0.01 * 0.5**2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(train=(torch.ones(4), torch.ones(3))), "train\\[1\\] has 3 events"),
        (dict(val=(torch.ones(0),)), "val is empty"),
        (dict(train=(torch.tensor([1.0, math.nan]),)), "train\\[0\\] contains NaN"),
        (dict(val=(torch.ones(2), torch.ones(2))), "train has 1 tensors but val has 2"),
        (dict(epochs=0), "epochs"),
        (dict(batch_size=2.5), "batch_size"),
        (dict(lr=-1.0), "lr"),
        (dict(patience=0), "patience"),
        (dict(max_seconds=0), "max_seconds"),
        (dict(loss_fn=None), "has no loss"),
        (dict(loss_fn=3), "loss_fn must be callable"),
        (dict(grad_clip=0), "grad_clip"),
        (dict(lr_decay_patience=2, val=None), "lr_decay_patience needs val"),
        (dict(shuffle=0), "shuffle"),
    ],
)
def test_bad_arguments_raise_value_error(kwargs, match):
    args = dict(model=Scalar(), loss_fn=squared, train=(torch.ones(4),), val=(torch.ones(2),),
                epochs=2, batch_size=2, lr=0.1, disable=True)
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        fit(**args)


def test_without_validation_runs_every_epoch_and_keeps_the_last_weights():
    model = Scalar(start=-1.0)
    hist = fit(model, (torch.ones(64),), loss_fn=squared, epochs=5, batch_size=8, lr=0.05, disable=True)
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
        hist = fit(model, (torch.ones(8),), epochs=4, batch_size=4, lr=0.1,
                   lr_schedule=lambda step: 1.0 - step / 8, grad_clip=1e-3, disable=True)
    finally:
        handle.remove()
    # two steps per epoch: the learning rate at the end of epoch k is 0.1 * (1 - 2(k+1)/8)
    assert hist.lr == pytest.approx([0.075, 0.05, 0.025, 0.0])
    assert len(seen) == 8 and max(seen) == pytest.approx(1e-3)  # unclipped |grad| = 2|w - 1| >= 2


def test_shared_shuffle_generator_is_used():
    g1, g2 = torch.Generator().manual_seed(5), torch.Generator().manual_seed(5)
    fit(Scalar(), (torch.arange(8.0),), loss_fn=squared, epochs=2, batch_size=4, lr=0.1, shuffle=g1, disable=True)
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
    kw = dict(epochs=3, batch_size=64, lr=1e-2, progress=False, lr_schedule=warmup_cosine(2, 4))
    serial = train_models(jobs, (x, y), (x, y), workers=1, **kw)
    pooled = train_models(jobs, (x, y), (x, y), workers=2, **kw)
    for (m1, h1), (m2, h2) in zip(serial, pooled):
        assert h1.val_loss == h2.val_loss
        for p1, p2 in zip(m1.parameters(), m2.parameters()):
            assert torch.equal(p1, p2)
    assert serial[0][1].val_loss != serial[1][1].val_loss  # the seeds matter
    # the same jobs started in the background and waited for in another order: the same weights
    from posteval.models import train_item, training_items
    from posteval.parallel import BackgroundJobs

    kw.pop("progress")
    background = BackgroundJobs(train_item, training_items(jobs, (x, y), (x, y), **kw), workers=2)
    for (m1, h1), (m2, h2) in zip(serial[::-1], background.results([1, 0])):
        assert h1.val_loss == h2.val_loss
        assert all(torch.equal(p1, p2) for p1, p2 in zip(m1.parameters(), m2.parameters()))


def test_train_models_rejects_malformed_jobs():
    from posteval.models import train_models

    with pytest.raises(ValueError, match=r"jobs\[0\]: expected \(build, seed\)"):
        train_models([("not callable", 0)], (torch.zeros(2, 1), torch.zeros(2, 1)))
    with pytest.raises(ValueError, match="threads must be a positive integer"):
        train_models([], (torch.zeros(2, 1), torch.zeros(2, 1)), threads=0)


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
    kw = dict(epochs=2, batch_size=32, lr=1e-2, progress=False)
    (m1, h1), (m0, h0) = train_models([(build, 4), (build, 4)], (x, y), (x, y), train_rows=[rows, None], **kw)
    (m2, h2), = train_models([(build, 4)], (x[rows], y[rows]), (x, y), **kw)
    assert h1.train_loss == h2.train_loss and h1.train_loss != h0.train_loss
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        assert torch.equal(p1, p2)
    with pytest.raises(ValueError, match="train_rows: expected one index array"):
        train_models([(build, 4)], (x, y), train_rows=[rows, rows], **kw)
    with pytest.raises(ValueError, match=r"train_rows\[0\]"):
        train_models([(build, 4)], (x, y), train_rows=[np.array([0, 128])], **kw)
