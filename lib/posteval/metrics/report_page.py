"""The protocol report as one self-contained HTML page that fits a 1,280 px window.

Pure HTML rendering from tables, sentences and PNG bytes: no plotting import (the metrics layer
never imports plotting), no JavaScript, figures embedded as ``data:`` URIs.

Numbers
    4 significant digits (``0.5194``, ``1.235e5``), a minus sign for negatives, never ``-0``; a
    column whose values are all whole numbers is written as integers; NaN and None read ``–``
    (an en dash) and a table that has any gets the footnote ``– : not computed for this row
    (see notes)``. In a table with numeric columns ``X``, ``X_lo`` and ``X_hi``, the three become
    one cell ``0.5194 [0.5170, 0.5218]`` in the place of ``X``; number cells never wrap. Headers
    read with spaces for underscores and wrap at words.

Fitting the page (the layout rule)
    Each column is given a width in digit widths (a space or punctuation counts half, a minus
    sign 1.3): its longest number cell (numbers do not wrap), at most :data:`TEXT_CHARS` for a
    text cell (text wraps), and at least 1.1 times the longest word of its bold header, plus
    :data:`CELL_PAD` for padding and borders. A table whose columns add up to at most
    :data:`PAGE_CHARS` is one table. Otherwise a table of at most :data:`TRANSPOSE_MAX_ROWS` rows
    is transposed (one column per row, headed by the row's identifying values) when that fits;
    any other wide table is split into stacked tables of consecutive column groups, each filled
    up to :data:`PAGE_CHARS` with the identifying columns repeated in front. The identifying
    columns are the leading text columns of at most :data:`TEXT_CHARS` characters (at most
    :data:`MAX_ID_COLUMNS`, e.g. ``model`` and ``dimension``). ``PAGE_CHARS`` leaves a tenth of
    the 1,104 px text width spare for a 14 px table font whose digits are at most 9 px wide
    (DejaVu Sans, the widest common sans-serif). Text that no table holds (title, summary,
    notes, provenance) wraps anywhere rather than widen the page.
"""

from __future__ import annotations

import base64
import html
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

__all__ = ["html_page", "format_number", "format_interval", "MISSING", "FOOTNOTE"]

MISSING = "\u2013"  # en dash
FOOTNOTE = f"{MISSING} : not computed for this row (see notes)"
MINUS = "\u2212"
PAGE_CHARS = 110
TEXT_CHARS = 30
NARROW = frozenset(" .,:;[]()'|!ilI\u00b7")
CELL_PAD = 2
TRANSPOSE_MAX_ROWS = 3
MAX_ID_COLUMNS = 2
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

STYLE = """
body{margin:0;color:#1a1a1a;font:16px/1.45 "DejaVu Sans",system-ui,-apple-system,"Segoe UI",sans-serif}
main{box-sizing:border-box;max-width:72rem;margin:0 auto;padding:1rem 1.5rem 3rem;overflow-wrap:anywhere}
h1{font-size:1.6rem;margin:.5rem 0 1rem}
p.bottom-line{font-size:1.1rem;border-left:4px solid #2a6f2a;padding:.4rem .8rem;background:#f3f8f3}
p.warning{font-weight:bold;border-left:4px solid #b00;padding:.4rem .8rem;background:#fdf0f0}
h2{font-size:1.25rem;margin:2rem 0 .5rem;border-bottom:1px solid #ddd}
ul.summary{font-size:1.05rem}ul.summary li,ul.notes li{margin:.3em 0}
.table-scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:14px;margin:.6rem 0 1rem}
caption{caption-side:top;text-align:left;font-size:13px;color:#555;padding-bottom:.2em}
th,td{border:1px solid #ccc;padding:.25em .5em;vertical-align:top}
th{background:#f2f2f2;font-weight:600;text-align:left;overflow-wrap:break-word}
tbody th{background:#f8f8f8;font-weight:normal}
td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
td.text{overflow-wrap:anywhere}
tbody tr:nth-child(even) td{background:#fafafa}tr.group>*{border-top:2px solid #888}
p.caption{margin:.2rem 0}p.footnote{font-size:13px;color:#555;margin:.2rem 0}
figure{margin:1.5rem 0}img{max-width:100%;height:auto}figcaption{font-size:14px;color:#444}
dl{display:grid;grid-template-columns:fit-content(16em) minmax(0,1fr);gap:.2em 1em;margin:.4em 0}
dt{font-weight:600;overflow-wrap:anywhere}dd{margin:0;overflow-wrap:anywhere}
dd ul{margin:0;padding-left:1.2em}
"""


