"""Bibliography labels in the form the text cites: "Gneiting and Raftery, 2007", "Baattrup et al., 2026".

sphinxcontrib-bibtex's `author_year` reference style cites in the text by author and year, but
the bibliography labels come from the pybtex formatting style (`alpha` gives "[BBL+26]"). This
Sphinx extension registers the pybtex formatting style `author_year_labels` (the `plain` style
with these labels); `_config.yml` selects it with `bibtex_default_style`.
"""

from collections import Counter
from string import ascii_lowercase

from pybtex.plugin import register_plugin
from pybtex.richtext import Text
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle

STYLE_NAME = "author_year_labels"


def _last_name(person) -> str:
    """A person's last name as plain text (LaTeX accents and protecting braces resolved)."""
    return Text.from_latex(" ".join(person.prelast_names + person.last_names)).render_as("text")


def author_label(entry) -> str:
    """"Bishop", "Gneiting and Raftery" or "Baattrup et al.": the authors as the text cites them."""
    persons = entry.persons.get("author") or entry.persons.get("editor")
    if not persons:
        raise ValueError(f"bibliography entry {entry.key!r} has no author or editor")
    names = [_last_name(p) for p in persons]
    if len(names) == 1:
        return names[0]
    if len(names) == 2 and names[1] != "others":
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


def year_label(entry) -> str:
    """The entry's year; a ValueError names the entry when it has none."""
    year = entry.fields.get("year")
    if not year:
        raise ValueError(f"bibliography entry {entry.key!r} has no year")
    return str(year)


class AuthorYearLabelStyle(BaseLabelStyle):
    """Labels "Authors, year", with a, b, ... appended where two entries would share one."""

    def format_labels(self, sorted_entries):
        entries = list(sorted_entries)
        base = [f"{author_label(e)}, {year_label(e)}" for e in entries]
        counts, seen = Counter(base), Counter()
        for label in base:
            if counts[label] == 1:
                yield label
            else:
                yield label + ascii_lowercase[seen[label]]
                seen[label] += 1


class AuthorYearStyle(PlainStyle):
    """pybtex's `plain` formatting (sorted by author, year, title) with author-year labels."""

    default_label_style = AuthorYearLabelStyle


def setup(app):
    """Sphinx entry point: make the style known to pybtex under `STYLE_NAME`."""
    register_plugin("pybtex.style.formatting", STYLE_NAME, AuthorYearStyle, force=True)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
