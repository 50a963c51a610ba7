"""The book's one number format (posteval.numformat) and its use by record / record_interval."""

import doctest
import math
import re

import numpy as np
import pytest

from posteval import book, numformat
from posteval.numformat import MISSING, interval, interval_decimals, number, with_decimals

E_NOTATION = re.compile(r"\d[eE][+-]?\d")


def test_docstring_examples():
    assert doctest.testmod(numformat).failed == 0


@pytest.mark.parametrize("x, text", [
    (3, "3"), (np.int64(40000), "40,000"), (40000.0, "40,000"), (18098.7, "18,100"), (35.2134, "35.2"),
    (0.94312, "0.943"), (9.996, "10.0"), (999.6, "1,000"), (-0.0, "0"), (0.0, "0"), (0.5, "0.500"),
    (1.0841e-14, "1.08 × 10⁻¹⁴"), (-2.5e-7, "-2.50 × 10⁻⁷"), (2.0082e-02, "0.0201"),
    (float("nan"), MISSING), (None, MISSING), (float("inf"), "∞"), (-np.inf, "-∞"), (True, "yes"),
])
def test_number(x, text):
    assert number(x) == text


def test_number_never_writes_e_notation_nan_or_negative_zero():
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.normal(0, 1, 300) * 10.0 ** rng.integers(-20, 12, 300), [-1e-300, -4e-5]])
    for x in values:
        for digits in (1, 2, 3, 4):
            text = number(float(x), digits)
            assert not E_NOTATION.search(text) and "nan" not in text.lower(), (x, text)
            assert not re.fullmatch(r"-[0.,]+", text), (x, text)
            if abs(x) >= 1e-4:  # the text reads back as the number to its significant figures
                back = float(text.replace(",", ""))
                assert back == pytest.approx(x, rel=0.51 * 10 ** (1 - digits)), (x, digits, text)


@pytest.mark.parametrize("est, lo, hi, text", [
    (35.21, 29.43, 41.02, "35 [29, 41]"),
    (32.84, 31.93, 33.71, "32.8 [31.9, 33.7]"),
    (0.9431, 0.9330, 0.9521, "0.943 [0.933, 0.952]"),
    (0.0091, -0.0039, 0.0222, "0.009 [-0.004, 0.022]"),
    (-0.0004, -0.031, 0.029, "0.000 [-0.031, 0.029]"),
    (100.4, 88.9, 113.0, "100 [89, 113]"),
    (12345.0, 11000.0, 13700.0, "12,300 [11,000, 13,700]"),
    (2.0, float("nan"), 3.0, "2.00 [–, 3.00]"),
    (1.0, 1.0, 1.0, "1.00 [1.00, 1.00]"),
])
def test_interval(est, lo, hi, text):
    assert interval(est, lo, hi) == text


def test_interval_decimals_follow_the_pdg_rule():
    # half-width 0.354 keeps two figures (35 <= 35), 0.36 keeps one (36 > 35)
    assert interval_decimals(0.0, 0.708) == 2
    assert interval_decimals(0.0, 0.72) == 1
    assert interval_decimals(5.0, 5.0) is None and interval_decimals(float("nan"), 1.0) is None


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="x: expected a real number"):
        number("3")
    with pytest.raises(ValueError, match="digits"):
        number(1.0, 0)
    with pytest.raises(ValueError, match="decimals"):
        with_decimals(1.0, 1.5)
    with pytest.raises(ValueError, match="lo"):
        interval(1.0, "a", 2.0)


def test_record_glues_the_text_and_keeps_the_value(monkeypatch):
    glued = {}
    import myst_nb

    monkeypatch.setattr(myst_nb, "glue", lambda name, value, display=False: glued.__setitem__(name, value))
    assert book.record("test_numformat.n", np.int64(40000)) == 40000
    assert glued["test_numformat.n"] == "40,000" and book.recorded()["test_numformat.n"] == 40000
    assert book.record("test_numformat.word", "yes") == "yes" and glued["test_numformat.word"] == "yes"
    assert book.record("test_numformat.x", 0.123456, digits=2) == pytest.approx(0.123456)
    assert glued["test_numformat.x"] == "0.12"
    est = book.record_interval("crps_test.flow", (32.84, 31.93, 33.71))
    assert est == pytest.approx(32.84)
    assert [glued[k] for k in ("crps_test.flow", "crps_test_lo.flow", "crps_test_hi.flow", "crps_test_ci.flow")] == [
        "32.8", "31.9", "33.7", "32.8 [31.9, 33.7]"]
    assert book.recorded()["crps_test_lo.flow"] == pytest.approx(31.93)
    with pytest.raises(ValueError, match="lo 2.0 > hi 1.0"):
        book.record_interval("bad.one", (1.5, 2.0, 1.0))
    with pytest.raises(ValueError, match="estimate, lo, hi"):
        book.record_interval("bad.two", (1.0, 2.0))
    assert math.isnan(book.record_interval("nan_test.flow", (float("nan"),) * 3))
    assert glued["nan_test_ci.flow"] == "– [–, –]"
