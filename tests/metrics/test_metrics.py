"""posteval.metrics, the package: every public metric refuses bad input with a ValueError naming the
argument (the metrics' own known-answer tests: tests/metrics/test_<module>.py)."""

import numpy as np
import pytest

from posteval import metrics


@pytest.mark.parametrize(
    "call, word",
    [
        (lambda: metrics.crps_ensemble(np.array([[np.nan, 1.0]]), np.array([0.0])), "samples"),
        (lambda: metrics.crps_ensemble(np.zeros((3, 4)), np.zeros(2)), "samples and truth"),
        (lambda: metrics.crps_ensemble(np.zeros((3, 0)), np.zeros(3)), "samples"),
        (lambda: metrics.crps_ensemble(np.zeros((0, 4)), np.zeros(0)), "truth"),
        (lambda: metrics.rmse(np.zeros(3), np.zeros(4)), "pred and truth"),
        (lambda: metrics.mae(np.array([np.inf]), np.zeros(1)), "pred"),
        (lambda: metrics.coverage_curve(np.zeros((3, 4)), np.zeros(3), [0.5, 1.0]), "levels"),
        (lambda: metrics.coverage_curve(np.zeros((3, 4)), np.zeros(3), [0.0]), "levels"),
        (lambda: metrics.chi2_spectrum(np.zeros(3), np.zeros(3), bins=0), "bins"),
        (lambda: metrics.chi2_spectrum(np.zeros(3), np.zeros(3), bins=np.array([1.0, 0.0])), "bins"),
        (lambda: metrics.chi2_spectrum(np.zeros((3, 2)), np.zeros(3)), "samples"),
        (lambda: metrics.conformal_coverage_curve(np.zeros(3), np.zeros(3), np.zeros(4), np.zeros(3)), "test_pred"),
        (lambda: metrics.protocol_report({}, np.zeros(3)), "name_to_samples"),
        (lambda: metrics.protocol_report({"a": np.zeros(3)}, np.zeros(3), point_from="median"), "point_from"),
        (lambda: metrics.protocol_report({"a": np.zeros(3)}, np.zeros(3), level=1.5), "level"),
        (lambda: metrics.chi2_spectrum(np.arange(5.0), np.full(5, 2.0)), "truth: constant"),
        (lambda: metrics.chi2_spectrum(np.arange(5.0), np.arange(5.0), value_range=(10, 20)), "no samples or truth inside"),
        (lambda: metrics.chi2_spectrum(np.arange(5.0), np.arange(5.0), value_range=(3, 3)), "value_range"),
        (lambda: metrics.chi2_spectrum(np.zeros(3), np.zeros(3), bins=np.array([-1.0, 1.0])), "fewer than two non-empty bins"),
        (lambda: metrics.spectrum_test(np.arange(5.0), np.arange(6.0), n_resamples=10), "one prediction per event"),
        (lambda: metrics.coverage_error(np.array([0.5, np.nan]), [0.4, 0.6]), "coverage: contains 1 NaN"),
        (lambda: metrics.coverage_error(np.array([0.5, 1.2]), [0.4, 0.6]), r"coverage: fractions must lie in \[0, 1\]"),
        (lambda: metrics.crps_ensemble(np.zeros((3, 1)), np.zeros(3), estimator="fair"), "m >= 2"),
        (lambda: metrics.crps_ensemble(np.zeros((3, 4)), np.zeros(3), estimator="qd"), "estimator"),
        (lambda: metrics.energy_score_ensemble(np.zeros((3, 4, 2)), np.zeros((3, 3))), "samples and truth"),
        (lambda: metrics.crps_ensemble(np.full((2, 3), 1e308), np.array([-1e308, 0.0])), "crps: the result overflows"),
        (lambda: metrics.crps_normal(0.0, -1.0, 0.0), "sigma"),
        (lambda: metrics.coverage_noise_floor(0, 10), "n_events"),
        (lambda: metrics.local_coverage(np.ones(4, dtype=bool), np.arange(5.0)), "covered and covariate"),
        (lambda: metrics.compare(np.zeros(3), np.zeros(3), np.zeros(3), metric="r2"), "metric"),
        (lambda: metrics.bootstrap_means(np.zeros(3), n_resamples=1), "n_resamples"),
    ],
)
def test_bad_input_names_the_argument(call, word):
    with pytest.raises(ValueError, match=word):
        call()


# --- issue 44: no statistic depends on the order of the draws within an event ---------------------------------
_T2 = np.random.default_rng(44).normal(size=(120, 2))  # 120 events, 24 draws each, 1-D and 2-D
_S2 = _T2[:, None, :] + np.random.default_rng(45).normal(size=(120, 24, 2))
_T1, _S1 = _T2[:, 0], _S2[:, :, 0]


