#!/usr/bin/env bash
# Issue 25: every neutrino-coordinate design of chapter 3 measured the same way, inside the chapter's
# own pipeline at ci sizes (its cells up to the model definitions, then scripts/designs03_cell.py):
# the flow on Cartesian targets, in lepton-frame coordinates (D) and in the joint-feasible
# coordinates (FH), each on the chapter's seeds, scored by posteval.physics.consistency and CRPS with seed-and-event intervals.
# Writes results/designs/03_neutrino_coordinates.json (a kept record with provenance); the chapter
# shows it, it is not rerun in CI. Usage: bash scripts/designs03.sh   (about 10 min on 2 idle cores)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT_DIR:-/tmp/designs03}
mkdir -p "$out"
.venv/bin/python scripts/chapter03_prefix.py "$out" scripts/designs03_cell.py
.venv/bin/papermill "$out/in.ipynb" "$out/out.ipynb" -f params/ci/03_top_quark.yaml --cwd chapters --log-output
