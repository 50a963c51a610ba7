"""Configuration of the dileptonic ttbar sample: generator settings and detector parameters.

Every number of the toy detector lives in :class:`DetectorConfig`, with the source of its
value next to it. :class:`GenerationConfig` holds what decides the events of a file (mode,
chunking, detector); two files with equal configs and seeds hold identical events.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field

import numpy as np

MODES = ("parton", "shower", "full")


@dataclass(frozen=True)
class DetectorConfig:
    """Parameters of the numpy + fastjet detector model.

    Sources (public repository ``delphes/delphes``; values as quoted in
    ``shared/notes/pythia_feasibility.md`` §5):

    * ``cards/delphes_card_ATLAS.tcl`` (commit 15772b7): muon and electron
      ``MomentumSmearing`` formulas, HCal energy resolution (used for the whole jet energy).
    * ``cards/ATLAS_Run2/tagging/b_tag_70.tcl``: b-, c- and light-jet tag efficiencies at the
      70% working point, the one used by the nu2flows / RODEM Delphes samples.
    * nu2flows / RODEM data sets (zenodo 7737248, 12117432): anti-kt R = 0.4.
    * Common analysis choices (not a card value): lepton and jet pT > 25 GeV, |eta| < 2.5,
      MET soft-term noise 0.5 * sqrt(sum ET) per component, lepton dressing cone 0.1.

    Attributes
    ----------
    jet_radius : float
        Anti-kt radius R (nu2flows data sets: 0.4; the Delphes ATLAS card itself uses 0.6).
    jet_cluster_min_pt : float
        GeV; jets below this raw pT are not kept as jets (Delphes ``JetPTMin`` = 20).
    jet_min_pt, jet_max_abs_eta : float
        Selection of stored jets after smearing (GeV; ATLAS tracker acceptance 2.5).
    max_jets : int
        Jets stored per event, leading in pT, zero-padded (nu2flows keeps a fixed J_max).
    visible_max_abs_eta : float
        Calorimeter acceptance |eta| < 4.9 (Delphes ATLAS card, HCal/ECal forward edge).
    hcal_stochastic, hcal_constant, hcal_noise : tuple of float
        Per |eta| region of ``hcal_eta_edges``: sigma(E) = sqrt((c E)^2 + s^2 E + n^2), from
        the HCal ``ResolutionFormula`` of ``delphes_card_ATLAS.tcl``.
    hcal_eta_edges : tuple of float
        Upper |eta| edges of the HCal regions (1.7, 3.2, 4.9).
    muon_constant, muon_slope, electron_constant, electron_slope : tuple of float
        sigma(pT)/pT = sqrt(c^2 + (s pT)^2) in the |eta| regions ``lepton_eta_edges``
        (muon and electron ``MomentumSmearing`` of ``delphes_card_ATLAS.tcl``).
    lepton_eta_edges : tuple of float
        Upper |eta| edges of the lepton regions (0.5, 1.5, 2.5).
    ecal_constant, ecal_stochastic : float
        ECal sigma(E) = sqrt((c E)^2 + s^2 E) for |eta| <= 3.2 (``delphes_card_ATLAS.tcl``).
        An electron's energy is the inverse-variance combination of its track (the
        ``electron_*`` formula) and this ECal measurement, as the Delphes calorimeter combines a
        track with its calorimeter deposit.
    lepton_min_pt, lepton_max_abs_eta : float
        Lepton selection (GeV, |eta|).
    dress_dr : float
        Photons within this Delta R of a lepton are added to it (the usual dressed-lepton cone
        of particle-level analyses, 0.1), as a calorimeter merges them with the lepton.
    isolation_dr, isolation_min_pt, electron_isolation_max, muon_isolation_max : float
        Isolation of ``delphes_card_ATLAS.tcl`` (``ElectronIsolation``, ``MuonIsolation``):
        the scalar pT sum of other visible particles above 0.5 GeV within Delta R 0.5 must be
        below 0.12 (e) / 0.25 (mu) times the lepton pT; a non-isolated lepton is lost.
    btag_b, btag_c, btag_light : tuple of float
        ``b_tag_70.tcl``: eff_b = a tanh(b pT) * 30 / (1 + c pT), eff_c = a tanh(b pT) / (1 + c pT),
        eff_light = a + b pT, applied for |eta| < ``btag_max_abs_eta``.
    btag_max_abs_eta : float
        Tagging acceptance (2.5, the card's ``|eta| <= 2.5`` condition).
    flavour_match_dr : float
        Jet flavour = b (c) when a b (c) quark lies within this Delta R (ghost-free cone match,
        as the Delphes ``JetFlavorAssociation`` with ``DeltaR`` 0.5 for R = 0.4 jets; we use R).
    flavour_quark_min_pt : float
        GeV; quarks softer than this do not label jets (Delphes ``PartonPTMin`` = 1, raised to
        5 to avoid labelling by soft shower copies).
    soft_term_resolution : float
        MET soft-term noise per component, in units of sqrt(GeV): sigma = k sqrt(sum ET_soft)
        (common parametrisation of calorimeter MET resolution, ATLAS ~0.5-0.7).
    min_leptons, min_jets, min_btags : int
        Event selection: exactly ``min_leptons`` leptons, at least ``min_jets`` jets and
        ``min_btags`` b-tags (the dileptonic ttbar selection of the nu2flows paper).
    """

    jet_radius: float = 0.4
    jet_cluster_min_pt: float = 20.0
    jet_min_pt: float = 25.0
    jet_max_abs_eta: float = 2.5
    max_jets: int = 10
    visible_max_abs_eta: float = 4.9
    hcal_eta_edges: tuple = (1.7, 3.2, 4.9)
    hcal_constant: tuple = (0.0302, 0.05, 0.0942)
    hcal_stochastic: tuple = (0.5205, 0.706, 1.0)
    hcal_noise: tuple = (1.59, 0.0, 0.0)
    lepton_eta_edges: tuple = (0.5, 1.5, 2.5)
    muon_constant: tuple = (0.01, 0.015, 0.025)
    muon_slope: tuple = (1.0e-4, 1.5e-4, 3.5e-4)
    electron_constant: tuple = (0.03, 0.05, 0.15)
    electron_slope: tuple = (1.3e-3, 1.7e-3, 3.1e-3)
    ecal_constant: float = 0.0017
    ecal_stochastic: float = 0.101
    lepton_min_pt: float = 25.0
    lepton_max_abs_eta: float = 2.5
    dress_dr: float = 0.1
    isolation_dr: float = 0.5
    isolation_min_pt: float = 0.5
    electron_isolation_max: float = 0.12
    muon_isolation_max: float = 0.25
    btag_b: tuple = (1.364, 0.00237, 0.11063)
    btag_c: tuple = (0.090, 0.61605, 0.00124)
    btag_light: tuple = (0.00352, 5.1e-6)
    btag_max_abs_eta: float = 2.5
    flavour_match_dr: float = 0.4
    flavour_quark_min_pt: float = 5.0
    soft_term_resolution: float = 0.5
    min_leptons: int = 2
    min_jets: int = 2
    min_btags: int = 1


@dataclass(frozen=True)
class GenerationConfig:
    """What determines the events of a file, besides the seed and the number of events.

    Attributes
    ----------
    mode : str
        ``"shower"`` (default): ISR/FSR on, MPI and hadronisation off (~1,500 events/s/core);
        ``"full"``: ISR/FSR, MPI, hadronisation and hadron decays (~170 events/s/core);
        ``"parton"``: hard process and resonance decays only (for tests, ~30k events/s/core).
    include_taus : bool
        Also let W -> tau nu. Taus then decay (in ``shower`` mode decays are switched on, with
        hadronisation still off); the detector lepton is the e/mu of a leptonic tau decay, and
        events with a hadronic tau fail the selection. Not available in ``parton`` mode.
    top_mass : float
        GeV, Pythia ``6:m0`` (its 8.317 default is 173.0; 172.5 is the LHC reference value).
    chunk_events : int
        Generated events per chunk, the unit of work, caching and seeding. Changing it changes
        the events.
    batch_events : int
        Events per ``Pythia.nextBatch`` call inside a chunk (memory only; does not change events).
    detector : DetectorConfig
        Detector model.
    """

    mode: str = "shower"
    include_taus: bool = False
    top_mass: float = 172.5
    chunk_events: int = 2500
    batch_events: int = 1000
    detector: DetectorConfig = field(default_factory=DetectorConfig)

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        for name in ("chunk_events", "batch_events"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
            object.__setattr__(self, name, int(value))  # numpy ints would not serialise to JSON

    def to_json(self) -> str:
        """Canonical JSON text of the config (sorted keys), as stored in event files."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    def digest(self) -> str:
        """Short hex digest of :meth:`to_json`, used in cache file names."""
        return hashlib.sha256(self.to_json().encode()).hexdigest()[:12]


def default_chunk_events(mode: str) -> int:
    """Chunk size that keeps one chunk at a few seconds of work in ``mode``."""
    return {"parton": 20000, "shower": 2500, "full": 1000}[mode]


def default_batch_events(mode: str) -> int:
    """``nextBatch`` size that keeps the awkward event records below ~0.5 GB in ``mode``."""
    return {"parton": 5000, "shower": 1000, "full": 500}[mode]
