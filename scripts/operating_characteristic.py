"""The operating characteristic of the word "calibrated": how often signed coverage says "calibrated",
"under-covers" and "over-covers" against the true deviation D, at the chapters' ci designs.

Usage (from the repository root; seeded, about four CPU-minutes):

    PYTHONPATH=lib python scripts/operating_characteristic.py [--repeats 1000] [--seed 0]

writes ``book/figures/operating_characteristic.png`` and ``book/figures/operating_characteristic.csv``.

Designs (the ci profile): chapter 2, ``params/ci/02_synthetic_bimodal.yaml`` (n_test test events,
m_samples draws, n_seeds seeds); chapter 3, ``params/ci/03_top_quark.yaml`` (m_samples, n_seeds) and
its test size, the events left after the chapter's selection, read from the recorded value
``n_test_events`` of the reference notebook ``chapters/03_top_quark.ipynb`` (the yaml gives only the
generated events and the split fractions).

Simulation. A sampler of the wrong width: the posterior is N(0, 1), the sampler N(0, s^2). Given the
truth y, the truth's rank among m independent draws of the sampler is Binomial(m, Phi(y / s)), so a
repeat needs no draws: y_i ~ N(0, 1) per event (shared by the seeds, the same test events), ranks
k_si ~ Binomial(m, Phi(y_i / s)) per seed, the central interval at level a holds the truth when
|2 k / m - 1| <= a (the PIT k / m of :func:`posteval.metrics.coverage.pit`), and
:func:`posteval.metrics.calibration.signed_coverage_from_inside` gives the word. The true deviation
of a width s is computed by quadrature,

    D(s) = int phi(y) sum_k Binom(k; m, Phi(y / s)) e(k) dy,   e(k) = mean_l 1[|2k/m - 1| <= a_l] - mean_l p_m(a_l),

and inverted for each D on the grid (s < 1: too narrow, D < 0). One dimension per event (chapter 3's
words are per component); the seeds are the same sampler (no training variance between them: a
trained model's seeds differ, which widens the interval and lowers the probability of "calibrated").
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

import numpy as np
import yaml
from scipy import optimize, stats

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from posteval.metrics._validation import DEFAULT_LEVELS  # noqa: E402
from posteval.metrics.calibration import COVERAGE_MARGIN, exact_coverage, signed_coverage_from_inside  # noqa: E402

LEVELS = np.sort(DEFAULT_LEVELS)
WORDS = ("calibrated", "under-covers", "over-covers", "not resolved")


def recorded(notebook: Path, name: str) -> str:
    """A value the reference notebook recorded (``record(name, ...)``, its scrapbook output) as text."""
    nb = json.loads(notebook.read_text())
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if out.get("metadata", {}).get("scrapbook", {}).get("name") == name:
                return out["data"]["application/papermill.record/text/plain"].strip("'\"")
    raise KeyError(f"{notebook}: no recorded value {name!r}")


def designs() -> list[dict]:
    ch2 = yaml.safe_load((ROOT / "params/ci/02_synthetic_bimodal.yaml").read_text())
    ch3 = yaml.safe_load((ROOT / "params/ci/03_top_quark.yaml").read_text())
    n3 = int(recorded(ROOT / "chapters/03_top_quark.ipynb", "n_test_events").replace(",", ""))
    return [{"design": f"chapter 2 (n = {ch2['n_test']:,}, m = {ch2['m_samples']}, S = {ch2['n_seeds']})",
             "n": int(ch2["n_test"]), "m": int(ch2["m_samples"]), "seeds": int(ch2["n_seeds"])},
            {"design": f"chapter 3 (n = {n3:,}, m = {ch3['m_samples']}, S = {ch3['n_seeds']})",
             "n": n3, "m": int(ch3["m_samples"]), "seeds": int(ch3["n_seeds"])}]


def deviation_of_width(scale: float, m: int) -> float:
    """D(s) of a normal sampler of width ``scale`` times the posterior's, by quadrature (see the module)."""
    y = np.linspace(-10.0, 10.0, 8001)
    k = np.arange(m + 1)
    pmf = stats.binom.pmf(k[:, None], m, stats.norm.cdf(y / scale)[None, :])
    e = (np.abs(2.0 * k / m - 1.0)[:, None] <= LEVELS[None, :]).mean(axis=1) - exact_coverage(m, LEVELS).mean()
    return float(np.trapezoid(stats.norm.pdf(y) * (e @ pmf), y))


