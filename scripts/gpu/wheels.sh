#!/usr/bin/env bash
# The wheels scripts/gpu/full03.sh installs on the GPU machine (Python 3.12, x86-64), downloaded here into
# .whl/ (ignored by git through .git/info/exclude; name it in the device run's `carry`).
# The machine already has torch, numpy, scipy, pandas, matplotlib, seaborn, h5py, pyyaml, tqdm, attrs,
# requests, pygments, psutil, markdown-it-py and the rest of its image; these are what chapter 3 and the
# book's runner need beyond it, with their dependencies, pinned as resolved for cp312 on 2026-12-04.
# debugpy and jedi are left out (5.3 MB and 4.8 MB): ipykernel and IPython run without them. 40 wheels, 39.0 MB.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
mkdir -p .whl
python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_26_x86_64 \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d .whl \
  papermill==2.7.0 ipykernel==7.4.0 jupytext==1.19.6 zuko==1.6.0 pythia8mc==8.317.2 fastjet==3.5.2.0 \
  awkward==2.14.0 awkward_cpp==57 vector==1.9.0 lazy_importer==0.1.0 \
  asttokens==3.0.2 comm==0.2.3 entrypoints==0.4.2 executing==2.3.0 fastjsonschema==2.22.3 \
  importlib_metadata==10.2.0 ipython==9.18.1 ipython_pygments_lexers==1.1.1 jsonschema==4.26.0 \
  jsonschema_specifications==2025.9.1 jupyter_client==8.10.0 jupyter_core==5.9.1 matplotlib_inline==0.2.2 \
  mdit_py_plugins==0.7.0 nbclient==0.11.0 nbformat==5.11.1 nest_asyncio2==1.7.4 pexpect==4.9.0 \
  platformdirs==4.14.9 prompt_toolkit==3.0.53 ptyprocess==0.7.0 pure_eval==0.2.4 pyzmq==27.3.0 \
  referencing==0.37.0 rpds_py==2026.9.1 stack_data==0.6.3 tenacity==9.2.1 tornado==6.6.1 traitlets==5.16.1 \
  wcwidth==0.9.4
echo "$(ls .whl/*.whl | wc -l) wheels, $(du -sb .whl | cut -f1) bytes in .whl/ (a device run carries at most 64 MiB with the tree)"
