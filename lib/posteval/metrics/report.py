"""The protocol table: pointwise errors, CRPS, spectrum test and coverage of several models,
optionally with bootstrap intervals over events.

Two steps, so that large inputs can be scored chunk by chunk: :func:`event_values` reduces one
model's predictions on some events to what the protocol needs per event (its point value, CRPS,
level codes of its central intervals, energy score), :func:`concat_event_values` joins chunks,
and :func:`protocol_table` turns the per-event values of several models into the table (spectrum,
coverage errors, paired bootstrap intervals). :func:`protocol_report` is both steps at once.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import sparse

from .._deprecation import renamed_keywords
from ._validation import (DEFAULT_LEVELS, check_finite_result, finite_array, level_value, levels_array, order_free_draws,
                          positive_int, power_of_two_scale, rescaled, real_array, samples_truth, seed_value)
from .calibration import spread_terms, tarp_credibility
from .coverage import conformal_scores, conformal_thresholds, pit
from .intervals import percentile_bounds
from .scores import ENERGY_ESTIMATORS, _energy_scaled, _estimator, crps_ensemble
from .spectrum import MAX_BINS, spectrum_test
from .uncertainty import bootstrap_means

INTERVAL_METRICS = ("rmse", "mae", "crps", "coverage_error_raw", "coverage_error_conformal")


def _level_codes(score: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """For each event the first (sorted) level whose threshold covers its score (len = none):
    the coverage at level l is then the fraction of codes <= l."""
    return np.searchsorted(thresholds, score, side="left")


def _coverage_error_from_codes(hist: np.ndarray, levels_sorted: np.ndarray) -> np.ndarray:
    """Coverage error from histograms (..., L + 1) of level codes."""
    cov = np.cumsum(hist, axis=-1)[..., :-1] / hist.sum(axis=-1, keepdims=True)
    return np.abs(cov - levels_sorted).max(axis=-1)



@dataclass(frozen=True)
class EventValues:
    """What the protocol needs of one model on each of n test events (see :func:`event_values`).

    kind : "samples" or "point"; m : samples per event (1 for a point prediction);
    point (n, d) : its one value per event (a seeded random draw, or the sample mean); crps (n, d);
    raw_codes (n, d) or None : per event, the index of the first sorted level whose central
    sample interval holds the truth (len(levels) when none does; samplers only);
    conformal_codes (n, d) or None : the same for split-conformal intervals (given calibration);
    energy (n,) or None : energy score over all d dimensions (when asked);
    credibility (n,) or None : TARP credibility (samplers, given reference points);
    spread_var, spread_err2 (n,) or None : the spread-skill terms (samplers with m >= 2, when asked; NaN
    where the squared spreads leave the float64 range, e.g. draws near 1e200: the report then leaves
    the spread-skill ratio out and says so).
    """

    kind: str
    m: int
    point: np.ndarray
    crps: np.ndarray
    raw_codes: np.ndarray | None = None
    conformal_codes: np.ndarray | None = None
    energy: np.ndarray | None = None
    credibility: np.ndarray | None = None
    spread_var: np.ndarray | None = None
    spread_err2: np.ndarray | None = None

    @property
    def n(self) -> int:
        """The number of events."""
        return self.point.shape[0]


def _back(scaled_value: float, scale: float, name: str) -> float:
    """A metric computed on data divided by ``scale``, in the data's units (an error on overflow)."""
    return float(rescaled(np.asarray(scaled_value), scale, name))


def _sorted_levels(levels: ArrayLike) -> np.ndarray:
    return np.sort(levels_array(levels))


