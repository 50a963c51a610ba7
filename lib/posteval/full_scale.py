"""Kept full-profile records (``results/full/NN_name.json``) as chapters show them.

A record is the results JSON of one run of a chapter at the ``full`` profile (``scripts/run_full.sh``),
with its provenance under ``meta``: profile, clean commit, device, library versions, seconds, the
parameters and, where a size of the profile was changed to fit the machine, ``overrides``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from .book import ROOT

__all__ = ["VERDICT_PREFIXES", "load_full_record", "provenance_line", "overrides_table", "shrunk_line",
           "verdicts_side_by_side", "resolved_only_at_full"]

VERDICT_PREFIXES = ("claim.", "best.", "target_word.")
_REQUIRED_META = ("profile", "git_commit", "device", "seconds", "parameters", "versions")


def load_full_record(stem: str, root: Path = ROOT) -> dict | None:
    """The kept full-profile record of chapter ``stem``, or None when there is none.

    Raises ValueError when the file exists but is not a full-profile record with provenance (a
    ``meta`` with profile ``full``, a clean commit, device, versions, seconds and parameters).
    """
    path = Path(root) / "results" / "full" / f"{stem}.json"
    if not path.exists():
        return None
    try:
        record = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"{path.name}: not valid JSON ({err})") from None
    meta = record.get("meta") if isinstance(record, dict) else None
    if not isinstance(meta, dict):
        raise ValueError(f"{path.name}: no 'meta' with the run's provenance")
    missing = [k for k in _REQUIRED_META if k not in meta]
    if missing:
        raise ValueError(f"{path.name}: meta lacks {missing}")
    if meta["profile"] != "full":
        raise ValueError(f"{path.name}: profile is {meta['profile']!r}, not 'full'")
    if str(meta["git_commit"]).endswith("-dirty") or meta["git_commit"] == "unknown":
        raise ValueError(f"{path.name}: commit {meta['git_commit']!r} is not a clean commit")
    return record


def provenance_line(record: Mapping) -> str:
    """One sentence: commit, device (CPU model and cores for a CPU run), torch version, wall time."""
    meta = record["meta"]
    device = meta["device"]
    if device == "cpu" and meta.get("cpu_model"):
        device = f"CPU ({meta['cpu_model']}, {meta.get('cpu_count', '?')} cores)"
    torch = meta["versions"].get("torch", meta.get("torch_version", "?"))
    return (f"commit {str(meta['git_commit'])[:10]} on {device}, torch {torch}, "
            f"{meta['seconds'] / 60:.0f} min")


def _changes(key: str, old, new):
    """(dotted key, old, new) for every setting an override changed, nested mappings expanded."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            yield from _changes(f"{key}.{k}", old.get(k), new.get(k))
    elif old != new:
        yield key, old, new


def _text(value) -> str:
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def overrides_table(record: Mapping) -> pd.DataFrame:
    """The settings of the full profile this run changed: value in the profile and value used.

    An override of a mapping (``encoder={...}``) shows one row per setting that differs.
    """
    over = record["meta"].get("overrides") or {}
    rows = {k: {"full profile": _text(a), "used": _text(b)}
            for key, v in over.items() for k, a, b in _changes(key, v["profile"], v["used"])}
    return pd.DataFrame(rows, index=["full profile", "used"]).T.rename_axis("parameter")


def shrunk_line(record: Mapping, keys: Sequence[str]) -> str:
    """``"n_train 1,000,000 → 200,000, ..."`` for the given overridden keys ("none" if none changed).

    An overridden mapping is summarised as ``"encoder (9 settings)"`` (``"schedule (replaced)"``
    when a mapping replaces a plain value or the reverse); :func:`overrides_table` lists them.
    """
    over = record["meta"].get("overrides") or {}
    parts = []
    for key in keys:
        if key not in over:
            continue
        changed = list(_changes(key, over[key]["profile"], over[key]["used"]))
        old, new = over[key]["profile"], over[key]["used"]
        if isinstance(old, dict) and isinstance(new, dict):
            parts.append(f"{key} ({len(changed)} setting{'s' if len(changed) != 1 else ''})")
        elif isinstance(old, dict) or isinstance(new, dict):
            parts.append(f"{key} (replaced)")
        elif changed:
            parts.append(f"{key} {_text(over[key]['profile'])} → {_text(over[key]['used'])}")
    return ", ".join(parts) if parts else "none"


def verdicts_side_by_side(ci: Mapping, full: Mapping, prefixes: Sequence[str] = VERDICT_PREFIXES) -> pd.DataFrame:
    """Every verdict word of this run (``ci``) beside the full record's, with whether they agree.

    A verdict present in only one of the two shows "—" in the other column.
    """
    keys = sorted({k for src in (ci, full) for k in src if k.startswith(tuple(prefixes))})
    rows = {k: {"this run": str(ci.get(k, "—")), "full record": str(full.get(k, "—"))} for k in keys}
    table = pd.DataFrame(rows, index=["this run", "full record"]).T.rename_axis("verdict")
    table["same"] = (table["this run"] == table["full record"]).map({True: "yes", False: "no"})
    return table


def resolved_only_at_full(ci: Mapping, full: Mapping, prefixes: Sequence[str] = VERDICT_PREFIXES) -> list[str]:
    """Verdicts that are "not resolved" in this run and resolved in the full record."""
    return [k for k in sorted(full) if k.startswith(tuple(prefixes)) and ci.get(k) == "not resolved"
            and full[k] != "not resolved"]
