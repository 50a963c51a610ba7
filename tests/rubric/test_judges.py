"""posteval.rubric.judges: the proxy reads only the rubric segment; judges, rubric sensitivity, fidelity."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from posteval.rubric import grammar
from posteval.rubric.experiment import PolicyReward
from posteval.rubric.judges import PROXY_TRAINING, RuleJudge, judge_accuracy, rubric_sensitivity, train_proxy
from posteval.rubric.task import generic_flags, make_world, oracle_flags, sample_pairs

from tests.rubric.test_grammar import toks
from tests.rubric.test_reward import FixedProxy, pad9

WORLD = make_world(0)
V = WORLD.vocab


def tails():
    """Every way to continue after a rubric: evaluations, verdicts, junk; with and without </rubric>."""
    out = []
    for close in (True, False):
        for ev in (("d+1", "d-2"), ("d+3",), ()):
            for end in (("/e", "V1"), ("/e", "V2"), ("V2",), ("V1", "c4"), ()):
                out.append((("/r",) if close else ()) + ev + end)
    return out


def test_proxy_never_sees_anything_after_the_rubric():
    rows = [pad9(toks("c2", "c5", *tail)) for tail in tails()]
    proxy = FixedProxy(np.ones(len(rows), int))
    pairs = sample_pairs(WORLD, len(rows), 0)
    PolicyReward(WORLD, proxy)(pairs, np.stack(rows))
    seen = proxy.seen[0]
    expected = np.zeros(WORLD.n_criteria)
    expected[[2, 5]] = 1
    assert (seen == expected).all(), "the proxy input changed with what follows the rubric"


def test_learned_proxy_output_depends_only_on_rubric_segment():
    pairs = sample_pairs(WORLD, 300, 1)
    comp, _ = grammar.teacher_completions(WORLD, pairs, 2)
    proxy = train_proxy(WORLD, pairs, grammar.rubric_flags(V, comp), "sft", seed=0,
                        settings=replace(PROXY_TRAINING, epochs=2))
    test = sample_pairs(WORLD, 64, 3)
    base = [pad9(toks("c2", "c5", *tail)) for tail in tails()]
    preds = set()
    for i, row in enumerate(base):
        r = PolicyReward(WORLD, proxy)(test.subset([0]), row[None])
        preds.add(float(r["proxy"][0]))
    assert len(preds) == 1
    # but the rubric itself matters for this pair set as a whole
    a = proxy.predict(test, oracle_flags(WORLD, test))
    b = proxy.predict(test, generic_flags(WORLD, len(test)))
    assert (a != b).any()


def test_rule_judge_and_abstention():
    pairs = sample_pairs(WORLD, 500, 4)
    assert judge_accuracy(RuleJudge(), pairs, oracle_flags(WORLD, pairs)) == 1.0
    empty = np.zeros((len(pairs), WORLD.n_criteria), np.float32)
    assert judge_accuracy(RuleJudge(), pairs, empty) == 0.5
    with pytest.raises(ValueError, match="flags"):
        RuleJudge().predict(pairs, empty[:, :3])


class QueryOnly:
    """A judge that ignores the rubric (uses the hidden relevant set directly)."""

    def predict(self, pairs, flags):
        s = ((pairs.q1 - pairs.q2) * WORLD.relevant[pairs.types]).sum(1)
        return np.where(s > 0, 1, 2)


def test_sensitivity_separates_rubric_readers_from_rubric_ignorers():
    pairs = sample_pairs(WORLD, 800, 5)
    df = rubric_sensitivity({"rule": RuleJudge(), "ignorer": QueryOnly()}, WORLD, pairs, 6)
    assert isinstance(df, pd.DataFrame)
    rule = df.set_index("judge").loc["rule"]
    ign = df.set_index("judge").loc["ignorer"]
    assert rule["oracle"] == 1.0 and rule["sensitivity"] > 0.3 and rule["sensitivity_random"] > 0.2
    assert ign["sensitivity"] == 0.0 and ign["oracle"] == 1.0


def test_train_proxy_bad_kind():
    pairs = sample_pairs(WORLD, 8, 0)
    with pytest.raises(ValueError, match="kind"):
        train_proxy(WORLD, pairs, oracle_flags(WORLD, pairs), "dpo")


def test_fidelity_separates_rubric_followers_from_label_followers():
    from posteval.rubric.judges import verifier_fidelity

    world = make_world(np.random.default_rng(0), n_types=16)
    pairs = sample_pairs(world, 400, 1)

    class Oracle:  # knows the preferred answer, ignores the rubric
        def predict(self, p, flags):
            return p.labels

    out = verifier_fidelity({"rule": RuleJudge(), "oracle": Oracle()}, world, pairs, 2).set_index("judge")
    assert out.loc["rule", "fidelity"] == 1.0 and out.loc["rule", "follows_label"] == 0.0
    assert out.loc["oracle", "fidelity"] == 0.0 and out.loc["oracle", "follows_label"] == 1.0
    assert 0 < out.loc["rule", "n_pairs"] < 400


def test_follow_proxy_requires_teacher_verdicts():
    pairs = sample_pairs(WORLD, 32, 0)
    with pytest.raises(ValueError, match="rubric_verdicts"):
        train_proxy(WORLD, pairs, oracle_flags(WORLD, pairs), "follow", settings=replace(PROXY_TRAINING, epochs=1))