@dataclass
class _Column:
    """One displayed column: readable header, cell texts, and which cells are numbers."""

    header: str
    cells: list[str]
    numeric: list[bool]

    @property
    def chars(self) -> float:
        """Width budget in digit widths (see the module docstring)."""
        body = max((_width(c) if num else min(_width(c), TEXT_CHARS) for c, num in zip(self.cells, self.numeric)),
                   default=0)
        header_word = max((_width(w) for w in self.header.split()), default=0)
        return max(body, 1.1 * header_word) + CELL_PAD  # headers are bold


def _width(text: str) -> float:
    """Estimated width of `text` in digit widths: punctuation and spaces are half, a minus sign wider."""
    return sum(0.5 if ch in NARROW else 1.3 if ch == MINUS else 1.0 for ch in text)


def _is_missing(value) -> bool:
    return value is None or value is pd.NA or (isinstance(value, numbers.Real) and math.isnan(value))


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def format_number(value: numbers.Real | None, *, integer: bool = False) -> str:
    """A number as the page shows it: 4 significant digits, ``–`` for NaN/None, never ``-0``.

    ``integer=True`` writes a whole number without decimals. Negative numbers use the minus
    sign U+2212; exponents are short (``1.235e5``, ``1e\u22125``). The text is v rounded to
    4 significant digits, mantissa x 10^e with 1 <= |mantissa| < 10 when e < -4 or e >= 4
    (Python's ``#.4g``), else plain decimals.

    Reference: U+2212 MINUS SIGN of The Unicode Standard, version 15.0 (2022), Mathematical
    Operators block (the minus sign of ISO 80000-2:2019).

    >>> format_number(0.519412), format_number(0.517), format_number(-0.0), format_number(float("nan"))
    ('0.5194', '0.5170', '0', '–')
    >>> format_number(19.0, integer=True), format_number(123456.0), format_number(-2.5e-7)
    ('19', '1.235e5', '−2.500e−7')
    """
    if _is_missing(value):
        return MISSING
    v = float(value)
    if v == 0:
        return "0"
    if math.isinf(v):
        return "\u221e" if v > 0 else MINUS + "\u221e"
    if integer:
        text = f"{round(v):d}"
    else:
        mantissa, _, exponent = f"{v:#.4g}".partition("e")
        text = mantissa.rstrip(".") + (f"e{int(exponent)}" if exponent else "")
    return text.replace("-", MINUS)


def format_interval(estimate: numbers.Real | None, lo: numbers.Real | None, hi: numbers.Real | None, *,
                    integer: bool = False) -> str:
    """``estimate [lo, hi]``; the estimate alone when a bound is missing, ``–`` without it.

    Each number as :func:`format_number` writes it. The report's intervals are bootstrap
    percentile intervals [lo, hi] (Efron and Tibshirani (1993), *An Introduction to the
    Bootstrap*, ch. 13).

    >>> format_interval(0.519412, 0.517, 0.5218)
    '0.5194 [0.5170, 0.5218]'
    >>> format_interval(-2.0, float("nan"), 1.0), format_interval(None, 0.0, 1.0)
    ('−2.000', '–')
    >>> format_interval(19.0, 17.0, 21.0, integer=True)
    '19 [17, 21]'
    """
    if _is_missing(estimate):
        return MISSING
    text = format_number(estimate, integer=integer)
    if _is_missing(lo) or _is_missing(hi):
        return text
    return f"{text} [{format_number(lo, integer=integer)}, {format_number(hi, integer=integer)}]"


