"""Physics consistency of neutrino reconstructions: the protocol's fourth part.

A reconstruction must be physical before it is compared. Per event, for a model's neutrinos (one
per event, or m samples per event) and the event's leptons, b-jets and missing transverse momentum:

* **W window** (per side, nu with l+ and nubar with l-): the fraction of reconstructions with
  ``|m(l nu) - m_W| < w`` (m_W = 80.4 GeV, w = 10 GeV);
* **top window** (events with both b-jets truth-matched, both sides averaged): the fraction with
  ``|m(l nu b) - m_t| < w_t`` (m_t = 172.5 GeV, w_t = 20 GeV);
* **MET closure**: the mean over reconstructions of ``|pT(nu) + pT(nubar) - MET|`` (GeV, a vector
  difference): the truth's own closure is the detector's MET resolution, not zero;
* **transverse-mass excess fraction** (``mt_excess``; called the "unphysical fraction" before
  0.3.0): the fraction of reconstructions with ``m_T(l, nu) > m_W + w``, the W window's upper edge,
  on either side, with ``m_T^2 = 2 pT(l) pT(nu) (1 - cos(dphi))`` (massless leptons and neutrinos).
  Since m(l nu) >= m_T, no longitudinal momentum brings such a reconstruction into the W window: it
  is a subset of the W-window failures, and the true neutrinos have some too (the W's width, the
  lepton's and MET's resolution). With ``support`` it also counts samples outside the training range.

Each quantity is a per-event score, so its interval is the seed-and-event rule of
:func:`posteval.metrics.intervals.event_interval` (logit scale for the fractions, log scale for
the closure). :func:`consistency_excess` turns a model's scores and the truth's into per-event
*excesses over a tolerance* (positive: within tolerance), whose means are the claims of
"physically consistent" (:func:`consistency_claims`):

* W window >= ``w_ratio`` x the truth's, per side;
* top window >= ``top_ratio`` x the truth's;
* MET closure <= ``closure_ratio`` x the truth's;
* transverse-mass excess fraction <= the truth's + ``mt_excess_margin``.

Each is a one-sided (non-inferiority) claim; "physically consistent" holds when all of them hold
(an intersection-union claim).

**The tolerances come from the truth, not from the models** (:func:`exact_sampler_tolerances`): a
sampler whose draws follow the exact posterior p(nu | event) has, on average, the truth's own value of
every check that is a function of the observed event and the neutrinos (a draw given the event has the
law of the true neutrinos given the event), so it misses the truth's value only by noise, and the
truth's per-event values bound that noise at a design (test events, draws, seeds). The W windows', the
closure's and the transverse-mass excess's tolerances are the strictest at which an exact sampler
passes all of them with a stated probability, at the strictest threshold Holm's adjustment can set in
the family, computed before any model is compared. The top window uses the truth-matched b-jets, which
the observed event does not give, so it has no such derivation and keeps its registered ratio.
``Tolerances()`` holds the values the book set with the first physics checks, after their results
were seen (:mod:`posteval.margins`, ``03.physics.*``), kept for other analyses and for the record.

References: the W-mass and top-mass windows and MET closure are the physical checks of
neutrino reconstruction in dileptonic tt̄ (e.g. M. Leigh et al., "ν²-Flows: fast and improved
neutrino reconstruction in multi-neutrino final states with conditional normalizing flows",
Phys. Rev. D 109 (2024) 092002); the transverse mass bound m(l nu) >= m_T is standard kinematics.

Example
-------
>>> rng = np.random.default_rng(0)
>>> lep = np.zeros((3, 2, 4)); lep[..., 0] = 40.0; lep[..., 3] = 40.0      # leptons along x
>>> nu = np.zeros((3, 2, 3)); nu[..., 1] = 40.0                            # neutrinos along y
>>> bool(transverse_mass(lep, nu)[0, 0] > 56)                              # sqrt(2 * 40 * 40)
True
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
from scipy import optimize, stats

from .. import numformat
from .._deprecation import REMOVED_IN, SINCE, deprecated_attribute, renamed_keywords
from ..margins import REGISTRY, value
from ..metrics.claims import Claim
from ..metrics.intervals import Interval
from .kinematics import reconstruct_ttbar

__all__ = ["PHYSICS_FAMILY", "W_MASS", "W_WINDOW", "TOP_MASS", "TOP_WINDOW", "Tolerances", "TOLERANCE_NAMES",
           "EXACT_SAMPLER_RULE", "ToleranceDerivation", "exact_sampler_tolerances", "closure_from_resolution",
           "transverse_mass", "consistency_scores", "consistency_excess", "consistency_claims", "CONSISTENCY_METRICS"]

#: The claim family of the physical consistency checks (Holm among them, apart from the source's claims).
PHYSICS_FAMILY = "physics"

W_MASS, W_WINDOW = 80.4, 10.0
TOP_MASS, TOP_WINDOW = 172.5, 20.0
#: per-event scores of :func:`consistency_scores`
CONSISTENCY_METRICS = ("w_window.nu", "w_window.nubar", "top_window", "met_closure", "mt_excess")
#: the score keys renamed in 0.3.0 (old -> new); the old key still reads, with a DeprecationWarning
_RENAMED_SCORES = {"unphysical": "mt_excess"}
#: the four tolerances of :class:`Tolerances`, each registered as ``03.physics.<name>`` (:mod:`posteval.margins`)
TOLERANCE_NAMES = ("w_ratio", "top_ratio", "closure_ratio", "mt_excess_margin")
#: which tolerance each check uses
_TOLERANCE_OF = {"w_window.nu": "w_ratio", "w_window.nubar": "w_ratio", "top_window": "top_ratio",
                 "met_closure": "closure_ratio", "mt_excess": "mt_excess_margin"}
#: the checks whose tolerance :func:`exact_sampler_tolerances` derives (the top window's needs the b-jet pairing)
_DERIVED = ("w_window.nu", "w_window.nubar", "met_closure", "mt_excess")
#: the registered rule of :func:`exact_sampler_tolerances` (its value: the probability an exact sampler passes)
EXACT_SAMPLER_RULE = "03.physics.exact_sampler_power"


def _renamed_key(old: str) -> str:
    new = _RENAMED_SCORES[old]
    warnings.warn(f"the consistency score {old!r} is deprecated since posteval {SINCE} and will be removed in "
                  f"{REMOVED_IN}; use {new!r} (the transverse-mass excess fraction)", DeprecationWarning, stacklevel=3)
    return new


class _Scores(dict):
    """Per-event scores of :func:`consistency_scores`; the key "unphysical" (before 0.3.0) reads "mt_excess"."""

    def __missing__(self, key):
        if key in _RENAMED_SCORES:
            return self[_renamed_key(key)]
        raise KeyError(key)


def _score(scores: Mapping, key: str):
    """``scores[key]``, or the same score under its name before 0.3.0 (with a DeprecationWarning)."""
    if key in scores:
        return scores[key]
    old = {v: k for k, v in _RENAMED_SCORES.items()}.get(key)
    if old is not None and old in scores:
        _renamed_key(old)
        return scores[old]
    raise KeyError(key)


@dataclass(frozen=True)
class Tolerances:
    """What "physically consistent" allows against the truth (see the module docstring): a model's W
    windows at least ``w_ratio`` and its top window at least ``top_ratio`` x the truth's, its MET
    closure at most ``closure_ratio`` x the truth's, its transverse-mass excess fraction at most the
    truth's + ``mt_excess_margin`` (``unphysical_excess`` before 0.3.0). ``derived`` names the tolerances a
    registered rule computed and ``rule`` that rule's :mod:`posteval.margins` entry; every other tolerance
    cites its own ``03.physics.<name>`` entry where it has its value.

    The defaults are the values the book set with its first physics checks, after their results were
    seen (``03.physics.*``); chapter 3 derives its own from the truth (:func:`exact_sampler_tolerances`).

    >>> Tolerances(w_ratio=0.97).w_ratio, Tolerances().closure_ratio
    (0.97, 1.5)
    """

    w_ratio: float = value("03.physics.w_ratio")
    top_ratio: float = value("03.physics.top_ratio")
    closure_ratio: float = value("03.physics.closure_ratio")
    mt_excess_margin: float = value("03.physics.mt_excess_margin")
    derived: tuple[str, ...] = ()
    rule: str = ""

    unphysical_excess = deprecated_attribute("mt_excess_margin", "unphysical_excess")  # its name before 0.3.0

    def __post_init__(self):
        for name in ("w_ratio", "top_ratio"):
            v = getattr(self, name)
            if not 0 < v <= 1:
                raise ValueError(f"{name}: expected a ratio in (0, 1], got {v!r}")
        if not self.closure_ratio >= 1:
            raise ValueError(f"closure_ratio: expected a ratio >= 1, got {self.closure_ratio!r}")
        if not 0 <= self.mt_excess_margin < 1:
            raise ValueError(f"mt_excess_margin: expected a fraction in [0, 1), got {self.mt_excess_margin!r}")
        unknown = set(self.derived) - set(TOLERANCE_NAMES)
        if unknown:
            raise ValueError(f"derived: {sorted(unknown)} are not tolerances; expected names of {TOLERANCE_NAMES}")
        if bool(self.derived) != bool(self.rule) or (self.rule and self.rule not in REGISTRY):
            raise ValueError(f"rule: derived tolerances need the posteval.margins entry of their rule, got {self.rule!r}")

    @property
    def values(self) -> dict[str, float]:
        """The four tolerances by name (:data:`TOLERANCE_NAMES`)."""
        return {name: float(getattr(self, name)) for name in TOLERANCE_NAMES}

    def registered(self, name: str) -> str:
        """The :mod:`posteval.margins` entry behind tolerance ``name``: the rule for a derived one, its own
        ``03.physics.<name>`` where it has that value, else "" (a value given by hand).

        >>> Tolerances().registered("w_ratio"), Tolerances(w_ratio=0.95).registered("w_ratio")
        ('03.physics.w_ratio', '')
        """
        if name not in TOLERANCE_NAMES:
            raise ValueError(f"name: expected one of {TOLERANCE_NAMES}, got {name!r}")
        if name in self.derived:
            return self.rule
        return f"03.physics.{name}" if getattr(self, name) == value(f"03.physics.{name}") else ""


Tolerances.__init__ = renamed_keywords(unphysical_excess="mt_excess_margin")(Tolerances.__init__)


@dataclass(frozen=True)
class ToleranceDerivation:
    """What :func:`exact_sampler_tolerances` derived: the ``tolerances`` and, one row per check (index:
    :data:`CONSISTENCY_METRICS`), ``table`` with the truth's mean (``truth``) and per-event sd (``sd``), the
    events (``n``), the sd of an exact sampler's mean excess (``sampler_sd``), the distance its expected
    excess needs to keep from 0 (``band``), the ``tolerance`` applied (one W ratio for both sides: the
    side that needs more room sets it, so the other has more than its band), the ``threshold`` a model
    must reach (a value of the check, in its units) and whether the rule ``derived`` it (the top window:
    not, see :func:`exact_sampler_tolerances`)."""

    tolerances: Tolerances
    table: pd.DataFrame

    def summary(self, earlier: Tolerances | None = None, labels: Mapping[str, str] | None = None) -> pd.DataFrame:
        """The derivation as a reader's table, one row per check (renamed by ``labels``): the truth's value,
        the room an exact sampler needs ("–" where the rule derives nothing: the top window), the tolerance
        in words, the value a model must reach, and the ``earlier`` tolerance it replaces (default: the
        registered ``Tolerances()``), numbers in the book's format (:mod:`posteval.numformat`).

        >>> t = {k: np.r_[np.ones(2244), np.zeros(136)] for k in ("w_window.nu", "w_window.nubar", "top_window")}
        >>> t |= {"met_closure": np.linspace(1.0, 20.0, 2380), "mt_excess": np.r_[np.ones(75), np.zeros(2305)]}
        >>> s = exact_sampler_tolerances(t, n_draws=64, n_seeds=3, n_words=100).summary()
        >>> s.loc["w_window.nu", "tolerance"], s.loc["top_window", "room an exact sampler needs"]
        ("at least 0.969 × the truth's", '–')
        """
        def words(key, v):
            x = numformat.number(v)
            return {"met_closure": f"at most {x} × the truth's", "mt_excess": f"at most the truth's + {x}"}.get(
                key, f"at least {x} × the truth's")

        before = (earlier or Tolerances()).values
        t = self.table
        out = pd.DataFrame({"truth": [numformat.number(v) for v in t["truth"]],
                            "room an exact sampler needs": [numformat.number(v) for v in t["band"]],
                            "tolerance": [words(k, v) for k, v in t["tolerance"].items()],
                            "a model must reach": [numformat.number(v) for v in t["threshold"]],
                            "earlier tolerance": [words(k, before[_TOLERANCE_OF[k]]) for k in t.index]}, index=t.index)
        return out.rename(index=dict(labels or {}))


def _truth_values(truth: Mapping, key: str) -> np.ndarray:
    try:
        t = np.asarray(_score(truth, key), dtype=float)
    except KeyError:
        raise ValueError(f"truth: needs the per-event scores {list(CONSISTENCY_METRICS)}; missing {key!r}") from None
    if t.ndim != 1 or t.size < 2 or not np.isfinite(t).all():
        raise ValueError(f"truth[{key!r}]: expected at least 2 finite per-event values (n,), got shape {t.shape}")
    if (t < 0).any() or (key != "met_closure" and (t > 1).any()):
        raise ValueError(f"truth[{key!r}]: expected {'a length' if key == 'met_closure' else 'fractions'} >= 0"
                         f"{'' if key == 'met_closure' else ' and <= 1'}")
    return t


def _design(n_draws, n_seeds, n_words, level, power) -> None:
    for name, v in (("n_draws", n_draws), ("n_seeds", n_seeds), ("n_words", n_words)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise ValueError(f"{name}: expected an integer >= 1, got {v!r}")
    for name, v in (("level", level), ("power", power)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.floating)) or not 0 < v < 1:
            raise ValueError(f"{name}: expected a probability in (0, 1), got {v!r}")


def _band(r: float, v: float, n: int, draws: int, seeds: int, level: float, one_sided: float,
          z_pass: float) -> tuple[float, float]:
    """(band, sd): the distance an exact sampler's expected excess must keep from 0 at tolerance ratio r
    (r = 1 for an added margin), and the sd of its mean excess (see :func:`exact_sampler_tolerances`)."""
    v_event = v * max((1.0 - r) ** 2, r**2 + 1.0 / (draws * seeds)) / n
    v_seed = v / (draws * n) / seeds if seeds > 1 else 0.0
    lo, _ = Interval(0.0, 0.0, 0.0, level, v_seed, v_event, seeds, n).at_level(1.0 - 2.0 * one_sided)
    sd = float(np.sqrt(v_event))
    return -lo + z_pass * sd, sd


def _solve(key: str, mu: float, band) -> float:
    """The tolerance of one check: the ratio or margin at which an exact sampler's expected excess equals its band."""
    if key == "mt_excess":
        return band(1.0)[0]
    if band(1.0)[0] == 0:  # the truth has the same value in every event: no noise, no room
        return 1.0
    if key == "met_closure":
        gap = lambda r: (r - 1.0) * mu - band(r)[0]  # noqa: E731
        hi = 2.0
        while gap(hi) <= 0:
            hi *= 2
            if hi > 1e6:
                raise ValueError(f"truth[{key!r}]: no ratio lets an exact sampler pass at these sizes")
        return float(optimize.brentq(gap, 1.0, hi, xtol=1e-12))
    gap = lambda r: (1.0 - r) * mu - band(r)[0]  # noqa: E731
    if gap(1e-9) <= 0:
        raise ValueError(f"truth[{key!r}]: an exact sampler cannot pass this check at these sizes (mean {mu:.3g}); "
                         f"more test events, draws or seeds are needed")
    return float(optimize.brentq(gap, 1e-9, 1.0, xtol=1e-12))


