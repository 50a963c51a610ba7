"""One small, seeded training loop shared by every supervised model of the book.

`fit` runs mini-batch AdamW on the model's own ``loss(batch)`` (or a given ``loss_fn``),
evaluates a validation loss after each epoch, stops early when the validation loss has not
improved for `patience` epochs, restores the best weights, and shows a `tqdm` progress bar.
Without a validation split it runs every epoch and keeps the last weights. A non-finite loss
raises `FloatingPointError` naming the epoch, instead of silently training on NaNs.
`TrainingSettings` holds the optimisation settings (epochs, batch size, learning rate and its
schedule, early stopping, clipping) as one checked value, e.g. ``TrainingSettings(**training)``
from a chapter's ``training`` parameter. `train_model` seeds, builds and fits a fresh model in one
call; `train_models` trains many, each job a `TrainingJob` record.
"""

from __future__ import annotations

import copy
import math
import os
import time
import warnings
from dataclasses import dataclass, field, fields
from functools import partial
from typing import Any, Callable, Sequence

import numpy as np
import torch
from posteval.parallel import map_jobs
from posteval.progress import tqdm
from posteval.runtime import seed_everything

from .mlp import PointRegressor

__all__ = ["TrainHistory", "TrainingJob", "TrainingSettings", "fit", "train_item", "train_model", "train_models",
           "training_items", "check_tensors"]


@dataclass
class TrainHistory:
    """What happened during `fit`.

    Attributes
    ----------
    train_loss, val_loss : list of float
        Mean training / validation loss per completed epoch.
    best_epoch : int
        Index (0-based) of the epoch whose weights were restored (lowest validation loss).
    seconds : float
        Wall time of the whole fit.
    stop_reason : str
        ``"epochs"`` (ran all epochs), ``"patience"`` (early stopping) or ``"max_seconds"``.
    lr : list of float
        Learning rate used in each epoch.

    With a validation split, ``best_epoch`` = argmin_e val_loss[e] (the first epoch reaching the
    minimum) and ``best_val_loss`` = val_loss[best_epoch]; without one, ``best_epoch`` is the last
    epoch and ``best_val_loss`` is nan.

    Reference: the early-stopping meta-algorithm of Goodfellow, Bengio and Courville (2016), *Deep
    Learning*, MIT Press, Section 7.8, Algorithm 7.1, which returns the best parameters and their epoch.

    Example
    -------
    >>> history = TrainHistory(train_loss=[1.0, 0.6, 0.5], val_loss=[0.9, 0.7, 0.8], best_epoch=1)
    >>> history.epochs, history.best_val_loss
    (3, 0.7)
    >>> TrainHistory().best_val_loss  # no validation split
    nan
    """

    train_loss: list[float] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    best_epoch: int = -1
    seconds: float = 0.0
    stop_reason: str = "epochs"
    lr: list[float] = field(default_factory=list)

    @property
    def best_val_loss(self) -> float:
        """Validation loss of the restored weights, val_loss[best_epoch] (nan without validation)."""
        return self.val_loss[self.best_epoch] if self.val_loss else math.nan

    @property
    def epochs(self) -> int:
        """Number of completed epochs."""
        return len(self.train_loss)


def _check_positive(value, name: str, integer: bool) -> None:
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or not value > 0:
        raise ValueError(f"{name} must be a positive {'integer' if integer else 'number'}, got {value!r}")


