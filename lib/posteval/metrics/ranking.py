"""Which model is best on each metric, whether its lead is resolved, and whether each sampler is
calibrated: the verdicts of the protocol report, from its paired bootstrap over test events.

Leads. For a metric and dimension let b be the model with the lowest estimate. For every other
model o the difference D = metric(b) - metric(o) <= 0 has bootstrap replicates D*_r (the same
resampled events for every model, :func:`~posteval.metrics.report.protocol_report` with
``replicates=True``). Each lead is the claim "b is lower than o" (a
:class:`~posteval.metrics.claims.Claim` with direction -1), its interval the rule-2 interval of
:func:`~posteval.metrics.intervals.replicate_interval` (D -+ z sd(D*)), and all leads of one report
are one family of :func:`~posteval.metrics.claims.evaluate_claims`: the p, the Holm-adjusted p and
the word are the claims table's (:mod:`~posteval.metrics.verdicts`, Holm 1979), so that the report
and a chapter give the same word on the same data.

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

from .._deprecation import deprecated_alias, renamed_keywords
from .calibration import signed_coverage_from_inside, spread_summary, tarp_indicators, tarp_summary
from .coverage import coverage_noise_floor
from ._validation import level_value
from .claims import Claim, evaluate_claims
from .intervals import Interval, replicate_interval
from .report import EventValues
from .uncertainty import bootstrap_means

LOWER_IS_BETTER = ("crps", "energy_score", "rmse", "mae")


LEAD_COLUMNS = ["metric", "dimension", "best", "other", "difference", "difference_lo", "difference_hi", "p", "p_holm",
                "verdict"]


def _lead_intervals(table: pd.DataFrame, replicates: Mapping[str, np.ndarray], level: float,
                    metrics: Sequence[str]) -> list[tuple[dict, Interval]]:
    """Per (metric, dimension, other model): the lead's row head and the interval of best - other."""
    out = []
    for metric in metrics:
        if metric not in table or metric not in replicates:
            continue
        groups = ([("all", table.drop_duplicates("model"))] if metric == "energy_score"
                  else list(table.groupby("dimension", sort=False)))
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
                iv = replicate_interval([float(est[b] - est[o])], rep[:, None], level=level)
                out.append(({"metric": metric, "dimension": dim, "best": group["model"].iloc[b],
                             "other": group["model"].iloc[o]}, iv))
    return out


def lead_claims(table: pd.DataFrame, replicates: Mapping[str, np.ndarray], *, level: float = 0.95,
                metrics: Sequence[str] = LOWER_IS_BETTER) -> tuple[list[Claim], dict[str, Interval]]:
    """The leads of a report as claims: for every metric, dimension and model o other than the best
    b (lowest estimate), ``Claim("lead_<i>", ..., direction=-1, family="leads")`` on D = metric(b) -
    metric(o), with its interval (:func:`~posteval.metrics.intervals.replicate_interval` of D and
    its bootstrap replicates D*, one seed: D -+ z sd(D*)), ready for
    :func:`~posteval.metrics.claims.evaluate_claims` (``intervals=``).

    Reference: Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6 (sd(D*) as
    the standard error); Holm (1979), *Scand. J. Statist.* 6, 65 (one family: every lead of a report).

    >>> table = pd.DataFrame({"model": ["a", "b"], "dimension": ["x", "x"], "crps": [1.0, 2.0]})
    >>> reps = {"crps": np.array([[1.0, 2.1], [1.1, 1.9], [0.9, 2.0]])}
    >>> claims, ivs = lead_claims(table, reps, metrics=("crps",))
    >>> claims[0].sentence, round(ivs["lead_0"].estimate, 3)
    ('a has a lower crps than b (dimension x)', -1.0)
    """
    return _as_claims(_lead_intervals(table, replicates, level_value(level), metrics))


def _as_claims(leads: list[tuple[dict, Interval]]) -> tuple[list[Claim], dict[str, Interval]]:
    claims, ivs = [], {}
    for i, (head, iv) in enumerate(leads):
        name = f"lead_{i}"
        claims.append(Claim(name, f"{head['best']} has a lower {head['metric']} than {head['other']} "
                                  f"(dimension {head['dimension']})", direction=-1, family="leads",
                            source="protocol report"))
        ivs[name] = iv
    return claims, ivs


