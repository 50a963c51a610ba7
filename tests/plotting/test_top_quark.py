"""posteval.plotting.top_quark: the helpers of the top-quark chapter's figures."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pytest

from posteval.plotting.top_quark import one_per_event, spectra_small_multiples, two_group_separation


def test_one_per_event_takes_the_first_sample_or_the_prediction():
    samples = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(one_per_event(samples), samples[:, 0])
    np.testing.assert_array_equal(one_per_event(samples[:, 1]), samples[:, 1])
    with pytest.raises(ValueError, match="values"):
        one_per_event(np.zeros(3))


def test_two_group_separation_of_spikes_one_group_and_constant_rows():
    rng = np.random.default_rng(0)
    spikes = np.r_[np.full(30, -5.0), np.full(70, 5.0)]
    gaussian = rng.normal(size=100)
    sep = two_group_separation(np.stack([rng.permutation(spikes), gaussian, np.ones(100)]))
    assert sep[0] == pytest.approx(1.0)
    assert sep[1] == pytest.approx(2 / np.pi, abs=0.05)  # best split of a Gaussian: at its median
    assert sep[2] == 0.0
    with pytest.raises(ValueError, match="m >= 2"):
        two_group_separation(np.zeros((3, 1)))


def test_spectra_small_multiples_put_one_legend_below_the_panels():
    """No legend inside a panel (over the data); one figure legend with the truth and every reconstruction once."""
    rng = np.random.default_rng(0)
    truth = {"x": rng.normal(size=300), "y": rng.normal(size=300)}
    recos = {lab: {"x": rng.normal(size=300), "y": rng.normal(size=300)} for lab in ("a", "b", "c")}
    fig = spectra_small_multiples(truth, recos, [("x", "x", (-3, 3)), ("y", "y", (-3, 3))], {"A": ["a", "b"], "B": ["c"]})
    assert all(ax.get_legend() is None for ax in fig.axes)
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["truth", "a", "b", "c"]
    plt.close(fig)
