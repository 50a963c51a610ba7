"""Chapter-2 figures: the bimodal data with its posterior branches, per-event posteriors, the
reconstructed spectra, the ensemble CRPS as a function of the number of samples, coverage
conditional on the observation and the regression's training-size sweep.

Every model is drawn in its colour of `posteval.plotting.palette`; figures are at most 7 inches wide
with their legends outside the data.
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from posteval import metrics
from posteval._deprecation import renamed_keywords
from posteval.plotting import line_colours, spectrum_with_ratio
from posteval.plotting.palette import colour

__all__ = ["data_with_branches", "posterior_panels", "spectra_figure", "crps_vs_samples_axes",
           "crps_ratio_vs_samples_axes", "conditional_coverage_axes", "sweep_figure"]

_OUTSIDE = dict(frameon=False, fontsize="small", loc="upper left", bbox_to_anchor=(1.02, 1.0))


def data_with_branches(ax, x: np.ndarray, z: np.ndarray, *, max_points: int = 4000) -> None:
    """Scatter of the events (x, z) with the two posterior branches z = ±sqrt(x) and the
    posterior mean E[z | x] = 0 (what the MSE regression learns, in its colour)."""
    x = np.asarray(x, dtype=float)
    z = np.asarray(z, dtype=float)
    if x.shape != z.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"x and z must be non-empty 1-D arrays of equal length, got {x.shape} and {z.shape}")
    k = min(max_points, x.size)
    sns.scatterplot(x=x[:k], y=z[:k], s=6, alpha=0.4, color="grey", edgecolor=None, ax=ax, label="events")
    grid = np.linspace(0.0, np.quantile(x, 0.999), 300)
    ax.plot(grid, np.sqrt(grid), color="black", lw=1, label="branch z = +√x")
    ax.plot(grid, -np.sqrt(grid), color="black", lw=1, ls="--", label="branch z = −√x")
    ax.axhline(0.0, color=colour("mlp_mse"), lw=2, ls=":", label="E[z | x] = 0")
    ax.set_xlabel("observation x [arbitrary units]")
    ax.set_ylabel("hidden truth z [arbitrary units]")
    ax.legend(markerscale=3, **_OUTSIDE)


def posterior_panels(
    grids: np.ndarray,
    densities: np.ndarray,
    x_values: np.ndarray,
    truths: np.ndarray,
    samples: Mapping[str, np.ndarray],
    points: Mapping[str, np.ndarray],
    *,
    bins: int = 80,
    columns: int = 2,
    colours: Mapping[str, str] | None = None,
):
    """One panel per event: the exact posterior density, each sampler's histogram and each
    point estimator's value, on a grid of `columns` panels per row with one legend below.

    Parameters
    ----------
    grids, densities : arrays (k, G)
        Exact posterior density of each of the k events on its grid.
    x_values, truths : arrays (k,)
        Observation and hidden truth of each event.
    samples : {model: array (k, m)}
        Samples of each generative model for these events.
    points : {model: array (k,)}
        Point estimates for these events.
    colours : {name: colour} for names outside the book's palette (e.g. a reader's name of a model,
        ``{"MSE regression": palette.colour("mlp_mse")}``)

    Returns the matplotlib figure.
    """
    grids = np.asarray(grids, dtype=float)
    densities = np.asarray(densities, dtype=float)
    k = grids.shape[0]
    if densities.shape != grids.shape or len(x_values) != k or len(truths) != k:
        raise ValueError("grids, densities, x_values and truths must describe the same events")
    rows = -(-k // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(7, 2.6 * rows + 0.8), layout="constrained",
                             squeeze=False)
    line = line_colours(list(samples) + list(points), colours)
    for i, ax in enumerate(axes.ravel()):
        if i >= k:
            ax.set_axis_off()
            continue
        support = densities[i] > densities[i].max() * 1e-4
        lo, hi = grids[i][support].min(), grids[i][support].max()
        pad = 0.15 * (hi - lo) + 0.05
        edges = np.linspace(lo - pad, hi + pad, bins + 1)
        for name, s in samples.items():
            ax.hist(np.asarray(s[i], dtype=float), bins=edges, density=True, histtype="step", lw=1.4,
                    color=line[name], label=name)
        for name, p in points.items():
            ax.axvline(float(p[i]), color=line[name], ls="--", lw=1.4, label=name)
        ax.plot(grids[i], densities[i], color="black", lw=1.2, label="exact posterior")
        ax.axvline(float(truths[i]), color="black", ls=":", lw=1, label="true z")
        ax.set_xlim(edges[0], edges[-1])
        ax.set_title(f"x = {x_values[i]:.2f}")
        ax.set_xlabel("z [arbitrary units]" if i >= k - columns else "")
        ax.set_ylabel("density [1/unit of z]" if i % columns == 0 else "")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, frameon=False, fontsize="small")
    return fig


def spectra_figure(truth: np.ndarray, groups: Mapping[str, Mapping[str, np.ndarray]], *,
                   bins: int = 50,
                   quantity: str = "z", unit: str | None = "a.u.",
                   colours: Mapping[str, str] | None = None):
    """One spectrum-with-ratio block per group of reconstructions, stacked, legends at the right.

    groups : {title: {model: one reconstruction per event (n,)}}
    colours : {name: colour} for names outside the book's palette

    Returns the matplotlib figure.
    """
    if not groups:
        raise ValueError("groups: expected at least one group of reconstructions")
    fig = plt.figure(figsize=(7, 3.4 * len(groups)), layout="constrained")
    grid = fig.add_gridspec(2 * len(groups), 1, height_ratios=(3, 1) * len(groups))
    for j, (title, recos) in enumerate(groups.items()):
        ax, ax_ratio = fig.add_subplot(grid[2 * j]), fig.add_subplot(grid[2 * j + 1])
        spectrum_with_ratio(ax, ax_ratio, truth, recos, bins=bins, quantity=quantity, unit=unit, colours=colours)
        ax.sharex(ax_ratio)
        ax.tick_params(labelbottom=False)
        ax.legend(**_OUTSIDE)
        ax.set_title(title)
    fig.align_ylabels()
    return fig


def crps_vs_samples_axes(ax, table: pd.DataFrame, *, exact: float | None = None, expected=None,
                         colours: Mapping[str, str] | None = None, exact_label: str = "oracle, exact integral") -> None:
    """Mean ensemble CRPS against samples per event m (log axis), one line per model.

    Parameters
    ----------
    table : DataFrame with columns ``m``, ``model``, ``mean CRPS``
    exact : the oracle's exact-integral CRPS (drawn as a horizontal line, labelled ``exact_label``)
    colours : {model: colour} for models outside the book's palette
    expected : optional (m, CRPS) arrays of the oracle's expected ensemble CRPS
    """
    sns.lineplot(data=table, x="m", y="mean CRPS", hue="model", marker="o", ax=ax,
                 palette=line_colours(table["model"].unique(), colours))
    if exact is not None:
        ax.axhline(exact, color="black", lw=1, label=exact_label)
    if expected is not None:
        ax.plot(*expected, color="black", ls="--", lw=1, label="exact + E|X−X′|/(2m)")
    ax.set_xscale("log")
    ax.set_xlabel("samples per event m")
    ax.set_ylabel("mean CRPS [units of z]")
    ax.legend(**_OUTSIDE)


def crps_ratio_vs_samples_axes(ax, by_m: pd.DataFrame, ratios: Mapping[str, str], *,
                               ylim=(0.9, 1.2)) -> None:
    """Ratios of mean CRPS against samples per event m (log axis), each in its model's colour.

    by_m : DataFrame indexed by m with one column per ratio
    ratios : {column of by_m: model whose colour it takes}
    """
    missing = [c for c in ratios if c not in by_m.columns]
    if missing:
        raise ValueError(f"ratios: columns {missing} are not in by_m ({list(by_m.columns)})")
    for col, model in ratios.items():
        ax.plot(by_m.index, by_m[col], marker="o", color=colour(model), label=col)
    ax.axhline(1.0, color="black", lw=1)
    ax.set(xscale="log", ylim=ylim, xlabel="samples per event m", ylabel="ratio of mean CRPS")
    ax.legend(**_OUTSIDE)


@renamed_keywords(ci="level")
def conditional_coverage_axes(ax, local: pd.DataFrame, nominal: float, *, n_per_bin: int | None = None,
                              m_samples: int | None = None, level: float = 0.95,
                              colours: Mapping[str, str] | None = None) -> None:
    """Coverage minus nominal of one interval level in bins of a covariate, one line per model.

    local : DataFrame of coverages (index: bin centre label, columns: curve names, e.g. the
        output of :func:`posteval.metrics.local_coverage`)
    n_per_bin, m_samples : events per bin and samples per event of the exact sampler whose `level`
        band (:func:`posteval.metrics.coverage_band`) is shaded; no band without `n_per_bin`
    colours : {curve name or its model: colour} for names outside the book's palette
    """
    if not 0 < nominal < 1:
        raise ValueError(f"nominal: expected a level in (0, 1), got {nominal!r}")
    x = np.arange(len(local))
    if n_per_bin is not None:
        lo, hi = metrics.coverage_band(n_per_bin, [nominal], m_samples=m_samples, level=level)
        ax.axhspan(lo[0], hi[0], color="0.85", lw=0,
                   label=f"exact sampler, {100 * level:.0f} % band (n = {n_per_bin:,})")
    ax.axhline(0.0, color="black", lw=1, label="calibrated")
    line = line_colours(local.columns, colours)
    for name in local.columns:
        ax.plot(x, local[name].to_numpy() - nominal, marker="o", color=line[name], label=name,
                ls="--" if "conformal" in name else "-")
    ax.set_xticks(x, local.index, rotation=30, ha="right")
    ax.set_xlabel("observation x, centre of its bin [arbitrary units]")
    ax.set_ylabel(f"coverage − {nominal:g}")
    ax.legend(**_OUTSIDE)


def sweep_figure(sweep: pd.DataFrame, *, size: str = "N train", width: str = "sd of predictions / sd of z",
                 gap: str = "RMSE − Bayes", gap_lo: str = "lo", gap_hi: str = "hi",
                 title: str = "Its RMSE minus the Bayes limit, with 95 % intervals over test events",
                 label: str = "MSE regression"):
    """The regression's training-size sweep: the width of its predictions relative to the truth's,
    and its RMSE minus the Bayes limit with the interval of that difference as error bars.

    sweep : one row per training size with the columns named by the keyword arguments
    title : title of the RMSE panel (say what the intervals show)
    label : the regression's name in the legends (drawn in the palette's colour of ``mlp_mse``)

    Returns the matplotlib figure (two stacked panels sharing the log x axis).
    """
    missing = [c for c in (size, width, gap, gap_lo, gap_hi) if c not in sweep.columns]
    if missing:
        raise ValueError(f"sweep: missing columns {missing}")
    fig, (ax_w, ax_g) = plt.subplots(2, 1, figsize=(7, 5.4), layout="constrained", sharex=True)
    n = sweep[size].to_numpy()
    ax_w.plot(n, sweep[width], marker="o", color=colour("mlp_mse"), label=label)
    ax_w.axhline(1.0, color="black", lw=1, label="truth")
    ax_w.set(xscale="log", ylim=(0, 1.1), ylabel="sd of predictions / sd of z",
             title="The regression's spectrum stays collapsed")
    ax_w.legend(**_OUTSIDE)
    g = sweep[gap].to_numpy()
    err = np.stack([g - sweep[gap_lo].to_numpy(), sweep[gap_hi].to_numpy() - g])
    ax_g.errorbar(n, g, yerr=err, marker="o", capsize=4, color=colour("mlp_mse"), label=label)
    ax_g.axhline(0.0, color="black", ls="--", lw=1, label="Bayes limit\n(posterior mean)")
    ax_g.set(xscale="log", xlabel="training events N", ylabel="RMSE − Bayes RMSE [units of z]",
             title=title)
    ax_g.legend(**_OUTSIDE)
    return fig
