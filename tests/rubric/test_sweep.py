"""posteval.rubric.sweep: the sweep and its command line, its parts and seeds combined, saved sweeps
(tiny sizes; the conditions themselves: tests/rubric/test_experiment.py)."""

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from posteval.rubric.experiment import (CONDITIONS, FIDELITY_VERIFIERS, RubricConfig, build_setup, run_condition,
                                        setup_fidelity)
from posteval.rubric import report
from posteval.rubric.sweep import main, merge_summaries, run_sweep, split_params

from tests.rubric.conftest import TINY


def test_sweep_cli_writes_summary(tmp_path):
    params = {**TINY, "seeds": [0, 1], "conditions": ["no_proxy", "proxy_sft_quarter"], "workers": 1}
    pfile = tmp_path / "p.yaml"
    pfile.write_text(yaml.safe_dump(params))
    out = tmp_path / "r.json"
    summary = main(["--params", str(pfile), "--out", str(out), "--workers", "1", "--no-progress"])
    saved = json.loads(out.read_text())
    assert saved["seeds"] == [0, 1] and saved["conditions"] == ["no_proxy", "proxy_sft_quarter"]
    t = saved["final"]["transfer"]["no_proxy"]
    assert len(t["values"]) == 2 and np.isclose(t["mean"], np.mean(t["values"]))
    assert set(saved["sensitivity"]["sensitivity"]) >= {"proxy_sft", "proxy_rl"}
    assert summary["final"] == saved["final"]
    prov = saved["provenance"]
    assert prov["git_commit"] and prov["versions"]["torch"] and prov["workers"] == 1 and prov["wall_seconds"] > 0
    steps = {r["condition"]: r["step"] for r in saved["history"]}
    assert all(r["test_verdict_acc"] is not None for r in saved["history"])  # evaluated steps only
    assert steps == {"no_proxy": 8, "proxy_sft_quarter": 2}  # N/4 prompts -> a quarter of the steps
    # the chapter's view of the saved file agrees with the summary statistics
    frames = report.frames_from_summary(saved)
    fin = frames["final"]
    assert len(fin) == 4 and set(fin["step"]) == {8, 2}
    nums = report.contract_numbers(fin, frames["sensitivity"], prefix="full.")
    assert np.isclose(nums["full.transfer.no_proxy"], t["mean"])
    assert np.isclose(nums["full.verdict_acc_sd.proxy_sft_quarter"], saved["final"]["verdict_acc"]["proxy_sft_quarter"]["std"])
    assert np.isclose(nums["full.sensitivity.proxy_rl"], saved["sensitivity"]["sensitivity"]["proxy_rl"]["mean"])
    table = report.mean_sd_table(fin)
    assert list(table.index) == ["no_proxy", "proxy_sft_quarter"] and (table["seeds"] == 2).all()
    # a second sweep adds conditions to the same file
    merged = main(["--params", str(pfile), "--out", str(out), "--workers", "1", "--no-progress",
                   "--conditions", "agg_gate_follow", "--merge", str(out)])
    assert merged["conditions"] == ["no_proxy", "proxy_sft_quarter", "agg_gate_follow"]
    assert merged["final"]["transfer"]["no_proxy"] == t
    assert len(report.frames_from_summary(json.loads(out.read_text()))["final"]) == 6
    other = dict(saved, seeds=[0, 2])
    with pytest.raises(ValueError, match="seeds"):
        merge_summaries(saved, other)


def test_bad_parameters():
    with pytest.raises(ValueError, match="n_rl"):
        RubricConfig(**{**TINY, "n_rl": 0})
    with pytest.raises(ValueError, match="prompts_per_step"):
        RubricConfig(**{**TINY, "prompts_per_step": 7, "n_minibatches": 2})
    with pytest.raises(ValueError, match="unknown"):
        split_params({"n_rll": 3})
    with pytest.raises(ValueError, match="conditions"):
        split_params({"conditions": ["proxy_magic"]})
    with pytest.raises(ValueError, match="seeds"):
        run_sweep(RubricConfig(**TINY), ["no_proxy"], [])
    with pytest.raises(ValueError, match="name"):
        run_condition(build_setup(RubricConfig(**TINY), 0), "proxy_magic")
    assert set(CONDITIONS) >= {"no_proxy", "proxy_sft", "proxy_rl"}


