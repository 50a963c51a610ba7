"""Training targets of the proxies, built from the task's own data only (never from a judge).

The task's data per pair: the preference label, and the teacher's distilled completion (rubric,
per-criterion evaluation, verdict). Two readings of upstream's unstated Proxy-SFT target:

- the preference label (``kind="sft"``, and the ±1 reward of ``kind="rl"``);
- the teacher's verdict *under its own rubric* (``kind="follow"``): the sign of the sum of the
  teacher's evaluation tokens, read from its completion by :func:`teacher_rubric_verdicts`.
"""

from __future__ import annotations

import numpy as np

from . import grammar
from .task import Vocab


def teacher_rubric_verdicts(vocab: Vocab, completions, *, max_rubric: int = 3) -> np.ndarray:
    """Per teacher completion: 1 or 2 by the sign of its evaluation's sum, 0 on a tie or a malformed completion."""
    out = []
    for p in grammar.parse_batch(vocab, completions, max_rubric=max_rubric):
        s = sum(p.evals) if p.well_formed else 0
        out.append(1 if s > 0 else 2 if s < 0 else 0)
    return np.array(out, dtype=int)
