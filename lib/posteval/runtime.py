"""What a run needs from its machine: seeds, portable CPU kernels, the device, the commit, atomic writes.

The one home of these utilities, below every other layer: the domain code (metrics, models, physics,
rubric) imports them from here, the runner (:mod:`posteval.book`) on top re-exports them for the
chapters. Importing this module imports numpy, not torch.

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

import numpy as np

from .paths import ROOT

__all__ = ["PORTABLE_KERNELS", "atomic_write_text", "device_name", "git_commit", "portable_kernels", "seed_everything"]


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


PORTABLE_KERNELS = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "AVX2"}
"""CPU kernels that compute the same digits on every x86-64 machine with AVX2 (Intel since 2013, AMD
since 2015), Intel or AMD: ATen's AVX2 kernels (not the AVX-512 ones it picks where the CPU has them;
they use only exactly rounded instructions, no approximate reciprocals, so both vendors' CPUs agree),
MKL's conditional-numerical-reproducibility branch ``COMPATIBLE`` (Intel documents its ``AVX2`` branch
as reproducible on Intel CPUs only: on other CPUs MKL falls back to its ``AUTO`` dispatch) and oneDNN's
AVX2 kernels (torch's CPU training calls oneDNN, which otherwise picks its AVX-512 kernels where the CPU
has them). Training follows a different path on each kernel class (measured: 10 of chapter 3's 96
verdict words differed between two machines of this workplace; on an AVX-512 AMD EPYC, with oneDNN
unpinned, chapter 3's MSE transformer stopped after 18 epochs instead of 24, and 6 of its 117 verdict
words changed), so the chapters choose these; a value already in the environment wins. ATen's AVX2
kernels train chapter 3's models in about three quarters of the CPU-seconds of its baseline kernels
(``default``, this book's choice until 2026-12-06: as portable, slower; ``benchmarks/bench_kernels.py``).

Reference: Intel, *oneMKL Developer Guide*, "Getting Started with Conditional Numerical Reproducibility"
(MKL_CBWR); PyTorch, ``ATEN_CPU_CAPABILITY`` (``torch.backends.cpu.get_cpu_capability``).
"""


def portable_kernels() -> dict[str, str]:
    """Choose :data:`PORTABLE_KERNELS` for this process and the workers it starts (environment
    variables that torch, MKL and oneDNN read at their first operation) and return the ones in force.

    Raises RuntimeError when torch has already chosen other CPU kernels (an operation ran before),
    and when the CPU lacks what the choice needs (AVX2): such a machine computes other digits than the
    reference notebooks, so it must say so by setting the variables itself (``ATEN_CPU_CAPABILITY=default``).

    >>> PORTABLE_KERNELS["ATEN_CPU_CAPABILITY"], PORTABLE_KERNELS["MKL_CBWR"]
    ('avx2', 'COMPATIBLE')
    """
    chosen = {k: os.environ.setdefault(k, v) for k, v in PORTABLE_KERNELS.items()}
    torch = sys.modules.get("torch")
    if torch is not None:
        wanted = chosen["ATEN_CPU_CAPABILITY"].lower()
        if wanted == "avx2" and not torch.cpu._is_avx2_supported():
            raise RuntimeError("this CPU lacks AVX2, which the portable kernels (ATEN_CPU_CAPABILITY=avx2) need: "
                               "set ATEN_CPU_CAPABILITY=default ONEDNN_MAX_CPU_ISA=ALL before starting Python "
                               "(trained numbers will then differ from the reference notebooks')")
        got = torch.backends.cpu.get_cpu_capability()
        if got.lower() != wanted:
            raise RuntimeError(f"torch already runs its {got} CPU kernels, not "
                               f"ATEN_CPU_CAPABILITY={chosen['ATEN_CPU_CAPABILITY']}: call seed_everything "
                               "before the first torch operation (or set the variable before starting Python)")
    return chosen


def seed_everything(seed: int, *, threads: int | None = None) -> None:
    """Seed Python, numpy and torch, make torch deterministic (optionally fix its threads) and
    choose :func:`portable_kernels`.

    torch is seeded only when the chapter has already imported it (import it first): a
    numpy-only chapter never loads torch.
    """
    if not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed: expected a non-negative integer, got {seed!r}")
    random.seed(seed)

    np.random.seed(seed)
    torch = sys.modules.get("torch")
    if torch is None:
        return
    portable_kernels()
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
