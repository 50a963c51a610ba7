"""The evaluation protocol: pointwise errors, proper scores, spectrum test, coverage, uncertainty.

Shapes used throughout:

* point predictions and truths: ``(n,)`` or ``(n, d)``;
* samples of a generative model: ``(n, m)`` (one dimension) or ``(n, m, d)``.

Input policy (one home: :mod:`._validation`). Every function validates its input and raises
:class:`ValueError` naming the argument. Arrays are real floating arrays; integer and bool arrays,
nested lists of numbers and pandas Series / DataFrames of numbers are cast to float64; complex,
datetime, timedelta, object, string and masked arrays are refused (they would lose their
imaginary part, their meaning or their mask), as are NaN and infinite values, empty arrays,
mismatched shapes and ``m < 1``. Counts and seeds are integers (``bool`` is not), levels (``level``,
``levels``) are Python or numpy reals in (0, 1), ``DEFAULT_LEVELS`` is read-only. Scores are
computed on data scaled by an exact power of two, so that they hold over the whole finite
float64 range (no square over- or underflows); a result that itself lies outside the range
raises instead of returning inf. ``tests/test_input_probe.py`` tries every public array function
with a dozen kinds of bad input in each array argument.

Modules: :mod:`.scores` (rmse, mae, crps_ensemble, crps_normal, energy_score_ensemble, mmd_squared_ensemble, the
reconstruction scores), :mod:`.spectrum`
(chi2_spectrum, spectrum_test), :mod:`.coverage` (pit, coverage curves, conformal coverage,
noise floor, local coverage), :mod:`.uncertainty` (paired bootstrap, compare), :mod:`.report`
(protocol_report; event_values and protocol_table for chunked scoring), :mod:`.calibration` (signed coverage with
verdicts, TARP, rank histograms, spread-skill), :mod:`.ranking` (the
report's leads with Holm-adjusted verdicts, ``calibration_verdicts`` against the noise floor),
:mod:`.protocol` (:func:`evaluate_models`: the whole report of ``protocol-report`` from arrays, its
bottom line, verdicts, sentences and provenance, as a :class:`ProtocolResult`), :mod:`.array_files`
and :mod:`.report_page` (the report CLI's inputs and HTML page).

The inference layer, one home per concept: :mod:`.intervals` (the one interval type
:class:`~.intervals.Interval`, the layout, sign and level conventions, the seed-and-event rule and
its bootstrap branch, :class:`~.intervals.Measurements`), :mod:`.verdicts` (yes / no / not
resolved, negation, all_of, best_of, margins, Holm) and :mod:`.claims` (a chapter's claims as a
table, decided in one call).

Names
-----
One scheme, scoringrules' (issue 40, since 0.3.0):

* a score is ``<score>_<input kind>``. Input kinds: ``ensemble``, samples ``(n, m[, d])``
  (:func:`crps_ensemble`, :func:`energy_score_ensemble`); ``normal``, a normal ``(mu, sigma)``
  (:func:`crps_normal`); ``reconstruction``, samples or point predictions, a point being a point mass
  (:func:`energy_score_reconstruction`, and :func:`scores_reconstruction` for the squared error, the
  absolute error and the CRPS of one reconstruction at once). Pointwise errors keep their usual names
  (:func:`rmse`, :func:`mae`), as in scikit-learn.
* arguments: ``samples`` for draws ``(n, m[, d])``, m draws per event (for the spectrum functions the
  1-D values of one draw per event, or pooled); ``pred`` only where a function takes samples *or*
  point predictions (a reconstruction); ``truth`` for the truths (also the true population of the
  spectrum); ``n_resamples`` (SciPy's name) for every bootstrap, permutation, exchange or simulation
  count; ``level`` for an interval's level and ``levels`` for the nominal coverages. Where one
  function has two counts, the second is prefixed like ``crps_estimator``:
  ``protocol_report(..., spectrum_resamples=)`` is the spectrum test's ``n_resamples``.
* the per-event functions: :func:`scores_reconstruction` (the scores themselves),
  :func:`event_scores` (one metric's per-event values and the function that finishes their mean, for
  :func:`compare`) and :func:`event_values` (every per-event value of the protocol report, chunkable).
* ``ranking.calibration_verdicts`` (not ``calibration``, which is the module :mod:`.calibration`).

The names before 0.3.0 work for one release and warn (:class:`DeprecationWarning` naming the new one;
:mod:`posteval._deprecation`): ``crps``, ``energy_score``, ``joint_energy_score``, ``per_event_scores``,
``ranking.calibration``; the keywords ``n_boot``, ``n_perm``, ``repeats``, ``sims``, ``n_sim``, ``ci``,
``pred_values``, ``true_values``; the result fields ``SpectrumTest.n_perm`` and ``Comparison.n_boot``.
They are importable where they were and not in ``__all__``; they are removed in 0.4.0.
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
from .intervals import (Interval, Measurements, binomial_tail_pvalue, bootstrap_pvalue, chi2_pvalue, event_interval,
                        monte_carlo_pvalue, paired_event_interval, percentile_interval, replicate_interval,
                        seed_interval)
from .protocol import ProtocolResult, evaluate_models
from .report import EventValues, concat_event_values, event_values, protocol_report, protocol_table
from .scores import (crps_ensemble, crps_normal, energy_score_ensemble, energy_score_reconstruction, mae,
                     mean_abs_difference, mmd_squared_ensemble, one_per_event, rmse, scores_reconstruction)
from .scores import crps, energy_score, joint_energy_score, per_event_scores  # noqa: F401  deprecated aliases (0.4.0: gone)
from .spectrum import SpectrumTest, chi2_spectrum, chi2_spectrum_replicates, spectrum_test
from .uncertainty import (
    Comparison,
    bootstrap_means,
    bootstrap_weights,
    compare,
    event_scores,
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
    "energy_score_reconstruction",
    "mmd_squared_ensemble",
    "one_per_event",
    "scores_reconstruction",
    "DEFAULT_LEVELS",
    "rmse",
    "mae",
    "crps_ensemble",
    "crps_normal",
    "energy_score_ensemble",
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
    "monte_carlo_pvalue",
    "chi2_pvalue",
    "binomial_tail_pvalue",
    "event_scores",
    "compare",
    "Comparison",
    "protocol_report",
    "evaluate_models",
    "ProtocolResult",
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