@dataclass(frozen=True)
class TrainingSettings:
    """The optimisation settings of `fit`: how long, in what batches and how fast to train.

    One checked, immutable (and picklable, if `lr_schedule` is) value for what a chapter's
    ``training`` parameter lists: ``TrainingSettings(**training)``; ``dataclasses.replace(settings,
    lr=1e-3)`` gives a variant. Construction raises `ValueError` naming a malformed field.

    Attributes
    ----------
    epochs : int
        Maximum number of passes over the training events.
    batch_size : int
        Mini-batch size (the last batch of an epoch may be smaller).
    lr : float
        Initial learning rate.
    patience : int
        Stop after this many epochs without a lower validation loss.
    weight_decay : float
        Decoupled weight decay of AdamW (0 gives plain Adam).
    max_seconds : float or None
        Stop after the first epoch that ends past this wall time (a safety net: a stop
        caused by time is not reproducible; check ``history.stop_reason``).
    lr_decay_patience : int or None
        If set, multiply the learning rate by `lr_decay_factor` after this many epochs
        without improvement (reduce-on-plateau; needs a validation split). None keeps it constant.
    lr_decay_factor : float
        Factor of the reduce-on-plateau schedule, in (0, 1).
    lr_schedule : callable or None
        ``lr_schedule(step) -> factor`` of the learning rate at each optimizer step (e.g. a
        linear decay); not together with `lr_decay_patience`.
    grad_clip : float or None
        Clip the gradient norm to this value before each step.

    Notes
    -----
    At optimizer step t, with gradient g_t of the batch loss, the learning rate is
    eta_t = lr (times ``lr_schedule(t)`` when set, times `lr_decay_factor` per plateau of
    `lr_decay_patience` epochs), and AdamW (PyTorch's, beta = (0.9, 0.999), eps = 1e-8) updates

        g_t <- g_t min(1, grad_clip / (||g_t|| + 1e-6))                  (only with grad_clip)
        m_t = beta1 m_{t-1} + (1 - beta1) g_t,   v_t = beta2 v_{t-1} + (1 - beta2) g_t^2,
        theta_t = theta_{t-1} - eta_t (weight_decay theta_{t-1} + m̂_t / (sqrt(v̂_t) + eps)),

    with m̂_t, v̂_t the bias-corrected moments: the weight decay is decoupled from the adaptive
    gradient step. Training stops after `patience` epochs without a new minimum of the validation
    loss (or after `epochs`).

    References: Loshchilov and Hutter (2019), "Decoupled Weight Decay Regularization", ICLR,
    Algorithm 2 (AdamW); Kingma and Ba (2015), "Adam: A Method for Stochastic Optimization", ICLR;
    Prechelt (1998), "Early Stopping - But When?", in *Neural Networks: Tricks of the Trade*, LNCS 1524,
    Springer; Pascanu, Mikolov and Bengio (2013), "On the difficulty of training recurrent neural
    networks", ICML (gradient-norm clipping).

    Examples
    --------
    >>> from dataclasses import replace
    >>> settings = TrainingSettings(epochs=20, batch_size=256, lr=3e-3, patience=5)
    >>> replace(settings, lr=1e-3).lr
    0.001
    >>> TrainingSettings(epochs=0, batch_size=256, lr=3e-3)
    Traceback (most recent call last):
    ...
    ValueError: epochs must be a positive integer, got 0
    """

    epochs: int
    batch_size: int
    lr: float
    patience: int = 10
    weight_decay: float = 0.0
    max_seconds: float | None = None
    lr_decay_patience: int | None = None
    lr_decay_factor: float = 0.5
    lr_schedule: Callable[[int], float] | None = None
    grad_clip: float | None = None

    def __post_init__(self) -> None:
        _check_positive(self.epochs, "epochs", integer=True)
        _check_positive(self.batch_size, "batch_size", integer=True)
        _check_positive(self.lr, "lr", integer=False)
        _check_positive(self.patience, "patience", integer=True)
        if isinstance(self.weight_decay, bool) or not isinstance(self.weight_decay, (int, float)) \
                or self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay!r}")
        if self.max_seconds is not None:
            _check_positive(self.max_seconds, "max_seconds", integer=False)
        if self.lr_decay_patience is not None:
            _check_positive(self.lr_decay_patience, "lr_decay_patience", integer=True)
            if self.lr_schedule is not None:
                raise ValueError("lr_decay_patience needs val and excludes lr_schedule")
        if isinstance(self.lr_decay_factor, bool) or not isinstance(self.lr_decay_factor, (int, float)) \
                or not 0 < self.lr_decay_factor < 1:
            raise ValueError(f"lr_decay_factor must be in (0, 1), got {self.lr_decay_factor!r}")
        if self.lr_schedule is not None and not callable(self.lr_schedule):
            raise ValueError("lr_schedule must be callable as lr_schedule(step) -> factor")
        if self.grad_clip is not None:
            _check_positive(self.grad_clip, "grad_clip", integer=False)


#: Names of the `TrainingSettings` fields (the keywords `fit` took before it took the settings).
SETTINGS_FIELDS = tuple(f.name for f in fields(TrainingSettings))
#: The keywords of `fit` that `train_model`, `training_items` and `train_models` pass on.
FIT_KEYWORDS = ("loss_fn", "desc", "shuffle", "disable")


def _settings_from(settings, legacy: dict, caller: str) -> TrainingSettings:
    """`settings`, or (deprecated, with a `DeprecationWarning`) one built from `caller`'s old keywords."""
    unknown = sorted(set(legacy) - set(SETTINGS_FIELDS))
    if unknown:
        raise TypeError(f"{caller}() got an unexpected keyword argument {unknown[0]!r}")
    if legacy:
        if settings is not None:
            raise TypeError(f"{caller}(): pass the training settings as settings= or as keywords "
                            f"({', '.join(sorted(legacy))}), not both")
        given = ", ".join(f"{k}=..." for k in legacy)
        warnings.warn(f"{caller}({given}) is deprecated and will be removed in the next release: pass "
                      f"{caller}(..., settings=TrainingSettings({given})) instead "
                      "(posteval.models.TrainingSettings)", DeprecationWarning, stacklevel=3)
        return TrainingSettings(**legacy)
    if settings is None:
        raise TypeError(f"{caller}() needs settings=TrainingSettings(epochs=..., batch_size=..., lr=...)")
    if not isinstance(settings, TrainingSettings):
        raise ValueError(f"settings must be a posteval.models.TrainingSettings, got {type(settings).__name__}")
    return settings