def exact_sampler_tolerances(truth: Mapping[str, np.ndarray], *, n_draws: int, n_seeds: int, n_words: int,
                             level: float = 0.95, power: float | None = None,
                             top_ratio: float | None = None) -> ToleranceDerivation:
    """The tolerances of the physics checks that an exact posterior sampler meets at a design, from the
    truth's own per-event values alone (``truth``: :func:`consistency_scores` of the true neutrinos on the
    test events), computed before any model is compared.

    A sampler whose draws follow p(nu | event) has E[f_i] = E[t_i] for every check that is a function of
    the observed event and the neutrinos (f_i its per-event value, the mean over ``n_draws`` draws on each
    of ``n_seeds`` seeds, t_i the truth's): a draw given the event has the law of the true neutrinos given
    the event. With n the truth's events, mu and v the mean and variance of t_i, M = n_draws x n_seeds, a
    check's per-event excess (:func:`consistency_excess`; ratio r, margin d) has the mean
    E[e] = (1 - r) mu (W window, r < 1), (r - 1) mu (closure, r > 1) or d (transverse-mass excess), and, by
    the law of total variance at the worst split of v between and within events,

        Var(e_i) <= v max((1 - r)^2, r^2 + 1/M)          (r = 1 for the margin),

    so V_event = Var(e_i)/n and V_seed = v / (n m S) (m = n_draws, S = n_seeds) in the interval of
    :func:`posteval.metrics.intervals.event_interval`. The word "yes" needs its one-sided p below the
    strictest threshold Holm's adjustment can set among K = ``n_words`` words, alpha/K (alpha = 1 - level;
    a p below it is rejected whatever the other words), i.e. E[e] above the interval's one-sided bound
    h = sqrt(t_{S-1,q}^2 V_seed + z_q^2 V_event), q = 1 - alpha/K, with probability 1 - beta/J on each of
    the J = 4 derived checks (the two W windows, the closure, the transverse-mass excess; beta = 1 -
    ``power``): each tolerance solves

        E[e] = h + z_{1 - beta/J} sqrt(V_event),

    and an exact sampler then passes all four with probability at least ``power`` (Bonferroni over the
    checks). ``power`` defaults to the registered rule
    (:data:`EXACT_SAMPLER_RULE`). The bound on Var(e_i) makes the tolerances conservative: wider than an
    exact sampler needs, never narrower. One W ratio serves both sides: the looser of the two.

    **The top window is not derived**: it is computed with the truth-matched b-jets on the events where
    both are matched, which the observed event does not give, so an exact sampler of the event (which
    must weigh both pairings of leptons and b-jets) falls below the truth's top window by its pairing
    ambiguity, which the truth alone does not measure. Its tolerance is ``top_ratio`` (default the
    registered ``03.physics.top_ratio``); its row of the table shows the threshold without a band.

    Reference: the non-inferiority power condition (z_alpha + z_beta) sd = margin, e.g. S.-C. Chow,
    J. Shao and H. Wang, *Sample Size Calculations in Clinical Research*, 2nd ed. (2008), section 3.2;
    S. Holm, Scand. J. Stat. 6 (1979) 65 (the adjustment).

    Raises ValueError where no tolerance lets an exact sampler pass (too few test events).

    Example: a W window the truth meets in 94 % of 2,380 events, 64 draws on 3 seeds, 100 words:

    >>> t = {k: np.r_[np.ones(2244), np.zeros(136)] for k in ("w_window.nu", "w_window.nubar", "top_window")}
    >>> t |= {"met_closure": np.linspace(1.0, 20.0, 2380), "mt_excess": np.r_[np.ones(75), np.zeros(2305)]}
    >>> d = exact_sampler_tolerances(t, n_draws=64, n_seeds=3, n_words=100, power=0.95)
    >>> round(d.tolerances.w_ratio, 3), round(d.tolerances.mt_excess_margin, 4), d.tolerances.top_ratio
    (0.969, 0.0224, 0.6)
    """
    power = value(EXACT_SAMPLER_RULE) if power is None else power
    top_ratio = value("03.physics.top_ratio") if top_ratio is None else float(top_ratio)
    _design(n_draws, n_seeds, n_words, level, power)
    z_pass = float(stats.norm.ppf(1.0 - (1.0 - power) / len(_DERIVED)))
    one_sided = (1.0 - level) / n_words
    values = {key: _truth_values(truth, key) for key in CONSISTENCY_METRICS}
    bands = {key: partial(_band, v=float(t.var(ddof=1)), n=t.size, draws=n_draws, seeds=n_seeds, level=level,
                          one_sided=one_sided, z_pass=z_pass) for key, t in values.items()}
    solved = {key: _solve(key, float(values[key].mean()), bands[key]) for key in _DERIVED}
    found = {"w_ratio": min(solved["w_window.nu"], solved["w_window.nubar"]),  # one ratio, both sides pass
             "closure_ratio": solved["met_closure"], "mt_excess_margin": solved["mt_excess"]}
    rule = EXACT_SAMPLER_RULE if power == value(EXACT_SAMPLER_RULE) and level == 0.95 else ""
    tolerances = Tolerances(**found, top_ratio=top_ratio, derived=tuple(found) if rule else (), rule=rule)
    rows = {}
    for key, t in values.items():
        tol, mu = tolerances.values[_TOLERANCE_OF[key]], float(t.mean())
        band, sd = bands[key](1.0 if key == "mt_excess" else tol) if key in _DERIVED else (np.nan, np.nan)
        rows[key] = {"truth": mu, "sd": float(t.std(ddof=1)), "n": t.size, "sampler_sd": sd, "band": band,
                     "tolerance": tol, "threshold": mu + tol if key == "mt_excess" else tol * mu,
                     "derived": key in _DERIVED}
    return ToleranceDerivation(tolerances, pd.DataFrame.from_dict(rows, orient="index"))


