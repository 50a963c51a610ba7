"""`python -m posteval.metrics report` (`protocol-report`): its numbers are protocol_report's
(scored chunk by chunk), it gives verdicts, the energy score and the noise floor, records its
provenance, and unusable input gives a one-line error naming the file and key."""

import hashlib
import json
import subprocess
import sys

import h5py
import numpy as np
import pandas as pd
import pytest

import posteval
from posteval import book, metrics
from posteval.metrics import cli, protocol

N, M, N_CAL = 400, 32, 300


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    """A calibrated sampler (.npz), a point regressor (.npy) with calibration data (Parquet), truth (HDF5)."""
    d = tmp_path_factory.mktemp("toy")
    rng = np.random.default_rng(7)
    x = rng.normal(size=(N, 2))
    truth = x + rng.normal(size=(N, 2))
    samples = x[:, None, :] + rng.normal(size=(N, M, 2))
    x_cal = rng.normal(size=(N_CAL, 2))
    cal_truth = x_cal + rng.normal(size=(N_CAL, 2))
    np.savez(d / "sampler.npz", samples=samples, unused=np.zeros(3))
    np.save(d / "regressor.npy", x)
    with h5py.File(d / "truth.h5", "w") as fh:
        fh["targets/truth"] = truth
    pd.DataFrame(x_cal, columns=["a", "b"]).to_parquet(d / "cal_pred.parquet")
    pd.DataFrame(cal_truth, columns=["a", "b"]).to_parquet(d / "cal_truth.parquet")
    expected = metrics.protocol_report({"sampler": samples, "regressor": x}, truth, dim_names=["px", "py"],
                                       calibration={"regressor": (x_cal, cal_truth)}, level=0.95, n_resamples=1000, seed=0,
                                       energy=True, energy_shifts=cli.ENERGY_SHIFTS)
    return d, expected.drop(columns=["chi2_pvalue_exchange"])


