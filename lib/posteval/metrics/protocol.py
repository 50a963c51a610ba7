"""The protocol report as one Python call: :func:`evaluate_models` returns what ``protocol-report``
writes (the table, the leads and calibration verdicts, the sentences, a bottom line, notes and
the provenance), and the command line (:mod:`.cli`) is a thin front end over it.

The report opens with a bottom line (:func:`bottom_line`): which model to trust and why, in plain
words, with a warning whenever the model with the lowest RMSE or MAE fails the spectrum or the
calibration check (a regressor of the posterior mean wins the RMSE with a collapsed spectrum:
the protocol's whole point). :data:`GLOSSARY` explains every term the report uses.

Every argument is checked before any scoring (:func:`check_inputs`), the size of the inputs is
estimated from their shapes against a stated limit (``max_gb``), and no number depends on the
order of a sampler's draws within an event (:func:`~posteval.metrics.report.event_values`).
"""

from __future__ import annotations

import datetime
import math
import os
import platform
from collections import deque
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from .. import __version__
from ..progress import tqdm
from . import ranking
from ._validation import DEFAULT_LEVELS, finite_array, level_value, positive_int, real_array, seed_value
from .array_files import ArraySource, InputFileError
from .calibration import tarp_frame, tarp_references
from .report import EventValues, concat_event_values, event_values, protocol_table
from .report_page import format_interval, format_number
from .scores import CRPS_ESTIMATORS

CHUNK_BYTES = 64 * 2**20  # float64 bytes of one chunk of a sampler's events
ENERGY_SHIFTS = 8
#: the most GiB of draws (float64) a report reads unless told otherwise (``max_gb``, ``--max-gb``)
MAX_GB = 16.0
#: a spectrum check fails when the chi-square p-value of one draw per event against the truth is below this
SPECTRUM_ALPHA = 0.01
POINT_RULE = ("a sampler's RMSE, MAE and spectrum use one of its draws per event, chosen at random by the seed and "
              "the event's index whatever the order of the draws (one reconstruction, which has the sampler's "
              "spectrum); a point prediction is a point mass: its CRPS is its absolute error and its energy score "
              "its Euclidean error. No number depends on the order of the draws within an event")
METRIC_WORDS = {"crps": "CRPS", "energy_score": "energy score", "rmse": "RMSE", "mae": "MAE"}

#: the terms of the report, in words a scientist without statistics reads (the report's glossary)
GLOSSARY = {
    "CRPS": "continuous ranked probability score: how far the model's predicted distribution lies from the true "
            "value, in the units of the value; it rewards being close and honest about uncertainty at once. Lower "
            "is better; for a single-valued prediction it is the absolute error.",
    "energy score": "the CRPS of all dimensions together (it also sees whether the dimensions vary together as "
                    "they should). Lower is better.",
    "RMSE, MAE": "root-mean-square and mean absolute error of one value per event (one draw of a sampler). A "
                 "model that always predicts the average answer wins them while being useless as a sampler.",
    "spectrum": "the distribution of the model's values over all events, compared with that of the true values "
                "by a chi-square test; chi2/ndf near 1 means they agree, far above 1 (e.g. a collapsed, too narrow "
                "spectrum) means they do not. The check fails when its p-value is below 0.01.",
    "calibrated": "the model's stated uncertainty is right: its 90 % ranges hold the truth about 90 % of the time. "
                  "Under-covers: its ranges are too narrow (over-confident); over-covers: too wide.",
    "lead is resolved": "the difference between the best model and another is larger than what chance in the "
                        "choice of test events explains (checked together for all comparisons, Holm's method); "
                        "not resolved: the data cannot tell the two apart.",
    "[lo, hi]": "the range of plausible values of a number (its 95 % interval) given the finite test set.",
    "margin": "how far an exactly calibrated sampler with the same number of events and draws strays by chance; "
              "a deviation inside it is no evidence of miscalibration.",
    "TARP noise floor": "the largest TARP error (a joint calibration check over all dimensions) an exactly "
                        "calibrated sampler shows by chance in 95 % of cases.",
    "spread-skill ratio": "the model's spread divided by its actual error: 1 when the uncertainty tracks the error, "
                          "below 1 when over-confident.",
}


def _version() -> str:
    return __version__


# ---------------------------------------------------------------------------------------------
# inputs: checked before any scoring
# ---------------------------------------------------------------------------------------------
@dataclass
class Inputs:
    """Everything the report reads, checked: truth in memory, the models as chunked sources."""

    truth: np.ndarray
    truth_where: str
    models: dict[str, tuple[ArraySource, str]]  # name -> (source, "samples" | "points")
    calibration: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    dim_names: list[str] = field(default_factory=list)
    sources: dict[str, dict] = field(default_factory=dict)