def event_values(pred: ArrayLike, truth: ArrayLike, *, name: str = "pred", levels: ArrayLike = DEFAULT_LEVELS,
                 point_from: str = "sample",
                 crps_estimator: str = "nrg", energy: bool = False, energy_shifts: int | None = None,
                 calibration: tuple[np.ndarray, np.ndarray] | None = None, seed: int = 0,
                 tarp: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None, spread: bool = False,
                 first_event: int = 0) -> EventValues:
    """Per-event values of one model: samples ``(n, m[, d])`` or points ``(n[, d])`` against truth ``(n[, d])``.

    Why this size: each keyword switches one part of the protocol on or sets its estimator
    (the report's command-line options, one for one); every one has a default that scores a plain sampler.

    No value depends on the order of a sampler's draws within an event: the draws are first put
    in the order of :func:`~posteval.metrics._validation.order_free_draws` (sorted, then permuted
    at random by ``seed`` and the event's index ``first_event + i``; give a chunk's start as
    ``first_event`` so that chunks agree with one call).

    CRPS per event and dimension (``crps_estimator`` for samples; the absolute error of a point
    mass), the point value (``point_from``: "sample" = one draw chosen at random per event by
    ``seed`` and the event's index, whatever the order of the draws, "mean" = the sample mean),
    the raw coverage codes ``searchsorted(levels, |2 PIT - 1|)`` of a sampler, the split-conformal
    codes given ``calibration`` = (cal_pred, cal_truth), and with ``energy`` the energy score
    over the d dimensions (the unbiased "fair" estimator, all pairs or ``energy_shifts`` seeded random
    pairs per draw, as :func:`~posteval.metrics.scores.energy_score_ensemble`; with one draw per event, and for a
    point prediction, the Euclidean error). A sampler
    also gets its TARP credibility given ``tarp`` = (centre, scale, reference points of these
    events) (:func:`~posteval.metrics.calibration.tarp_credibility`) and with ``spread`` its
    spread-skill terms (:func:`~posteval.metrics.calibration.spread_terms`).
    Events are independent, so values of consecutive chunks of events concatenate
    (:func:`concat_event_values`) to the values of all of them; the conformal codes need every
    test event at once (their tie-breaking draws one stream).

    Formulas, per event and dimension: CRPS(F, y) = E|X - y| - 1/2 E|X - X'| (|x - y| for a point
    mass); the raw code is #{l : a_l < |2 PIT - 1|} over the sorted levels a_l, with
    PIT = #{x_j < y} / m + #{x_j = y} / (2 m), so that the central interval of level a_l holds the
    truth exactly when code <= l; the energy score is E||X - y|| - 1/2 E||X - X'||.

    References: Gneiting and Raftery (2007), *J. Amer. Statist. Assoc.* 102, eq. 21 (CRPS) and
    eq. 22 (energy score); Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69 (PIT
    and calibration); Lei et al. (2018), *J. Amer. Statist. Assoc.* 113 (split conformal); Lemos et
    al. (2023), ICML (TARP); Fortin et al. (2014), *J. Hydrometeor.* 15 (spread-skill).

    Example
    -------
    >>> v = event_values([[0.0, 2.0], [1.0, 3.0]], [1.0, 0.0], levels=[0.5, 0.9])
    >>> v.kind, v.m, v.crps.tolist()  # E|X - y| - |x_1 - x_2| / 4: 1 - 0.5 and 2 - 0.5
    ('samples', 2, [[0.5], [1.5]])
    >>> v.raw_codes.tolist()  # |2 PIT - 1| = 0 (inside both intervals), 1 (inside neither: code 2)
    [[0], [2]]
    >>> event_values([0.5, 1.0], [1.0, 0.0]).crps.tolist()  # a point prediction: |x - y|
    [[0.5], [1.0]]
    """
    if point_from not in ("sample", "mean"):
        raise ValueError(f"point_from: expected 'sample' or 'mean', got {point_from!r}")
    t = finite_array(truth, "truth", (1, 2))
    t2 = t[:, None] if t.ndim == 1 else t
    lv_sorted = _sorted_levels(levels)
    seed = seed_value(seed)
    arr = real_array(pred, name)
    if arr.ndim not in (t.ndim, t.ndim + 1):
        expected = "(n,) points or (n, m) samples" if t.ndim == 1 else "(n, d) points or (n, m, d) samples"
        raise ValueError(f"{name}: expected {expected} for truth of shape {t.shape}, got shape {arr.shape}")
    first_event = positive_int(first_event, "first_event", minimum=0)
    is_samples = arr.ndim == t.ndim + 1
    s = arr if is_samples else arr[:, None] if t.ndim == 1 else arr[:, None, :]
    s, _, _ = samples_truth(s, t, (name, "truth"))
    if energy and is_samples:
        est = "fair" if s.shape[1] >= 2 else "nrg"  # unbiased; one draw has no pairs (then |x - y|)
        _estimator(est, ENERGY_ESTIMATORS, s.shape[1])
        if energy_shifts is not None and not 1 <= positive_int(energy_shifts, "energy_shifts") < s.shape[1]:
            raise ValueError(f"energy_shifts: expected 1 <= energy_shifts <= m - 1 = {s.shape[1] - 1}, got {energy_shifts!r}")
    s = order_free_draws(s, seed, first_event)  # no value below depends on the order of the draws
    c = power_of_two_scale(s, t2)
    point = s[:, 0, :] if point_from == "sample" else c * (s / c).mean(axis=1)
    crps_e = crps_ensemble(s, t2, estimator=crps_estimator) if is_samples else rescaled(np.abs(point / c - t2 / c), c, "crps")
    raw = _level_codes(np.abs(2.0 * pit(s, t2) - 1.0), lv_sorted) if is_samples else None
    conf = None
    if calibration is not None:
        if not isinstance(calibration, (tuple, list)) or len(calibration) != 2:
            got = f"{len(calibration)} items" if isinstance(calibration, (tuple, list)) else type(calibration).__name__
            raise ValueError(f"calibration of {name}: expected a pair (cal_pred, cal_truth), got {got}")
        cal_p, cal_t = calibration
        cal_score, test_score, *_ = conformal_scores(cal_p, cal_t, arr, t, seed=seed)
        q = conformal_thresholds(cal_score.reshape(len(cal_score), -1), lv_sorted)
        conf = np.stack([_level_codes(test_score[:, j], q[:, j]) for j in range(t2.shape[1])], axis=1)
    es = None
    if energy:
        if is_samples:
            es = rescaled(_energy_scaled(s / c, t2 / c, est, energy_shifts, seed, first_event, ordered=True), c,
                          "energy_score")
        else:
            es = np.linalg.norm(point - t2, axis=1)
    cred = var = err2 = None
    if is_samples and tarp is not None:
        centre, scale, refs = tarp
        cred = tarp_credibility(s, t2, np.asarray(refs, dtype=float), centre, scale)
    if is_samples and spread and s.shape[1] >= 2:
        var, err2 = spread_terms(s / c, t2 / c)
        with np.errstate(over="ignore"):
            var, err2 = var * c * c, err2 * c * c
        if not (np.all(np.isfinite(var)) and np.all(np.isfinite(err2))):  # squares beyond float64: not computed
            var, err2 = np.full(len(var), np.nan), np.full(len(var), np.nan)
    return EventValues("samples" if is_samples else "point", s.shape[1], point, crps_e, raw, conf, es, cred, var, err2)


