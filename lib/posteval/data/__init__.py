"""Data of the book: the synthetic bimodal benchmark (chapter 2), the ttbar features (chapter 3) and the
robot arm of inverse kinematics (chapter 5, :mod:`.robot_arm`)."""

from .bimodal import DEFAULT_SIGMA, ExactPosterior, sample_bimodal

__all__ = ["DEFAULT_SIGMA", "ExactPosterior", "sample_bimodal"]
