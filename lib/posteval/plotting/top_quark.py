"""Chapter-3 figure helpers: spectra grids, and the events whose samples split in two
(`one_per_event` is re-exported from posteval.metrics)."""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from posteval.metrics.scores import one_per_event
from posteval.plotting import line_colours, spectrum_with_ratio

__all__ = ["one_per_event", "two_group_separation", "spectra_small_multiples"]


def two_group_separation(x) -> np.ndarray:
    """Per row of ``(n, m)`` samples: the largest between-group share of the variance over all splits
    of the sorted samples into a lower and an upper group (1 = two spikes, 0 = all equal).
    """
    x = np.sort(np.asarray(x, dtype=np.float64), axis=1)
    if x.ndim != 2 or x.shape[1] < 2:
        raise ValueError(f"x must have shape (n, m) with m >= 2, got {x.shape}")
    m = x.shape[1]
    k = np.arange(1, m)
    csum = np.cumsum(x, axis=1)[:, :-1]
    mean_lo, mean_hi = csum / k, (x.sum(1, keepdims=True) - csum) / (m - k)
    between = k * (m - k) / m**2 * (mean_hi - mean_lo) ** 2
    return between.max(axis=1) / np.maximum(x.var(axis=1), 1e-12)


MAX_CURVES = 4
"""At most this many curves in one panel, the truth included (small multiples beyond)."""


def spectra_small_multiples(truth: Mapping[str, np.ndarray], reconstructions: Mapping[str, Mapping[str, np.ndarray]],
                            panels, groups: Mapping[str, list[str]], *, colours: Mapping[str, str] | None = None,
                            unit: str = "GeV", width: float = 7.5):
    """Spectra as small multiples: one row per observable, one column per group of reconstructions,
    each panel the truth (black) and that group's models (at most ``MAX_CURVES - 1``), densities of
    one reconstruction per event in 40 equal bins; one legend below the panels.

    ``truth`` maps an observable's name to its true values ``(n,)``; ``reconstructions`` maps a
    model's label to ``{name: (n,) values}``; ``panels`` lists ``(name, axis label, (lo, hi))``;
    ``groups`` maps a column title to the labels it shows.

    >>> rng = np.random.default_rng(0)
    >>> t = {"x": rng.normal(size=200)}
    >>> fig = spectra_small_multiples(t, {"a": {"x": rng.normal(size=200)}}, [("x", "x", (-3, 3))], {"A": ["a"]})
    >>> len(fig.axes)
    1
    """
    panels, groups = list(panels), dict(groups)
    if not panels or not groups:
        raise ValueError("panels and groups: expected at least one of each")
    for title, labels in groups.items():
        if not 1 <= len(labels) <= MAX_CURVES - 1:
            raise ValueError(f"group {title!r}: expected 1 to {MAX_CURVES - 1} reconstructions, got {len(labels)}")
        missing = [lab for lab in labels if lab not in reconstructions]
        if missing:
            raise ValueError(f"group {title!r}: no reconstruction named {missing} (have {sorted(reconstructions)})")
    line = line_colours({lab: None for labels in groups.values() for lab in labels}, colours)
    fig, axes = plt.subplots(len(panels), len(groups), figsize=(width, 1.9 * len(panels) + 0.8), squeeze=False,
                             sharey="row", layout="constrained")
    for i, (name, label, (lo, hi)) in enumerate(panels):
        if name not in truth:
            raise ValueError(f"panel {name!r}: no true values (have {sorted(truth)})")
        edges = np.linspace(lo, hi, 41)
        for j, (title, labels) in enumerate(groups.items()):
            ax = axes[i, j]
            ax.hist(truth[name], edges, density=True, histtype="step", color="black", lw=1.8, label="truth")
            for lab in labels:
                ax.hist(np.asarray(reconstructions[lab][name]), edges, density=True, histtype="step",
                        color=line[lab], lw=1.4, label=lab)
            ax.set_xlabel(f"{label} [{unit}]" if unit else label, fontsize="small")
            ax.tick_params(labelsize="x-small")
            if i == 0:
                ax.set_title(title, fontsize="small")
            if j == 0:
                ax.set_ylabel(f"density [1/{unit}]" if unit else "density", fontsize="small")
    # one legend below the panels, never over the data: the truth once, then every reconstruction
    shown = {}
    for ax in axes[0]:
        for handle, lab in zip(*ax.get_legend_handles_labels()):
            shown.setdefault(lab, handle)
    fig.legend(list(shown.values()), list(shown), loc="outside lower center", ncols=min(len(shown), 4),
               fontsize=8, frameon=False)
    return fig