def concat_event_values(parts: Sequence[EventValues]) -> EventValues:
    """The values of consecutive chunks of events of one model, joined along the events.

    Every per-event value depends on its own event only, and the protocol's scores are means over
    events, S = (1/n) sum_i S(F_i, y_i), so the joined chunks give the values (and the table) of
    all events at once (Gneiting and Raftery (2007), *J. Amer. Statist. Assoc.* 102: forecasts are
    ranked by their average score over forecast cases). Raises ValueError for chunks of different kinds or m.

    >>> rng = np.random.default_rng(0)
    >>> samples, truth = rng.normal(size=(100, 8)), rng.normal(size=100)
    >>> joined = concat_event_values([event_values(samples[:60], truth[:60]), event_values(samples[60:], truth[60:])])
    >>> joined.n, bool(np.array_equal(joined.crps, event_values(samples, truth).crps))
    (100, True)
    """
    if not parts:
        raise ValueError("parts: no chunks given")
    first = parts[0]
    for p in parts[1:]:
        if (p.kind, p.m) != (first.kind, first.m):
            raise ValueError(f"parts: chunks of different kinds or m: {(first.kind, first.m)} and {(p.kind, p.m)}")

    def join(attr):
        values = [getattr(p, attr) for p in parts]
        if all(v is None for v in values):
            return None
        if any(v is None for v in values):
            raise ValueError(f"parts: {attr} present in some chunks only")
        return np.concatenate(values, axis=0)

    return EventValues(first.kind, first.m, *(join(f) for f in ("point", "crps", "raw_codes", "conformal_codes", "energy",
                                                                 "credibility", "spread_var", "spread_err2")))