@pytest.mark.parametrize("profile", ["ci", "full"])
def test_every_profile_file_is_a_valid_sweep_input(profile):
    from posteval.book import ROOT

    with open(ROOT / f"params/{profile}/04_proxy_rubric.yaml") as fh:
        params = yaml.safe_load(fh)
    config, seeds, conditions = split_params(params)  # what `python -m posteval.rubric.sweep --params` reads
    assert seeds == params["seeds"] and conditions == params["conditions"]
    assert config.n_rl == params["n_rl"]


def test_saved_sweep_must_match_the_current_parameters():
    import copy

    from posteval.book import ROOT

    with open(ROOT / "results/full/04_proxy_rubric.json") as fh:
        record = json.load(fh)
    with open(ROOT / "params/full/04_proxy_rubric.yaml") as fh:
        params = yaml.safe_load(fh)
    config, seeds, conditions = split_params(params)
    # the committed record is a run of exactly the full profile, so the full profile may reuse it
    report.check_summary_matches(record, config, seeds, conditions)
    assert params["reuse_full_results"] is True
    assert len(record["seeds"]) >= 10 and {"leak", "order", "unseen"} <= {
        part for c in record["conditions"] for part in c.split("_")}
    prov = record["provenance"]
    assert not prov["git_commit"].endswith("-dirty") and len(prov["git_commit"]) == 40
    assert prov["versions"]["torch"] and prov["workers"] >= 1 and prov["wall_seconds"] > 0
    assert not prov["env"], "the kept record is run with the machine's own kernels"
    # each kind of mismatch is refused
    summary = {"config": config.to_dict(), "seeds": list(seeds), "conditions": list(conditions)}
    report.check_summary_matches(summary, config, seeds, conditions)
    other, _, _ = split_params({**params, "n_rl": params["n_rl"] // 2})
    with pytest.raises(ValueError, match="n_rl=4096 vs 2048"):
        report.check_summary_matches(summary, other, seeds, conditions)
    with pytest.raises(ValueError, match="seeds"):
        report.check_summary_matches(summary, config, [0], conditions)
    with pytest.raises(ValueError, match="lacks the conditions"):
        short = copy.deepcopy(summary)
        short["conditions"] = ["no_proxy"]
        report.check_summary_matches(short, config, seeds, conditions)


def test_seeds_one_at_a_time_combine_into_the_sweep_of_all(tmp_path):
    """--seeds runs one seed; --combine joins seed checkpoints into the record a sweep of all the seeds writes."""
    params = {**TINY, "seeds": [0, 1], "conditions": ["no_proxy", "proxy_sft"], "workers": 1}
    pfile = tmp_path / "p.yaml"
    pfile.write_text(yaml.safe_dump(params))
    run = ["--params", str(pfile), "--workers", "1", "--no-progress"]
    both = main(run + ["--out", str(tmp_path / "both.json")])
    for s in (1, 0):
        main(run + ["--seeds", str(s), "--out", str(tmp_path / f"s{s}.json")])
    combined = main(["--combine", str(tmp_path / "s1.json"), str(tmp_path / "s0.json"), "--conditions", "proxy_sft",
                     "--out", str(tmp_path / "c.json")])
    assert combined["seeds"] == [0, 1] and combined["conditions"] == ["proxy_sft"]
    assert combined["final"]["transfer"]["proxy_sft"] == both["final"]["transfer"]["proxy_sft"]
    assert combined["cold_start"]["transfer"] == both["cold_start"]["transfer"]
    assert combined["sensitivity"]["sensitivity"]["proxy_sft"] == both["sensitivity"]["sensitivity"]["proxy_sft"]
    assert {r["condition"] for r in combined["history"]} == {"proxy_sft"}
    assert len(combined["provenance"]) == 2 and combined["seconds"]["total"] > 0
    fin = report.frames_from_summary(json.loads((tmp_path / "c.json").read_text()))["final"]
    assert sorted(fin["seed"]) == [0, 1]
    with pytest.raises(ValueError, match="share seeds"):
        main(["--combine", str(tmp_path / "s0.json"), str(tmp_path / "both.json"), "--out", str(tmp_path / "x.json")])
    with pytest.raises(ValueError, match="not run"):
        main(["--combine", str(tmp_path / "s0.json"), "--conditions", "proxy_rl", "--out", str(tmp_path / "x.json")])


def test_sweep_in_parts_equals_the_sweep(tiny_setup):
    from posteval.rubric.sweep import build_setups, run_conditions, sweep_result

    cfg = RubricConfig(**TINY)
    setups = build_setups(cfg, [0], progress=False)
    runs = run_conditions(setups, ["no_proxy"], progress=False)
    runs.update(run_conditions(setups, ["proxy_sft"], progress=False))
    parts = sweep_result(cfg, setups, runs, 1.0)
    whole = run_sweep(cfg, ["no_proxy", "proxy_sft"], [0], progress=False)
    pd.testing.assert_frame_equal(parts.final.drop(columns="seconds"), whole.final.drop(columns="seconds"))
    with pytest.raises(ValueError, match="missing"):
        sweep_result(cfg, build_setups(cfg, [0, 1], progress=False), runs, 1.0)


def test_setups_and_pairs_in_groups_equal_the_sweep():
    """Chapter 4 builds its setups in two cells and runs its (seed, condition) pairs in groups of two
    rounds of the workers: the same results as the whole sweep (each depends on its seed and condition only)."""
    from posteval.rubric.sweep import build_setups, run_pairs, sweep_result

    cfg = RubricConfig(**TINY)
    setups = build_setups(cfg, [0], progress=False)
    setups.update(build_setups(cfg, [1], progress=False))
    pairs = [(s, c) for s in (0, 1) for c in ("no_proxy", "proxy_sft")]
    runs = run_pairs(setups, pairs[:3], progress=False)
    runs.update(run_pairs(setups, pairs[3:], progress=False))
    parts = sweep_result(cfg, setups, runs, 1.0)
    whole = run_sweep(cfg, ["no_proxy", "proxy_sft"], [0, 1], progress=False)
    pd.testing.assert_frame_equal(parts.final.drop(columns="seconds"), whole.final.drop(columns="seconds"))
    pd.testing.assert_frame_equal(parts.history, whole.history)


@pytest.mark.parametrize("pairs, match", [([], "non-empty"), ([(0,)], r"\(seed, condition\)"),
                                          ([(5, "no_proxy")], "without a setup"), ([(0, "nope")], "nope"),
                                          ([(0, "no_proxy"), (0, "no_proxy")], "distinct")])
def test_run_pairs_names_a_bad_pair(pairs, match):
    from posteval.rubric.sweep import run_pairs

    with pytest.raises(ValueError, match=match):
        run_pairs({0: object()}, pairs, progress=False)


def test_fidelity_record_is_the_chapters_fidelity_of_each_seeds_sweep_setup(tmp_path, tiny_setup):
    # the kept record of claim (c) measured directly: the same rows as the chapter computes on a setup,
    # and setups checked to be a sweep's by their cold starts
    params = {**TINY, "seeds": [0, 1], "conditions": ["no_proxy"], "workers": 1}
    pfile = tmp_path / "p.yaml"
    pfile.write_text(yaml.safe_dump(params))
    out = tmp_path / "fidelity.json"
    main(["--params", str(pfile), "--out", str(out), "--workers", "1", "--no-progress", "--fidelity"])
    saved = json.loads(out.read_text())
    assert saved["kind"] == "verifier_fidelity" and saved["seeds"] == [0, 1]
    assert saved["provenance"]["command"].endswith("--fidelity") and saved["provenance"]["git_commit"]
    frame, gap = report.fidelity_frame(saved)
    assert len(frame) == 2 * len(FIDELITY_VERIFIERS) and set(frame["condition"]) == set(FIDELITY_VERIFIERS)
    here = setup_fidelity(tiny_setup)
    assert frame[frame["seed"] == 0]["verifier_fidelity"].tolist() == here["fidelity"].tolist()
    sweep = main(["--params", str(pfile), "--out", str(tmp_path / "sweep.json"), "--workers", "1", "--no-progress"])
    assert report.fidelity_frame(saved, sweep)[1] == 0.0
    other = json.loads(json.dumps(sweep))
    other["cold_start"]["verdict_acc"]["values"][1] += 0.01
    with pytest.raises(ValueError, match=r"seeds \[1\] have another cold start"):
        report.fidelity_frame(saved, other)
    with pytest.raises(ValueError, match="config differs"):
        report.fidelity_frame(saved, dict(sweep, config={**sweep["config"], "n_test": 65}))
    with pytest.raises(ValueError, match="verifier-fidelity record"):
        report.fidelity_frame(sweep)
    with pytest.raises(ValueError, match="--fidelity runs no condition"):
        main(["--params", str(pfile), "--out", str(out), "--fidelity", "--conditions", "no_proxy"])
