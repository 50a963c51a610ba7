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
import time
import warnings
from dataclasses import dataclass, field, fields
from typing import Callable, Sequence

import numpy as np
import torch
from posteval.parallel import map_jobs
from posteval.progress import tqdm
from posteval.runtime import seed_everything

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
    """

    train_loss: list = field(default_factory=list)
    val_loss: list = field(default_factory=list)
    best_epoch: int = -1
    seconds: float = 0.0
    stop_reason: str = "epochs"
    lr: list = field(default_factory=list)

    @property
    def best_val_loss(self) -> float:
        """Validation loss of the restored weights."""
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


def check_tensors(data, name: str) -> tuple:
    """Validate a tuple of tensors sliced together along their first axis.

    Parameters
    ----------
    data : tuple or list of torch.Tensor
        Tensors with the same, non-zero length along axis 0.
    name : str
        Argument name used in error messages.

    Returns
    -------
    tuple of torch.Tensor
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
    """The model's own objective ``model.loss(batch)`` (the contract of `posteval.models`)."""
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


def fit(
    model: torch.nn.Module,
    train,
    val=None,
    settings: TrainingSettings | None = None,
    *,
    loss_fn: Callable | None = None,
    seed: int = 0,
    device: str = "cpu",
    desc: str = "train",
    shuffle: torch.Generator | None = None,
    disable: bool | None = None,
    **legacy,
) -> TrainHistory:
    """Train `model` by mini-batch AdamW, with early stopping when a validation split is given.

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
    """
    settings = _settings_from(settings, legacy, "fit")
    loss_fn = _objective(model, loss_fn)
    train, val = _check_splits(train, val)
    if settings.lr_decay_patience is not None and val is None:
        raise ValueError("lr_decay_patience needs val and excludes lr_schedule")
    if shuffle is not None and not isinstance(shuffle, torch.Generator):
        raise ValueError(f"shuffle must be a torch.Generator, got {type(shuffle).__name__}")

    dev = torch.device(device)
    model.to(dev)
    train = tuple(t.to(dev) for t in train)
    val = None if val is None else tuple(t.to(dev) for t in val)
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


def train_model(build: Callable[[], torch.nn.Module], train, val=None, settings: TrainingSettings | None = None, *,
                seed: int = 0, device: str = "cpu", **fit_kwargs) -> tuple[torch.nn.Module, TrainHistory]:
    """Seed torch with `seed`, build a fresh model with ``build()`` and `fit` it with `settings`.

    Returns ``(model, history)``; `fit_kwargs` are passed to `fit` (``loss_fn``, ``desc``,
    ``shuffle``, ``disable``). The `TrainingSettings` fields as keywords (``epochs=...``) are
    deprecated: they still work for one release, with a `DeprecationWarning`.
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
    training events, build and fit the model; ``(model, history)``."""
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


def training_items(jobs: Sequence[tuple[Callable[[], torch.nn.Module], int]], train, val=None,
                   settings: TrainingSettings | None = None, *, threads: int = 1, device: str = "cpu",
                   train_rows: Sequence | None = None, **fit_kwargs) -> list[TrainingJob]:
    """The checked `TrainingJob` items of `train_models` (one per ``(build, seed)``), for `train_item`.

    Items of several calls (e.g. models trained on different targets) can run in one pool:
    ``parallel.BackgroundJobs(train_item, items_a + items_b, workers=2)`` trains them in the
    background, and ``.results(positions)`` returns ``(model, history)`` pairs as `train_models` does.
    `fit_kwargs`: ``loss_fn``, ``desc``, ``shuffle``, ``disable`` of `fit`; the `TrainingSettings`
    fields as keywords are deprecated (they work for one release, with a `DeprecationWarning`).
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


def train_models(jobs: Sequence[tuple[Callable[[], torch.nn.Module], int]], train, val=None,
                 settings: TrainingSettings | None = None, *, threads: int = 1, workers: int = 1, client=None,
                 device: str = "cpu", desc: str = "models", progress: bool = True, train_rows: Sequence | None = None,
                 **fit_kwargs) -> list[tuple[torch.nn.Module, TrainHistory]]:
    """`train_model` for every ``(build, seed)`` in `jobs`, in order, each on ``threads`` torch threads.

    Many parameters because it joins what each job trains (`jobs`, `train`, `val`, `settings`,
    `train_rows`) with where the jobs run (`threads`, `workers`, `client`, `device`) and how that
    shows (`desc`, `progress`): independent choices, all but the data keyword-only with defaults.

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