@renamed_keywords(n_perm="spectrum_resamples", ci="level", n_boot="n_resamples")
def protocol_report(
    name_to_samples: Mapping[str, ArrayLike],
    truth: ArrayLike,
    *,
    dim_names: Sequence[str] | None = None,
    levels: ArrayLike = DEFAULT_LEVELS,
    bins: int | ArrayLike = 20,
    point_from: str = "sample",
    calibration: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    crps_estimator: str = "nrg",
    spectrum_resamples: int = 0,
    level: float | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    replicates: bool = False,
    energy: bool = False,
    energy_shifts: int | None = None,
) -> pd.DataFrame | tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The protocol table: one row per model and dimension.

    Why this size: it is the one user-facing entry point of the report, and its keywords are the
    protocol's settings, one per command-line option of ``protocol-report`` (levels, bins, estimators,
    resample counts, seed); all but the inputs are keyword-only with defaults.

    Parameters
    ----------
    name_to_samples : {model name: samples (n, m[, d]) or point predictions (n[, d])}
    truth : (n,) or (n, d)
    dim_names : names of the d dimensions (default ``dim0``, ...)
    levels : nominal coverages of the coverage errors
    bins : spectrum binning (see :func:`~posteval.metrics.spectrum.chi2_spectrum`)
    point_from : "sample" or "mean"
        How a generative model's RMSE/MAE and spectrum are formed: from one draw per event chosen
        at random by ``seed`` and the event's index, whatever the order of the draws ("one
        reconstruction", the default: it has the model's spectrum, and the exchange p-value is
        exact for it; :func:`event_values`) or from the mean of its samples. No value of the
        table depends on the order of the draws within an event.
    calibration : {model name: (cal_pred, cal_truth)}, optional
        Calibration data (points or samples, like the model's predictions) for split-conformal
        coverage; models without it get NaN in ``coverage_error_conformal``.
    crps_estimator : "nrg", "fair" or "pwm" for samplers. A point prediction is a point mass,
        whose CRPS is exactly the absolute error whatever the estimator.
    spectrum_resamples : the exchanges of the spectrum's ``chi2_pvalue_exchange``, passed to
        :func:`~posteval.metrics.spectrum.spectrum_test` as its ``n_resamples`` (0: NaN, the cheap default);
        prefixed like ``crps_estimator``, since ``n_resamples`` here is the bootstrap's
    level : None, or a level such as 0.95: adds ``<metric>_lo`` and ``<metric>_hi`` for rmse, mae,
        crps and both coverage errors, percentile intervals from a paired bootstrap over test
        events (``n_resamples`` resamples, ``seed``; the calibration set is held fixed). Event-sampling
        variance only; training variance needs several seeds. A coverage error is a maximum of
        absolute deviations, biased upward under resampling: for a calibrated model its interval
        can lie above the estimate; judge calibration against
        :func:`~posteval.metrics.coverage.coverage_noise_floor`. The spectrum carries p-values instead
        of an interval.
    seed : seeds the bootstrap, the spectrum exchanges, the conformal tie-breaking, the draw taken
        as a sampler's point value and the energy score's random pairs
    energy, energy_shifts : with ``energy`` (d > 1), a column ``energy_score``: the energy score
        over all d dimensions, the same value on each of the model's rows (and its interval with
        ``level``); ``energy_shifts`` as in :func:`~posteval.metrics.scores.energy_score_ensemble`
    replicates : with ``level``, also return the bootstrap replicates ``{metric: (n_resamples, rows)}`` of
        the interval metrics (rows in table order, the same resampled events for every row), e.g.
        to combine several training seeds (:func:`~posteval.metrics.intervals.replicate_interval`)

    Returns
    -------
    DataFrame with columns model, dimension, rmse, mae, crps, chi2, ndf, chi2_ndf, chi2_pvalue,
    chi2_pvalue_exchange, coverage_error_raw (central sample-quantile intervals of samplers; NaN
    for point estimators), coverage_error_conformal, kind ("samples" or "point"), then the
    interval columns when ``level`` is given. Raw and conformal coverage errors answer different
    questions (is the sampler calibrated / how far is the conformalised interval from nominal,
    which split conformal guarantees on average) and are not to be ranked together.

    Formulas, per model and dimension over the n events: rmse = sqrt(mean_i (x_i - y_i)^2) and
    mae = mean_i |x_i - y_i| of the point values x_i; crps = mean_i CRPS(F_i, y_i); chi2 the binned
    two-sample chi-square of the point values against the truth
    (:func:`~posteval.metrics.spectrum.spectrum_test`); coverage error = max_l |cov(a_l) - a_l|
    with cov(a) = #{i : |2 PIT_i - 1| <= a} / n; intervals are bootstrap percentile intervals.

    References: Gneiting and Raftery (2007), *J. Amer. Statist. Assoc.* 102, eq. 21 (CRPS);
    Gneiting, Balabdaoui and Raftery (2007), *J. R. Statist. Soc. B* 69 (PIT, calibration);
    Pearson (1900), *Phil. Mag.* 50 (chi-square); Efron and Tibshirani (1993), *An Introduction
    to the Bootstrap*, ch. 13 (percentile intervals).

    Example: a point model off by 0.5 everywhere, and a sampler of two draws per event.

    >>> truth = [0.0, 1.0, 2.0, 3.0]
    >>> table = protocol_report({"shifted": [0.5, 1.5, 2.5, 3.5],
    ...                          "sampler": [[0.0, 2.0], [1.0, 1.0], [2.0, 2.0], [2.0, 4.0]]}, truth, bins=2)
    >>> table[["model", "rmse", "mae", "crps", "coverage_error_raw"]]  # crps: (0.5 + 0 + 0 + 0.5) / 4
         model  rmse   mae  crps  coverage_error_raw
    0  shifted   0.5  0.50  0.50                 NaN
    1  sampler   0.5  0.25  0.25                 0.7
    """
    _check_settings(levels=levels, level=level, n_resamples=n_resamples, seed=seed, spectrum_resamples=spectrum_resamples,
                    bins=bins)
    if not isinstance(name_to_samples, Mapping):
        raise ValueError(f"name_to_samples: expected a mapping {{model name: predictions}}, got {type(name_to_samples).__name__}")
    if not name_to_samples:
        raise ValueError("name_to_samples: no models given")
    if calibration is not None and not isinstance(calibration, Mapping):
        raise ValueError(f"calibration: expected a mapping {{model name: (cal_pred, cal_truth)}}, got {type(calibration).__name__}")
    if calibration is not None:
        unknown = sorted(set(calibration) - set(name_to_samples))
        if unknown:
            raise ValueError(f"calibration: no model named {', '.join(map(repr, unknown))} "
                             f"(models: {', '.join(map(repr, name_to_samples))})")
    values = {
        name: event_values(pred, truth, name=f"name_to_samples[{name!r}]", levels=levels, point_from=point_from,
                           crps_estimator=crps_estimator, energy=energy, energy_shifts=energy_shifts,
                           calibration=None if calibration is None else calibration.get(name), seed=seed)
        for name, pred in name_to_samples.items()
    }
    return protocol_table(values, truth, dim_names=dim_names, levels=levels, bins=bins,
                          spectrum_resamples=spectrum_resamples, level=level,
                          n_resamples=n_resamples, seed=seed, replicates=replicates)


@renamed_keywords(n_perm="spectrum_resamples", ci="level", n_boot="n_resamples")
def protocol_table(
    values: Mapping[str, EventValues],
    truth: ArrayLike,
    *,
    dim_names: Sequence[str] | None = None,
    levels: ArrayLike = DEFAULT_LEVELS,
    bins: int | ArrayLike = 20,
    spectrum_resamples: int = 0,
    level: float | None = None,
    n_resamples: int = 1000,
    seed: int = 0,
    replicates: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The table of :func:`protocol_report` from per-event values (:func:`event_values`).

    ``values`` {model: EventValues on the events of ``truth``}, every other argument as in
    :func:`protocol_report` (``levels`` must be the levels the values were coded with). The
    spectrum test of a model uses its point values; the coverage error at the sorted levels
    a_l is max_l |#{codes <= l} / n - a_l|.

    References: as :func:`protocol_report`: Gneiting and Raftery (2007), eq. 21 (CRPS); Gneiting,
    Balabdaoui and Raftery (2007) (coverage of central intervals); Efron and Tibshirani (1993),
    ch. 13 (the paired bootstrap's percentile intervals).

    >>> rng = np.random.default_rng(0)
    >>> samples, truth = rng.normal(size=(200, 16)), rng.normal(size=200)
    >>> table = protocol_table({"flow": event_values(samples, truth)}, truth)
    >>> bool(table.equals(protocol_report({"flow": samples}, truth)))
    True
    """
    if not values:
        raise ValueError("values: no models given")
    _check_settings(levels=levels, level=level, n_resamples=n_resamples, seed=seed, spectrum_resamples=spectrum_resamples,
                    bins=bins)
    if level is not None:
        level = level_value(level)
    if replicates and level is None:
        raise ValueError("replicates: needs level (the bootstrap that makes them)")
    t = finite_array(truth, "truth", (1, 2))
    t2 = t[:, None] if t.ndim == 1 else t
    d = t2.shape[1]
    if dim_names is None:
        dim_names = [f"dim{j}" for j in range(d)]
    if len(dim_names) != d:
        raise ValueError(f"dim_names: {len(dim_names)} names for {d} dimensions")
    lv_sorted = _sorted_levels(levels)
    with_energy = any(v.energy is not None for v in values.values())
    rows, dense, codes, scales = [], [], [], []  # per-event values (divided by the row's scale) for the bootstrap
    for name, v in values.items():
        for row, per_event, k, pair in _model_rows(name, v, t2, dim_names, lv_sorted, with_energy, bins,
                                                   spectrum_resamples, seed):
            rows.append(row)
            dense.append(per_event)
            scales.append(k)
            codes.append(pair)
    table = pd.DataFrame(rows)
    if level is not None:
        table, reps = _with_intervals(table, dense, codes, lv_sorted, level, n_resamples, seed, with_energy, np.array(scales))
        if replicates:
            return table, reps
    return table


