"""posteval.rubric.proxy_data: the teacher's own rubric verdicts."""

import numpy as np

from posteval.rubric import grammar
from posteval.rubric.judges import RuleJudge
from posteval.rubric.proxy_data import teacher_rubric_verdicts
from posteval.rubric.task import make_world, sample_pairs

from tests.rubric.test_reward import pad9
from tests.rubric.test_grammar import toks

from tests.rubric.test_reward import pad9


WORLD = make_world(0)


V = WORLD.vocab


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
