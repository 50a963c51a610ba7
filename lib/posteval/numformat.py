"""How the book writes a number: one format for every glued value and every table.

Rules (issue 28 of the book; the interval rule is the Particle Data Group's rounding rule):

* a number alone has ``digits`` significant figures (3 by default): ``35.2134 -> "35.2"``,
  ``0.94312 -> "0.943"``, ``18098.7 -> "18,100"``; never e-notation: below 10^-4 it is written
  ``1.08 × 10⁻¹⁴``;
* integers are integers, with thousands separators: ``40000 -> "40,000"`` (a float that is a whole
  number and at least 1,000 is an integer too: ``40000.0 -> "40,000"``);
* an estimate with an interval shares one number of decimals, set by the interval's half-width h:
  h is kept to two significant figures when its first two digits are at most 35, else to one,
  and the three numbers are rounded to that decimal place:
  ``interval(35.21, 29.43, 41.02) -> "35 [29, 41]"`` (h = 5.8), ``interval(0.9431, 0.9330, 0.9521)
  -> "0.943 [0.933, 0.952]"`` (h = 0.0096);
* no negative zero (``-0.0001`` to two decimals is ``"0.00"``, not ``"-0.00"``);
* a missing value (None, NaN) is :data:`MISSING`, an en dash, never "nan"; the page that shows it
  says why in a footnote; infinities are ``∞`` and ``-∞``.

Reference: Particle Data Group, "Introduction: rounding", Review of Particle Physics (2024), §5.3.

Example
-------
>>> number(40000), number(18098.7), number(0.0123456), number(float("nan"))
('40,000', '18,100', '0.0123', '–')
>>> interval(32.84, 31.93, 33.71)
'32.8 [31.9, 33.7]'
>>> number(1.0841e-14)
'1.08 × 10⁻¹⁴'
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import pandas as pd

__all__ = ["MISSING", "NBSP", "number", "with_decimals", "interval", "interval_decimals", "is_missing", "one_line", "table"]

#: How a missing value is written (the page says why in a footnote).
MISSING = "–"
#: the no-break space of :func:`one_line`
NBSP = "\u00a0"
_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_SMALL = 1e-4  # below this (and not zero) a number is written as a power of ten


def is_missing(x) -> bool:
    """Whether ``x`` is None or a NaN (a value that was not measured)."""
    return x is None or (isinstance(x, Real) and not isinstance(x, Integral) and math.isnan(float(x)))


def _check_real(x, name: str = "x") -> None:
    if isinstance(x, bool) or not isinstance(x, Real):
        raise ValueError(f"{name}: expected a real number, got {type(x).__name__} {x!r}")


def _special(x) -> str | None:
    """The text of a value that has no digits: missing or infinite; None otherwise."""
    if is_missing(x):
        return MISSING
    if math.isinf(float(x)):
        return "∞" if x > 0 else "-∞"
    return None


def _no_negative_zero(text: str) -> str:
    if text.startswith("-") and not any(c in "123456789" for c in text):
        return text[1:]
    return text


def with_decimals(x, decimals: int) -> str:
    """``x`` rounded to ``decimals`` places (negative: to tens, hundreds, ...), thousands separated.

    >>> with_decimals(1234.567, 1), with_decimals(1234.567, -1), with_decimals(-0.0004, 2)
    ('1,234.6', '1,230', '0.00')
    """
    if x is None:
        return MISSING
    _check_real(x)
    special = _special(x)
    if special is not None:
        return special
    if not isinstance(decimals, Integral):
        raise ValueError(f"decimals: expected an integer, got {decimals!r}")
    if decimals <= 0:
        text = f"{int(round(float(x), int(decimals))):,}"
    else:
        text = f"{float(x):,.{int(decimals)}f}"
    return _no_negative_zero(text)


def _power_of_ten(x: float, digits: int) -> str:
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{_no_negative_zero(mantissa)} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def number(x, digits: int = 3) -> str:
    """``x`` with ``digits`` significant figures, by the book's rules (module docstring).

    Integers (and whole floats of at least 1,000) are written whole, with thousands separators.

    >>> number(3), number(0.5), number(-0.00004), number(136.4), number(1e6 + 0.0)
    ('3', '0.500', '-4.00 × 10⁻⁵', '136', '1,000,000')
    """
    if isinstance(x, bool):
        return "yes" if x else "no"
    if x is None:
        return MISSING
    _check_real(x)
    if not isinstance(digits, Integral) or digits < 1:
        raise ValueError(f"digits: expected a positive integer, got {digits!r}")
    if isinstance(x, Integral):
        return f"{int(x):,}"
    special = _special(x)
    if special is not None:
        return special
    x = float(x)
    if x == 0:
        return "0"
    if abs(x) >= 1000 and x.is_integer():
        return f"{int(x):,}"
    if abs(x) < _SMALL:
        return _power_of_ten(x, digits)
    magnitude = math.floor(math.log10(abs(x)))
    decimals = digits - 1 - magnitude
    text = with_decimals(x, decimals)
    if decimals > 0 and abs(float(text.replace(",", ""))) >= 10 ** (magnitude + 1):
        text = with_decimals(x, decimals - 1)  # rounding carried into a new digit: 9.996 -> "10.0"
    return text


def interval_decimals(lo, hi) -> int | None:
    """Decimal places for an interval [lo, hi] (PDG rule on the half-width); None if it has no width.

    >>> interval_decimals(29.43, 41.02), interval_decimals(0.9330, 0.9521), interval_decimals(10.0, 10.24)
    (0, 3, 2)
    """
    _check_real(lo, "lo")
    _check_real(hi, "hi")
    if _special(lo) is not None or _special(hi) is not None:
        return None
    half = (float(hi) - float(lo)) / 2
    if not half > 0:
        return None
    magnitude = math.floor(math.log10(half))
    leading = int(half / 10 ** (magnitude - 1))  # the first two significant digits, 10..99
    keep = 2 if leading <= 35 else 1
    return keep - 1 - magnitude


def interval(estimate, lo, hi, digits: int = 3) -> str:
    """"estimate [lo, hi]" with the decimals of :func:`interval_decimals` (``digits`` significant
    figures when the interval has no width; a missing bound is :data:`MISSING`).

    >>> interval(0.0091, -0.0039, 0.0222), interval(2.0, float("nan"), 3.0)
    ('0.009 [-0.004, 0.022]', '2.00 [–, 3.00]')
    """
    for name, v in (("estimate", estimate), ("lo", lo), ("hi", hi)):
        _check_real(v, name)
    d = interval_decimals(lo, hi)
    if d is None:
        return f"{number(estimate, digits)} [{number(lo, digits)}, {number(hi, digits)}]"
    return f"{with_decimals(estimate, d)} [{with_decimals(lo, d)}, {with_decimals(hi, d)}]"


def one_line(text) -> str:
    """``text`` with its spaces made no-break (:data:`NBSP`), so that "0.12 [0.05, 0.19]" or
    "0.85 ± 0.07" stays on one line of a table cell.

    >>> one_line(interval(0.12, 0.05, 0.19)) == "0.12\u00a0[0.05,\u00a00.19]"
    True
    """
    return str(text).replace(" ", NBSP)


def table(frame, digits: int = 3):
    """A copy of a pandas DataFrame with every number written by :func:`number` (strings, such as
    verdict words or ready "estimate [lo, hi]" texts, kept; a missing value is :data:`MISSING`).

    >>> import pandas as pd
    >>> table(pd.DataFrame({"n": [40000, 12], "crps": [35.2134, float("nan")], "word": ["yes", "no"]}))
            n  crps word
    0  40,000  35.2  yes
    1      12     –   no
    """

    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"frame: expected a pandas DataFrame, got {type(frame).__name__}")

    def cell(v):
        if isinstance(v, str):
            return v
        if hasattr(v, "item") and getattr(v, "ndim", 0) == 0:
            v = v.item()
        if v is None or isinstance(v, (bool, Real)):
            return number(v, digits)
        raise ValueError(f"frame: a cell holds {type(v).__name__} {v!r}, neither a number nor a string")

    return frame.map(cell)
