"""One small, seeded training loop shared by every supervised model of the book.

`fit` runs mini-batch AdamW on the model's own ``loss(batch)`` (or a given ``loss_fn``),
evaluates a validation loss after each epoch, stops early when the validation loss has not
improved for `patience` epochs, restores the best weights, and shows a `tqdm` progress bar.
Without a validation split it runs every epoch and keeps the last weights. A non-finite loss
raises `FloatingPointError` naming the epoch, instead of silently training on NaNs.
`train_model` seeds, builds and fits a fresh model in one call.
"""

from __future__ import annotations

import copy
import math
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
import torch
from posteval.parallel import map_jobs
from posteval.progress import tqdm
from posteval.runtime import seed_everything

__all__ = ["TrainHistory", "fit", "train_model", "train_models", "check_tensors"]


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


def _check_positive(value, name: str, integer: bool) -> None:
    kind = int if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, kind) or not value > 0:
        raise ValueError(f"{name} must be a positive {'integer' if integer else 'number'}, got {value!r}")


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


def fit(
    model: torch.nn.Module,
    train,
    val=None,
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    loss_fn: Callable | None = None,
    patience: int = 10,
    seed: int = 0,
    weight_decay: float = 0.0,
    desc: str = "train",
    max_seconds: float | None = None,
    device: str = "cpu",
    lr_decay_patience: int | None = None,
    lr_decay_factor: float = 0.5,
    lr_schedule: Callable[[int], float] | None = None,
    grad_clip: float | None = None,
    shuffle: torch.Generator | None = None,
    disable: bool | None = None,
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
    epochs : int
        Maximum number of passes over `train`.
    batch_size : int
        Mini-batch size (the last batch of an epoch may be smaller).
    lr : float
        Initial learning rate.
    loss_fn : callable or None
        ``loss_fn(model, batch) -> scalar tensor``; None uses the model's own ``loss(batch)``.
    patience : int
        Stop after this many epochs without a lower validation loss.
    seed : int
        Seeds the shuffling and the global torch RNG used inside the loss (so stochastic
        losses such as flow matching are reproducible). The validation loss is computed
        with a fixed RNG state, so it is comparable from epoch to epoch.
    weight_decay : float
        Decoupled weight decay of AdamW (0 gives plain Adam).
    desc : str
        Label of the progress bar.
    max_seconds : float or None
        Stop after the first epoch that ends past this wall time (a safety net: a stop
        caused by time is not reproducible; check ``history.stop_reason``).
    device : str
        Device the model and the data are moved to.
    lr_decay_patience : int or None
        If set, multiply the learning rate by `lr_decay_factor` after this many epochs
        without improvement (reduce-on-plateau; needs `val`). None keeps it constant.
    lr_decay_factor : float
        Factor of the reduce-on-plateau schedule, in (0, 1).
    lr_schedule : callable or None
        ``lr_schedule(step) -> factor`` of the learning rate at each optimizer step (e.g. a
        linear decay); not together with `lr_decay_patience`.
    grad_clip : float or None
        Clip the gradient norm to this value before each step.
    shuffle : torch.Generator or None
        Source of the epoch permutations (default: a CPU generator seeded with `seed`); pass
        one to share it with a stochastic loss.
    disable : bool or None
        Passed to `tqdm` (None: hide the bar when not attached to a terminal/notebook).

    Returns
    -------
    TrainHistory

    Raises
    ------
    ValueError
        On malformed data or hyper-parameters.
    FloatingPointError
        If a training or validation loss is NaN or infinite (names the epoch).
    """
    if not isinstance(model, torch.nn.Module):
        raise ValueError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    if loss_fn is None:
        if not callable(getattr(model, "loss", None)):
            raise ValueError(f"model {type(model).__name__} has no loss(batch); pass loss_fn")
        loss_fn = own_loss
    if not callable(loss_fn):
        raise ValueError("loss_fn must be callable as loss_fn(model, batch)")
    train = check_tensors(train, "train")
    if val is not None:
        val = check_tensors(val, "val")
        if len(train) != len(val):
            raise ValueError(f"train has {len(train)} tensors but val has {len(val)}")
    _check_positive(epochs, "epochs", integer=True)
    _check_positive(batch_size, "batch_size", integer=True)
    _check_positive(lr, "lr", integer=False)
    _check_positive(patience, "patience", integer=True)
    if not isinstance(weight_decay, (int, float)) or weight_decay < 0:
        raise ValueError(f"weight_decay must be >= 0, got {weight_decay!r}")
    if max_seconds is not None:
        _check_positive(max_seconds, "max_seconds", integer=False)
    if lr_decay_patience is not None:
        _check_positive(lr_decay_patience, "lr_decay_patience", integer=True)
        if val is None or lr_schedule is not None:
            raise ValueError("lr_decay_patience needs val and excludes lr_schedule")
    if not 0 < lr_decay_factor < 1:
        raise ValueError(f"lr_decay_factor must be in (0, 1), got {lr_decay_factor!r}")
    if lr_schedule is not None and not callable(lr_schedule):
        raise ValueError("lr_schedule must be callable as lr_schedule(step) -> factor")
    if grad_clip is not None:
        _check_positive(grad_clip, "grad_clip", integer=False)
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
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    schedule = None if lr_schedule is None else torch.optim.lr_scheduler.LambdaLR(optimizer, lr_schedule)
    rng_devices = [dev] if dev.type == "cuda" else []

    history = TrainHistory()
    best_loss = math.inf
    best_state = None if val is None else copy.deepcopy(model.state_dict())
    since_best = 0
    since_decay = 0
    start = time.perf_counter()

    bar = tqdm(range(epochs), desc=desc, disable=disable, leave=False)
    for epoch in bar:
        model.train()
        total = 0.0
        order = torch.randperm(n, generator=shuffle).to(dev)
        for batch_start in range(0, n, batch_size):
            idx = order[batch_start : batch_start + batch_size]
            batch = tuple(t[idx] for t in train)
            loss = loss_fn(model, batch)
            if not bool(torch.isfinite(loss)):
                raise FloatingPointError(
                    f"{desc}: non-finite training loss ({float(loss.detach())}) at epoch {epoch}, "
                    f"batch starting at event {batch_start}"
                )
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            if grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
            optimizer.step()
            if schedule is not None:
                schedule.step()
            total += float(loss.detach()) * idx.shape[0]

        history.train_loss.append(total / n)
        history.lr.append(optimizer.param_groups[0]["lr"])
        if val is None:
            history.best_epoch = epoch
            bar.set_postfix(train=f"{total / n:.4g}")
        else:
            model.eval()
            with torch.random.fork_rng(devices=rng_devices):
                torch.manual_seed(seed + 1)
                val_loss = _mean_loss(model, loss_fn, val, batch_size)
            if not math.isfinite(val_loss):
                raise FloatingPointError(f"{desc}: non-finite validation loss ({val_loss}) at epoch {epoch}")
            history.val_loss.append(val_loss)
            if val_loss < best_loss:
                best_loss = val_loss
                best_state = copy.deepcopy(model.state_dict())
                history.best_epoch = epoch
                since_best = 0
                since_decay = 0
            else:
                since_best += 1
                since_decay += 1
            bar.set_postfix(train=f"{total / n:.4g}", val=f"{val_loss:.4g}", best=history.best_epoch)

        if since_best >= patience:
            history.stop_reason = "patience"
            break
        if max_seconds is not None and time.perf_counter() - start > max_seconds:
            history.stop_reason = "max_seconds"
            break
        if lr_decay_patience is not None and since_decay >= lr_decay_patience:
            for group in optimizer.param_groups:
                group["lr"] *= lr_decay_factor
            since_decay = 0
    bar.close()

    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    history.seconds = time.perf_counter() - start
    return history


def train_model(build: Callable[[], torch.nn.Module], train, val=None, *, seed: int = 0, device: str = "cpu",
                **fit_kwargs) -> tuple[torch.nn.Module, TrainHistory]:
    """Seed torch with `seed`, build a fresh model with ``build()`` and `fit` it.

    Returns ``(model, history)``; `fit_kwargs` are passed to `fit` (``epochs``, ``lr``, ...).
    """
    if not callable(build):
        raise ValueError("build must be callable as build() -> torch.nn.Module")
    torch.manual_seed(seed)
    model = build().to(device)
    return model, fit(model, train, val, seed=seed, device=device, **fit_kwargs)


def train_item(job: tuple) -> tuple[torch.nn.Module, TrainHistory]:
    """One job of `train_models` (an item of `training_items`): seed this process, take the job's
    rows of the training events, build and fit the model; ``(model, history)``."""
    build, seed, train, val, threads, device, fit_kwargs, rows = job
    seed_everything(seed, threads=threads)  # a worker process starts with torch's defaults
    if rows is not None:  # this job's resample of the training events
        index = torch.as_tensor(rows, dtype=torch.long)
        train = tuple(t[index] for t in check_tensors(train, "train"))
    model, history = train_model(build, train, val, seed=seed, device=device, **fit_kwargs)
    return model.cpu() if device != "cpu" else model, history


def training_items(jobs: Sequence[tuple[Callable[[], torch.nn.Module], int]], train, val=None, *,
                   threads: int = 1, device: str = "cpu", train_rows: Sequence | None = None, **fit_kwargs) -> list:
    """The checked job items of `train_models` (one per ``(build, seed)``), for `train_item`.

    Items of several calls (e.g. models trained on different targets) can run in one pool:
    ``parallel.BackgroundJobs(train_item, items_a + items_b, workers=2)`` trains them in the
    background, and ``.results(positions)`` returns ``(model, history)`` pairs as `train_models` does.
    """
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    jobs = list(jobs)
    for i, job in enumerate(jobs):
        if not (isinstance(job, tuple) and len(job) == 2 and callable(job[0])):
            raise ValueError(f"jobs[{i}]: expected (build, seed) with a callable build, got {job!r}")
    if train_rows is None:
        train_rows = [None] * len(jobs)
    train_rows = list(train_rows)
    if len(train_rows) != len(jobs):
        raise ValueError(f"train_rows: expected one index array (or None) per job, got {len(train_rows)} for "
                         f"{len(jobs)} jobs")
    n_train = len(check_tensors(train, "train")[0])
    for i, rows in enumerate(train_rows):
        if rows is not None:
            r = np.asarray(rows)
            if r.ndim != 1 or r.size == 0 or not np.issubdtype(r.dtype, np.integer) or r.min() < 0 or r.max() >= n_train:
                raise ValueError(f"train_rows[{i}]: expected a non-empty 1-D array of row indices in [0, {n_train})")
    return [(build, seed, train, val, threads, device, fit_kwargs, rows)
            for (build, seed), rows in zip(jobs, train_rows)]


def train_models(jobs: Sequence[tuple[Callable[[], torch.nn.Module], int]], train, val=None, *,
                 threads: int = 1, workers: int = 1, client=None, device: str = "cpu",
                 desc: str = "models", progress: bool = True, train_rows: Sequence | None = None,
                 **fit_kwargs) -> list[tuple[torch.nn.Module, TrainHistory]]:
    """`train_model` for every ``(build, seed)`` in `jobs`, in order, each on ``threads`` torch threads.

    ``train_rows``: one index array (or None) per job, the rows of ``train`` that job trains on, e.g.
    a bootstrap resample of the training events drawn from the job's seed, so that training-sample
    noise enters the spread between seeds (the validation split stays whole).

    The jobs run in this process (``workers=1``), in local worker processes, or on a Dask
    ``client`` (`posteval.parallel`); each job is seeded and threaded the same way wherever it runs, so
    the trained weights do not depend on ``workers``. ``build`` must be picklable when
    ``workers > 1`` (e.g. a `functools.partial` of a module-level function), and so must every
    `fit_kwargs` value (the `posteval.models.schedules` schedules are).
    """

    items = training_items(jobs, train, val, threads=threads, device=device, train_rows=train_rows, **fit_kwargs)
    before = torch.get_num_threads()
    try:
        return map_jobs(train_item, items, workers=workers, client=client, desc=desc, unit="model",
                        progress=progress)
    finally:
        torch.set_num_threads(before)  # serial jobs ran in this process
