"""Independent judges E3/E4, the proxies' task-only targets, and the leak / order / unseen conditions."""

from dataclasses import replace

import numpy as np
import pytest
import torch

from posteval.rubric import grammar
from posteval.rubric.experiment import OrderBiasedProxy, PolicyReward
from posteval.rubric.held_out_judges import MaxJudge, train_vote_judge, vote_annotations, vote_training_data
from posteval.rubric.judges import PROXY_TRAINING, RuleJudge, judge_accuracy, train_proxy
from posteval.rubric.proxy_data import teacher_rubric_verdicts
from posteval.rubric.task import Pairs, generic_flags, make_world, oracle_flags, sample_pairs

from tests.rubric.test_reward import FixedProxy, pad9
from tests.rubric.test_grammar import toks

WORLD = make_world(0)
V = WORLD.vocab


def one_pair(q1, q2):
    return Pairs(np.array([0]), np.array([q1]), np.array([q2]), np.array([1]))


def test_max_judge_follows_the_most_decisive_criterion_not_the_sum():
    #            c0 c1 c2 c3 c4 c5 c6 c7
    pair = one_pair([3, 0, 1, 1, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0, 0, 0])
    flags = np.zeros((1, 8), np.float32)
    flags[0, [1, 2, 3]] = 1  # differences -2, +1, +1: sum 0 (E1 abstains), largest |d| is c1 -> 2
    assert MaxJudge().predict(pair, flags)[0] == 2
    assert RuleJudge().predict(pair, flags)[0] == 0
    flags[0, [0]] = 1  # c0 has +3: it decides
    assert MaxJudge().predict(pair, flags)[0] == 1
    assert MaxJudge().predict(pair, np.zeros((1, 8), np.float32))[0] == 0  # empty rubric: abstain
    with pytest.raises(ValueError, match="flags"):
        MaxJudge().predict(pair, np.zeros((1, 7)))


def test_vote_annotator_counts_criteria_won():
    pair = one_pair([3, 0, 1, 1, 0, 0, 0, 0], [0, 2, 0, 0, 0, 0, 0, 0])
    flags = np.zeros((1, 8), np.float32)
    flags[0, [1, 2, 3]] = 1  # one lost, two won -> 1 (the sum rule ties, the max rule says 2)
    assert vote_annotations(pair, flags, 0, noise=0.0)[0] == 1
    flags[0, [1, 2]] = 1
    flags[0, 3] = 0  # one won, one lost -> tie
    assert vote_annotations(pair, flags, 0, noise=0.0)[0] == 0
    with pytest.raises(ValueError, match="noise"):
        vote_annotations(pair, flags, 0, noise=0.5)


def test_vote_judge_learns_to_read_rubrics_from_its_own_data():
    torch.set_num_threads(1)
    pairs, flags, y = vote_training_data(WORLD, 512, 3)
    assert set(np.unique(y)) == {1, 2} and len(y) == 512
    judge = train_vote_judge(WORLD, n=2048, seed=1, epochs=15)
    test = sample_pairs(WORLD, 512, 7)
    oracle = judge_accuracy(judge, test, oracle_flags(WORLD, test))
    generic = judge_accuracy(judge, test, generic_flags(WORLD, len(test)))
    y = vote_annotations(test, oracle_flags(WORLD, test), 0, noise=0.0)
    annotator = np.mean(np.where(y == 0, 0.5, y == test.labels))  # its teacher's own accuracy (tie: coin)
    assert annotator - 0.06 < oracle <= 1.0 and generic < 0.6


def test_teacher_rubric_verdicts_read_the_teachers_own_evaluation():
    pairs = sample_pairs(WORLD, 256, 4)
    comp, good = grammar.teacher_completions(WORLD, pairs, 5, p_good=0.5)
    v = teacher_rubric_verdicts(V, comp)
    # the teacher's evaluation is faithful: its sum has the sign E1 gives its rubric, the label where it is S(t)
    np.testing.assert_array_equal(v, RuleJudge().predict(pairs, grammar.rubric_flags(V, comp)))
    assert (v[good] == pairs.labels[good]).all()
    assert (v[~good] != pairs.labels[~good]).any()  # the generic rubric often disagrees with the label
    malformed = pad9(toks("c2", "c5", "d+1", "d-2", "/e", "V1"))[None]
    assert teacher_rubric_verdicts(V, malformed)[0] == 0


