"""Input validation shared by the metric modules: every check raises ValueError naming the argument.

The input policy of the package (one home, used by every public function of :mod:`posteval.metrics`):

* arrays: real floating arrays, and integer or bool arrays (cast to float64); numpy arrays,
  nested lists of numbers, pandas Series / DataFrames of numbers and numpy scalars where a
  function documents them. Complex, datetime / timedelta, object, string and masked arrays are
  refused (a masked array's mask would be lost, a complex number's imaginary part, a date's
  meaning), as are NaN and infinite values and empty arrays;
* counts and seeds: Python or numpy integers (``bool`` is not a count), checked against their
  minimum (:func:`positive_int`, :func:`seed_value`);
* levels: a Python or numpy real number in (0, 1) (:func:`level_value`);
* results that would leave the float64 range raise instead of returning inf or 0
  (:func:`power_of_two_scale` scales huge and tiny data by an exact power of two first).
"""

from __future__ import annotations

import numbers

import numpy as np

class _Levels(np.ndarray):
    """DEFAULT_LEVELS: the nominal coverages 0.05, 0.10, ..., 0.95 (19 levels, read-only) of every coverage
    function. A numpy array; arithmetic on it gives plain arrays."""

    def __array_wrap__(self, out, context=None, return_scalar=False):  # ufunc results: plain arrays
        out = np.asarray(out).view(np.ndarray)
        return out[()] if return_scalar else out

    def __repr__(self) -> str:
        return repr(self.view(np.ndarray))


# its own class gives it its own docstring: help(posteval.metrics) shows that, not numpy's ndarray help
DEFAULT_LEVELS = np.round(np.arange(0.05, 1.0, 0.05), 2).view(_Levels)
DEFAULT_LEVELS.setflags(write=False)  # shared by every call: read-only

_REFUSED_KINDS = {"c": "complex", "M": "datetime", "m": "timedelta", "O": "object", "U": "string", "S": "bytes",
                  "V": "structured"}


def real_array(x, name: str) -> np.ndarray:
    """``x`` as a float64 array under the input policy (no shape or finiteness check)."""
    if isinstance(x, np.ma.MaskedArray):
        raise ValueError(f"{name}: masked arrays are not accepted (the mask would be ignored); pass the unmasked "
                         f"values, e.g. x.compressed() or x.filled(...) as you intend")
    try:
        raw = np.asarray(x)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name}: cannot be converted to an array ({exc})") from None
    kind = raw.dtype.kind
    if kind in _REFUSED_KINDS:
        raise ValueError(f"{name}: {_REFUSED_KINDS[kind]} values (dtype {raw.dtype}) are not accepted; expected real "
                         f"numbers (float, integer or bool)")
    return raw.astype(float, copy=False)


def finite_array(x, name: str, ndims: tuple[int, ...]) -> np.ndarray:
    """`x` as a float array with one of the allowed ranks, non-empty and finite."""
    arr = real_array(x, name)
    if arr.ndim not in ndims:
        raise ValueError(f"{name}: expected {' or '.join(f'{k}-D' for k in ndims)} array, got shape {arr.shape}")
    if arr.size == 0 or arr.shape[0] == 0:
        raise ValueError(f"{name}: empty array (shape {arr.shape})")
    with np.errstate(over="ignore", invalid="ignore"):
        total = np.sum(arr)
    if not np.isfinite(total):  # one cheap pass; the sum of huge finite values may overflow too
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        if bad:
            raise ValueError(f"{name}: contains {bad} NaN or infinite values")
    return arr


def point_pair(pred, truth, names=("pred", "truth")) -> tuple[np.ndarray, np.ndarray]:
    """Validated (pred, truth) of equal shape (n,) or (n, d)."""
    p = finite_array(pred, names[0], (1, 2))
    t = finite_array(truth, names[1], (1, 2))
    if p.shape != t.shape:
        raise ValueError(f"{names[0]} and {names[1]}: shapes differ, {p.shape} vs {t.shape}")
    return p, t


def samples_truth(samples, truth, names=("samples", "truth")) -> tuple[np.ndarray, np.ndarray, bool]:
    """Validated samples (n, m, d) and truth (n, d); the flag says the input was 1-D."""
    t = finite_array(truth, names[1], (1, 2))
    one_d = t.ndim == 1
    s = finite_array(samples, names[0], (2,) if one_d else (3,))
    if s.shape[1] < 1:
        raise ValueError(f"{names[0]}: need m >= 1 samples per event, got shape {s.shape}")
    if one_d:
        s, t = s[:, :, None], t[:, None]
    if s.shape[0] != t.shape[0] or s.shape[2] != t.shape[1]:
        raise ValueError(
            f"{names[0]} and {names[1]}: samples {s.shape} must be (n, m, d) for truth (n, d) = {t.shape}"
        )
    return s, t, one_d


def levels_array(levels) -> np.ndarray:
    """Validated nominal levels, each in (0, 1)."""
    lv = finite_array(levels, "levels", (1,))
    if np.any((lv <= 0) | (lv >= 1)):
        raise ValueError(f"levels: every nominal level must lie in (0, 1), got {lv.min()}..{lv.max()}")
    return lv


#: the largest count or seed accepted (a larger one is a typo, and would overflow numpy's 64-bit integers)
MAX_INT = 2**62