def _split_keywords(kwargs: dict) -> tuple[dict, dict]:
    """``(old settings keywords, the rest)`` of a caller's ``**kwargs``."""
    legacy = {k: v for k, v in kwargs.items() if k in SETTINGS_FIELDS}
    return legacy, {k: v for k, v in kwargs.items() if k not in SETTINGS_FIELDS}


def check_tensors(data: torch.Tensor | Sequence[torch.Tensor], name: str) -> tuple[torch.Tensor, ...]:
    """Validate a tuple of tensors sliced together along their first axis.

    Accepts ``(t_0, ..., t_k)`` (or one tensor, as ``(t_0,)``) when every t_i has a leading event axis
    with the same n_i = n_0 > 0 and every floating-point t_i is finite, so that a mini-batch is the
    same rows B of each: ``(t_0[B], ..., t_k[B])``. Raises `ValueError` naming `name` otherwise.

    Parameters
    ----------
    data : tuple or list of torch.Tensor
        Tensors with the same, non-zero length along axis 0.
    name : str
        Argument name used in error messages.

    Returns
    -------
    tuple of torch.Tensor

    Reference: mini-batches drawn by the same indices from every tensor, as in Goodfellow, Bengio and
    Courville (2016), *Deep Learning*, MIT Press, Section 8.1.3 (batch and minibatch algorithms).

    Example
    -------
    >>> import torch
    >>> [tuple(t.shape) for t in check_tensors((torch.zeros(4, 3), torch.zeros(4)), "train")]
    [(4, 3), (4,)]
    >>> check_tensors((torch.zeros(4, 3), torch.zeros(5)), "train")
    Traceback (most recent call last):
    ...
    ValueError: train[1] has 5 events but train[0] has 4: tensors must be sliced together
    """
    if isinstance(data, torch.Tensor):
        data = (data,)
    if not isinstance(data, (tuple, list)) or len(data) == 0:
        raise ValueError(f"{name} must be a non-empty tuple of tensors, got {type(data).__name__}")
    for i, t in enumerate(data):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{name}[{i}] must be a torch.Tensor, got {type(t).__name__}")
        if t.ndim == 0:
            raise ValueError(f"{name}[{i}] must have a leading event axis, got a scalar")
    n = data[0].shape[0]
    if n == 0:
        raise ValueError(f"{name} is empty (0 events)")
    for i, t in enumerate(data):
        if t.shape[0] != n:
            raise ValueError(
                f"{name}[{i}] has {t.shape[0]} events but {name}[0] has {n}: "
                "tensors must be sliced together"
            )
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            raise ValueError(f"{name}[{i}] contains NaN or inf")
    return tuple(data)


def own_loss(model: torch.nn.Module, batch: tuple) -> torch.Tensor:
    """The model's own objective ``model.loss(batch)`` (the contract of `posteval.models`): the
    empirical risk of one mini-batch, the default ``loss_fn`` of `fit`.

    Reference: Goodfellow, Bengio and Courville (2016), *Deep Learning*, MIT Press, Section 8.1.1
    (empirical risk minimisation).

    >>> import torch
    >>> from posteval.models import PointRegressor
    >>> model, batch = PointRegressor(1, 2, hidden=(4,)), (torch.zeros(3, 2), torch.zeros(3, 1))
    >>> bool(own_loss(model, batch) == model.loss(batch))
    True
    """
    return model.loss(batch)


def _mean_loss(model, loss_fn, data: Sequence[torch.Tensor], batch_size: int) -> float:
    """Event-weighted mean of `loss_fn` over `data`, without gradients."""
    n = data[0].shape[0]
    total = 0.0
    with torch.no_grad():
        for start in range(0, n, batch_size):
            batch = tuple(t[start : start + batch_size] for t in data)
            total += float(loss_fn(model, batch)) * batch[0].shape[0]
    return total / n




def _objective(model, loss_fn) -> Callable:
    """The checked ``loss_fn(model, batch)`` of `fit` (the model's own ``loss`` when None)."""
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if loss_fn is None:
        if not callable(getattr(model, "loss", None)):
            raise ValueError(f"model {type(model).__name__} has no loss(batch); pass loss_fn")
        loss_fn = own_loss
    if not callable(loss_fn):
        raise ValueError("loss_fn must be callable as loss_fn(model, batch)")
    return loss_fn


def _check_splits(train, val) -> tuple:
    """The checked ``(train, val)`` of `fit`."""
    train = check_tensors(train, "train")
    if val is not None:
        val = check_tensors(val, "val")
        if len(train) != len(val):
            raise ValueError(f"train has {len(train)} tensors but val has {len(val)}")
    return train, val


