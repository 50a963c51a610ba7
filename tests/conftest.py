"""Fixtures shared by several test modules."""

import pytest
import torch


@pytest.fixture(scope="module")
def one_torch_thread():
    """Tiny models: one thread is fastest and does not stall when other jobs share the CPU."""
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
