"""HDF5 event files in the nu2flows layout (group ``delphes``) plus our truth (group ``truth``).

Layout written by :func:`write_event_file` (N events, J jet slots; structured fields float32):

* ``delphes/MET`` (N,): ``MET``, ``phi``.
* ``delphes/leptons`` (N, 2): ``pt, eta, phi, energy, charge, type`` (type 0 = e, 1 = mu),
  l+ first.
* ``delphes/jets`` (N, J): ``pt, eta, phi, energy, is_tagged``, zero-padded, leading pT first.
* ``delphes/neutrinos`` (N, 2): ``PDGID, pt, eta, phi, mass``; nu (from W+) then nubar.
* ``delphes/njets``, ``delphes/nbjets`` (N,) int64; ``delphes/jets_indices`` (N, J) int8:
  0 = jet matched to the b, 1 = to the bbar, -1 otherwise.
* ``truth/*``: float64 (N, 2, 4) four-vectors (px, py, pz, E) ``top_p4``, ``w_p4``,
  ``b_p4``, ``lep_born_p4``, ``lep_final_p4``, ``nu_p4``; int32 (N, 2) ``lep_born_pdgid``,
  ``lep_final_pdgid``, ``nu_pdgid``; int8 (N, J) ``jet_flavour`` (5, 4, 0).
* Root attributes: ``format`` = ``"pointwise-ttbar"``, ``format_version``, ``config``
  (JSON), ``seed``, ``n_events_requested``, ``n_generated``, ``n_truth_failed``,
  ``pythia_version``, ``content_hash`` (sha256 over every dataset, see :func:`content_hash`).

Files are written to a temporary name in the same folder and renamed, so a reader never
sees a half-written file. Datasets are contiguous and uncompressed: compressed HDF5 edge chunks
hold uninitialised bytes, which would make equal contents give different files.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import h5py
import numpy as np

from . import fourvectors as fv

FORMAT = "pointwise-ttbar"
FORMAT_VERSION = 1

MET_FIELDS = ("MET", "phi")
LEPTON_FIELDS = ("pt", "eta", "phi", "energy", "charge", "type")
JET_FIELDS = ("pt", "eta", "phi", "energy", "is_tagged")
NEUTRINO_FIELDS = ("PDGID", "pt", "eta", "phi", "mass")
TRUTH_P4 = ("top_p4", "w_p4", "b_p4", "lep_born_p4", "lep_final_p4", "nu_p4")
TRUTH_IDS = ("lep_born_pdgid", "lep_final_pdgid", "nu_pdgid")


def _structured(columns: dict[str, np.ndarray]) -> np.ndarray:
    """Structured float32 array with one field per column (all of one shape)."""
    first = next(iter(columns.values()))
    out = np.zeros(first.shape, dtype=[(k, "<f4") for k in columns])
    for k, v in columns.items():
        out[k] = v
    return out


def schema_arrays(events: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Dataset path -> array of the file layout, from the arrays of one or more chunks.

    ``events`` holds the keys of :data:`posteval.physics.chunks.TRUTH_KEYS` and ``RECO_KEYS``.
    """
    lep, jet, met, nu = events["lep_p4"], events["jet_p4"], events["met"], events["nu_p4"]
    mask = events["jet_mask"]
    with np.errstate(invalid="ignore", divide="ignore"):
        jet_eta = np.where(mask, fv.eta(jet), 0.0)
    charge = np.broadcast_to(np.array([1.0, -1.0]), lep.shape[:2])
    out = {
        "delphes/MET": _structured({"MET": fv.pt(met), "phi": fv.phi(met)}),
        "delphes/leptons": _structured({
            "pt": fv.pt(lep), "eta": fv.eta(lep), "phi": fv.phi(lep), "energy": lep[..., 3],
            "charge": charge, "type": events["lep_flavour"]}),
        "delphes/jets": _structured({
            "pt": fv.pt(jet) * mask, "eta": jet_eta, "phi": fv.phi(jet) * mask,
            "energy": jet[..., 3] * mask, "is_tagged": events["jet_btag"] & mask}),
        "delphes/neutrinos": _structured({
            "PDGID": events["nu_pdgid"], "pt": fv.pt(nu), "eta": fv.eta(nu), "phi": fv.phi(nu),
            "mass": fv.mass(nu)}),
        "delphes/njets": events["n_jets"].astype(np.int64),
        "delphes/nbjets": events["n_bjets"].astype(np.int64),
        "delphes/jets_indices": events["jet_truth_index"].astype(np.int8),
        "truth/jet_flavour": events["jet_flavour"].astype(np.int8),
    }
    for k in TRUTH_P4:
        out[f"truth/{k}"] = events[k].astype(np.float64)
    for k in TRUTH_IDS:
        out[f"truth/{k}"] = events[k].astype(np.int32)
    return out


