"""Truth record of dileptonic ttbar events: tops, Ws, b quarks, leptons and neutrinos.

Objects come in pairs ordered (particle from the t / W+ side, particle from the tbar / W- side):
t, tbar; W+, W-; b, bbar; l+, l-; nu, nubar.
"""

from __future__ import annotations

import numpy as np

from .generator import FlatRecord

_MAX_WALK = 60


def _walk_copies(rec: FlatRecord, rows: np.ndarray) -> np.ndarray:
    """For each row, the earliest ancestor reached through mothers with the same id."""
    cur = rows.copy()
    for _ in range(_MAX_WALK):
        m1 = rec.mother1[cur]
        mother = rec.global_index(m1, cur)
        move = (m1 > 0) & (rec.pid[np.where(m1 > 0, mother, cur)] == rec.pid[cur])
        if not move.any():
            return cur
        cur = np.where(move, mother, cur)
    raise RuntimeError("ancestry walk did not terminate")


def _one_per_event(rec: FlatRecord, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Index per event of the single row of ``rows`` in it (-1 if none) and an exactly-one mask."""
    idx = np.full(rec.n_events, -1, dtype=np.int64)
    counts = np.bincount(rec.event[rows], minlength=rec.n_events)
    idx[rec.event[rows]] = rows
    return np.where(counts == 1, idx, -1), counts == 1


def _last_copies(rec: FlatRecord, pdg: int) -> np.ndarray:
    """Rows of particles with id ``pdg`` whose first daughter has another id (the last copy)."""
    rows = np.flatnonzero(rec.pid == pdg)
    d1 = rec.daughter1[rows]
    daughter = rec.global_index(np.maximum(d1, 0), rows)
    return rows[(d1 > 0) & (rec.pid[daughter] != pdg)]


def _mother_id(rec: FlatRecord, rows: np.ndarray) -> np.ndarray:
    """PDG id of the first mother of each row (0 where there is none)."""
    m1 = rec.mother1[rows]
    return np.where(m1 > 0, rec.pid[rec.global_index(np.maximum(m1, 0), rows)], 0)


def _born_leptons(rec: FlatRecord, sign: int) -> np.ndarray:
    """Rows of the charged leptons (e, mu, tau) of charge ``sign`` made in a W decay."""
    rows = np.flatnonzero(np.isin(rec.pid, [-11 * sign, -13 * sign, -15 * sign]))
    return rows[_mother_id(rec, rows) == 24 * sign]


def _final_leptons(rec: FlatRecord, sign: int) -> np.ndarray:
    """Final-state e/mu of charge ``sign`` descending from a W, directly or through a tau."""
    final = np.flatnonzero((rec.status > 0) & np.isin(rec.pid, [-11 * sign, -13 * sign]))
    first = _walk_copies(rec, final)
    parent = rec.global_index(np.maximum(rec.mother1[first], 0), first)
    via_tau = (rec.mother1[first] > 0) & (rec.pid[parent] == -15 * sign)
    born = np.where(via_tau, _walk_copies(rec, parent), first)
    return final[_mother_id(rec, born) == 24 * sign]


def _neutrinos_from_w(rec: FlatRecord, pdg: int) -> np.ndarray:
    """Final-state neutrinos of id ``pdg`` whose first non-copy ancestor is a W."""
    rows = np.flatnonzero((rec.status > 0) & np.isin(rec.pid, [pdg * k for k in (12, 14, 16)]))
    first = _walk_copies(rec, rows)
    w = rec.global_index(np.maximum(rec.mother1[first], 0), first)
    return rows[(rec.mother1[first] > 0) & (np.abs(rec.pid[w]) == 24)]


def extract_truth(rec: FlatRecord) -> dict[str, np.ndarray]:
    """Truth objects of every event of a batch.

    Returns
    -------
    dict
        ``top_p4``, ``w_p4``, ``b_p4``, ``lep_born_p4``, ``lep_final_p4``, ``nu_p4``: (n, 2, 4)
        float64 (px, py, pz, E), pairs ordered as in the module docstring; ``lep_born_pdgid``,
        ``lep_final_pdgid``, ``nu_pdgid`` (n, 2) int; ``lep_final_row`` (n, 2) flat rows of the
        final leptons (-1 if missing, e.g. a hadronic tau decay); ``ok`` (n,) bool: exactly one
        t, tbar, W+, W-, b, bbar, Born l+, l-, nu, nubar found; ``has_leptons`` (n,) bool: both
        final e/mu found.
    """
    ok = np.ones(rec.n_events, dtype=bool)
    out: dict[str, np.ndarray] = {}

    def pair(name, rows_plus, rows_minus, required=True):
        nonlocal ok
        i_plus, ok_plus = _one_per_event(rec, rows_plus)
        i_minus, ok_minus = _one_per_event(rec, rows_minus)
        rows = np.stack([i_plus, i_minus], axis=1)
        found = ok_plus & ok_minus
        if required:
            ok &= found
        p4 = np.where(rows[..., None] >= 0, rec.p4[np.maximum(rows, 0)], 0.0)
        out[f"{name}_p4"] = p4
        return rows, found

    pair("top", _last_copies(rec, 6), _last_copies(rec, -6))
    pair("w", _last_copies(rec, 24), _last_copies(rec, -24))
    b_rows = np.flatnonzero(np.abs(rec.pid) == 5)
    b_rows = b_rows[np.abs(_mother_id(rec, b_rows)) == 6]
    pair("b", b_rows[rec.pid[b_rows] == 5], b_rows[rec.pid[b_rows] == -5])

    final_rows, has_leptons = pair("lep_final", _final_leptons(rec, +1), _final_leptons(rec, -1),
                                   required=False)
    born_rows, _ = pair("lep_born", _born_leptons(rec, +1), _born_leptons(rec, -1))
    nu_rows, _ = pair("nu", _neutrinos_from_w(rec, +1), _neutrinos_from_w(rec, -1))

    out["lep_final_row"] = np.where(has_leptons[:, None], final_rows, -1)
    for name, rows in (("lep_final", final_rows), ("lep_born", born_rows), ("nu", nu_rows)):
        out[f"{name}_pdgid"] = np.where(rows >= 0, rec.pid[np.maximum(rows, 0)], 0)
    out["ok"] = ok
    out["has_leptons"] = has_leptons & ok
    return out
