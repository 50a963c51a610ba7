"""posteval: the library of the book *Pointwise metrics mislead*.

An evaluation protocol for generative models on inverse problems: CRPS and the energy score
(per-event accuracy), a binned chi-square of the spectrum (population), coverage (calibration),
with seed-and-event intervals and verdicts. Parts: :mod:`posteval.metrics` (core, numpy/scipy
only), :mod:`posteval.plotting`, :mod:`posteval.data`, :mod:`posteval.examples`; with extras
:mod:`posteval.models` (``posteval[models]``), :mod:`posteval.physics` (``posteval[physics]``),
:mod:`posteval.rubric` (``posteval[rubric]``); the book's runner :mod:`posteval.book`.

Example
-------
>>> import posteval
>>> posteval.__version__  # doctest: +SKIP
'0.3.0'
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("posteval")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from an uninstalled source tree
    __version__ = "0+unknown"

__all__ = ["__version__"]
