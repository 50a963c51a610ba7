"""Figures of the evaluation protocol: spectra with ratio panels, CRPS, coverage minus nominal.

Per-chapter figures live in `posteval.plotting.bimodal` (chapter 2) and `posteval.plotting.top_quark` (chapter 3).
"""

from __future__ import annotations

from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from posteval import metrics, numformat
from posteval._deprecation import renamed_keywords
from posteval.plotting import palette as _palette

__all__ = ["line_colours", "set_theme", "spectrum_with_ratio", "ratio_band", "clip_spikes", "coverage_axes",
           "protocol_figure", "protocol_panels"]


def set_theme() -> None:
    """The book's plotting style (seaborn ticks, colour-blind palette, readable sizes)."""
    sns.set_theme(context="notebook", style="ticks", palette="colorblind")
    plt.rcParams.update({"figure.dpi": 150, "savefig.dpi": 150, "axes.titlesize": "medium"})


def line_colours(names, colours: Mapping[str, str] | None = None) -> dict[str, str]:
    """A colour per curve name: `colours` first, then the book's model palette (also for a
    name such as ``"mlp_mse (conformal)"`` whose model, the part before " (", is in the palette
    and not itself among `names`), then the colour-blind sequence for names that are neither."""
    names = list(names)
    colours = dict(colours or {})
    spare = iter(sns.color_palette("colorblind").as_hex()[::-1])
    out = {}
    for name in names:
        base = name.split(" (")[0]
        if name in colours:
            out[name] = colours[name]
        elif base in colours and base not in names:
            out[name] = colours[base]
        elif name in _palette.MODEL_COLOURS:
            out[name] = _palette.MODEL_COLOURS[name]
        elif base in _palette.MODEL_COLOURS and base not in names:
            out[name] = _palette.MODEL_COLOURS[base]
        else:
            out[name] = next(spare)
    return out


def _label(quantity: str, unit: str | None) -> str:
    return f"{quantity} [{unit}]" if unit else quantity


def spectrum_with_ratio(
    ax_main,
    ax_ratio,
    truth: np.ndarray,
    reconstructions: Mapping[str, np.ndarray],
    *,
    bins: int | np.ndarray = 40,
    quantity: str = "value",
    unit: str | None = None,
    range_quantiles: tuple[float, float] = (0.001, 0.999),
    colours: Mapping[str, str] | None = None,
) -> np.ndarray:
    """Draw the true marginal and each reconstruction's, with their ratio to the truth below.

    Parameters
    ----------
    ax_main, ax_ratio : matplotlib axes (the ratio panel shares x with the main one)
    truth : 1-D true values
    reconstructions : {label: 1-D reconstructed values}
    bins : number of equal-width bins over the truth's central range, or the edges
    quantity, unit : x-axis label parts, e.g. ``"p_z(nu)"`` and ``"GeV"``
    colours : {label: colour} (e.g. ``palette.colour(model)``); labels that are model names of
        the book's palette need none

    Returns the bin edges used.
    """
    truth = np.asarray(truth, dtype=float)
    if truth.ndim != 1 or truth.size == 0:
        raise ValueError(f"truth: expected a non-empty 1-D array, got shape {truth.shape}")
    if np.ndim(bins) == 0:
        lo, hi = np.quantile(truth, range_quantiles)
        edges = np.linspace(lo, hi, int(bins) + 1)
    else:
        edges = np.asarray(bins, dtype=float)
    centres = 0.5 * (edges[1:] + edges[:-1])
    width = np.diff(edges)
    t_counts, _ = np.histogram(truth, edges)
    t_dens = t_counts / (truth.size * width)
    ax_main.stairs(t_dens, edges, color="black", lw=2, label="truth")
    line = line_colours(reconstructions, colours)
    for name, values in reconstructions.items():
        colour = line[name]
        values = np.asarray(values, dtype=float).ravel()
        counts, _ = np.histogram(values, edges)
        dens = counts / (values.size * width)
        ax_main.stairs(dens, edges, color=colour, lw=1.5, label=name)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(t_dens > 0, dens / t_dens, np.nan)
        ax_ratio.plot(centres, ratio, drawstyle="steps-mid", color=colour)
    ax_ratio.axhline(1.0, color="black", lw=1)
    unit_density = f"1/{unit}" if unit else None
    ax_main.set_ylabel(_label("density", unit_density))
    ax_main.legend(fontsize="small", frameon=False)
    ax_ratio.set_ylabel("ratio to truth")
    ax_ratio.set_ylim(0.0, 2.0)
    ax_ratio.set_xlabel(_label(quantity, unit))
    return edges


