"""A probe of every public array function of posteval.metrics with bad inputs in each array
argument: each case must be a clear error (ValueError naming the argument), never a silent
answer or another exception. `python tests/test_input_probe.py` prints the count per outcome.

Issue 44 added: a sparse matrix holding NaN; data at 1e154 and 1e-300 scale (the answer must be the
unit-scale answer times the scale: "correct", else "silent"); bad settings (seed, levels, counts,
ranges, ...) of the API; an empty list of arrays; and the report's command line with a folder, FIFO or
device named .npy, one event, a constant truth, an --out that is a file or cannot be written, a
non-UTF-8 name, a huge HDF5 dataset never written and a folder holding an earlier report."""

import contextlib
import io
import os
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse

from posteval import metrics
from posteval.metrics import intervals

RNG = np.random.default_rng(0)
N, M = 60, 8
T1 = RNG.normal(size=N)
S1 = T1[:, None] + RNG.normal(size=(N, M))
T2 = RNG.normal(size=(N, 2))
S2 = T2[:, None, :] + RNG.normal(size=(N, M, 2))
P1 = T1 + RNG.normal(size=N)
REPS = RNG.normal(size=(100, 3))
V5 = np.array([1.0, 1.2, 0.9, 1.1, 1.05])
REPS5 = 1.0 + 0.1 * RNG.normal(size=(100, 5))

# function -> (argument names, valid arguments in order, keyword arguments)
CASES = {
    "rmse": (("pred", "truth"), (P1, T1), {}),
    "mae": (("pred", "truth"), (P1, T1), {}),
    "crps_ensemble": (("samples", "truth"), (S1, T1), {}),
    "crps_normal": (("mu", "sigma", "truth"), (P1, np.ones(N), T1), {}),
    "energy_score_ensemble": (("samples", "truth"), (S2, T2), {}),
    "mmd_squared_ensemble": (("samples", "reference"), (S2, S2), {}),
    "mean_abs_difference": (("samples",), (S1,), {}),
    "chi2_spectrum": (("samples", "truth"), (P1, T1), {}),
    "spectrum_test": (("samples", "truth"), (P1, T1), {"n_resamples": 20}),
    "pit": (("samples", "truth"), (S1, T1), {}),
    "coverage_curve": (("samples", "truth"), (S1, T1), {}),
    "conformal_coverage_curve": (("cal_pred", "cal_truth", "test_pred", "test_truth"), (P1, T1, P1, T1), {}),
    "central_interval_hits": (("samples", "truth"), (S1, T1), {"level": 0.5}),
    "bootstrap_means": (("values",), (P1,), {"n_resamples": 50}),
    "percentile_interval": (("replicates",), (REPS,), {}),
    "bootstrap_pvalue": (("replicates",), (REPS,), {}),
    "compare": (("a", "b", "truth"), (S1, P1, T1), {"n_resamples": 50}),
    "scores_reconstruction": (("pred", "truth"), (S2, T2), {}),
    "one_per_event": (("values",), (S2,), {}),
    "energy_score_reconstruction": (("pred", "truth"), (S2, T2), {}),
    "protocol_report": (("name_to_samples['m']", "truth"), (S1, T1), {}),
    # the inference layer (posteval.metrics.intervals): per-event scores (n,) or (n, S), per-seed
    # values (S,), bootstrap replicates (B, S)
    "event_interval": (("scores",), (P1,), {}),
    "paired_event_interval": (("a", "b"), (P1, T1), {}),
    "replicate_interval": (("values", "replicates"), (V5, REPS5), {}),
    "seed_interval": (("values",), (V5,), {}),
    "paired_seed_interval": (("a", "b"), (V5, V5 + 0.1), {}),
    "stack_seeds": (("per_seed[0]", "per_seed[1]"), (P1, T1), {}),
}

BAD = {
    "nan": lambda v: np.where(np.arange(v.size).reshape(v.shape) == 3, np.nan, v),
    "inf": lambda v: np.where(np.arange(v.size).reshape(v.shape) == 3, np.inf, v),
    "empty": lambda v: v[:0],
    "complex": lambda v: v + 1j,
    "datetime": lambda v: v.astype(int).astype("datetime64[s]"),
    "masked": lambda v: np.ma.masked_array(v, mask=np.zeros(v.shape, bool)),
    "object": lambda v: v.astype(object),
    "string": lambda v: v.astype(str),
    "scalar": lambda v: np.float64(1.0),
    "too many axes": lambda v: v[..., None, None],
    "None": lambda v: None,
    "ragged": lambda v: [list(r) for r in np.atleast_2d(v)[:2]] + [[1.0]],
    "sparse with NaN": lambda v: sparse.csr_matrix(np.where(np.arange(v.size).reshape(v.shape) == 3, np.nan,
                                                            v.reshape(len(v), -1))),
}


