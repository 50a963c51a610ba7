#!/usr/bin/env bash
# One chapter at full scale on one GPU machine, kept as results/full/NN_name.json with its
# provenance (clean commit, device, library versions, sizes in the parameters, seconds).
# Usage, from the repository root of a clean checkout:
#   bash scripts/run_full.sh 01|02|03 [--cpu] [--set KEY=VALUE ...]
# --cpu runs without a GPU (the CPU stand-in when none is lent); --set changes one parameter of
# the full profile (e.g. --set n_train=200000 --set training.max_seconds=600). The record keeps
# profile "full" and lists every change under meta.overrides with the value it replaced, and the
# chapter's "at full scale" section says which sizes were shrunk.
#   01: no training on a GPU: 2e6 evaluation events, 20 repeats (~5 min on a CPU; use --cpu).
#   02: 1e6 training events, 5 seeds x 6 learned models.
#   03: generates 1e6 events in mode "full" (~9 min on 16 processes), trains 5 seeds x 6 models
#       with the nu2flows architecture (<= 75 min: max_seconds per model), then samples 5 seeds x 4 samplers.
# Chapter 4's sweep keeps its own record: python -m posteval.rubric.sweep (see book/running_at_scale.md).
set -euo pipefail
cd "$(dirname "$0")/.."
CHAPTER=${1:?usage: bash scripts/run_full.sh 01|02|03 [--cpu] [--set KEY=VALUE ...]}
shift
CPU=0
SETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) CPU=1 ;;
    --set) SETS+=(--set "${2:?--set needs KEY=VALUE}"); shift ;;
    *) echo "error: unknown option $1 (expected --cpu or --set KEY=VALUE)" >&2; exit 2 ;;
  esac
  shift
done
case "$CHAPTER" in
  01) STEM=01_total_variance ;;
  02) STEM=02_synthetic_bimodal ;;
  03) STEM=03_top_quark ;;
  *) echo "error: chapter $CHAPTER has no full run here (01, 02 or 03)" >&2; exit 2 ;;
esac
PY=${PY:-.venv/bin/python}
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "error: the checkout has uncommitted changes; the record must name a clean commit" >&2
  exit 1
fi
if [ "$CPU" = 0 ]; then
  "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'error: no CUDA device visible (--cpu runs without one)')"
fi
"$PY" -m posteval.book run "$CHAPTER" --profile full ${SETS[@]+"${SETS[@]}"}
mkdir -p results/full
STEM=$STEM "$PY" - <<'PYEOF'
import json
import os
from importlib import metadata
from pathlib import Path

stem = os.environ["STEM"]
record = json.loads(Path(f"book/results/{stem}.json").read_text())
meta = record["meta"]
assert meta["profile"] == "full", meta["profile"]
assert not meta["git_commit"].endswith("-dirty"), meta["git_commit"]
meta["versions"] = {name: metadata.version(name) for name in ("numpy", "torch", "zuko", "scipy", "pandas")}
meta["cpu_count"] = os.cpu_count()
models = [line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
          if line.startswith("model name")] if Path("/proc/cpuinfo").exists() else []
meta["cpu_model"] = models[0] if models else "unknown"
out = Path(f"results/full/{stem}.json")
tmp = out.with_suffix(".json.tmp")
tmp.write_text(json.dumps(record, indent=1, sort_keys=True))
tmp.replace(out)
print(f"{out}: {meta['seconds']} s on {meta['device']}, commit {meta['git_commit']}")
PYEOF
