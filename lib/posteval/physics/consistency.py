"""Physics consistency of neutrino reconstructions: the protocol's fourth part.

A reconstruction must be physical before it is compared. Per event, for a model's neutrinos (one
per event, or m samples per event) and the event's leptons, b-jets and missing transverse momentum:

* **W window** (per side, nu with l+ and nubar with l-): the fraction of reconstructions with
  ``|m(l nu) - m_W| < w`` (m_W = 80.4 GeV, w = 10 GeV);
* **top window** (events with both b-jets truth-matched, both sides averaged): the fraction with
  ``|m(l nu b) - m_t| < w_t`` (m_t = 172.5 GeV, w_t = 20 GeV);
* **MET closure**: the mean over reconstructions of ``|pT(nu) + pT(nubar) - MET|`` (GeV, a vector
  difference): the truth's own closure is the detector's MET resolution, not zero;
* **unphysical fraction**: the fraction of reconstructions for which no real longitudinal
  momentum gives the W mass, i.e. ``m_T(l, nu) > m_W + w`` on either side, with
  ``m_T^2 = 2 pT(l) pT(nu) (1 - cos(dphi))`` (massless leptons and neutrinos; m(l nu) >= m_T
  always, so such a sample can never reach the W window), or that lies outside the training
  support (per component, when ``support`` is given).

Each quantity is a per-event score, so its interval is the seed-and-event rule of
:func:`posteval.metrics.intervals.event_interval` (logit scale for the fractions, log scale for
the closure). :func:`consistency_excess` turns a model's scores and the truth's into per-event
*excesses over a tolerance* (positive: within tolerance), whose means are the claims of
"physically consistent" (:func:`consistency_claims`):

* W window >= ``w_ratio`` x the truth's, per side (default 0.9);
* top window >= ``top_ratio`` x the truth's (default 0.6);
* MET closure <= ``closure_ratio`` x the truth's (default 1.5);
* unphysical fraction <= the truth's + ``unphysical_excess`` (default 0.05).

Each is a one-sided (non-inferiority) claim; "physically consistent" holds when all of them hold
(an intersection-union claim). The default tolerances are those the book states for chapter 3
(a learned model that is physical within the resolution a small model on a few thousand events can
reach); pass others for another analysis.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..margins import value
from ..metrics.claims import Claim
from .kinematics import reconstruct_ttbar

__all__ = ["PHYSICS_FAMILY", "W_MASS", "W_WINDOW", "TOP_MASS", "TOP_WINDOW", "Tolerances", "transverse_mass", "consistency_scores",
           "consistency_excess", "consistency_claims", "CONSISTENCY_METRICS"]

#: The claim family of the physical consistency checks (Holm among them, apart from the source's claims).
PHYSICS_FAMILY = "physics"

W_MASS, W_WINDOW = 80.4, 10.0
TOP_MASS, TOP_WINDOW = 172.5, 20.0
#: per-event scores of :func:`consistency_scores`
CONSISTENCY_METRICS = ("w_window.nu", "w_window.nubar", "top_window", "met_closure", "unphysical")


@dataclass(frozen=True)
class Tolerances:
    """What "physically consistent" allows against the truth (see the module docstring): a model's W
    windows at least ``w_ratio`` and its top window at least ``top_ratio`` x the truth's, its MET
    closure at most ``closure_ratio`` x the truth's, its unphysical fraction at most the truth's +
    ``unphysical_excess``."""

    w_ratio: float = value("03.physics.w_ratio")
    top_ratio: float = value("03.physics.top_ratio")
    closure_ratio: float = value("03.physics.closure_ratio")
    unphysical_excess: float = value("03.physics.unphysical_excess")

    def __post_init__(self):
        for name in ("w_ratio", "top_ratio"):
            v = getattr(self, name)
            if not 0 < v <= 1:
                raise ValueError(f"{name}: expected a ratio in (0, 1], got {v!r}")
        if not self.closure_ratio >= 1:
            raise ValueError(f"closure_ratio: expected a ratio >= 1, got {self.closure_ratio!r}")
        if not 0 <= self.unphysical_excess < 1:
            raise ValueError(f"unphysical_excess: expected a fraction in [0, 1), got {self.unphysical_excess!r}")


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
    "unphysical": (n,)}: fractions over the event's reconstructions, the closure in GeV.
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
    bad = (transverse_mass(lep, nu) > W_MASS + W_WINDOW).any(axis=2)  # (n, m)
    if support is not None:
        lo, hi = (np.asarray(x, dtype=float) for x in support)
        if lo.shape != (2, 3) or hi.shape != (2, 3) or not np.all(lo < hi):
            raise ValueError("support: expected (lo, hi), each of shape (2, 3) with lo < hi")
        bad |= ((nu < lo) | (nu > hi)).any(axis=(2, 3))
    return {"w_window.nu": in_w[..., 0].mean(axis=1), "w_window.nubar": in_w[..., 1].mean(axis=1),
            "top_window": in_top[mask], "met_closure": closure, "unphysical": bad.mean(axis=1)}


def consistency_excess(model: Mapping[str, np.ndarray], truth: Mapping[str, np.ndarray],
                       tolerances: Tolerances = Tolerances()) -> dict[str, np.ndarray]:
    """Per-event excess over each tolerance (positive: within), paired event by event with the truth.

    ``model`` holds per-event scores of :func:`consistency_scores`, one array per metric with the
    events first ((n,) or (n, S) for S seeds); ``truth`` the truth's own scores (n,).

    >>> t = {"w_window.nu": np.ones(4), "w_window.nubar": np.ones(4), "top_window": np.ones(4),
    ...      "met_closure": np.full(4, 10.0), "unphysical": np.zeros(4)}
    >>> e = consistency_excess(t, t)
    >>> float(e["met_closure"].mean()), round(float(e["w_window.nu"].mean()), 12)
    (5.0, 0.1)
    """
    missing = [k for k in CONSISTENCY_METRICS if k not in model or k not in truth]
    if missing:
        raise ValueError(f"model and truth need the scores {list(CONSISTENCY_METRICS)}; missing {missing}")

    def pair(k):
        m, t = np.asarray(model[k], float), np.asarray(truth[k], float)
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
    m, t = pair("unphysical")
    out["unphysical"] = t + tolerances.unphysical_excess - m
    return out


def consistency_claims(models: Sequence[str], tolerances: Tolerances = Tolerances(), *, metric_prefix="excess.",
                       family: str = "confirmatory", source: str = "this book",
                       labels: Mapping[str, str] | None = None) -> list[Claim]:
    """The claims of physical consistency per model: one non-inferiority claim per quantity on the
    metric ``<metric_prefix><quantity>`` (the per-event :func:`consistency_excess`, > 0) and
    ``physically_consistent.<model>`` that needs all of them; ``labels`` names the models in the
    sentences (default: their keys)."""
    labels = dict(labels or {})
    reason = {
        "w_window.nu": f"W window (nu) at least {tolerances.w_ratio:g} x the truth's",
        "w_window.nubar": f"W window (nubar) at least {tolerances.w_ratio:g} x the truth's",
        "top_window": f"top window at least {tolerances.top_ratio:g} x the truth's",
        "met_closure": f"MET closure at most {tolerances.closure_ratio:g} x the truth's",
        "unphysical": f"unphysical fraction at most the truth's + {tolerances.unphysical_excess:g}",
    }
    tolerance = {"w_window.nu": "w_ratio", "w_window.nubar": "w_ratio", "top_window": "top_ratio",
                 "met_closure": "closure_ratio", "unphysical": "unphysical_excess"}
    # the registered tolerance (posteval.margins) where the claim uses it unchanged
    registered = {k: f"03.physics.{t}" if getattr(tolerances, t) == value(f"03.physics.{t}") else ""
                  for k, t in tolerance.items()}
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
