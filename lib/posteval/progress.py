"""Progress bars of the library: ``tqdm.auto``'s bar, imported without its ipywidgets warning.

Without ipywidgets, ``tqdm.auto`` warns once, on its first import inside a Jupyter kernel, and
falls back to the text bar, which is what the book wants. The warning is silenced for that
import only; no global warning filter or tqdm setting is changed.

Usage: ``from posteval.progress import tqdm``.
"""

import warnings

from tqdm import TqdmWarning

with warnings.catch_warnings():
    warnings.simplefilter("ignore", TqdmWarning)
    from tqdm.auto import tqdm, trange

__all__ = ["tqdm", "trange"]