@dataclass
class _Loop:
    """One `fit` call's model, objective and optimizer, with its early-stopping bookkeeping."""

    model: torch.nn.Module
    loss_fn: Callable
    settings: TrainingSettings
    optimizer: torch.optim.Optimizer
    schedule: torch.optim.lr_scheduler.LambdaLR | None
    desc: str
    history: TrainHistory = field(default_factory=TrainHistory)
    best_loss: float = math.inf
    best_state: dict | None = None
    since_best: int = 0
    since_decay: int = 0

    def train_epoch(self, train: tuple, order: torch.Tensor, epoch: int) -> float:
        """One pass over `train` in the permutation `order`; the event-weighted mean training loss."""
        n, batch_size, grad_clip = train[0].shape[0], self.settings.batch_size, self.settings.grad_clip
        total = 0.0
        for batch_start in range(0, n, batch_size):
            idx = order[batch_start : batch_start + batch_size]
            batch = tuple(t[idx] for t in train)
            loss = self.loss_fn(self.model, batch)
            if not bool(torch.isfinite(loss)):
                raise FloatingPointError(
                    f"{self.desc}: non-finite training loss ({float(loss.detach())}) at epoch {epoch}, "
                    f"batch starting at event {batch_start}"
                )
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), grad_clip)
            self.optimizer.step()
            if self.schedule is not None:
                self.schedule.step()
            total += float(loss.detach()) * idx.shape[0]
        return total / n

    def validate(self, val: tuple, seed: int, rng_devices: list, epoch: int) -> float:
        """The validation loss, under a fixed RNG state (``seed + 1``) that leaves the global one as it was."""
        self.model.eval()
        with torch.random.fork_rng(devices=rng_devices):
            torch.manual_seed(seed + 1)
            val_loss = _mean_loss(self.model, self.loss_fn, val, self.settings.batch_size)
        if not math.isfinite(val_loss):
            raise FloatingPointError(f"{self.desc}: non-finite validation loss ({val_loss}) at epoch {epoch}")
        return val_loss

    def record_val(self, val_loss: float, epoch: int) -> None:
        """Keep the weights of a new lowest validation loss; count the epochs since one otherwise."""
        self.history.val_loss.append(val_loss)
        if val_loss < self.best_loss:
            self.best_loss = val_loss
            self.best_state = copy.deepcopy(self.model.state_dict())
            self.history.best_epoch = epoch
            self.since_best = 0
            self.since_decay = 0
        else:
            self.since_best += 1
            self.since_decay += 1

    def end_epoch(self, started: float) -> bool:
        """Whether to stop (sets ``history.stop_reason``); else decays the learning rate on a plateau."""
        settings = self.settings
        if self.since_best >= settings.patience:
            self.history.stop_reason = "patience"
            return True
        if settings.max_seconds is not None and time.perf_counter() - started > settings.max_seconds:
            self.history.stop_reason = "max_seconds"
            return True
        if settings.lr_decay_patience is not None and self.since_decay >= settings.lr_decay_patience:
            for group in self.optimizer.param_groups:
                group["lr"] *= settings.lr_decay_factor
            self.since_decay = 0
        return False


def _checked_on_device(model, train, val, settings, shuffle, device):
    """`fit`'s checks of the splits and options; moves `model` and the splits to `device`.

    Returns ``(torch.device, train, val)``, the splits as tuples of tensors on that device."""
    train, val = _check_splits(train, val)
    if settings.lr_decay_patience is not None and val is None:
        raise ValueError("lr_decay_patience needs val and excludes lr_schedule")
    if shuffle is not None and not isinstance(shuffle, torch.Generator):
        raise ValueError(f"shuffle must be a torch.Generator, got {type(shuffle).__name__}")
    dev = torch.device(device)
    model.to(dev)
    train = tuple(t.to(dev) for t in train)
    val = None if val is None else tuple(t.to(dev) for t in val)
    return dev, train, val


