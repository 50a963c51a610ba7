#!/usr/bin/env bash
# Chapter 3 at full scale in one command on one GPU machine (an H200 with 16 cores), rehearsed on a CPU.
#
#   bash scripts/gpu/full03.sh --commit SHA [--rehearse] [--set KEY=VALUE ...]
#
# 1. installs the wheels carried in .whl/ (if that folder exists) into /tmp/site: the GPU machine has
#    torch, numpy, scipy, pandas, matplotlib, seaborn, h5py but not pythia8mc, fastjet, awkward, vector,
#    zuko, papermill, ipykernel or jupytext (scripts/gpu/wheels.sh downloads them here);
# 2. runs the chapter with the book's own runner, `python -m posteval.book run 03 --profile full`
#    (papermill, params/full/03_top_quark.yaml): generation on 16 processes, 5 seeds x 6 models trained
#    side by side on the one GPU (train_workers processes), sampling, every protocol and physics number;
# 3. keeps the record as results/full/03_top_quark.json with its provenance and the seconds of each
#    stage (`python -m posteval.full_scale keep`), and copies it, the executed notebook and the log to
#    $OUT when that is set (the folder the device machine hands back).
#
# --commit names the clean commit the working tree was copied from; where git works here it must be HEAD
# of a clean checkout. The device machine's copy of the files carries a .git of an older commit: run it
# there with GIT_DIR=/nonexistent, so that --commit alone names the source.
# --rehearse: the same script and code path on a CPU at a size that runs here in minutes (every
# change is listed in the record's meta.overrides, so such a record is never labelled "at full scale").
# myst_nb (the Sphinx side of glue) is not on the GPU machine: where it is missing, a stub whose glue()
# does nothing stands in (/tmp/posteval_stub); glue only feeds the HTML book, built later from the record.
set -euo pipefail
cd "$(dirname "$0")/../.."
COMMIT=""
SETS=()
REHEARSE=0
while [ $# -gt 0 ]; do
  case "$1" in
    --commit) COMMIT="${2:?--commit needs a SHA}"; shift ;;
    --rehearse) REHEARSE=1 ;;
    --set) SETS+=(--set "${2:?--set needs KEY=VALUE}"); shift ;;
    *) echo "error: unknown option $1 (expected --commit SHA, --rehearse or --set KEY=VALUE)" >&2; exit 2 ;;
  esac
  shift
done
if git rev-parse HEAD >/dev/null 2>&1; then
  HEAD=$(git rev-parse HEAD)
  if [ -n "$COMMIT" ] && [ "$COMMIT" != "$HEAD" ]; then
    echo "error: --commit $COMMIT is not HEAD ($HEAD)" >&2; exit 2
  fi
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
    echo "error: the checkout has uncommitted changes; the record must name a clean commit" >&2; exit 1
  fi
  COMMIT=$HEAD
elif [ -z "$COMMIT" ]; then
  echo "error: no git checkout here: name the commit this tree was copied from with --commit SHA" >&2; exit 2
fi
if [ "$REHEARSE" = 1 ]; then
  # CPU sizes: the ci profile's data, splits, model widths and heads, the full profile's seeds, samples
  # and training settings (a 20 s net per model).
  SETS=(--set device=cpu --set n_generated=40000 --set n_workers=2 --set other_mode_events=2000
        --set train_workers=2 --set threads=1
        --set 'splits={train: 0.6, val: 0.1, calib: 0.1, test: 0.2}'
        --set 'encoder={width: 32, heads: 4, self_layers: 2, class_layers: 1, ff_hidden: 64, embed_hidden: 64, context_dim: 16, context_hidden: 32, dropout: 0.0}'
        --set 'heads={transformer_mse: {hidden: 64}, transformer_mmd: {hidden: 64, mmd_weight: 1.0, bandwidths: [0.1, 0.3, 1.0, 3.0]}, flow: {transforms: 4, hidden: [64, 64], bins: 8, bound: 5.0}, cfm: {hidden: 64, layers: 3, steps: 16}}'
        --set training.max_seconds=20 ${SETS[@]+"${SETS[@]}"})
fi
if [ -z "${PY:-}" ]; then PY=python3; [ -x .venv/bin/python ] && PY=.venv/bin/python; fi
export PYTHONUNBUFFERED=1 CUBLAS_WORKSPACE_CONFIG=:4096:8 TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1
export POINTWISE_CACHE=${POINTWISE_CACHE:-$PWD/data_cache}
t0=$(date +%s.%N)
NEEDED="import papermill, ipykernel, jupytext, zuko, pythia8mc, fastjet, awkward, vector"
if ! "$PY" -c "$NEEDED" 2>/dev/null && [ -d .whl ] && ls .whl/*.whl >/dev/null 2>&1; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
  # pip --target puts a wheel's data files under /tmp/site/share: Pythia's settings (xmldoc) are found
  # there only through PYTHIA8DATA ("PYTHIA Abort from Pythia::Pythia: settings unavailable" otherwise)
  [ -d /tmp/site/share/Pythia8/xmldoc ] && export PYTHIA8DATA=/tmp/site/share/Pythia8/xmldoc
fi
"$PY" -c "$NEEDED" || { echo "error: $PY lacks a package the chapter needs (carry its wheel in .whl/)" >&2; exit 1; }
"$PY" -c "import posteval" 2>/dev/null || export PYTHONPATH=$PWD/lib${PYTHONPATH:+:$PYTHONPATH}
if ! "$PY" -c "import myst_nb" 2>/dev/null; then
  mkdir -p /tmp/posteval_stub/myst_nb
  printf '"""Stand-in for myst_nb where Sphinx is not installed: glue() does nothing."""\n\n\ndef glue(name, variable, display=True):\n    return None\n' \
    > /tmp/posteval_stub/myst_nb/__init__.py
  export PYTHONPATH=/tmp/posteval_stub:$PYTHONPATH
fi
t1=$(date +%s.%N)
"$PY" -c "import torch, posteval; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), torch.cuda.get_device_name(0) if torch.cuda.is_available() else '')"
"$PY" -m posteval.book run 03 --profile full ${SETS[@]+"${SETS[@]}"}
t2=$(date +%s.%N)
INSTALL=$("$PY" -c "print(round($t1 - $t0, 1))")
RUNNER=$("$PY" -c "print(round($t2 - $t1, 1))")
"$PY" -m posteval.full_scale keep 03_top_quark --commit "$COMMIT" --seconds "install and import checks=$INSTALL" \
  --seconds "runner, whole chapter=$RUNNER" --env TORCH_ALLOW_TF32_CUBLAS_OVERRIDE --env CUBLAS_WORKSPACE_CONFIG
if [ -n "${OUT:-}" ]; then
  cp results/full/03_top_quark.json "$OUT/03_top_quark.json"
  cp book/executed/03_top_quark.ipynb "$OUT/03_top_quark.executed.ipynb"
fi