def _check_settings(*, levels, level, n_resamples, seed, spectrum_resamples, bins) -> None:
    """The settings of :func:`protocol_report` and :func:`protocol_table`, each checked before any
    scoring: a ValueError naming the argument."""
    levels_array(levels)
    if level is not None:
        level_value(level)
    positive_int(n_resamples, "n_resamples", minimum=2)
    seed_value(seed)
    positive_int(spectrum_resamples, "spectrum_resamples", minimum=0)
    if isinstance(bins, (bool, np.bool_)) or isinstance(bins, (float, str, type(None))):
        raise ValueError(f"bins: expected an integer number of bins or an array of edges, got {bins!r}")
    if isinstance(bins, (int, np.integer)) and not 2 <= bins <= MAX_BINS:
        raise ValueError(f"bins: need between 2 and {MAX_BINS} bins, got {bins}")


def _model_rows(name, v, t2, dim_names, lv_sorted, with_energy, bins, spectrum_resamples, seed):
    """The rows of model `name` in :func:`protocol_table`, one per dimension: ``[(row, per-event
    values divided by the row's scale k, k, (raw codes, conformal codes))]``."""
    n, d = t2.shape
    n_lv = lv_sorted.size
    if v.point.shape != (n, d):
        raise ValueError(f"values[{name!r}]: point values of shape {v.point.shape}, truth is {(n, d)}")
    if with_energy and v.energy is None:
        raise ValueError(f"values[{name!r}]: no energy score while other models have one")
    none = np.full((n, d), -1)
    raw_codes = none if v.raw_codes is None else v.raw_codes
    conf_codes = none if v.conformal_codes is None else v.conformal_codes
    es = v.energy if with_energy else np.zeros(n)
    out = []
    for j in range(d):
        # one exact power-of-two scale per row keeps squares, differences and sums in range
        k = power_of_two_scale(v.point[:, j], t2[:, j], v.crps[:, j], es)
        p_j, t_j = v.point[:, j] / k, t2[:, j] / k
        spec = spectrum_test(p_j, t_j, bins=bins, n_resamples=spectrum_resamples, seed=seed + j)
        err = p_j - t_j
        row = {
            "model": name,
            "dimension": dim_names[j],
            "rmse": _back(np.sqrt(np.mean(err**2)), k, "rmse"),
            "mae": _back(np.mean(np.abs(err)), k, "mae"),
            "crps": _back(np.mean(v.crps[:, j] / k), k, "crps"),
            "chi2": spec.chi2,
            "ndf": spec.ndf,
            "chi2_ndf": spec.chi2_ndf,
            "chi2_pvalue": spec.pvalue,
            "chi2_pvalue_exchange": spec.pvalue_exchange,
        }
        for key, c in (("coverage_error_raw", raw_codes[:, j]), ("coverage_error_conformal", conf_codes[:, j])):
            row[key] = float(_coverage_error_from_codes(np.bincount(c, minlength=n_lv + 1), lv_sorted)) if c[0] >= 0 else np.nan
        row["kind"] = v.kind
        if with_energy:
            row["energy_score"] = _back(np.mean(es / k), k, "energy_score")
        out.append((row, np.stack([err**2, np.abs(err), v.crps[:, j] / k, es / k], axis=1), k,
                    (raw_codes[:, j], conf_codes[:, j])))
    return out


