"""Kept full-profile records (``results/full/NN_name.json``) as chapters show them.

A record is the results JSON of one run of a chapter at the ``full`` profile (``scripts/run_full.sh``),
with its provenance under ``meta``: profile, clean commit, device, library versions, seconds, the
parameters and, where a size of the profile was changed to fit the machine, ``overrides``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from importlib import metadata
from pathlib import Path

import pandas as pd

from .paths import ROOT
from .runtime import atomic_write_text

__all__ = ["VERDICT_PREFIXES", "load_full_record", "provenance_line", "overrides_table", "shrunk_line",
           "verdicts_side_by_side", "resolved_only_at_full", "is_at_full_scale", "stage_seconds", "stage_line", "keep_record"]

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
    """A setting as a settings table shows it: integers with thousands separators, inside lists (items
    separated by "; ", since a separator is a comma) and mappings too; true, false and null as in YAML/JSON."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, (list, tuple)):
        return "[" + "; ".join(map(_text, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))}: {_text(v)}" for k, v in value.items()) + "}"
    return str(value)


#: settings that say where and how a run executes (device, threads, worker processes, progress bars), not
#: what it computes: the record keeps them, the table of changed sizes leaves them out
RUN_SETTINGS = frozenset({"device", "threads", "progress", "workers", "n_workers", "train_workers"})


def overrides_table(record: Mapping) -> pd.DataFrame:
    """The settings of the full profile this run changed: value in the profile and value used.

    An override of a mapping (``encoder={...}``) shows one row per setting that differs; the settings of
    `RUN_SETTINGS` (where and how the run executed) are left out.
    """
    over = {k: v for k, v in (record["meta"].get("overrides") or {}).items() if k not in RUN_SETTINGS}
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


def is_at_full_scale(record: Mapping) -> bool:
    """True only for the unchanged full profile run on a GPU: a CUDA device and no overridden setting.

    >>> is_at_full_scale({"meta": {"device": "cuda:NVIDIA H200", "overrides": {}}})
    True
    >>> is_at_full_scale({"meta": {"device": "cpu"}})
    False
    """
    meta = record["meta"]
    return str(meta.get("device", "")).startswith("cuda") and not meta.get("overrides")


#: The stages of a chapter's executed notebook, each starting at the first code cell whose source holds
#: its marker (chapter 3): the cells before the first marker are the set-up (imports).
STAGE_MARKERS = {
    "03_top_quark": (("generation", "load_or_generate("), ("training and sampling", "BackgroundJobs("),
                     ("protocol and physics", "histories[s][kind].stop_reason")),
}


def stage_seconds(notebook: Mapping, markers: Sequence[tuple[str, str]]) -> dict[str, float]:
    """Seconds per stage of an executed notebook, from papermill's per-cell ``duration``.

    A stage starts at the first code cell whose source contains its marker and runs to the next stage;
    the cells before the first stage are ``"set-up"``. Raises ValueError when a marker is not found or
    a cell has no duration (a notebook not executed by papermill).

    >>> nb = {"cells": [{"cell_type": "code", "source": "import x", "metadata": {"papermill": {"duration": 2.0}}},
    ...                 {"cell_type": "code", "source": "fit()", "metadata": {"papermill": {"duration": 5.5}}}]}
    >>> stage_seconds(nb, [("training", "fit(")])
    {'set-up': 2.0, 'training': 5.5}
    """
    code = [c for c in notebook["cells"] if c["cell_type"] == "code"]
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in code]
    starts = []
    for name, marker in markers:
        hits = [i for i, src in enumerate(sources) if marker in src]
        if not hits:
            raise ValueError(f"stage {name!r}: no code cell contains {marker!r}")
        starts.append((hits[0], name))
    out: dict[str, float] = {"set-up": 0.0}
    out.update({name: 0.0 for _, name in sorted(starts)})
    for i, cell in enumerate(code):
        duration = cell["metadata"].get("papermill", {}).get("duration")
        if duration is None:
            raise ValueError(f"code cell {i + 1} has no papermill duration: not a notebook executed by papermill")
        stage = "set-up"
        for start, name in sorted(starts):
            if i >= start:
                stage = name
        out[stage] += float(duration)
    return {k: round(v, 1) for k, v in out.items()}


WHOLE_RUN = "runner, whole chapter"  # the key of keep_record's stages that holds the chapter's whole run


