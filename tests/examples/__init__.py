"""Tests of posteval.examples: one test module per library module (tests/test_layout.py)."""
