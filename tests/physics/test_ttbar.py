"""posteval.physics.ttbar: generation of dileptonic ttbar events: truth sanity, caching, resuming, a full
disk, reproducibility (the detector, chunks and event files: tests/physics/test_detector.py,
test_chunks.py, test_event_file.py)."""

import errno
import hashlib
import io
import os
import shutil
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import h5py
import numpy as np
import pytest

from posteval.paths import ROOT
from posteval.physics import event_file, ttbar
from posteval.physics import fourvectors as fv
from posteval.physics.config import GenerationConfig
from posteval.physics.event_file import read_attrs, stored_hash_matches, write_atomic


def _sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture(scope="module")
def shower_file(tmp_path_factory):
    start = time.perf_counter()
    path = ttbar.load_or_generate(800, seed=3, mode="shower", cache_dir=tmp_path_factory.mktemp("c"),
                                  progress=False)
    return path, time.perf_counter() - start


@pytest.fixture(scope="module")
def shower_events(shower_file):
    return ttbar.read_events(shower_file[0])


def test_few_hundred_events_take_seconds(shower_file):
    path, seconds = shower_file
    assert seconds < 20.0
    attrs = read_attrs(path)
    assert attrs["n_generated"] == 800
    assert attrs["n_truth_failed"] == 0
    assert stored_hash_matches(path)


def test_truth_masses_and_one_object_of_each(shower_events):
    ev = shower_events
    n = len(ev["met"])
    assert 0.2 * 800 < n < 0.45 * 800  # selection efficiency measured 0.29 on 10k events
    top_m = fv.mass(ev["top_p4"])
    w_m = fv.mass(ev["w_p4"])
    assert np.median(top_m) == pytest.approx(172.5, abs=0.5)
    assert np.median(w_m) == pytest.approx(80.4, abs=0.5)
    # One of each object, with the right charges: l+ (id < 0) pairs with nu (id > 0).
    assert np.all(ev["lep_truth_pdgid"][:, 0] < 0) and np.all(ev["lep_truth_pdgid"][:, 1] > 0)
    assert np.all(np.isin(np.abs(ev["lep_truth_pdgid"]), [11, 13]))
    assert np.all(ev["nu_pdgid"][:, 0] > 0) and np.all(ev["nu_pdgid"][:, 1] < 0)
    assert np.all(np.abs(ev["nu_pdgid"]) == np.abs(ev["lep_truth_pdgid"]) + 1)
    # W -> l nu holds with the Born lepton up to the shower recoil.
    w_rebuilt = fv.mass(ev["lep_born_p4"] + ev["nu_p4"])
    assert np.median(np.abs(w_rebuilt - w_m)) < 1.0
    assert np.all(ev["neutrino_momenta"] == ev["nu_p4"][..., :3])


def test_detector_objects(shower_events):
    ev = shower_events
    assert np.all(ev["lep_charge"][:, 0] == 1) and np.all(ev["lep_charge"][:, 1] == -1)
    assert np.all(ev["lep_pt"] > 25) and np.all(np.abs(ev["lep_eta"]) < 2.5)
    assert np.all(ev["n_jets"] >= 2) and np.all(ev["n_bjets"] >= 1)
    assert np.all(ev["n_jets"] == ev["jet_mask"].sum(1))
    assert np.all(ev["jet_pt"][ev["jet_mask"]] > 25)
    assert np.all(ev["jet_pt"][~ev["jet_mask"]] == 0)
    assert np.all(np.diff(ev["jet_pt"], axis=1) <= 0)  # leading first, zero padding last
    # Dressed, smeared leptons stay close to the truth leptons; MET to the neutrinos.
    rel = ev["lep_pt"] / fv.pt(ev["lep_truth_p4"]) - 1
    q25, q50, q75 = np.percentile(rel, [25, 50, 75])
    assert abs(q50) < 0.01 and 0.002 < (q75 - q25) / 1.349 < 0.05
    assert np.all(rel > -0.5)
    met_res = ev["met"] - ev["nu_p4"][..., :2].sum(1)
    assert 3.0 < np.std(met_res) < 25.0
    # Isolation leaves no jet on top of a lepton.
    dr = fv.delta_r(ev["jet_eta"][:, :, None], ev["jet_phi"][:, :, None], ev["lep_eta"][:, None], ev["lep_phi"][:, None])
    assert np.mean(dr[ev["jet_mask"]].min(-1) < 0.4) < 0.01
    # Matched b-jets are mostly b-tagged, other jets rarely.
    matched = ev["jet_truth_index"] >= 0
    assert ev["jet_btag"][matched].mean() > 0.6
    assert ev["jet_btag"][ev["jet_mask"] & (ev["jet_flavour"] == 0)].mean() < 0.1


