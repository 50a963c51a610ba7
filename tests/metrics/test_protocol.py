"""posteval.metrics.protocol: the report as one Python call, its bottom line and its warnings (issue 44)."""

import numpy as np
import pytest

from posteval import metrics
from posteval.metrics import protocol


@pytest.fixture(scope="module")
def problem():
    """A 2-D problem: an exact sampler, a 0.5x too narrow one and a posterior-mean regressor (collapsed spectrum)."""
    rng = np.random.default_rng(4)
    n, m = 1500, 32
    x = rng.normal(size=(n, 2))
    truth = x + rng.normal(size=(n, 2))
    return truth, {"exact": x[:, None, :] + rng.normal(size=(n, m, 2)),
                   "narrow": x[:, None, :] + 0.5 * rng.normal(size=(n, m, 2)), "regressor": x}


def test_the_rmse_leader_with_a_collapsed_spectrum_is_warned_about_and_the_exact_sampler_trusted(problem):
    truth, models = problem
    result = metrics.evaluate_models(models, truth, dim_names=["px", "py"], n_resamples=200)
    assert isinstance(result, metrics.ProtocolResult)
    leaders = {result.table.groupby("model")[k].mean().idxmin() for k in ("rmse", "mae")}
    assert leaders == {"regressor"}
    assert len(result.warnings) == 1 and result.warnings[0].startswith(
        "WARNING: regressor has the lowest RMSE and MAE, but its spectrum fails")
    assert result.bottom_line.startswith("Trust exact:") and "narrow" in result.bottom_line
    assert "glossary" in result.bottom_line and {"CRPS", "spectrum", "margin", "[lo, hi]"} <= set(result.glossary)
    chk = result.checks.set_index("model")
    assert chk.loc["regressor", "spectrum"] == "fails" and chk.loc["narrow", "calibration"] == "fails"
    assert chk.loc["exact", "spectrum"] == "passes" and chk.loc["exact", "calibration"] != "fails"
    assert result.opening == [*result.warnings, result.bottom_line]
    assert result.provenance["inputs"]["exact"] == {"shape": [1500, 32, 2], "kind": "samples"}


def test_no_warning_when_the_rmse_leader_passes_its_checks(problem):
    truth, models = problem
    result = metrics.evaluate_models({"exact": models["exact"], "worse": models["exact"] + 0.5}, truth,
                                     n_resamples=200)
    assert result.warnings == [] and result.bottom_line.startswith("Trust exact")


def test_the_sampler_itself_is_warned_about_when_it_leads_rmse_miscalibrated(problem):
    truth, models = problem
    result = metrics.evaluate_models({"narrow": models["narrow"]}, truth, n_resamples=200)
    assert result.warnings and "too narrow" in result.warnings[0]
    assert result.bottom_line.startswith("No model can be trusted")


@pytest.mark.parametrize("kwargs, name", [
    ({"n_resamples": -1}, "n_resamples"), ({"seed": -3}, "seed"), ({"seed": 1.5}, "seed"), ({"level": 1.0}, "level"),
    ({"bins": 1}, "bins"), ({"crps_estimator": "x"}, "crps_estimator"), ({"max_gb": -1}, "max_gb"),
    ({"dim_names": ["a"]}, "dim_names"), ({"kinds": {"zz": "points"}}, "kinds"),
    ({"spectrum_resamples": -1}, "spectrum_resamples")])
def test_every_argument_is_checked_before_scoring(problem, kwargs, name):
    truth, models = problem
    with pytest.raises(ValueError, match=f"^{name}"):
        metrics.evaluate_models({"exact": models["exact"]}, truth, **kwargs)


def test_size_is_estimated_up_front_against_the_limit_and_bad_truths_are_refused(problem):
    truth, models = problem
    with pytest.raises(ValueError, match="GiB of values to score.*--max-gb, max_gb="):
        metrics.evaluate_models({"exact": models["exact"]}, truth, max_gb=1e-4)
    with pytest.raises(ValueError, match="at least 2 test events"):
        metrics.evaluate_models({"a": models["exact"][:1]}, truth[:1])
    with pytest.raises(ValueError, match="constant.*on py"):
        metrics.evaluate_models({"a": models["exact"]}, np.stack([truth[:, 0], np.ones(len(truth))], 1),
                                dim_names=["px", "py"])


def test_check_inputs_estimates_the_bytes_from_the_shapes():
    src = protocol.ArraySource("big", (500, 10**7, 2), lambda rows: iter(()))  # never read
    inputs = protocol.Inputs(np.arange(500.0), "truth", {"big": (src, "samples")}, dim_names=["x"])
    with pytest.raises(ValueError, match=r"big \(500, 10000000, 2\) 74.5 GiB"):
        protocol.check_inputs(inputs)
    assert protocol.check_inputs(inputs, max_gb=None)["read_gb"] == pytest.approx(500 * 2e7 * 8 / 2**30)


def test_spread_skill_overflow_at_1e200_leaves_the_ratio_out_and_the_report_stands(problem):
    truth, models = problem
    result = metrics.evaluate_models({"exact": 1e200 * models["exact"]}, 1e200 * truth, n_resamples=200)
    assert "spread_skill" not in result.joint_calibration
    assert any("spread-skill ratio of exact is not computed" in note for note in result.notes)
    unit = metrics.evaluate_models({"exact": models["exact"]}, truth, n_resamples=200)
    np.testing.assert_allclose(result.table["crps"], 1e200 * unit.table["crps"], rtol=1e-12)
    tarp = result.joint_calibration["tarp_error"].to_numpy()
    np.testing.assert_allclose(tarp, unit.joint_calibration["tarp_error"].to_numpy(), atol=1e-12)  # scale-free
