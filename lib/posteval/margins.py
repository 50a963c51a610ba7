"""Every margin, tolerance and target the book's claims use, registered with its unit, its reason, the
commit at which it was set and whether that was before or after the data it decides, in one place that
no result can move quietly.

A claim's margin decides between "no" (inside it) and "not resolved", a target between "yes" and
"no": set beside the results, either can be moved until a verdict suits. So each lives here, with
what it means to a user and where it came from: ``set_at`` (the commit and date it was set), ``fixed``
(``"before"``: set in a commit that precedes the first computation of the quantity it decides, named in
``evidence`` and checked from git history by ``tests/test_margins.py``; ``"after"``: set once the
quantity had been computed, ``evidence`` saying what had been seen), and for an ``after`` entry
``independent``, a value derived without the data (from the source's stated effect, an exact sampler's
noise band at the chapter's sizes, or a physical resolution) with its derivation, at which the claim's
word is reported too (:func:`posteval.metrics.claims.evaluate_claims`, column ``word_independent``), or
None where no such derivation exists. The chapters and the library read each value from here.
``tests/test_margins.py`` walks the history of this file in git: a value that changes without its
reason and its ``set_at`` changing too fails the suite; and no page calls an ``after`` margin "before
the data".

Example
-------
>>> registered("calibration.coverage_margin").value
0.02
>>> registered("calibration.coverage_margin").unit
'coverage (mean over the levels)'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Registered", "REGISTRY", "registered", "value", "FIXED"]

#: When an entry was fixed relative to the data it decides.
FIXED = ("before", "after")

#: a set_at that starts with the commit and its date: "97fd75b (2026-12-01)"
_COMMIT_DATE = re.compile(r"^[0-9a-f]{7,40} \((\d{4}-\d{2}-\d{2})\)")

#: name -> {value, unit, reason, set_at}. Append or change entries only together with their reason
#: and set_at (the commit and date of the change; "(before the data)" or "(beside results)").
REGISTRY: dict[str, dict] = {
    "calibration.coverage_margin": {
        "value": 0.02,
        "unit": "coverage (mean over the levels)",
        "reason": "a sampler whose central intervals hold the truth within two percentage points of an exact "
                  "sampler's rate, on average over the levels, serves a user as a calibrated one (a 95 % "
                  "interval that holds 93 % is still read as about 95 %); a larger gap changes what the "
                  "intervals are used for. Fixed in the statistic's units, not from the sample's noise",
        "set_at": "issue 41 (2026-12-05), replacing the noise-floor margin (before the data it decides)",
    },
    "02.target_crps_ratio.ci": {
        "value": 1.03,
        "unit": "flow CRPS / Bayes-limit CRPS",
        "reason": "the flow's CRPS within 3 % of the exact posterior's at the ci sizes (15 epochs, 50,000 "
                  "events): a flow that has learned both modes. No other reason was recorded when it was set "
                  "with the chapter's first outputs; unchanged since",
        "set_at": "429620c (2026-11-29), with the chapter's first ci outputs (beside results)",
    },
    "02.target_crps_ratio.full": {
        "value": 1.005,
        "unit": "flow CRPS / Bayes-limit CRPS",
        "reason": "the flow's CRPS within half a per cent of the exact posterior's at the full sizes. No other "
                  "reason was recorded when it was set with the chapter's first outputs; unchanged since",
        "set_at": "429620c (2026-11-29), with the chapter's first ci outputs (beside results)",
    },
    "02.target_coverage_floor": {
        "value": 1.5,
        "unit": "multiples of an exact sampler's mean coverage error on the same design",
        "reason": "a target below the exact posterior's own coverage error could not be met by the exact "
                  "posterior itself; half as much again is room for a learned sampler's extra noise",
        "set_at": "6488b25 (2026-12-01), replacing a fixed 0.03 (beside results)",
    },
    "02.chi2_target": {
        "value": 100.0,
        "unit": "chi2/ndf of the predictions' spectrum against the truth's",
        "reason": "a reconstruction with the true spectrum gives chi2/ndf near 1; a hundred times that is a "
                  "spectrum no analysis could use, the paper's 'narrower spectrum' made a number",
        "set_at": "6488b25 (2026-12-01) (beside results)",
    },
    "02.flow_mean_rmse_margin": {
        "value": 0.04,
        "unit": "RMSE of the flow-sample mean / RMSE of the MSE regression, minus 1",
        "reason": "one posterior sample per event costs a factor sqrt(2) (41 %) in RMSE over the posterior mean; "
                  "a mean of samples that has recovered the regression's RMSE is within a tenth of that gap of "
                  "it, 4 %, which leaves room for the 1/m Monte-Carlo excess of an m-sample mean "
                  "(sqrt(1 + 1/m) - 1, 0.5 % at m = 100)",
        "set_at": "issue 43 (2026-12-06), from the sqrt(2) of a single sample (before the data it decides; the "
                  "issue had quoted the ci RMSEs 1.005 and 0.999)",
    },
    "05.resim_margin": {
        "value": 0.5,
        "unit": "re-simulation error in units of 2 sigma^2 (an exact posterior draw's expected squared miss), "
                "model minus exact draws",
        "reason": "an exact posterior draw's end point misses the observation by 2 sigma^2 on average (the "
                  "measurement's noise in two coordinates); a sampler whose draws miss by at most one noise "
                  "variance more (half of that) puts its poses' end points within the measurement's own "
                  "precision of where the exact poses put them, and its draws serve as poses of the "
                  "observation. Fixed in the noise's units, not from the sample's spread",
        "set_at": "issue 46 (2026-12-06), with the chapter, before its first ci outputs (before the data)",
    },
    "02.flow_mean_chi2_margin": {
        "value": 0.5,
        "unit": "chi2/ndf of the flow-sample mean's spectrum / the MSE regression's, minus 1",
        "reason": "a reconstruction with the true spectrum gives chi2/ndf near 1 and a collapsed one hundreds; "
                  "two collapsed spectra whose chi2/ndf are within half of each other are the same distortion "
                  "for an analysis, far from the hundredfold that separates either from a usable spectrum. A "
                  "ratio, because chi2/ndf of a fixed distortion grows with the number of test events",
        "set_at": "issue 43 (2026-12-06), from the scale of a usable spectrum (before the data it decides; the "
                  "issue had quoted the ci values 278 and 394)",
    },
    "03.physics.w_ratio": {
        "value": 0.9,
        "unit": "multiples of the truth's W-window fraction",
        "reason": "the truth's own fraction is below 1 by the W's width and the lepton's resolution; the W mass "
                  "is the sharpest constraint a reconstruction can know, so it may lose a tenth of that",
        "set_at": "97fd75b (2026-12-01), with the first physics checks (beside results)",
    },
    "03.physics.top_ratio": {
        "value": 0.6,
        "unit": "multiples of the truth's top-window fraction",
        "reason": "the top window is widened by the b-jet energy resolution on both sides, so the ratio is looser "
                  "than the W's",
        "set_at": "97fd75b (2026-12-01), with the first physics checks (beside results)",
    },
    "03.physics.closure_ratio": {
        "value": 1.5,
        "unit": "multiples of the truth's MET closure (GeV)",
        "reason": "the true neutrinos miss the measured MET by the detector's MET resolution; half as much again "
                  "is room for a model's noise, not for ignoring MET",
        "set_at": "97fd75b (2026-12-01), with the first physics checks (beside results)",
    },
    "03.physics.unphysical_excess": {
        "value": 0.05,
        "unit": "fraction of reconstructions (added to the truth's)",
        "reason": "the truth's own unphysical fraction comes from the detector's smearing of the lepton and MET; "
                  "five points more is a model's noise, a larger share a model that ignores the W mass",
        "set_at": "97fd75b (2026-12-01), with the first physics checks (beside results)",
    },
    "03.crps_tie_margin": {
        "value": 1.0,
        "unit": "GeV of CRPS (mean over the six neutrino components)",
        "reason": "the paper calls the flow and the CFM indistinguishable under CRPS; a difference below 1 GeV, "
                  "about 3 % of a trained reconstruction's CRPS here and a tenth of the detector's own MET "
                  "mismatch per event, would not change which reconstruction an analysis uses",
        "set_at": "issue 43 (2026-12-06), after the ci results were seen; at ci it decides nothing, since the "
                  "two flows fail the physics checks (beside results)",
    },
    "04.order_margin": {
        "value": 0.0376,
        "unit": "transfer (share of held-out pairs)",
        "reason": "the smallest transfer effect the source reports as one (Unified-Reward-SFT given Proxy-GRM's "
                  "rubrics gains 3.76 accuracy points): a change below it is no change by the source's own scale",
        "set_at": "2c27530 (2026-12-01), from the source's own number (before the data it decides)",
    },
}


@dataclass(frozen=True)
class Registered:
    """One registered margin, tolerance or target: its value, unit, reason and where it was set."""

    name: str
    value: float
    unit: str
    reason: str
    set_at: str
    fixed: str = "after"
    evidence: str = ""
    independent: float | None = None
    derivation: str = ""

    @property
    def when(self) -> str:
        """Where it was set, as a page says it: :attr:`set_at` with a leading commit hash replaced by "on"
        and the date (the commit is provenance: it stays here and in git, off the page).

        >>> registered("03.physics.w_ratio").when
        'on 2026-12-01, with the first physics checks (beside results)'
        >>> registered("calibration.coverage_margin").when.startswith("issue 41 (2026-12-05)")
        True
        """
        return _COMMIT_DATE.sub(r"on \1", self.set_at, count=1)


def registered(name: str) -> Registered:
    """The entry ``name`` of :data:`REGISTRY`; a KeyError that lists the names for an unknown one.

    >>> registered("04.order_margin").value
    0.0376
    """
    if name not in REGISTRY:
        raise KeyError(f"{name!r} is not registered; registered: {sorted(REGISTRY)}")
    e = REGISTRY[name]
    ind = e.get("independent") or {}
    return Registered(name, float(e["value"]), e["unit"], e["reason"], e["set_at"], e.get("fixed", "after"),
                      e.get("evidence", ""), None if not ind else float(ind["value"]), ind.get("derivation", ""))


def value(name: str) -> float:
    """The registered value of ``name`` (:func:`registered`).

    >>> value("03.physics.w_ratio")
    0.9
    """
    return registered(name).value
