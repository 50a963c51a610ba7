"""The input policy of posteval.metrics (its package docstring): refused kinds of arrays, scores
without overflow or underflow, validated replicate helpers and arguments, and the report CLI's
files, each case a clear error or the correct answer."""

import struct
import zipfile

import numpy as np
import pandas as pd
import pytest

from posteval import metrics
from posteval.metrics import cli

RNG = np.random.default_rng(0)
TRUTH = RNG.normal(size=200)
SAMPLES = TRUTH[:, None] + RNG.normal(size=(200, 16))
POINTS = TRUTH + 0.5 * RNG.normal(size=200)

REFUSED = {
    "complex": (POINTS + 1j, "complex"),
    "datetime": (np.arange(200).astype("datetime64[D]"), "datetime"),
    "timedelta": (np.arange(200).astype("timedelta64[s]"), "timedelta"),
    "masked": (np.ma.masked_array(POINTS, mask=np.arange(200) % 2 == 0), "masked"),
    "object": (np.array([object()] * 200), "object"),
    "string": (np.array(["1.0"] * 200), "string"),
}
CALLS = {
    "rmse": lambda x: metrics.rmse(x, TRUTH),
    "mae": lambda x: metrics.mae(x, TRUTH),
    "crps (truth)": lambda x: metrics.crps_ensemble(SAMPLES, x),
    "coverage_curve (truth)": lambda x: metrics.coverage_curve(SAMPLES, x),
    "protocol_report": lambda x: metrics.protocol_report({"m": x}, TRUTH),
    "compare": lambda x: metrics.compare(x, POINTS, TRUTH, metric="mae", n_resamples=100),
    "chi2_spectrum": lambda x: metrics.chi2_spectrum(x, TRUTH),
}


@pytest.mark.parametrize("kind", REFUSED)
@pytest.mark.parametrize("call", CALLS)
def test_refused_kinds_of_array_are_errors_naming_the_kind(kind, call):
    value, word = REFUSED[kind]
    with pytest.raises(ValueError, match=word):
        CALLS[call](value)


@pytest.mark.parametrize("call", CALLS)
def test_integer_bool_and_list_inputs_are_cast(call):
    as_float = np.round(POINTS * 3)
    expected = CALLS[call](as_float)
    for value in (as_float.astype(int), as_float.tolist(), pd.Series(as_float)):
        got = CALLS[call](value)
        if isinstance(expected, pd.DataFrame):
            pd.testing.assert_frame_equal(got, expected)
        elif hasattr(expected, "diff"):
            assert got == expected
        else:
            np.testing.assert_array_equal(np.asarray(got, dtype=float), np.asarray(expected, dtype=float))
    assert metrics.rmse(np.array([True, False]), np.array([1.0, 0.0])) == 0.0


@pytest.mark.parametrize("scale", [1e-300, 1e-200, 1e154, 1e200, 1e300])
def test_scores_hold_over_the_finite_float64_range(scale):
    """Every score of data times a power-of-ten scale is the score times that scale (the data
    are scaled by an exact power of two inside, so no square over- or underflows)."""
    s, t, p = SAMPLES * scale, TRUTH * scale, POINTS * scale
    np.testing.assert_allclose(metrics.rmse(p, t), metrics.rmse(POINTS, TRUTH) * scale, rtol=1e-12)
    np.testing.assert_allclose(metrics.mae(p, t), metrics.mae(POINTS, TRUTH) * scale, rtol=1e-12)
    np.testing.assert_allclose(metrics.crps_ensemble(s, t), metrics.crps_ensemble(SAMPLES, TRUTH) * scale, rtol=1e-12)
    s3, t3 = np.stack([s, s], axis=2), np.stack([t, t], axis=1)
    np.testing.assert_allclose(metrics.energy_score_ensemble(s3, t3), metrics.energy_score_ensemble(s3 / scale, t3 / scale) * scale,
                               rtol=1e-12)
    np.testing.assert_allclose(metrics.crps_normal(p, scale, t), metrics.crps_normal(POINTS, 1.0, TRUTH) * scale,
                               rtol=1e-9)
    base = metrics.protocol_report({"s": SAMPLES, "p": POINTS}, TRUTH, level=0.95, n_resamples=200)
    big = metrics.protocol_report({"s": s, "p": p}, t, level=0.95, n_resamples=200)
    cols = ["rmse", "mae", "crps", "rmse_lo", "rmse_hi", "crps_lo", "crps_hi"]
    np.testing.assert_allclose(big[cols].to_numpy(), base[cols].to_numpy() * scale, rtol=1e-12)
    assert big["chi2"].tolist() == base["chi2"].tolist()
    cmp, ref = metrics.compare(s, p, t, n_resamples=200), metrics.compare(SAMPLES, POINTS, TRUTH, n_resamples=200)
    np.testing.assert_allclose([cmp.diff, cmp.lo, cmp.hi], np.array([ref.diff, ref.lo, ref.hi]) * scale, rtol=1e-12)
    assert cmp.pvalue == ref.pvalue