def test_cache_is_reused(shower_file, monkeypatch):
    path, _ = shower_file

    def boom(job):
        raise AssertionError("should not generate")

    monkeypatch.setattr(ttbar, "run_chunk", boom)
    again = ttbar.load_or_generate(800, seed=3, mode="shower", cache_dir=path.parent, progress=False)
    assert again == path


def _parton_config(chunk=300):
    return ttbar.make_config("parton", chunk_events=chunk, batch_events=150)


def test_same_seed_same_bytes_across_workers(tmp_path):
    cfg = _parton_config()
    a = ttbar.load_or_generate(600, seed=5, mode="parton", cache_dir=tmp_path / "a", config=cfg, progress=False)
    b = ttbar.load_or_generate(600, seed=5, mode="parton", cache_dir=tmp_path / "b", config=cfg, progress=False,
                               n_workers=2)
    c = ttbar.load_or_generate(600, seed=5, mode="parton", cache_dir=tmp_path / "c", config=cfg, progress=False,
                               n_workers=2)
    d = ttbar.load_or_generate(600, seed=6, mode="parton", cache_dir=tmp_path / "d", config=cfg, progress=False)
    assert _sha(a) == _sha(b) == _sha(c)
    assert read_attrs(a)["content_hash"] != read_attrs(d)["content_hash"]
    # Compressed (chunked) HDF5 datasets store uninitialised edge-chunk bytes: keep them contiguous.
    with h5py.File(a, "r") as f:
        layouts = []
        f.visititems(lambda name, obj: layouts.append(obj.chunks) if isinstance(obj, h5py.Dataset) else None)
    assert layouts and all(chunk is None for chunk in layouts)


def test_interrupted_run_resumes(tmp_path, monkeypatch):
    cfg = _parton_config(chunk=200)
    real = ttbar.run_chunk
    calls = []

    def failing(job):
        if job.index == 1:
            raise KeyboardInterrupt("simulated interruption")
        calls.append(job.index)
        return real(job)

    monkeypatch.setattr(ttbar, "run_chunk", failing)
    with pytest.raises(KeyboardInterrupt):
        ttbar.load_or_generate(600, seed=9, mode="parton", cache_dir=tmp_path / "x", config=cfg, progress=False)
    assert not list((tmp_path / "x").glob("*.h5"))  # no half-written final file
    assert len(list((tmp_path / "x").glob("*.chunks/chunk_*.h5"))) == 1
    assert not list((tmp_path / "x").rglob("*.tmp*"))

    def counting(job):
        calls.append(job.index)
        return real(job)

    calls.clear()
    monkeypatch.setattr(ttbar, "run_chunk", counting)
    resumed = ttbar.load_or_generate(600, seed=9, mode="parton", cache_dir=tmp_path / "x", config=cfg, progress=False)
    assert calls == [1, 2]
    fresh = ttbar.load_or_generate(600, seed=9, mode="parton", cache_dir=tmp_path / "y", config=cfg, progress=False)
    assert _sha(resumed) == _sha(fresh)


def test_corrupt_cache_is_regenerated(tmp_path):
    cfg = _parton_config()
    path = ttbar.load_or_generate(300, seed=1, mode="parton", cache_dir=tmp_path, config=cfg, progress=False)
    digest = _sha(path)
    with h5py.File(path, "r+") as f:
        f["delphes/njets"][0] = 99
    assert not stored_hash_matches(path)
    again = ttbar.load_or_generate(300, seed=1, mode="parton", cache_dir=tmp_path, config=cfg, progress=False)
    assert _sha(again) == digest


@pytest.mark.parametrize("kwargs", [
    {"n_events": 0}, {"n_events": 10, "seed": -1}, {"n_events": 10, "mode": "bogus"},
    {"n_events": 10, "n_workers": 0}, {"n_events": 2.5},
])
def test_bad_arguments_raise(kwargs, tmp_path):
    with pytest.raises(ValueError):
        ttbar.load_or_generate(cache_dir=tmp_path, progress=False, **kwargs)


def test_config_validation_and_roundtrip(shower_file):
    with pytest.raises(ValueError):
        GenerationConfig(mode="hadron")
    with pytest.raises(ValueError):
        GenerationConfig(chunk_events=0)
    assert ttbar.generation_config_of(shower_file[0]) == ttbar.make_config("shower")


