"""posteval.rubric.provenance: the sweep's recorded seconds."""

import pytest


def test_sweep_seconds_of_plain_and_merged_records():
    from posteval.rubric.provenance import sweep_seconds

    assert sweep_seconds({"total": 5.0, "setup": {}}) == 5.0
    assert sweep_seconds({"base": {"base": {"total": 1.0}, "extra": {"total": 2.0}}, "extra": {"total": 4.0}}) == 7.0
    with pytest.raises(ValueError, match="neither"):
        sweep_seconds({"setup": {}})
