"""Data of the book: the synthetic bimodal benchmark (chapter 2) and the ttbar features (chapter 3)."""

from .bimodal import DEFAULT_SIGMA, ExactPosterior, sample_bimodal

__all__ = ["DEFAULT_SIGMA", "ExactPosterior", "sample_bimodal"]
