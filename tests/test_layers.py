"""The package's layers point one way (README, "Layout"), read from the source with ``ast``.

* **base**: where the book lies, seeds and atomic writes, number format, progress bars, parameter ranges;
* **domain**: metrics, data, models, physics, rubric, plotting, parallel, examples;
* **book**: the runner and ``record()`` (``book``), the claims a chapter records (``claims``), the
  page split (``pages``), the JupyterLab view (``lab``), the kept full-scale records (``full_scale``):
  imported by the chapters and the tests only.

A module imports from its own layer or below, never above; the import graph has no cycle; an import
inside a function only gates an optional extra (a package outside the base install), never a module
of the base install or of the standard library, and never a posteval module of the importer's own part.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "lib" / "posteval"

BASE = {"posteval", "posteval._deprecation", "posteval._extras", "posteval.paths", "posteval.runtime", "posteval.numformat",
        "posteval.progress", "posteval.parameters"}
BOOK = {"posteval.book", "posteval.claims", "posteval.pages", "posteval.lab", "posteval.full_scale"}
#: the import names of the base install's dependencies (pyproject.toml, [project] dependencies)
BASE_DEPENDENCIES = {"numpy", "scipy", "pandas", "matplotlib", "seaborn", "tqdm", "yaml"}
#: parts of the package behind an extra: a function of another part may import them lazily
GATED_PARTS = {"posteval.physics", "posteval.models", "posteval.rubric", "posteval.data"}
#: (module, import) pairs deferred into functions for a reason other than an extra
DEFERRED = {("posteval.runtime", "numpy"): "numpy reads its kernel setting when it is imported: posteval.runtime "
                                          "puts the setting into the environment first (portable_environment)",
            ("posteval.runtime", "numpy._core._multiarray_umath"): "the same"}


def layer(module: str) -> int:
    """0 base, 1 domain, 2 book."""
    return 0 if module in BASE else 2 if module in BOOK else 1


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """``posteval.metrics.scores`` for ``lib/posteval/metrics/scores.py``.

    >>> module_name(PACKAGE / "metrics" / "__init__.py"), module_name(PACKAGE / "book.py")
    ('posteval.metrics', 'posteval.book')
    """
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    return {module_name(p, package): p for p in sorted(package.rglob("*.py"))}


def imports(path: Path, known: set[str], name: str) -> list[tuple[str, bool, int]]:
    """(imported module, inside a function?, line) for every import of ``path``; posteval targets are
    resolved to the modules of ``known`` (``from . import pages`` is ``posteval.pages``), others are the
    top-level name (``from scipy import stats`` is ``scipy``)."""
    tree = ast.parse(path.read_text())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    inside = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
              for n in ast.walk(f) if n is not f}
    found = []
    for node in ast.walk(tree):
        local = id(node) in inside
        if isinstance(node, ast.Import):
            for a in node.names:
                target = a.name if a.name.startswith("posteval") else a.name.split(".")[0]
                while target.startswith("posteval") and target not in known:
                    target = target.rpartition(".")[0]
                found.append((target, local, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("posteval"):
                found.append((target.split(".")[0], local, node.lineno))
                continue
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in known]
            for t in subs or [target]:
                while t not in known:
                    t = t.rpartition(".")[0]
                found.append((t, local, node.lineno))
    return found


def graph(package: Path = PACKAGE) -> dict[str, list[tuple[str, bool, int]]]:
    mods = modules(package)
    return {m: [i for i in imports(p, set(mods), m) if i[0] != m] for m, p in mods.items()}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm).

    >>> cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}})
    [['a', 'b']]
    >>> cycles({"a": {"b"}, "b": set()})
    []
    """
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def part(module: str) -> str:
    return ".".join(module.split(".")[:2])


def layer_problems(g) -> list[str]:
    return [f"{m}:{line} imports {t} (layer {layer(t)} above its own {layer(m)})"
            for m, found in g.items() for t, _, line in found
            if t.startswith("posteval") and layer(t) > layer(m)]


def local_import_problems(g) -> list[str]:
    out = []
    for m, found in g.items():
        for t, local, line in found:
            if not local or (m, t) in DEFERRED:
                continue
            if t.startswith("posteval"):
                if part(t) not in GATED_PARTS or part(t) == part(m):
                    out.append(f"{m}:{line} imports {t} inside a function (not an optional extra)")
            elif t in BASE_DEPENDENCIES or t in sys.stdlib_module_names:
                out.append(f"{m}:{line} imports {t} inside a function (in the base install)")
    return out


def test_the_import_graph_has_no_cycle():
    g = graph()
    edges = {m: {t for t, _, _ in found if t.startswith("posteval")} for m, found in g.items()}
    assert cycles(edges) == []


def test_no_module_imports_a_layer_above_its_own():
    assert layer_problems(graph()) == []


def test_imports_inside_functions_only_gate_an_extra():
    assert local_import_problems(graph()) == []


def test_the_rules_see_a_planted_cycle_and_a_planted_upward_import(tmp_path):
    pkg = tmp_path / "posteval"
    (pkg / "metrics").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "book.py").write_text("from . import pages\n")
    (pkg / "pages.py").write_text("def f():\n    from .book import record\n")
    (pkg / "metrics" / "__init__.py").write_text("")
    (pkg / "metrics" / "scores.py").write_text("import numpy\nfrom ..book import record\n\ndef g():\n    import scipy\n")
    g = graph(pkg)
    edges = {m: {t for t, _, _ in found if t.startswith("posteval")} for m, found in g.items()}
    assert cycles(edges) == [["posteval.book", "posteval.pages"]]
    assert layer_problems(g) == ["posteval.metrics.scores:2 imports posteval.book (layer 2 above its own 1)"]
    assert local_import_problems(g) == [
        "posteval.metrics.scores:5 imports scipy inside a function (in the base install)",
        "posteval.pages:2 imports posteval.book inside a function (not an optional extra)"]


@pytest.mark.parametrize("name", sorted(BASE | BOOK))
def test_every_named_module_exists(name):
    assert name in modules(), f"{name}: listed in a layer of tests/test_layers.py but not in the package"