def width_for(deviation: float, m: int) -> float:
    """The width s with D(s) = ``deviation`` (1 for D = 0)."""
    if deviation == 0:
        return 1.0
    return float(optimize.brentq(lambda s: deviation_of_width(s, m) - deviation, 0.3, 3.0, xtol=1e-10))


def words(n: int, m: int, seeds: int, scale: float, repeats: int, rng: np.random.Generator) -> dict[str, int]:
    counts = dict.fromkeys(WORDS, 0)
    table = (np.abs(2.0 * np.arange(m + 1) / m - 1.0)[:, None] <= LEVELS[None, :]).astype(float)
    for _ in range(repeats):
        v = stats.norm.cdf(rng.normal(size=n) / scale)
        k = rng.binomial(m, v, size=(seeds, n))
        inside = table[k]  # (S, n, L): the interval at level a holds the truth of rank k when |2k/m - 1| <= a
        counts[signed_coverage_from_inside(inside, m, LEVELS).verdict] += 1
    return counts


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd
    import seaborn as sns

    long = pd.DataFrame(rows).melt(id_vars=["design", "D"], value_vars=[f"p_{w}" for w in WORDS[:3]],
                                   var_name="word", value_name="probability")
    long["word"] = long["word"].str.removeprefix("p_")
    sns.set_theme(style="whitegrid", context="notebook")
    g = sns.relplot(data=long, x="D", y="probability", hue="word", col="design", kind="line", marker="o",
                    hue_order=list(WORDS[:3]), palette=["tab:green", "tab:red", "tab:blue"], height=3.6, aspect=1.25)
    for ax in g.axes.flat:
        for x in (-COVERAGE_MARGIN, COVERAGE_MARGIN):
            ax.axvline(x, color="0.3", ls="--", lw=1)
        ax.axhline(0.025, color="0.5", ls=":", lw=1)
        ax.text(COVERAGE_MARGIN, 1.02, " margin", color="0.3", fontsize=8, va="bottom")
        ax.text(-COVERAGE_MARGIN, 1.02, "-margin ", color="0.3", fontsize=8, va="bottom", ha="right")
        ax.set_ylim(-0.02, 1.08)
    g.set_axis_labels("true deviation D (fraction)\ncoverage minus an exact sampler's", "probability of the word")
    g.set_titles("{col_name}")
    g.figure.subplots_adjust(top=0.86)
    g.figure.suptitle(f"Operating characteristic of signed coverage (margin {COVERAGE_MARGIN}, dotted: 0.025)")
    path.parent.mkdir(parents=True, exist_ok=True)
    g.figure.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(g.figure)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=1000, help="simulated test sets per point (>= 400)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--step", type=float, default=0.005, help="grid step of the true D in [-0.05, 0.05]")
    ap.add_argument("--out", type=Path, default=ROOT / "book/figures/operating_characteristic.png")
    ap.add_argument("--plot-only", action="store_true", help="redraw the figure from the CSV beside it")
    args = ap.parse_args(argv)
    if args.plot_only:
        with args.out.with_suffix(".csv").open() as f:
            plot([{k: (v if k == "design" else float(v)) for k, v in r.items()} for r in csv.DictReader(f)], args.out)
        return 0
    if args.repeats < 400:
        ap.error("--repeats: at least 400 per point")
    grid = np.round(np.arange(-0.05, 0.05 + args.step / 2, args.step), 6) + 0.0  # + 0.0: no negative zero
    rng = np.random.default_rng(args.seed)
    rows = []
    for d in designs():
        for target in grid:
            scale = width_for(float(target), d["m"])
            c = words(d["n"], d["m"], d["seeds"], scale, args.repeats, rng)
            rows.append({"design": d["design"], "n_events": d["n"], "m": d["m"], "n_seeds": d["seeds"],
                         "D": float(target), "width": round(scale, 5), "repeats": args.repeats,
                         **{f"p_{w}": c[w] / args.repeats for w in WORDS}})
            print(f"{d['design']}: D = {target:+.3f} (width {scale:.4f}): "
                  + ", ".join(f"{w} {c[w] / args.repeats:.3f}" for w in WORDS), flush=True)
    csv_path = args.out.with_suffix(".csv")
    csv_path.parent.mkdir(parents=True, exist_ok=True)
    with csv_path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(rows, args.out)
    print(f"wrote {args.out} and {csv_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
