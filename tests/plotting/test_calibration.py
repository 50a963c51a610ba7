"""The calibration figures draw what they are given and refuse what they cannot draw."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from posteval.metrics import rank_histogram, spread_skill  # noqa: E402
from posteval.plotting import calibration as figs  # noqa: E402


def _samplers():
    rng = np.random.default_rng(0)
    t = rng.normal(size=(300, 2))
    return t, {"exact": rng.normal(size=(300, 15, 2)), "narrow": 0.7 * rng.normal(size=(300, 15, 2))}


def test_rank_ecdf_draws_one_curve_per_sampler_and_the_band():
    t, draws = _samplers()
    hists = {k: rank_histogram(v, t, n_resamples=200) for k, v in draws.items()}
    fig, ax = plt.subplots()
    figs.rank_ecdf_axes(ax, hists, "energy")
    assert len(ax.lines) == 3 and len(ax.collections) == 1  # two samplers, the zero line; the band
    assert ax.get_xlabel() and ax.get_ylabel()
    with pytest.raises(ValueError, match="projection 'nope'"):
        figs.rank_ecdf_axes(ax, hists, "nope")
    with pytest.raises(ValueError, match="at least one"):
        figs.rank_ecdf_axes(ax, {}, "energy")
    plt.close(fig)


def test_spread_skill_puts_a_narrow_ensemble_above_the_diagonal():
    t, draws = _samplers()
    res = {k: spread_skill(v, t, n_resamples=50) for k, v in draws.items()}
    fig, ax = plt.subplots()
    figs.spread_skill_axes(ax, res, unit="GeV")
    narrow = res["narrow"].bins
    assert (narrow["rmse"] > narrow["spread"]).all()
    assert "GeV" in ax.get_xlabel()
    plt.close(fig)


def test_interval_axes_needs_estimate_lo_hi():
    fig, ax = plt.subplots()
    table = pd.DataFrame({"estimate": [0.5, 0.6], "lo": [0.4, 0.5], "hi": [0.6, 0.7]}, index=["a", "b"])
    figs.interval_axes(ax, table, reference=0.55, tolerance=0.5, xlabel="fraction")
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b"]
    with pytest.raises(ValueError, match="missing"):
        figs.interval_axes(ax, table.drop(columns="lo"))
    plt.close(fig)
