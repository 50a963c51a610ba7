"""posteval.plotting.bimodal: the bimodal chapter's figures."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest


def test_bimodal_figures_fit_the_page_in_the_palette():
    from posteval.plotting import bimodal, palette

    rng = np.random.default_rng(1)
    z = rng.normal(size=500)
    grids = np.tile(np.linspace(-3, 3, 200), (3, 1))
    dens = np.exp(-grids**2 / 2) / np.sqrt(2 * np.pi)
    figs = [
        bimodal.posterior_panels(grids, dens, np.ones(3), np.zeros(3), {"flow": rng.normal(size=(3, 50))},
                                 {"mlp_mse": np.zeros(3)}),
        bimodal.spectra_figure(z, {"samplers": {"flow": rng.normal(size=500)}}),
    ]
    flow_lines = [line for line in figs[0].axes[0].patches if line.get_label() == "flow"]
    assert flow_lines and flow_lines[0].get_edgecolor()[:3] == pytest.approx(
        matplotlib.colors.to_rgb(palette.colour("flow")))
    assert figs[0].axes[-1].axison is False  # three events on a 2 x 2 grid: the fourth panel is empty
    assert all(f.get_figwidth() <= 7 for f in figs)
    for f in figs:
        plt.close(f)


def test_sweep_figure_draws_the_gap_to_the_bayes_limit_with_its_interval():
    from posteval.plotting import bimodal

    sweep = pd.DataFrame({"N train": [10, 100], "sd of predictions / sd of z": [0.1, 0.05],
                          "RMSE − Bayes": [0.02, -0.01], "lo": [0.01, -0.03], "hi": [0.04, 0.0]})
    fig = bimodal.sweep_figure(sweep)
    bars = fig.axes[1].containers[0]
    np.testing.assert_allclose(bars.lines[0].get_ydata(), [0.02, -0.01])
    segments = bars.lines[2][0].get_segments()
    np.testing.assert_allclose([s[:, 1] for s in segments], [[0.01, 0.04], [-0.03, 0.0]])
    with pytest.raises(ValueError, match="missing columns"):
        bimodal.sweep_figure(sweep.drop(columns="lo"))
    plt.close(fig)


def test_conditional_coverage_axes_draws_deviation_from_the_level():
    from posteval.plotting import bimodal

    local = pd.DataFrame({"flow": [0.8, 0.9], "mlp_mse (conformal)": [0.7, 0.85]}, index=["0.10", "1.00"])
    fig, ax = plt.subplots()
    bimodal.conditional_coverage_axes(ax, local, 0.8, n_per_bin=500, m_samples=100)
    lines = {line.get_label(): line for line in ax.get_lines()}
    np.testing.assert_allclose(lines["flow"].get_ydata(), [0.0, 0.1], atol=1e-12)
    np.testing.assert_allclose(lines["mlp_mse (conformal)"].get_ydata(), [-0.1, 0.05], atol=1e-12)
    with pytest.raises(ValueError, match="nominal"):
        bimodal.conditional_coverage_axes(ax, local, 80)
    plt.close(fig)
