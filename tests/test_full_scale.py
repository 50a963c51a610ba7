"""posteval.full_scale: kept full-profile records and how chapters compare them with their own run."""

import json

import pytest

from posteval import full_scale as fs


def _write(tmp_path, stem, record):
    (tmp_path / "results" / "full").mkdir(parents=True, exist_ok=True)
    (tmp_path / "results" / "full" / f"{stem}.json").write_text(json.dumps(record))


META = {"profile": "full", "git_commit": "a" * 40, "device": "cpu", "seconds": 600.0, "parameters": {"n": 5},
        "versions": {"torch": "2.13.0"}, "cpu_model": "Some CPU", "cpu_count": 2,
        "overrides": {"n": {"profile": 100, "used": 5}}}


def test_a_record_with_provenance_is_loaded_and_described(tmp_path):
    _write(tmp_path, "02_x", {"claim.a": "yes", "meta": META})
    record = fs.load_full_record("02_x", root=tmp_path)
    assert record["claim.a"] == "yes"
    assert fs.provenance_line(record) == "commit aaaaaaaaaa on CPU (Some CPU, 2 cores), torch 2.13.0, 10 min"
    table = fs.overrides_table(record)
    assert table.loc["n"].tolist() == ["100", "5"]
    assert fs.shrunk_line(record, ["n", "m"]) == "n 100 → 5"
    record["meta"]["overrides"] = {"n": {"profile": 1000000, "used": 200000},
                                   "enc": {"profile": {"width": 256, "heads": 8, "bias": True},
                                           "used": {"width": 32, "heads": 8, "bias": False}},
                                   "sched": {"profile": {"warmup": 20000}, "used": None},
                                   "sizes": {"profile": [1000, 10000, 1000000], "used": [1000, 200000]},
                                   "threads": {"profile": 4, "used": 1}, "device": {"profile": "auto", "used": "cpu"},
                                   "progress": {"profile": True, "used": False}}
    table = fs.overrides_table(record)  # where and how it ran (threads, device, progress bars) is not a size
    assert table.to_dict("index") == {"n": {"full profile": "1,000,000", "used": "200,000"},
                                      "enc.bias": {"full profile": "true", "used": "false"},
                                      "enc.width": {"full profile": "256", "used": "32"},
                                      "sched": {"full profile": '{"warmup": 20,000}', "used": "null"},
                                      "sizes": {"full profile": "[1,000; 10,000; 1,000,000]", "used": "[1,000; 200,000]"}}
    line = fs.shrunk_line(record, ["n", "enc", "sched"])
    assert line == "n 1,000,000 → 200,000, enc (2 settings), sched (replaced)"
    assert fs.shrunk_line(record, ["m"]) == "none"
    assert fs.load_full_record("03_missing", root=tmp_path) is None


@pytest.mark.parametrize("change, match", [
    ({"profile": "ci"}, "not 'full'"),
    ({"git_commit": "abc-dirty"}, "not a clean commit"),
    ({"versions": None}, None),
])
def test_records_without_provenance_are_refused(tmp_path, change, match):
    meta = {**META, **change}
    if change.get("versions", 1) is None:
        del meta["versions"]
        match = r"lacks \['versions'\]"
    _write(tmp_path, "02_x", {"meta": meta})
    with pytest.raises(ValueError, match=match):
        fs.load_full_record("02_x", root=tmp_path)


def test_verdicts_side_by_side_and_the_ones_resolved_only_at_full():
    ci = {"claim.a": "not resolved", "claim.b": "yes", "best.c": "flow", "crps.flow": 1.0}
    full = {"claim.a": "yes", "claim.b": "yes", "claim.d": "no", "crps.flow": 0.9}
    table = fs.verdicts_side_by_side(ci, full)
    assert list(table.index) == ["best.c", "claim.a", "claim.b", "claim.d"]
    assert table.loc["claim.a"].tolist() == ["not resolved", "yes", "no"]
    assert table.loc["claim.b", "same"] == "yes" and table.loc["claim.d", "this run"] == "—"
    assert fs.resolved_only_at_full(ci, full) == ["claim.a"]


def test_doctests():
    import doctest

    assert doctest.testmod(fs).failed == 0


def test_stage_seconds_of_an_executed_notebook_and_the_label():
    cell = lambda src, d: {"cell_type": "code", "source": src, "metadata": {"papermill": {"duration": d}}}
    nb = {"cells": [cell("import torch", 10.0), {"cell_type": "markdown", "source": "x", "metadata": {}},
                    cell("p = load_or_generate(5)", 70.0), cell("jobs = BackgroundJobs(f, items)", 1.0),
                    cell("trained()", 99.0), cell("reasons = histories[s][kind].stop_reason", 1.0),
                    cell("report()", 150.0)]}
    stages = fs.stage_seconds(nb, fs.STAGE_MARKERS["03_top_quark"])
    assert stages == {"set-up": 10.0, "generation": 70.0, "training and sampling": 100.0,
                      "protocol and physics": 151.0}
    with pytest.raises(ValueError, match="no code cell contains"):
        fs.stage_seconds(nb, [("missing", "nowhere(")])
    del nb["cells"][0]["metadata"]["papermill"]
    with pytest.raises(ValueError, match="no papermill duration"):
        fs.stage_seconds(nb, fs.STAGE_MARKERS["03_top_quark"])
    assert fs.is_at_full_scale({"meta": {"device": "cuda:NVIDIA H200"}})
    assert not fs.is_at_full_scale({"meta": {"device": "cuda:NVIDIA H200", "overrides": {"n": {}}}})
    assert not fs.is_at_full_scale({"meta": {"device": "cpu"}})