def fit(
    model: torch.nn.Module,
    train: torch.Tensor | Sequence[torch.Tensor],
    val: torch.Tensor | Sequence[torch.Tensor] | None = None,
    settings: TrainingSettings | None = None,
    *,
    loss_fn: Callable[[torch.nn.Module, tuple], torch.Tensor] | None = None,
    seed: int = 0,
    device: str = "cpu",
    desc: str = "train",
    shuffle: torch.Generator | None = None,
    disable: bool | None = None,
    **legacy: Any,
) -> TrainHistory:
    """Train `model` by mini-batch AdamW, with early stopping when a validation split is given.

    It minimises the empirical risk L(θ) = (1/n) sum_i l(θ; z_i) of the training events: after
    ``torch.manual_seed(seed)``, each epoch e draws a permutation π_e of the n events from `shuffle`,
    cuts it into batches B of `settings.batch_size` events and takes one AdamW step per batch on
    ``loss_fn(model, batch)`` (decoupled weight decay, see `TrainingSettings`). Recorded per epoch:

        train_loss[e] = (1/n) sum_B |B| L_B   (during the epoch, as the weights move),
        val_loss[e]   = (1/n_val) sum_B |B| L_B(θ_e)   (eval mode, no gradient, torch RNG at seed + 1).

    Early stopping: training stops after epoch e when the validation loss has not reached a new
    minimum for `patience` epochs, e - argmin_{e' <= e} val_loss[e'] >= patience (or after
    `settings.epochs`, or past `max_seconds`), and the weights θ_{e*} of the best epoch
    e* = argmin val_loss are restored.

    Why this size: the optimisation settings are one `TrainingSettings`; the eleventh parameter is
    `**legacy`, those settings as keywords as `fit` took them before, kept for one release of
    deprecation.

    Parameters
    ----------
    model : torch.nn.Module
        Trained in place; on return it holds the weights of the best validation epoch (the
        last epoch without `val`).
    train, val : tuple of torch.Tensor
        Tensors sliced together along axis 0 (a batch, e.g. ``(context, x)``). `val` None: no
        validation, no early stopping.
    settings : TrainingSettings
        Epochs, batch size, learning rate and its schedule, early stopping, clipping.
    loss_fn : callable or None
        ``loss_fn(model, batch) -> scalar tensor``; None uses the model's own ``loss(batch)``.
    seed : int
        Seeds the shuffling and the global torch RNG used inside the loss (so stochastic
        losses such as flow matching are reproducible). The validation loss is computed
        with a fixed RNG state, so it is comparable from epoch to epoch.
    device : str
        Device the model and the data are moved to.
    desc : str
        Label of the progress bar.
    shuffle : torch.Generator or None
        Source of the epoch permutations (default: a CPU generator seeded with `seed`); pass
        one to share it with a stochastic loss.
    disable : bool or None
        Passed to `tqdm` (None: hide the bar when not attached to a terminal/notebook).
    **legacy
        Deprecated: the `TrainingSettings` fields as keywords (``epochs=..., batch_size=...,
        lr=...``), as `fit` took them before; they still work for one release, with a
        `DeprecationWarning`.

    Returns
    -------
    TrainHistory

    Raises
    ------
    ValueError
        On malformed data or settings.
    FloatingPointError
        If a training or validation loss is NaN or infinite (names the epoch).

    References: Loshchilov and Hutter (2019), "Decoupled Weight Decay Regularization", ICLR (AdamW);
    Prechelt (1998), "Early Stopping - But When?", in *Neural Networks: Tricks of the Trade*, LNCS 1524,
    Springer; the patience rule as in Goodfellow, Bengio and Courville (2016), *Deep Learning*, MIT
    Press, Section 7.8, Algorithm 7.1.

    Example
    -------
    >>> import torch
    >>> from posteval.models import PointRegressor
    >>> _ = torch.manual_seed(0)
    >>> c = torch.randn(32, 3)
    >>> x = c[:, :2] + 0.1 * torch.randn(32, 2)
    >>> model = PointRegressor(2, 3, hidden=(8,))
    >>> settings = TrainingSettings(epochs=2, batch_size=16, lr=1e-2)
    >>> history = fit(model, (c[:24], x[:24]), (c[24:], x[24:]), settings, disable=True)
    >>> len(history.train_loss) == len(history.val_loss) == settings.epochs, history.stop_reason
    (True, 'epochs')
    >>> history.best_val_loss == min(history.val_loss)
    True

    A loss that never improves stops after `patience` epochs and keeps the first epoch's weights:

    >>> flat = lambda model, batch: 0.0 * sum(p.sum() for p in model.parameters()) + 1.0
    >>> patient = TrainingSettings(epochs=10, batch_size=16, lr=1e-2, patience=2)
    >>> history = fit(model, (c, x), (c, x), patient, loss_fn=flat, disable=True)
    >>> history.epochs, history.best_epoch, history.stop_reason
    (3, 0, 'patience')
    """
    settings = _settings_from(settings, legacy, "fit")
    loss_fn = _objective(model, loss_fn)
    dev, train, val = _checked_on_device(model, train, val, settings, shuffle, device)
    n = train[0].shape[0]

    torch.manual_seed(seed)
    if shuffle is None:
        shuffle = torch.Generator(device="cpu").manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    schedule = None if settings.lr_schedule is None else torch.optim.lr_scheduler.LambdaLR(optimizer,
                                                                                           settings.lr_schedule)
    rng_devices = [dev] if dev.type == "cuda" else []
    loop = _Loop(model, loss_fn, settings, optimizer, schedule, desc,
                 best_state=None if val is None else copy.deepcopy(model.state_dict()))
    history = loop.history
    start = time.perf_counter()

    bar = tqdm(range(settings.epochs), desc=desc, disable=disable, leave=False)
    for epoch in bar:
        model.train()
        order = torch.randperm(n, generator=shuffle).to(dev)
        train_loss = loop.train_epoch(train, order, epoch)
        history.train_loss.append(train_loss)
        history.lr.append(optimizer.param_groups[0]["lr"])
        if val is None:
            history.best_epoch = epoch
            bar.set_postfix(train=f"{train_loss:.4g}")
        else:
            loop.record_val(loop.validate(val, seed, rng_devices, epoch), epoch)
            bar.set_postfix(train=f"{train_loss:.4g}", val=f"{history.val_loss[-1]:.4g}", best=history.best_epoch)
        if loop.end_epoch(start):
            break
    bar.close()

    if loop.best_state is not None:
        model.load_state_dict(loop.best_state)
    model.eval()
    history.seconds = time.perf_counter() - start
    return history


