"""The runner: record(), chapter resolution, papermill execution, atomic results."""

import json
import os

import numpy as np
import pytest
import yaml

from lib import book

FIXTURE = book.ROOT / "tests" / "fixtures" / "chapters" / "99_tiny.md"


def test_record_stores_plain_values_and_writes_the_record_file(tmp_path, monkeypatch):
    target = tmp_path / "rec.json"
    monkeypatch.setenv(book.RECORD_FILE_ENV, str(target))
    assert book.record("a.b", np.float32(1.5)) == 1.5
    assert book.record("n_events", np.int64(7)) == 7
    assert book.record("flag", np.bool_(True)) is True
    stored = json.loads(target.read_text())
    assert stored["a.b"] == 1.5 and stored["n_events"] == 7 and stored["flag"] is True
    assert book.recorded()["a.b"] == 1.5


@pytest.mark.parametrize("name", ["", "has space", "a/b", 3])
def test_record_rejects_bad_names(name):
    with pytest.raises(ValueError, match="name"):
        book.record(name, 1.0)


def test_record_rejects_arrays():
    with pytest.raises(ValueError, match="value"):
        book.record("x", np.zeros(3))


def test_seed_everything_reproduces_torch_and_numpy():
    import torch

    book.seed_everything(3)
    a = (np.random.rand(3), torch.rand(3))
    book.seed_everything(3)
    b = (np.random.rand(3), torch.rand(3))
    np.testing.assert_array_equal(a[0], b[0])
    assert torch.equal(a[1], b[1])
    with pytest.raises(ValueError, match="seed"):
        book.seed_everything(-1)


def test_resolve_chapter_by_number_and_stem():
    sources = book.chapter_sources()
    assert sources, "no chapters found"
    first = sources[0]
    assert book.resolve_chapter(first.stem) == first
    assert book.resolve_chapter(first.stem[:2]) == first
    assert book.resolve_chapter(str(int(first.stem[:2]))) == first
    with pytest.raises(ValueError, match="chapter"):
        book.resolve_chapter("nonexistent")


def test_every_chapter_has_both_profiles():
    for src in book.chapter_sources():
        for profile in book.PROFILES:
            params = book.load_parameters(src.stem, profile)
            assert params, f"params/{profile}/{src.stem}.yaml missing or empty"
    with pytest.raises(ValueError, match="profile"):
        book.load_parameters("01_total_variance", "gpu")


def test_ci_parameters_are_the_chapter_defaults():
    """The parameters cell's defaults are the CI sizes (nbval checks the defaults)."""
    import jupytext

    for src in book.chapter_sources():
        cell = next(c for c in jupytext.read(src).cells if "parameters" in c.metadata.get("tags", []))
        defaults = {}
        exec(cell.source, {}, defaults)
        ci = book.load_parameters(src.stem, "ci")
        assert {k: defaults[k] for k in ci} == ci, src.stem
        full = book.load_parameters(src.stem, "full")
        assert set(full) <= set(defaults), f"{src.stem}: full profile sets unknown parameters {set(full) - set(defaults)}"


def test_run_chapter_executes_with_parameters_and_writes_results(tmp_path, monkeypatch):
    params = tmp_path / "params"
    (params / "ci").mkdir(parents=True)
    (params / "ci" / "99_tiny.yaml").write_text(yaml.safe_dump({"n": 5}))
    monkeypatch.setattr(book, "PARAMS", params)
    results = book.run_chapter(FIXTURE, "ci", out_dir=tmp_path / "out")
    assert results["total"] == sum(range(5))
    assert results["label"] == "tiny"
    assert results["profile"] == "ci" and results["parameters"] == {"n": 5}
    for key in ("device", "torch_version", "seconds", "git_commit"):
        assert key in results
    on_disk = json.loads((tmp_path / "out" / "results" / "99_tiny.json").read_text())
    assert on_disk == json.loads(json.dumps(results))
    assert (tmp_path / "out" / "99_tiny.ipynb").exists()
    leftovers = [p.name for p in (tmp_path / "out").rglob("*") if p.name.startswith(".")]
    assert leftovers == []


def test_failed_chapter_leaves_previous_outputs_untouched(tmp_path, monkeypatch):
    params = tmp_path / "params"
    (params / "ci").mkdir(parents=True)
    monkeypatch.setattr(book, "PARAMS", params)
    out = tmp_path / "out"
    book.run_chapter(FIXTURE, "ci", out_dir=out)
    before_nb = (out / "99_tiny.ipynb").read_bytes()
    before_json = (out / "results" / "99_tiny.json").read_text()
    (params / "ci" / "99_tiny.yaml").write_text(yaml.safe_dump({"fail": True}))
    with pytest.raises(Exception, match="asked to fail"):
        book.run_chapter(FIXTURE, "ci", out_dir=out)
    assert (out / "99_tiny.ipynb").read_bytes() == before_nb
    assert (out / "results" / "99_tiny.json").read_text() == before_json
    assert [p.name for p in out.rglob("*") if p.name.startswith(".")] == []
    assert os.environ.get(book.RECORD_FILE_ENV) is None