def _hash_update(h, path: str, dtype: np.dtype, shape: tuple) -> None:
    h.update(f"{path}|{dtype.str}|{dtype.descr}|{shape}|".encode())


def content_hash(arrays: dict[str, np.ndarray]) -> str:
    """sha256 hex digest over dataset paths, dtypes, shapes and bytes, in sorted path order."""
    h = hashlib.sha256()
    for path in sorted(arrays):
        a = np.ascontiguousarray(arrays[path])
        _hash_update(h, path, a.dtype, a.shape)
        h.update(a.tobytes())
    return h.hexdigest()


def _temp_path(path: Path) -> Path:
    return path.with_name(f"{path.name}.tmp{os.getpid()}")


def write_atomic(path: str | os.PathLike, arrays: dict[str, np.ndarray], attrs: dict) -> Path:
    """Write ``arrays`` (dataset path -> array) and root ``attrs`` plus ``content_hash``.

    The file appears at ``path`` only once complete; on any error no file (and no temporary
    file) is left behind.
    """
    path = Path(path)
    tmp = _temp_path(path)
    try:
        with h5py.File(tmp, "w", track_order=False) as f:
            for name in sorted(arrays):
                a = np.ascontiguousarray(arrays[name])
                f.create_dataset(name, data=a, track_times=False)
            for k, v in sorted(attrs.items()):
                f.attrs[k] = v
            f.attrs["content_hash"] = content_hash(arrays)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def _dataset_names(f: h5py.File) -> list[str]:
    names: list[str] = []
    f.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
    return sorted(names)


def concatenate_atomic(path: str | os.PathLike, parts: list[str | os.PathLike], attrs: dict) -> Path:
    """Write the event-axis concatenation of the event files ``parts`` to ``path`` atomically.

    Opens one part at a time (thousands of chunk files stay below any open-file limit); the
    content hash, that of the concatenation, is computed from the written file in row blocks.
    """
    path = Path(path)
    tmp = _temp_path(path)
    try:
        with h5py.File(parts[0], "r") as first:
            names = _dataset_names(first)
            layout = {n: (first[n].shape[1:], first[n].dtype) for n in names}
        rows = {n: 0 for n in names}
        for p in parts:
            with h5py.File(p, "r") as part:
                for n in names:
                    rows[n] += part[n].shape[0]
        h = hashlib.sha256()
        with h5py.File(tmp, "w", track_order=False) as out:
            for n in names:
                out.create_dataset(n, shape=(rows[n],) + layout[n][0], dtype=layout[n][1], track_times=False)
            start = dict.fromkeys(names, 0)
            for p in parts:
                with h5py.File(p, "r") as part:
                    for n in names:
                        a = part[n][()]
                        out[n][start[n]:start[n] + len(a)] = a
                        start[n] += len(a)
            for n in names:
                ds = out[n]
                _hash_update(h, n, ds.dtype, ds.shape)
                block = max(1, 2**26 // max(1, ds.dtype.itemsize * int(np.prod(ds.shape[1:]))))
                for i in range(0, ds.shape[0], block):
                    h.update(np.ascontiguousarray(ds[i:i + block]).tobytes())
            for k, v in sorted(attrs.items()):
                out.attrs[k] = v
            out.attrs["content_hash"] = h.hexdigest()
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path


def stored_hash_matches(path: str | os.PathLike) -> bool:
    """True if ``path`` is readable and its datasets hash to its ``content_hash`` attribute."""
    try:
        with h5py.File(path, "r") as f:
            arrays: dict[str, np.ndarray] = {}
            f.visititems(lambda n, o: arrays.__setitem__(n, o[()]) if isinstance(o, h5py.Dataset) else None)
            stored = f.attrs.get("content_hash")
    except (OSError, KeyError):
        return False
    return stored is not None and stored == content_hash(arrays)


def read_attrs(path: str | os.PathLike) -> dict:
    """Root attributes of an HDF5 file; ``ValueError`` if it cannot be opened as HDF5."""
    try:
        with h5py.File(path, "r") as f:
            return {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
    except OSError as err:
        raise ValueError(f"path {str(path)!r} is not a readable HDF5 file: {err}") from err