def _example_problem() -> tuple:
    """The toy problem of this module's examples: ``(build, settings, (c, x))``.

    ``build = partial(PointRegressor, 2, 3, hidden=(8,))``, a fresh small regressor of a 2-d target on
    a 3-d context; ``settings = TrainingSettings(epochs=2, batch_size=16, lr=1e-2)``; c ``(32, 3)`` and
    x ``(32, 2)`` standard normal, drawn after ``torch.manual_seed(0)`` (which it leaves seeded).
    Drawing them runs torch, so it keeps the CPU kernels torch now runs (``ATEN_CPU_CAPABILITY``, unless
    set) for `seed_everything` of `train_item`, as a chapter picks them before torch runs.

    >>> build, settings, (c, x) = _example_problem()
    >>> type(build()).__name__, settings.epochs, tuple(c.shape), tuple(x.shape)
    ('PointRegressor', 2, (32, 3), (32, 2))
    """
    os.environ.setdefault("ATEN_CPU_CAPABILITY", torch.backends.cpu.get_cpu_capability())
    torch.manual_seed(0)
    c, x = torch.randn(32, 3), torch.randn(32, 2)
    return partial(PointRegressor, 2, 3, hidden=(8,)), TrainingSettings(epochs=2, batch_size=16, lr=1e-2), (c, x)


def train_model(build: Callable[[], torch.nn.Module], train: torch.Tensor | Sequence[torch.Tensor],
                val: torch.Tensor | Sequence[torch.Tensor] | None = None, settings: TrainingSettings | None = None, *,
                seed: int = 0, device: str = "cpu", **fit_kwargs: Any) -> tuple[torch.nn.Module, TrainHistory]:
    """Seed torch with `seed`, build a fresh model with ``build()`` and `fit` it with `settings`.

    ``torch.manual_seed(seed)``, θ_0 = the initial weights of ``build()``, then
    ``fit(model, train, val, settings, seed=seed)``: the trained weights are a function of
    (build, data, settings, seed) on a given machine, threads and kernels.

    Returns ``(model, history)``; `fit_kwargs` are passed to `fit` (``loss_fn``, ``desc``,
    ``shuffle``, ``disable``). The `TrainingSettings` fields as keywords (``epochs=...``) are
    deprecated: they still work for one release, with a `DeprecationWarning`.

    Reference: one member of a seed ensemble, Lakshminarayanan, Pritzel and Blundell (2017), "Simple
    and Scalable Predictive Uncertainty Estimation using Deep Ensembles", NeurIPS (random initialisation
    and shuffling per member); the fit as in `fit` (Loshchilov and Hutter (2019), AdamW).

    Example
    -------
    >>> import torch
    >>> build, settings, (c, x) = _example_problem()  # a small PointRegressor, 2 epochs, 32 events
    >>> m1, h1 = train_model(build, (c, x), None, settings, seed=3, disable=True)
    >>> m2, h2 = train_model(build, (c, x), None, settings, seed=3, disable=True)
    >>> all(torch.equal(a, b) for a, b in zip(m1.parameters(), m2.parameters()))  # same seed, same weights
    True
    >>> h1.stop_reason, h1.best_epoch  # without val: every epoch, the last weights
    ('epochs', 1)
    """
    legacy, fit_kwargs = _split_keywords(fit_kwargs)
    settings = _settings_from(settings, legacy, "train_model")
    if not callable(build):
        raise ValueError("build must be callable as build() -> torch.nn.Module")
    torch.manual_seed(seed)
    model = build().to(device)
    return model, fit(model, train, val, settings, seed=seed, device=device, **fit_kwargs)


@dataclass(frozen=True)
class TrainingJob:
    """One job of `train_models` (an item of `training_items`, run by `train_item`), picklable for
    `posteval.parallel` when `build`, the settings' schedule and `fit_kwargs` are.

    Attributes
    ----------
    build : callable
        ``build() -> torch.nn.Module``, a fresh model.
    seed : int
        Seeds the job's process, the model's initial weights and `fit`.
    train, val : tuple of torch.Tensor
        The training events (all of them: `rows` selects this job's) and the validation split (or None).
    settings : TrainingSettings
        The optimisation settings of `fit`.
    threads : int
        Torch threads of the job.
    device : str
        Device the job trains on.
    fit_kwargs : dict
        Further keywords of `fit` (``loss_fn``, ``desc``, ``shuffle``, ``disable``).
    rows : array of int or None
        The rows of `train` this job trains on (e.g. a bootstrap resample); None: all.

    `train_item` trains on ``train[rows]``: with rows drawn with replacement (r_1..r_n ~ U{0..n-1})
    that is a bootstrap resample, so the spread between jobs of different seeds holds both the
    initialisation/shuffling noise and the training-sample noise.

    Reference: the bootstrap of Efron (1979), "Bootstrap Methods: Another Look at the Jackknife",
    *Ann. Statist.* 7; bagging, Breiman (1996), *Machine Learning* 24; seed ensembles, Lakshminarayanan,
    Pritzel and Blundell (2017), NeurIPS.

    Example
    -------
    >>> import torch
    >>> build, settings, (c, x) = _example_problem()  # a small PointRegressor, 2 epochs, 32 events
    >>> job = TrainingJob(build, 0, (c, x), None, settings, fit_kwargs={"disable": True}, rows=[0, 0, 5])
    >>> job.threads, job.device, list(job.rows)
    (1, 'cpu', [0, 0, 5])
    """

    build: Callable[[], torch.nn.Module]
    seed: int
    train: tuple
    val: tuple | None
    settings: TrainingSettings
    threads: int = 1
    device: str = "cpu"
    fit_kwargs: dict = field(default_factory=dict)
    rows: Sequence | None = None