def test_crps_normal_far_in_the_tail_and_results_beyond_float64():
    assert metrics.crps_normal(0.0, 1e-300, 1e10)[0] == pytest.approx(1e10, rel=1e-15)
    assert metrics.crps_normal(0.0, 1e-9, 3.0)[0] == pytest.approx(3.0 - 1e-9 / np.sqrt(np.pi), rel=1e-15)
    with pytest.raises(ValueError, match="overflows"):
        metrics.mae(np.array([1.7e308, -1.7e308]), np.array([-1.7e308, 1.7e308]))
    with pytest.raises(ValueError, match="overflows"):
        metrics.compare(np.full(50, 1.7e308), np.full(50, -1.7e308), np.full(50, -1.7e308), metric="mae", n_resamples=100)


def test_replicate_helpers_validate():
    for bad, word in ((np.full(1000, np.nan), "NaN"), (np.array([]), "at least 2"), (np.ones(1), "at least 2")):
        with pytest.raises(ValueError, match=word):
            metrics.bootstrap_pvalue(bad)
        with pytest.raises(ValueError, match=word):
            metrics.percentile_interval(bad)
    with pytest.raises(ValueError, match="null"):
        metrics.bootstrap_pvalue(np.ones(10), null=np.nan)


def test_arguments_are_validated_with_their_names():
    with pytest.raises(ValueError, match="read-only"):
        metrics.DEFAULT_LEVELS *= 0.5
    assert metrics.DEFAULT_LEVELS[0] == 0.05
    lo, hi = metrics.percentile_interval(np.arange(100.0), np.float32(0.9))
    assert lo < hi
    for seed in (1.5, "a", -1, True):
        with pytest.raises(ValueError, match="seed"):
            metrics.compare(POINTS, POINTS + 1, TRUTH, seed=seed)
    for n_resamples in (-1, 1.5, 1):
        with pytest.raises(ValueError, match="n_resamples"):
            metrics.compare(POINTS, POINTS + 1, TRUTH, n_resamples=n_resamples)
    for level in (0, 1, 1.5, "0.9", True):
        with pytest.raises(ValueError, match="level"):
            metrics.compare(POINTS, POINTS + 1, TRUTH, level=level)
    with pytest.raises(ValueError, match=r"calibration: no model named 'A'"):
        metrics.protocol_report({"a": POINTS}, TRUTH, calibration={"A": (POINTS, TRUTH)})
    with pytest.raises(ValueError, match=r"name_to_samples\['a'\]"):
        metrics.protocol_report({"a": 5.0}, TRUTH)
    with pytest.raises(ValueError, match="expected a mapping"):
        metrics.protocol_report([SAMPLES], TRUTH)
    with pytest.raises(ValueError, match="^a: "):
        metrics.compare(np.ones((200, 2, 2, 2)), POINTS, TRUTH)