def test_follow_proxy_requires_teacher_verdicts():
    pairs = sample_pairs(WORLD, 32, 0)
    with pytest.raises(ValueError, match="rubric_verdicts"):
        train_proxy(WORLD, pairs, oracle_flags(WORLD, pairs), "follow", settings=replace(PROXY_TRAINING, epochs=1))


def test_leaky_proxy_returns_the_completions_verdict():
    rows = np.stack([pad9(toks("c2", "c5", "/r", "d+1", "d-2", "/e", "V1")),
                     pad9(toks("c2", "c5", "/r", "d+1", "d-2", "/e", "V2")),
                     pad9(toks("c2", "c5", "/r", "d+1"))])  # no verdict: the proxy's own answer stays
    pairs = sample_pairs(WORLD, 3, 0)
    pairs.labels = np.array([1, 1, 1])
    honest = PolicyReward(WORLD, FixedProxy([2, 2, 2]))(pairs, rows)["proxy"]
    leaky = PolicyReward(WORLD, FixedProxy([2, 2, 2]), leak=True)(pairs, rows)["proxy"]
    np.testing.assert_array_equal(honest, [-1, -1, -1])
    np.testing.assert_array_equal(leaky, [1, -1, -1])
    with pytest.raises(ValueError, match="needs a proxy"):
        PolicyReward(WORLD, None, leak=True)


class LogitProxy:
    name = "fixed"

    def __init__(self, logits):
        self.l = torch.as_tensor(logits, dtype=torch.float32)

    def logits(self, pairs, flags):
        return self.l


def test_order_biased_proxy_says_one_unless_confident_in_two():
    pairs = sample_pairs(WORLD, 4, 0)
    base = LogitProxy([-2.0, -1.0, 0.5, 3.0])
    np.testing.assert_array_equal(OrderBiasedProxy(base, np.log(4)).predict(pairs, None), [2, 1, 1, 1])
    with pytest.raises(ValueError, match="logits"):
        OrderBiasedProxy(FixedProxy([1]), 1.0)


def test_rollout_seed_changes_the_run_not_the_setup():
    from posteval.rubric.experiment import RubricConfig, build_setup, run_condition
    from tests.rubric.test_sweep import TINY

    torch.set_num_threads(1)
    setup = build_setup(RubricConfig(**TINY), 0)
    a = run_condition(setup, "proxy_sft", max_steps=4, rollout_seed=1)
    b = run_condition(setup, "proxy_sft", max_steps=4, rollout_seed=1)
    c = run_condition(setup, "proxy_sft", max_steps=4, rollout_seed=2)
    assert a["history"].equals(b["history"])
    assert a["history"]["test_verdict_acc"].iloc[0] == c["history"]["test_verdict_acc"].iloc[0]  # same cold start
    assert not a["history"]["reward"].iloc[1:].equals(c["history"]["reward"].iloc[1:])
    with pytest.raises(ValueError, match="rollout_seed"):
        run_condition(setup, "proxy_sft", max_steps=1, rollout_seed=-1)


def test_rollout_replicates_one_row_per_setup_and_stream():
    from posteval.rubric.basins import rollout_replicates
    from posteval.rubric.experiment import RubricConfig
    from tests.rubric.test_sweep import TINY

    torch.set_num_threads(1)
    df = rollout_replicates(RubricConfig(**TINY), [0], [0, 1], progress=False)
    assert list(df["rollout"]) == [0, 1] and (df["seed"] == 0).all()
    assert df["cold_transfer"].nunique() == 1  # one setup, one cold start
    assert np.isfinite(df["proxy_sensitivity"]).all() and np.isfinite(df["transfer_indep"]).all()
