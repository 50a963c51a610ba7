"""posteval.physics.event_file: atomic writes and concatenation of event files."""

import os

import h5py
import numpy as np
import pytest

from posteval.physics.event_file import concatenate_atomic, stored_hash_matches, write_atomic


def test_failed_write_leaves_no_file(tmp_path, monkeypatch):
    target = tmp_path / "events.h5"
    real = h5py.Group.create_dataset
    calls = []

    def flaky(self, name, *args, **kwargs):
        calls.append(name)
        if len(calls) == 2:
            raise OSError("disk full (simulated)")
        return real(self, name, *args, **kwargs)

    parts = [write_atomic(tmp_path / f"part{i}.h5", {"a": np.arange(3) + i, "b": np.arange(4)}, {}) for i in (0, 1)]
    monkeypatch.setattr(h5py.Group, "create_dataset", flaky)
    with pytest.raises(OSError):
        write_atomic(target, {"a": np.arange(3), "b": np.arange(4)}, {"format": "x"})
    calls.clear()
    with pytest.raises(OSError):
        concatenate_atomic(target, parts, {"format": "x"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["part0.h5", "part1.h5"]
    monkeypatch.setattr(h5py.Group, "create_dataset", real)
    whole = concatenate_atomic(target, parts, {})
    assert stored_hash_matches(whole)
    with h5py.File(whole, "r") as f:
        np.testing.assert_array_equal(f["a"][()], [0, 1, 2, 1, 2, 3])


def test_concatenation_opens_one_part_at_a_time(tmp_path):
    import resource

    parts = [write_atomic(tmp_path / f"part{i}.h5", {"a": np.full(2, i), "b": np.arange(i % 3)}, {}) for i in range(60)]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (len(os.listdir("/proc/self/fd")) + 20, hard))
    try:
        whole = concatenate_atomic(tmp_path / "whole.h5", parts, {})
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert stored_hash_matches(whole)
    with h5py.File(whole, "r") as f:
        np.testing.assert_array_equal(f["a"][()], np.repeat(np.arange(60), 2))
        assert f["b"].shape == (sum(i % 3 for i in range(60)),)
