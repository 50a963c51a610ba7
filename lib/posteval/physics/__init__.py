"""Dileptonic ttbar physics for chapter 3: Pythia 8 events, a toy detector, event files,
kinematics and the classical neutrino-weighting baseline.

Modules: :mod:`.ttbar` (``load_or_generate``, ``read_events``), :mod:`.kinematics`, :mod:`.consistency`
(W and top windows, MET closure, unphysical fraction: the protocol's fourth part),
:mod:`.neutrino_weighting`; internals in :mod:`.config`, :mod:`.generator`, :mod:`.truth`,
:mod:`.detector`, :mod:`.chunks`, :mod:`.event_file`, :mod:`.event_reader`.
"""

from posteval._extras import require

require("posteval.physics", "awkward", "vector", "h5py", extra="physics")
