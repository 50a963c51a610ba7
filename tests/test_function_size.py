"""No function of the package is over 60 lines or takes over 10 parameters without saying why (issue 40).

A function's length is the lines of its body without the docstring (first statement to last);
its parameters are the named ones (positional, keyword-only; ``self``/``cls`` of a method and the
catch-alls ``*args``/``**kwargs`` not counted, as pylint counts them). A longer body is allowed when
the docstring says why in a sentence starting "Long because", more parameters when it starts
"Many parameters because" (for ``__init__``, the class docstring may say it).
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import posteval

MAX_LINES = 60
MAX_PARAMETERS = 10
LINES_REASON = "Long because"
PARAMETERS_REASON = "Many parameters because"
PACKAGE = Path(posteval.__file__).parent



def body_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the end of the last one."""
    body = fn.body[1:] if ast.get_docstring(fn, clean=False) is not None else fn.body
    return body[-1].end_lineno - body[0].lineno + 1 if body else 0


def parameter_count(fn: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> int:
    """Named parameters, without the ``self``/``cls`` of a method."""
    names = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    if in_class and names and names[0] in ("self", "cls"):
        names = names[1:]
    return len(names)


def functions(tree: ast.AST, prefix: str = "", cls: ast.ClassDef | None = None):
    """``(qualified name, function, its class or None)`` for every function, nested ones included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node, cls
            yield from functions(node, f"{prefix}{node.name}.", None)
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, f"{prefix}{node.name}.", node)
        else:
            yield from functions(node, prefix, cls)


def oversized(source: str, module: str) -> dict[str, str]:
    """``{"module::name": what is over}`` for the functions of `source` over a limit without a reason."""
    found = {}
    for name, fn, cls in functions(ast.parse(source)):
        docs = [ast.get_docstring(fn) or ""]
        if cls is not None and fn.name == "__init__":
            docs.append(ast.get_docstring(cls) or "")
        problems = []
        lines = body_lines(fn)
        if lines > MAX_LINES and not any(LINES_REASON in d for d in docs):
            problems.append(f"{lines} lines (> {MAX_LINES}; or say '{LINES_REASON} ...' in its docstring)")
        params = parameter_count(fn, cls is not None)
        if params > MAX_PARAMETERS and not any(PARAMETERS_REASON in d for d in docs):
            problems.append(f"{params} parameters (> {MAX_PARAMETERS}; or say '{PARAMETERS_REASON} ...' "
                            "in its docstring)")
        if problems:
            found[f"{module}::{name}"] = ", ".join(problems)
    return found


def package_sources() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


def test_no_function_is_too_long_or_takes_too_many_parameters_without_a_reason():
    found = {}
    for module, source in package_sources().items():
        found.update(oversized(source, module))
    unexplained = found
    assert not unexplained, "split these functions, or give the reason in their docstrings:\n" + "\n".join(
        f"  {k}: {v}" for k, v in sorted(unexplained.items()))


def _function(name: str, lines: int, docstring: str = "", params: str = "") -> str:
    body = "".join(f"    x{i} = {i}\n" for i in range(lines))
    doc = f'    """{docstring}"""\n' if docstring else ""
    return f"def {name}({params}):\n{doc}{body}"


def test_the_checker_flags_a_planted_long_function_and_takes_a_reason():
    source = _function("planted", 61, "A function of 61 lines.") + _function("sixty", 60)
    source += _function("explained", 61, "Long because it is one computation.")
    assert set(oversized(source, "planted.py")) == {"planted.py::planted"}
    assert "61 lines" in oversized(source, "planted.py")["planted.py::planted"]


def test_the_checker_counts_parameters_without_self_and_catch_alls():
    eleven = ", ".join(f"a{i}" for i in range(11))
    source = textwrap.dedent(f"""
        def eleven({eleven}):
            pass

        def ten_and_catch_alls({eleven[:-5]}, *args, **kwargs):
            '''Ten named parameters.'''

        def explained({eleven}):
            '''Many parameters because they mirror a paper.'''

        class Model:
            '''A model.

            Many parameters because they are the architecture's hyper-parameters.
            '''

            def __init__(self, {eleven}):
                pass

            def method(self, {eleven[:-5]}):
                pass

            def other(self, {eleven}):
                '''Reasons of the class do not cover other methods.'''
    """)
    assert set(oversized(source, "m.py")) == {"m.py::eleven", "m.py::Model.other"}
    assert "11 parameters" in oversized(source, "m.py")["m.py::eleven"]
