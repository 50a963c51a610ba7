"""Tests of posteval.metrics: one test module per library module (tests/test_layout.py)."""