def unit_axis_view(shape: tuple[int, ...], truth_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The shape a model's array is read as beside the truth: a trailing axis of length 1 is dropped or added
    so that the model's layout follows the truth's, (n, m, 1) beside a truth (n,) reads as samples (n, m), and
    (n,) and (n, m) with m > 1 beside a truth (n, 1) as (n, 1) and (n, m, 1); every other shape is returned as
    it is (:func:`model_kind` judges it). Nothing is guessed: a unit axis carries no values.

    Reference: the array model of Harris et al. (2020), "Array programming with NumPy", *Nature* 585, 357
    (a reshape that adds or drops a unit axis keeps every value and its order).

    >>> unit_axis_view((40, 8, 1), (40,)), unit_axis_view((40, 8), (40, 1)), unit_axis_view((40,), (40, 1))
    ((40, 8), (40, 8, 1), (40, 1))
    >>> unit_axis_view((40, 1), (40,)), unit_axis_view((40, 8, 2), (40, 2))  # (n, 1) stays ambiguous
    ((40, 1), (40, 8, 2))
    """
    shape = tuple(int(s) for s in shape)
    if len(truth_shape) == 1 and len(shape) == 3 and shape[-1] == 1:
        return shape[:-1]
    if len(truth_shape) == 2 and truth_shape[1] == 1 and (len(shape) == 1 or (len(shape) == 2 and shape[1] > 1)):
        return (*shape, 1)
    return shape


def model_kind(shape: tuple[int, ...], where: str, truth_shape: tuple[int, ...], truth_where: str,
               declared: str | None, name: str) -> str:
    """"samples" or "points" for an array of ``shape`` beside the truth: samples (n, m) beside a
    truth (n,) and (n, m, d) beside (n, d), points (n,) and (n, d); an array that fits neither, or
    fits both without ``declared`` (an (n, 1) array beside a 1-D truth), is an error.

    Samples (n, m[, d]) are an ensemble forecast scored by CRPS(F, y) = E|X - y| - 1/2 E|X - X'|;
    points (n[, d]) a point mass, whose CRPS is |x - y| (Gneiting and Raftery (2007), *J. Amer.
    Statist. Assoc.* 102, eq. 21). Raises :class:`~.array_files.InputFileError`.

    >>> model_kind((40, 8), "flow.npy", (40,), "truth.npy", None, "flow")
    'samples'
    >>> model_kind((40, 1), "reg.npy", (40,), "truth.npy", "points", "reg")  # (n, 1) reads both ways
    'points'

    A transposed truth is blamed on the truth, draws with the dimensions before the draws get the hint:

    >>> model_kind((40, 8, 2), "flow.npy", (2, 40), "truth.npy", None, "flow")
    Traceback (most recent call last):
    ...
    posteval.metrics.array_files.InputFileError: truth truth.npy: shape (2, 40) looks transposed: ...
    >>> model_kind((40, 2, 8), "flow.npy", (40, 2), "truth.npy", None, "flow")
    Traceback (most recent call last):
    ...
    posteval.metrics.array_files.InputFileError: flow.npy: 8 dimensions on the last axis, ... (an (n, d, m) array transposed?)
    """
    n = truth_shape[0]
    if shape[0] != n:
        if len(truth_shape) == 2 and truth_shape[1] == shape[0] and truth_shape[0] == shape[-1] and len(shape) > 1:
            raise InputFileError(f"truth {truth_where}: shape {truth_shape} looks transposed: {where} has "
                                 f"{shape[0]} events on its first axis and {shape[-1]} dimensions on its last, so "
                                 f"the truth should be ({shape[0]}, {shape[-1]}): events first")
        swapped = [i for i, s in enumerate(shape) if s == n and i > 0]
        hint = f"; axis {swapped[0]} has {n}: events must be the first axis (transposed?)" if swapped else ""
        raise InputFileError(f"{where}: {shape[0]} events on the first axis, truth {truth_where} has {n}{hint}")
    one_d = len(truth_shape) == 1
    if one_d:
        fits = {1: "points", 2: "samples"}
    else:
        fits = {2: "points", 3: "samples"}
        if shape[-1] != truth_shape[1]:
            d = truth_shape[1]
            hint = (f"; axis 1 has {d}: draws (n, m, d) must have the dimensions last (an (n, d, m) array "
                    f"transposed?)" if len(shape) == 3 and shape[1] == d else "")
            raise InputFileError(f"{where}: {shape[-1]} dimensions on the last axis, truth {truth_where} has {d}{hint}")
    if len(shape) not in fits:
        expected = "(n,) points or (n, m) samples" if one_d else "(n, d) points or (n, m, d) samples"
        raise InputFileError(f"{where}: shape {shape} does not fit truth {truth_where} of shape {truth_shape}: "
                             f"expected {expected}")
    kind = fits[len(shape)]
    if one_d and len(shape) == 2 and shape[1] == 1:
        if declared is None:
            raise InputFileError(f"{where}: shape {shape} beside the 1-D truth {truth_where} reads two ways: point "
                                 f"predictions (n,) or a sampler with m = 1 sample per event; say which with "
                                 f"--kind {name}=points or --kind {name}=samples (kinds={{{name!r}: ...}} in Python)")
        return declared
    if declared is not None and declared != kind:
        raise InputFileError(f"{where}: --kind {name}={declared}, but shape {shape} beside truth {truth_where} of "
                             f"shape {truth_shape} is {kind}")
    return kind


def check_inputs(inputs: Inputs, *, max_gb: float | None = MAX_GB) -> dict[str, float]:
    """Checks of the whole report that need no scoring; returns the size estimate.

    The truth needs n >= 2 events and values that vary in every dimension (the spectrum's bins
    and the coverage need a spread of true values). The size: every model's draws are read as
    float64, bytes = 8 n m d summed over the models, refused above ``max_gb`` GiB (None: no
    limit); the memory held at once is about ``2 x workers`` chunks of :data:`CHUNK_BYTES`, a few
    copies each, plus the per-event values, 8 n d (k + 2) bytes per model for k ~ 6 values.
    Raises :class:`~.array_files.InputFileError` (a ValueError) naming the input.

    Reference: the spectrum's chi-square needs spread in every binned variable (Pearson (1900), *Phil.
    Mag.* 50, 157: expected counts above zero); the float64 size is IEEE 754-2019, Section 3.6.

    >>> truth = np.arange(4.0)
    >>> src = ArraySource("flow", (4, 3), lambda rows: iter([np.zeros((4, 3))]))
    >>> check_inputs(Inputs(truth, "truth", {"flow": (src, "samples")}, dim_names=["x"]))["read_gb"] > 0
    True
    """
    t = inputs.truth
    n = t.shape[0]
    if n < 2:
        raise InputFileError(f"{inputs.truth_where}: {n} event; the protocol needs at least 2 test events "
                             f"(intervals, spectrum and coverage are over events)")
    t2 = t[:, None] if t.ndim == 1 else t
    for j, dim in enumerate(inputs.dim_names):
        if np.all(t2[:, j] == t2[0, j]):
            raise InputFileError(f"{inputs.truth_where}: the truth is constant ({float(t2[0, j])!r}) on "
                                 f"{dim}; the spectrum and the coverage need true values that vary")
    read = sum(8.0 * math.prod(src.shape) for src, _ in inputs.models.values()) / 2**30
    d = t2.shape[1]
    held = (2 * _workers() * 4 * CHUNK_BYTES + len(inputs.models) * 8.0 * n * d * 8) / 2**30
    if max_gb is not None and read > max_gb:
        sizes = ", ".join(f"{name} {src.shape} {8.0 * math.prod(src.shape) / 2**30:.3g} GiB"
                          for name, (src, _) in inputs.models.items())
        raise InputFileError(f"the inputs hold {read:.3g} GiB of values to score ({sizes}), more than the limit of "
                             f"{max_gb:g} GiB; give a higher limit (--max-gb, max_gb=) to score them anyway")
    return {"read_gb": read, "memory_gb": held}


# ---------------------------------------------------------------------------------------------
# scoring, chunk by chunk
# ---------------------------------------------------------------------------------------------
def _workers() -> int:
    """Threads that score chunks side by side (numpy releases the GIL): the usable cores, at most 4."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(4, cores))


