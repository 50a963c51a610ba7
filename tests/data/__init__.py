"""Tests of posteval.data: one test module per library module (tests/test_layout.py)."""
