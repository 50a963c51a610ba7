"""The evaluation protocol: pointwise errors, proper scores, spectrum test, coverage, uncertainty.

Shapes used throughout:

* point predictions and truths: ``(n,)`` or ``(n, d)``;
* samples of a generative model: ``(n, m)`` (one dimension) or ``(n, m, d)``.

Every function validates its input and raises :class:`ValueError` naming the argument
(NaN/inf, empty arrays, mismatched shapes, ``m < 1``, levels outside (0, 1), degenerate bins,
results that would overflow).

Modules: :mod:`.scores` (rmse, mae, crps, energy_score, crps_normal), :mod:`.spectrum`
(chi2_spectrum, spectrum_test), :mod:`.coverage` (pit, coverage curves, conformal coverage,
noise floor, local coverage), :mod:`.uncertainty` (paired bootstrap, compare), :mod:`.report`
(protocol_report; event_values and protocol_table for chunked scoring), :mod:`.ranking` (the
report's leads with Holm-adjusted verdicts, calibration against the noise floor),
:mod:`.array_files` and :mod:`.report_page` (the report CLI's inputs and HTML page), :mod:`.seeds` and :mod:`.replicates` (intervals over training seeds and test
events, rankings of replicated models), :mod:`.verdicts` (yes / no / not resolved).
"""

from ._validation import DEFAULT_LEVELS
from .coverage import (
    NoiseFloor,
    central_interval_hits,
    conformal_coverage_curve,
    conformal_interval_hits,
    coverage_band,
    coverage_curve,
    coverage_error,
    coverage_noise_floor,
    local_coverage,
    pit,
)
from .report import EventValues, concat_event_values, event_values, protocol_report, protocol_table
from .scores import (crps, crps_normal, energy_score, joint_energy_score, mae, mean_abs_difference, one_per_event,
                     per_event_scores, rmse)
from .spectrum import SpectrumTest, chi2_spectrum, chi2_spectrum_replicates, spectrum_test
from .uncertainty import (
    Comparison,
    bootstrap_means,
    bootstrap_pvalue,
    bootstrap_weights,
    compare,
    event_scores,
    percentile_interval,
)

__all__ = [
    "joint_energy_score",
    "one_per_event",
    "per_event_scores",
    "DEFAULT_LEVELS",
    "rmse",
    "mae",
    "crps",
    "crps_normal",
    "energy_score",
    "mean_abs_difference",
    "chi2_spectrum",
    "chi2_spectrum_replicates",
    "spectrum_test",
    "SpectrumTest",
    "pit",
    "coverage_curve",
    "conformal_coverage_curve",
    "coverage_error",
    "coverage_noise_floor",
    "coverage_band",
    "NoiseFloor",
    "local_coverage",
    "central_interval_hits",
    "conformal_interval_hits",
    "bootstrap_weights",
    "bootstrap_means",
    "percentile_interval",
    "bootstrap_pvalue",
    "event_scores",
    "compare",
    "Comparison",
    "protocol_report",
    "protocol_table",
    "event_values",
    "concat_event_values",
    "EventValues",
]
