"""posteval.rubric.held_out_judges: the independent judges E3/E4 and their training data (the proxies'
targets and the leak / order conditions: tests/rubric/test_experiment.py, test_judges.py, test_proxy_data.py)."""

import numpy as np
import pytest
import torch

from posteval.rubric.held_out_judges import MaxJudge, train_vote_judge, vote_annotations, vote_training_data
from posteval.rubric.judges import RuleJudge, judge_accuracy
from posteval.rubric.task import Pairs, generic_flags, make_world, oracle_flags, sample_pairs


WORLD = make_world(0)


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
