"""The runner: record(), chapter resolution, papermill execution, atomic results."""

import json
import re
import os
import subprocess
import sys

import numpy as np
import pytest
import torch
import yaml

from posteval import book, parameters, paths, runtime

FIXTURE = book.ROOT / "tests" / "fixtures" / "chapters" / "99_tiny.md"  # its ranges: tests/conftest.py


def test_record_stores_plain_values_and_writes_the_record_file(tmp_path, monkeypatch):
    target = tmp_path / "rec.json"
    monkeypatch.setenv(book.RECORD_FILE_ENV, str(target))
    assert book.record("a.b", np.float32(1.5)) == 1.5
    assert book.record("n_events", np.int64(7)) == 7
    assert book.record("flag", np.bool_(True)) is True
    stored = json.loads(target.read_text())
    assert stored["a.b"] == 1.5 and stored["n_events"] == 7 and stored["flag"] is True
    assert book.recorded()["a.b"] == 1.5


@pytest.mark.parametrize("name", ["", "has space", "a/b", 3])
def test_record_rejects_bad_names(name):
    with pytest.raises(ValueError, match="name"):
        book.record(name, 1.0)


def test_record_rejects_arrays():
    with pytest.raises(ValueError, match="value"):
        book.record("x", np.zeros(3))


def test_seed_everything_reproduces_torch_and_numpy():
    import torch

    book.seed_everything(3)
    a = (np.random.rand(3), torch.rand(3))
    book.seed_everything(3)
    b = (np.random.rand(3), torch.rand(3))
    np.testing.assert_array_equal(a[0], b[0])
    assert torch.equal(a[1], b[1])
    with pytest.raises(ValueError, match="seed"):
        book.seed_everything(-1)


def test_resolve_chapter_by_number_and_stem():
    sources = book.chapter_sources()
    assert sources, "no chapters found"
    first = sources[0]
    assert book.resolve_chapter(first.stem) == first
    assert book.resolve_chapter(first.stem[:2]) == first
    assert book.resolve_chapter(str(int(first.stem[:2]))) == first
    with pytest.raises(ValueError, match="chapter"):
        book.resolve_chapter("nonexistent")


def test_every_chapter_has_both_profiles():
    for src in book.chapter_sources():
        for profile in book.PROFILES:
            params = book.load_parameters(src.stem, profile)
            assert params, f"params/{profile}/{src.stem}.yaml missing or empty"
    with pytest.raises(ValueError, match="profile"):
        book.load_parameters("01_total_variance", "gpu")


def test_ci_parameters_are_the_chapter_defaults():
    """The parameters cell's defaults are the CI sizes (nbval checks the defaults)."""
    for src in book.chapter_sources():
        defaults = book.chapter_defaults(src)
        ci = book.load_parameters(src.stem, "ci")
        assert {k: defaults[k] for k in ci} == ci, src.stem
        full = book.load_parameters(src.stem, "full")
        assert set(full) <= set(defaults), f"{src.stem}: full profile sets unknown parameters {set(full) - set(defaults)}"


def test_run_chapter_executes_with_parameters_and_writes_results(tmp_path, monkeypatch):
    params = tmp_path / "params"
    (params / "ci").mkdir(parents=True)
    (params / "ci" / "99_tiny.yaml").write_text(yaml.safe_dump({"n": 5}))
    monkeypatch.setattr(book, "PARAMS", params)
    results = book.run_chapter(FIXTURE, "ci", out_dir=tmp_path / "out")
    assert results["total"] == sum(range(5))
    assert results["label"] == "tiny"
    assert results["torch_loaded"] is False  # the runner and record() load no torch into the kernel
    meta = results[book.META]
    assert set(results) == {"total", "label", "torch_loaded", book.META}
    assert meta["profile"] == "ci" and meta["parameters"] == {"n": 5}
    assert set(meta) == {"profile", "parameters", "device", "torch_version", "seconds", "cpu_seconds", "threads",
                         "git_commit"}
    assert 0 < meta["cpu_seconds"] and meta["threads"] == os.environ.get("OMP_NUM_THREADS", book.CI_THREADS["OMP_NUM_THREADS"])
    on_disk = json.loads((tmp_path / "out" / "results" / "99_tiny.json").read_text())
    assert on_disk == json.loads(json.dumps(results))
    # the whole executed chapter, and its one page (_toc.yml lists no sections for it: posteval.pages)
    executed, page = tmp_path / "out" / "executed" / "99_tiny.ipynb", tmp_path / "out" / "99_tiny.ipynb"
    assert executed.exists() and page.exists()
    assert json.loads(page.read_text())["cells"] == json.loads(executed.read_text())["cells"]
    assert json.loads(page.read_text())["metadata"]["posteval_page"]["chapter"] == "99_tiny"
    leftovers = [p.name for p in (tmp_path / "out").rglob("*") if p.name.startswith(".")]
    assert leftovers == []