@renamed_keywords(ci="level")
def leads(table: pd.DataFrame, replicates: Mapping[str, np.ndarray], *, level: float = 0.95,
          metrics: Sequence[str] = LOWER_IS_BETTER) -> pd.DataFrame:
    """One row per (metric, dimension, other model): the best model's lead over it, decided as a claim
    of the claims table (:func:`lead_claims`, then :func:`~posteval.metrics.claims.evaluate_claims`
    with every lead of the report in one family).

    ``table`` and ``replicates`` as returned by ``protocol_report(..., level=level, replicates=True)``.
    The energy score, one value per model over all dimensions, is compared once (dimension "all").
    Columns: metric, dimension, best, other, difference (best - other), difference_lo, difference_hi,
    p, p_holm, verdict.

    Per metric and dimension, b = argmin of the estimates; for every other model o, with D =
    metric(b) - metric(o) and D*_r its replicates on the same resampled events:

        [lo, hi] = D -+ z_{(1+level)/2} sd(D*)   (replicate_interval: the claim's interval),
        p_yes = Phi(D / sd(D*)) (rejects D >= 0),  p_no = Phi(-D / sd(D*)),  Holm over every word of
        every lead of the report (:func:`~posteval.metrics.verdicts.holm_words`),
        verdict = the claims table's word: "yes" if the adjusted p_yes < 1 - level, "no" (b is higher:
        only for ties) likewise, else "not resolved"; ``p`` and ``p_holm`` are the deciding word's
        p-value before and after the adjustment.

    Changed in issue 41: ``difference_lo`` / ``difference_hi`` are the claim's normal interval (before:
    the percentile interval of D*, which the table's ``<metric>_lo`` / ``_hi`` still are), and the
    verdict is the claims table's word (before: "yes" from the percentile interval and p_holm).

    Reference: Efron and Tibshirani (1993), *An Introduction to the Bootstrap*, ch. 6 (sd(D*) as the
    standard error); Holm (1979), *Scand. J. Statist.* 6, 65.

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
    level = level_value(level)
    found = _lead_intervals(table, replicates, level, metrics)
    claims, ivs = _as_claims(found)
    if not claims:
        return pd.DataFrame(columns=LEAD_COLUMNS)
    decided = evaluate_claims(claims, intervals=ivs, level=level)
    rows = [{**head, "difference": r.estimate, "difference_lo": r.lo, "difference_hi": r.hi, "p": r.p,
             "p_holm": r.p_holm, "verdict": r.word} for (head, _), r in zip(found, decided.itertuples())]
    return pd.DataFrame(rows, columns=LEAD_COLUMNS)


def _spread_ok(v: EventValues) -> bool:
    """Spread-skill terms present and finite (NaN where the squared spreads left the float64 range)."""
    return v.spread_var is not None and bool(np.all(np.isfinite(v.spread_var)) and np.all(np.isfinite(v.spread_err2)))


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
        its word by the one rule of :mod:`~posteval.metrics.verdicts` ("calibrated": |D| < margin by two
        one-sided tests; "under-covers": D < 0; "over-covers": D > 0; else "not resolved");

    TARP error max_alpha |ECP(alpha) - alpha|; spread-skill SSR = sqrt((1 + 1/m) mean_i s_i^2 /
    mean_i (xbar_i - y_i)^2) (see :mod:`~posteval.metrics.calibration`).

    Reference: Talts et al. (2018), "Validating Bayesian inference algorithms with simulation-based
    calibration", arXiv:1804.06788 (the uniform rank); Gneiting, Balabdaoui and Raftery (2007),
    *J. R. Statist. Soc. B* 69, 243 (calibration, under- and overdispersion); Lemos et al. (2023),
    ICML (TARP); Fortin et al. (2014), *J. Hydrometeor.* 15, 1708 (spread-skill).

    Example: 2,000 events (with a few hundred the interval of D is wider than the 0.02 margin and the
    exact sampler's word is "not resolved"); the sampler half as wide under-covers:

    >>> from posteval.metrics import DEFAULT_LEVELS
    >>> from posteval.metrics.report import event_values, protocol_report
    >>> rng = np.random.default_rng(0)
    >>> mu = rng.normal(size=2000); truth = mu + rng.normal(size=2000)
    >>> draws = {"exact": mu[:, None] + rng.normal(size=(2000, 20)),
    ...          "narrow": mu[:, None] + 0.5 * rng.normal(size=(2000, 20))}
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
        if _spread_ok(v):
            blocks[(model, "spread")] = np.stack([v.spread_var, v.spread_err2], axis=1)
    reps = dict(zip(blocks, bootstrap_means(list(blocks.values()), n_resamples=n_resamples, seed=seed))) if blocks else {}
    dims = list(dict.fromkeys(table["dimension"]))
    for model, v in samplers.items():
        n, m = v.raw_codes.shape[0], int(v.m)
        if (n, m) not in floors:
            floors[(n, m)] = coverage_noise_floor(n, m, levels_sorted, seed=seed).q95
        for j, dim in enumerate(dims):
            inside = (v.raw_codes[:, j][:, None] <= np.arange(levels_sorted.size)[None, :]).astype(float)
            sc = signed_coverage_from_inside(inside[None], m, levels_sorted, level=level)
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
        if _spread_ok(v):
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
