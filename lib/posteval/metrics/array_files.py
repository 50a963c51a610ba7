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

import hashlib
import os
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pandas as pd

from ._validation import real_array

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
    """``FILE[:KEY]`` as (path, key); the key is whatever follows the last ``:`` after an existing file.

    The key names a member of a ``.npz`` archive (a ZIP file of ``.npy`` arrays, NEP 1, 2007), a
    dataset path of an HDF5 file (The HDF Group, HDF5, 1998) or a column of a Parquet file (Apache
    Parquet, 2013). Raises :class:`InputFileError` when no such file exists, or when the path is a
    folder, a named pipe, a device or another thing that is not a regular file.

    >>> import numpy as np
    >>> np.savez("run.npz", samples=np.zeros((4, 2)))
    >>> path, key = split_spec("run.npz:samples")
    >>> str(path), key, split_spec("run.npz")[1]
    ('run.npz', 'samples', None)
    """
    if Path(spec).is_file():
        return Path(spec), None
    head, sep, key = spec.rpartition(":")
    if sep and head and Path(head).is_file():
        return Path(head), key or None
    for candidate in (spec, head if sep and head else None):
        if candidate is None or not os.path.lexists(candidate):
            continue
        what = Path(candidate)
        if what.is_dir():
            raise InputFileError(f"{candidate}: is a folder, not a file")
        kind = ("a named pipe (FIFO)" if what.is_fifo() else "a device" if what.is_char_device() or what.is_block_device()
                else "a socket" if what.is_socket() else "a broken link" if what.is_symlink() else "not a regular file")
        raise InputFileError(f"{candidate}: is {kind}, not a regular file; give the path of an array file")
    raise InputFileError(f"{spec}: no such file")


def describe(path: Path, key: str | None) -> str:
    """``FILE`` or ``FILE:KEY``, as the user wrote it (the inverse of :func:`split_spec`).

    The key as in :func:`split_spec`: an ``.npz`` member (NEP 1, 2007), an HDF5 dataset path or a
    Parquet column.

    >>> describe(Path("test.h5"), "targets/truth"), describe(Path("flow.npy"), None)
    ('test.h5:targets/truth', 'flow.npy')
    """
    return f"{path}:{key}" if key else str(path)


def _only_name(names: list[str], what: str, where: str) -> str:
    if len(names) != 1:
        raise InputFileError(f"{where}: holds {len(names)} {what} ({', '.join(names[:8]) or 'none'}): name one as FILE:KEY")
    return names[0]


def _read_parquet(path: Path, key: str | None):
    if path.stat().st_size > MAX_WHOLE_BYTES:
        raise InputFileError(f"{describe(path, key)}: a Parquet file is read whole, and this one holds more than "
                             f"{MAX_WHOLE_BYTES:,} bytes; save large sample arrays as .npy, .npz or HDF5")

    try:
        frame = pd.read_parquet(path, columns=None if key is None else [key])
    except ImportError as exc:
        raise InputFileError(f"{path}: reading Parquet needs pyarrow (pip install 'posteval[io]')") from exc
    except KeyError as exc:
        raise InputFileError(f"{describe(path, key)}: no column {key!r}") from exc
    except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        if key is not None and key in str(exc):  # pyarrow names the missing column
            raise InputFileError(f"{describe(path, key)}: no column {key!r}") from exc
        raise InputFileError(f"{describe(path, key)}: not a readable Parquet file ({str(exc).splitlines()[0]})") from exc
    if key is None:
        return frame.to_numpy()
    column = frame[key].to_numpy()
    if column.dtype == object:
        try:
            return np.stack([np.asarray(cell, dtype=float) for cell in column])
        except (TypeError, ValueError) as exc:
            raise InputFileError(f"{describe(path, key)}: cells are not lists of numbers of one length") from exc
    return column


def _parse(spec: str) -> tuple[Path, str | None, str, str]:
    """(path, key, file kind, description) of ``FILE[:KEY]``; an unknown suffix is an error."""
    path, key = split_spec(spec)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputFileError(f"{path}: unknown file type {path.suffix!r} (expected one of {', '.join(SUFFIXES)})")
    return path, key, kind, describe(path, key)


# ---------------------------------------------------------------------------------------------
# arrays read chunk by chunk along their first axis (events)
# ---------------------------------------------------------------------------------------------
#: numpy kinds accepted in input files: bool, signed and unsigned integers, floats
NUMERIC_KINDS = "biuf"
#: the most bytes an input read whole may hold (Fortran-ordered .npy/.npz arrays and Parquet
#: files); C-ordered .npy/.npz arrays and HDF5 datasets are read in chunks whatever their size
MAX_WHOLE_BYTES = 4 * 2**30


