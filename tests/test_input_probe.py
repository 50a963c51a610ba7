"""A probe of every public array function of posteval.metrics with bad inputs in each array
argument: each case must be a clear error (ValueError naming the argument), never a silent
answer or another exception. `python tests/test_input_probe.py` prints the count per outcome."""

import numpy as np
import pytest

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


def test_valid_calls_work():
    for name, (_, valid, kwargs) in CASES.items():
        _call(name, list(valid), kwargs)


@pytest.mark.parametrize(("name", "slot", "bad"), PROBES, ids=[f"{n}-{CASES[n][0][i]}-{b}" for n, i, b in PROBES])
def test_bad_input_is_a_clear_error(name, slot, bad):
    kind, message = outcome(name, slot, bad)
    assert kind in ("clear", "correct", "skip"), f"{kind}: {message}"


if __name__ == "__main__":
    from collections import Counter

    results = [(n, i, b, *outcome(n, i, b)) for n, i, b in PROBES]
    print(Counter(r[3] for r in results))
    print(Counter((r[2], r[3]) for r in results))
    for r in results:
        if r[3] not in ("clear", "correct", "skip"):
            print(r[0], CASES[r[0]][0][r[1]], r[2], r[3], r[4][:150])
