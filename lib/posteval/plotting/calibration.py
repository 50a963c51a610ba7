"""Calibration figures: rank-ECDF differences with their simultaneous band, binned spread-skill, and
per-model intervals against a reference with its tolerance.

* :func:`rank_ecdf_axes`: the ECDF of the fractional ranks of the truth among a sampler's draws
  minus the uniform CDF, ``F_n(z) - z`` at ``z = k / (m + 1)``, with the simultaneous band of
  :func:`posteval.metrics.rank_histogram` (Säilynoja, Bürkner & Vehtari 2022, "Graphical test for
  discrete uniformity and its applications in goodness-of-fit evaluation and multiple sample
  comparison", Stat. Comput. 32, 32). A curve below zero in the middle and above at the ends
  means too many truths in the tails: intervals too narrow.
* :func:`spread_skill_axes`: the root mean ensemble variance ((1 + 1/m) s²) against the RMSE of
  the ensemble mean in quantile bins of the spread (:func:`posteval.metrics.spread_skill`); on the
  diagonal for a calibrated ensemble, below it for one that is too confident.
* :func:`interval_axes`: one row per model, its estimate with its interval, the reference's
  value and a tolerance line.

Example
-------
>>> import matplotlib; matplotlib.use("Agg")
>>> from posteval.metrics import rank_histogram
>>> rng = np.random.default_rng(0); t = rng.normal(size=(200, 1)); s = rng.normal(size=(200, 31, 1))
>>> fig, ax = plt.subplots()
>>> rank_ecdf_axes(ax, {"exact": rank_histogram(s, t, n_resamples=200)}, "dim0")
>>> plt.close(fig)
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from posteval.metrics.calibration import RankHistogram, SpreadSkill
from posteval.plotting import line_colours

__all__ = ["rank_ecdf_axes", "spread_skill_axes", "interval_axes"]


def rank_ecdf_axes(ax, histograms: Mapping[str, RankHistogram], projection: str, *,
                   colours: Mapping[str, str] | None = None, title: str | None = None) -> None:
    """ECDF difference of each sampler's ranks for one ``projection`` (a dimension or "energy"),
    with the simultaneous 95 % band of an exact sampler (grey)."""
    if not histograms:
        raise ValueError("histograms: expected at least one sampler's RankHistogram")
    cols = line_colours(list(histograms), colours)
    first = next(iter(histograms.values()))
    grid, lo, hi = first.band
    ax.fill_between(grid, lo - grid, hi - grid, step="mid", color="0.85", label="exact sampler (95 %)")
    for name, h in histograms.items():
        if projection not in h.ranks:
            raise ValueError(f"{name}: no ranks for projection {projection!r} (have {list(h.ranks)})")
        r = h.ranks[projection].to_numpy()
        ecdf = np.array([(r < k).mean() for k in range(1, h.m + 1)])
        ax.step(grid, ecdf - grid, where="mid", color=cols[name], label=name)
    ax.axhline(0.0, color="black", lw=0.6)
    ax.set(xlabel="fractional rank of the truth among the draws", ylabel="ECDF minus uniform",
           title=title or projection)


def spread_skill_axes(ax, results: Mapping[str, SpreadSkill], *, colours: Mapping[str, str] | None = None,
                      unit: str | None = None, title: str | None = None) -> None:
    """Binned spread against binned RMSE of the ensemble mean, one line per sampler, and the diagonal."""
    if not results:
        raise ValueError("results: expected at least one sampler's SpreadSkill")
    cols = line_colours(list(results), colours)
    top = 0.0
    for name, r in results.items():
        b = r.bins
        ax.plot(b["spread"], b["rmse"], marker="o", ms=3, color=cols[name],
                label=f"{name} (ratio {r.ratio:.2f})")
        top = max(top, float(b[["spread", "rmse"]].to_numpy().max()))
    ax.plot([0, top], [0, top], color="black", lw=0.6, ls="--", label="calibrated")
    suffix = f" [{unit}]" if unit else ""
    ax.set(xlabel=f"ensemble spread{suffix}", ylabel=f"RMSE of the ensemble mean{suffix}", title=title,
           xlim=(0, top * 1.05), ylim=(0, top * 1.05))


def interval_axes(ax, table: pd.DataFrame, *, reference: float | None = None, tolerance: float | None = None,
                  colours: Mapping[str, str] | None = None, xlabel: str = "", title: str | None = None,
                  reference_label: str = "truth", tolerance_label: str = "tolerance") -> None:
    """One row per model (the table's index): ``estimate`` with ``lo`` / ``hi`` as error bars, the
    reference's value (solid line) and the tolerance (dashed)."""
    missing = {"estimate", "lo", "hi"} - set(table.columns)
    if missing:
        raise ValueError(f"table: needs the columns estimate, lo, hi; missing {sorted(missing)}")
    cols = line_colours(list(table.index), colours)
    y = np.arange(len(table))[::-1]
    for yi, (name, row) in zip(y, table.iterrows()):
        ax.errorbar(row["estimate"], yi, xerr=[[row["estimate"] - row["lo"]], [row["hi"] - row["estimate"]]],
                    fmt="o", ms=4, capsize=2, color=cols[name])
    if reference is not None:
        ax.axvline(reference, color="black", lw=0.8, label=reference_label)
    if tolerance is not None:
        ax.axvline(tolerance, color="black", lw=0.8, ls="--", label=tolerance_label)
    ax.set_yticks(y, list(table.index))
    ax.set(xlabel=xlabel, title=title)
