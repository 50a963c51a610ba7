"""The tests mirror the library (issue 40, D7): every module of lib/posteval with logic (a function or class) has
its test module at the mirrored path, and every test module in the mirrored folders names a library module.

The mirror: ``posteval/<pkg>/<module>.py`` -> ``tests/<pkg>/test_<module>.py``; a package's own
``posteval/<pkg>/__init__.py`` -> ``tests/<pkg>/test_<pkg>.py``; a top-level ``posteval/<module>.py`` ->
``tests/test_<module>.py``. The test modules at the top of tests/ that mirror no module check the whole book
(the runner, pages, HTML, JupyterLab, chapters, package, layers, names, inputs of every metric, ...): the
orphan check covers the folders only.
"""

import ast
from pathlib import Path

import posteval

PACKAGE = Path(posteval.__file__).resolve().parent
TESTS = Path(__file__).resolve().parent

#: modules with logic and no test module of their own, each with where it is tested or why it needs none
EXCEPTIONS = {
    "_deprecation": "tested through tests/test_names.py (deprecated aliases warn at the caller's line)",
    "_extras": "two helpers that name a missing optional dependency (install_hint, require); its place in the "
               "layers is checked by tests/test_layers.py, no behaviour of its own to test",
    "lab": "the JupyterLab helpers, tested through tests/test_jupyterlab.py, test_chapters.py, test_html.py",
    "parameters": "the chapters' parameter rules, tested through tests/test_book.py (check_parameters)",
    "paths": "the book's paths, tested through tests/test_book.py and tests/test_make_book.py",
    "runtime": "seeding, portable kernels, atomic writes: used by the book runner (tests/test_book.py); its "
               "place in the layers and the package: tests/test_layers.py, tests/test_package.py",
    "metrics._validation": "the argument checks, tested through every metric's bad-input tests "
                           "(tests/metrics/test_metrics.py, tests/test_input_probe.py, tests/test_input_policy.py)",
    "metrics.array_files": "the CLI's input files, tested through tests/metrics/test_cli.py (NaN and shape "
                           "problems name the file and key) and tests/test_input_policy.py",
    "metrics.ranking": "leads and calibration verdicts of the report, tested through tests/metrics/test_cli.py "
                        "(the payload's leads, Holm p-values)",
    "models._checks": "the models' argument checks, tested through tests/models/test_models.py and "
                      "tests/test_model_contract.py",
    "models.inference": "predict_points, draw_samples: tested through tests/models/test_event_models.py and "
                        "tests/test_input_probe.py",
    "physics.cache_files": "tested through tests/physics/test_ttbar.py (leftovers of dead runs, two processes)",
    "physics.config": "tested through tests/physics/test_ttbar.py (validation, round trip)",
    "physics.fourvectors": "four-vector arithmetic, tested through tests/physics/test_detector.py, test_chunks.py, "
                           "test_ttbar.py, test_neutrino_weighting.py",
    "physics.generator": "Pythia, tested through tests/physics/test_chunks.py and tests/physics/test_ttbar.py",
    "physics.truth": "the truth record, tested through tests/physics/test_ttbar.py and tests/physics/test_chunks.py",
    "rubric.evaluate": "completion_metrics, tested through tests/rubric/test_experiment.py and "
                       "tests/rubric/test_sweep.py (run_condition evaluates every run)",
    "rubric.policy": "the policy model, tested through tests/rubric/test_experiment.py and tests/rubric/test_sweep.py "
                     "(build_setup, run_condition)",
    "rubric.task": "the toy world every rubric test builds on (make_world, sample_pairs), tested through "
                   "tests/rubric/test_grammar.py, test_reward.py, test_judges.py",
}


def has_logic(path: Path) -> bool:
    """True when the module defines a function or a class at its top level."""
    tree = ast.parse(path.read_text(), filename=str(path))
    return any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for node in tree.body)


