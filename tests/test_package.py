"""The library as a package: a wheel of `posteval` installs into a fresh venv offline and works
there, missing extras name their pip command, and `import posteval` changes no global state."""

import json
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


TOY = """
import sys, numpy as np
rng = np.random.default_rng(1)
n, m = 3000, 48
chol = np.linalg.cholesky([[1.0, 0.8], [0.8, 1.0]])
mu = rng.normal(size=(n, 2))
truth = mu + rng.normal(size=(n, 2)) @ chol.T
draw = lambda s=1.0: mu[:, None, :] + s * rng.normal(size=(n, m, 2)) @ chol.T
exact = draw()
shuffled = exact.copy()
shuffled[:, :, 1] = rng.permuted(shuffled[:, :, 1], axis=1)
for name, arr in {"truth": truth, "exact": exact, "copy": draw(), "wide": draw(1.6), "shuffled": shuffled}.items():
    np.save(f"{name}.npy", arr)
"""


def test_wheel_in_a_fresh_venv_outside_the_repository(tmp_path):
    """A wheel built from a copy of the sources, installed into a fresh venv (this environment's
    site-packages as its dependencies, offline): ``import posteval`` works, ``import lib`` does
    not, ``protocol-report --version`` answers, and a report with ``--ci 0.95`` on toy models
    says "not resolved" for a tie, "yes" for a resolved difference, and lets the energy score
    separate a pair that differs only in the correlation between dimensions."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(book.ROOT / name, src)
    shutil.copytree(book.ROOT / "lib", src / "lib", ignore=shutil.ignore_patterns("__pycache__"))
    wheels = tmp_path / "wheels"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "--no-build-isolation",
                            "--disable-pip-version-check", "-w", str(wheels), str(src)], capture_output=True, text=True)
    assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    (wheel,) = wheels.glob("posteval-*.whl")
    assert wheel.name.startswith(f"posteval-{metadata.version('posteval')}-")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    fresh_site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / "venv" / fresh_site.removeprefix(str(venv) + "/") / "deps.pth").write_text(sysconfig.get_path("purelib") + "\n")
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-index", "--no-deps",
                          "--no-cache-dir", "--disable-pip-version-check", str(wheel)], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stdout[-3000:] + pip.stderr[-3000:]
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg"}
    run = subprocess.run([str(py), "-c", "import posteval; print(posteval.__file__); print(posteval.__version__)"],
                         cwd=outside, capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-3000:]
    where, version = run.stdout.split("\n")[:2]
    assert where.startswith(fresh_site), f"posteval imported from {where}, not from the fresh venv"
    assert version == metadata.version("posteval")
    no_lib = subprocess.run([str(py), "-c", "import lib"], cwd=outside, capture_output=True, text=True, env=env)
    assert no_lib.returncode != 0 and "No module named 'lib'" in no_lib.stderr
    console = venv / "bin" / "protocol-report"
    said = subprocess.run([str(console), "--version"], capture_output=True, text=True, cwd=outside, env=env)
    assert said.returncode == 0 and said.stdout.strip() == f"posteval {version}", said.stderr
    subprocess.run([str(py), "-c", TOY], cwd=outside, check=True, env=env)
    args = [a for name in ("exact", "copy", "wide", "shuffled") for a in ("--samples", f"{name}={name}.npy")]
    rep = subprocess.run([str(console), *args, "--truth", "truth.npy", "--dims", "y1,y2", "--ci", "0.95", "--quiet",
                          "--out", "report"], capture_output=True, text=True, cwd=outside, env=env)
    assert rep.returncode == 0, rep.stderr[-3000:]
    payload = json.loads((outside / "report" / "protocol.json").read_text())
    leads = {(r["metric"], r["dimension"], frozenset((r["best"], r["other"]))): r["verdict"] for r in payload["leads"]}
    pair = lambda a, b: frozenset((a, b))  # noqa: E731
    tie = [v for (metric, _, p), v in leads.items() if metric == "crps" and p == pair("exact", "copy")]
    resolved = [v for (metric, _, p), v in leads.items() if metric == "crps" and "wide" in p]
    correlation = [v for (metric, _, p), v in leads.items() if metric == "energy_score" and p == pair("exact", "shuffled")]
    assert tie and set(tie) == {"not resolved"}, leads
    assert resolved and set(resolved) == {"yes"}, leads
    assert correlation == ["yes"], leads
    assert payload["provenance"]["posteval_version"] == version


def test_a_missing_extra_names_the_pip_command():
    script = "import sys; sys.modules['torch'] = None; import posteval.models"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=book.ROOT)
    assert run.returncode != 0
    assert "posteval.models needs torch" in run.stderr and 'pip install "posteval[models]"' in run.stderr


def test_import_lib_from_the_repository_root_is_an_error():
    """One identity per module: ``lib`` is the source root, not a package."""
    run = subprocess.run([sys.executable, "-c", "import lib"], capture_output=True, text=True, cwd=book.ROOT)
    assert run.returncode != 0 and "use 'import posteval'" in run.stderr


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