def _shifts(m: int) -> int | None:
    """Random pair shifts of the energy score's second term: all pairs when m is small."""
    return None if m - 1 <= ENERGY_SHIFTS else ENERGY_SHIFTS


def score_models(inputs: Inputs, *, crps_estimator: str, seed: int, energy: bool,
                 progress: bool = True) -> dict[str, EventValues]:
    """{model: EventValues}: samplers read and scored in chunks of about 64 MiB, a few chunks at a
    time in threads (at most ``2 x workers`` chunks in memory), joined in order.

    Per event (:func:`~posteval.metrics.report.event_values`, each chunk given its first event's
    index, so that chunking changes no number): CRPS = E|X - y| - 1/2 E|X - X'|,
    the coverage codes of |2 PIT - 1|, with ``energy`` the energy score E||X - y|| - 1/2 E||X - X'||
    (all pairs, or :data:`ENERGY_SHIFTS` seeded random pairs per draw when m > ENERGY_SHIFTS + 1), and for
    samplers the TARP credibility and spread-skill terms. References: Gneiting and Raftery (2007), *J. Amer. Statist. Assoc.* 102, eqs. 21-22;
    Lemos et al. (2023), ICML (TARP); Fortin et al. (2014), *J. Hydrometeor.* 15 (spread-skill).

    >>> src = ArraySource("flow", (2, 2), lambda rows: iter([np.array([[0.0, 2.0], [1.0, 1.0]])]))
    >>> values = score_models(Inputs(np.array([0.0, 1.0]), "truth", {"flow": (src, "samples")}), crps_estimator="nrg",
    ...                       seed=0, energy=False, progress=False)
    >>> values["flow"].crps.tolist()  # 1 - 2 / 4 and 0
    [[0.5], [0.0]]
    """
    t2 = inputs.truth[:, None] if inputs.truth.ndim == 1 else inputs.truth
    centre, scale = tarp_frame(t2)
    refs = tarp_references(t2, centre, scale, seed=seed)
    values, workers = {}, _workers()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for name, (src, kind) in inputs.models.items():
            if kind == "points":
                pred = src.read().reshape(inputs.truth.shape)
                values[name] = event_values(pred, inputs.truth, name=name, crps_estimator=crps_estimator, energy=energy,
                                            calibration=inputs.calibration.get(name), seed=seed)
                continue
            rows = max(1, CHUNK_BYTES // (8 * math.prod(src.shape[1:])))
            shifts = _shifts(src.shape[1]) if energy else None
            parts, pending, start = [], deque(), 0
            bar = tqdm(total=src.shape[0], desc=f"scoring {name}", unit="event", disable=not progress, leave=False)
            for chunk in src.chunks(rows):
                stop = start + len(chunk)
                pending.append(pool.submit(event_values, chunk, inputs.truth[start:stop], name=name,
                                           crps_estimator=crps_estimator, energy=energy, energy_shifts=shifts,
                                           tarp=(centre, scale, refs[start:stop]), spread=True, seed=seed,
                                           first_event=start))
                start = stop
                while len(pending) >= 2 * workers:
                    parts.append(pending.popleft().result())
                    bar.update(parts[-1].n)
            while pending:
                parts.append(pending.popleft().result())
                bar.update(parts[-1].n)
            bar.close()
            values[name] = concat_event_values(parts)
    return values


# ---------------------------------------------------------------------------------------------
# sentences and the bottom line
# ---------------------------------------------------------------------------------------------
def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def sentences(leads: pd.DataFrame, calib: pd.DataFrame, joint: pd.DataFrame, dim_names: list[str]) -> list[str]:
    """The report's answers, one sentence per metric and dimension, then one per sampler.

    ``leads``, ``calib`` and ``joint`` are the tables of :func:`~posteval.metrics.ranking.leads`
    and :func:`~posteval.metrics.ranking.calibration_verdicts`. A lead is the difference
    D = metric(best) - metric(other) with its interval D -+ z sd(D*) from the paired bootstrap, "resolved"
    when its word is "yes": the claims table's rule (:func:`~posteval.metrics.claims.evaluate_claims`,
    every lead of the report one family, Holm-adjusted); a sampler's verdict compares
    its coverage deviation with an exact sampler's margin. References: Holm (1979), *Scand. J.
    Statist.* 6; Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 13;
    Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69 (calibration).

    >>> leads = pd.DataFrame({"metric": ["crps"], "dimension": ["dim0"], "best": ["flow"], "other": ["reg"],
    ...                       "difference": [-0.06], "difference_lo": [-0.1], "difference_hi": [-0.02],
    ...                       "verdict": ["yes"]})
    >>> no_sampler = pd.DataFrame(columns=["model", "verdict", "dimension"])
    >>> sentences(leads, no_sampler, pd.DataFrame(), ["dim0"])
    ['flow has the lowest CRPS; its lead is resolved over reg (difference −0.06000 [−0.1000, −0.02000]).']
    """
    out = []
    for (metric, dim), group in leads.groupby(["metric", "dimension"], sort=False):
        best = group["best"].iloc[0]
        where = " over all dimensions" if dim == "all" else f" on {dim}" if len(dim_names) > 1 else ""
        said = []
        for word, rows in (("resolved", group[group["verdict"] == "yes"]), ("not resolved", group[group["verdict"] != "yes"])):
            if len(rows):
                said.append(f"{word} over " + ", ".join(
                    f"{r.other} (difference {format_interval(r.difference, r.difference_lo, r.difference_hi)})" for r in rows.itertuples()))
        out.append(f"{best} has the lowest {METRIC_WORDS[metric]}{where}; its lead is " + "; ".join(said) + ".")
    words = {"calibrated": "is calibrated", "under-covers": "under-covers (its intervals are too narrow)",
             "over-covers": "over-covers (its intervals are too wide)",
             "not resolved": "is not resolved as calibrated or miscalibrated"}
    for (model, word), rows in calib.groupby(["model", "verdict"], sort=False):
        dims = list(rows["dimension"])
        where = f" on {_and(dims)}" if len(dim_names) > 1 else ""
        devs = ", ".join(format_interval(r.coverage_deviation, r.coverage_deviation_lo, r.coverage_deviation_hi)
                         for r in rows.itertuples())
        out.append(f"{model} {words[word]}{where}: coverage deviation{'s' if len(rows) > 1 else ''} {devs} "
                   f"(coverage − that of an exact sampler with the same {rows['m'].iloc[0]} draws), margin "
                   f"{format_number(rows['margin'].iloc[0])}.")
    for r in joint.to_dict("records"):
        parts = []
        if "tarp_verdict" in r and len(dim_names) > 1:
            tarp_word = {"not rejected": "not beyond", "miscalibrated": "beyond"}
            parts.append(f"its TARP error {format_interval(r['tarp_error'], r['tarp_error_lo'], r['tarp_error_hi'])} "
                         f"is {tarp_word[r['tarp_verdict']]} an exact sampler's noise floor "
                         f"{format_number(r['tarp_noise_floor'])}")
        if "spread_skill" in r and np.isfinite(r["spread_skill"]):
            parts.append(f"its spread-skill ratio is "
                         f"{format_interval(r['spread_skill'], r['spread_skill_lo'], r['spread_skill_hi'])} (1 when "
                         f"the spread tracks the error)")
        if parts:
            out.append(f"Over all dimensions {r['model']}: " + "; ".join(parts) + ".")
    return out


def checks(table: pd.DataFrame, calib: pd.DataFrame, joint: pd.DataFrame) -> pd.DataFrame:
    """One row per model: does it pass the spectrum check and the calibration check?

    spectrum: "passes" when the chi-square p-value of its values (one draw per event) against the
    truth is at least :data:`SPECTRUM_ALPHA` on every dimension, else "fails" (Pearson (1900));
    calibration (samplers): "fails" when it under- or over-covers on some dimension or its TARP error
    is beyond the noise floor, "passes" when calibrated everywhere, else "not resolved"; a point
    predictor has no predictive distribution: "none" (Gneiting, Balabdaoui and Raftery (2007)).

    >>> table = pd.DataFrame({"model": ["reg", "flow"], "dimension": ["x", "x"], "chi2_ndf": [310.0, 0.9],
    ...                       "chi2_pvalue": [0.0, 0.6], "kind": ["point", "samples"]})
    >>> calib = pd.DataFrame({"model": ["flow"], "dimension": ["x"], "verdict": ["calibrated"]})
    >>> checks(table, calib, pd.DataFrame({"model": ["flow"]}))[["model", "spectrum", "calibration"]].values.tolist()
    [['reg', 'fails', 'none'], ['flow', 'passes', 'passes']]
    """
    rows = []
    for model, group in table.groupby("model", sort=False):
        spectrum = "fails" if (group["chi2_pvalue"] < SPECTRUM_ALPHA).any() else "passes"
        worst = float(group["chi2_ndf"].max())
        if group["kind"].iloc[0] != "samples":
            calibration = "none"
        else:
            words = set(calib.loc[calib["model"] == model, "verdict"])
            tarp = joint.loc[joint["model"] == model, "tarp_verdict"] if "tarp_verdict" in joint else pd.Series([], dtype=object)
            if words & {"under-covers", "over-covers"} or (tarp == "miscalibrated").any():
                calibration = "fails"
            elif words == {"calibrated"}:
                calibration = "passes"
            else:
                calibration = "not resolved"
        rows.append({"model": model, "kind": group["kind"].iloc[0], "spectrum": spectrum, "chi2_ndf_max": worst,
                     "calibration": calibration})
    return pd.DataFrame(rows, columns=["model", "kind", "spectrum", "chi2_ndf_max", "calibration"])


def _calibration_reason(model: str, calib: pd.DataFrame, joint: pd.DataFrame) -> str:
    words = list(dict.fromkeys(calib.loc[(calib["model"] == model)
                                         & calib["verdict"].isin(["under-covers", "over-covers"]), "verdict"]))
    said = {"under-covers": "its uncertainty ranges are too narrow (over-confident)",
            "over-covers": "its uncertainty ranges are too wide"}
    parts = [said[w] for w in words]
    if "tarp_verdict" in joint and (joint.loc[joint["model"] == model, "tarp_verdict"] == "miscalibrated").any():
        parts.append("its joint calibration over the dimensions (TARP) fails")
    return _and(parts) if parts else "its calibration fails"


def bottom_line(table: pd.DataFrame, leads: pd.DataFrame, calib: pd.DataFrame, joint: pd.DataFrame) -> tuple[str, list[str]]:
    """The report's first paragraph, (paragraph, warnings): which model to trust and why.

    The rule: a model is trusted when it passes the spectrum check and is not miscalibrated
    (:func:`checks`); among those, the one with the lowest energy score (several dimensions) or
    mean CRPS (a proper score: it rewards accuracy and honest uncertainty together, Gneiting and
    Raftery (2007), *J. Amer. Statist. Assoc.* 102). A warning is given whenever the model with the
    lowest RMSE or MAE fails the spectrum or the calibration check: a regressor of the posterior
    mean wins those with a collapsed spectrum. The terms are those of :data:`GLOSSARY`.

    >>> table = pd.DataFrame({"model": ["reg", "flow"], "dimension": ["x", "x"], "rmse": [0.7, 1.0],
    ...                       "mae": [0.5, 0.8], "crps": [0.5, 0.45], "chi2_ndf": [310.0, 0.9],
    ...                       "chi2_pvalue": [0.0, 0.6], "kind": ["point", "samples"]})
    >>> calib = pd.DataFrame({"model": ["flow"], "dimension": ["x"], "verdict": ["calibrated"]})
    >>> text, warnings = bottom_line(table, pd.DataFrame(columns=["metric", "best", "other", "verdict"]), calib,
    ...                              pd.DataFrame({"model": ["flow"]}))
    >>> text.startswith("Trust flow")
    True
    >>> warnings[0].startswith("WARNING: reg has the lowest RMSE and MAE, but its spectrum")
    True
    """
    chk = checks(table, calib, joint).set_index("model")
    score = "energy_score" if "energy_score" in table and table["dimension"].nunique() > 1 else "crps"
    means = table.groupby("model", sort=False)[score].mean()
    ok = [mdl for mdl in means.index if chk.loc[mdl, "spectrum"] == "passes" and chk.loc[mdl, "calibration"] != "fails"]
    word = METRIC_WORDS[score]
    warnings = []
    leaders: dict[str, list[str]] = {}
    for metric in ("rmse", "mae"):
        if metric in table:
            best = table.groupby("model", sort=False)[metric].mean().idxmin()
            leaders.setdefault(best, []).append(METRIC_WORDS[metric])
    for mdl, metric_names in leaders.items():
        why = []
        if chk.loc[mdl, "spectrum"] == "fails":
            why.append(f"its spectrum fails (chi2/ndf up to {format_number(chk.loc[mdl, 'chi2_ndf_max'])}: the "
                       f"spread of its values over events does not match the truth's, e.g. collapsed towards the "
                       f"average as a regressor's is)")
        if chk.loc[mdl, "calibration"] == "fails":
            why.append(f"{_calibration_reason(mdl, calib, joint)}")
        if why:
            warnings.append(f"WARNING: {mdl} has the lowest {' and '.join(metric_names)}, but " + "; and ".join(why)
                            + f". Do not read its {' or '.join(metric_names)} as the better model.")
    if ok:
        trusted = min(ok, key=lambda mdl: means[mdl])
        overall = means.idxmin()
        text = (f"Trust {trusted}: it passes the spectrum check (the spread of its values over events matches the "
                f"truth's) and {'is calibrated (its uncertainty ranges hold the truth as often as they claim)' if chk.loc[trusted, 'calibration'] == 'passes' else 'is not found miscalibrated' if chk.loc[trusted, 'calibration'] == 'not resolved' else 'gives single values (no uncertainty to check)'}, ")
        rows = leads[(leads["metric"] == score) & (leads["best"] == trusted)] if len(leads) else leads
        if trusted == overall:
            text += f"and it has the lowest {word}, the score that rewards accuracy and honest uncertainty together"
            if len(rows):
                unresolved = list(rows.loc[rows["verdict"] != "yes", "other"])
                text += (" (its lead over every other model is resolved)" if not unresolved else
                         f" (but its lead over {_and(unresolved)} is not resolved: the test set cannot tell them apart)")
        else:
            text += (f"and has the lowest {word} among the models that pass both checks ({overall} has a lower {word} "
                     f"but fails a check)")
        failing = [mdl for mdl in means.index if mdl not in ok]
        if failing:
            text += f". Do not trust {_and(failing)}: {'it fails' if len(failing) == 1 else 'they fail'} the spectrum or calibration check"
        text += "."
    else:
        text = (f"No model can be trusted as it is: every model fails the spectrum check or is miscalibrated. "
                f"The lowest {word} is {means.idxmin()}'s; read the tables below for what each model gets wrong.")
    text += " (The terms are explained in the glossary at the end of the report.)"
    return text, warnings


# ---------------------------------------------------------------------------------------------
# the report as one call
# ---------------------------------------------------------------------------------------------
@dataclass
class ProtocolResult:
    """What the protocol report says, the same in Python, ``protocol.json`` and ``report.html``.

    bottom_line : the opening paragraph (which model to trust and why); warnings : the RMSE / MAE
    leader warnings (also at the start of ``bottom_line``'s display); sentences : the answers per
    metric and sampler; table : the protocol table (one row per model and dimension, bootstrap
    intervals); leads, calibration, joint_calibration, checks : the verdict tables; notes;
    provenance : version, date, inputs, estimators, settings; values : {model: EventValues};
    replicates : the bootstrap replicates of the table; glossary : :data:`GLOSSARY`.
    """

    bottom_line: str
    warnings: list[str]
    sentences: list[str]
    table: pd.DataFrame
    leads: pd.DataFrame
    calibration: pd.DataFrame
    joint_calibration: pd.DataFrame
    checks: pd.DataFrame
    notes: list[str]
    provenance: dict
    values: dict[str, EventValues] = field(repr=False)
    replicates: dict[str, np.ndarray] = field(repr=False)
    glossary: dict[str, str] = field(default_factory=lambda: dict(GLOSSARY))

    @property
    def opening(self) -> list[str]:
        """The report's first lines: the warnings, then the bottom line."""
        return [*self.warnings, self.bottom_line]


@dataclass(frozen=True)
class Settings:
    """The protocol's settings, checked (:func:`settings`)."""

    level: float = 0.95
    n_resamples: int = 1000
    seed: int = 0
    crps_estimator: str = "nrg"
    spectrum_resamples: int = 0
    bins: int = 20


def settings(*, level: float = 0.95, n_resamples: int = 1000, seed: int = 0, crps_estimator: str = "nrg",
             spectrum_resamples: int = 0, bins: int = 20) -> Settings:
    """The settings, each checked: a ValueError naming the argument for a bad one.

    level in (0, 1); n_resamples an integer >= 100 (the bootstrap's percentile intervals need
    them; Efron and Tibshirani (1993), ch. 13); seed an integer >= 0; crps_estimator one of
    "nrg", "fair", "pwm"; spectrum_resamples >= 0; bins >= 2.

    >>> settings(n_resamples=-1)
    Traceback (most recent call last):
    ...
    ValueError: n_resamples: expected an integer >= 100, got -1
    """
    if crps_estimator not in CRPS_ESTIMATORS:
        raise ValueError(f"crps_estimator: expected one of {CRPS_ESTIMATORS}, got {crps_estimator!r}")
    return Settings(level_value(level), positive_int(n_resamples, "n_resamples", 100), seed_value(seed), crps_estimator,
                    positive_int(spectrum_resamples, "spectrum_resamples", 0), positive_int(bins, "bins", 2))


def provenance(inputs: Inputs, opts: Settings) -> dict[str, object]:
    """Version, date, inputs (shape and kind) and the estimators and settings of one report.

    The date is UTC in the RFC 3339 (2002) form of ISO 8601 (``2025-01-31T12:00:00+00:00``); the
    command line (``command``) and the files' SHA-256 digests are added by the CLI.

    >>> src = ArraySource("flow", (4, 3), lambda rows: iter([np.zeros((4, 3))]))
    >>> prov = provenance(Inputs(np.arange(4.0), "truth", {"flow": (src, "samples")}), Settings())
    >>> prov["inputs"]["flow"], prov["seed"], prov["energy_score"][:12]
    ({'shape': [4, 3], 'kind': 'samples'}, 0, 'not computed')
    """
    files = {name: {"shape": list(src.shape), "kind": kind} for name, (src, kind) in inputs.models.items()}
    for name, info in inputs.sources.items():
        if name in files or name == "truth":
            files[name] = {**files.get(name, {}), **info}
    return {
        "posteval_version": _version(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "inputs": files,
        "crps_estimator": opts.crps_estimator,
        "energy_score": (f"fair (unbiased) estimator; E||X - X'|| from m x {ENERGY_SHIFTS} random pairs of distinct "
                         f"draws (x_i, x_(i+k)), k = 1..{ENERGY_SHIFTS}, of the draws in a seeded random order "
                         f"(independent of the order given), for m > {ENERGY_SHIFTS + 1}, all pairs otherwise; "
                         f"a point prediction's (and a single draw's) is its Euclidean error")
        if inputs.truth.ndim == 2 else "not computed: one dimension (it equals the CRPS)",
        "point_value_rule": POINT_RULE,
        # the keys of 0.2.0 kept (readers of protocol.json); the options are --level, --n-resamples, --spectrum-resamples
        "ci": opts.level, "n_boot": opts.n_resamples, "seed": opts.seed, "bins": opts.bins,
        "n_perm": opts.spectrum_resamples,
        "multiplicity": "Holm over all leads of the report (one family of the claims table's rule)",
        "spectrum_check": f"fails when the chi-square p-value is below {SPECTRUM_ALPHA} on some dimension",
    }


def evaluate_inputs(inputs: Inputs, opts: Settings, *, max_gb: float | None = MAX_GB,
                    progress: bool = False) -> ProtocolResult:
    """The report of checked :class:`Inputs` (the CLI's and :func:`evaluate_models`' common step).

    Checks (:func:`check_inputs`), scores (:func:`score_models`), builds the table
    (:func:`~posteval.metrics.report.protocol_table`), decides the leads and calibration
    (:mod:`~posteval.metrics.ranking`, Holm (1979)) and writes the sentences and the bottom line.
    References: as :func:`evaluate_models`.

    >>> rng = np.random.default_rng(1)
    >>> draws = rng.normal(size=(50, 8))
    >>> src = ArraySource("flow", draws.shape, lambda rows: iter([draws]))
    >>> result = evaluate_inputs(Inputs(rng.normal(size=50), "truth", {"flow": (src, "samples")},
    ...                                 dim_names=["x"]), Settings(n_resamples=100))
    >>> result.table["model"].tolist()
    ['flow']
    """
    check_inputs(inputs, max_gb=max_gb)
    energy = inputs.truth.ndim == 2
    values = score_models(inputs, crps_estimator=opts.crps_estimator, seed=opts.seed, energy=energy, progress=progress)
    table, reps = protocol_table(values, inputs.truth, dim_names=inputs.dim_names, bins=opts.bins,
                                 spectrum_resamples=opts.spectrum_resamples, level=opts.level,
                                 n_resamples=opts.n_resamples, seed=opts.seed, replicates=True)
    levels = np.sort(DEFAULT_LEVELS)
    notes = []
    if opts.spectrum_resamples == 0:
        table = table.drop(columns=["chi2_pvalue_exchange"])
        notes.append("chi2_pvalue_exchange is not computed (--spectrum-resamples 0): give --spectrum-resamples 1000 for the exchange "
                     "p-value of the spectrum; chi2_pvalue is the asymptotic chi-square p-value.")
    if not inputs.calibration:
        table = table.drop(columns=[c for c in table.columns if c.startswith("coverage_error_conformal")])
        notes.append("coverage_error_conformal is not computed: no --calibration data was given.")
    if any(k == "points" for _, k in inputs.models.values()):
        notes.append("A point predictor has no raw coverage error (–): it has no predictive distribution; give "
                     "--calibration data for its split-conformal coverage.")
    leads = ranking.leads(table, reps, level=opts.level)
    samplers = {n: v for n, v in values.items() if v.kind == "samples"}
    calib, joint = ranking.calibration_verdicts(table, samplers, levels, level=opts.level,
                                                n_resamples=opts.n_resamples, seed=opts.seed)
    if len(values) == 1:
        notes.append("One model: there is no lead to resolve.")
    if not samplers:
        notes.append("No sampler: there is no raw coverage to judge.")
    for name, v in samplers.items():
        if v.spread_var is not None and not np.all(np.isfinite(v.spread_var)):
            notes.append(f"The spread-skill ratio of {name} is not computed: its squared spreads leave the float64 "
                         f"range (values near 1e154 or beyond); rescale the data for it.")
    said = sentences(leads, calib, joint, inputs.dim_names)
    text, warnings = bottom_line(table, leads, calib, joint)
    return ProtocolResult(text, warnings, said, table, leads, calib, joint, checks(table, calib, joint), notes,
                          provenance(inputs, opts), values, reps)


def _array_source(arr: np.ndarray, where: str) -> ArraySource:
    return ArraySource(where, arr.shape, lambda rows: (arr[a : a + rows] for a in range(0, len(arr), rows)))


def evaluate_models(name_to_samples: Mapping[str, ArrayLike], truth: ArrayLike, *,
                    dim_names: Sequence[str] | None = None, kinds: Mapping[str, str] | None = None,
                    calibration: Mapping[str, tuple[ArrayLike, ArrayLike]] | None = None, level: float = 0.95,
                    n_resamples: int = 1000, seed: int = 0, crps_estimator: str = "nrg",
                    spectrum_resamples: int = 0, bins: int = 20, max_gb: float | None = MAX_GB,
                    progress: bool = False) -> ProtocolResult:
    """The protocol report of ``protocol-report``, from arrays: the same :class:`ProtocolResult`
    (bottom line, warnings, table, verdicts, sentences, notes, provenance) the CLI writes.

    Parameters
    ----------
    name_to_samples : {model name: samples (n, m[, d]) or point predictions (n[, d])}
    truth : (n,) or (n, d), n >= 2, varying in every dimension
    dim_names : names of the d dimensions (default ``dim0``, ...)
    kinds : {model name: "points" or "samples"} for an (n, 1) array beside a 1-D truth
    calibration : {point model: (cal_pred, cal_truth)} for split-conformal coverage
    level, n_resamples, seed, crps_estimator, spectrum_resamples, bins : as ``protocol-report``'s
        options (:func:`settings` checks them)
    max_gb : the most GiB of float64 values to score (None: no limit)

    Every argument is checked before any scoring (a ValueError naming it). The numbers are those
    of :func:`~posteval.metrics.report.protocol_table`; no number depends on the order of the draws.

    Why this size: one keyword per option of ``protocol-report``, with the same names, so that the
    Python call and the command line say the same thing and a user moves between them by name.

    References: Gneiting and Raftery (2007), *J. Amer. Statist. Assoc.* 102, eqs. 21-22 (CRPS,
    energy score); Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69 (calibration);
    Holm (1979), *Scand. J. Statist.* 6 (the leads); Pearson (1900) (the spectrum's chi-square).

    Example: a regressor of the posterior mean has the lowest RMSE but a collapsed spectrum.

    >>> rng = np.random.default_rng(0)
    >>> x = rng.normal(size=400)
    >>> truth = x + rng.normal(size=400)
    >>> result = evaluate_models({"regressor": x, "sampler": x[:, None] + rng.normal(size=(400, 16))}, truth,
    ...                          n_resamples=200)
    >>> print(result.warnings[0][:60])
    WARNING: regressor has the lowest RMSE and MAE, but its spec
    >>> print(result.bottom_line[:14])
    Trust sampler:
    """
    opts = settings(level=level, n_resamples=n_resamples, seed=seed, crps_estimator=crps_estimator,
                    spectrum_resamples=spectrum_resamples, bins=bins)
    if max_gb is not None and (isinstance(max_gb, bool) or not isinstance(max_gb, (int, float)) or not max_gb > 0):
        raise ValueError(f"max_gb: expected a positive number of GiB or None, got {max_gb!r}")
    if not isinstance(name_to_samples, Mapping) or not name_to_samples:
        raise ValueError("name_to_samples: expected a non-empty mapping {model name: predictions}")
    t = finite_array(truth, "truth", (1, 2))
    d = 1 if t.ndim == 1 else t.shape[1]
    names = [f"dim{j}" for j in range(d)] if dim_names is None else [str(v) for v in dim_names]
    if len(names) != d or len(set(names)) != d:
        raise ValueError(f"dim_names: expected {d} distinct names, got {list(names)!r}")
    kinds = dict(kinds or {})
    unknown = sorted(set(kinds) - set(name_to_samples))
    if unknown or any(k not in ("points", "samples") for k in kinds.values()):
        raise ValueError(f"kinds: expected {{model name: 'points' or 'samples'}} for models among "
                         f"{list(name_to_samples)}, got {kinds!r}")
    inputs = Inputs(t, "truth", {}, dim_names=names)
    for name, pred in name_to_samples.items():
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"name_to_samples: model names must be non-empty strings, got {name!r}")
        where = f"name_to_samples[{name!r}]"
        arr = finite_array(pred, where, (1, 2, 3))
        arr = arr.reshape(unit_axis_view(arr.shape, t.shape))
        inputs.models[name] = (_array_source(arr, where), model_kind(arr.shape, where, t.shape, "truth",
                                                                     kinds.get(name), name))
    for name, pair in (calibration or {}).items():
        if name not in inputs.models or inputs.models[name][1] != "points":
            raise ValueError(f"calibration: {name!r} is not a point model among name_to_samples")
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(f"calibration[{name!r}]: expected (cal_pred, cal_truth)")
        inputs.calibration[name] = (real_array(pair[0], f"calibration[{name!r}][0]"),
                                    real_array(pair[1], f"calibration[{name!r}][1]"))
    return evaluate_inputs(inputs, opts, max_gb=max_gb, progress=progress)
