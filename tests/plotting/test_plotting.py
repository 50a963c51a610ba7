"""posteval.plotting, the package: the protocol figures draw what they claim, with labelled axes."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
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