def _call(name, args, kwargs):
    if name == "protocol_report":
        return metrics.protocol_report({"m": args[0]}, args[1], **kwargs)
    if name == "stack_seeds":
        return intervals.stack_seeds(list(args))
    return (getattr(metrics, name, None) or getattr(intervals, name))(*args, **kwargs)


# valid by the function's contract: crps_normal broadcasts scalars and up to 3-D arrays; replicates
# may carry any trailing shape
CONTRACT = {("crps_normal", "scalar"), ("crps_normal", "too many axes"), ("percentile_interval", "too many axes"),
            ("bootstrap_pvalue", "too many axes"),
            # one value is one seed's (or an untrained model's, exact); a single value pairs with every seed
            ("seed_interval", "scalar"), ("paired_seed_interval", "scalar")}


def outcome(name: str, slot: int, bad: str) -> tuple[str, str]:
    """("clear" | "unclear" | "silent" | "correct", message) of one bad input."""
    names, valid, kwargs = CASES[name]
    if (name, bad) in CONTRACT:
        return "correct", "valid by contract"
    args = list(valid)
    try:
        args[slot] = BAD[bad](np.asarray(valid[slot]))
    except (TypeError, ValueError):
        return "skip", ""
    try:
        _call(name, args, kwargs)
    except ValueError as exc:
        arg = names[slot]
        said = str(exc)
        ok = said.startswith(arg) or f"{arg}:" in said or f"{arg} " in said or f"{arg} and" in said
        return ("clear" if ok else "unclear"), said
    except Exception as exc:  # noqa: BLE001 - the probe classifies every other exception as unclear
        return "unclear", f"{type(exc).__name__}: {exc}"
    return "silent", ""


PROBES = [(n, i, b) for n, (names, _, _) in CASES.items() for i in range(len(names)) for b in BAD]

# --- the scale of the data: homogeneous scores must give the unit-scale answer times the scale (degree) ----------
SCALED = {
    "rmse": (lambda c: metrics.rmse(c * P1, c * T1), 1),
    "mae": (lambda c: metrics.mae(c * P1, c * T1), 1),
    "crps_ensemble": (lambda c: metrics.crps_ensemble(c * S1, c * T1), 1),
    "crps_normal": (lambda c: metrics.crps_normal(c * P1, c * np.ones(N), c * T1), 1),
    "energy_score_ensemble": (lambda c: metrics.energy_score_ensemble(c * S2, c * T2), 1),
    "mean_abs_difference": (lambda c: metrics.mean_abs_difference(c * S1), 1),
    "event_scores crps": (lambda c: metrics.event_scores(c * S1, c * T1)[0], 1),
    "event_scores mae": (lambda c: metrics.event_scores(c * P1, c * T1, metric="mae")[0], 1),
    "event_scores rmse": (lambda c: metrics.event_scores(c * P1, c * T1, metric="rmse")[0], 2),
    "event_scores energy_score": (lambda c: metrics.event_scores(c * S2, c * T2, metric="energy_score")[0], 1),
    "scores_reconstruction mae": (lambda c: metrics.scores_reconstruction(c * S2, c * T2)["mae"], 1),
    "protocol_report crps": (lambda c: metrics.protocol_report({"m": c * S1}, c * T1)["crps"].to_numpy(), 1),
}
SCALES = {"1e154": 1e154, "1e-300": 1e-300}


def scale_outcome(name: str, scale: str) -> tuple[str, str]:
    """"correct" when f(c x) = c^k f(x) to 1e-12 (or a clear ValueError saying the result leaves the range),
    "silent" when another answer comes back, "unclear" for another exception."""
    f, degree = SCALED[name]
    c = SCALES[scale]
    reference = np.asarray(f(1.0), dtype=float)
    try:
        got = np.asarray(f(c), dtype=float)
    except ValueError as exc:
        return ("clear", str(exc)) if "range" in str(exc) else ("unclear", str(exc))
    except Exception as exc:  # noqa: BLE001
        return "unclear", f"{type(exc).__name__}: {exc}"
    with np.errstate(over="ignore", under="ignore"):
        expected = reference * c**degree
    if c**degree == 0 or not np.all(np.isfinite(expected)) or np.any((reference != 0) & (expected == 0)):
        return "silent", "a value outside the float64 range came back"  # the right answer was an error
    ok = np.allclose(got, expected, rtol=1e-12, atol=0)
    return ("correct", "") if ok else ("silent", f"{got.ravel()[:2]} instead of {expected.ravel()[:2]}")


