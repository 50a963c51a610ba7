"""Completion grammar of the miniature: the analogue of upstream ``<rubric>…</rubric><eval>…</eval><answer>``.

A well-formed completion is::

    c_a [c_b [c_c]]  </rubric>  d_a [d_b [d_c]]  </eval>  V

1 to ``max_rubric`` distinct criterion tokens, ``</rubric>``, exactly one signed-difference token per
rubric criterion, ``</eval>``, and one verdict token ``V1``/``V2``. Generation stops at the first
verdict token; a completion is padded with ``PAD`` after its end.

The *rubric segment* (what the proxy may read) is the leading run of criterion tokens: it ends at
``</rubric>`` in a well-formed completion and at the first token that is not a criterion token
otherwise, so neither the evaluation nor the verdict can reach the proxy, also when ``</rubric>`` is
missing. Upstream sends the text before the first ``</rubric>``, and the whole output when the tag
is missing (a verdict leak noted in the research notes, section 2.9.1); the miniature closes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .task import Pairs, Vocab, World, as_generator


def max_completion_len(max_rubric: int = 3) -> int:
    """Longest well-formed completion: rubric, ``</rubric>``, evals, ``</eval>``, verdict."""
    return 2 * max_rubric + 3


def _as_rows(completions) -> np.ndarray:
    arr = np.asarray(completions)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"completions must be 1-D or 2-D token ids, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"completions must hold integer token ids, got dtype {arr.dtype}")
    return arr


def completion_length(vocab: Vocab, row) -> int:
    """Number of generated tokens: up to and including the first verdict, else up to the first PAD."""
    pad, v1, v2 = vocab.PAD, vocab.verdict1, vocab.verdict2  # plain ints: one comparison per token
    row = np.asarray(row).tolist()
    for i, tok in enumerate(row):
        if tok == pad:
            return i
        if tok == v1 or tok == v2:
            return i + 1
    return len(row)


@dataclass(frozen=True)
class Parsed:
    """Fields of one completion. ``verdict`` is 1, 2 or 0 (none)."""

    rubric: tuple  # criterion indices of the rubric segment, in order (duplicates kept)
    evals: tuple  # signed differences between </rubric> and </eval> (well-formed only)
    verdict: int
    well_formed: bool


def rubric_segment(vocab: Vocab, row) -> list[int]:
    """Token ids the proxy may read: the leading run of criterion tokens (see module docstring)."""
    lo, hi = vocab.crit0, vocab.crit0 + vocab.n_criteria
    out = []
    for tok in np.asarray(row).tolist():
        if not lo <= tok < hi:
            break
        out.append(int(tok))
    return out


def parse(vocab: Vocab, row, *, max_rubric: int = 3) -> Parsed:
    """Parse one completion and check the strict format."""
    row = np.asarray(row)
    if row.ndim != 1:
        raise ValueError(f"row must be 1-D, got shape {row.shape}")
    toks = [int(t) for t in row[:completion_length(vocab, row)].tolist()]
    seg = rubric_segment(vocab, toks)
    rubric = tuple(t - vocab.crit0 for t in seg)
    v1, v2, d0 = vocab.verdict1, vocab.verdict2, vocab.diff0  # plain ints (the per-token checks are hot)
    verdicts = [t for t in toks if t == v1 or t == v2]
    # Upstream r_acc: +1 only if the answer names the right response and not the other one.
    verdict = 0
    if len(set(verdicts)) == 1:
        verdict = 1 if verdicts[0] == v1 else 2
    m = len(seg)
    ok = (1 <= m <= max_rubric and len(set(seg)) == m and len(toks) == 2 * m + 3
          and toks[m] == vocab.RUBRIC_END
          and all(d0 <= t < d0 + vocab.n_diffs for t in toks[m + 1:2 * m + 1])
          and toks[2 * m + 1] == vocab.EVAL_END and toks[2 * m + 2] in (v1, v2))
    evals = ()
    if ok:
        evals = tuple(t - d0 - (vocab.n_levels - 1) for t in toks[m + 1:2 * m + 1])
    return Parsed(rubric=rubric, evals=evals, verdict=verdict, well_formed=bool(ok))


def parse_batch(vocab: Vocab, completions, *, max_rubric: int = 3) -> list[Parsed]:
    """Parse every row of a ``(n, length)`` array of completions."""
    return [parse(vocab, r, max_rubric=max_rubric) for r in _as_rows(completions)]


def format_ok(vocab: Vocab, completions, *, max_rubric: int = 3) -> np.ndarray:
    """Strict format check per completion (bool array), the analogue of upstream ``verify_format``."""
    return np.array([p.well_formed for p in parse_batch(vocab, completions, max_rubric=max_rubric)])


def rubric_flags(vocab: Vocab, completions) -> np.ndarray:
    """``(n, K)`` 0/1 flags of the criteria in each completion's rubric segment."""
    rows = _as_rows(completions)
    flags = np.zeros((len(rows), vocab.n_criteria), dtype=np.float32)
    for i, r in enumerate(rows):
        for tok in rubric_segment(vocab, r):
            flags[i, tok - vocab.crit0] = 1.0
    return flags