def _whole(values) -> bool:
    """Are all present values whole numbers (then they are written as integers)?"""
    present = [float(v) for v in values if not _is_missing(v)]
    return bool(present) and all(v.is_integer() and abs(v) < 1e15 for v in present)


def _columns(table: pd.DataFrame) -> list[_Column]:
    """The displayed columns of a table, ``X_lo``/``X_hi`` merged into ``X``."""
    names = [str(c) for c in table.columns]
    series = {str(c): list(table[c]) for c in table.columns}
    numeric = {n: all(_is_missing(v) or _is_number(v) for v in vals) for n, vals in series.items()}
    merged = {n for n in names if numeric[n] and f"{n}_lo" in series and f"{n}_hi" in series
              and numeric[f"{n}_lo"] and numeric[f"{n}_hi"]}
    consumed = {f"{n}_{side}" for n in merged for side in ("lo", "hi")}
    out = []
    for name in names:
        if name in consumed:
            continue
        header = name.replace("_", " ")
        values = series[name]
        if name in merged:
            lo, hi = series[f"{name}_lo"], series[f"{name}_hi"]
            integer = _whole(values + lo + hi)
            cells = [format_interval(v, a, b, integer=integer) for v, a, b in zip(values, lo, hi)]
            out.append(_Column(f"{header} [lo, hi]", cells, [True] * len(cells)))
        elif numeric[name]:
            integer = _whole(values)
            out.append(_Column(header, [format_number(v, integer=integer) for v in values], [True] * len(values)))
        else:
            out.append(_Column(header, [MISSING if _is_missing(v) else str(v) for v in values], [False] * len(values)))
    return out


def _id_count(columns: list[_Column]) -> int:
    """How many leading columns identify a row: short text columns, at most MAX_ID_COLUMNS."""
    n = 0
    while n < min(MAX_ID_COLUMNS, len(columns) - 1):
        col = columns[n]
        if any(col.numeric) or max((len(c) for c in col.cells), default=0) > TEXT_CHARS:
            break
        n += 1
    return n


def _column_groups(columns: list[_Column], n_id: int) -> list[list[_Column]]:
    """Consecutive groups of the non-identifying columns, each fitting PAGE_CHARS with the ids."""
    room = PAGE_CHARS - sum(c.chars for c in columns[:n_id])
    groups: list[list[_Column]] = [[]]
    for col in columns[n_id:]:
        if groups[-1] and sum(c.chars for c in groups[-1]) + col.chars > room:
            groups.append([])
        groups[-1].append(col)
    return groups


def _transposed(columns: list[_Column], n_id: int, n_rows: int) -> list[_Column]:
    """The table turned: a first column of headers, then one column per original row."""
    ids, rest = columns[:n_id], columns[n_id:]
    labels = _Column("", [c.header for c in rest], [False] * len(rest))
    per_row = []
    for i in range(n_rows):
        head = " \u00b7 ".join(c.cells[i] for c in ids) if ids else f"row {i + 1}"
        per_row.append(_Column(head, [c.cells[i] for c in rest], [c.numeric[i] for c in rest]))
    return [labels, *per_row]


def _cell(text: str, numeric: bool) -> str:
    return f'<td class="{"num" if numeric else "text"}">{html.escape(text)}</td>'