def _cli(cwd, *args):
    return subprocess.run([sys.executable, "-m", "posteval.metrics", "report", *args], cwd=cwd, capture_output=True, text=True,
                          env={"PYTHONPATH": str(book.ROOT / "lib"), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"}, timeout=120)


def _run(monkeypatch, cwd, *args):
    """The CLI in this process (exit code); its output goes to capsys."""
    monkeypatch.chdir(cwd)
    return cli.main(["report", "--quiet", *args])


TOY_ARGS = ["--samples", "sampler=sampler.npz:samples", "--samples", "regressor=regressor.npy",
            "--truth", "truth.h5:targets/truth", "--calibration", "regressor=cal_pred.parquet,cal_truth.parquet",
            "--dims", "px,py"]


def test_report_numbers_equal_protocol_report_chunk_by_chunk(toy, monkeypatch, capsys):
    """Scored in chunks of 7 events, the table equals protocol_report's on the whole arrays."""
    d, expected = toy
    monkeypatch.setattr(protocol, "CHUNK_BYTES", 7 * 8 * M * 2)
    assert _run(monkeypatch, d, *TOY_ARGS, "--out", "report") == 0
    out = d / "report"
    csv = pd.read_csv(out / "protocol.csv")
    pd.testing.assert_frame_equal(csv[expected.columns], expected, check_dtype=False, rtol=1e-12)
    payload = json.loads((out / "protocol.json").read_text())
    from_json = pd.DataFrame(payload["protocol"])[expected.columns]
    pd.testing.assert_frame_equal(from_json, expected, check_dtype=False, rtol=1e-12)
    assert {"summary", "protocol", "leads", "calibration", "notes", "provenance"} <= set(payload)
    assert "energy_score_lo" in csv and np.all(csv["energy_score_lo"] <= csv["energy_score"])
    assert any("--spectrum-resamples" in note for note in payload["notes"])  # the exchange p-value says why it is absent
    stdout = capsys.readouterr().out
    # the bottom line first: the regressor wins RMSE and MAE with a collapsed spectrum, then the trusted model
    assert stdout.startswith("WARNING: regressor has the lowest RMSE and MAE, but its spectrum fails")
    assert stdout.splitlines()[1] == payload["bottom_line"] and payload["bottom_line"].startswith("Trust sampler")
    assert payload["summary"][0] in stdout
    for j, dim in enumerate(("px", "py")):
        assert (out / f"protocol_{j}_{dim}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = (out / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == 2
    assert (out / "protocol.md").read_text().startswith("# Evaluation protocol report")
    assert not [p for p in d.iterdir() if p.name.startswith(".report.")]  # no temporary folder left


def test_provenance_names_version_command_date_and_each_input_with_its_sha256(toy, monkeypatch):
    d, _ = toy
    assert _run(monkeypatch, d, *TOY_ARGS, "--out", "prov", "--crps-estimator", "fair", "--seed", "3") == 0
    prov = json.loads((d / "prov" / "protocol.json").read_text())["provenance"]
    assert prov["posteval_version"] == posteval.__version__
    assert "--crps-estimator fair" in prov["command"] and prov["crps_estimator"] == "fair" and prov["seed"] == 3
    assert prov["date"][:4].isdigit() and prov["date"].endswith("+00:00")
    digest = hashlib.sha256((d / "sampler.npz").read_bytes()).hexdigest()
    assert prov["inputs"]["sampler"]["sha256"] == digest and prov["inputs"]["sampler"]["kind"] == "samples"
    assert prov["inputs"]["regressor"]["calibration"]["truth_sha256"] == hashlib.sha256(
        (d / "cal_truth.parquet").read_bytes()).hexdigest()
    assert "chosen at random" in prov["point_value_rule"] and "fair" in prov["energy_score"]
    assert digest in (d / "prov" / "protocol.md").read_text()
    from PIL import Image

    assert posteval.__version__ in Image.open(d / "prov" / "protocol_0_px.png").text["Software"]


def test_verdicts_tie_resolved_and_correlation(tmp_path, monkeypatch):
    """An exact sampler, an independent copy (a tie), one 60 % too wide (resolved), one with exact
    marginals and the y1-y2 correlation destroyed (only the energy score separates it)."""
    rng = np.random.default_rng(1)
    n, m = 3000, 48
    chol = np.linalg.cholesky([[1.0, 0.8], [0.8, 1.0]])
    mu = rng.normal(size=(n, 2))
    truth = mu + rng.normal(size=(n, 2)) @ chol.T
    draw = lambda s=1.0: mu[:, None, :] + s * rng.normal(size=(n, m, 2)) @ chol.T  # noqa: E731
    exact = draw()
    shuffled = exact.copy()
    shuffled[:, :, 1] = rng.permuted(shuffled[:, :, 1], axis=1)
    for name, arr in {"truth": truth, "exact": exact, "copy": draw(), "wide": draw(1.6), "shuffled": shuffled}.items():
        np.save(tmp_path / f"{name}.npy", arr)
    args = [a for name in ("exact", "copy", "wide", "shuffled") for a in ("--samples", f"{name}={name}.npy")]
    assert _run(monkeypatch, tmp_path, *args, "--truth", "truth.npy", "--dims", "y1,y2", "--level", "0.95", "--out", "r") == 0
    payload = json.loads((tmp_path / "r" / "protocol.json").read_text())
    leads = pd.DataFrame(payload["leads"])

    def word(metric, a, b, dim=None):
        rows = leads[(leads.metric == metric) & (leads.best.isin([a, b])) & (leads.other.isin([a, b]))]
        if dim is not None:
            rows = rows[rows.dimension == dim]
        return set(rows.verdict)

    assert word("crps", "exact", "copy") <= {"not resolved"}
    assert set(leads[(leads.metric == "crps") & (leads.other == "wide")].verdict) == {"yes"}
    assert word("energy_score", "exact", "shuffled") == {"yes"}
    assert word("crps", "exact", "shuffled") <= {"not resolved"}  # same marginals: CRPS cannot tell
    calib = pd.DataFrame(payload["calibration"]).set_index(["model", "dimension"])["verdict"]
    assert calib["wide"].tolist() == ["over-covers", "over-covers"]
    assert set(calib["exact"]) <= {"calibrated", "not resolved"}
    assert np.all(leads.p_holm >= leads.p)
    joint = pd.DataFrame(payload["joint_calibration"]).set_index("model")
    assert joint.loc["shuffled", "tarp_verdict"] == "miscalibrated"  # only the joint check sees it
    assert set(calib["shuffled"]) <= {"calibrated", "not resolved"}
    assert joint.loc["exact", "tarp_verdict"] == "not rejected"  # a test's non-rejection, never "calibrated"
    assert joint.loc["wide", "spread_skill_lo"] > 1
    assert any("lowest energy score over all dimensions" in s for s in payload["summary"])


def test_report_leads_are_the_claims_tables_words(tmp_path, monkeypatch):
    """Issue 41: the report's leads (CLI on .npy files) and a claims table on the same data (each lead a
    Claim(direction=-1) in one family, its interval replicate_interval of the bootstrap difference) give
    the same differences, intervals, p, p_holm and words."""
    from posteval.metrics.claims import Claim, evaluate_claims
    from posteval.metrics.intervals import replicate_interval

    rng = np.random.default_rng(3)
    n, m = 600, 16
    mu = rng.normal(size=(n, 2))
    truth = mu + rng.normal(size=(n, 2))
    draws = {"exact": mu[:, None, :] + rng.normal(size=(n, m, 2)), "copy": mu[:, None, :] + rng.normal(size=(n, m, 2)),
             "wide": mu[:, None, :] + 1.5 * rng.normal(size=(n, m, 2))}
    for name, arr in {"truth": truth, **draws}.items():
        np.save(tmp_path / f"{name}.npy", arr)
    args = [a for name in draws for a in ("--samples", f"{name}={name}.npy")]
    assert _run(monkeypatch, tmp_path, *args, "--truth", "truth.npy", "--dims", "y1,y2", "--out", "r") == 0
    cli_leads = pd.DataFrame(json.loads((tmp_path / "r" / "protocol.json").read_text())["leads"])

    table, reps = metrics.protocol_report(draws, truth, dim_names=["y1", "y2"], level=0.95, n_resamples=1000, seed=0,
                                          energy=True, energy_shifts=cli.ENERGY_SHIFTS, replicates=True)
    claims, intervals, keys = [], {}, []
    for metric in ("crps", "energy_score", "rmse", "mae"):
        groups = [("all", table.drop_duplicates("model"))] if metric == "energy_score" else list(table.groupby("dimension"))
        for dim, group in groups:
            best = group[metric].idxmin()
            for other in group.index.drop(best):
                name = f"lead_{len(claims)}"
                claims.append(Claim(name, f"{table.model[best]} is lower than {table.model[other]} on {metric}",
                                    direction=-1, family="report"))
                diff = reps[metric][:, best] - reps[metric][:, other]
                intervals[name] = replicate_interval([table.loc[best, metric] - table.loc[other, metric]], diff[:, None])
                keys.append((metric, dim, table.model[best], table.model[other]))
    decided = evaluate_claims(claims, intervals=intervals).assign(key=keys).set_index("key")
    got = cli_leads.set_index(cli_leads[["metric", "dimension", "best", "other"]].apply(tuple, axis=1))
    assert sorted(got.index) == sorted(decided.index)
    got = got.loc[decided.index]
    assert got.verdict.tolist() == decided.word.tolist()
    assert {"yes", "not resolved"} <= set(decided.word)  # both words occur: the test compares something
    for mine, theirs in (("p_holm", "p_holm"), ("p", "p"), ("difference", "estimate"), ("difference_lo", "lo"),
                         ("difference_hi", "hi")):
        # protocol.json keeps 10 decimals (pandas' to_json)
        np.testing.assert_allclose(got[mine].to_numpy(float), decided[theirs].to_numpy(float), rtol=1e-9, atol=1e-10)


def _one_line_error(proc, *names):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for name in names:
        assert name in lines[0], (name, lines[0])
    return lines[0]


def test_nan_and_shape_problems_name_the_file_and_key(toy):
    d, _ = toy
    bad = np.load(d / "sampler.npz")["samples"].copy()
    bad[5, 3, 1] = np.nan
    np.savez(d / "bad.npz", samples=bad)
    np.save(d / "short.npy", np.zeros((N - 1, 2)))
    truth = ["--truth", "truth.h5:targets/truth", "--out", "x"]
    line = _one_line_error(_cli(d, "--samples", "s=bad.npz:samples", *truth), "bad.npz:samples")
    assert "1 values" in line and "NaN" in line and "event 5" in line
    _one_line_error(_cli(d, "--samples", "s=short.npy", *truth), "short.npy", str(N - 1), str(N))
    _one_line_error(_cli(d, "--samples", "s=sampler.npz", *truth), "sampler.npz", "samples", "unused")
    _one_line_error(_cli(d, "--samples", "s=sampler.npz:samples", "--truth", "truth.h5:targets/nope", "--out", "x"),
                    "truth.h5:targets/nope")
    _one_line_error(_cli(d, "--samples", "s=sampler.npz:samples", *truth, "--dims", "px"), "--dims", "truth.h5")
    _one_line_error(_cli(d, "--samples", "s=sampler.npz:samples", *truth, "--dims", "px,px"), "--dims", "unique")
    _one_line_error(_cli(d, "--samples", "s=sampler.npz:samples", *truth, "--calibration", "S=cal_pred.parquet,cal_truth.parquet"),
                    "--calibration", "'S'")
    assert not (d / "x").exists()


def test_shape_rules_cannot_misread(tmp_path, monkeypatch, capsys):
    """(n, 1) beside a 1-D truth needs --kind; a transposed array is named as such."""
    rng = np.random.default_rng(0)
    truth = rng.normal(size=300)
    np.save(tmp_path / "truth.npy", truth)
    np.save(tmp_path / "col.npy", truth[:, None] + rng.normal(size=(300, 1)))
    np.save(tmp_path / "transposed.npy", rng.normal(size=(16, 300)))
    base = ["--truth", "truth.npy", "--out", "o"]
    assert _run(monkeypatch, tmp_path, "--samples", "gbr=col.npy", *base) == 2
    err = capsys.readouterr().err
    assert "--kind gbr=points" in err and "--kind gbr=samples" in err and "col.npy" in err
    assert _run(monkeypatch, tmp_path, "--samples", "gbr=col.npy", "--kind", "gbr=points", *base) == 0
    row = pd.read_csv(tmp_path / "o" / "protocol.csv").iloc[0]
    assert row["kind"] == "point" and np.isnan(row["coverage_error_raw"])
    assert _run(monkeypatch, tmp_path, "--samples", "gbr=col.npy", "--kind", "gbr=samples", *base) == 0
    assert pd.read_csv(tmp_path / "o" / "protocol.csv").iloc[0]["kind"] == "samples"
    capsys.readouterr()
    assert _run(monkeypatch, tmp_path, "--samples", "t=transposed.npy", *base) == 2
    assert "first axis (transposed?)" in capsys.readouterr().err


def test_a_transposed_truth_is_blamed_on_the_truth_and_dimensions_before_draws_get_the_hint(tmp_path, monkeypatch,
                                                                                          capsys):
    """The user's two layouts: truth (d, n) beside samples (n, m, d) names the truth file, samples (n, d, m) beside
    truth (n, d) names the samples file with the transpose hint; neither writes a report."""
    rng = np.random.default_rng(0)
    truth = rng.normal(size=(300, 2))
    np.save(tmp_path / "truth.npy", truth)
    np.save(tmp_path / "truth_t.npy", truth.T)
    np.save(tmp_path / "flow.npy", truth[:, None, :] + rng.normal(size=(300, 16, 2)))
    np.save(tmp_path / "flow_t.npy", np.swapaxes(np.load(tmp_path / "flow.npy"), 1, 2))
    assert _run(monkeypatch, tmp_path, "--samples", "f=flow.npy", "--truth", "truth_t.npy", "--out", "o") == 2
    err = capsys.readouterr().err
    assert "truth truth_t.npy: shape (2, 300) looks transposed" in err and "(300, 2)" in err
    assert _run(monkeypatch, tmp_path, "--samples", "f=flow_t.npy", "--truth", "truth.npy", "--out", "o") == 2
    err = capsys.readouterr().err
    assert "flow_t.npy" in err and "(n, d, m) array transposed?" in err
    assert not (tmp_path / "o").exists()


def test_names_are_escaped_in_markdown_and_csv(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    truth = rng.normal(size=200)
    np.save(tmp_path / "truth.npy", truth)
    np.save(tmp_path / "a.npy", truth[:, None] + rng.normal(size=(200, 16)))
    assert _run(monkeypatch, tmp_path, "--samples", "@SUM(A1)|x=a.npy", "--truth", "truth.npy", "--out", "o") == 0
    assert pd.read_csv(tmp_path / "o" / "protocol.csv")["model"].iloc[0] == "'@SUM(A1)|x"
    md = (tmp_path / "o" / "protocol.md").read_text()
    assert "@SUM(A1)\\|x" in md


def test_version_and_help_state_the_shape_rules(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["report", "--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.strip() == f"posteval {posteval.__version__}"
    with pytest.raises(SystemExit):
        cli.main(["report", "--help"])
    text = capsys.readouterr().out
    assert "events always on the first axis" in text and "--level" in text and "--kind" in text
    assert all(f in text for f in (".npy", ".npz", "HDF5", "Parquet")) and "the default" in text  # formats, defaults


def test_sorted_reversed_and_shuffled_draws_give_byte_identical_reports(tmp_path, monkeypatch, capsys):
    """Issue 44: the draws of every sampler, sorted within each event, reversed or shuffled, give the same
    protocol.csv byte for byte, the same protocol.json but for the provenance's date and digests, and the same
    printed report (energy score from random pairs, one random draw per event for RMSE / MAE / spectrum)."""
    rng = np.random.default_rng(44)
    n, m = 300, 24
    x = rng.normal(size=(n, 2))
    truth = x + rng.normal(size=(n, 2))
    samplers = {"exact": x[:, None, :] + rng.normal(size=(n, m, 2)),
                "narrow": x[:, None, :] + 0.5 * rng.normal(size=(n, m, 2))}
    order = {"given": lambda s: s, "reversed": lambda s: s[:, ::-1],
             "sorted": lambda s: np.take_along_axis(s, s[:, :, :1].argsort(1), 1),
             "shuffled": lambda s: np.take_along_axis(s, np.argsort(rng.random(s.shape[:2]), 1)[:, :, None], 1)}
    outputs = {}
    for name, f in order.items():
        d = tmp_path / name
        d.mkdir()
        np.save(d / "truth.npy", truth)
        np.save(d / "reg.npy", x)
        for model, s in samplers.items():
            np.save(d / f"{model}.npy", f(s))
        assert _run(monkeypatch, d, "--samples", "exact=exact.npy", "--samples", "narrow=narrow.npy",
                    "--samples", "reg=reg.npy", "--truth", "truth.npy", "--n-resamples", "200", "--out", "rep") == 0
        payload = json.loads((d / "rep" / "protocol.json").read_text())
        payload["provenance"].pop("date")
        for info in payload["provenance"]["inputs"].values():
            info.pop("sha256")
        outputs[name] = ((d / "rep" / "protocol.csv").read_bytes(), payload, capsys.readouterr().out)
    assert not np.array_equal(order["sorted"](samplers["exact"]), samplers["exact"])  # the orders do differ
    for name in order:
        assert outputs[name] == outputs["given"], f"{name} draws change the report"
    assert "WARNING: reg has the lowest RMSE and MAE" in outputs["given"][2]


def test_output_folder_is_checked_before_scoring_and_stale_files_are_removed(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(5)
    np.save(tmp_path / "t2.npy", rng.normal(size=(120, 2)))
    np.save(tmp_path / "s2.npy", rng.normal(size=(120, 8, 2)))
    np.save(tmp_path / "t1.npy", rng.normal(size=120))
    np.save(tmp_path / "s1.npy", rng.normal(size=(120, 8)))
    common = ["--n-resamples", "100", "--out", "rep"]
    assert _run(monkeypatch, tmp_path, "--samples", "a=s2.npy", "--truth", "t2.npy", *common) == 0
    assert (tmp_path / "rep" / "protocol_1_dim1.png").exists()
    (tmp_path / "rep" / "mine.txt").write_text("kept")
    assert _run(monkeypatch, tmp_path, "--samples", "a=s1.npy", "--truth", "t1.npy", *common) == 0
    left = sorted(p.name for p in (tmp_path / "rep").iterdir())
    assert left == ["mine.txt", "protocol.csv", "protocol.json", "protocol.md", "protocol_0_dim0.png", "report.html"]
    capsys.readouterr()
    (tmp_path / "afile").write_text("")
    assert _run(monkeypatch, tmp_path, "--samples", "a=s1.npy", "--truth", "t1.npy", "--out", "afile") == 2
    assert "--out afile: exists and is not a folder" in capsys.readouterr().err
    assert _run(monkeypatch, tmp_path, "--samples", "a=s1.npy", "--truth", "t1.npy", "--out", "/proc/x/rep") == 2
    err = capsys.readouterr().err
    assert "--out /proc/x/rep: cannot write the report there" in err and ".rep." not in err


@pytest.mark.parametrize("make, said", [
    (lambda d: (d / "x.npy").mkdir(), "x.npy: is a folder, not a file"),
    (lambda d: __import__("os").mkfifo(d / "x.npy"), "x.npy: is a named pipe (FIFO)"),
    (lambda d: (d / "x.npy").symlink_to("/dev/zero"), "x.npy: is a device"),
])
def test_a_folder_fifo_or_device_named_npy_is_named_as_such(tmp_path, monkeypatch, capsys, make, said):
    np.save(tmp_path / "t1.npy", np.arange(10.0))
    make(tmp_path)
    assert _run(monkeypatch, tmp_path, "--samples", "a=x.npy", "--truth", "t1.npy", "--out", "rep") == 2
    assert said in capsys.readouterr().err


def test_one_event_a_constant_truth_a_huge_input_and_a_non_utf8_name_fail_before_scoring(tmp_path, monkeypatch, capsys):
    np.save(tmp_path / "one.npy", np.zeros(1))
    np.save(tmp_path / "s_one.npy", np.zeros((1, 4)))
    np.save(tmp_path / "const.npy", np.ones(50))
    np.save(tmp_path / "s.npy", np.zeros((50, 4)))
    cases = [(["a=s_one.npy", "one.npy"], "one.npy: 1 event; the protocol needs at least 2 test events"),
             (["a=s.npy", "const.npy"], "const.npy: the truth is constant (1.0) on dim0"),
             (["a\udcff=s.npy", "const.npy"], "not valid UTF-8")]
    for (spec, truth), said in cases:
        assert _run(monkeypatch, tmp_path, "--samples", spec, "--truth", truth, "--out", "rep") == 2
        assert said in capsys.readouterr().err
    np.save(tmp_path / "t.npy", np.arange(50.0))
    assert _run(monkeypatch, tmp_path, "--samples", "a=s.npy", "--truth", "t.npy", "--max-gb", "1e-9", "--out", "rep") == 2
    assert "more than the limit of 1e-09 GiB; give a higher limit (--max-gb" in capsys.readouterr().err
    assert not (tmp_path / "rep").exists()


def test_usage_names_the_program_it_was_run_as(capsys):
    with pytest.raises(SystemExit):
        cli.main(["report", "--bogus"], prog="protocol-report")
    assert capsys.readouterr().err.startswith("usage: protocol-report ")


def test_a_unit_axis_on_either_side_reads_as_the_same_problem(tmp_path, monkeypatch, capsys):
    """Samples (n, m, 1) beside a truth (n,) and samples (n, m) beside a truth (n, 1) give the report of
    (n, m) beside (n,): the same CRPS, coverage and verdicts (issue 66)."""
    rng = np.random.default_rng(3)
    truth = rng.normal(size=300)
    draws = truth[:, None] + rng.normal(size=(300, 16))
    np.save(tmp_path / "truth.npy", truth)
    np.save(tmp_path / "truth_col.npy", truth[:, None])
    np.save(tmp_path / "flow.npy", draws)
    np.save(tmp_path / "flow_unit.npy", draws[..., None])
    tables = {}
    for name, flow, t in (("plain", "flow.npy", "truth.npy"), ("unit_samples", "flow_unit.npy", "truth.npy"),
                          ("unit_truth", "flow.npy", "truth_col.npy")):
        assert _run(monkeypatch, tmp_path, "--samples", f"f={flow}", "--truth", t, "--out", name) == 0, name
        tables[name] = pd.read_csv(tmp_path / name / "protocol.csv")
    capsys.readouterr()
    for name in ("unit_samples", "unit_truth"):
        for col in ("crps", "coverage_error_raw"):
            assert np.allclose(tables[name][col], tables["plain"][col], rtol=1e-12), (name, col)