def closure_from_resolution(resolution: float) -> tuple[float, float]:
    """Mean and sd of the true neutrinos' MET closure that a Gaussian MET residual with ``resolution``
    (GeV, per component) implies: the closure |r| of r ~ N(0, sigma^2 I_2) is Rayleigh distributed,

        E|r| = sigma sqrt(pi / 2),   sd|r| = sigma sqrt(2 - pi / 2),

    so its per-event spread is sqrt(4/pi - 1) = 0.523 of its mean: the detector's part of the noise band of
    the closure check (:func:`exact_sampler_tolerances` uses the truth's measured spread, which also holds
    the residual's non-Gaussian tails).

    Reference: the Rayleigh distribution, e.g. N. L. Johnson, S. Kotz and N. Balakrishnan, *Continuous
    Univariate Distributions*, vol. 1, 2nd ed. (1994), ch. 18.

    >>> [round(x, 3) for x in closure_from_resolution(10.0)]
    [12.533, 6.551]
    """
    s = float(resolution)
    if not np.isfinite(s) or s <= 0:
        raise ValueError(f"resolution: expected a positive number of GeV, got {resolution!r}")
    return s * float(np.sqrt(np.pi / 2)), s * float(np.sqrt(2 - np.pi / 2))


def _samples(neutrinos) -> np.ndarray:
    nu = np.asarray(neutrinos, dtype=float)
    if nu.ndim == 3:
        nu = nu[:, None]
    if nu.ndim != 4 or nu.shape[2:] != (2, 3):
        raise ValueError(f"neutrinos: expected (n, 2, 3) or (n, m, 2, 3) (nu, nubar) momenta, got shape {nu.shape}")
    if not np.isfinite(nu).all():
        raise ValueError("neutrinos: contains NaN or infinite values")
    return nu


