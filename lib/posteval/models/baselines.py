"""Deprecated since 0.3.0: :func:`prior_samples` lives in :mod:`posteval.data.prior` (numpy only)."""

from __future__ import annotations

import warnings

from ..data.prior import prior_samples

__all__ = ["prior_samples"]

warnings.warn("posteval.models.baselines is deprecated: import prior_samples from posteval.data.prior",
              DeprecationWarning, stacklevel=2)