def train_item(job: TrainingJob) -> tuple[torch.nn.Module, TrainHistory]:
    """Run one `TrainingJob` (an item of `training_items`): seed this process, take the job's rows of the
    training events, build and fit the model; ``(model, history)``.

    ``seed_everything(job.seed, threads=job.threads)`` (Python, numpy and torch seeded, deterministic
    torch, `job.threads` threads), then ``train_model(job.build, train[rows], job.val, job.settings,
    seed=job.seed)``: the result depends only on the job, not on the process that runs it. A model
    trained on another device comes back on the CPU.

    Reference: the bootstrap resample ``train[rows]`` of Efron (1979), *Ann. Statist.* 7; one member of
    a seed ensemble (Lakshminarayanan, Pritzel and Blundell (2017), NeurIPS).

    Example
    -------
    >>> import torch
    >>> build, settings, (c, x) = _example_problem()  # a small PointRegressor, 2 epochs, 32 events
    >>> job = TrainingJob(build, 0, (c, x), None, settings, threads=torch.get_num_threads(),
    ...                   fit_kwargs={"disable": True}, rows=list(range(0, 32, 2)))
    >>> (m1, h1), (m2, h2) = train_item(job), train_item(job)
    >>> h1.epochs, all(torch.equal(a, b) for a, b in zip(m1.parameters(), m2.parameters()))
    (2, True)
    """
    seed_everything(job.seed, threads=job.threads)  # a worker process starts with torch's defaults
    train = job.train
    if job.rows is not None:  # this job's resample of the training events
        index = torch.as_tensor(job.rows, dtype=torch.long)
        train = tuple(t[index] for t in check_tensors(train, "train"))
    model, history = train_model(job.build, train, job.val, job.settings, seed=job.seed, device=job.device,
                                 **job.fit_kwargs)
    return model.cpu() if job.device != "cpu" else model, history


def _check_train_rows(train_rows, n_jobs: int, n_train: int) -> list:
    """One checked index array (or None) per job."""
    train_rows = [None] * n_jobs if train_rows is None else list(train_rows)
    if len(train_rows) != n_jobs:
        raise ValueError(f"train_rows: expected one index array (or None) per job, got {len(train_rows)} for "
                         f"{n_jobs} jobs")
    for i, rows in enumerate(train_rows):
        if rows is not None:
            r = np.asarray(rows)
            if r.ndim != 1 or r.size == 0 or not np.issubdtype(r.dtype, np.integer) or r.min() < 0 or r.max() >= n_train:
                raise ValueError(f"train_rows[{i}]: expected a non-empty 1-D array of row indices in [0, {n_train})")
    return train_rows


def training_items(jobs: Sequence[tuple[Callable[[], torch.nn.Module], int]],
                   train: torch.Tensor | Sequence[torch.Tensor],
                   val: torch.Tensor | Sequence[torch.Tensor] | None = None,
                   settings: TrainingSettings | None = None, *, threads: int = 1, device: str = "cpu",
                   train_rows: Sequence | None = None, **fit_kwargs: Any) -> list[TrainingJob]:
    """The checked `TrainingJob` items of `train_models` (one per ``(build, seed)``), for `train_item`.

    Items of several calls (e.g. models trained on different targets) can run in one pool:
    ``parallel.BackgroundJobs(train_item, items_a + items_b, workers=2)`` trains them in the
    background, and ``.results(positions)`` returns ``(model, history)`` pairs as `train_models` does.
    `fit_kwargs`: ``loss_fn``, ``desc``, ``shuffle``, ``disable`` of `fit`; the `TrainingSettings`
    fields as keywords are deprecated (they work for one release, with a `DeprecationWarning`).

    Item k is ``TrainingJob(build_k, seed_k, train, val, settings, rows=train_rows[k])``; the rows are
    checked (1-D integers in [0, n)), so a bootstrap resample r_1..r_n ~ U{0..n-1} of each job can be
    drawn from its seed.

    Reference: the bootstrap of Efron (1979), "Bootstrap Methods: Another Look at the Jackknife",
    *Ann. Statist.* 7; bagging, Breiman (1996), *Machine Learning* 24.

    Example
    -------
    >>> import torch
    >>> build, settings, (c, x) = _example_problem()  # a small PointRegressor, 2 epochs, 32 events
    >>> import numpy as np
    >>> rows = np.random.default_rng(0).integers(0, 32, size=32)  # a bootstrap resample for seed 0
    >>> items = training_items([(build, 0), (build, 1)], (c, x), None, settings, train_rows=[rows, None], disable=True)
    >>> [(item.seed, item.rows is None, item.fit_kwargs) for item in items]
    [(0, False, {'disable': True}), (1, True, {'disable': True})]
    """
    legacy, fit_kwargs = _split_keywords(fit_kwargs)
    settings = _settings_from(settings, legacy, "training_items")
    unknown = sorted(set(fit_kwargs) - set(FIT_KEYWORDS))
    if unknown:
        raise TypeError(f"training_items() got an unexpected keyword argument {unknown[0]!r}")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    jobs = list(jobs)
    for i, job in enumerate(jobs):
        if not (isinstance(job, tuple) and len(job) == 2 and callable(job[0])):
            raise ValueError(f"jobs[{i}]: expected (build, seed) with a callable build, got {job!r}")
    train_rows = _check_train_rows(train_rows, len(jobs), len(check_tensors(train, "train")[0]))
    return [TrainingJob(build, seed, train, val, settings, threads=threads, device=device, fit_kwargs=fit_kwargs,
                        rows=rows)
            for (build, seed), rows in zip(jobs, train_rows)]