def encode_completion(vocab: Vocab, rubric, evals, verdict: int, *, length: int | None = None) -> np.ndarray:
    """Token ids of a well-formed completion, padded to ``length``."""
    if len(evals) != len(rubric):
        raise ValueError(f"evals has {len(evals)} entries, rubric has {len(rubric)}")
    if verdict not in (1, 2):
        raise ValueError(f"verdict must be 1 or 2, got {verdict!r}")
    toks = ([int(vocab.crit_token(k)) for k in rubric] + [vocab.RUBRIC_END]
            + [int(vocab.diff_token(d)) for d in evals] + [vocab.EVAL_END, int(vocab.verdict_token(verdict))])
    length = len(toks) if length is None else int(length)
    if length < len(toks):
        raise ValueError(f"length {length} is shorter than the completion ({len(toks)} tokens)")
    return np.array(toks + [vocab.PAD] * (length - len(toks)), dtype=np.int64)


def encode_names(vocab: Vocab, names, *, length: int | None = None) -> np.ndarray:
    """Token ids of a completion written as token names (``"c2"``, ``"</rubric>"``, ``"d+1"``, ...),
    well-formed or not, padded with PAD to ``length`` (default `max_completion_len`)."""
    ids = {n: i for i, n in enumerate(vocab.names())}
    unknown = [n for n in names if n not in ids]
    if unknown:
        raise ValueError(f"names: unknown tokens {unknown}")
    row = [ids[n] for n in names]
    length = max_completion_len() if length is None else int(length)
    if length < len(row):
        raise ValueError(f"length {length} is shorter than the completion ({len(row)} tokens)")
    return np.array(row + [vocab.PAD] * (length - len(row)), dtype=np.int64)


def teacher_completions(world: World, pairs: Pairs, seed, *, p_good: float = 0.4,
                        max_rubric: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Distillation data of the cold start: the teacher's verdict is always right, its rubric often is not.

    With probability ``p_good`` the rubric is the relevant set ``S(t)``; otherwise it is the generic
    rubric (criteria ``0..n_generic-1``), a post-hoc rationalisation. The evaluation is faithful:
    the true difference ``q1_k - q2_k`` of every rubric criterion.

    Returns
    -------
    tokens : (n, max_completion_len) int64 array
    good : (n,) bool array, True where the teacher wrote the relevant rubric
    """
    if not (0.0 <= float(p_good) <= 1.0):
        raise ValueError(f"p_good must be in [0, 1], got {p_good!r}")
    rng = as_generator(seed)
    vocab = world.vocab
    generic = list(range(max(world.n_generic, 1)))
    length = max_completion_len(max_rubric)
    good = rng.random(len(pairs)) < p_good
    rows = []
    for i in range(len(pairs)):
        rub = list(np.flatnonzero(world.relevant[pairs.types[i]])) if good[i] else generic
        if len(rub) > max_rubric:
            raise ValueError(f"a rubric of {len(rub)} criteria exceeds max_rubric={max_rubric}")
        ev = [int(pairs.q1[i, k] - pairs.q2[i, k]) for k in rub]
        rows.append(encode_completion(vocab, rub, ev, int(pairs.labels[i]), length=length))
    return np.stack(rows), good
