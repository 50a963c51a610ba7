"""Tests of posteval.plotting: one test module per library module (tests/test_layout.py)."""
