"""posteval.rubric.bridge: the reward functions handed to TRL."""

import numpy as np

from posteval.rubric.experiment import PolicyReward

from tests.rubric.test_reward import COMPLETIONS, FixedProxy, WORLD, pairs_with_labels


def test_trl_reward_callables_match_the_miniature():
    from posteval.rubric.bridge import make_reward_functions, render

    labels = [1, 2, 1, 1]
    proxy = FixedProxy([1, 1, 2, 1])
    pairs = pairs_with_labels(labels)
    ref = PolicyReward(WORLD, FixedProxy([1, 1, 2, 1]))(pairs, COMPLETIONS)
    ids = [[int(t) for t in row if t != 0] for row in COMPLETIONS]  # trl passes unpadded ids
    r_acc, r_proxy, r_fmt = make_reward_functions(WORLD, proxy)
    cols = dict(label=labels, qtype=list(pairs.types), q1=pairs.q1.tolist(), q2=pairs.q2.tolist())
    np.testing.assert_allclose(r_acc(completion_ids=ids, **cols), ref["acc"])
    np.testing.assert_allclose(r_proxy(completion_ids=ids, **cols), ref["proxy"])
    np.testing.assert_allclose(0.5 * np.array(r_fmt(completion_ids=ids, **cols)), ref["format"])
    assert render(WORLD.vocab, COMPLETIONS[0]) == "c2 c5 </rubric> d+1 d-2 </eval> <answer1>"
