"""No function of the package is over 60 lines or takes over 10 parameters without saying why (issue 40).

A function's length is its lines from the ``def`` to the end of its last statement (decorators not
counted) less the lines of its docstring: the issue's rule is about code, so a long docstring (its
math, parameters, references and examples) does not make a function long. Its parameters are the
positional-only, positional and keyword-only ones, ``*args`` and ``**kwargs`` one each, less the
``self``/``cls`` of a method. Either limit may be passed when the docstring says why in a sentence
starting "Why this size:" (for ``__init__``, the class docstring may say it, as numpydoc documents
``__init__``'s parameters there). The checker is here, not in the library.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import posteval

MAX_LINES = 60
MAX_PARAMETERS = 10
REASON = "Why this size:"
PACKAGE = Path(posteval.__file__).parent



def code_lines(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the ``def`` to the end of the function, less those of its docstring."""
    lines = fn.end_lineno - fn.lineno + 1
    if ast.get_docstring(fn, clean=False) is not None:
        lines -= fn.body[0].end_lineno - fn.body[0].lineno + 1
    return lines


def parameter_count(fn: ast.FunctionDef | ast.AsyncFunctionDef, in_class: bool) -> int:
    """Parameters, ``*args``/``**kwargs`` one each, without the ``self``/``cls`` of a method."""
    positional = fn.args.posonlyargs + fn.args.args
    count = len(positional) + len(fn.args.kwonlyargs) + (fn.args.vararg is not None) + (fn.args.kwarg is not None)
    if in_class and positional and positional[0].arg in ("self", "cls"):
        count -= 1
    return count


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
        if any(REASON in d for d in docs):
            continue
        problems = []
        lines = code_lines(fn)
        if lines > MAX_LINES:
            problems.append(f"{lines} lines (> {MAX_LINES})")
        params = parameter_count(fn, cls is not None)
        if params > MAX_PARAMETERS:
            problems.append(f"{params} parameters (> {MAX_PARAMETERS})")
        if problems:
            found[f"{module}::{name}"] = ", ".join(problems)
    return found


def package_sources() -> dict[str, str]:
    return {p.relative_to(PACKAGE).as_posix(): p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.py"))}


def test_no_function_is_too_long_or_takes_too_many_parameters_without_a_reason():
    found = {}
    for module, source in package_sources().items():
        found.update(oversized(source, module))
    assert not found, f"split these functions, or say '{REASON} ...' in their docstrings:\n" + "\n".join(
        f"  {k}: {v}" for k, v in sorted(found.items()))


def _function(name: str, lines: int, docstring: str = "", params: str = "") -> str:
    """A function of `lines` lines of code (the ``def`` and ``lines - 1`` statements), its docstring apart."""
    body = "".join(f"    x{i} = {i}\n" for i in range(lines - 1))
    doc = f'    """{docstring}"""\n' if docstring else ""
    return f"def {name}({params}):\n{doc}{body}"


def _names(k: int, prefix: str = "a") -> str:
    return ", ".join(f"{prefix}{i}" for i in range(k))


ELEVEN, TEN = _names(11), _names(10)


def test_the_checker_reports_a_planted_long_function_and_a_planted_long_signature():
    source = _function("long", 61, "A function of 61 lines.") + _function("wide", 2, "Eleven.", ELEVEN)
    source += _function("sixty", 60, "Sixty lines of code\n" + "\n" * 30 + "and a long docstring.")
    source += _function("ten", 2, "", TEN)
    found = oversized(source, "planted.py")
    assert set(found) == {"planted.py::long", "planted.py::wide"}
    assert found["planted.py::long"] == "61 lines (> 60)"
    assert found["planted.py::wide"] == "11 parameters (> 10)"


def test_the_checker_takes_the_reason_in_the_docstring():
    reason = "One computation. Why this size: it mirrors a paper's algorithm."
    source = _function("long", 61, reason) + _function("wide", 2, reason, ELEVEN)
    assert oversized(source, "planted.py") == {}
    assert set(oversized(source.replace("Why this size:", "Because"), "planted.py")) == {
        "planted.py::long", "planted.py::wide"}


def test_the_checker_counts_catch_alls_and_not_self():
    source = textwrap.dedent(f"""
        def eight_and_catch_alls({_names(8)}, *args, **kwargs):
            pass

        def nine_and_catch_alls({_names(9)}, *args, **kwargs):
            pass

        def ten_and_kwargs({TEN}, **kwargs):
            pass

        def keyword_only(a0, /, a1, *, {_names(9, "b")}):
            pass

        class Model:
            '''A model.

            Why this size: they are the architecture's hyper-parameters.
            '''

            def __init__(self, {ELEVEN}):
                def nested({ELEVEN}):
                    pass

            def method(self, {TEN}):
                pass

            @classmethod
            def build(cls, {TEN}):
                pass

            def other(self, {ELEVEN}):
                '''Reasons of the class do not cover other methods.'''
    """)
    assert set(oversized(source, "m.py")) == {"m.py::nine_and_catch_alls", "m.py::ten_and_kwargs", "m.py::keyword_only",
                                              "m.py::Model.__init__.nested", "m.py::Model.other"}
    assert oversized(source, "m.py")["m.py::keyword_only"] == "11 parameters (> 10)"
