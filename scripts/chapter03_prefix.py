"""Chapter 3's code cells up to its model definitions (``def train_kinds(``), then one cell more, as
``OUT_DIR/in.ipynb`` for papermill (ci sizes): the notebook that scripts/designs03.sh and
scripts/physics_loss03.sh run, each with its own last cell. Run from the repository root.

Usage: python scripts/chapter03_prefix.py OUT_DIR CELL_FILE   (the last cell: CELL_FILE's text)
"""

import sys

import jupytext
import nbformat


def write_notebook(out: str, cell_source: str) -> None:
    """Write ``{out}/in.ipynb``: chapter 3's code cells through the one defining ``train_kinds``, then
    a code cell of `cell_source`."""
    nb = jupytext.read("chapters/03_top_quark.md")
    cells = []
    for c in nb.cells:
        if c.cell_type != "code":
            continue
        cells.append(c)
        if "def train_kinds(" in c.source:
            break
    cells.append(nbformat.v4.new_code_cell(cell_source))
    nb.cells = cells
    nbformat.write(nb, f"{out}/in.ipynb")


if __name__ == "__main__":
    out, cell_file = sys.argv[1:]
    with open(cell_file) as f:
        write_notebook(out, f.read())
