"""What a run needs from its machine: seeds, portable CPU kernels, the device, the commit, atomic writes.

The one home of these utilities, below every other layer: the domain code (metrics, models, physics,
rubric) imports them from here, the runner (:mod:`posteval.book`) on top re-exports them for the
chapters. Importing this module imports neither numpy nor torch, so that the kernel settings can be
made before either starts (:func:`portable_environment`).

>>> import random
>>> seed_everything(3); a = random.random()
>>> seed_everything(3); a == random.random()
True
>>> git_commit(Path("/")) in ("unknown",)
True
"""

from __future__ import annotations

import numbers
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from .paths import ROOT

__all__ = ["NUMPY_SIMD_ABOVE_BASELINE", "PORTABLE_KERNELS", "portable_environment", "atomic_write_text", "device_name", "git_commit", "portable_kernels", "seed_everything"]


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename (POSIX
    ``rename(2)`` is atomic within one file system), so that a reader, or a run interrupted half way,
    never sees a half-written file.

    >>> import tempfile
    >>> target = Path(tempfile.mkdtemp()) / "sub" / "a.json"
    >>> atomic_write_text(target, "{}")
    >>> target.read_text(), sorted(p.name for p in target.parent.iterdir())
    ('{}', ['a.json'])
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


#: numpy's SIMD kernels above its x86-64 baseline (numpy 2.4's names: X86_V3 is AVX2 with FMA3, X86_V4 and
#: AVX512_* the AVX-512 groups), switched off by :data:`PORTABLE_KERNELS`.
NUMPY_SIMD_ABOVE_BASELINE = "X86_V3,X86_V4,AVX512_ICL,AVX512_SPR"
PORTABLE_KERNELS = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41",
                    "NPY_DISABLE_CPU_FEATURES": NUMPY_SIMD_ABOVE_BASELINE}
"""CPU kernels that compute the same digits whatever the x86-64 CPU offers, Intel or AMD, with or without
AVX2 or AVX-512; with them (and oneDNN off, :func:`portable_kernels`) every library the chapters compute
with stops choosing its kernels by the CPU:

* torch: ATen's baseline kernels (``ATEN_CPU_CAPABILITY=default``), not the AVX2 or AVX-512 ones it
  picks by the CPU. Its AVX2 kernels were this book's choice from 2026-12-06 to 2026-12-07, for three
  quarters of the training CPU-seconds, but they are not portable as measured: on AMD EPYC machines
  (one with AVX-512, one without) 7 of chapter 3's verdict words, 1 of chapter 5's and the model
  contract's one-batch fit of the mixture density network came out otherwise than on the Intel Xeon
  that made the reference notebooks; with the baseline kernels they agreed (2026-12-04);
* oneDNN: off. torch's CPU GELU (the event encoder's activation) calls oneDNN's kernel, whose digits
  follow its ISA (measured: ``ONEDNN_MAX_CPU_ISA`` SSE41 against AVX2 changes the GELU and every model
  with the encoder, ``scripts/cross_dispatch.py``); off, torch computes it itself. ``SSE41`` for any
  call that still reaches oneDNN;
* MKL (torch's matrix products): its conditional-numerical-reproducibility branch ``COMPATIBLE``, the
  same code on every CPU (its ``AVX2`` branch is reproducible on Intel CPUs only, Intel's oneMKL guide);
* numpy: its baseline kernels (x86-64-v2) only. With its AVX2 or AVX-512 kernels, float32
  exp/log/sin/cos, tanh and the order of ties in ``argsort`` (and with AVX-512, float64 exp and log)
  differ from one CPU to another (measured: an AVX-512 AMD EPYC's float64 exp and log against an
  AVX2-only one's). numpy reads this variable when it is imported, so it must be set before Python
  starts: ``make book``, ``make test`` and ``make lab`` set it, and :func:`portable_kernels` refuses a
  numpy that started without it.

A value already in the environment wins. Checked by ``scripts/cross_dispatch.py`` (``make
test-other-machine``): the same digits for every kernel and every model class trained under each of
these with MKL's, oneDNN's and numpy's widest ISA forced otherwise, and other digits without them.

Reference: Intel, *oneMKL Developer Guide*, "Getting Started with Conditional Numerical Reproducibility"
(MKL_CBWR); PyTorch, ``ATEN_CPU_CAPABILITY`` (``torch.backends.cpu.get_cpu_capability``); oneDNN,
"CPU Dispatcher Control" (``ONEDNN_MAX_CPU_ISA``); NumPy, "CPU build options / runtime dispatch"
(``NPY_DISABLE_CPU_FEATURES``).
"""