def train_models(jobs: Sequence[tuple[Callable[[], torch.nn.Module], int]],
                 train: torch.Tensor | Sequence[torch.Tensor],
                 val: torch.Tensor | Sequence[torch.Tensor] | None = None,
                 settings: TrainingSettings | None = None, *, threads: int = 1, workers: int = 1,
                 client: Any = None, device: str = "cpu", desc: str = "models", progress: bool = True,
                 train_rows: Sequence | None = None,
                 **fit_kwargs: Any) -> list[tuple[torch.nn.Module, TrainHistory]]:
    """`train_model` for every ``(build, seed)`` in `jobs`, in order, each on ``threads`` torch threads.

    Why this size: it joins what each job trains (`jobs`, `train`, `val`, `settings`, `train_rows`)
    with where the jobs run (`threads`, `workers`, `client`, `device`) and how that shows (`desc`,
    `progress`): independent choices, all but the data keyword-only with defaults; `**fit_kwargs`
    passes the rest on to `fit`.

    ``train_rows``: one index array (or None) per job, the rows of ``train`` that job trains on, e.g.
    a bootstrap resample of the training events drawn from the job's seed, so that training-sample
    noise enters the spread between seeds (the validation split stays whole).

    The jobs run in this process (``workers=1``), in local worker processes, or on a Dask
    ``client`` (`posteval.parallel`); each job is seeded and threaded the same way wherever it runs, so
    the trained weights do not depend on ``workers``. ``build`` must be picklable when
    ``workers > 1`` (e.g. a `functools.partial` of a module-level function), and so must `settings`
    (the `posteval.models.schedules` schedules are) and every `fit_kwargs` value (``loss_fn``,
    ``shuffle``, ``disable`` of `fit`). ``desc`` labels the progress bar of the jobs. The
    `TrainingSettings` fields as keywords are deprecated (one release, with a `DeprecationWarning`).

    In formulas: ``train_models(jobs)[k] = train_item(training_items(jobs)[k])``, an ensemble of K
    models θ_k = fit(build_k, train[rows_k]; seed_k) whose spread measures the training noise; the
    caller's torch thread count is restored afterwards.

    Reference: deep ensembles, Lakshminarayanan, Pritzel and Blundell (2017), "Simple and Scalable
    Predictive Uncertainty Estimation using Deep Ensembles", NeurIPS; with `train_rows` bootstrap
    resamples, bagging (Breiman (1996), "Bagging Predictors", *Machine Learning* 24).

    Example
    -------
    >>> import torch
    >>> build, settings, (c, x) = _example_problem()  # a small PointRegressor, 2 epochs, 32 events
    >>> results = train_models([(build, 0), (build, 0), (build, 1)], (c, x), None, settings,
    ...                        threads=torch.get_num_threads(), progress=False, disable=True)
    >>> len(results), [history.epochs for _, history in results]
    (3, [2, 2, 2])
    >>> same = lambda a, b: all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    >>> same(results[0][0], results[1][0]), same(results[0][0], results[2][0])  # by seed
    (True, False)
    """
    legacy, fit_kwargs = _split_keywords(fit_kwargs)
    settings = _settings_from(settings, legacy, "train_models")
    items = training_items(jobs, train, val, settings, threads=threads, device=device, train_rows=train_rows,
                           **fit_kwargs)
    before = torch.get_num_threads()
    try:
        return map_jobs(train_item, items, workers=workers, client=client, desc=desc, unit="model",
                        progress=progress)
    finally:
        torch.set_num_threads(before)  # serial jobs ran in this process