def _table_html(columns: list[_Column], n_id: int, caption: str = "") -> str:
    """One <table>, the first ``n_id`` columns as row headers; a rule above each row that starts
    a new value of the first of them when its values run in groups (model by model)."""
    head = "".join(f'<th scope="col">{html.escape(c.header)}</th>' for c in columns)
    first = columns[0].cells if n_id else []
    grouped = any(a == b for a, b in zip(first, first[1:]))
    rows = []
    for i in range(len(columns[0].cells)):
        cells = []
        for j, col in enumerate(columns):
            if j < n_id:
                cells.append(f'<th scope="row">{html.escape(col.cells[i])}</th>')
            else:
                cells.append(_cell(col.cells[i], col.numeric[i]))
        starts = grouped and i > 0 and first[i] != first[i - 1]
        row_class = ' class="group"' if starts else ""
        rows.append(f"<tr{row_class}>{''.join(cells)}</tr>")
    cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
    return (f'<div class="table-scroll"><table>{cap}<thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _section_html(heading: str, table: pd.DataFrame, caption: str) -> str:
    """A heading, the table laid out to fit the page (module docstring), caption and footnote."""
    columns = _columns(table)
    n_id = _id_count(columns)
    turned = _transposed(columns, n_id, len(table)) if len(table) <= TRANSPOSE_MAX_ROWS else []
    if sum(c.chars for c in columns) <= PAGE_CHARS:
        tables = [_table_html(columns, n_id)]
    elif turned and sum(c.chars for c in turned) <= PAGE_CHARS:
        tables = [_table_html(turned, 1)]
    else:
        groups = _column_groups(columns, n_id)
        tables = [_table_html(columns[:n_id] + g, n_id, f"part {k} of {len(groups)}" if len(groups) > 1 else "")
                  for k, g in enumerate(groups, 1)]
    parts = [f"<section><h2>{html.escape(heading)}</h2>", *tables]
    if caption:
        parts.append(f'<p class="caption">{html.escape(caption)}</p>')
    if any(cell == MISSING for c in columns for cell in c.cells):
        parts.append(f'<p class="footnote">{html.escape(FOOTNOTE)}</p>')
    parts.append("</section>")
    return "\n".join(parts)


def _value_html(value) -> str:
    """A provenance value: nested mappings as definition lists, lists as bulleted lists."""
    if isinstance(value, Mapping):
        return _definition_list(value)
    if isinstance(value, (list, tuple)):
        return "<ul>" + "".join(f"<li>{_value_html(v)}</li>" for v in value) + "</ul>"
    return html.escape(str(value))


def _definition_list(mapping: Mapping) -> str:
    items = "".join(f"<dt>{html.escape(str(k))}</dt><dd>{_value_html(v)}</dd>" for k, v in mapping.items())
    return f"<dl>{items}</dl>"


def _figure_html(caption: str, png: bytes) -> str:
    data = base64.b64encode(png).decode("ascii")
    text = html.escape(caption)
    return f'<figure><img alt="{text}" src="data:image/png;base64,{data}"><figcaption>{text}</figcaption></figure>'


def _strings(name: str, values) -> list[str]:
    """`values` as a list of strings, or a TypeError naming the argument."""
    if isinstance(values, str):
        raise TypeError(f"{name}: expected a list of strings, got a single string")
    values = list(values)
    for i, v in enumerate(values):
        if not isinstance(v, str):
            raise TypeError(f"{name}[{i}]: expected a string, got {type(v).__name__}")
    return values


def _check_sections(sections) -> list[tuple[str, pd.DataFrame, str]]:
    out = []
    for i, item in enumerate(sections):
        if not (isinstance(item, (tuple, list)) and len(item) == 3):
            raise TypeError(f"sections[{i}]: expected (heading, DataFrame, caption), got {item!r:.80}")
        heading, table, caption = item
        if not isinstance(heading, str) or not isinstance(caption, str):
            raise TypeError(f"sections[{i}]: heading and caption must be strings")
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"sections[{i}]: expected a pandas DataFrame, got {type(table).__name__}")
        if table.columns.empty:
            raise ValueError(f"sections[{i}] ({heading!r}): the table has no columns")
        if table.columns.has_duplicates:
            raise ValueError(f"sections[{i}] ({heading!r}): duplicate column names "
                             f"{sorted(map(str, table.columns[table.columns.duplicated()]))}")
        out.append((heading, table, caption))
    return out


def _check_figures(figures) -> list[tuple[str, bytes]]:
    out = []
    for i, item in enumerate(figures):
        if not (isinstance(item, (tuple, list)) and len(item) == 2):
            raise TypeError(f"figures[{i}]: expected (caption, PNG bytes), got {item!r:.80}")
        caption, png = item
        if not isinstance(caption, str):
            raise TypeError(f"figures[{i}]: the caption must be a string, got {type(caption).__name__}")
        if not isinstance(png, (bytes, bytearray)) or not bytes(png).startswith(PNG_SIGNATURE):
            raise ValueError(f"figures[{i}] ({caption!r}): expected the bytes of a PNG file")
        out.append((caption, bytes(png)))
    return out


