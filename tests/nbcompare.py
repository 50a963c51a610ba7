"""nbval's comparison, applied to a chapter already executed (by `make book`'s runner) instead of a second run.

`make test` executes every chapter once, with papermill, as `make book` does; nbval itself would run each
chapter again in its own kernel. This module compares an executed notebook with its committed reference
by nbval's rules, taken from nbval's own code where it exposes them (``nbval.plugin``: the cell markers,
stream coalescing, the sanitising patterns' file format) and restated here where nbval keeps them inside its
test items (the fields compared, ``IPyNbCell.compare_outputs``):

* every code cell of the reference, in order, has its executed twin with the same source (papermill's
  injected-parameters cell aside);
* a cell marked ``nbval-ignore-output`` (or ``# NBVAL_IGNORE_OUTPUT``) is executed, not compared; ``nbval-skip``
  is neither; a reference cell never run is not compared;
* otherwise the outputs are compared field by field after the sanitising patterns
  (``tests/nbval_sanitize.cfg``: floats to four decimals, PNGs replaced): stream text per stream name,
  each MIME type of ``display_data``/``execute_result`` except images, and an error's name and value;
  execution counts, metadata and tracebacks are not compared, as in nbval.

>>> ref = {"cells": [{"cell_type": "code", "source": "1 + 1", "metadata": {}, "execution_count": 1,
...                   "outputs": [{"output_type": "execute_result", "data": {"text/plain": "2.00001"}}]}]}
>>> run = {"cells": [{"cell_type": "code", "source": "1 + 1", "metadata": {}, "execution_count": 3,
...                   "outputs": [{"output_type": "execute_result", "data": {"text/plain": "2.00002"}}]}]}
>>> differences(run, ref, [(r"(\\d+\\.\\d{4})\\d+", r"\\1")])
[]
>>> run["cells"][0]["outputs"][0]["data"]["text/plain"] = "3.0"
>>> differences(run, ref, [])
["code cell 0 ('1 + 1'): text/plain differs: '2.00001' in the reference, '3.0' executed"]
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import nbformat
from nbval.plugin import coalesce_streams, find_comment_markers, find_metadata_tags, get_sanitize_patterns

#: what nbval never compares (IPyNbFile.skip_compare, without --nbdime: images too)
SKIP_COMPARE = ("metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
                "application/vnd.jupyter.widget-view+json", "image/png", "image/jpeg")
INJECTED = "injected-parameters"  # papermill's cell of the profile's parameters


def sanitize_patterns(path: Path) -> list[tuple[str, str]]:
    """The (regex, replacement) pairs of an nbval sanitising file."""
    return get_sanitize_patterns(Path(path).read_text())


GLUED_PNG = "image/png"
PNG_BASE64, PNG_SANITISED = "iVBORw0KGgo", "<PNG>"


def _joined(output: dict) -> dict:
    """A copy of an output whose stream text or MIME values are one string, not a list of lines."""
    out = dict(output)
    if isinstance(out.get("text"), list):
        out["text"] = "".join(out["text"])
    if isinstance(out.get("data"), dict):
        out["data"] = {k: "".join(v) if isinstance(v, list) and all(isinstance(x, str) for x in v) else v
                       for k, v in out["data"].items()}
    return out


def _source(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _options(cell) -> dict:
    """nbval's options of a cell: ``check`` (compare outputs, default True) and ``skip``."""
    options = {"check": True, "skip": False, "check_exception": False}
    options.update(dict(find_metadata_tags(cell.get("metadata", {}))))
    options.update(dict(find_comment_markers(_source(cell))))
    return options


def _fields(outputs, patterns) -> dict[str, list]:
    """nbval's flattening: per compared field (stream name, MIME type, error field) the sanitised values."""
    # a notebook read as plain JSON stores multi-line text as a list of lines; nbval's functions take the
    # joined string (as nbformat.read gives it)
    node = nbformat.from_dict({"outputs": [_joined(o) for o in outputs]})["outputs"]
    fields = defaultdict(list)
    for out in coalesce_streams(node):
        if out["output_type"] == "stream":
            out = {"output_type": "stream", out["name"]: out["text"]}
        for key, value in out.items():
            if key in SKIP_COMPARE:
                continue
            items = value.items() if key == "data" else [(key, value)]
            for field, v in items:
                if field in SKIP_COMPARE:
                    continue
                v = "".join(v) if isinstance(v, list) and all(isinstance(x, str) for x in v) else v
                if field.endswith(GLUED_PNG) and isinstance(v, str) and v.lstrip().startswith(PNG_BASE64):
                    v = PNG_SANITISED  # what the sanitising file's figure rule makes of it, without running
                    # six regular expressions over megabytes of base64 (a glued figure's MIME type is
                    # application/papermill.record/image/png, which nbval's skip list does not name)
                elif isinstance(v, str):
                    for regex, replace in patterns:
                        v = re.sub(regex, replace, v)
                fields[field].append(v)
    return fields


