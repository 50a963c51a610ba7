"""Library of the book *Pointwise metrics mislead*: metrics, models, data, plotting, runner."""

import warnings as _warnings

with _warnings.catch_warnings():
    # Without ipywidgets, tqdm.auto warns once, on its first import inside Jupyter, and falls
    # back to the text bar, which is what the book wants. Importing it here, before any
    # module of the library does, keeps that warning out of every chapter's output.
    from tqdm import TqdmWarning as _TqdmWarning

    _warnings.simplefilter("ignore", _TqdmWarning)
    import tqdm.auto as _tqdm_auto  # noqa: F401
