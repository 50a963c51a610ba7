"""Every docstring example of the package runs, module by module (as ``pytest --doctest-modules`` would;
pytest cannot import ``lib/posteval/*.py`` under the package's own name, because ``lib/__init__.py``
makes ``import lib`` an error, so this test imports each module as ``posteval.<name>``)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import posteval

#: modules that run a program when imported, and deprecated aliases (they warn when imported)
NOT_IMPORTED = {"posteval.metrics.__main__", "posteval.models.baselines"}
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def package_modules() -> list[str]:
    names = ["posteval"] + [m.name for m in pkgutil.walk_packages(posteval.__path__, "posteval.")]
    return sorted(n for n in names if n not in NOT_IMPORTED)


@pytest.mark.parametrize("name", package_modules())
def test_docstring_examples_run(name, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an example that writes a file writes it here
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=FLAGS, verbose=False, report=True)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed (see the output above)"


def test_a_deprecated_alias_warns_and_still_works():
    import subprocess
    import sys

    script = "from posteval.models.baselines import prior_samples; from posteval.data.prior import prior_samples as p; assert prior_samples is p"
    ok = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    strict = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", script], capture_output=True, text=True)
    assert strict.returncode != 0 and "posteval.data.prior" in strict.stderr


#: modules whose public functions all carry their formula, a reference and a runnable example (issue 40: every
#: module of posteval.metrics and the model contract's modules)
DOCUMENTED = sorted(n for n in package_modules()
                    if n.startswith("posteval.metrics.") and n.rsplit(".", 1)[1] not in ("_validation",)) + [
    f"posteval.models.{m}" for m in ("cfm", "flow", "inference", "mdn", "mlp", "training")]  # the model contract
REFERENCE = __import__("re").compile(r"\b(19|20)\d\d\b")  # a cited paper or book gives its year


@pytest.mark.parametrize("name", DOCUMENTED)
def test_public_functions_have_a_reference_and_an_example(name):
    import inspect

    module = importlib.import_module(name)
    lacking = []
    for fname in getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]:
        f = getattr(module, fname)
        if not inspect.isfunction(f) or f.__module__ != name or hasattr(f, "__deprecated_alias_of__"):
            continue  # a deprecated alias (posteval._deprecation) is documented by the function it names
        doc = inspect.getdoc(f) or ""
        if ">>>" not in doc or not REFERENCE.search(doc):
            lacking.append(fname + ("" if ">>>" in doc else " (no example)") + ("" if REFERENCE.search(doc) else " (no reference)"))
    assert not lacking, f"{name}: {lacking}"


def _public_functions(name: str):
    import inspect

    module = importlib.import_module(name)
    for fname in getattr(module, "__all__", None) or [n for n in vars(module) if not n.startswith("_")]:
        f = getattr(module, fname)
        if inspect.isfunction(f) and f.__module__ == name and not hasattr(f, "__deprecated_alias_of__"):
            yield fname, f


@pytest.mark.parametrize("name", DOCUMENTED)
def test_public_functions_are_fully_typed(name):
    import inspect
    import typing

    untyped = []
    for fname, f in _public_functions(name):
        sig = inspect.signature(f)
        missing = [p.name for p in sig.parameters.values() if p.annotation is inspect.Parameter.empty]
        if sig.return_annotation is inspect.Signature.empty:
            missing.append("return")
        try:
            typing.get_type_hints(f)
        except Exception as err:  # an annotation that does not resolve is no type
            missing.append(f"unresolvable: {err}")
        if missing:
            untyped.append(f"{fname} {missing}")
    assert not untyped, f"{name}: {untyped}"
