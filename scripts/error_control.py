"""The table of the notation page's guarantee: P(any wrong word) and the share of claims decided rightly, for
the book's rule (Holm over every word of a family) and the rule it replaced (Holm over the claims), in the
designs of ``tests/test_error_control.py`` (the same simulation, the same seeds: normal intervals of
standard error 1, margins of 4 standard errors, 2,000 families per design).

Run from the repository root:  PYTHONPATH=lib .venv/bin/python scripts/error_control.py
Writes book/figures/error_control.csv (read by book/notation.md).
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "lib")]

from tests.test_error_control import DESIGNS, REPEATS, simulate  # noqa: E402

OUT = ROOT / "book" / "figures" / "error_control.csv"
KIND = {"direction": "a lower than b", "calibration": "calibrated"}


def main() -> None:
    rows = []
    for kind, design, k, margin in DESIGNS:
        seed = k + int(10 * margin)  # the test's seed for this design
        new, new_right = simulate(kind, design, k, margin, seed)
        old, old_right = simulate(kind, design, k, margin, seed, rule="claims")
        rows.append({"claims": f"{k} × “{KIND[kind]}”", "margin": f"{margin:g} se", "true effects": design,
                     "P(any wrong word), Holm over words": f"{new:.3f}",
                     "the same, Holm over claims": f"{old:.3f}",
                     "right words, over words": f"{new_right:.2f}", "over claims": f"{old_right:.2f}"})
        print(rows[-1], flush=True)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"{len(rows)} designs, {REPEATS} families each -> {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
