"""The evaluation protocol: pointwise errors, proper scores, spectrum test, coverage, uncertainty.

Shapes used throughout:

* point predictions and truths: ``(n,)`` or ``(n, d)``;
* samples of a generative model: ``(n, m)`` (one dimension) or ``(n, m, d)``.

Input policy (one home: :mod:`._validation`). Every function validates its input and raises
:class:`ValueError` naming the argument. Arrays are real floating arrays; integer and bool arrays,
nested lists of numbers and pandas Series / DataFrames of numbers are cast to float64; complex,
datetime, timedelta, object, string and masked arrays are refused (they would lose their
imaginary part, their meaning or their mask), as are NaN and infinite values, empty arrays,
mismatched shapes and ``m < 1``. Counts and seeds are integers (``bool`` is not), levels (``ci``,
``level``) are Python or numpy reals in (0, 1), ``DEFAULT_LEVELS`` is read-only. Scores are
computed on data scaled by an exact power of two, so that they hold over the whole finite
float64 range (no square over- or underflows); a result that itself lies outside the range
raises instead of returning inf. ``tests/test_input_probe.py`` tries every public array function
with a dozen kinds of bad input in each array argument.

Modules: :mod:`.scores` (rmse, mae, crps, energy_score, crps_normal), :mod:`.spectrum`
(chi2_spectrum, spectrum_test), :mod:`.coverage` (pit, coverage curves, conformal coverage,
noise floor, local coverage), :mod:`.uncertainty` (paired bootstrap, compare), :mod:`.report`
(protocol_report; event_values and protocol_table for chunked scoring), :mod:`.calibration` (signed coverage with
verdicts, TARP, rank histograms, spread-skill), :mod:`.ranking` (the
report's leads with Holm-adjusted verdicts, calibration against the noise floor),
:mod:`.array_files` and :mod:`.report_page` (the report CLI's inputs and HTML page).

The inference layer, one home per concept: :mod:`.intervals` (the one interval type
:class:`~.intervals.Interval`, the layout, sign and level conventions, the seed-and-event rule and
its bootstrap branch, :class:`~.intervals.Measurements`), :mod:`.verdicts` (yes / no / not
resolved, negation, all_of, best_of, margins, Holm) and :mod:`.claims` (a chapter's claims as a
table, decided in one call).
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
from .calibration import (RankHistogram, SignedCoverage, SpreadSkill, TarpCoverage, calibration_margin, exact_coverage,
                          rank_histogram, signed_coverage, spread_skill, tarp_coverage, tarp_noise_floor)
from .claims import Claim, evaluate_claims
from .intervals import (Interval, Measurements, event_interval, paired_event_interval, replicate_interval,
                        seed_interval)
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
    "Claim",
    "evaluate_claims",
    "Interval",
    "Measurements",
    "event_interval",
    "paired_event_interval",
    "replicate_interval",
    "seed_interval",
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
    "exact_coverage",
    "signed_coverage",
    "SignedCoverage",
    "calibration_margin",
    "tarp_coverage",
    "tarp_noise_floor",
    "TarpCoverage",
    "rank_histogram",
    "RankHistogram",
    "spread_skill",
    "SpreadSkill",
]