def _events(name: str, a, n: int, last: tuple) -> np.ndarray:
    a = np.asarray(a, dtype=float)
    if a.shape != (n, *last):
        raise ValueError(f"{name}: expected shape {(n, *last)}, got {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name}: contains NaN or infinite values")
    return a


def transverse_mass(leptons_p4, neutrinos) -> np.ndarray:
    """m_T(l, nu) per side, massless: shape (n, 2) or (n, m, 2) as ``neutrinos`` (n, [m,] 2, 3)."""
    nu = np.asarray(neutrinos, dtype=float)
    lep = np.asarray(leptons_p4, dtype=float)
    if nu.ndim == 4:
        lep = lep[:, None]
    pt_l = np.hypot(lep[..., 0], lep[..., 1])
    pt_n = np.hypot(nu[..., 0], nu[..., 1])
    dot = lep[..., 0] * nu[..., 0] + lep[..., 1] * nu[..., 1]
    return np.sqrt(np.maximum(2.0 * (pt_l * pt_n - dot), 0.0))


def consistency_scores(leptons_p4, bjets_p4, neutrinos, met, *, matched=None, support=None) -> dict[str, np.ndarray]:
    """Per-event physics-consistency scores of one reconstruction (see the module docstring).

    Parameters
    ----------
    leptons_p4 : (n, 2, 4) (l+, l-) four-vectors in GeV
    bjets_p4 : (n, 2, 4) (b, bbar) jets (truth-matched where ``matched``)
    neutrinos : (n, 2, 3) or (n, m, 2, 3) (nu, nubar) momenta in GeV
    met : (n, 2) missing transverse momentum (x, y) in GeV
    matched : (n,) bool, events with both b-jets matched (the top window is over these); default all
    support : optional (lo, hi), each (2, 3): the training range of each neutrino component

    Returns
    -------
    {"w_window.nu": (n,), "w_window.nubar": (n,), "top_window": (n_matched,), "met_closure": (n,),
    "mt_excess": (n,)}: fractions over the event's reconstructions, the closure in GeV ("unphysical", the
    transverse-mass excess's key before 0.3.0, still reads, with a DeprecationWarning).
    """
    nu = _samples(neutrinos)
    n = len(nu)
    lep = _events("leptons_p4", leptons_p4, n, (2, 4))
    bj = _events("bjets_p4", bjets_p4, n, (2, 4))
    met = _events("met", met, n, (2,))
    mask = np.ones(n, bool) if matched is None else np.asarray(matched)
    if mask.shape != (n,) or mask.dtype != bool:
        raise ValueError(f"matched: expected a boolean array of shape ({n},), got {mask.dtype} {mask.shape}")
    if not mask.any():
        raise ValueError("matched: no event has both b-jets matched; the top window needs at least one")
    obs = reconstruct_ttbar(lep, bj, nu)
    in_w = np.abs(obs["m_lnu"] - W_MASS) < W_WINDOW  # (n, m, 2)
    in_top = (np.abs(obs["m_lnub"] - TOP_MASS) < TOP_WINDOW).mean(axis=(1, 2))
    closure = np.linalg.norm(nu[..., 0, :2] + nu[..., 1, :2] - met[:, None, :], axis=-1).mean(axis=1)
    above = (transverse_mass(lep, nu) > W_MASS + W_WINDOW).any(axis=2)  # (n, m): above the W window's upper edge
    if support is not None:
        lo, hi = (np.asarray(x, dtype=float) for x in support)
        if lo.shape != (2, 3) or hi.shape != (2, 3) or not np.all(lo < hi):
            raise ValueError("support: expected (lo, hi), each of shape (2, 3) with lo < hi")
        above |= ((nu < lo) | (nu > hi)).any(axis=(2, 3))
    return _Scores({"w_window.nu": in_w[..., 0].mean(axis=1), "w_window.nubar": in_w[..., 1].mean(axis=1),
                    "top_window": in_top[mask], "met_closure": closure, "mt_excess": above.mean(axis=1)})


