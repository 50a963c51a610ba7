"""Tests of posteval.physics: one test module per library module (tests/test_layout.py)."""
