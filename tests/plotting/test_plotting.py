"""The protocol figures draw what they claim, with labelled axes."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from posteval import metrics, plotting


def test_protocol_figure_panels_and_labels():
    rng = np.random.default_rng(0)
    truth = rng.normal(size=(400, 2))
    fig = plotting.protocol_figure(
        {"sampler": rng.normal(size=(400, 30, 2)), "zero": np.zeros((400, 2))},
        truth,
        dimension=1,
        quantity="p_z",
        unit="GeV",
        calibration={"zero": (np.zeros((300, 2)), rng.normal(size=(300, 2)))},
    )
    axes = fig.get_axes()
    assert len(axes) == 4
    labels = [(ax.get_xlabel(), ax.get_ylabel()) for ax in axes]
    assert any(y == "density [1/GeV]" for _, y in labels)
    assert any(x == "p_z [GeV]" for x, _ in labels)
    assert any(x == "mean CRPS [GeV]" for x, _ in labels)
    coverage_ax = axes[-1]
    names = [t.get_text() for t in coverage_ax.get_legend().get_texts()]
    assert names == ["exact sampler, 95 % band (n = 400)", "calibrated", "sampler", "zero (conformal)"]
    assert fig.get_figwidth() <= 7
    plt.close(fig)


def test_coverage_axes_draws_coverage_minus_nominal_inside_the_perfect_sampler_band():
    levels = np.array([0.2, 0.5, 0.8])
    curves = {"flow": np.array([0.25, 0.5, 0.7]), "mlp_mse (conformal)": levels + 0.01}
    fig, ax = plt.subplots()
    plotting.coverage_axes(ax, levels, curves, title="t")  # the old call: no band
    lines = {line.get_label(): line for line in ax.get_lines()}
    np.testing.assert_allclose(lines["flow"].get_ydata(), [0.05, 0.0, -0.1])
    assert lines["mlp_mse (conformal)"].get_linestyle() == "--"
    assert lines["mlp_mse (conformal)"].get_color() == plotting.palette.colour("mlp_mse")
    assert not ax.collections and ax.get_ylabel() == "coverage − nominal"
    fig2, ax2 = plt.subplots()
    plotting.coverage_axes(ax2, levels, curves, n_events=1000, m_samples=50)
    band = ax2.collections[0].get_paths()[0].vertices[:, 1]
    lo, hi = metrics.coverage_band(1000, levels, m_samples=50)
    assert band.min() == pytest.approx(lo.min()) and band.max() == pytest.approx(hi.max())
    with pytest.raises(ValueError, match="legend"):
        plotting.coverage_axes(ax2, levels, curves, legend="left")
    plt.close(fig)
    plt.close(fig2)


def test_spectrum_with_ratio_rejects_empty_truth():
    fig, (a, b) = plt.subplots(2)
    with pytest.raises(ValueError, match="truth"):
        plotting.spectrum_with_ratio(a, b, np.array([]), {})
    plt.close(fig)


def test_one_per_event_takes_the_first_sample_or_the_prediction():
    from posteval.plotting.top_quark import one_per_event

    samples = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(one_per_event(samples), samples[:, 0])
    np.testing.assert_array_equal(one_per_event(samples[:, 1]), samples[:, 1])
    with pytest.raises(ValueError, match="values"):
        one_per_event(np.zeros(3))


def test_two_group_separation_of_spikes_one_group_and_constant_rows():
    from posteval.plotting.top_quark import two_group_separation

    rng = np.random.default_rng(0)
    spikes = np.r_[np.full(30, -5.0), np.full(70, 5.0)]
    gaussian = rng.normal(size=100)
    sep = two_group_separation(np.stack([rng.permutation(spikes), gaussian, np.ones(100)]))
    assert sep[0] == pytest.approx(1.0)
    assert sep[1] == pytest.approx(2 / np.pi, abs=0.05)  # best split of a Gaussian: at its median
    assert sep[2] == 0.0
    with pytest.raises(ValueError, match="m >= 2"):
        two_group_separation(np.zeros((3, 1)))


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