def _check_chunk(raw: np.ndarray, where: str, start: int) -> np.ndarray:
    arr = np.asarray(raw, dtype=float)
    bad = ~np.isfinite(arr)
    if bad.any():
        row = start + int(np.argwhere(bad)[0][0])
        raise InputFileError(f"{where}: {int(bad.sum())} values of events {start}..{start + len(arr) - 1} are NaN or "
                             f"infinite (first at event {row})")
    return arr


class ArraySource:
    """An input array named by ``FILE[:KEY]``, read in chunks of events (its first axis).

    ``shape`` and ``where`` are known before any data is read; :meth:`chunks` yields
    consecutive float64 chunks ``(rows, ...)``, each checked to be finite; :meth:`read` returns
    the whole array. ``.npy`` and ``.npz`` members are read sequentially from the file (the
    header's size is checked against the bytes the file holds before anything is allocated),
    HDF5 datasets slice by slice; Parquet is read whole (columns are not stored by rows).

    Example
    -------
    >>> np.save("samples.npy", np.ones((10, 4, 3)))
    >>> src = open_array("samples.npy")
    >>> src.shape, [len(c) for c in src.chunks(4)]
    ((10, 4, 3), [4, 4, 2])
    """

    def __init__(self, where: str, shape: tuple[int, ...], reader: Callable[[int], Iterator[np.ndarray]]) -> None:
        self.where, self.shape, self._reader = where, tuple(int(s) for s in shape), reader

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return len(self.shape)

    def chunks(self, rows: int) -> Iterator[np.ndarray]:
        """Consecutive float64 chunks of at most ``rows`` events, in order."""
        start = 0
        for raw in self._reader(max(1, int(rows))):
            yield _check_chunk(raw, self.where, start)
            start += len(raw)
        if start != self.shape[0]:
            raise InputFileError(f"{self.where}: ended after {start} of {self.shape[0]} events (truncated file?)")

    def reshaped(self, shape: tuple[int, ...]) -> ArraySource:
        """The same events and values read as ``shape`` (unit axes added or dropped, the events first).

        >>> np.save("col.npy", np.ones((10, 4, 1)))
        >>> open_array("col.npy").reshaped((10, 4)).read().shape
        (10, 4)
        """
        shape = tuple(int(s) for s in shape)
        if shape == self.shape:
            return self
        if not shape or shape[0] != self.shape[0] or int(np.prod(shape)) != int(np.prod(self.shape)):
            raise ValueError(f"{self.where}: shape {self.shape} cannot be read as {shape}")
        reader = self._reader
        return ArraySource(self.where, shape, lambda rows: (c.reshape(len(c), *shape[1:]) for c in reader(rows)))

    def read(self) -> np.ndarray:
        """The whole array, float64, checked to be finite."""
        parts = list(self.chunks(self.shape[0] or 1))
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)


def _npy_stream_source(fh_factory, where: str, size: int) -> ArraySource:
    """Source of the .npy stream that ``fh_factory()`` opens (``size`` bytes in all)."""
    with fh_factory() as fh:
        try:
            version = np.lib.format.read_magic(fh)
            read_header = {(1, 0): np.lib.format.read_array_header_1_0,
                           (2, 0): np.lib.format.read_array_header_2_0}.get(version)
            if read_header is None:
                raise ValueError(f"unsupported .npy format version {version}")
            shape, fortran, dtype = read_header(fh)
        except (ValueError, EOFError) as exc:
            raise InputFileError(f"{where}: not a .npy array ({exc})") from exc
        offset = fh.tell()
    if dtype.kind not in NUMERIC_KINDS or dtype.hasobject:
        raise InputFileError(f"{where}: dtype {dtype} is not real numeric (expected bool, integer or float)")
    if len(shape) == 0 or 0 in shape:
        raise InputFileError(f"{where}: empty array, shape {shape}")
    need = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if offset + need > size:
        raise InputFileError(f"{where}: header claims shape {shape} of {dtype} ({need:,} bytes) but the file holds "
                             f"{size - offset:,} bytes after it (truncated or corrupt)")
    row_items = int(np.prod(shape[1:], dtype=np.int64))

    def reader(rows):
        with fh_factory() as fh:
            fh.read(offset)
            if fortran and len(shape) > 1:  # column-major: rows are not contiguous, read it whole
                if need > MAX_WHOLE_BYTES:
                    raise InputFileError(f"{where}: a Fortran-ordered array of {need:,} bytes is read whole, and "
                                         f"that is more than {MAX_WHOLE_BYTES:,}; save it C-ordered (np.ascontiguousarray)")
                data = np.frombuffer(fh.read(need), dtype=dtype).reshape(shape, order="F")
                for a in range(0, shape[0], rows):
                    yield np.ascontiguousarray(data[a : a + rows])
                return
            for a in range(0, shape[0], rows):
                k = min(rows, shape[0] - a)
                buf = fh.read(k * row_items * dtype.itemsize)
                if len(buf) != k * row_items * dtype.itemsize:
                    raise InputFileError(f"{where}: truncated at event {a}")
                yield np.frombuffer(buf, dtype=dtype).reshape((k, *shape[1:]))

    return ArraySource(where, shape, reader)


