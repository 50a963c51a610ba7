"""The library as a package: `pip install ".[models]"` from pyproject.toml into a fresh venv works
offline, and `import posteval` changes no global state."""

import shutil
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
from importlib import metadata

from packaging.requirements import Requirement

from posteval import book


def _declared(extras=("models",)):
    project = tomllib.loads((book.ROOT / "pyproject.toml").read_text())["project"]
    reqs = list(project["dependencies"])
    for extra in extras:
        reqs += project["optional-dependencies"][extra]
    return [Requirement(r) for r in reqs]


def test_declared_requirements_hold_in_the_pinned_environment():
    """Every requirement of pyproject.toml (all extras) is met by the lock, requirements.txt."""
    project = tomllib.loads((book.ROOT / "pyproject.toml").read_text())["project"]
    for req in _declared(tuple(project["optional-dependencies"])):
        assert req.specifier.contains(metadata.version(req.name), prereleases=True), f"{req} not met by the lock"


def test_pip_install_into_a_fresh_venv_and_run_the_protocol(tmp_path):
    """A fresh venv sees this environment's site-packages as its dependencies (offline) and gets
    the package itself installed by pip from a copy of the sources."""
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(book.ROOT / "pyproject.toml", src)
    shutil.copy(book.ROOT / "README.md", src)
    shutil.copytree(book.ROOT / "lib", src / "lib", ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    fresh_site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / "venv" / fresh_site.removeprefix(str(venv) + "/") / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-index", "--no-build-isolation",
                          "--no-cache-dir", "--disable-pip-version-check", f"{src}[models]"], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    script = textwrap.dedent("""
        import numpy as np
        import posteval
        from posteval import metrics
        rng = np.random.default_rng(0)
        truth = rng.normal(size=200)
        table = metrics.protocol_report({"model": truth[:, None] + rng.normal(size=(200, 16))}, truth)
        print(posteval.__file__)
        print(len(table), table["crps"].iloc[0] > 0)
    """)
    run = subprocess.run([str(py), "-c", script], cwd=outside, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-3000:]
    where, result = run.stdout.split("\n")[:2]
    assert where.startswith(fresh_site), f"posteval imported from {where}, not from the fresh venv"
    assert result == "1 True"
    console = venv / "bin" / "protocol-report"
    assert console.exists()
    usage = subprocess.run([str(console), "--help"], capture_output=True, text=True, cwd=outside)
    assert usage.returncode == 0 and "--samples" in usage.stdout, usage.stderr


def test_import_lib_has_no_global_side_effects():
    script = textwrap.dedent("""
        import sys, warnings
        before = list(warnings.filters)
        import posteval
        assert list(warnings.filters) == before, "import posteval changed the warning filters"
        assert not any(m == "tqdm" or m.startswith("tqdm.") for m in sys.modules), "import posteval imported tqdm"
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=book.ROOT)
    assert run.returncode == 0, run.stderr