SCALE_PROBES = [(n, c) for n in SCALED for c in SCALES]

# --- the settings of the API: each bad value a ValueError naming its argument --------------------------------
BAD_SETTINGS = {"negative": -1, "float": 1.5, "string": "a", "None": None, "bool": True, "nan": float("nan"),
                "huge": 10**30}
SETTINGS = {
    "protocol_report seed": ("seed", lambda v: metrics.protocol_report({"m": S1}, T1, seed=v)),
    "protocol_report n_resamples": ("n_resamples", lambda v: metrics.protocol_report({"m": S1}, T1, level=0.9,
                                                                                      n_resamples=v)),
    "protocol_report level": ("level", lambda v: metrics.protocol_report({"m": S1}, T1, level=v)),
    "protocol_report levels": ("levels", lambda v: metrics.protocol_report({"m": S1}, T1, levels=v)),
    "protocol_report bins": ("bins", lambda v: metrics.protocol_report({"m": S1}, T1, bins=v)),
    "protocol_report spectrum_resamples": ("spectrum_resamples",
                                           lambda v: metrics.protocol_report({"m": S1}, T1, spectrum_resamples=v)),
    "evaluate_models seed": ("seed", lambda v: metrics.evaluate_models({"m": S1}, T1, seed=v)),
    "evaluate_models n_resamples": ("n_resamples", lambda v: metrics.evaluate_models({"m": S1}, T1, n_resamples=v)),
    "evaluate_models level": ("level", lambda v: metrics.evaluate_models({"m": S1}, T1, level=v)),
    "evaluate_models max_gb": ("max_gb", lambda v: metrics.evaluate_models({"m": S1}, T1, max_gb=v)),
    "bootstrap_means n_resamples": ("n_resamples", lambda v: metrics.bootstrap_means(P1, n_resamples=v)),
    "bootstrap_means seed": ("seed", lambda v: metrics.bootstrap_means(P1, n_resamples=20, seed=v)),
    "compare n_resamples": ("n_resamples", lambda v: metrics.compare(S1, P1, T1, n_resamples=v)),
    "compare seed": ("seed", lambda v: metrics.compare(S1, P1, T1, n_resamples=20, seed=v)),
    "compare level": ("level", lambda v: metrics.compare(S1, P1, T1, n_resamples=20, level=v)),
    "spectrum_test n_resamples": ("n_resamples", lambda v: metrics.spectrum_test(P1, T1, n_resamples=v)),
    "spectrum_test seed": ("seed", lambda v: metrics.spectrum_test(P1, T1, n_resamples=20, seed=v)),
    "spectrum_test value_range": ("value_range", lambda v: metrics.spectrum_test(P1, T1, value_range=v,
                                                                                 n_resamples=20)),
    "chi2_spectrum value_range": ("value_range", lambda v: metrics.chi2_spectrum(P1, T1, value_range=(0.0, v))),
    "chi2_spectrum bins": ("bins", lambda v: metrics.chi2_spectrum(P1, T1, bins=v)),
    "coverage_curve levels": ("levels", lambda v: metrics.coverage_curve(S1, T1, v)),
    "energy_score_ensemble seed": ("seed", lambda v: metrics.energy_score_ensemble(S2, T2, estimator="fair",
                                                                                   n_shifts=3, seed=v)),
    "energy_score_ensemble n_shifts": ("n_shifts", lambda v: metrics.energy_score_ensemble(S2, T2, estimator="fair",
                                                                                           n_shifts=v)),
    "tarp_coverage n_resamples": ("n_resamples", lambda v: metrics.tarp_coverage(S2, T2, n_resamples=v)),
    "spread_skill bins": ("bins", lambda v: metrics.spread_skill(S2, T2, bins=v, n_resamples=20)),
    "rank_histogram seed": ("seed", lambda v: metrics.rank_histogram(S2, T2, seed=v, n_resamples=20)),
    "coverage_noise_floor n_resamples": ("n_resamples", lambda v: metrics.coverage_noise_floor(N, M, n_resamples=v)),
}
#: bad values that are a valid setting by the argument's contract
SETTING_CONTRACT = {("evaluate_models max_gb", "None"), ("evaluate_models max_gb", "float"),
                    ("evaluate_models max_gb", "huge"), ("protocol_report level", "None"),
                    ("spectrum_test value_range", "None"), ("energy_score_ensemble n_shifts", "None"),
                    ("chi2_spectrum value_range", "float"), ("chi2_spectrum value_range", "huge")}


