"""The library as a package: a wheel of `posteval` installs into a fresh venv offline and works
there, missing extras name their pip command, and `import posteval` changes no global state."""

import json
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path
import tomllib
from importlib import metadata

import pytest
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
    not, ``protocol-report --version`` answers, and a report with ``--level 0.95`` on toy models
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
    rep = subprocess.run([str(console), *args, "--truth", "truth.npy", "--dims", "y1,y2", "--level", "0.95", "--quiet",
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


#: import names each extra brings beyond the base install (pyproject.toml, [project.optional-dependencies])
EXTRA_MODULES = {
    "models": {"torch", "functorch", "torchgen", "zuko"},
    "physics": {"pythia8mc", "fastjet", "awkward", "awkward_cpp", "vector", "h5py"},
    "rubric": {"transformers", "trl", "tokenizers", "accelerate", "datasets"},
    "io": {"h5py", "pyarrow"},
}
#: what imports with the base install and one extra; and one module of each other extra, which must fail
#: naming its pip command
PARTS = {
    "base": ["posteval", "posteval.metrics", "posteval.plotting", "posteval.data", "posteval.data.prior",
             "posteval.physics.coordinates", "posteval.physics.joint_coordinates", "posteval.runtime"],
    "models": ["posteval.models", "posteval.data.ttbar_features", "posteval.data.lepton_frame",
               "posteval.models.event_models"],
    "physics": ["posteval.physics.kinematics", "posteval.physics.ttbar", "posteval.physics.neutrino_weighting",
                "posteval.physics.consistency"],
}
GATED = {"models": "posteval.models", "physics": "posteval.physics.kinematics"}


def _venv_with(tmp_path, extras: set[str]):
    """A fresh venv whose site-packages sees this environment's packages except those of the extras not in
    ``extras`` (a folder of links), and the package's sources (lib/)."""
    drop = set().union(*(m for e, m in EXTRA_MODULES.items() if e not in extras)) - set().union(
        *(EXTRA_MODULES[e] for e in extras))
    farm = tmp_path / "site"
    farm.mkdir()
    here = Path(sysconfig.get_path("purelib"))
    for entry in here.iterdir():
        top = entry.name.split("-")[0].split(".")[0]
        if top in drop or entry.suffix == ".pth" or top.startswith("__editable__") or top == "posteval":
            continue
        (farm / entry.name).symlink_to(entry)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "deps.pth").write_text(f"{farm}\n{book.ROOT / 'lib'}\n")
    return py


@pytest.mark.parametrize("extra", list(PARTS))
def test_each_part_imports_with_what_it_needs(tmp_path, extra):
    """In a fresh venv with the base install and one extra, that part imports (and the parts below it); a
    part of an extra not installed fails naming its pip command."""
    extras = set() if extra == "base" else {extra}
    py = _venv_with(tmp_path, extras)
    wanted = PARTS["base"] + ([] if extra == "base" else PARTS[extra])
    env = {"PATH": "/usr/bin:/bin", "MPLBACKEND": "Agg", "HOME": str(tmp_path)}
    run = subprocess.run([str(py), "-c", "import importlib, sys\nfor m in sys.argv[1:]: importlib.import_module(m)",
                          *wanted], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert run.returncode == 0, f"with [{extra}]: {run.stderr[-2000:]}"
    for other, module in GATED.items():
        if other in extras:
            continue
        miss = subprocess.run([str(py), "-c", f"import {module}"], capture_output=True, text=True, cwd=tmp_path, env=env)
        assert miss.returncode != 0 and f'pip install "posteval[{other}]"' in miss.stderr, (
            f"with [{extra}], import {module}: {miss.stderr[-1500:]}")
