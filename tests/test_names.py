"""One naming scheme (issue 40, D3): the names before 0.3.0 still work for one release, warn naming the new
name, fail under ``-W error::DeprecationWarning``, are not in ``__all__``, and nothing of the book uses them.

The scheme itself is written once, in the "Names" section of :mod:`posteval.metrics`; the deprecation
machinery in :mod:`posteval._deprecation`.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import posteval
from posteval import metrics, plotting
from posteval.metrics import cli, ranking, resolution, scores

ROOT = Path(__file__).resolve().parents[1]
RNG = np.random.default_rng(0)
S1, T1 = RNG.normal(size=(40, 5)), RNG.normal(size=40)
S2, T2 = RNG.normal(size=(40, 5, 2)), RNG.normal(size=(40, 2))

#: old function name -> new, where the old one lives (module and ``posteval.metrics`` when it was there)
RENAMED_FUNCTIONS = [
    (scores, "crps", "crps_ensemble", (S1, T1)),
    (scores, "energy_score", "energy_score_ensemble", (S2, T2)),
    (scores, "joint_energy_score", "energy_score_reconstruction", (S2, T2)),
    (scores, "per_event_scores", "scores_reconstruction", (S2, T2)),
    (metrics, "crps", "crps_ensemble", (S1, T1)),
    (metrics, "energy_score", "energy_score_ensemble", (S2, T2)),
    (metrics, "joint_energy_score", "energy_score_reconstruction", (S2, T2)),
    (metrics, "per_event_scores", "scores_reconstruction", (S2, T2)),
]


def _equal(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            np.testing.assert_array_equal(a[k], b[k])
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(("module", "old", "new", "args"), RENAMED_FUNCTIONS,
                         ids=[f"{m.__name__}.{o}" for m, o, _, _ in RENAMED_FUNCTIONS])
def test_an_old_function_name_works_and_warns_naming_the_new_one(module, old, new, args):
    with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated .* use {new}") as caught:
        got = getattr(module, old)(*args)
    assert caught[0].filename == __file__  # the warning points at the caller's line
    _equal(got, getattr(module, new)(*args))
    assert getattr(module, old).__deprecated_alias_of__ is getattr(scores, new)


def test_ranking_calibration_is_calibration_verdicts():
    table = metrics.protocol_report({"a": S1}, T1, level=0.9, n_resamples=50)
    samplers = {"a": metrics.event_values(S1, T1)}
    levels = np.sort(metrics.DEFAULT_LEVELS)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        old = ranking.calibration(table, samplers, levels, ci=0.9, n_boot=50)
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    assert any(s.startswith("calibration is deprecated") and s.endswith("use calibration_verdicts") for s in said)
    assert any("keyword n_boot" in s for s in said) and any("keyword ci" in s for s in said)
    new = ranking.calibration_verdicts(table, samplers, levels, level=0.9, n_resamples=50)
    for a, b in zip(old, new):
        assert a.equals(b)


#: one call per renamed keyword: (function, old keywords, the same with the new ones, other arguments)
KEYWORD_CASES = [
    (metrics.bootstrap_weights, {"n_boot": 3}, {"n_resamples": 3}, (5,)),
    (metrics.bootstrap_means, {"n_boot": 3}, {"n_resamples": 3}, (T1,)),
    (metrics.percentile_interval, {"ci": 0.9}, {"level": 0.9}, (np.arange(10.0),)),
    (metrics.compare, {"ci": 0.9, "n_boot": 20}, {"level": 0.9, "n_resamples": 20}, (S1, S1 + 0.1, T1)),
    (metrics.chi2_spectrum, {"pred_values": S1[:, 0], "true_values": T1}, {"samples": S1[:, 0], "truth": T1}, ()),
    (metrics.spectrum_test, {"pred_values": S1[:, 0], "true_values": T1, "n_perm": 20},
     {"samples": S1[:, 0], "truth": T1, "n_resamples": 20}, ()),
    (metrics.chi2_spectrum_replicates, {"pred_values": S1[:, 0], "true_values": T1, "n_boot": 5},
     {"samples": S1[:, 0], "truth": T1, "n_resamples": 5}, ()),
    (metrics.coverage_noise_floor, {"repeats": 10}, {"n_resamples": 10}, (40, 5)),
    (metrics.coverage_band, {"ci": 0.9}, {"level": 0.9}, (40,)),
    (metrics.coverage.coverage_error_replicates, {"n_boot": 5}, {"n_resamples": 5}, ([S1], T1)),
    (metrics.coverage.local_coverage_error_replicates, {"n_boot": 5}, {"n_resamples": 5},
     ([S1[:, 0] > 0], T1), {"nominal": 0.5, "bins": 2}),
    (metrics.calibration.narrowing_deviation, {"n_sim": 200}, {"n_resamples": 200}, (0.9, 8)),
    (metrics.calibration_margin, {"ci": 0.9, "repeats": 10}, {"level": 0.9, "n_resamples": 10}, (40, 5)),
    (metrics.signed_coverage, {"ci": 0.9}, {"level": 0.9},  # signed coverage needs >= 100 events
     ([np.random.default_rng(1).normal(size=(120, 5))], np.random.default_rng(2).normal(size=120))),
    (metrics.tarp_noise_floor, {"repeats": 10}, {"n_resamples": 10}, (40, 5, np.linspace(0.1, 0.9, 5))),
    (metrics.tarp_coverage, {"n_boot": 20, "ci": 0.9}, {"n_resamples": 20, "level": 0.9}, (S2, T2)),
    (metrics.rank_histogram, {"ci": 0.9, "sims": 20}, {"level": 0.9, "n_resamples": 20}, (S2, T2)),
    (metrics.spread_skill, {"n_boot": 20, "ci": 0.9}, {"n_resamples": 20, "level": 0.9}, (S2, T2), {"bins": 2}),
    (metrics.protocol_report, {"n_perm": 10, "ci": 0.9, "n_boot": 20},
     {"spectrum_resamples": 10, "level": 0.9, "n_resamples": 20}, ({"a": S1}, T1)),
    (resolution.core_width_replicates, {"n_boot": 5}, {"n_resamples": 5}, (S1[:, 0], 2.0 + np.abs(T1))),
    (metrics.intervals.events_to_resolve, {"ci": 0.9}, {"level": 0.9}, (0.1, 1.0)),
]


def _result(value):
    """A result as nested dicts, lists and arrays, for ``np.testing.assert_equal``."""
    if hasattr(value, "__dataclass_fields__"):
        return {k: _result(getattr(value, k)) for k in value.__dataclass_fields__}
    if hasattr(value, "to_dict"):
        return _result(value.to_dict())
    if isinstance(value, dict):
        return {k: _result(v) for k, v in value.items()}
    if inspect.isgenerator(value) or isinstance(value, (list, tuple)):
        return [_result(v) for v in value]
    return value


@pytest.mark.parametrize("case", KEYWORD_CASES, ids=[c[0].__name__ for c in KEYWORD_CASES])
def test_an_old_keyword_works_warns_and_clashes_with_the_new_one(case):
    func, old, new, args, *rest = case
    other = rest[0] if rest else {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _result(func(*args, **old, **other))
    said = [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]
    for o, n in zip(old, new):
        assert any(f"keyword {o} is deprecated" in s and s.endswith(f"use {n}") for s in said), said
    expected = _result(func(*args, **new, **other))
    np.testing.assert_equal(got, expected)
    first_old, first_new = next(iter(old)), next(iter(new))
    with pytest.raises(TypeError, match=rf"both '{first_old}' \(deprecated\) and '{first_new}'"):
        func(*args, **old, **new, **other)
    assert set(old) <= set(func.__deprecated_keywords__)
    params = inspect.signature(func).parameters
    assert set(new) <= set(params) and not set(old) & set(params)


def _with_deprecated_keywords():
    """Every public function of posteval.metrics and posteval.plotting that renamed a keyword."""
    found = {}
    for pkg in (metrics, plotting):
        names = [pkg.__name__] + [m.name for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
        for name in names:
            if name.endswith("__main__"):
                continue
            for fname, f in vars(importlib.import_module(name)).items():
                if (callable(f) and hasattr(f, "__deprecated_keywords__") and not fname.startswith("_")
                        and not hasattr(f, "__deprecated_alias_of__")):
                    found[f"{f.__module__}.{fname}"] = f
    return found


def test_every_renamed_keyword_has_a_case_and_maps_to_the_scheme():
    found = _with_deprecated_keywords()
    covered = {o for c in KEYWORD_CASES for o in c[1]}
    allowed = {"n_resamples", "spectrum_resamples", "level", "samples", "truth"}
    for qual, f in found.items():
        assert set(f.__deprecated_keywords__.values()) <= allowed, qual
        assert set(f.__deprecated_keywords__) <= covered, qual
    tested = {f"{c[0].__module__}.{c[0].__name__}" for c in KEYWORD_CASES}
    untested = set(found) - tested - {"posteval.metrics.calibration.signed_coverage_from_inside",
                                      "posteval.metrics.calibration.tarp_summary",
                                      "posteval.metrics.calibration.spread_summary",
                                      "posteval.metrics.report.protocol_table", "posteval.metrics.ranking.leads",
                                      "posteval.metrics.ranking.calibration_verdicts",
                                      "posteval.plotting.coverage_axes",
                                      "posteval.plotting.bimodal.conditional_coverage_axes"}
    assert not untested, sorted(untested)


def test_renamed_result_fields_warn():
    test = metrics.spectrum_test(S1[:, 0], T1, n_resamples=20)
    with pytest.warns(DeprecationWarning, match=r"SpectrumTest.n_perm is deprecated .* use SpectrumTest.n_resamples"):
        assert test.n_perm == test.n_resamples == 20
    comparison = metrics.compare(S1, S1 + 0.1, T1, n_resamples=20)
    with pytest.warns(DeprecationWarning, match=r"Comparison.n_boot is deprecated .* use Comparison.n_resamples"):
        assert comparison.n_boot == comparison.n_resamples == 20


def test_the_new_names_are_exported_and_the_old_are_not():
    new = {"crps_ensemble", "crps_normal", "energy_score_ensemble", "energy_score_reconstruction",
           "scores_reconstruction"}
    old = {"crps", "energy_score", "joint_energy_score", "per_event_scores"}
    assert new <= set(metrics.__all__)
    assert not old & set(metrics.__all__)
    assert all(hasattr(metrics, o) for o in old)  # still importable, for one release
    assert "calibration_verdicts" in vars(ranking) and "calibration" not in getattr(ranking, "__all__", [])
    assert "Names" in metrics.__doc__ and "<score>_<input kind>" in metrics.__doc__


@pytest.mark.parametrize("code", [
    "from posteval import metrics; metrics.crps([[0.0, 1.0]], [0.0])",
    "from posteval.metrics.scores import per_event_scores; per_event_scores([[0.0, 1.0]], [[0.0, 0.0]])",
    "import numpy as np; from posteval import metrics; metrics.bootstrap_means(np.arange(3.0), n_boot=5)",
])
def test_error_on_deprecation_warnings_makes_an_old_name_fail(code):
    env = {"PYTHONPATH": str(ROOT / "lib"), "MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"}
    ok = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert ok.returncode == 0, ok.stderr
    strict = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code], capture_output=True,
                            text=True, env=env)
    assert strict.returncode != 0 and "DeprecationWarning" in strict.stderr and "use " in strict.stderr


def test_the_report_cli_takes_its_old_options_with_a_warning(capsys):
    base = ["report", "--samples", "f=f.npy", "--truth", "t.npy", "--out", "r"]
    new = cli.build_parser().parse_args(base + ["--level", "0.9", "--n-resamples", "200", "--spectrum-resamples", "5"])
    assert capsys.readouterr().err == ""
    old = cli.build_parser().parse_args(base + ["--ci", "0.9", "--n-boot", "200", "--n-perm", "5"])
    err = capsys.readouterr().err
    assert vars(old) == vars(new)
    for o, n in (("--ci", "--level"), ("--n-boot", "--n-resamples"), ("--n-perm", "--spectrum-resamples")):
        assert f"{o} is deprecated" in err and f"use {n}" in err
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["report", "--help"])
    shown = capsys.readouterr().out
    assert "--n-resamples" in shown and "--n-boot" not in shown and "--n-perm" not in shown


# ---------------------------------------------------------------------------------------------
# nothing of the book uses an old name
# ---------------------------------------------------------------------------------------------
OLD_FUNCTIONS = {"crps", "energy_score", "joint_energy_score", "per_event_scores"}
OLD_PARAMETERS = {"n_boot", "n_perm", "repeats", "sims", "n_sim", "pred_values", "true_values"}
#: where the old names are defined on purpose
EXEMPT = {ROOT / "lib" / "posteval" / "_deprecation.py", Path(__file__).resolve()}


def _renamed_keywords() -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for qual, f in _with_deprecated_keywords().items():
        out.setdefault(qual.rsplit(".", 1)[1], {}).update(f.__deprecated_keywords__)
    out["calibration"] = out["calibration_verdicts"]
    return out


def _dotted(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return base and f"{base}.{node.attr}"
    return None


def old_names(source: str, keywords: dict[str, dict[str, str]], *, in_metrics: bool = False) -> list[str]:
    """Uses of a name before 0.3.0 as an identifier in Python ``source`` (string literals are not read):
    a renamed function (``metrics.crps``, ``from posteval.metrics import crps``, ``ranking.calibration``),
    a renamed keyword in a call of the function that renamed it, a renamed result field, or a parameter
    of a posteval function under an old name.

    >>> kw = {"bootstrap_means": {"n_boot": "n_resamples"}}
    >>> old_names("metrics.bootstrap_means(x, n_boot=3); record('n_boot', t.n_perm); np.repeat(x, repeats=2)", kw)
    ['line 1: bootstrap_means(n_boot=)', 'line 1: .n_perm']
    >>> old_names("from posteval.metrics import crps as c; metrics.crps(s, y); oracle.crps(y)", kw)
    ['line 1: import crps', 'line 1: metrics.crps']
    """
    found = []
    for node in ast.walk(ast.parse(source)):
        where = f"line {getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("posteval"):
            found += [f"{where}: import {a.name}" for a in node.names
                      if a.name in OLD_FUNCTIONS | ({"calibration"} if node.module.endswith("ranking") else set())]
        elif isinstance(node, ast.Call):
            name = _dotted(node.func) or ""
            if name.endswith("partial") and node.args:
                name = _dotted(node.args[0]) or ""
            renamed = keywords.get(name.rsplit(".", 1)[-1], {})
            found += [f"{where}: {name.rsplit('.', 1)[-1]}({k.arg}=)" for k in node.keywords if k.arg in renamed]
        elif isinstance(node, ast.Attribute):
            base = _dotted(node.value) or ""
            if node.attr in OLD_FUNCTIONS and base.rsplit(".", 1)[-1] in ("metrics", "scores"):
                found.append(f"{where}: {base}.{node.attr}")
            elif node.attr == "calibration" and base.rsplit(".", 1)[-1] == "ranking":
                found.append(f"{where}: {base}.calibration")
            elif node.attr in ("n_perm", "n_boot") and base != "args":  # argparse options of a script
                found.append(f"{where}: .{node.attr}")
        elif isinstance(node, ast.Name) and in_metrics and node.id in OLD_FUNCTIONS and isinstance(node.ctx, ast.Load):
            found.append(f"{where}: {node.id}")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and in_metrics:
            a = node.args
            bad = {p.arg for p in a.posonlyargs + a.args + a.kwonlyargs} & (OLD_PARAMETERS | {"ci"})
            found += [f"{where}: def {node.name}({p})" for p in sorted(bad)]
    return found


def _sources():
    for path in sorted([*(ROOT / "lib").rglob("*.py"), *(ROOT / "tests").glob("*.py"),
                        *(ROOT / "benchmarks").glob("*.py"), *(ROOT / "scripts").rglob("*.py")]):
        if path.resolve() not in EXEMPT:
            yield path, path.read_text(), "posteval/metrics" in path.as_posix() or "posteval/plotting" in path.as_posix()
    import jupytext

    for path in sorted((ROOT / "chapters").glob("*.md")):
        nb = jupytext.read(path)
        code = "\n".join("\n".join("# " + line if line.lstrip().startswith(("%", "!")) else line
                                   for line in c.source.splitlines())
                         for c in nb.cells if c.cell_type == "code")
        yield path, code, False


def test_the_book_library_and_tests_use_no_old_name():
    keywords = _renamed_keywords()
    offences = []
    for path, source, in_metrics in _sources():
        offences += [f"{path.relative_to(ROOT)}: {o}" for o in old_names(source, keywords, in_metrics=in_metrics)]
    # the deprecated aliases themselves: ``crps = deprecated_alias(crps_ensemble, "crps")`` stores, never loads
    assert not offences, "\n".join(offences)


def test_the_version_is_0_3_0_with_its_changelog_entry():
    assert 'version = "0.3.0"' in (ROOT / "pyproject.toml").read_text()
    assert "## [0.3.0] - " in (ROOT / "CHANGELOG.md").read_text()