def setting_outcome(name: str, bad: str) -> tuple[str, str]:
    """("clear" | "unclear" | "silent" | "correct", message) of one bad setting."""
    if (name, bad) in SETTING_CONTRACT:
        return "correct", "valid by contract"
    arg, f = SETTINGS[name]
    try:
        f(BAD_SETTINGS[bad])
    except ValueError as exc:
        return ("clear" if str(exc).startswith(arg) or f"{arg}:" in str(exc) else "unclear"), str(exc)
    except Exception as exc:  # noqa: BLE001
        return "unclear", f"{type(exc).__name__}: {exc}"
    return "silent", ""


SETTING_PROBES = [(n, b) for n in SETTINGS for b in BAD_SETTINGS]

# --- whole calls: an empty list, and the report's command line ------------------------------------------------


def _cli_case(make, args, said):
    """A CLI run in a fresh folder made by ``make``: clear when it exits 2 naming ``said`` and leaves no report."""
    def run(tmp: Path) -> tuple[str, str]:
        from posteval.metrics import cli

        make(tmp)
        err = io.StringIO()
        cwd = os.getcwd()
        try:
            os.chdir(tmp)
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                code = cli.main(["report", "--quiet", "--n-resamples", "100", *args])
        finally:
            os.chdir(cwd)
        if code == 0:
            return "silent", "exit 0"
        return ("clear" if said in err.getvalue() else "unclear"), err.getvalue().strip()
    return run


def _files(**arrays):
    def make(tmp):
        for name, arr in arrays.items():
            np.save(tmp / f"{name}.npy", arr)
    return make


def _with(make, extra):
    def both(tmp):
        make(tmp)
        extra(tmp)
    return both


def _earlier_2d_report(tmp):
    """A 1-D report written into a folder that holds a 2-D one: its stale protocol_1_dim1.png must go."""
    from posteval.metrics import cli

    with contextlib.redirect_stdout(io.StringIO()):
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            cli.main(["report", "--quiet", "--n-resamples", "100", "--samples", "a=s2.npy", "--truth", "t2.npy",
                      "--out", "rep"])
            cli.main(["report", "--quiet", "--n-resamples", "100", "--samples", "a=s1.npy", "--truth", "t1.npy",
                      "--out", "rep"])
        finally:
            os.chdir(cwd)
    return ("silent", "protocol_1_dim1.png left") if (tmp / "rep" / "protocol_1_dim1.png").exists() else ("correct", "")


def _huge_hdf5(tmp):
    import h5py

    with h5py.File(tmp / "big.h5", "w") as fh:
        fh.create_dataset("s", shape=(500, 10**7, 2), dtype="f8")  # never written: 80 GB of fill values


BASE = _files(t1=T1, s1=S1)
WHOLE = {
    "bootstrap_means empty list": lambda tmp: _raises("values", lambda: metrics.bootstrap_means([])),
    "cli folder named .npy": _cli_case(_with(BASE, lambda t: (t / "x.npy").mkdir()),
                                       ["--samples", "a=x.npy", "--truth", "t1.npy", "--out", "rep"], "x.npy: is a folder"),
    "cli FIFO named .npy": _cli_case(_with(BASE, lambda t: os.mkfifo(t / "x.npy")),
                                     ["--samples", "a=x.npy", "--truth", "t1.npy", "--out", "rep"], "x.npy: is a named pipe"),
    "cli /dev/zero named .npy": _cli_case(_with(BASE, lambda t: (t / "x.npy").symlink_to("/dev/zero")),
                                          ["--samples", "a=x.npy", "--truth", "t1.npy", "--out", "rep"], "x.npy: is a device"),
    "cli one event": _cli_case(_files(t=T1[:1], s=S1[:1]), ["--samples", "a=s.npy", "--truth", "t.npy", "--out", "rep"],
                               "t.npy: 1 event"),
    "cli constant truth": _cli_case(_files(t=np.ones(N), s=S1), ["--samples", "a=s.npy", "--truth", "t.npy",
                                                                  "--out", "rep"], "t.npy: the truth is constant"),
    "cli --out is a file": _cli_case(_with(BASE, lambda t: (t / "rep").write_text("")),
                                     ["--samples", "a=s1.npy", "--truth", "t1.npy", "--out", "rep"], "--out rep: exists"),
    "cli --out cannot be written": _cli_case(BASE, ["--samples", "a=s1.npy", "--truth", "t1.npy", "--out", "/proc/x"],
                                             "--out /proc/x: cannot write"),
    "cli non-UTF-8 name": _cli_case(BASE, ["--samples", "a\udcff=s1.npy", "--truth", "t1.npy", "--out", "rep"],
                                    "not valid UTF-8"),
    "cli huge HDF5 never written": _cli_case(_with(_files(t=RNG.normal(size=(500, 2))), _huge_hdf5),
                                             ["--samples", "a=big.h5:s", "--truth", "t.npy", "--out", "rep"],
                                             "more than the limit"),
    "cli stale figure of an earlier report": lambda tmp: (_files(t1=T1, s1=S1, t2=T2, s2=S2)(tmp),
                                                          _earlier_2d_report(tmp))[1],
}


