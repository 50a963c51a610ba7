"""posteval.rubric.reward: reward values on hand-made completions (upstream compute_score semantics) and
aggregation modes (the TRL callables: tests/rubric/test_bridge.py)."""

import numpy as np
import pytest

from posteval.rubric.experiment import PolicyReward
from posteval.rubric.judges import Ensemble
from posteval.rubric.reward import accuracy_reward, combine, proxy_reward
from posteval.rubric.task import Pairs, make_world

from tests.rubric.test_grammar import toks


WORLD = make_world(0)


K = WORLD.n_criteria


class FixedProxy:
    """Stand-in proxy that answers a fixed verdict per call site and records what it is shown."""

    def __init__(self, answers):
        self.answers = np.asarray(answers)
        self.seen = []

    def predict(self, pairs, flags):
        self.seen.append(np.array(flags))
        return self.answers[: len(pairs)]


def pairs_with_labels(labels):
    n = len(labels)
    return Pairs(np.zeros(n, int), np.zeros((n, K), int), np.zeros((n, K), int), np.asarray(labels))


def pad9(row):
    return np.concatenate([row, np.zeros(9 - len(row), int)])


COMPLETIONS = np.stack([pad9(toks("c2", "c5", "/r", "d+1", "d-2", "/e", "V1")),  # well-formed, says 1
                        pad9(toks("c2", "c5", "/r", "d+1", "d-2", "/e", "V2")),  # well-formed, says 2
                        pad9(toks("c2", "c5", "d+1", "d-2", "/e", "V1")),  # malformed, says 1
                        pad9(toks("c2", "/r", "d+1", "/e"))])  # well... no verdict


def test_additive_values_on_hand_made_completions():
    labels = [1, 1, 1, 1]
    proxy = FixedProxy([1, 2, 1, 2])  # proxy right, wrong, right, wrong
    r = PolicyReward(WORLD, proxy, "additive")(pairs_with_labels(labels), COMPLETIONS)
    np.testing.assert_allclose(r["acc"], [1, -1, 1, -1])
    np.testing.assert_allclose(r["proxy"], [1, -1, 1, -1])
    np.testing.assert_allclose(r["format"], [0.5, 0.5, 0, 0])
    np.testing.assert_allclose(r["total"], [2.5, -1.5, 2.0, -2.0])


def test_no_proxy_reward():
    r = PolicyReward(WORLD, None)(pairs_with_labels([2, 2, 2, 2]), COMPLETIONS)
    np.testing.assert_allclose(r["total"], [-0.5, 1.5, -1.0, -1.0])
    with pytest.raises(ValueError, match="mode"):
        PolicyReward(WORLD, None, "gate")


# (verdict right, proxy right) -> (acc term, proxy term) per upstream use_fb mode
CASES = [(True, True), (True, False), (False, True), (False, False)]


EXPECTED = {
    0: [(1, 1), (1, -1), (-1, 1), (-1, -1)],
    1: [(1, 1), (-1, -1), (-1, -1), (-1, -1)],
    2: [(1, 0), (-1, 0), (-1, 0), (-1, 0)],
    3: [(1.5, 1), (0.5, -1), (-1, 1), (-1, -1)],
    4: [(1.5, 1), (0.5, -1), (-1.5, 1), (-1, -1)],
    5: [(1.5, 1), (0.5, -1), (-1.5, 1), (-2, -1)],
    6: [(1.0, 1), (0.5, -1), (-1, 1), (-1, -1)],
    7: [(1.5, 0), (0.5, 0), (-1, 0), (-1, 0)],
    10: [(1.0, 0), (0.5, 0), (-1, 0), (-1, 0)],
}


@pytest.mark.parametrize("mode", sorted(EXPECTED))
def test_aggregation_modes(mode):
    a = np.array([1.0 if r else -1.0 for r, _ in CASES])
    p = np.array([1.0 if q else -1.0 for _, q in CASES])
    out = combine(a, p, np.ones(4), mode)
    exp = np.array(EXPECTED[mode], dtype=float)
    np.testing.assert_allclose(out["acc"], exp[:, 0])
    np.testing.assert_allclose(out["proxy"], exp[:, 1])
    np.testing.assert_allclose(out["total"], exp.sum(1) + 0.5)


def test_mode_names_match_codes():
    a, p, f = np.array([1.0, -1]), np.array([-1.0, 1]), np.array([1.0, 0])
    for name, code in [("gate", 2), ("modulated", 3), ("implicit", 7), ("and_gate", 1)]:
        np.testing.assert_allclose(combine(a, p, f, name)["total"], combine(a, p, f, code)["total"])
    with pytest.raises(ValueError, match="mode"):
        combine(a, p, f, "explicit")
    with pytest.raises(ValueError, match="mode"):
        combine(a, p, f, 11)


def test_ensemble_reward_is_mean_vote():
    votes = np.array([[1, 2, 2], [1, 1, 2], [2, 1, 2]])
    np.testing.assert_allclose(proxy_reward(votes, np.array([1, 1, 1])), [1 / 3, 1 / 3, -1])
    ens = Ensemble([FixedProxy([1, 2, 1, 2]), FixedProxy([1, 1, 2, 2]), FixedProxy([1, 2, 2, 2])])
    r = PolicyReward(WORLD, ens, "additive")(pairs_with_labels([1, 1, 1, 1]), COMPLETIONS)
    np.testing.assert_allclose(r["proxy"], [1, -1 / 3, -1 / 3, -1])


def test_accuracy_reward_input_checks():
    np.testing.assert_allclose(accuracy_reward([1, 2, 0], [1, 1, 2]), [1, -1, -1])
    with pytest.raises(ValueError, match="labels"):
        accuracy_reward([1, 2], [1, 3])
    with pytest.raises(ValueError, match="shape"):
        accuracy_reward([1, 2], [1])
