"""posteval.rubric.basins: rollout replicates of the basin study."""

import numpy as np
import torch


def test_rollout_replicates_one_row_per_setup_and_stream():
    from posteval.rubric.basins import rollout_replicates
    from posteval.rubric.experiment import RubricConfig
    from tests.rubric.conftest import TINY

    torch.set_num_threads(1)
    df = rollout_replicates(RubricConfig(**TINY), [0], [0, 1], progress=False)
    assert list(df["rollout"]) == [0, 1] and (df["seed"] == 0).all()
    assert df["cold_transfer"].nunique() == 1  # one setup, one cold start
    assert np.isfinite(df["proxy_sensitivity"]).all() and np.isfinite(df["transfer_indep"]).all()
