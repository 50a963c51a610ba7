"""Tests of posteval.rubric: one test module per library module (tests/test_layout.py)."""
