"""Tests of posteval.models: one test module per library module (tests/test_layout.py)."""