def portable_environment(environ=None) -> dict[str, str]:
    """Put :data:`PORTABLE_KERNELS` into ``environ`` (default ``os.environ``) where it does not set them
    already, and return the values in force. Imports nothing: call it before numpy and torch start (the
    test suite's ``conftest.py``, the runner before it starts a chapter's kernel).

    >>> env = {"MKL_CBWR": "AUTO"}
    >>> portable_environment(env)["MKL_CBWR"], env["ATEN_CPU_CAPABILITY"]
    ('AUTO', 'default')
    """
    environ = os.environ if environ is None else environ
    return {k: environ.setdefault(k, v) for k, v in PORTABLE_KERNELS.items()}


def _numpy_simd_on(disabled: str) -> list[str]:
    """The CPU features of ``disabled`` (numpy's names, comma or space separated) that numpy runs kernels of."""
    from numpy._core._multiarray_umath import __cpu_features__

    return [f for f in disabled.replace(",", " ").split() if __cpu_features__.get(f)]


def portable_kernels() -> dict[str, str]:
    """Choose :data:`PORTABLE_KERNELS` for this process and the workers it starts (environment
    variables that torch, MKL and oneDNN read at their first operation), switch oneDNN off in torch,
    and return the settings in force.

    Raises RuntimeError when numpy started without its setting (it reads it at import: the variable
    must be set before Python starts) and when torch has already chosen other CPU kernels (an operation
    ran before): either would compute other digits than the reference notebooks, silently.

    >>> PORTABLE_KERNELS["ATEN_CPU_CAPABILITY"], PORTABLE_KERNELS["MKL_CBWR"]
    ('default', 'COMPATIBLE')
    """
    chosen = portable_environment()
    simd = _numpy_simd_on(chosen["NPY_DISABLE_CPU_FEATURES"])
    if simd:
        values = " ".join(f"{k}={v}" for k, v in chosen.items())
        raise RuntimeError(f"numpy runs its {', '.join(simd)} kernels, whose digits depend on the CPU: start Python "
                           f"with {values} in the environment (make book, make test and make lab do)")
    torch = sys.modules.get("torch")
    if torch is not None:
        wanted = chosen["ATEN_CPU_CAPABILITY"].lower()
        got = torch.backends.cpu.get_cpu_capability()
        if got.lower() != wanted:
            raise RuntimeError(f"torch already runs its {got} CPU kernels, not "
                               f"ATEN_CPU_CAPABILITY={chosen['ATEN_CPU_CAPABILITY']}: call seed_everything "
                               "before the first torch operation (or set the variable before starting Python)")
        torch.backends.mkldnn.enabled = False
    return chosen


def seed_everything(seed: int, *, threads: int | None = None) -> None:
    """Seed Python, numpy and torch, make torch deterministic (optionally fix its threads) and
    choose :func:`portable_kernels`.

    torch is seeded only when the chapter has already imported it (import it first): a
    numpy-only chapter never loads torch. Raises RuntimeError where :func:`portable_kernels` does.
    """
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed: expected a non-negative integer, got {seed!r}")
    import numpy as np

    portable_kernels()
    random.seed(seed)
    np.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is None:
        return
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    if threads is not None:
        torch.set_num_threads(threads)


def device_name() -> str:
    """``cuda:<name>`` when a CUDA device is visible, else ``cpu`` (imports torch)."""
    try:
        import torch
    except ImportError:
        return "cpu"
    return f"cuda:{torch.cuda.get_device_name(0)}" if torch.cuda.is_available() else "cpu"


def git_commit(where: Path = ROOT) -> str:
    """The commit checked out at ``where`` (the book's root), with ``-dirty`` when tracked files are
    modified; ``unknown`` outside git."""
    try:
        sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=where, capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return sha + ("-dirty" if dirty else "")
