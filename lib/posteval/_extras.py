"""Optional parts of the package and the extra that installs each.

``require(part, *modules, extra=...)`` is called at the top of a part that needs third-party
modules beyond the core (numpy, scipy, pandas, matplotlib, seaborn, tqdm, pyyaml). When one is
missing it raises :class:`ModuleNotFoundError` naming the part, the module and the command that
installs it, instead of a bare "No module named 'torch'".

Example
-------
>>> require("posteval.metrics", "numpy", extra="io")   # present: returns None
"""

from __future__ import annotations

import importlib.util

#: extra of pyproject.toml -> the third-party modules it brings (import names)
EXTRAS = {
    "io": ("h5py", "pyarrow"),
    "models": ("torch", "zuko"),
    "physics": ("pythia8mc", "fastjet", "awkward", "vector", "h5py"),
    "rubric": ("torch", "transformers", "trl", "tokenizers", "accelerate", "datasets"),
    "book": ("jupytext", "papermill", "nbclient", "nbconvert", "ipykernel"),
}


def install_hint(extra: str) -> str:
    """The pip command that installs ``extra``: ``pip install "posteval[extra]"``."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r}; extras: {', '.join(EXTRAS)}")
    return f'pip install "posteval[{extra}]"'


def require(part: str, *modules: str, extra: str) -> None:
    """Raise ModuleNotFoundError naming ``extra`` when one of ``modules`` cannot be imported."""
    hint = install_hint(extra)
    for module in modules:
        if importlib.util.find_spec(module) is None:
            raise ModuleNotFoundError(f"{part} needs {module}, which is not installed: {hint}", name=module)