def consistency_excess(model: Mapping[str, np.ndarray], truth: Mapping[str, np.ndarray],
                       tolerances: Tolerances = Tolerances()) -> dict[str, np.ndarray]:
    """Per-event excess over each tolerance (positive: within), paired event by event with the truth.

    ``model`` holds per-event scores of :func:`consistency_scores`, one array per metric with the
    events first ((n,) or (n, S) for S seeds); ``truth`` the truth's own scores (n,).

    >>> t = {"w_window.nu": np.ones(4), "w_window.nubar": np.ones(4), "top_window": np.ones(4),
    ...      "met_closure": np.full(4, 10.0), "mt_excess": np.zeros(4)}
    >>> e = consistency_excess(t, t)
    >>> float(e["met_closure"].mean()), round(float(e["w_window.nu"].mean()), 12)
    (5.0, 0.1)
    """
    def pair(k):
        try:
            m, t = np.asarray(_score(model, k), float), np.asarray(_score(truth, k), float)
        except KeyError:
            raise ValueError(f"model and truth need the scores {list(CONSISTENCY_METRICS)}; missing {k!r}") from None
        if t.ndim != 1 or m.shape[0] != t.shape[0] or m.ndim not in (1, 2):
            raise ValueError(f"{k}: model {m.shape} and truth {t.shape} must score the same events (events first)")
        return m, (t if m.ndim == 1 else t[:, None])

    out = {}
    for side in ("nu", "nubar"):
        m, t = pair(f"w_window.{side}")
        out[f"w_window.{side}"] = m - tolerances.w_ratio * t
    m, t = pair("top_window")
    out["top_window"] = m - tolerances.top_ratio * t
    m, t = pair("met_closure")
    out["met_closure"] = tolerances.closure_ratio * t - m
    m, t = pair("mt_excess")
    out["mt_excess"] = t + tolerances.mt_excess_margin - m
    return out


