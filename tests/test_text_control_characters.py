"""No control characters in the book's text: a backspace or tab left by an unescaped "\\b" or "\\t"
(as in "\\bar", "\\text") turns LaTeX into broken text on the page."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted([*ROOT.glob("chapters/*.md"), *ROOT.glob("book/*.md"), ROOT / "README.md"])
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # everything but newline (and tab, checked below)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_no_control_characters(path):
    for i, line in enumerate(path.read_text().splitlines(), 1):
        assert not CONTROL.search(line), f"{path.name}:{i}: a control character in {line[:60]!r}"
        assert "\t" not in line, f"{path.name}:{i}: a tab (an unescaped \\t?) in {line[:60]!r}"