def html_page(*, title: str, summary: Sequence[str], sections: Sequence[tuple[str, pd.DataFrame, str]],
              figures: Sequence[tuple[str, bytes]], provenance: Mapping[str, object], notes: Sequence[str] = (),
              bottom_line: Sequence[str] = (), glossary: Mapping[str, str] | None = None) -> str:
    """The report as one HTML document (a string), laid out to fit a 1,280 px window.

    In order: the title; the ``bottom_line`` paragraphs (a line starting "WARNING" set as a
    warning), with a link to the glossary when one is given; the ``summary`` sentences (the report's answers) as a bulleted list;
    each of ``sections`` (heading, table, caption) with its table laid out by the module's rule
    (one table, transposed, or stacked column groups with the identifying columns repeated);
    the ``figures`` (caption, PNG bytes) embedded as captioned images; the ``notes``; the
    ``glossary`` {term: explanation} (section ``id="glossary"``); and the
    ``provenance`` mapping as a definition list (nested mappings and lists kept readable). All
    text is escaped; numbers are formatted as :func:`format_number` says.

    Reference: the document is HTML5 (W3C Recommendation, 2014) with an inline style sheet; each
    figure is a ``data:`` URI (RFC 2397, 1998) of its PNG bytes (W3C PNG Specification, second
    edition, 2003), base64-encoded as RFC 4648 (2006), sec. 4, says.

    >>> import pandas as pd
    >>> table = pd.DataFrame({"model": ["flow", "mdn"], "crps": [0.51941, 0.5302],
    ...                       "crps_lo": [0.517, 0.5281], "crps_hi": [0.5218, 0.5323]})
    >>> page = html_page(title="Protocol report", summary=["flow has the lowest CRPS."],
    ...                  sections=[("Protocol", table, "Lower is better.")], figures=[],
    ...                  provenance={"posteval": "0.2.0", "inputs": [{"file": "flow.npy", "sha256": "ab12"}]})
    >>> "0.5194 [0.5170, 0.5218]" in page, "<h2>Provenance</h2>" in page
    (True, True)

    Raises TypeError or ValueError naming the offending argument (e.g. ``sections[1]``).
    """
    if not isinstance(title, str) or not title.strip():
        raise ValueError(f"title: expected a non-empty string, got {title!r:.80}")
    summary = _strings("summary", summary)
    notes = _strings("notes", notes)
    sections = _check_sections(sections)
    figures = _check_figures(figures)
    if not isinstance(provenance, Mapping):
        raise TypeError(f"provenance: expected a mapping, got {type(provenance).__name__}")
    opening = _strings("bottom_line", bottom_line)
    if glossary is not None and not isinstance(glossary, Mapping):
        raise TypeError(f"glossary: expected a mapping {{term: explanation}}, got {type(glossary).__name__}")
    body = [f"<h1>{html.escape(title)}</h1>"]
    for line in opening:
        cls = "warning" if line.startswith("WARNING") else "bottom-line"
        link = ' <a href="#glossary">Glossary</a>' if glossary and cls == "bottom-line" else ""
        body.append(f'<p class="{cls}">{html.escape(line)}{link}</p>')
    if summary:
        body.append('<ul class="summary">' + "".join(f"<li>{html.escape(s)}</li>" for s in summary) + "</ul>")
    body += [_section_html(*s) for s in sections]
    if figures:
        body.append("<section><h2>Figures</h2>\n" + "\n".join(_figure_html(*f) for f in figures) + "\n</section>")
    if notes:
        body.append('<section><h2>Notes</h2><ul class="notes">'
                    + "".join(f"<li>{html.escape(n)}</li>" for n in notes) + "</ul></section>")
    if glossary:
        body.append(f'<section id="glossary"><h2>Glossary</h2>{_definition_list(glossary)}</section>')
    body.append(f'<section class="provenance"><h2>Provenance</h2>{_definition_list(provenance)}</section>')
    main = "\n".join(body)
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head>\n"
            f"<body><main>\n{main}\n</main></body></html>\n")
