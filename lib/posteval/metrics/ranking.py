"""Which model is best on each metric, whether its lead is resolved, and whether each sampler is
calibrated: the verdicts of the protocol report, from its paired bootstrap over test events.

Leads. For a metric and dimension let b be the model with the lowest estimate. For every other
model o the difference D = metric(b) - metric(o) <= 0 has bootstrap replicates D*_r (the same
resampled events for every model, :func:`~posteval.metrics.report.protocol_report` with
``replicates=True``). Its interval is the percentile interval of D*, its two-sided p-value
p = 2 Phi(-|D| / se) with se the standard deviation of D* (a normal approximation, which unlike
the rank p-value of the replicates resolves p-values below 2 / (n_resamples + 1)), and the p-values of
all leads in one report are adjusted by Holm's step-down method (Holm 1979), so that the chance
of any false "yes" among them is at most 1 - level. The verdict is "yes" when the interval lies
below zero and the Holm-adjusted p is below 1 - level, else "not resolved".

Calibration. A sampler's signed coverage deviation (:mod:`~posteval.metrics.calibration`: the
mean over levels of its coverage minus that of an exact sampler with the same m draws) decides
"calibrated" (within the margin an exact sampler of the same n and m needs), "under-covers"
(intervals too narrow), "over-covers" (too wide) or "not resolved"; its raw coverage error is
shown beside the noise floor of an exact sampler of the same n and m, and over all dimensions
the TARP error (which sees correlations) and the spread-skill ratio.

Reference: S. Holm, "A simple sequentially rejective multiple test procedure",
Scand. J. Statist. 6 (1979) 65-70.

Example
-------
>>> from posteval.metrics.verdicts import holm   # the one Holm adjustment of the package
>>> holm([0.01, 0.04, 0.03])
array([0.03, 0.06, 0.06])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from .._deprecation import deprecated_alias, renamed_keywords
from .calibration import signed_coverage_from_inside, spread_summary, tarp_indicators, tarp_summary
from .coverage import coverage_noise_floor
from .report import EventValues
from .uncertainty import _ci, bootstrap_means, percentile_interval
from .verdicts import holm, verdict

LOWER_IS_BETTER = ("crps", "energy_score", "rmse", "mae")


def _normal_pvalue(diff: float, reps: np.ndarray) -> float:
    se = float(np.std(reps, ddof=1))
    if se == 0.0:
        return 1.0 if diff == 0.0 else 0.0
    return float(2.0 * stats.norm.sf(abs(diff) / se))


@renamed_keywords(ci="level")
def leads(table: pd.DataFrame, replicates: Mapping[str, np.ndarray], *, level: float = 0.95,
          metrics: Sequence[str] = LOWER_IS_BETTER) -> pd.DataFrame:
    """One row per (metric, dimension, other model): the best model's lead over it.

    ``table`` and ``replicates`` as returned by ``protocol_report(..., level=level, replicates=True)``.
    The energy score, one value per model over all dimensions, is compared once (dimension "all").
    Columns: metric, dimension, best, other, difference (best - other), difference_lo, difference_hi,
    p, p_holm, verdict.

    Per metric and dimension, b = argmin of the estimates; for every other model o, with D =
    metric(b) - metric(o) and D*_r its replicates on the same resampled events:

        [lo, hi] = the (1 - level)/2 and (1 + level)/2 percentiles of D*,
        p = 2 Phi(-|D| / sd(D*)),   p_holm = Holm's adjustment over every row of the report,
        verdict = "yes" if hi < 0 and p_holm < 1 - level, else "not resolved".

    Reference: Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6 (sd(D*) as the
    standard error) and ch. 13 (percentile intervals); Holm (1979), *Scand. J. Statist.* 6, 65.

    Example: an exact sampler of the posterior N(mu, 1) against one half as wide:

    >>> from posteval.metrics.report import protocol_report
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=300); truth = mu + rng.normal(size=300)
    >>> draws = {"exact": mu[:, None] + rng.normal(size=(300, 20)),
    ...          "narrow": mu[:, None] + 0.5 * rng.normal(size=(300, 20))}
    >>> table, reps = protocol_report(draws, truth, level=0.95, n_resamples=200, replicates=True)
    >>> lead = leads(table, reps, metrics=("crps",))
    >>> lead[["best", "other", "verdict"]].values.tolist(), round(float(lead["difference"].iloc[0]), 3)
    ([['exact', 'narrow', 'yes']], -0.046)
    """
    level = _ci(level)
    rows = []
    for metric in metrics:
        if metric not in table or metric not in replicates:
            continue
        groups = [("all", table.drop_duplicates("model"))] if metric == "energy_score" else list(table.groupby("dimension", sort=False))
        for dim, group in groups:
            idx = group.index.to_numpy()
            est = group[metric].to_numpy(dtype=float)
            if len(idx) < 2 or not np.all(np.isfinite(est)):
                continue
            b = int(np.argmin(est))
            for o in range(len(idx)):
                if o == b:
                    continue
                rep = replicates[metric][:, idx[b]] - replicates[metric][:, idx[o]]
                diff = float(est[b] - est[o])
                lo, hi = (float(v) for v in percentile_interval(rep, level))
                rows.append({"metric": metric, "dimension": dim, "best": group["model"].iloc[b],
                             "other": group["model"].iloc[o], "difference": diff, "difference_lo": lo, "difference_hi": hi,
                             "p": _normal_pvalue(diff, rep)})
    out = pd.DataFrame(rows, columns=["metric", "dimension", "best", "other", "difference", "difference_lo",
                                     "difference_hi", "p"])
    out["p_holm"] = holm(out["p"].to_numpy()) if len(out) else []
    alpha = 1.0 - level
    out["verdict"] = [
        "yes" if verdict(r.difference_lo, r.difference_hi, direction=-1) == "yes" and r.p_holm < alpha else "not resolved"
        for r in out.itertuples()
    ]
    return out


@renamed_keywords(ci="level", n_boot="n_resamples")
def calibration_verdicts(table: pd.DataFrame, samplers: Mapping[str, EventValues], levels_sorted: np.ndarray, *,
                level: float = 0.95, n_resamples: int = 1000, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The calibration of each sampler (``samplers`` {model: EventValues}) of one report, with its verdicts
    (named apart from the module :mod:`posteval.metrics.calibration`; ``calibration`` before 0.3.0).

    Per model and dimension: the signed coverage deviation D (:func:`~posteval.metrics.calibration.signed_coverage`:
    mean over the levels of coverage minus an exact m-draw sampler's, with its event interval,
    its margin and its verdict "calibrated", "under-covers", "over-covers" or "not resolved"; the
    samples of a report are one fixed model, so one "seed" suffices), and beside it the raw
    coverage error (maximum |coverage - nominal|) and the noise floor q95 of an exact sampler's.
    Per model over all dimensions: the TARP error with its interval, noise floor and verdict,
    and the spread-skill ratio with its interval (when the values carry them).

    With levels a_1..a_L, c_l the fraction of events whose central interval at a_l holds the truth
    and p_m(a) = #{k = 0..m : |2k/m - 1| <= a} / (m + 1) the coverage of an exact sampler with m
    draws (the truth's rank uniform on 0..m):

        D = mean_l (c_l - p_m(a_l)),   raw coverage error = max_l |c_l - a_l|,
        "calibrated" if |D| + half-width <= margin, "under-covers" if hi < 0, "over-covers" if lo > 0;

    TARP error max_alpha |ECP(alpha) - alpha|; spread-skill SSR = sqrt((1 + 1/m) mean_i s_i^2 /
    mean_i (xbar_i - y_i)^2) (see :mod:`~posteval.metrics.calibration`).

    Reference: Talts et al. (2018), "Validating Bayesian inference algorithms with simulation-based
    calibration", arXiv:1804.06788 (the uniform rank); Gneiting, Balabdaoui and Raftery (2007),
    *J. R. Statist. Soc. B* 69, 243 (calibration, under- and overdispersion); Lemos et al. (2023),
    ICML (TARP); Fortin et al. (2014), *J. Hydrometeor.* 15, 1708 (spread-skill).

    Example: the samplers of :func:`leads`' example; the one half as wide under-covers:

    >>> from posteval.metrics import DEFAULT_LEVELS
    >>> from posteval.metrics.report import event_values, protocol_report
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=300); truth = mu + rng.normal(size=300)
    >>> draws = {"exact": mu[:, None] + rng.normal(size=(300, 20)),
    ...          "narrow": mu[:, None] + 0.5 * rng.normal(size=(300, 20))}
    >>> table = protocol_report(draws, truth, level=0.95, n_resamples=200)
    >>> samplers = {name: event_values(d, truth) for name, d in draws.items()}
    >>> per_dim, joint = calibration_verdicts(table, samplers, np.sort(DEFAULT_LEVELS), n_resamples=200)
    >>> per_dim[["model", "verdict"]].values.tolist()
    [['exact', 'calibrated'], ['narrow', 'under-covers']]
    """
    rows, joint = [], []
    floors: dict[tuple[int, int], float] = {}
    # one paired bootstrap of the events for every sampler's TARP indicators and spread terms
    blocks = {}
    for model, v in samplers.items():
        if v.credibility is not None:
            blocks[(model, "tarp")] = tarp_indicators(v.credibility)
        if v.spread_var is not None:
            blocks[(model, "spread")] = np.stack([v.spread_var, v.spread_err2], axis=1)
    reps = dict(zip(blocks, bootstrap_means(list(blocks.values()), n_resamples=n_resamples, seed=seed))) if blocks else {}
    dims = list(dict.fromkeys(table["dimension"]))
    for model, v in samplers.items():
        n, m = v.raw_codes.shape[0], int(v.m)
        if (n, m) not in floors:
            floors[(n, m)] = coverage_noise_floor(n, m, levels_sorted, seed=seed).q95
        for j, dim in enumerate(dims):
            inside = (v.raw_codes[:, j][:, None] <= np.arange(levels_sorted.size)[None, :]).astype(float)
            sc = signed_coverage_from_inside(inside[None], m, levels_sorted, level=level, min_seeds=1)
            row = table[(table["model"] == model) & (table["dimension"] == dim)].iloc[0]
            rows.append({"model": model, "dimension": dim, "m": m, "coverage_deviation": sc.deviation,
                         "coverage_deviation_lo": sc.lo, "coverage_deviation_hi": sc.hi, "margin": sc.margin,
                         "verdict": sc.verdict, "coverage_error_raw": float(row["coverage_error_raw"]),
                         "coverage_error_raw_lo": float(row.get("coverage_error_raw_lo", np.nan)),
                         "coverage_error_raw_hi": float(row.get("coverage_error_raw_hi", np.nan)),
                         "noise_floor_q95": floors[(n, m)]})
        out = {"model": model}
        if v.credibility is not None:
            tc = tarp_summary(v.credibility, m, n_resamples=n_resamples, level=level, seed=seed, replicates=reps[(model, "tarp")])
            out.update({"tarp_error": tc.error, "tarp_error_lo": tc.error_lo, "tarp_error_hi": tc.error_hi,
                        "tarp_noise_floor": tc.noise_floor, "tarp_verdict": tc.verdict})
        if v.spread_var is not None:
            ss = spread_summary(v.spread_var, v.spread_err2, n_resamples=n_resamples, level=level, seed=seed,
                                replicates=reps[(model, "spread")])
            out.update({"spread_skill": ss.ratio, "spread_skill_lo": ss.lo, "spread_skill_hi": ss.hi})
        joint.append(out)
    columns = ["model", "dimension", "m", "coverage_deviation", "coverage_deviation_lo", "coverage_deviation_hi",
               "margin", "verdict", "coverage_error_raw", "coverage_error_raw_lo", "coverage_error_raw_hi",
               "noise_floor_q95"]
    return pd.DataFrame(rows, columns=columns), pd.DataFrame(joint)


# the name before 0.3.0, deprecated (issue 40; it shadowed the module posteval.metrics.calibration): removed in 0.4.0
calibration = deprecated_alias(calibration_verdicts, "calibration")