def _raises(arg, call):
    try:
        call()
    except ValueError as exc:
        return ("clear" if str(exc).startswith(arg) else "unclear"), str(exc)
    except Exception as exc:  # noqa: BLE001
        return "unclear", f"{type(exc).__name__}: {exc}"
    return "silent", ""


def test_valid_calls_work():
    for name, (_, valid, kwargs) in CASES.items():
        _call(name, list(valid), kwargs)


@pytest.mark.parametrize(("name", "slot", "bad"), PROBES, ids=[f"{n}-{CASES[n][0][i]}-{b}" for n, i, b in PROBES])
def test_bad_input_is_a_clear_error(name, slot, bad):
    kind, message = outcome(name, slot, bad)
    assert kind in ("clear", "correct", "skip"), f"{kind}: {message}"


@pytest.mark.parametrize(("name", "scale"), SCALE_PROBES, ids=[f"{n}-{c}" for n, c in SCALE_PROBES])
def test_huge_and_tiny_data_give_the_scaled_answer(name, scale):
    kind, message = scale_outcome(name, scale)
    assert kind in ("correct", "clear"), f"{kind}: {message}"


@pytest.mark.parametrize(("name", "bad"), SETTING_PROBES, ids=[f"{n}-{b}" for n, b in SETTING_PROBES])
def test_bad_settings_are_a_clear_error(name, bad):
    kind, message = setting_outcome(name, bad)
    assert kind in ("clear", "correct"), f"{kind}: {message}"


@pytest.mark.parametrize("name", list(WHOLE))
def test_whole_calls_fail_clearly_or_answer_correctly(name, tmp_path):
    kind, message = WHOLE[name](tmp_path)
    assert kind in ("clear", "correct"), f"{kind}: {message}"


if __name__ == "__main__":
    import signal
    import tempfile
    from collections import Counter

    class _Late(Exception):
        pass

    def _late(*_):
        raise _Late

    signal.signal(signal.SIGALRM, _late)

    def timed(label, call, seconds=30):
        """One probe; still computing after ``seconds`` means no check up front (an endless count, a huge input):
        silent."""
        signal.alarm(seconds)
        try:
            return (*label, *call())
        except _Late:
            return (*label, "silent", f"still computing after {seconds} s: no check up front")
        except Exception as exc:  # noqa: BLE001 - the probe of an older version may meet anything
            return (*label, "unclear", f"{type(exc).__name__}: {exc}")
        finally:
            signal.alarm(0)

    results = [timed((n, CASES[n][0][i], b), lambda: outcome(n, i, b)) for n, i, b in PROBES]
    results += [timed((n, "data", c), lambda: scale_outcome(n, c)) for n, c in SCALE_PROBES]
    results += [timed((n, "setting", b), lambda: setting_outcome(n, b)) for n, b in SETTING_PROBES]
    for name, case in WHOLE.items():
        with tempfile.TemporaryDirectory() as tmp:
            results.append(timed((name, "call", ""), lambda: case(Path(tmp)), 60))
    print(Counter(r[3] for r in results))
    print(Counter((r[2], r[3]) for r in results))
    for r in results:
        if r[3] not in ("clear", "correct", "skip"):
            print(r[0], r[1], r[2], r[3], r[4][:150])