def consistency_claims(models: Sequence[str], tolerances: Tolerances = Tolerances(), *, metric_prefix="excess.",
                       family: str = "confirmatory", source: str = "this book",
                       labels: Mapping[str, str] | None = None) -> list[Claim]:
    """The claims of physical consistency per model: one non-inferiority claim per quantity on the
    metric ``<metric_prefix><quantity>`` (the per-event :func:`consistency_excess`, > 0), named
    ``consistent.<quantity>.<model>``, and ``physically_consistent.<model>`` that needs all of them;
    ``labels`` names the models in the sentences (default: their keys). Each claim cites its tolerance's
    registry entry (:mod:`posteval.margins`, :meth:`Tolerances.registered`).

    >>> [c.name for c in consistency_claims(["flow"])][-2:]
    ['consistent.mt_excess.flow', 'physically_consistent.flow']
    """
    labels = dict(labels or {})
    tol = tolerances.values
    reason = {
        "w_window.nu": f"W window (nu) at least {tol['w_ratio']:.3g} x the truth's",
        "w_window.nubar": f"W window (nubar) at least {tol['w_ratio']:.3g} x the truth's",
        "top_window": f"top window at least {tol['top_ratio']:.3g} x the truth's",
        "met_closure": f"MET closure at most {tol['closure_ratio']:.3g} x the truth's",
        "mt_excess": f"transverse-mass excess fraction at most the truth's + {tol['mt_excess_margin']:.3g}",
    }
    registered = {k: tolerances.registered(t) for k, t in _TOLERANCE_OF.items()}
    out = []
    for model in models:
        parts = []
        for k in CONSISTENCY_METRICS:
            name = f"consistent.{k}.{model}"
            out.append(Claim(name, f"{labels.get(model, model)}: {reason[k]}", f"{metric_prefix}{k}", model, direction=1,
                             family=family, source=source, registered=registered[k]))
            parts.append(name)
        out.append(Claim(f"physically_consistent.{model}",
                         f"the {labels.get(model, model)} is physically consistent: " + "; ".join(reason[k] for k in CONSISTENCY_METRICS),
                         parts=tuple(parts), family=family, source=source))
    return out