def _open_npz(path: Path, key: str | None) -> ArraySource:
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InputFileError(f"{path}: not a readable .npz archive ({exc})") from exc
    with archive:
        names = [n.removesuffix(".npy") for n in archive.namelist() if n.endswith(".npy")]
        name = key or _only_name(names, "arrays", str(path))
        if name not in names:
            raise InputFileError(f"{describe(path, key)}: no array {name!r} (have: {', '.join(names)})")
        info = archive.getinfo(name + ".npy")
    where = describe(path, key)

    def fh_factory():
        class _Member:
            def __enter__(self):
                self.zf = zipfile.ZipFile(path)
                self.fh = self.zf.open(info)
                return self.fh

            def __exit__(self, *exc):
                self.fh.close()
                self.zf.close()

        return _Member()

    try:
        return _npy_stream_source(fh_factory, where, info.file_size)
    except (zipfile.BadZipFile, EOFError, OSError) as exc:
        raise InputFileError(f"{where}: corrupt archive member ({exc})") from exc


def _open_hdf5(path: Path, key: str | None) -> ArraySource:
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
        shape, dtype = obj.shape, obj.dtype
    where = describe(path, key)
    if dtype.kind not in NUMERIC_KINDS:
        raise InputFileError(f"{where}: dtype {dtype} is not real numeric (expected bool, integer or float)")
    if len(shape) == 0 or 0 in shape:
        raise InputFileError(f"{where}: empty array, shape {shape}")

    def reader(rows):
        with h5py.File(path, "r") as fh:
            ds = fh[key_]
            for a in range(0, shape[0], rows):
                yield ds[a : a + rows]

    return ArraySource(where, shape, reader)


def open_array(spec: str) -> ArraySource:
    """The array named by ``FILE[:KEY]`` as an :class:`ArraySource` (nothing read but its header).

    ``.npy`` files and ``.npz`` members are read as the NumPy format, versions 1.0 and 2.0: a
    magic string, a header dict (``descr``, ``fortran_order``, ``shape``) and the raw data, whose
    size prod(shape) x itemsize is checked against the file before anything is read; ``.npz`` is
    a ZIP archive of them (``numpy.savez``). HDF5 datasets are read with h5py, Parquet columns with
    pyarrow. Only bool, integer and float data is accepted; a problem raises :class:`InputFileError`.

    References: NEP 1, "A simple file format for NumPy arrays" (Kern, 2007); PKWARE's ZIP
    APPNOTE.TXT; The HDF Group, HDF5 (1998); Apache Parquet (2013).

    >>> np.savez("run.npz", samples=np.arange(12.0).reshape(6, 2), truth=np.arange(6.0))
    >>> src = open_array("run.npz:samples")
    >>> src.where, src.shape, float(src.read().sum())
    ('run.npz:samples', (6, 2), 66.0)
    """
    path, key, kind, where = _parse(spec)
    try:
        if kind == "npy":
            if key:
                raise InputFileError(f"{where}: a .npy file holds one array and takes no key")
            return _npy_stream_source(lambda: open(path, "rb"), where, path.stat().st_size)
        if kind == "npz":
            return _open_npz(path, key)
        if kind == "hdf5":
            return _open_hdf5(path, key)
    except InputFileError:
        raise
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise InputFileError(f"{where}: cannot read as {kind}: {exc}") from exc
    try:  # Parquet: read whole
        raw = _read_parquet(path, key)
    except InputFileError:
        raise
    except (OSError, ValueError, KeyError) as exc:
        raise InputFileError(f"{where}: cannot read as {kind}: {exc}") from exc
    try:
        arr = real_array(raw, where)
    except ValueError as exc:
        raise InputFileError(str(exc)) from exc
    if arr.ndim == 0 or arr.size == 0:
        raise InputFileError(f"{where}: empty array, shape {arr.shape}")
    return ArraySource(where, arr.shape, lambda rows: (arr[a : a + rows] for a in range(0, len(arr), rows)))


def sha256_of(path: Path, block: int = 1 << 22) -> str:
    """Hex sha256 of a file, read in blocks of 4 MiB.

    The SHA-256 digest of the file's bytes as 64 hexadecimal digits (FIPS 180-4, *Secure Hash
    Standard*, NIST, 2015, sec. 6.2).

    >>> _ = Path("abc.txt").write_bytes(b"abc")
    >>> sha256_of(Path("abc.txt"))  # NIST's "abc" example
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    """

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(block):
            h.update(chunk)
    return h.hexdigest()
