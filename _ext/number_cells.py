"""Table cells that hold a number, an interval ("32.8 [31.9, 33.7]") or "–" get the class ``num``.

``_static/custom.css`` keeps such a cell on one line (an interval never wraps onto three) and
aligns it by its digits; cells of words wrap. Applied to every table of a page's body, including
the HTML tables that notebook cells output (pandas, Styler), after the page is rendered.
"""

import re

# digits with the book's number format around them (posteval.numformat): signs, separators,
# "× 10⁻⁵", percent, interval brackets; or the missing-value dash alone
NUMBER = re.compile(r"[\s+\-−–±]*(?:\d[\d\s.,×⁰¹²³⁴⁵⁶⁷⁸⁹⁻%\[\]()+\-−–±]*|–)")
CELL = re.compile(r"<td(?P<attrs>(?:\s[^>]*)?)>(?P<text>[^<]{1,60})</td>")
CLASS = re.compile(r'\bclass="(?P<names>[^"]*)"')
ENTITIES = {"&nbsp;": " ", "&#8201;": " ", "&#160;": " ", "&minus;": "−", "&ndash;": "–"}


def is_number(text: str) -> bool:
    for entity, char in ENTITIES.items():
        text = text.replace(entity, char)
    return bool(text.strip()) and NUMBER.fullmatch(text.strip()) is not None


def mark(body: str) -> str:
    """``body`` with ``class="num"`` on every ``<td>`` whose whole text is a number."""
    def one(match):
        if not is_number(match["text"]):
            return match.group(0)
        attrs = match["attrs"]
        if CLASS.search(attrs):
            attrs = CLASS.sub(lambda c: f'class="{c["names"]} num"', attrs, count=1)
        else:
            attrs += ' class="num"'
        return f"<td{attrs}>{match['text']}</td>"

    return CELL.sub(one, body)


def on_page(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = mark(context["body"])


def setup(app):
    app.connect("html-page-context", on_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
