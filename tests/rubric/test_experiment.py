"""posteval.rubric.experiment: conditions, rewards and proxies of the rubric experiment."""

import numpy as np
import pandas as pd
import pytest
import torch

from posteval.rubric.experiment import (OrderBiasedProxy, PolicyReward, CONDITIONS, RubricConfig, build_setup,
                                        run_condition)
from posteval.rubric.task import make_world, sample_pairs

from tests.rubric.conftest import TINY
from tests.rubric.test_grammar import toks
from tests.rubric.test_reward import FixedProxy, pad9


WORLD = make_world(0)


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
    from tests.rubric.conftest import TINY

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


def test_condition_is_reproducible(tiny_setup):
    a = run_condition(tiny_setup, "proxy_sft")
    b = run_condition(tiny_setup, "proxy_sft")
    pd.testing.assert_frame_equal(a["history"], b["history"])
    assert a["steps"] == 8 and set(a["final"]) >= {"verdict_acc", "transfer", "transfer_rule", "rationalisation"}
    # the run changed the policy copy, not the shared cold-start policy
    c = run_condition(tiny_setup, "proxy_sft")
    pd.testing.assert_frame_equal(a["history"], c["history"])


def test_conditions_differ_only_in_reward(tiny_setup):
    a = run_condition(tiny_setup, "no_proxy", max_steps=4)
    b = run_condition(tiny_setup, "proxy_sft", max_steps=4)
    assert a["history"]["test_verdict_acc"].iloc[0] == b["history"]["test_verdict_acc"].iloc[0]  # same start
    assert (a["history"]["r_proxy"].iloc[1:] == 0).all() and (b["history"]["r_proxy"].iloc[1:] != 0).any()


def test_setup_depends_on_seed():
    cfg = RubricConfig(**TINY)
    s1, s1b, s2 = build_setup(cfg, 1), build_setup(cfg, 1), build_setup(cfg, 2)
    for (k, v), v2 in zip(s1.policy.state_dict().items(), s1b.policy.state_dict().values()):
        assert torch.equal(v, v2), k
    assert not np.array_equal(s1.world.relevant, s2.world.relevant)
    pd.testing.assert_frame_equal(s1.sensitivity, s1b.sensitivity)


def test_every_condition_runs(tiny_setup):
    for name in CONDITIONS:
        r = run_condition(tiny_setup, name, max_steps=1)
        assert r["steps"] == 1 and np.isfinite(r["final"]["transfer"])
    no_ens = build_setup(RubricConfig(**{**TINY, "ensemble_size": 0}), 0)
    with pytest.raises(ValueError, match="ensemble_size"):
        run_condition(no_ens, "ensemble3_follow", max_steps=1)
