"""`python -m posteval.metrics report` on two toy models: its numbers are protocol_report's, its
files are all written, and unusable input gives a one-line error naming the file and key."""

import json
import subprocess
import sys

import h5py
import numpy as np
import pandas as pd
import pytest

from posteval import book, metrics

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
                                       calibration={"regressor": (x_cal, cal_truth)})
    return d, expected


def _cli(cwd, *args):
    return subprocess.run([sys.executable, "-m", "posteval.metrics", "report", *args], cwd=cwd, capture_output=True, text=True,
                          env={"PYTHONPATH": str(book.ROOT / "lib"), "PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"}, timeout=120)


TOY_ARGS = ["--samples", "sampler=sampler.npz:samples", "--samples", "regressor=regressor.npy",
            "--truth", "truth.h5:targets/truth", "--calibration", "regressor=cal_pred.parquet,cal_truth.parquet",
            "--dims", "px,py"]


def test_report_numbers_equal_protocol_report_and_every_file_is_written(toy):
    d, expected = toy
    proc = _cli(d, *TOY_ARGS, "--out", "report")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = d / "report"
    csv = pd.read_csv(out / "protocol.csv")
    pd.testing.assert_frame_equal(csv, expected, check_dtype=False, rtol=0, atol=0)
    # JSON has no NaN: a NaN column (e.g. chi2_pvalue_exchange without exchanges) comes back as null
    from_json = pd.DataFrame(json.loads((out / "protocol.json").read_text()))[expected.columns]
    from_json = from_json.astype(expected.dtypes.to_dict())
    pd.testing.assert_frame_equal(from_json, expected, check_dtype=False, rtol=1e-12)
    md = (out / "protocol.md").read_text().splitlines()
    assert md[0].split("|")[1:-1] == [f" {c} " for c in expected.columns]
    assert len(md) == 2 + len(expected)
    assert proc.stdout.startswith("\n".join(md[:2]))
    for dim in ("px", "py"):
        png = (out / f"protocol_{dim}.png").read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n"
    page = (out / "report.html").read_text()
    assert page.count('src="data:image/png;base64,') == 2
    assert page.count("<tr") == 1 + len(expected)
    assert "regressor=cal_pred.parquet" not in page and "cal_pred.parquet" in page


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
    assert "1 of" in line and "NaN" in line
    _one_line_error(_cli(d, "--samples", "s=short.npy", *truth), "short.npy", str(N - 1), str(N))
    _one_line_error(_cli(d, "--samples", "s=sampler.npz", *truth), "sampler.npz", "samples", "unused")
    _one_line_error(_cli(d, "--samples", "s=sampler.npz:samples", "--truth", "truth.h5:targets/nope", "--out", "x"),
                    "truth.h5:targets/nope")
    _one_line_error(_cli(d, "--samples", "s=sampler.npz:samples", *truth, "--dims", "px"), "--dims", "truth.h5")
    assert not (d / "x").exists()