def _with_intervals(table, dense, codes, lv_sorted, level, n_resamples, seed, with_energy, scales):
    """Adds <metric>_lo/_hi from one paired bootstrap of all rows' per-event values; returns the
    table and the replicates {metric: (n_resamples, rows)}."""
    n_rows, n_lv = len(table), lv_sorted.size
    # level codes as one-hot columns: resampled histograms give resampled coverage curves
    n = len(codes[0][0])
    cols, blocks = [], []
    for kind in range(2):
        for r, pair in enumerate(codes):
            c = pair[kind]
            if c[0] >= 0:
                cols.append((kind, r))
                blocks.append(sparse.csr_matrix((np.ones(n), (np.arange(n), c)), shape=(n, n_lv + 1)))
    cov_reps = {k: np.full((n_resamples, n_rows), np.nan) for k in ("coverage_error_raw", "coverage_error_conformal")}
    onehot = sparse.hstack(blocks) if blocks else sparse.csr_matrix((n, 1))
    means, hist = bootstrap_means([np.concatenate(dense, axis=1), onehot], n_resamples=n_resamples, seed=seed)
    means = means.reshape(n_resamples, n_rows, 4)
    reps = {"rmse": np.sqrt(means[:, :, 0]) * scales, "mae": means[:, :, 1] * scales, "crps": means[:, :, 2] * scales}
    if with_energy:
        reps["energy_score"] = means[:, :, 3] * scales
    for key, rep in reps.items():
        check_finite_result(rep, f"{key} replicates")
    if blocks:
        hist = hist.reshape(n_resamples, len(cols), n_lv + 1)
        errors = _coverage_error_from_codes(hist, lv_sorted)
        for i, (kind, r) in enumerate(cols):
            cov_reps["coverage_error_raw" if kind == 0 else "coverage_error_conformal"][:, r] = errors[:, i]
    reps.update(cov_reps)
    out = table.copy()
    for key in (*INTERVAL_METRICS, *(("energy_score",) if with_energy else ())):
        with np.errstate(invalid="ignore"):
            lo, hi = percentile_bounds(reps[key], level)
        out[f"{key}_lo"], out[f"{key}_hi"] = lo, hi
    return out, reps


def replicate_row(name: str, replicate: int, *, untrained: Collection[str] = ("oracle",)) -> str:
    """Row name of one model and replicate in a replicated protocol table (an untrained model has one row).

    One row per training seed of each trained model, so that training variance can be seen
    beside the event-sampling variance (Bouthillier et al. (2021), "Accounting for variance in
    machine learning benchmarks", MLSys 3; :func:`~posteval.metrics.intervals.replicate_interval`).

    >>> replicate_row("flow", 2), replicate_row("oracle", 2)
    ('flow #2', 'oracle')
    """
    return name if name in untrained else f"{name} #{replicate}"
