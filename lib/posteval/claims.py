"""Verdict words of a chapter: recorded as ``claim.<name>`` and shown together in one table.

A claim's value is one of :data:`posteval.metrics.verdicts.VERDICTS` ("yes", "no", "not resolved").
:func:`claims_frame` collects every recorded word under the given prefixes (claims, best models,
target words) into one small table without numbers: the cell that shows it is what a notebook test
compares exactly across machines, while cells with numbers from training are not.
"""

from __future__ import annotations

import pandas as pd

from .book import record, recorded
from .metrics.verdicts import VERDICTS

__all__ = ["record_claim", "claims_frame"]


def record_claim(name: str, word: str) -> str:
    """Record ``claim.<name>`` = ``word`` (one of "yes", "no", "not resolved") and return it."""
    if word not in VERDICTS:
        raise ValueError(f"word: a claim is one of {VERDICTS}, got {word!r}")
    return record(f"claim.{name}", word)


def claims_frame(prefixes=("claim.", "best.")) -> pd.DataFrame:
    """Every recorded string whose key starts with one of ``prefixes``, as a table key -> verdict.

    Numbers under those prefixes are an error (the table must not change from machine to machine).
    """
    if isinstance(prefixes, str) or not prefixes:
        raise ValueError(f"prefixes: expected a non-empty sequence of key prefixes, got {prefixes!r}")
    rows = {}
    for key, value in sorted(recorded().items()):
        if key.startswith(tuple(prefixes)):
            if not isinstance(value, str):
                raise ValueError(f"{key}: a verdict table holds words, got the number {value!r}")
            rows[key] = value
    if not rows:
        raise ValueError(f"no recorded words start with {tuple(prefixes)}")
    return pd.DataFrame({"verdict": rows}).rename_axis("claim")
