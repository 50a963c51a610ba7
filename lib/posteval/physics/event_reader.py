"""Reader of event files: ours (see :mod:`posteval.physics.event_file`) and the published nu2flows ones."""

from __future__ import annotations

from posteval._extras import require

require("posteval.physics.event_reader", "h5py", extra="physics")

import os

import h5py
import numpy as np

from . import fourvectors as fv
from .event_file import (DAMAGED_FILE_ERRORS, FORMAT, FORMAT_VERSION, content_hash, damaged, dataset_names,
                         read_attrs)

_REQUIRED = {
    "MET": ("MET", "phi"),
    "leptons": ("pt", "eta", "phi", "energy", "charge", "type"),
    "jets": ("pt", "eta", "phi", "energy", "is_tagged"),
    "neutrinos": ("pt", "eta", "phi"),
}
_TRUTH_P4 = {"top_p4": "top_p4", "w_p4": "w_p4", "b_p4": "b_p4", "lep_born_p4": "lep_born_p4",
             "lep_truth_p4": "lep_final_p4"}
_TRUTH_IDS = {"lep_born_pdgid": "lep_born_pdgid", "lep_truth_pdgid": "lep_final_pdgid",
              "nu_pdgid": "nu_pdgid"}


def _field(ds: np.ndarray, name: str) -> np.ndarray:
    return np.asarray(ds[name], dtype=np.float64)


def _validate(group: h5py.Group, path) -> int:
    """Number of events; ``ValueError`` naming the first schema problem."""
    for name, fields in _REQUIRED.items():
        if name not in group or not isinstance(group[name], h5py.Dataset):
            raise ValueError(f"path {path!r}: dataset 'delphes/{name}' is missing")
        names = group[name].dtype.names or ()
        missing = [f for f in fields if f not in names]
        if missing:
            raise ValueError(f"path {path!r}: 'delphes/{name}' lacks the fields {missing}")
    n = group["MET"].shape[0]
    if group["MET"].ndim != 1:
        raise ValueError(f"path {path!r}: 'delphes/MET' must have shape (N,), got {group['MET'].shape}")
    for name in ("leptons", "neutrinos"):
        if group[name].shape != (n, 2):
            raise ValueError(f"path {path!r}: 'delphes/{name}' must have shape ({n}, 2), got {group[name].shape}")
    if group["jets"].ndim != 2 or group["jets"].shape[0] != n:
        raise ValueError(f"path {path!r}: 'delphes/jets' must have shape ({n}, J), got {group['jets'].shape}")
    if n == 0:
        raise ValueError(f"path {path!r}: the file holds no events")
    n_jets = group["jets"].shape[1]
    optional = {"njets": (n,), "nbjets": (n,), "jets_indices": (n, n_jets)}
    _check_shapes(group, "delphes", {k: v for k, v in optional.items() if k in group}, path)
    return n


def _check_shapes(group: h5py.Group, prefix: str, shapes: dict[str, tuple], path) -> None:
    """``ValueError`` if a dataset of ``shapes`` is missing from ``group`` or has another shape."""
    for name, shape in shapes.items():
        if name not in group or not isinstance(group[name], h5py.Dataset):
            raise ValueError(f"path {path!r}: dataset '{prefix}/{name}' is missing")
        if group[name].shape != shape:
            raise ValueError(f"path {path!r}: '{prefix}/{name}' must have shape {shape}, got {group[name].shape}")


def _check_finite(name: str, a: np.ndarray, path) -> None:
    """``ValueError`` naming the dataset (and field) of ``a`` that holds NaN or infinite values."""
    columns = [(f"{name}.{k}", a[k]) for k in a.dtype.names] if a.dtype.names else [(name, a)]
    for label, col in columns:
        if np.issubdtype(col.dtype, np.floating):
            bad = int(np.count_nonzero(~np.isfinite(col)))
            if bad:
                raise ValueError(f"path {path!r}: '{label}' holds {bad} NaN or infinite values")


def read_event_file(path: str | os.PathLike) -> dict[str, np.ndarray]:
    """Events of an event file as a dict of numpy arrays (see ``posteval.physics.ttbar.read_events``).

    ``ValueError`` naming the file for every problem: not HDF5, damaged (whatever h5py raises),
    another format version, a content hash that does not match, a schema, shape or value error.
    """
    try:
        path = os.fspath(path)
        return _read(path)
    except DAMAGED_FILE_ERRORS as err:
        raise damaged(path, err) from err


def _check_version(attrs: dict, path) -> None:
    """``ValueError`` if one of our files was written in another format version."""
    if attrs.get("format") == FORMAT and "format_version" in attrs and attrs["format_version"] != FORMAT_VERSION:
        raise ValueError(f"path {path!r}: format version {attrs['format_version']}, this posteval reads "
                         f"version {FORMAT_VERSION}; delete it, load_or_generate makes it again")


def _check_truth_shapes(f: h5py.File, n: int, path) -> None:
    """``ValueError`` if a dataset of the optional ``truth`` group is missing or has another shape."""
    p4_shape, id_shape = (n, 2, 4), (n, 2)
    _check_shapes(f["truth"], "truth", {**{k: p4_shape for k in _TRUTH_P4.values()}, "nu_p4": p4_shape,
                                        **{k: id_shape for k in _TRUTH_IDS.values()},
                                        "jet_flavour": f["delphes"]["jets"].shape}, path)


