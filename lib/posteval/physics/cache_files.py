"""Housekeeping of the event cache: one run per file at a time, and no leftovers of dead runs.

A run of ``<name>.h5`` holds the lock file ``<name>.lock`` (``fcntl.flock``; released by the
kernel when its process dies) and writes ``<name>.chunks/`` and temporary files named
``*.tmp<pid>`` (see :func:`posteval.physics.event_file.write_atomic`). Process ids are those of this
machine: a cache folder shared by several machines must not be cleaned while another one runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import sys
from pathlib import Path

from posteval.progress import tqdm

_TEMP = re.compile(r"\.tmp(\d+)$")


@contextlib.contextmanager
def locked(path: str | os.PathLike, *, progress: bool = True):
    """Hold an exclusive lock on the file ``path`` (created if missing) for the ``with`` block."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if progress:
                tqdm.write(f"waiting for another process that holds {path}", file=sys.stderr)
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def is_locked(path: str | os.PathLike) -> bool:
    """True if a process (this one included) holds the lock file ``path``."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def remove_tree(path: Path) -> None:
    """Remove the folder ``path`` and its contents, if it exists."""
    shutil.rmtree(path, ignore_errors=True)  # a concurrent clean-up may remove it first


def remove_temp_files(cache: Path, name: str) -> list[Path]:
    """Remove every temporary file of run ``name`` (call it with the run's lock held)."""
    paths = list(cache.glob(f"{name}.h5.tmp*")) + list((cache / f"{name}.chunks").glob("*.tmp*"))
    return [p for p in paths if _TEMP.search(p.name) and _unlink(p)]


def remove_leftovers(cache: Path) -> list[Path]:
    """Remove temporary files of dead processes, and chunk folders of runs that finished.

    A run finished when its ``<name>.h5`` exists (it appears only once complete) and nobody
    holds its lock. Returns the removed paths.
    """
    removed = []
    for p in list(cache.glob("*.tmp*")) + list(cache.glob("*.chunks/*.tmp*")):
        m = _TEMP.search(p.name)
        if m and not _alive(int(m.group(1))) and _unlink(p):
            removed.append(p)
    for chunk_dir in idle_chunk_folders(cache):
        if chunk_dir.with_suffix(".h5").exists():
            remove_tree(chunk_dir)
            removed.append(chunk_dir)
    return removed


def idle_chunk_folders(cache: Path) -> list[Path]:
    """Chunk folders in ``cache`` whose run is not in progress (its lock is free)."""
    return [d for d in sorted(cache.glob("*.chunks")) if d.is_dir() and not is_locked(d.with_suffix(".lock"))]
