"""Every claim a chapter decides says whose claim it is and in which Holm family it was adjusted (issue 43):
``claim_source.<name>`` names the paper, Proxy-GRM or this book, and ``claim_family.<name>`` is set, in the
committed reference notebooks and in the records of chapters executed here (``book/results/*.json``)."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCES = ("paper", "Proxy-GRM", "this book")


def _glued(path: Path) -> dict:
    """name -> recorded text of every glued output of a notebook."""
    out = {}
    for cell in json.loads(path.read_text())["cells"]:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                data = o.get("data", {})
                out[name] = data.get("application/papermill.record/text/plain", data.get("text/plain"))
    return out


def _records():
    for nb in sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        yield nb.relative_to(ROOT).as_posix(), {k: str(v).strip("'\"") for k, v in _glued(nb).items()}
    for rec in sorted((ROOT / "book" / "results").glob("[0-9][0-9]_*.json")):
        yield rec.relative_to(ROOT).as_posix(), {k: str(v) for k, v in json.loads(rec.read_text()).items()}


def missing_sources(record: dict) -> list[str]:
    """Claims of ``record`` (``claim.<name>`` keys) without a source among :data:`SOURCES` or without a family."""
    bad = []
    for key in record:
        if key.startswith("claim.") and not key.startswith("claim.full."):
            name = key[len("claim."):]
            source, family = record.get(f"claim_source.{name}", ""), record.get(f"claim_family.{name}", "")
            if not source.startswith(SOURCES) or not family:
                bad.append(name)
    return sorted(bad)


def test_the_check_finds_a_claim_without_its_source():
    assert missing_sources({"claim.a": "yes", "claim_source.a": "paper", "claim_family.a": "confirmatory"}) == []
    assert missing_sources({"claim.a": "yes", "claim_source.a": "", "claim_family.a": "confirmatory"}) == ["a"]
    assert missing_sources({"claim.b": "no", "claim_source.b": "this book"}) == ["b"]
    assert missing_sources({"claim.c": "no", "claim_source.c": "a blog", "claim_family.c": "x"}) == ["c"]


@pytest.mark.parametrize("path, record", list(_records()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_claim_names_its_source_and_family(path, record):
    claims = [k for k in record if k.startswith("claim.")]
    if not claims:
        pytest.skip(f"{path} decides no claims")
    assert missing_sources(record) == [], path
