#!/usr/bin/env bash
# Chapter 3 at full scale on one GPU machine (16 cores): generates 1e6 events in mode "full",
# trains 5 seeds x 4 models with the nu2flows architecture, and keeps the record as
# results/full/03_top_quark.json (commit, device, library versions, sizes, seconds).
# Usage, from the repository root of a clean checkout:  bash scripts/run_full_03.sh
# Expected: generation ~9 min (16 processes), training <= 50 min (max_seconds per model), ~1 h.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "error: the checkout has uncommitted changes; the record must name a clean commit" >&2
  exit 1
fi
"$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'error: no CUDA device visible')"
export PYTHONPATH=$PWD
"$PY" -m lib.book run 03 --profile full
mkdir -p results/full
"$PY" - <<'PYEOF'
import json
from importlib import metadata
from pathlib import Path

record = json.loads(Path("book/results/03_top_quark.json").read_text())
meta = record["meta"]
assert meta["profile"] == "full", meta["profile"]
assert not meta["git_commit"].endswith("-dirty"), meta["git_commit"]
meta["versions"] = {name: metadata.version(name) for name in ("numpy", "torch", "zuko", "scipy", "pandas")}
out = Path("results/full/03_top_quark.json")
tmp = out.with_suffix(".json.tmp")
tmp.write_text(json.dumps(record, indent=1, sort_keys=True))
tmp.replace(out)
print(f"{out}: {meta['seconds']} s on {meta['device']}, commit {meta['git_commit']}")
PYEOF