def _short(value, n: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return repr(text if len(text) <= n else text[: n - 3] + "...")


def differences(executed: dict, reference: dict, patterns) -> list[str]:
    """Every difference nbval would report between an executed notebook and its reference (empty: they agree)."""
    run_cells = [c for c in executed["cells"] if c["cell_type"] == "code"
                 and INJECTED not in c.get("metadata", {}).get("tags", [])]
    ref_cells = [c for c in reference["cells"] if c["cell_type"] == "code"]
    if len(run_cells) != len(ref_cells):
        return [f"{len(run_cells)} code cells executed, {len(ref_cells)} in the reference: "
                "the reference is not the chapter's (python -m posteval.book reference NN)"]
    found = []
    for i, (run, ref) in enumerate(zip(run_cells, ref_cells)):
        where = f"code cell {i} ({_short(_source(ref).strip().splitlines()[0] if _source(ref).strip() else '', 40)})"
        if _source(run) != _source(ref):
            found.append(f"{where}: the source differs from the reference's")
            continue
        opts = _options(ref)
        if opts["skip"]:
            continue
        if ref.get("execution_count") is None:
            if ref.get("outputs"):
                found.append(f"{where}: the reference cell was never run but has outputs")
            continue
        errors = [o for o in run.get("outputs", []) if o.get("output_type") == "error"]
        if errors and not opts["check_exception"]:
            found.append(f"{where}: raised {errors[0].get('ename')}: {errors[0].get('evalue')}")
            continue
        if not opts["check"]:
            continue
        got, want = _fields(run.get("outputs", []), patterns), _fields(ref.get("outputs", []), patterns)
        if set(want) - set(got):
            found.append(f"{where}: missing output fields {sorted(set(want) - set(got))}")
        elif set(got) - set(want):
            found.append(f"{where}: unexpected output fields {sorted(set(got) - set(want))}")
        else:
            for field in want:
                if len(got[field]) != len(want[field]):
                    found.append(f"{where}: {len(got[field])} outputs of {field}, {len(want[field])} in the reference")
                    break
                pair = next(((w, g) for w, g in zip(want[field], got[field]) if w != g), None)
                if pair is not None:
                    found.append(f"{where}: {field} differs: {_short(pair[0])} in the reference, {_short(pair[1])} executed")
                    break
    return found


RECORD_PREFIX = "application/papermill.record/"


def recorded(notebook: dict) -> dict[str, str]:
    """Every value a notebook's cells recorded (``record`` / myst-nb's ``glue``: scrapbook outputs), by name,
    as the text it was glued with."""
    import ast

    values = {}
    for cell in notebook["cells"]:
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            text = out.get("data", {}).get(RECORD_PREFIX + "text/plain")
            if name and text is not None:
                text = "".join(text) if isinstance(text, list) else text
                try:
                    values[name] = str(ast.literal_eval(text))
                except (ValueError, SyntaxError):
                    values[name] = text
    return values


def flipped_words(executed: dict, reference: dict) -> list[str]:
    """Each claim whose word differs between an executed notebook and its reference, with both runs'
    adjusted p-values (``claim_p_holm.<name>``, the p its word was decided on against 0.05), so that a
    reader can tell a word at its boundary (both p near 0.05) from a broken chapter (one far from it).

    >>> def nb(word, p):
    ...     out = lambda k, v: {"output_type": "display_data", "metadata": {"scrapbook": {"name": k}},
    ...                         "data": {RECORD_PREFIX + "text/plain": repr(v)}}
    ...     return {"cells": [{"cell_type": "code", "outputs": [out("claim.a", word), out("claim_p_holm.a", p)]}]}
    >>> flipped_words(nb("not resolved", "0.061"), nb("yes", "0.042"))
    ["claim.a: 'yes' (adjusted p 0.042) in the reference, 'not resolved' (adjusted p 0.061) executed"]
    """
    run, ref = recorded(executed), recorded(reference)
    found = []
    for key in sorted(k for k in ref if k.startswith("claim.") and k in run and run[k] != ref[k]):
        name = key[len("claim."):]
        p_ref, p_run = (vals.get(f"claim_p_holm.{name}", "none") for vals in (ref, run))
        found.append(f"{key}: {ref[key]!r} (adjusted p {p_ref}) in the reference, "
                     f"{run[key]!r} (adjusted p {p_run}) executed")
    return found
