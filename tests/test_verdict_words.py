"""Every verdict word a chapter records comes from a claims table (issue 62): a recorded value that is one of
the book's verdict words ("yes", "no", "not resolved", the calibration words, "not testable", and the
words chapters once typed beside them: "too narrow", "too wide", "differs", "miscalibrated") must sit under
a key that ``posteval.claims.record_claims`` writes (``claim.<name>``, ``claim_independent.<name>``) or under
``best.<metric>``, the models no other model beats by the same rule (``posteval.metrics.verdicts.unbeaten``).
A word decided in a cell by a comparison (``"yes" if x < y``, ``p < 0.05``) is a word outside the rule.
Checked in the committed reference notebooks and in the records of chapters executed here."""

import json
from pathlib import Path

import pytest

from posteval.metrics.claims import claim_words
from tests.nbcompare import recorded

ROOT = Path(__file__).resolve().parents[1]
WORDS = set(claim_words()) | {"too narrow", "too wide", "differs", "miscalibrated"}
ALLOWED = ("claim.", "claim_independent.", "best.")


def words_outside_the_rule(values: dict) -> list[str]:
    """``key = word`` for every recorded verdict word under a key no claims table writes."""
    return sorted(f"{k} = {v!r}" for k, v in values.items()
                  if isinstance(v, str) and v.strip() in WORDS and not k.startswith(ALLOWED))


def test_the_check_finds_a_word_decided_in_a_cell():
    assert words_outside_the_rule({"claim.a": "yes", "best.crps": "not resolved", "claim_independent.a": "no"}) == []
    assert words_outside_the_rule({"basins.test.x": "differs", "verdict.a": "yes", "n": 3}) == [
        "basins.test.x = 'differs'", "verdict.a = 'yes'"]


def _sources():
    for nb in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        yield nb.relative_to(ROOT).as_posix(), recorded(json.loads(nb.read_text()))
    for rec in sorted((ROOT / "book" / "results").glob("[0-9][0-9]_*.json")):
        yield rec.relative_to(ROOT).as_posix(), {k: v for k, v in json.loads(rec.read_text()).items()}


@pytest.mark.parametrize("where, values", list(_sources()), ids=lambda x: x if isinstance(x, str) else "")
def test_no_verdict_word_comes_from_outside_a_claims_table(where, values):
    assert words_outside_the_rule(values) == [], f"{where}: verdict words no claims table decided"
