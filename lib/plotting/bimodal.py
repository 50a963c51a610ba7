"""Chapter-2 figures: the bimodal data with its posterior branches, per-event posteriors,
and the ensemble CRPS as a function of the number of samples."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

__all__ = ["data_with_branches", "posterior_panels", "crps_vs_samples_axes"]


def data_with_branches(ax, x: np.ndarray, z: np.ndarray, *, max_points: int = 4000) -> None:
    """Scatter of the events (x, z) with the two posterior branches z = ±sqrt(x)."""
    x = np.asarray(x, dtype=float)
    z = np.asarray(z, dtype=float)
    if x.shape != z.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"x and z must be non-empty 1-D arrays of equal length, got {x.shape} and {z.shape}")
    k = min(max_points, x.size)
    sns.scatterplot(x=x[:k], y=z[:k], s=6, alpha=0.4, color="grey", edgecolor=None, ax=ax, label="events")
    grid = np.linspace(0.0, np.quantile(x, 0.999), 300)
    ax.plot(grid, np.sqrt(grid), color="C3", lw=2, label="branch z = +√x")
    ax.plot(grid, -np.sqrt(grid), color="C0", lw=2, label="branch z = -√x")
    ax.axhline(0.0, color="black", lw=1, ls=":", label="E[z | x] = 0")
    ax.set_xlabel("observation x [arbitrary units]")
    ax.set_ylabel("hidden truth z [arbitrary units]")
    ax.legend(frameon=False, fontsize="small", markerscale=3)


def posterior_panels(
    grids: np.ndarray,
    densities: np.ndarray,
    x_values: np.ndarray,
    truths: np.ndarray,
    samples: Mapping[str, np.ndarray],
    points: Mapping[str, np.ndarray],
    *,
    bins: int = 80,
):
    """One panel per event: the exact posterior density, each sampler's histogram and each
    point estimator's value.

    Parameters
    ----------
    grids, densities : arrays (k, G)
        Exact posterior density of each of the k events on its grid.
    x_values, truths : arrays (k,)
        Observation and hidden truth of each event.
    samples : {label: array (k, m)}
        Samples of each generative model for these events.
    points : {label: array (k,)}
        Point estimates for these events.

    Returns the matplotlib figure.
    """
    grids = np.asarray(grids, dtype=float)
    densities = np.asarray(densities, dtype=float)
    k = grids.shape[0]
    if densities.shape != grids.shape or len(x_values) != k or len(truths) != k:
        raise ValueError("grids, densities, x_values and truths must describe the same events")
    fig, axes = plt.subplots(1, k, figsize=(3.3 * k, 3.4), layout="constrained", squeeze=False)
    palette = sns.color_palette("colorblind", n_colors=len(samples) + len(points))
    for i, ax in enumerate(axes[0]):
        support = densities[i] > densities[i].max() * 1e-4
        lo, hi = grids[i][support].min(), grids[i][support].max()
        pad = 0.15 * (hi - lo) + 0.05
        edges = np.linspace(lo - pad, hi + pad, bins + 1)
        for colour, (name, s) in zip(palette, samples.items()):
            ax.hist(np.asarray(s[i], dtype=float), bins=edges, density=True, histtype="step", lw=1.4,
                    color=colour, label=name)
        for colour, (name, p) in zip(palette[len(samples):], points.items()):
            ax.axvline(float(p[i]), color=colour, ls="--", lw=1.4, label=name)
        ax.plot(grids[i], densities[i], color="black", lw=1.2, label="exact posterior")
        ax.axvline(float(truths[i]), color="black", ls=":", lw=1, label="true z")
        ax.set_xlim(edges[0], edges[-1])
        ax.set_title(f"x = {x_values[i]:.2f}")
        ax.set_xlabel("z [arbitrary units]")
        ax.set_ylabel("posterior density [1/unit of z]" if i == 0 else "")
    axes[0, -1].legend(frameon=False, fontsize="x-small", loc="upper right")
    return fig


def crps_vs_samples_axes(ax, table: pd.DataFrame, *, exact: float | None = None, expected=None) -> None:
    """Mean ensemble CRPS against samples per event m (log axis), one line per model.

    Parameters
    ----------
    table : DataFrame with columns ``m``, ``model``, ``mean CRPS``
    exact : the oracle's exact-integral CRPS (drawn as a horizontal line)
    expected : optional (m, CRPS) arrays of the oracle's expected ensemble CRPS
    """
    sns.lineplot(data=table, x="m", y="mean CRPS", hue="model", marker="o", ax=ax)
    if exact is not None:
        ax.axhline(exact, color="black", lw=1, label="oracle, exact integral")
    if expected is not None:
        ax.plot(*expected, color="black", ls="--", lw=1, label="exact + E|X-X'|/(2m)")
    ax.set_xscale("log")
    ax.set_xlabel("samples per event m")
    ax.set_ylabel("mean CRPS [units of z]")
    ax.legend(frameon=False, fontsize="small")