def positive_int(value, name: str, minimum: int = 1, maximum: int = MAX_INT) -> int:
    """`value` as an int, minimum <= value <= maximum."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value!r}")
    if value > maximum:
        raise ValueError(f"{name}: expected an integer <= {maximum}, got {value!r}")
    return int(value)


def seed_value(seed, name: str = "seed") -> int:
    """A seed: an integer 0 <= seed <= 2**62 (Python or numpy)."""
    return positive_int(seed, name, minimum=0)


def level_value(level, name: str = "level") -> float:
    """A level (``ci``, ``level``): a Python or numpy real number strictly between 0 and 1."""
    if isinstance(level, (bool, np.bool_)) or not isinstance(level, numbers.Real) or not 0 < float(level) < 1:
        raise ValueError(f"{name}: expected a level in (0, 1), got {level!r}")
    return float(level)


def replicate_array(replicates, name: str = "replicates") -> np.ndarray:
    """Bootstrap replicates along axis 0: at least 2, real and finite."""
    rep = real_array(replicates, name)
    if rep.ndim == 0 or rep.shape[0] < 2:
        raise ValueError(f"{name}: expected at least 2 replicates along axis 0, got shape {rep.shape}")
    bad = int(rep.size - np.count_nonzero(np.isfinite(rep)))
    if bad:
        raise ValueError(f"{name}: contains {bad} NaN or infinite values")
    return rep


def power_of_two_scale(*arrays: np.ndarray) -> float:
    """A power of two that brings the largest magnitude in `arrays` near 1 when it exceeds 2**500
    (differences and squares of such values would overflow) or lies below 2**-500 (their squares
    would underflow to 0), else 1.0. Scaling by a power of two is exact, so scores that are
    homogeneous in the data are unchanged to the last bit."""
    big = max(max(float(np.max(a)), -float(np.min(a))) for a in arrays)
    if 2.0**-500 <= big < 2.0**500 or big == 0.0:
        return 1.0
    return float(2.0 ** np.floor(np.log2(big)))


def rescaled(out: np.ndarray, scale: float, name: str) -> np.ndarray:
    """`out * scale`, raising ValueError instead of overflowing to inf."""
    with np.errstate(over="ignore"):
        return check_finite_result(out * scale, name)


def check_finite_result(out: np.ndarray, name: str) -> np.ndarray:
    """Raise if a score overflowed to inf although its inputs were finite."""
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name}: the result overflows the float64 range for these inputs")
    return out


# ---------------------------------------------------------------------------------------------
# the order-free rule: draw order carries no information (issue 44)
# ---------------------------------------------------------------------------------------------
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    """The SplitMix64 finaliser (Steele, Lea and Flood (2014), OOPSLA), elementwise on uint64."""
    with np.errstate(over="ignore"):
        x = (x + _GOLDEN).astype(np.uint64)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def event_draw_keys(seed: int, first_event: int, n: int, m: int) -> np.ndarray:
    """Pseudo-random uint64 keys (n, m): key[i, j] = SplitMix64(SplitMix64(SplitMix64(seed) + e) + j)
    for the global event index e = first_event + i.

    A counter-based stream (Salmon et al. (2011), SC'11): the key of an event depends on the seed
    and the event's index only, so the events of one array and those of its consecutive chunks
    (``first_event`` = the chunk's start) get the same keys.

    >>> k = event_draw_keys(0, 0, 4, 3)
    >>> k.shape, bool(np.array_equal(k[2:], event_draw_keys(0, 2, 2, 3)))
    ((4, 3), True)
    """
    base = _splitmix64(np.array([seed], dtype=np.uint64))
    with np.errstate(over="ignore"):
        ev = _splitmix64(base + np.arange(first_event, first_event + n, dtype=np.uint64))
        return _splitmix64(ev[:, None] + np.arange(m, dtype=np.uint64)[None, :])


def order_free_draws(samples: np.ndarray, seed: int = 0, first_event: int = 0) -> np.ndarray:
    """The draws (n, m, d) of each event in an order that does not depend on the order given:
    sorted lexicographically (by the first coordinate, ties by the next, ...), then permuted by a
    seeded random permutation per event (the argsort of :func:`event_draw_keys`).

    Every statistic computed from the result is a function of the *set* of draws of each event
    (and of the seed), whatever the input order; the draw in position 0 is a uniformly random one
    of the event's draws, and the pairs (j, j + k mod m) are random pairs of distinct draws.
    References: Knuth, *TAOCP* vol. 3, sec. 5.1 (lexicographic order); Durstenfeld (1964), CACM 7
    (a random permutation as the sort of random keys).

    >>> a = np.array([[[3.0], [1.0], [2.0]]])
    >>> b = a[:, ::-1]                     # the same draws, reversed
    >>> bool(np.array_equal(order_free_draws(a), order_free_draws(b)))
    True
    """
    n, m, d = samples.shape
    if m == 1:
        return samples
    keys = [samples[:, :, j] for j in range(d - 1, -1, -1)]  # lexsort: the last key is the primary one
    canon = np.take_along_axis(samples, np.lexsort(keys, axis=-1)[:, :, None], axis=1)
    perm = np.argsort(event_draw_keys(seed, first_event, n, m), axis=1, kind="stable")
    return np.take_along_axis(canon, perm[:, :, None], axis=1)