# ---------------------------------------------------------------------------------------------
# the report CLI's files
# ---------------------------------------------------------------------------------------------
def _npy_header(shape, dtype="<f8") -> bytes:
    header = repr({"descr": dtype, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (len(header) + 10) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header


BAD_FILES = {
    "empty.npz": (lambda p: p.write_bytes(b""), "not a readable .npz"),
    "truncated.npz": (lambda p: p.write_bytes(_valid_npz()[:300]), "npz"),
    "array_named.npz": (lambda p: np.save(open(p, "wb"), SAMPLES), "not a readable .npz"),
    "huge_claim.npy": (lambda p: p.write_bytes(_npy_header((10**6, 10**6, 1)) + b"\0" * 64), "header claims"),
    "truncated.npy": (lambda p: p.write_bytes(_npy_bytes()[:1000]), "header claims"),
    "garbage.npy": (lambda p: p.write_bytes(b"not numpy at all"), "not a .npy array"),
    "complex.npy": (lambda p: np.save(p, SAMPLES + 1j), "complex"),
    "objects.npy": (lambda p: p.write_bytes(_npy_header((200, 16), "|O") + b"\0" * 64), "not real numeric"),
    "garbage.parquet": (lambda p: p.write_bytes(b"PAR1" + b"x" * 40 + b"PAR1"), "not a readable Parquet"),
    "dates.parquet": (lambda p: pd.DataFrame({"t": pd.date_range("2020", periods=200)}).to_parquet(p), "datetime"),
    "nan.npy": (lambda p: np.save(p, np.where(SAMPLES > 3, np.nan, SAMPLES)), "NaN"),
}


def _npy_bytes() -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, SAMPLES)
    return buf.getvalue()


def _valid_npz() -> bytes:
    import io

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("samples.npy", _npy_bytes())
    return buf.getvalue()


@pytest.mark.parametrize("name", BAD_FILES)
def test_every_bad_input_file_is_one_line_naming_it(name, tmp_path, monkeypatch, capsys):
    make, word = BAD_FILES[name]
    make(tmp_path / name)
    np.save(tmp_path / "truth.npy", TRUTH)
    monkeypatch.chdir(tmp_path)
    code = cli.main(["report", "--quiet", "--samples", f"m={name}", "--truth", "truth.npy", "--out", "out"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert name in err[0] and word in err[0], err[0]
    assert not (tmp_path / "out").exists()


def test_out_that_is_a_file_and_names_with_markup(tmp_path, monkeypatch, capsys):
    np.save(tmp_path / "truth.npy", TRUTH)
    np.save(tmp_path / "s.npy", SAMPLES)
    (tmp_path / "taken").write_text("x")
    monkeypatch.chdir(tmp_path)
    for out in ("taken", "taken/sub"):
        assert cli.main(["report", "--quiet", "--samples", "s=s.npy", "--truth", "truth.npy", "--out", out]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "taken" in err[0], err
    assert (tmp_path / "taken").read_text() == "x"
    name = r"$\foo{$ <b>"
    assert cli.main(["report", "--quiet", "--samples", f"{name}=s.npy", "--samples", "t=s.npy", "--truth", "truth.npy",
                     "--out", "o"]) == 0
    page = (tmp_path / "o" / "report.html").read_text()
    assert "&lt;b&gt;" in page and name not in page  # escaped in the HTML; drawn literally in the figures


def test_a_full_disk_while_writing_the_report_leaves_nothing_partial(tmp_path, monkeypatch, capsys):
    """ENOSPC while the report's files are written: one line, exit 2, no output folder and no
    temporary folder left behind."""
    import errno
    import pathlib

    np.save(tmp_path / "truth.npy", TRUTH)
    np.save(tmp_path / "s.npy", SAMPLES)
    monkeypatch.chdir(tmp_path)
    real_write = pathlib.Path.write_text

    def full(self, *args, **kwargs):
        if self.name == "protocol.md":
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real_write(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "write_text", full)
    assert cli.main(["report", "--quiet", "--samples", "s=s.npy", "--truth", "truth.npy", "--out", "out"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0], err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.npy", "truth.npy"]


def test_a_string_null_and_a_calibration_that_is_not_a_pair_are_refused_by_name():
    """The two cases of the hidden probe that answered silently or in Python's words (issue 66)."""
    rng = np.random.default_rng(0)
    truth = rng.normal(size=120)
    samples = truth[:, None] + rng.normal(size=(120, 8))
    with pytest.raises(ValueError, match=r"null: expected a finite number, got '0'"):
        metrics.bootstrap_pvalue(rng.normal(size=100), null="0")
    with pytest.raises(ValueError, match=r"calibration of .*a.*: expected a pair \(cal_pred, cal_truth\), got 1 items"):
        metrics.protocol_report({"a": samples}, truth, calibration={"a": (truth,)})