@renamed_keywords(ci="level")
def coverage_axes(ax, levels: np.ndarray, curves: Mapping[str, np.ndarray], *, title: str | None = None,
                  colours: Mapping[str, str] | None = None, n_events: int | None = None,
                  m_samples: int | None = None, level: float = 0.95, legend: bool | str = "right") -> None:
    """Coverage minus nominal against nominal coverage for each named curve, zero being calibrated.

    Given `n_events` (the events behind each curve), a grey band shows the central `level` range of a
    perfectly calibrated forecast's deviation (:func:`posteval.metrics.coverage_band`; with
    `m_samples`, that of an exact sampler with m samples, discreteness included). Curves whose
    name contains "conformal" are dashed. The legend sits outside the axes, to the right
    (``legend="right"`` or True) or below them (``"below"``); ``legend=False`` draws none.
    """
    if legend not in (True, False, "right", "below"):
        raise ValueError(f"legend: expected True, False, 'right' or 'below', got {legend!r}")
    levels = np.asarray(levels, dtype=float)
    if n_events is not None:
        lo, hi = metrics.coverage_band(n_events, levels, m_samples=m_samples, level=level)
        what = "exact sampler" if m_samples else "calibrated"
        ax.fill_between(levels, lo, hi, color="0.85", lw=0,
                        label=f"{what}, {100 * level:.0f} % band (n = {n_events:,})")
    ax.axhline(0.0, color="black", lw=1, label="calibrated")
    line = line_colours(curves, colours)
    for name, cov in curves.items():
        ax.plot(levels, np.asarray(cov, dtype=float) - levels, marker="o", ms=3, label=name,
                color=line[name], ls="--" if "conformal" in name else "-")
    ax.set_xlabel("nominal coverage")
    ax.set_ylabel("coverage − nominal")
    ax.set_xlim(0, 1)
    if legend == "below":
        ax.legend(fontsize="small", frameon=False, loc="upper center", bbox_to_anchor=(0.5, -0.2),
                  ncol=2)
    elif legend:
        ax.legend(fontsize="small", frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    if title:
        ax.set_title(title)


def protocol_figure(
    name_to_samples: Mapping[str, np.ndarray],
    truth: np.ndarray,
    *,
    dimension: int = 0,
    quantity: str = "value",
    unit: str | None = None,
    levels=metrics.DEFAULT_LEVELS,
    bins: int = 40,
    calibration: Mapping[str, tuple[np.ndarray, np.ndarray]] | None = None,
    crps_estimator: str = "nrg",
    colours: Mapping[str, str] | None = None,
):
    """One figure of the protocol for a set of models, on one target dimension.

    Panels: the spectrum (one reconstruction per event for samplers, the prediction for point
    estimators) with its ratio to the truth; the mean CRPS per model (samplers with
    ``crps_estimator``, point estimators as point masses: the absolute error); coverage minus
    nominal (raw for samplers, split-conformal for point estimators given ``calibration`` data)
    with the band of a perfectly calibrated sampler on as many events. 7 inches wide. ``colours``
    {model: colour} for models outside the book's palette (e.g. a reader's name of a model).

    Returns the matplotlib figure.
    """
    truth = np.asarray(truth, dtype=float)
    t1 = truth if truth.ndim == 1 else truth[:, dimension]
    points, crps_rows, curves = {}, [], {}
    for name, pred in name_to_samples.items():
        arr = np.asarray(pred, dtype=float)
        is_samples = arr.ndim == truth.ndim + 1
        a1 = arr if truth.ndim == 1 else arr[..., dimension]
        points[name] = a1[:, 0] if is_samples else a1
        s = a1 if is_samples else a1[:, None]
        score = metrics.crps_ensemble(s, t1, estimator=crps_estimator) if is_samples else np.abs(a1 - t1)
        crps_rows.append({"model": name, "CRPS": float(score.mean())})
        if is_samples:
            curves[name] = metrics.coverage_curve(s, t1, levels)
        elif calibration is not None and name in calibration:
            cal_p, cal_t = calibration[name]
            cal_p = np.asarray(cal_p, dtype=float)
            cal_t = np.asarray(cal_t, dtype=float)
            if truth.ndim == 2:
                cal_p, cal_t = cal_p[..., dimension], cal_t[:, dimension]
            curves[f"{name} (conformal)"] = metrics.conformal_coverage_curve(cal_p, cal_t, a1, t1, levels)["coverage"]
    m_values = {np.shape(v)[1] for v in name_to_samples.values() if np.ndim(v) == truth.ndim + 1}
    return protocol_panels(t1, points, {r["model"]: r["CRPS"] for r in crps_rows}, curves, levels=levels, bins=bins,
                           quantity=quantity, unit=unit, m_samples=m_values.pop() if len(m_values) == 1 else None,
                           colours=colours)


def protocol_panels(
    truth: np.ndarray,
    points: Mapping[str, np.ndarray],
    mean_crps: Mapping[str, float],
    curves: Mapping[str, np.ndarray],
    *,
    levels=metrics.DEFAULT_LEVELS,
    bins: int = 40,
    quantity: str = "value",
    unit: str | None = None,
    m_samples: int | None = None,
    colours: Mapping[str, str] | None = None,
):
    """The protocol figure of :func:`protocol_figure` from values already computed.

    ``truth`` (n,) of one dimension; ``points`` {model: (n,) one value per event}; ``mean_crps``
    {model: mean CRPS}; ``curves`` {curve name: coverage at ``levels``} (a name containing
    "conformal" is dashed); ``m_samples``: the samplers' m when they share one (the band of an exact
    sampler); ``colours`` {model: colour}, e.g. :func:`posteval.plotting.palette.user_colours`.
    The report CLI draws its figures with it from the values it scored chunk by chunk.
    """
    fig = plt.figure(figsize=(7, 7.8), layout="constrained")
    grid = fig.add_gridspec(3, 2, height_ratios=(3, 1, 3.2), width_ratios=(1.5, 1))
    ax_s = fig.add_subplot(grid[0, 0])
    ax_r = fig.add_subplot(grid[1, 0], sharex=ax_s)
    spectrum_with_ratio(ax_s, ax_r, truth, points, bins=bins, quantity=quantity, unit=unit, colours=colours)
    ax_s.tick_params(labelbottom=False)
    ax_s.legend(fontsize="x-small", frameon=False, loc="upper left")
    ax_s.set_title("spectrum (one per event)")
    ax_c = fig.add_subplot(grid[0:2, 1])
    bar = line_colours(points, colours)
    crps_rows = pd.DataFrame({"model": list(mean_crps), "CRPS": [float(v) for v in mean_crps.values()]})
    sns.barplot(data=crps_rows, y="model", x="CRPS", hue="model", legend=False, ax=ax_c, palette=bar)
    ax_c.set_xlabel(_label("mean CRPS", unit))
    ax_c.set_ylabel("")
    ax_c.set_title("CRPS (lower is better)")
    ax_k = fig.add_subplot(grid[2, :])
    coverage_axes(ax_k, levels, curves, title="calibration", n_events=truth.size, m_samples=m_samples,
                  legend="below", colours=colours)
    return fig


def ratio_band(ax_main, ax_ratio, n_events: int, *, label: str | None = None):
    """Grey band on a ratio panel: where the ratio to the truth of a histogram falls (±2 sd) when
    it is drawn from the true spectrum with as many events.

    With independent Poisson counts t in a bin of the truth and r ~ t in the other histogram,
    sd(r / t) ≈ sqrt(2 / t), so the band is 1 ± 2 sqrt(2 / t) (empty bins: none). The truth's
    stairs must be the first patch of ``ax_main`` (as :func:`spectrum_with_ratio` draws them).

    >>> fig, (a, b) = plt.subplots(2)
    >>> _ = a.stairs([0.5, 0.25], [0.0, 1.0, 2.0])
    >>> ratio_band(a, b, 100)  # counts 50 and 25: half-widths 0.4 and 0.566
    array([0.4       , 0.56568542])
    >>> plt.close(fig)
    """
    if not (isinstance(n_events, (int, np.integer)) and n_events > 0):
        raise ValueError(f"n_events: expected a positive integer, got {n_events!r}")
    if not ax_main.patches:
        raise ValueError("ax_main: no stairs drawn (the truth's must come first)")
    values, edges = ax_main.patches[0].get_data()[:2]
    counts = np.asarray(values) * np.diff(edges) * n_events
    with np.errstate(divide="ignore"):
        half = np.where(counts > 0, 2 * np.sqrt(2 / counts), np.nan)
    ax_ratio.stairs(1 + half, edges, baseline=1 - half, fill=True, color="0.85", lw=0, zorder=0, label=label)
    return half


def clip_spikes(ax, factor: float = 1.6) -> dict[str, float]:
    """Cut a spectrum's density axis at ``factor`` times the truth's peak (the first patch) and
    name, in the upper right corner, every curve whose peak lies above the cut, with its peak.

    Returns ``{label: peak density}`` of the curves cut (empty when none is).

    >>> fig, ax = plt.subplots()
    >>> _ = ax.stairs([1.0, 1.0], [0, 1, 2], label="truth"); _ = ax.stairs([5.0, 0.1], [0, 1, 2], label="spike")
    >>> clip_spikes(ax)
    {'spike': 5.0}
    >>> plt.close(fig)
    """
    if not factor > 1:
        raise ValueError(f"factor: expected a number > 1, got {factor!r}")
    if not ax.patches:
        raise ValueError("ax: no stairs drawn (the truth's must come first)")
    top = factor * ax.patches[0].get_data()[0].max()
    off = {p.get_label(): float(p.get_data()[0].max()) for p in ax.patches[1:] if p.get_data()[0].max() > top}
    if off:
        ax.set_ylim(0, top)
        lines = [f"{name}: {numformat.number(v)}" for name, v in off.items()]
        ax.text(0.98, 0.97, "\n".join(["off scale, peak density:", *lines]), transform=ax.transAxes,
                ha="right", va="top", fontsize="x-small")
    return off
