"""What the comparison of executed chapters checks exactly must not depend on the machine, and what must
not change is compared.

`make test` executes every chapter once (`make book`) and compares each cell's outputs with the reference
notebook by nbval's rules (tests/test_executed_chapters.py), after rounding floats (tests/nbval_sanitize.cfg). Numbers that come from training
differ between x86 machines (other torch/MKL kernels), so cells that show them are tagged
``nbval-ignore-output``: they are executed (an error still fails) but their digits are not
compared. Whether they are tagged well is checked by running the suite under other kernels
(``make test-other-machine``). The conclusions are: every verdict word the prose glues (``claim.*``, ``best.*``,
``target_word.*``) must be printed, with its name (or, in a table of
claims, its row label), by a cell whose output nbval compares. This
test checks that on the committed reference notebooks.
"""

import json
import re

import pytest

from posteval import book
from posteval.metrics.claims import claim_words

SOURCES = book.chapter_sources()
VERDICT_KEY = re.compile(r"\{glue:text\}`((?:claim|best|target_word)\.[^`:]+)")
IGNORED = {"nbval-ignore-output", "nbval-skip", "skip-execution"}


def _text(output) -> str:
    """The text nbval compares for one output."""
    if "text" in output:
        t = output["text"]
        return t if isinstance(t, str) else "".join(t)
    data = output.get("data", {})
    parts = [data.get(k, "") for k in ("text/plain", "text/html")]
    return "\n".join(p if isinstance(p, str) else "".join(p) for p in parts)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _glued(cells) -> dict[str, str]:
    values = {}
    for c in cells:
        for o in c.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                plain = [v for k, v in o.get("data", {}).items() if k.endswith("text/plain")]
                values[name] = (plain[0] if plain else "").strip("'\"")
    return values


def _compared_text(cells) -> str:
    return "\n".join(
        _text(o)
        for c in cells
        if not IGNORED & set(c.get("metadata", {}).get("tags", []))
        for o in c.get("outputs", [])
        if not o.get("metadata", {}).get("scrapbook")
    )


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_verdict_words_are_compared_exactly(source):
    keys = sorted(set(VERDICT_KEY.findall(source.read_text())))
    cells = [c for c in json.loads(source.with_suffix(".ipynb").read_text())["cells"] if c["cell_type"] == "code"]
    glued, compared = _glued(cells), _compared_text(cells)
    missing = [k for k in keys if k not in glued]
    assert not missing, f"{source.name}: the prose glues {missing} but no cell records them"
    for key in keys:
        if _is_number(glued[key]):  # an effect or interval bound filed under the claim (claim.a.effect_lo)
            continue
        if key.startswith("claim."):
            assert glued[key] in claim_words(), f"{key} = {glued[key]!r}: a claim is one of {claim_words()}"
        # the key itself, or a table row labelled by the claim's name (e.g. "a" for claim.a)
        label = rf"^{re.escape(key.removeprefix('claim.'))}\s" if key.startswith("claim.") else None
        line = [ln for ln in compared.splitlines()
                if re.search(rf"(^|\s){re.escape(key)}(\s|$)", ln) or (label and re.match(label, ln))]
        assert line, f"{source.name}: {key} is not printed by a cell whose output nbval compares"
        assert any(glued[key] in ln for ln in line), f"{source.name}: the compared line of {key} does not show {glued[key]!r}"