def test_cache_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("POINTWISE_CACHE", str(tmp_path))
    assert ttbar.default_cache_dir() == tmp_path
    monkeypatch.delenv("POINTWISE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert ttbar.default_cache_dir() == tmp_path / "xdg" / "posteval" / "events"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert ttbar.default_cache_dir() == Path.home() / ".cache" / "posteval" / "events"
    package = Path(ttbar.__file__).resolve().parents[1]
    assert package not in ttbar.default_cache_dir().parents, "the default cache lies beside the installed package"


def test_cache_dir_and_chunk_size_must_be_valid(tmp_path):
    with pytest.raises(ValueError, match="cache_dir"):
        ttbar.load_or_generate(10, mode="parton", cache_dir="", progress=False)
    with pytest.raises(ValueError, match="chunk_events"):
        ttbar.make_config("parton", chunk_events=2.7)
    with pytest.raises(ValueError, match="batch_events"):
        GenerationConfig(batch_events=True)
    assert GenerationConfig(chunk_events=np.int64(300)).to_json() == GenerationConfig(chunk_events=300).to_json()


_RACER = """
import pathlib, sys, time
from posteval.physics import ttbar
go = pathlib.Path(sys.argv[2])
while not go.exists():
    time.sleep(0.01)
cfg = ttbar.make_config("parton", chunk_events=100, batch_events=150)
print(ttbar.load_or_generate(600, seed=8, mode="parton", cache_dir=sys.argv[1], config=cfg, progress=True))
"""


def test_two_processes_share_one_cache_dir(tmp_path):
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}
    racers = [subprocess.Popen([sys.executable, "-c", _RACER, str(cache), str(tmp_path / f"go{i}")], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in (0, 1)]
    (tmp_path / "go0").touch()
    deadline = time.time() + 120
    while time.time() < deadline and not list(cache.glob("*.chunks/chunk_*.h5")):
        time.sleep(0.005)
    first_busy = not list(cache.glob("*.h5"))
    (tmp_path / "go1").touch()  # the second starts while the first is generating
    outs = [r.communicate(timeout=300) for r in racers]
    assert [r.returncode for r in racers] == [0, 0], outs[1][1][-2000:]
    assert first_busy and "waiting for another process" in outs[1][1]
    paths = [out.strip().splitlines()[-1] for out, _ in outs]
    assert paths[0] == paths[1]
    path = cache / paths[0].split("/")[-1]
    assert stored_hash_matches(path)
    assert sorted(p.name for p in cache.iterdir()) == sorted([path.name, path.stem + ".lock"])
    cfg = _parton_config(100)
    alone = ttbar.load_or_generate(600, seed=8, mode="parton", cache_dir=tmp_path / "alone", config=cfg,
                                   progress=False)
    assert _sha(alone) == _sha(path)


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(done.stdout)


def test_leftovers_of_dead_and_finished_runs_are_removed(tmp_path):
    dead = _dead_pid()
    stale = [tmp_path / f"ttbar_other.h5.tmp{dead}", tmp_path / "ttbar_gone.chunks" / f"chunk_00000_n5.h5.tmp{dead}"]
    finished = tmp_path / "ttbar_done.chunks"
    unfinished = tmp_path / "ttbar_gone.chunks"
    live = tmp_path / f"ttbar_live.h5.tmp{os.getpid()}"
    for d in (finished, unfinished):
        d.mkdir()
    (finished / "chunk_00000_n5.h5").write_bytes(b"x")
    (tmp_path / "ttbar_done.h5").write_bytes(b"x")
    for p in stale + [live]:
        p.write_bytes(b"x")
    path = ttbar.load_or_generate(200, seed=2, mode="parton", cache_dir=tmp_path, config=_parton_config(100),
                                  progress=False)
    assert not any(p.exists() for p in stale) and not finished.exists()
    assert live.exists() and unfinished.is_dir()  # a live process's file; chunks kept for resuming
    assert not path.with_suffix(".chunks").exists()
    removed = ttbar.clean_cache(tmp_path)
    assert removed == [unfinished] and not unfinished.exists() and path.exists() and live.exists()


def test_command_line_generates_the_same_file(tmp_path):
    path = ttbar.main(["--events", "300", "--seed", "3", "--mode", "parton", "--cache-dir", str(tmp_path / "cli"),
                       "--no-progress"])
    direct = ttbar.load_or_generate(300, seed=3, mode="parton", cache_dir=tmp_path / "direct", progress=False)
    assert path.name == direct.name and _sha(path) == _sha(direct)


def _no_leftovers(cache):
    return not list(cache.rglob("*.tmp*")) and not list(cache.glob("*.h5"))


def test_too_little_free_space_is_one_oserror_before_writing(tmp_path, monkeypatch):
    cfg = _parton_config(100)
    cache = tmp_path / "cache"
    real = shutil.disk_usage

    def usage(path, *, full):
        total, used, free = real(path)
        return type(real(path))(total, used, 1000 if full(Path(path)) else free)

    monkeypatch.setattr(shutil, "disk_usage", partial(usage, full=lambda p: True))
    with pytest.raises(OSError) as err:
        ttbar.load_or_generate(200, seed=2, mode="parton", cache_dir=cache, config=cfg, progress=False)
    assert err.value.errno == errno.ENOSPC and "not enough free space to write chunk_00000_n100.h5" in str(err.value)
    assert _no_leftovers(cache) and not list(cache.glob("*.chunks/*.h5"))
    monkeypatch.setattr(shutil, "disk_usage", partial(usage, full=lambda p: p == cache))  # room for chunks only
    with pytest.raises(OSError, match=r"not enough free space to write ttbar_parton_n200_s2_\w+\.h5"):
        ttbar.load_or_generate(200, seed=2, mode="parton", cache_dir=cache, config=cfg, progress=False)
    assert _no_leftovers(cache) and len(list(cache.glob("*.chunks/*.h5"))) == 2  # kept for the rerun
    monkeypatch.setattr(shutil, "disk_usage", real)
    again = ttbar.load_or_generate(200, seed=2, mode="parton", cache_dir=cache, config=cfg, progress=False)
    fresh = ttbar.load_or_generate(200, seed=2, mode="parton", cache_dir=tmp_path / "fresh", config=cfg, progress=False)
    assert _sha(again) == _sha(fresh)


class _DiskFullAfter(io.FileIO):
    """A file whose writes fail with ENOSPC once ``budget`` bytes are written, like a filling disk."""

    def __init__(self, path, budget):
        super().__init__(path, "w+")
        self.budget = budget

    def write(self, data):
        size = memoryview(data).nbytes
        if size > self.budget:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.budget -= size
        return super().write(data)


@pytest.mark.parametrize("victim", ["chunk_00001", "ttbar_parton"])
def test_disk_full_during_a_write_is_one_oserror_and_the_rerun_is_identical(victim, tmp_path, monkeypatch, capfd):
    """ENOSPC in the middle of a chunk file or of the final concatenation never reaches HDF5."""
    cfg = _parton_config(100)
    cache = tmp_path / "cache"

    def filling_open(path, mode="r", buffering=-1):
        if Path(path).name.startswith(victim):
            return _DiskFullAfter(path, budget=4096)
        return io.open(path, mode, buffering=buffering)

    monkeypatch.setattr(event_file, "open", filling_open, raising=False)
    with pytest.raises(OSError) as err:
        ttbar.load_or_generate(300, seed=3, mode="parton", cache_dir=cache, config=cfg, progress=False)
    assert err.value.errno == errno.ENOSPC and "\n" not in str(err.value)
    assert f"could not write {victim}" in str(err.value) and "No space left on device" in str(err.value)
    assert "HDF5" not in capfd.readouterr().err  # no error stack of HDF5 ("Can't decrement id ref count")
    assert _no_leftovers(cache)
    assert len(list(cache.glob("*.chunks/*.h5"))) == (1 if victim.startswith("chunk") else 3)
    monkeypatch.undo()
    again = ttbar.load_or_generate(300, seed=3, mode="parton", cache_dir=cache, config=cfg, progress=False)
    fresh = ttbar.load_or_generate(300, seed=3, mode="parton", cache_dir=tmp_path / "fresh", config=cfg, progress=False)
    assert _sha(again) == _sha(fresh)


def test_a_cached_file_of_another_version_is_made_again_with_a_message(tmp_path, monkeypatch, capsys):
    cfg = _parton_config(100)
    fresh = ttbar.load_or_generate(200, seed=4, mode="parton", cache_dir=tmp_path / "fresh", config=cfg, progress=False)
    monkeypatch.setattr(ttbar, "PYTHIA_VERSION", "8.316")  # a file written with another Pythia
    old = ttbar.load_or_generate(200, seed=4, mode="parton", cache_dir=tmp_path, config=cfg, progress=False)
    monkeypatch.undo()
    arrays, attrs = event_file.read_contents(old)
    assert attrs["pythia_version"] == "8.316"
    again = ttbar.load_or_generate(200, seed=4, mode="parton", cache_dir=tmp_path, config=cfg, progress=False)
    assert _sha(again) == _sha(fresh)
    assert f"{old}: pythia_version is '8.316', not '8.317'; generating it again" in capsys.readouterr().err
    attrs.pop("content_hash")
    write_atomic(old, arrays, {**attrs, "pythia_version": "8.317", "n_generated": 199})  # intact, but not this run's
    again = ttbar.load_or_generate(200, seed=4, mode="parton", cache_dir=tmp_path, config=cfg, progress=False)
    assert _sha(again) == _sha(fresh)
    assert "n_generated is 199, not 200" in capsys.readouterr().err