def _verified_datasets(f: h5py.File, attrs: dict, path) -> dict[str, np.ndarray]:
    """Every dataset of one of our files, checked against the writer's content hash; {} for other files."""
    stored = attrs.get("content_hash")
    if stored is None:
        return {}
    data = {name: f[name][()] for name in dataset_names(f)}
    if content_hash(data, attrs) != stored:
        raise ValueError(f"path {path!r}: the datasets and attributes do not match the stored content "
                         "hash (a corrupted file; delete it, load_or_generate makes it again)")
    return data


def _lepton_columns(lep: np.ndarray, path) -> dict[str, np.ndarray]:
    """``lep_*`` columns and ``lep_p4``, l+ first (pairs with nu from W+), whatever the stored order."""
    order = np.argsort(-_field(lep, "charge"), axis=1, kind="stable")
    lep = np.take_along_axis(lep, order, axis=1)
    if not np.all(_field(lep, "charge")[:, 0] > 0) or not np.all(_field(lep, "charge")[:, 1] < 0):
        raise ValueError(f"path {path!r}: every event needs one positive and one negative lepton")
    out = {f"lep_{k}": _field(lep, src).astype(np.float32)
           for k, src in (("pt", "pt"), ("eta", "eta"), ("phi", "phi"), ("energy", "energy"),
                          ("charge", "charge"), ("flavour", "type"))}
    out["lep_p4"] = fv.from_pt_eta_phi_e(*(_field(lep, k) for k in ("pt", "eta", "phi", "energy"))).astype(np.float32)
    return out


def _jet_columns(jets: np.ndarray, g: h5py.Group, read) -> dict[str, np.ndarray]:
    """``jet_*`` columns, ``jet_mask`` (a jet slot is real where any of its fields is not 0), ``jet_p4``,
    the jet and b-tag counts and ``jet_truth_index`` (stored ones where the file has them)."""
    jet_cols = [_field(jets, k) for k in ("pt", "eta", "phi", "energy", "is_tagged")]
    mask = np.any(np.stack(jet_cols, axis=-1) != 0, axis=-1)
    out = {f"jet_{k}": (col * mask).astype(np.float32) for k, col in zip(("pt", "eta", "phi", "energy", "btag"),
                                                                          jet_cols)}
    out["jet_mask"] = mask
    out["jet_p4"] = (fv.from_pt_eta_phi_e(*jet_cols[:4]) * mask[..., None]).astype(np.float32)
    out["n_jets"] = (np.asarray(read("delphes/njets"), dtype=np.int64) if "njets" in g else mask.sum(1))
    out["n_bjets"] = (np.asarray(read("delphes/nbjets"), dtype=np.int64) if "nbjets" in g
                      else (jet_cols[4] * mask > 0).sum(1))
    out["jet_truth_index"] = (np.asarray(read("delphes/jets_indices"), dtype=np.int64) if "jets_indices" in g
                              else np.full(mask.shape, -1, dtype=np.int64))
    return out


def _neutrino_columns(f: h5py.File, nus: np.ndarray, read) -> dict[str, np.ndarray]:
    """The truth columns (where the file has a ``truth`` group), ``nu_p4`` and ``neutrino_momenta``."""
    out: dict[str, np.ndarray] = {}
    if "truth" in f:
        nu_p4 = np.asarray(read("truth/nu_p4"), dtype=np.float64)
        for key, src in _TRUTH_P4.items():
            out[key] = np.asarray(read(f"truth/{src}"), dtype=np.float64)
        for key, src in _TRUTH_IDS.items():
            out[key] = np.asarray(read(f"truth/{src}"), dtype=np.int64)
        out["jet_flavour"] = np.asarray(read("truth/jet_flavour"), dtype=np.int64)
    else:
        nu_pt, nu_eta, nu_phi = (_field(nus, k) for k in ("pt", "eta", "phi"))
        nu_m = _field(nus, "mass") if "mass" in nus.dtype.names else np.zeros_like(nu_pt)
        nu_p4 = fv.from_pt_eta_phi_m(nu_pt, nu_eta, nu_phi, nu_m)
    out["nu_p4"] = nu_p4
    out["neutrino_momenta"] = nu_p4[..., :3].copy()
    return out


def _read(path: str) -> dict[str, np.ndarray]:
    attrs = read_attrs(path)
    _check_version(attrs, path)
    with h5py.File(path, "r") as f:
        if "delphes" not in f or not isinstance(f["delphes"], h5py.Group):
            raise ValueError(f"path {path!r}: no group 'delphes' (not a nu2flows-layout event file)")
        g = f["delphes"]
        n = _validate(g, path)
        if "truth" in f:
            _check_truth_shapes(f, n, path)
        data = _verified_datasets(f, attrs, path)

        def read(name: str) -> np.ndarray:
            if name not in data:
                data[name] = f[name][()]
                _check_finite(name, data[name], path)
            return data[name]

        for name in list(data):
            _check_finite(name, data[name], path)
        met, lep, jets, nus = (read(f"delphes/{k}") for k in ("MET", "leptons", "jets", "neutrinos"))
        out = {**_lepton_columns(lep, path), **_jet_columns(jets, g, read)}
        out["met"] = np.stack([_field(met, "MET") * np.cos(_field(met, "phi")),
                               _field(met, "MET") * np.sin(_field(met, "phi"))], axis=1).astype(np.float32)
        out.update(_neutrino_columns(f, nus, read))
        out["n_generated"] = np.int64(attrs.get("n_generated", -1))
    for key, value in out.items():
        if key != "n_generated" and len(value) != n:
            raise ValueError(f"path {path!r}: {key} has {len(value)} events, expected {n}")
    return out
