#!/usr/bin/env bash
# Issue 26, deliverable 2: chapter 4's conditions of the claims not resolved at 10 seeds, at more seeds.
# One sweep per seed (a checkpoint each: results/full/<NAME>_parts/seed_NN.json), then after every seed
# the completed seeds and the seeds of BASE (default: the 10 seeds of results/full/04_proxy_rubric.json;
# the same code: every seed is seeded on its own) are combined into results/full/<NAME>.json.
# Usage, from the repository root of a clean checkout:  bash scripts/power04.sh FIRST LAST [OUT_DIR]
#   the power run:               bash scripts/power04.sh 10 39
#   the heterogeneous ensemble:  CONDITIONS=ensemble_mixed NAME=04_proxy_rubric_mixed BASE= bash scripts/power04.sh 0 39
#   claim (d)'s best member:     CONDITIONS=proxy_follow NAME=04_proxy_rubric_follow bash scripts/power04.sh 10 39
#   claim (e)'s schemes:         CONDITIONS="agg_and_gate agg_gate agg_modulated agg_implicit" \
#                                NAME=04_proxy_rubric_aggregation bash scripts/power04.sh 10 39
#   a second worker on the same OUT_DIR, from the other end: ... bash scripts/power04.sh 39 0 OUT_DIR (a seed whose
#   checkpoint exists is skipped; both write the combined record atomically)
set -euo pipefail
cd "$(dirname "$0")/.."
FIRST=${1:?usage: power04.sh FIRST LAST [OUT_DIR]}
LAST=${2:?usage: power04.sh FIRST LAST [OUT_DIR]}
OUT=${3:-results/full}
PY=${PY:-.venv/bin/python}
CONDITIONS=${CONDITIONS:-"no_proxy proxy_sft proxy_rl ensemble3"}
NAME=${NAME:-04_proxy_rubric_power}
BASE=${BASE-results/full/04_proxy_rubric.json}
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "error: the checkout has uncommitted changes; the record must name a clean commit" >&2
  exit 1
fi
mkdir -p "$OUT/${NAME}_parts"
STEP=1; [ "$FIRST" -gt "$LAST" ] && STEP=-1  # FIRST > LAST: descending (a second worker from the other end)
for s in $(seq "$FIRST" "$STEP" "$LAST"); do
  part=$(printf "%s/%s_parts/seed_%02d.json" "$OUT" "$NAME" "$s")
  if [ ! -f "$part" ]; then
    "$PY" -m posteval.rubric.sweep --params params/full/04_proxy_rubric.yaml --seeds "$s" \
      --conditions $CONDITIONS --workers 1 --no-progress --out "$part"
  fi
  "$PY" -m posteval.rubric.sweep --combine $BASE "$OUT/${NAME}_parts"/seed_*.json \
    --conditions $CONDITIONS --out "$OUT/$NAME.json"
done