def test_failed_chapter_leaves_previous_outputs_untouched(tmp_path, monkeypatch):
    params = tmp_path / "params"
    (params / "ci").mkdir(parents=True)
    monkeypatch.setattr(book, "PARAMS", params)
    out = tmp_path / "out"
    book.run_chapter(FIXTURE, "ci", out_dir=out)
    before_nb = (out / "99_tiny.ipynb").read_bytes()
    before_executed = (out / "executed" / "99_tiny.ipynb").read_bytes()
    before_json = (out / "results" / "99_tiny.json").read_text()
    (params / "ci" / "99_tiny.yaml").write_text(yaml.safe_dump({"fail": True}))
    with pytest.raises(Exception, match="asked to fail"):
        book.run_chapter(FIXTURE, "ci", out_dir=out)
    assert (out / "99_tiny.ipynb").read_bytes() == before_nb
    assert (out / "executed" / "99_tiny.ipynb").read_bytes() == before_executed
    assert (out / "results" / "99_tiny.json").read_text() == before_json
    assert [p.name for p in out.rglob("*") if p.name.startswith(".")] == []
    assert os.environ.get(book.RECORD_FILE_ENV) is None


@pytest.mark.parametrize("params, match", [
    ({"m": 5}, "unknown parameter 'm'"),
    ({"nn": 5}, "did you mean 'n'"),
    ({"n": "5"}, "parameter n: expected int like the default 10, got str '5'"),
    ({"n": 5.0}, "expected int"),
    ({"fail": 1}, "parameter fail: expected bool"),
])
def test_bad_parameters_stop_the_run_before_it_starts(tmp_path, monkeypatch, capsys, params, match):
    (tmp_path / "params" / "ci").mkdir(parents=True)
    (tmp_path / "params" / "ci" / "99_tiny.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.setattr(book, "PARAMS", tmp_path / "params")
    with pytest.raises(ValueError, match=match):
        book.run_chapter(FIXTURE, "ci", out_dir=tmp_path / "out")
    assert not (tmp_path / "out" / "99_tiny.ipynb").exists()
    monkeypatch.setattr(paths, "CHAPTERS", FIXTURE.parent)
    assert book.main(["run", "99"]) == 2
    assert match.split("'")[0] in capsys.readouterr().err


def test_nested_parameters_are_checked_key_by_key():
    defaults = {"training": {"epochs": 3, "lr": 0.1, "max_seconds": None}, "sizes": [1, 2]}
    assert book._type_error("p", defaults["training"], {"epochs": 5, "lr": 1, "max_seconds": 9.5}) is None
    assert "unknown key 'epoch'" in book._type_error("p", defaults["training"], {"epoch": 5})
    assert "p.lr: expected float" in book._type_error("p", defaults["training"], {"lr": "0.1"})
    assert "p[1]: expected int" in book._type_error("p", defaults["sizes"], [1, 2.5])


def test_every_profile_fits_its_chapter():
    for src in book.chapter_sources():
        for profile in book.PROFILES:
            book.check_parameters(src, book.load_parameters(src.stem, profile))


def test_meta_is_not_a_recordable_name():
    with pytest.raises(ValueError, match="reserved"):
        book.record(book.META, 1)


def test_numpy_only_chapter_and_the_runner_do_not_import_torch():
    """Chapter 1's imports, seed_everything and the runner module leave torch unloaded."""
    import ast
    import subprocess
    import sys

    import jupytext

    source = book.resolve_chapter("01")
    imports = [ast.unparse(node) for cell in jupytext.read(source).cells if cell.cell_type == "code"
               for node in ast.parse(cell.source).body if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert any("posteval" in line for line in imports)
    code = "\n".join(["import sys", "import posteval.book", *imports, "posteval.book.seed_everything(0)",
                      "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.')))"])
    out = subprocess.run([sys.executable, "-c", code], cwd=book.ROOT, capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONPATH": str(book.ROOT / "lib")})
    assert out.stdout.strip() == "[]"


def test_overrides_change_one_parameter_and_the_record_lists_them(tmp_path, monkeypatch):
    params = tmp_path / "params"
    (params / "full").mkdir(parents=True)
    (params / "full" / "99_tiny.yaml").write_text(yaml.safe_dump({"n": 50}))
    monkeypatch.setattr(book, "PARAMS", params)
    overrides = book.parse_overrides(["n=4"])
    results = book.run_chapter(FIXTURE, "full", out_dir=tmp_path / "out", overrides=overrides)
    assert results["total"] == sum(range(4))
    meta = results[book.META]
    assert meta["profile"] == "full" and meta["parameters"] == {"n": 4}
    assert meta["overrides"] == {"n": {"profile": 50, "used": 4}}


def test_override_parsing_and_nested_keys():
    assert book.parse_overrides(["a=1", "b.c=[1, 2]", "d=x"]) == {"a": 1, "b.c": [1, 2], "d": "x"}
    with pytest.raises(ValueError, match="expected KEY=VALUE"):
        book.parse_overrides(["n"])
    params = {"training": {"epochs": 3}, "n": 1}
    new, changed = book.apply_overrides(params, {"training.epochs": 9})
    assert new == {"training": {"epochs": 9}, "n": 1} and params["training"]["epochs"] == 3
    assert changed == {"training.epochs": {"profile": 3, "used": 9}}
    with pytest.raises(ValueError, match="'n' is not a mapping"):
        book.apply_overrides(params, {"n.x": 2})


def test_an_override_of_the_wrong_type_stops_the_run(tmp_path, monkeypatch, capsys):
    (tmp_path / "params" / "full").mkdir(parents=True)
    monkeypatch.setattr(book, "PARAMS", tmp_path / "params")
    monkeypatch.setattr(paths, "CHAPTERS", FIXTURE.parent)
    assert book.main(["run", "99", "--profile", "full", "--set", "n=abc"]) == 2
    assert "parameter n: expected int" in capsys.readouterr().err


# --- no silent answers: every bad input of the runner is one line, exit code 2 ---------------------

def _tiny_main(tmp_path, monkeypatch, capsys, argv, yaml_bytes=None, profile="ci"):
    """Exit code and stderr of ``main(argv)`` on the test chapter, with ``yaml_bytes`` as its profile file."""
    (tmp_path / "params" / profile).mkdir(parents=True, exist_ok=True)
    if yaml_bytes is not None:
        (tmp_path / "params" / profile / "99_tiny.yaml").write_bytes(yaml_bytes)
    monkeypatch.setattr(book, "PARAMS", tmp_path / "params")
    monkeypatch.setattr(paths, "CHAPTERS", FIXTURE.parent)
    code = book.main(argv)
    return code, capsys.readouterr().err


@pytest.mark.parametrize("argv, yaml_bytes, message", [
    (["run", "98"], None, "error: chapter: no chapter matches '98' (have: 99_tiny)"),
    (["reference", "nope"], None, "error: chapter: no chapter matches 'nope'"),
    (["run", "99", "--set", "profile=full"], None, "the profile is chosen with --profile"),
    (["run", "99", "--set", "n=-5"], None, "parameter n = -5 must be an integer >= 0"),
    (["run", "99", "--set", "n=[1"], None, "--set 'n=[1': not valid YAML"),
    (["run", "99", "--set", "undeclared=1"], None, "unknown parameter 'undeclared'"),
    (["run", "99"], b"n: 3\nn: 4\n", "99_tiny.yaml: not valid YAML: duplicate key 'n' (line 2, column 1)"),
    (["run", "99"], b"n: [3\n", "99_tiny.yaml: not valid YAML:"),
    (["run", "99"], b"n: 3\nfail: \xff\n", "99_tiny.yaml: not UTF-8 text (invalid start byte at byte 11)"),
    (["run", "99"], b"- 3\n", "99_tiny.yaml: expected a mapping of parameter names to values, got list"),
    (["run", "99"], b"profile: full\n", "99_tiny.yaml: profile: 'full' differs from the profile of its folder, 'ci'"),
])
def test_bad_runner_inputs_are_one_line(tmp_path, monkeypatch, capsys, argv, yaml_bytes, message):
    code, err = _tiny_main(tmp_path, monkeypatch, capsys, argv, yaml_bytes)
    assert code == 2
    assert err.count("\n") == 1 and message in err, err


def test_a_parameter_without_a_declared_range_is_an_error(tmp_path, monkeypatch, capsys):
    monkeypatch.delitem(parameters.CHAPTER_RULES["99_tiny"], "fail")
    code, err = _tiny_main(tmp_path, monkeypatch, capsys, ["run", "99"])
    assert code == 2 and "parameter 'fail' has no declared range" in err


def test_every_chapter_parameter_has_a_range_its_defaults_and_profiles_fit():
    for src in book.chapter_sources():
        defaults = book.chapter_defaults(src)
        assert parameters.parameter_problem(src.stem, defaults) is None, src.stem
        for profile in book.PROFILES:
            params, _ = book.resolve_parameters(src, profile)
            assert params.get("profile", profile) == profile


@pytest.mark.parametrize("overrides, message", [
    ({"n_eval": -5}, "parameter n_eval = -5 must be an integer >= 1"),
    ({"n_eval": 0}, "n_eval = 0 must be"),
    ({"noise": float("nan")}, "parameter noise = nan must be a finite number > 0"),
    ({"noise": float("inf")}, "noise = inf must be"),
    ({"train_sizes": []}, "train_sizes = [] must be a non-empty list"),
    ({"train_sizes": [100, -1]}, "train_sizes[1] = -1 must be an integer >= 1"),
])
def test_values_outside_their_range_stop_chapter_1(overrides, message):
    with pytest.raises(ValueError) as err:
        book.resolve_parameters(book.resolve_chapter("01"), "ci", overrides)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("chapter, items, message", [
    ("03", ["training={epochs: 1}"], "parameter training = {'epochs': 1} must be a mapping with the keys"),
    ("03", ["training.epochs=0"], "parameter training.epochs = 0 must be an integer >= 1"),
    ("03", ["heads.flow.hidden=[64, 0]"], "heads.flow.hidden[1] = 0 must be"),
    ("03", ["splits.train=0.9"], "summing to at most 1"),
    ("03", ["device=auto"], "device = 'auto' must be one of cpu, cuda or cuda:N"),
    ("03", ["schedule={warmup_epochs: -1}"], "schedule.warmup_epochs = -1 must be an integer >= 0"),
    ("03", ["generation_mode=hadron"], "must be one of parton, shower, full"),
    ("02", ["n_events_m=5000"], "n_events_m = 5000 must be at most n_test = 4000"),
    ("02", ["cfm_method=rk5"], "must be one of rk4, midpoint, euler"),
    ("04", ["seeds=[]"], "seeds = [] must be a non-empty list"),
    ("04", ["seeds=[1, 1]"], "without repeated items"),
    ("04", ["conditions=[no_proxy, bogus]"], "conditions[1] = 'bogus' must be one of no_proxy"),
])
def test_values_that_mean_nothing_stop_the_run(chapter, items, message):
    with pytest.raises(ValueError) as err:
        book.resolve_parameters(book.resolve_chapter(chapter), "ci", book.parse_overrides(items))
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_profile_is_set_by_the_runner():
    src = book.resolve_chapter("01")
    params, _ = book.resolve_parameters(src, "full", {"n_eval": 10})
    assert params["profile"] == "full" and params["n_eval"] == 10


def test_papermill_does_not_warn_about_validated_parameters(tmp_path, monkeypatch, caplog):
    """papermill cannot read ``n = int("10", base=10)`` (two '='); the runner has checked it."""
    source = tmp_path / FIXTURE.name
    source.write_text(FIXTURE.read_text().replace("n = 10\n", 'n = int("10", base=10)\n'))
    (tmp_path / "params" / "ci").mkdir(parents=True)
    (tmp_path / "params" / "ci" / "99_tiny.yaml").write_text("n: 3\n")
    monkeypatch.setattr(book, "PARAMS", tmp_path / "params")
    with caplog.at_level("WARNING", logger="papermill"):
        results = book.run_chapter(source, "ci", out_dir=tmp_path / "out")
    assert results["total"] == 3
    assert not [r.getMessage() for r in caplog.records if r.name.startswith("papermill")]


def _fresh_python(code: str, **env_extra) -> subprocess.CompletedProcess:
    """Run ``code`` in a new interpreter without the portable-kernel variables in its environment (plus
    ``env_extra``)."""
    env = {k: v for k, v in os.environ.items() if k not in book.PORTABLE_KERNELS}
    return subprocess.run([sys.executable, "-c", code], env={**env, **env_extra}, capture_output=True, text=True,
                          timeout=120)


def test_seed_everything_chooses_the_portable_cpu_kernels():
    """After seed_everything (numpy's setting given before Python starts, as make and the runner give it),
    torch runs its baseline kernels, oneDNN is off, and MKL's COMPATIBLE branch is in the environment the
    training workers inherit."""
    out = _fresh_python("import os, torch\nfrom posteval.book import seed_everything\nseed_everything(0)\n"
                        "torch.ones(3).exp()\nprint(torch.backends.cpu.get_cpu_capability(), os.environ['MKL_CBWR'], "
                        "torch.backends.mkldnn.enabled)",
                        NPY_DISABLE_CPU_FEATURES=runtime.NUMPY_SIMD_ABOVE_BASELINE)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["DEFAULT", "COMPATIBLE", "False"]


def test_seed_everything_keeps_gelu_out_of_onednn():
    """torch's GELU runs in oneDNN, whose digits follow its ISA, unless oneDNN is off: after
    seed_everything no oneDNN primitive runs (its verbose mode prints none)."""
    on = _fresh_python("import os, torch\nos.environ['ONEDNN_VERBOSE'] = '1'\n"
                       "torch.nn.functional.gelu(torch.ones(4, 8, 64))")
    if not [ln for ln in on.stdout.splitlines() if "exec," in ln]:
        pytest.skip("oneDNN does not run torch's GELU here even when on: nothing to keep it out of")
    code = ("import os, torch\nfrom posteval.book import seed_everything\nseed_everything(0)\n"
            "os.environ['ONEDNN_VERBOSE'] = '1'\ntorch.nn.functional.gelu(torch.ones(4, 8, 64))\nprint('done')")
    out = _fresh_python(code, NPY_DISABLE_CPU_FEATURES=runtime.NUMPY_SIMD_ABOVE_BASELINE)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith("done") and not [ln for ln in out.stdout.splitlines() if "exec," in ln]


def test_seed_everything_refuses_kernels_chosen_before_it():
    if _fresh_python("import torch; print(torch.backends.cpu.get_cpu_capability())").stdout.strip() == "DEFAULT":
        pytest.skip("torch picks its baseline kernels on this CPU anyway: nothing to refuse")
    out = _fresh_python("import torch\nfrom posteval.book import seed_everything\ntorch.ones(3).exp()\n"
                        "torch.backends.cpu.get_cpu_capability()\nseed_everything(0)",
                        NPY_DISABLE_CPU_FEATURES=runtime.NUMPY_SIMD_ABOVE_BASELINE)
    assert out.returncode != 0 and "before the first torch operation" in out.stderr


def test_seed_everything_refuses_a_numpy_started_without_its_setting():
    """numpy reads NPY_DISABLE_CPU_FEATURES once, at import: started without it, it runs its AVX2 kernels on
    this CPU (other digits than on a CPU without them) and seed_everything says how to start it."""
    code = ("from numpy._core._multiarray_umath import __cpu_features__ as f\n"
            "print(f.get('X86_V3'))\nfrom posteval.book import seed_everything\nseed_everything(0)")
    out = _fresh_python(code)
    if out.stdout.split()[:1] != ["True"]:
        pytest.skip("this CPU has none of the SIMD kernels numpy is kept from: nothing to refuse")
    assert out.returncode != 0
    assert "numpy runs its X86_V3" in out.stderr and "NPY_DISABLE_CPU_FEATURES=X86_V3" in out.stderr


def test_the_makefile_gives_the_library_s_portable_kernels():
    """make book, make test and make lab start Python with posteval.runtime.PORTABLE_KERNELS in the
    environment (numpy reads its setting at start): the Makefile's values are the library's."""
    text = (book.ROOT / "Makefile").read_text()
    given = dict(re.findall(r"^export (\w+) \?= (\S+)$", text, flags=re.M))
    assert {k: given.get(k) for k in runtime.PORTABLE_KERNELS} == runtime.PORTABLE_KERNELS


def test_the_runner_starts_a_chapter_s_kernel_with_the_portable_kernels(monkeypatch):
    for k in runtime.PORTABLE_KERNELS:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("MKL_CBWR", "AUTO")  # a value already in the environment wins
    with book._kernel_environment("full", None):
        inside = {k: os.environ.get(k) for k in runtime.PORTABLE_KERNELS}
    assert inside == {**runtime.PORTABLE_KERNELS, "MKL_CBWR": "AUTO"}
    assert "ATEN_CPU_CAPABILITY" not in os.environ  # restored


def test_the_runner_estimates_a_chapter_from_its_last_run(tmp_path):
    """The book's progress bar counts each chapter's seconds of its last run at the same profile here, else
    (at ci) its last reference run, else nothing."""
    results, kept = tmp_path / "results", tmp_path / "ci_seconds.json"
    results.mkdir()
    (results / "99_tiny.json").write_text(json.dumps({book.META: {"profile": "ci", "seconds": 12.5}}))
    assert book.estimated_seconds("99_tiny", "ci", results, kept) == 12.5
    assert book.estimated_seconds("99_tiny", "full", results, kept) is None
    book.keep_reference_seconds({"98_other": 30.04}, kept)
    assert book.estimated_seconds("98_other", "ci", results, kept) == 30.0
    assert book.estimated_seconds("97_never", "ci", results, kept) is None
    (results / "97_never.json").write_text("{not json")
    assert book.estimated_seconds("97_never", "ci", results, kept) is None


def test_at_ci_the_kernel_computes_on_one_thread_unless_the_environment_says_otherwise(monkeypatch, tmp_path):
    """The ci profile's kernel (and the workers it starts) get OMP_NUM_THREADS=1 and the BLAS equivalents; a
    value already set wins; the runner's own environment is left as it was."""
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("MKL_NUM_THREADS", raising=False)
    with book._kernel_environment("ci", tmp_path / "r.json"):
        assert os.environ["OMP_NUM_THREADS"] == "1" and os.environ["MKL_NUM_THREADS"] == "1"
        assert os.environ[book.RECORD_FILE_ENV] == str(tmp_path / "r.json")
    assert "OMP_NUM_THREADS" not in os.environ and book.RECORD_FILE_ENV not in os.environ
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    with book._kernel_environment("ci", None):
        assert os.environ["OMP_NUM_THREADS"] == "4"
    with book._kernel_environment("full", None):
        assert "MKL_NUM_THREADS" not in os.environ


def test_at_ci_the_kernel_keeps_the_memory_it_frees(monkeypatch):
    """The ci kernel starts with glibc told to keep freed memory (CI_MALLOC); a value already set wins; the
    runner's environment is left as it was; the full profile leaves the allocator alone."""
    for k in book.CI_MALLOC:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("MALLOC_TOP_PAD_", "0")
    with book._kernel_environment("ci", None):
        assert os.environ["MALLOC_MMAP_THRESHOLD_"] == str(1 << 30) and os.environ["MALLOC_TOP_PAD_"] == "0"
    assert "MALLOC_MMAP_THRESHOLD_" not in os.environ
    with book._kernel_environment("full", None):
        assert "MALLOC_MMAP_THRESHOLD_" not in os.environ


def test_a_chapter_computes_the_same_numbers_whatever_its_allocator_does(tmp_path):
    """Where memory comes from (glibc's defaults or CI_MALLOC) changes no digit of a computation on numpy and
    torch arrays (alignment is the one way it could: torch aligns its own, MKL runs on both)."""
    code = ("import numpy as np, torch\nfrom posteval.book import seed_everything\nseed_everything(0)\n"
            "x = np.random.default_rng(0).normal(size=(3000, 64))\nt = torch.from_numpy(x[1:].astype(np.float32))\n"
            "w = torch.randn(64, 64)\nfor _ in range(3): t = torch.tanh(t @ w)\nprint(float(t.double().sum()).hex())")
    plain = {k: v for k, v in os.environ.items() if k not in book.CI_MALLOC}
    outs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
            for env in (plain, {**plain, **book.CI_MALLOC})]
    assert all(o.returncode == 0 for o in outs), [o.stderr[-300:] for o in outs]
    assert outs[0].stdout == outs[1].stdout


def test_the_runner_without_the_book_extra_is_a_one_line_error(monkeypatch, capsys):
    """Issue 44: `python -m posteval.book` without [book] names the extra instead of a raw ModuleNotFoundError."""
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "papermill" else real(name, *a))
    assert book.main(["run", "01"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: python -m posteval.book needs papermill") and 'pip install "posteval[book]"' in err
