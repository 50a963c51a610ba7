"""Arrays read from files for the protocol report: ``.npy``, ``.npz``, HDF5 and Parquet.

A file is named as ``FILE[:KEY]``:

* ``.npy``: one array, no key;
* ``.npz``: the array named KEY (optional when the archive holds one array);
* ``.h5`` / ``.hdf5`` / ``.hdf``: the dataset at path KEY (optional when the file holds one dataset);
* ``.parquet`` / ``.pq``: without a key, every column side by side, ``(n, columns)``; with a key,
  that column, ``(n,)``, or ``(n, ...)`` when its cells hold lists (samples per event).

Every problem raises :class:`InputFileError`, a ``ValueError`` whose message names the file and key.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

SUFFIXES = {
    ".npy": "npy",
    ".npz": "npz",
    ".h5": "hdf5",
    ".hdf5": "hdf5",
    ".hdf": "hdf5",
    ".parquet": "parquet",
    ".pq": "parquet",
}


class InputFileError(ValueError):
    """A file given to the protocol report cannot be read as a finite numeric array."""


def split_spec(spec: str) -> tuple[Path, str | None]:
    """``FILE[:KEY]`` as (path, key); the key is whatever follows the last ``:`` after an existing file."""
    if Path(spec).is_file():
        return Path(spec), None
    head, sep, key = spec.rpartition(":")
    if sep and head and Path(head).is_file():
        return Path(head), key or None
    raise InputFileError(f"{spec}: no such file")


def describe(path: Path, key: str | None) -> str:
    """``FILE`` or ``FILE:KEY``, as the user wrote it."""
    return f"{path}:{key}" if key else str(path)


def _only_name(names: list[str], what: str, where: str) -> str:
    if len(names) != 1:
        raise InputFileError(f"{where}: holds {len(names)} {what} ({', '.join(names[:8]) or 'none'}): name one as FILE:KEY")
    return names[0]


def _read_npy(path: Path, key: str | None):
    if key:
        raise InputFileError(f"{describe(path, key)}: a .npy file holds one array and takes no key")
    return np.load(path, allow_pickle=False)


def _read_npz(path: Path, key: str | None):
    with np.load(path, allow_pickle=False) as archive:
        name = key or _only_name(list(archive.files), "arrays", str(path))
        if name not in archive.files:
            raise InputFileError(f"{describe(path, key)}: no array {name!r} (have: {', '.join(archive.files)})")
        return archive[name]


def _read_hdf5(path: Path, key: str | None):
    try:
        import h5py
    except ImportError as exc:
        raise InputFileError(f"{path}: reading HDF5 needs h5py (pip install 'posteval[io]')") from exc
    with h5py.File(path, "r") as fh:
        if key is None:
            found = []
            fh.visititems(lambda name, obj: found.append(name) if isinstance(obj, h5py.Dataset) else None)
            key_ = _only_name(found, "datasets", str(path))
        else:
            key_ = key
        obj = fh.get(key_)
        if not isinstance(obj, h5py.Dataset):
            raise InputFileError(f"{describe(path, key_)}: no dataset at this path")
        return obj[()]


def _read_parquet(path: Path, key: str | None):
    import pandas as pd

    try:
        frame = pd.read_parquet(path, columns=None if key is None else [key])
    except ImportError as exc:
        raise InputFileError(f"{path}: reading Parquet needs pyarrow (pip install 'posteval[io]')") from exc
    except (KeyError, ValueError) as exc:
        raise InputFileError(f"{describe(path, key)}: no column {key!r}") from exc
    if key is None:
        return frame.to_numpy()
    column = frame[key].to_numpy()
    if column.dtype == object:
        try:
            return np.stack([np.asarray(cell, dtype=float) for cell in column])
        except (TypeError, ValueError) as exc:
            raise InputFileError(f"{describe(path, key)}: cells are not lists of numbers of one length") from exc
    return column


_READERS = {"npy": _read_npy, "npz": _read_npz, "hdf5": _read_hdf5, "parquet": _read_parquet}


def read_array(spec: str) -> tuple[np.ndarray, str]:
    """The finite float array named by ``FILE[:KEY]``, and its description for messages."""
    path, key = split_spec(spec)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputFileError(f"{path}: unknown file type {path.suffix!r} (expected one of {', '.join(SUFFIXES)})")
    where = describe(path, key)
    try:
        raw = _READERS[kind](path, key)
    except InputFileError:
        raise
    except (OSError, ValueError, KeyError) as exc:
        raise InputFileError(f"{where}: cannot read as {kind}: {exc}") from exc
    try:
        arr = np.asarray(raw, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputFileError(f"{where}: not numeric (dtype {np.asarray(raw).dtype})") from exc
    if arr.size == 0:
        raise InputFileError(f"{where}: empty array, shape {arr.shape}")
    bad = int(np.count_nonzero(~np.isfinite(arr)))
    if bad:
        raise InputFileError(f"{where}: {bad} of {arr.size} values are NaN or infinite")
    return arr, where
