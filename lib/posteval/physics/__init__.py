"""Dileptonic ttbar physics for chapter 3: Pythia 8 events, a toy detector, event files,
kinematics and the classical neutrino-weighting baseline.

Modules: :mod:`.ttbar` (``load_or_generate``, ``read_events``), :mod:`.kinematics`, :mod:`.consistency`
(W and top windows, MET closure, transverse-mass excess fraction: the protocol's fourth part),
:mod:`.neutrino_weighting`; internals in :mod:`.config`, :mod:`.generator`, :mod:`.truth`,
:mod:`.detector`, :mod:`.chunks`, :mod:`.event_file`, :mod:`.event_reader`.

Each module that needs a package of the ``physics`` extra (awkward, vector, h5py, Pythia, FastJet) says
so when imported without it; the numpy-only ones (:mod:`.coordinates`, :mod:`.joint_coordinates`,
:mod:`.fourvectors`, :mod:`.config`) import with the base install.
"""
