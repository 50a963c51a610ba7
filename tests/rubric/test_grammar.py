"""Grammar, strict format check and rubric segment of the proxy-rubric miniature."""

import numpy as np
import pytest

from posteval.rubric import grammar
from posteval.rubric.task import make_world, sample_pairs

WORLD = make_world(0)
V = WORLD.vocab


def toks(*names):
    """Token ids from readable names: 'c3', '/r', 'd+1', '/e', 'V1', 'pad'."""
    out = []
    for n in names:
        if n == "/r":
            out.append(V.RUBRIC_END)
        elif n == "/e":
            out.append(V.EVAL_END)
        elif n == "pad":
            out.append(V.PAD)
        elif n in ("V1", "V2"):
            out.append(int(V.verdict_token(int(n[1]))))
        elif n[0] == "c":
            out.append(int(V.crit_token(int(n[1:]))))
        elif n[0] == "d":
            out.append(int(V.diff_token(int(n[1:]))))
        else:
            raise KeyError(n)
    return np.array(out)


@pytest.mark.parametrize("names, ok", [
    (("c2", "c5", "/r", "d+1", "d-2", "/e", "V1"), True),
    (("c3", "/r", "d+0", "/e", "V2", "pad", "pad"), True),
    (("c2", "c3", "c4", "/r", "d+1", "d+1", "d-3", "/e", "V2"), True),
    (("c2", "c5", "d+1", "d-2", "/e", "V1"), False),  # </rubric> missing
    (("c2", "c2", "/r", "d+1", "d+1", "/e", "V1"), False),  # repeated criterion
    (("c2", "c5", "/r", "d+1", "/e", "V1"), False),  # one eval for two criteria
    (("/r", "/e", "V1"), False),  # empty rubric
    (("c2", "c3", "c4", "c5", "/r", "d+1", "d+1", "d+1", "d+1", "/e", "V1"), False),  # too long rubric
    (("c2", "/r", "d+1", "V1"), False),  # </eval> missing
    (("c2", "/r", "d+1", "/e"), False),  # no verdict
    (("c2", "/r", "c3", "/e", "V1"), False),  # criterion where an eval belongs
])
def test_format_check(names, ok):
    assert grammar.format_ok(V, toks(*names))[0] == ok
    assert grammar.parse(V, toks(*names)).well_formed == ok


def test_nothing_after_the_verdict_is_read():
    row = toks("c2", "/r", "d+1", "/e", "V1", "c3", "V2")
    p = grammar.parse(V, row)
    assert p.well_formed and p.verdict == 1 and p.rubric == (2,)


def test_parse_fields():
    p = grammar.parse(V, toks("c5", "c2", "/r", "d-1", "d+3", "/e", "V2"))
    assert p.rubric == (5, 2) and p.evals == (-1, 3) and p.verdict == 2


def test_rubric_segment_with_and_without_close_tag():
    assert grammar.rubric_segment(V, toks("c2", "c5", "/r", "d+1", "d-2", "/e", "V1")) == list(toks("c2", "c5"))
    # </rubric> missing: the segment stops at the first non-criterion token, before eval and verdict.
    assert grammar.rubric_segment(V, toks("c2", "c5", "d+1", "d-2", "/e", "V1")) == list(toks("c2", "c5"))
    assert grammar.rubric_segment(V, toks("V1", "c2")) == []
    flags = grammar.rubric_flags(V, np.stack([toks("c2", "c5", "/r", "d+1", "d-2", "/e", "V1"),
                                              toks("c7", "V2", "c3", "c4", "pad", "pad", "pad")]))
    assert flags.tolist()[0] == [0, 0, 1, 0, 0, 1, 0, 0]
    assert flags.tolist()[1] == [0, 0, 0, 0, 0, 0, 0, 1]


def test_teacher_completions_are_well_formed_and_right():
    pairs = sample_pairs(WORLD, 200, 1)
    comp, good = grammar.teacher_completions(WORLD, pairs, 2, p_good=0.4)
    parsed = grammar.parse_batch(V, comp)
    assert all(p.well_formed for p in parsed)
    assert [p.verdict for p in parsed] == list(pairs.labels)
    for p, g, t in zip(parsed, good, pairs.types):
        expected = tuple(np.flatnonzero(WORLD.relevant[t])) if g else (0, 1)
        assert p.rubric == expected
    for i, p in enumerate(parsed):  # faithful evaluation
        assert list(p.evals) == [pairs.q1[i, k] - pairs.q2[i, k] for k in p.rubric]
    assert 0.3 < good.mean() < 0.5


def test_bad_input_raises():
    with pytest.raises(ValueError, match="evals"):
        grammar.encode_completion(V, [2, 3], [1], 1)
    with pytest.raises(ValueError, match="verdict"):
        grammar.encode_completion(V, [2], [1], 3)
    with pytest.raises(ValueError, match="p_good"):
        grammar.teacher_completions(WORLD, sample_pairs(WORLD, 4, 0), 0, p_good=1.5)
    with pytest.raises(ValueError, match="completions"):
        grammar.format_ok(V, np.zeros((2, 2, 2), dtype=int))


def test_token_names_round_trip():
    names = V.names()
    assert len(names) == V.size == len(set(names))
    assert V.name(int(V.pair_token(3, 2, 1))) == "c3=2/1"
    with pytest.raises(ValueError, match="tok"):
        V.name(V.size)


def test_encode_names_matches_the_vocabulary_and_pads():
    row = grammar.encode_names(V, ["c2", "c5", "</rubric>", "d+1", "d-2", "</eval>", "<answer1>"])
    assert row.shape == (grammar.max_completion_len(),)
    np.testing.assert_array_equal(row[:7], toks("c2", "c5", "/r", "d+1", "d-2", "/e", "V1"))
    assert (row[7:] == V.PAD).all()
    np.testing.assert_array_equal(grammar.encode_names(V, ["c2", "d+1"], length=2), toks("c2", "d+1"))
    with pytest.raises(ValueError, match="unknown tokens \\['c99'\\]"):
        grammar.encode_names(V, ["c2", "c99"])
    with pytest.raises(ValueError, match="shorter"):
        grammar.encode_names(V, ["c2", "c5"], length=1)