def stage_line(record: Mapping, stem: str = "03_top_quark") -> str:
    """The record's seconds per stage as one phrase, in the order they ran, and the whole run's seconds.

    >>> stage_line({"meta": {"seconds_by_stage": {"generation": 70.2, "install and import checks": 12.0,
    ...            "protocol and physics": 90.0, "set-up": 9.6, "training and sampling": 200.0, WHOLE_RUN: 375.0}}})
    'install and import checks 12 s, set-up 10 s, generation 70 s, training and sampling 200 s, protocol and physics 90 s (387 s in all)'
    >>> stage_line({"meta": {}})
    'not recorded'
    """
    stages = dict(record["meta"].get("seconds_by_stage") or {})
    if not stages:
        return "not recorded"
    whole = stages.pop(WHOLE_RUN, None)
    ran = ["install and import checks", "set-up", *(name for name, _ in STAGE_MARKERS.get(stem, ()))]
    order = [k for k in ran if k in stages] + sorted(k for k in stages if k not in ran)
    text = ", ".join(f"{k} {stages[k]:,.0f} s" for k in order)
    return text + (f" ({whole + stages.get('install and import checks', 0.0):,.0f} s in all)" if whole is not None else "")


def _cpu_model() -> str:
    info = Path("/proc/cpuinfo")
    models = [line.split(":", 1)[1].strip() for line in info.read_text().splitlines()
              if line.startswith("model name")] if info.exists() else []
    return models[0] if models else "unknown"


def keep_record(stem: str, *, commit: str | None = None, extra_seconds: Mapping[str, float] | None = None,
                root: Path = ROOT, environment: Sequence[str] = ()) -> Path:
    """Keep ``book/results/<stem>.json`` of a full-profile run as ``results/full/<stem>.json`` with its provenance.

    Adds library versions, CPU model and count, the seconds per stage of the executed notebook
    (:data:`STAGE_MARKERS`) plus ``extra_seconds`` (stages outside the notebook, such as installing
    wheels), and the values of the named ``environment`` variables. ``commit`` replaces the run's
    commit where the machine had no git checkout (the device machine gets a copy of the working tree):
    the caller names the clean commit the copy was made from. Raises ValueError when the run was not
    at the full profile or its commit is not clean.
    """

    root = Path(root)
    record = json.loads((root / "book" / "results" / f"{stem}.json").read_text())
    meta = record["meta"]
    if meta["profile"] != "full":
        raise ValueError(f"{stem}: profile {meta['profile']!r}, not 'full'")
    if commit is not None:
        if meta["git_commit"] not in ("unknown", commit):
            raise ValueError(f"{stem}: the run names commit {meta['git_commit']}, not {commit}")
        meta["git_commit"] = commit
        meta["git_commit_from"] = "the caller (no git checkout on the machine that ran it)"
    if str(meta["git_commit"]).endswith("-dirty") or meta["git_commit"] == "unknown":
        raise ValueError(f"{stem}: commit {meta['git_commit']!r} is not a clean commit")
    names = ("numpy", "torch", "zuko", "scipy", "pandas", "pythia8mc", "papermill")
    meta["versions"] = {}
    for name in names:
        try:
            meta["versions"][name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            meta["versions"][name] = "not installed"
    meta["cpu_count"] = os.cpu_count()
    meta["cpu_model"] = _cpu_model()
    executed = root / "book" / "executed" / f"{stem}.ipynb"
    if stem in STAGE_MARKERS and executed.exists():
        stages = dict(extra_seconds or {})
        stages.update(stage_seconds(json.loads(executed.read_text()), STAGE_MARKERS[stem]))
        meta["seconds_by_stage"] = stages
    if environment:
        meta["environment"] = {k: os.environ.get(k, "") for k in environment}
    out = root / "results" / "full" / f"{stem}.json"
    atomic_write_text(out, json.dumps(record, indent=1, sort_keys=True))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m posteval.full_scale keep STEM [--commit SHA] [--seconds NAME=S ...] [--env NAME ...]``."""
    parser = argparse.ArgumentParser(prog="python -m posteval.full_scale", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p_keep = sub.add_parser("keep", help="keep book/results/STEM.json as results/full/STEM.json with provenance")
    p_keep.add_argument("stem")
    p_keep.add_argument("--commit", help="the clean commit the run's working tree was copied from")
    p_keep.add_argument("--seconds", action="append", default=[], metavar="NAME=S",
                        help="seconds of a stage outside the notebook")
    p_keep.add_argument("--env", action="append", default=[], metavar="NAME", help="an environment variable to keep")
    args = parser.parse_args(argv)
    try:
        extra = {}
        for item in args.seconds:
            name, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"--seconds {item!r}: expected NAME=SECONDS")
            extra[name] = round(float(value), 1)
        out = keep_record(args.stem, commit=args.commit, extra_seconds=extra, environment=args.env)
    except (ValueError, OSError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    meta = json.loads(out.read_text())["meta"]
    print(f"{out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}: {meta['seconds']} s on {meta['device']}, "
          f"commit {meta['git_commit']}, stages {meta.get('seconds_by_stage')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
