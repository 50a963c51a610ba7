"""Fixtures shared by the tests of posteval.rubric: the tiny experiment (tests/rubric/test_experiment.py,
tests/rubric/test_sweep.py, tests/rubric/test_held_out_judges.py, tests/test_parallel.py use TINY)."""

import pytest
import torch

from posteval.rubric.experiment import RubricConfig, build_setup

TINY = dict(n_types=16, n_sft=128, n_proxy=64, n_rl=64, n_test=64, sft_epochs=2, proxy_epochs=2,
            ensemble_size=3, e2_n=128, e2_epochs=2, held_out_n=128, held_out_epochs=2, prompts_per_step=8, rl_epochs=1, eval_every=4,
            d_model=16, d_ff=32, n_heads=2)


@pytest.fixture(scope="module")
def tiny_setup():
    torch.set_num_threads(1)
    return build_setup(RubricConfig(**TINY), 0)
