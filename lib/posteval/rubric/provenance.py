"""Provenance of a sweep record: commit, library versions, machine, workers, wall time."""

from __future__ import annotations

import os
import platform
import time
from importlib import metadata

from ..runtime import PORTABLE_KERNELS, device_name, git_commit

#: Libraries whose versions change the numbers of the sweep.
LIBRARIES = ("torch", "numpy", "pandas", "scipy", "transformers", "trl")


def library_versions() -> dict:
    """Installed versions of :data:`LIBRARIES` (``None`` when one is not installed) and of Python."""
    out = {"python": platform.python_version()}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def sweep_provenance(*, workers: int, wall_seconds: float, command: str) -> dict:
    """What a sweep record needs to be reproduced and judged: see the keys."""
    return {"git_commit": git_commit(), "versions": library_versions(), "device": device_name(),
            "cpu_count": os.cpu_count(), "workers": int(workers), "wall_seconds": float(wall_seconds),
            "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "command": command,
            "env": {k: os.environ[k] for k in PORTABLE_KERNELS if k in os.environ}}


def sweep_seconds(seconds) -> float:
    """Wall seconds of a sweep record: its ``total``, summed over the parts of a record merged with ``--merge``."""
    if not isinstance(seconds, dict):
        raise ValueError(f"seconds must be a sweep record's 'seconds' mapping, got {type(seconds).__name__}")
    if "total" in seconds:
        return float(seconds["total"])
    parts = [seconds[k] for k in ("base", "extra") if isinstance(seconds.get(k), dict)]
    if not parts:
        raise ValueError("seconds has neither 'total' nor merged 'base'/'extra' parts")
    return sum(sweep_seconds(p) for p in parts)