def _orders(s):
    """The draws sorted within each event (by the first coordinate), reversed, and shuffled per event."""
    key = s if s.ndim == 2 else s[:, :, 0]
    idx = np.argsort(key, axis=1)
    sorted_ = np.take_along_axis(s, idx if s.ndim == 2 else idx[:, :, None], axis=1)
    perm = np.argsort(np.random.default_rng(1).random(key.shape), axis=1)
    shuffled = np.take_along_axis(s, perm if s.ndim == 2 else perm[:, :, None], axis=1)
    return {"sorted": sorted_, "reversed": s[:, ::-1], "shuffled": shuffled}


def _plain(result):
    """A result as comparable Python data (arrays, frames and dataclasses unpacked)."""
    import dataclasses

    import pandas as pd
    if isinstance(result, pd.DataFrame):
        return repr(result.to_dict("list"))  # floats exactly (shortest round trip), NaN comparable
    if dataclasses.is_dataclass(result):
        return {f.name: _plain(getattr(result, f.name)) for f in dataclasses.fields(result)}
    if isinstance(result, (tuple, list)):
        return [_plain(r) for r in result]
    if isinstance(result, dict):
        return {k: _plain(v) for k, v in result.items()}
    if callable(result):
        return None
    return np.asarray(result).tobytes() if isinstance(result, (np.ndarray, np.generic, float)) else result


ORDER_FREE = {
    "crps_ensemble nrg": lambda s1, s2: metrics.crps_ensemble(s1, _T1),
    "crps_ensemble fair": lambda s1, s2: metrics.crps_ensemble(s2, _T2, estimator="fair"),
    "crps_ensemble pwm": lambda s1, s2: metrics.crps_ensemble(s1, _T1, estimator="pwm"),
    "energy_score_ensemble": lambda s1, s2: metrics.energy_score_ensemble(s2, _T2),
    "energy_score_ensemble shifts": lambda s1, s2: metrics.energy_score_ensemble(s2, _T2, estimator="fair", n_shifts=8),
    "energy_score_reconstruction": lambda s1, s2: metrics.energy_score_reconstruction(s2, _T2),
    "mean_abs_difference": lambda s1, s2: metrics.mean_abs_difference(s2),
    "pit": lambda s1, s2: metrics.pit(s2, _T2),
    "coverage_curve": lambda s1, s2: metrics.coverage_curve(s1, _T1),
    "central_interval_hits": lambda s1, s2: metrics.central_interval_hits(s2, _T2, 0.8),
    "event_scores crps": lambda s1, s2: metrics.event_scores(s2, _T2)[0],
    "event_scores energy": lambda s1, s2: metrics.event_scores(s2, _T2, metric="energy_score")[0],
    "compare": lambda s1, s2: metrics.compare(s1, _T1 + 0.1, _T1, n_resamples=100),
    "signed_coverage": lambda s1, s2: metrics.signed_coverage([s2], _T2),
    "tarp_coverage": lambda s1, s2: metrics.tarp_coverage(s2, _T2, n_resamples=100),
    "rank_histogram": lambda s1, s2: metrics.rank_histogram(s2, _T2, n_resamples=100),
    "spread_skill": lambda s1, s2: metrics.spread_skill(s2, _T2, n_resamples=100),
    "event_values": lambda s1, s2: metrics.event_values(s2, _T2, energy=True, energy_shifts=8, spread=True),
    "protocol_report sample": lambda s1, s2: metrics.protocol_report({"a": s2, "b": _T2 + 0.1}, _T2, level=0.9,
                                                                     n_resamples=100, energy=True, energy_shifts=8),
    "protocol_report mean": lambda s1, s2: metrics.protocol_report({"a": s1}, _T1, point_from="mean", level=0.9,
                                                                   n_resamples=100),
    "evaluate_models": lambda s1, s2: metrics.evaluate_models({"a": s2, "b": _T2 + 0.1}, _T2, n_resamples=100),
}


@pytest.mark.parametrize("name", list(ORDER_FREE))
def test_no_statistic_depends_on_the_order_of_the_draws(name):
    """Sorted, reversed and shuffled draws give results identical to the last bit (issue 44)."""
    f = ORDER_FREE[name]
    reference = _plain(f(_S1, _S2))
    for order, (s1, s2) in zip(_orders(_S1), zip(_orders(_S1).values(), _orders(_S2).values())):
        got = _plain(f(s1, s2))
        if name == "evaluate_models":  # the date of the provenance aside
            got["provenance"].pop("date"), reference["provenance"].pop("date", None)
        assert got == reference, f"{name}: {order} draws change the result"


def test_help_of_the_package_does_not_end_in_numpys_ndarray_help():
    import pydoc

    text = pydoc.render_doc(metrics, renderer=pydoc.plaintext)
    assert "DEFAULT_LEVELS = array([0.05" in text and "ndarray(shape, dtype=None" not in text
    levels = metrics.DEFAULT_LEVELS
    assert type(levels * 2) is np.ndarray and not levels.flags.writeable and levels[0] == 0.05