def library_modules(package: Path = PACKAGE) -> dict[str, bool]:
    """Every module of the package, dotted below it ("metrics.scores", "metrics" for metrics/__init__.py,
    "book"), with whether it has logic."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts or parts[-1] == "__main__":
            continue
        out[".".join(parts)] = has_logic(path)
    return out


def mirror(module: str, packages: set[str]) -> str:
    """The test module's path below tests/ for a dotted module name."""
    parts = module.split(".")
    if module in packages:  # the package's own __init__.py
        return "/".join(parts + [f"test_{parts[-1]}.py"])
    return "/".join(parts[:-1] + [f"test_{parts[-1]}.py"])


def packages_of(package: Path = PACKAGE) -> set[str]:
    return {".".join(p.parent.relative_to(package).parts) for p in package.rglob("__init__.py") if p.parent != package}


def missing_tests(modules: dict[str, bool], packages: set[str], test_files: set[str],
                  exceptions: dict[str, str]) -> list[str]:
    """The modules with logic whose mirrored test module is missing, less the exceptions."""
    return [m for m, logic in modules.items()
            if logic and m not in exceptions and mirror(m, packages) not in test_files]


def orphans(modules: dict[str, bool], packages: set[str], test_files: set[str]) -> list[str]:
    """The test modules in the mirrored folders (tests/<pkg>/test_*.py) that name no library module."""
    mirrored = {mirror(m, packages) for m in modules}
    return sorted(f for f in test_files if "/" in f and f not in mirrored)


def suite_files(tests: Path = TESTS) -> set[str]:
    return {p.relative_to(tests).as_posix() for p in tests.rglob("test_*.py")
            if "fixtures" not in p.relative_to(tests).parts}


def test_every_module_with_logic_has_its_test_module():
    modules = library_modules()
    missing = missing_tests(modules, packages_of(), suite_files(), EXCEPTIONS)
    assert not missing, f"no tests/<pkg>/test_<module>.py for {missing} (or add it to EXCEPTIONS, with its reason)"


def test_every_mirrored_test_module_names_a_library_module():
    found = orphans(library_modules(), packages_of(), suite_files())
    assert not found, f"{found} mirror no module of lib/posteval: rename them after the module they test"


def test_the_exceptions_are_modules_with_logic_and_no_test_module():
    modules, packages, files = library_modules(), packages_of(), suite_files()
    stale = [m for m in EXCEPTIONS if not modules.get(m)]
    assert not stale, f"EXCEPTIONS name {stale}: no such module, or it has no logic"
    tested = [m for m in EXCEPTIONS if mirror(m, packages) in files]
    assert not tested, f"EXCEPTIONS name {tested}, which now have their test module: remove them"
    assert all(reason.strip() for reason in EXCEPTIONS.values())


def test_the_mirror_reports_a_module_without_tests_and_a_test_without_module():
    """Planted: a fake library where one module lacks tests and one test module names nothing."""
    modules = {"metrics.scores": True, "metrics.new_metric": True, "metrics": False, "metrics.style": False,
               "book": True, "plotting": True}
    packages = {"metrics", "plotting"}
    files = {"metrics/test_scores.py", "test_book.py", "plotting/test_plotting.py", "metrics/test_gone.py",
             "test_html.py"}
    assert mirror("metrics.scores", packages) == "metrics/test_scores.py"
    assert mirror("plotting", packages) == "plotting/test_plotting.py"
    assert mirror("book", packages) == "test_book.py"
    assert missing_tests(modules, packages, files, {}) == ["metrics.new_metric"]
    assert missing_tests(modules, packages, files, {"metrics.new_metric": "tested through x"}) == []
    assert orphans(modules, packages, files) == ["metrics/test_gone.py"]  # top-level book tests are not orphans


def test_has_logic_tells_a_module_of_functions_from_one_of_names(tmp_path):
    (tmp_path / "logic.py").write_text("X = 1\n\n\ndef f():\n    return X\n")
    (tmp_path / "names.py").write_text('"""Re-exports."""\nfrom math import pi\n\n__all__ = ["pi"]\n')
    assert has_logic(tmp_path / "logic.py") and not has_logic(tmp_path / "names.py")
