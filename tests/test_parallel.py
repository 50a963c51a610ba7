"""posteval.parallel: the executor seam (in-process, process pool, Dask), and its users on a LocalCluster.

One local Dask cluster (2 process workers, 1 thread each) serves the module: parton-level event
generation (same bytes as serial, resume, a killed worker), the rubric sweep, and the faults of the
seam (errors, an unreachable scheduler, pool workers of a killed parent).
"""

import argparse
import contextlib
import hashlib
import math
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from functools import partial

import numpy as np
import pandas as pd
import psutil
import pytest

from posteval import parallel
from posteval.paths import ROOT
from posteval.physics import ttbar
from posteval.physics.event_file import stored_hash_matches
from posteval.rubric.experiment import RubricConfig
from posteval.rubric.sweep import run_sweep
from tests.rubric.conftest import TINY

N_EVENTS, SEED = 1000, 4  # 10 chunks of 100 parton-level events


def _sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _config():
    return ttbar.make_config("parton", chunk_events=100, batch_events=100)


def _generate(cache, **kwargs):
    return ttbar.load_or_generate(N_EVENTS, seed=SEED, mode="parton", cache_dir=cache, config=_config(),
                                  progress=False, **kwargs)


@pytest.fixture(scope="module")
def client():
    with parallel.dask_client(n_workers=2) as c:
        c.run(__import__, "posteval.physics.chunks")  # imports outside the tests' timing
        yield c


@pytest.fixture(scope="module")
def serial_file(tmp_path_factory):
    return _generate(tmp_path_factory.mktemp("serial"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the seam ---------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["serial", "pool", "dask"])
def test_results_in_item_order_and_a_bar_over_jobs(where, client, capsys):
    kwargs = {"serial": {}, "pool": {"workers": 2}, "dask": {"client": client}}[where]
    seen = []
    parallel.for_each_completed(math.factorial, [5, 3, 4, 6], lambda i, r: seen.append((i, r)), desc="facts",
                                initial=2, **kwargs)
    assert sorted(seen) == [(0, 120), (1, 6), (2, 24), (3, 720)]
    assert "facts: 100%" in capsys.readouterr().err.replace("\r", "\n").splitlines()[-1]
    assert parallel.map_jobs(math.factorial, [5, 3, 4], progress=False, **kwargs) == [120, 6, 24]


@pytest.mark.parametrize("where", ["serial", "pool", "dask"])
def test_a_failing_job_raises_its_error(where, client):
    kwargs = {"serial": {}, "pool": {"workers": 2}, "dask": {"client": client}}[where]
    with pytest.raises(ValueError):
        parallel.map_jobs(math.factorial, [3, -1, 4], progress=False, **kwargs)


@pytest.mark.parametrize("where", ["pool", "dask"])
def test_background_jobs_return_what_map_jobs_returns_and_wait_only_for_the_asked(where, client):
    kwargs = {"pool": {"workers": 2}, "dask": {"client": client}}[where]
    sleeps = parallel.BackgroundJobs(time.sleep, [0, 4, 0], **kwargs)  # importable by spawned workers
    start = time.perf_counter()
    assert sleeps.results([2, 0]) == [None, None]
    assert time.perf_counter() - start < 3, "waited for a job it was not asked for"
    with pytest.raises(TimeoutError, match=r"\[1\]"):
        sleeps.results([1], timeout=0.01)
    assert sleeps.first_done([1, 2]) == 2  # the one that has ended, not the first asked for
    assert sleeps.results([1]) == [None] and time.perf_counter() - start >= 4
    assert sleeps.first_done([1, 0]) == 0  # both ended: the earlier one
    jobs = parallel.BackgroundJobs(math.factorial, [5, 3, 4], **kwargs)
    assert jobs.results([0, 1, 2]) == parallel.map_jobs(math.factorial, [5, 3, 4], progress=False, **kwargs)


def test_background_jobs_name_the_jobs_a_failure_stopped():
    jobs = parallel.BackgroundJobs(math.factorial, [3, -1], workers=1)
    # job 0 may or may not be handed over before job 1's error ends the pool
    with pytest.raises(RuntimeError, match=r"jobs \[(0, )?1\] did not finish") as err:
        jobs.results([0, 1])
    assert isinstance(err.value.__cause__, ValueError)
    with pytest.raises(IndexError, match="outside"):
        jobs.results([2])
    assert parallel.BackgroundJobs(math.factorial, []).results([]) == []


def test_bad_arguments():
    with pytest.raises(ValueError, match="workers"):
        parallel.map_jobs(math.factorial, [1], workers=0)
    with pytest.raises(ValueError, match="initial"):
        parallel.map_jobs(math.factorial, [1], initial=-1)
    with pytest.raises(ValueError, match="exactly one"):
        with parallel.dask_client():
            pass
    with pytest.raises(ValueError, match="tcp://"):
        with parallel.dask_client("localhost:8786"):
            pass


def test_unreachable_scheduler_names_the_address():
    address = f"tcp://127.0.0.1:{_free_port()}"
    start = time.perf_counter()
    with pytest.raises(ConnectionError, match=address):
        with parallel.dask_client(address, timeout=2):
            pass
    assert time.perf_counter() - start < 30


def test_unreachable_scheduler_is_one_line_on_the_command_line(monkeypatch, capsys):
    address = f"tcp://127.0.0.1:{_free_port()}"
    monkeypatch.setattr(parallel, "dask_client", partial(parallel.dask_client, timeout=1))
    with pytest.raises(SystemExit) as exit_:
        ttbar.main(["--events", "10", "--mode", "parton", "--scheduler", address, "--no-progress"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1
    assert err.startswith(f"error: --scheduler: no Dask scheduler answered at {address} within 1 s")


@pytest.mark.parametrize("argv, message", [
    (["--events", "0"], "argument --events: expected an integer >= 1, got '0'"),
    (["--events", "10", "--workers", "0"], "argument --workers: expected an integer >= 1, got '0'"),
    (["--events", "10", "--seed", "-1"], "argument --seed: expected an integer >= 0, got '-1'"),
    (["--events", "10", "--dask-workers", "0"], "argument --dask-workers: expected an integer >= 1, got '0'"),
])
def test_bad_command_line_numbers_are_named(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        ttbar.main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


def _listeners(pids):
    """(pid, ip, port) of every listening TCP socket of the processes ``pids``."""
    out = []
    for pid in pids:
        out += [(pid, c.laddr.ip, c.laddr.port) for c in psutil.Process(pid).net_connections(kind="inet")
                if c.status == psutil.CONN_LISTEN]
    return out


def test_every_listener_of_the_local_cluster_is_on_loopback(client):
    """Scheduler, nannies, workers, their HTTP pages and the dashboard: 127.0.0.1 only."""
    workers = set(client.run(os.getpid).values())
    listeners = _listeners({os.getpid(), *workers})
    dashboard = int(client.dashboard_link.split(":")[2].split("/")[0])
    assert {port for _, _, port in listeners} >= {dashboard}
    assert {pid for pid, _, _ in listeners} >= workers  # every worker listens (comm and HTTP)
    assert {ip for _, ip, _ in listeners} == {"127.0.0.1"}, listeners
    assert parallel.LOCAL_DASHBOARD == "127.0.0.1:0"


def test_the_dashboard_option_reaches_the_local_cluster(monkeypatch):
    seen = {}

    @contextlib.contextmanager
    def fake_client(scheduler, n_workers, **kwargs):
        seen.update(kwargs)
        yield "client"

    monkeypatch.setattr(parallel, "dask_client", fake_client)
    parser = argparse.ArgumentParser()
    parallel.add_cluster_arguments(parser)
    for argv, address in ((["--dask-workers", "2"], "127.0.0.1:0"),
                          (["--dask-workers", "2", "--dask-dashboard", "0.0.0.0:8787"], "0.0.0.0:8787")):
        with parallel.client_from_arguments(parser.parse_args(argv)) as c:
            assert c == "client" and seen["dashboard_address"] == address


def test_pool_workers_exit_with_a_killed_parent(tmp_path):
    script = textwrap.dedent("""
        import time
        from posteval.parallel import map_jobs
        map_jobs(time.sleep, [60, 60], workers=2, progress=False)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": str(ROOT / "lib")})
    try:
        deadline = time.time() + 60
        workers = []
        while time.time() < deadline and len(workers) < 2:
            time.sleep(0.2)
            workers = [p for p in psutil.Process(parent.pid).children(recursive=True)
                       if "resource_tracker" not in " ".join(p.cmdline())]
        assert len(workers) == 2, "the pool did not start its two workers"
        descendants = psutil.Process(parent.pid).children(recursive=True)
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()

    def alive(p):
        try:
            return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            return False

    deadline = time.time() + 10
    while time.time() < deadline and any(alive(p) for p in descendants):
        time.sleep(0.1)
    assert not [p.pid for p in descendants if alive(p)]


# --- event generation on the cluster ------------------------------------------------------------

def test_dask_file_is_byte_identical_to_serial(client, serial_file, tmp_path):
    path = _generate(tmp_path, client=client)
    assert path.name == serial_file.name and _sha(path) == _sha(serial_file)
    assert not (tmp_path / f"{serial_file.stem}.chunks").exists()


@pytest.mark.parametrize("where", ["pool", "dask"])
def test_interrupted_run_resumes(where, client, serial_file, tmp_path, monkeypatch):
    kwargs = {"pool": {"n_workers": 2}, "dask": {"client": client}}[where]
    real = ttbar.write_chunk_file
    written = []

    def interrupted(job, events, chunk_dir):
        if len(written) == 3:
            raise KeyboardInterrupt("simulated interruption")
        written.append(job.index)
        return real(job, events, chunk_dir)

    monkeypatch.setattr(ttbar, "write_chunk_file", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _generate(tmp_path, **kwargs)
    chunk_dir = tmp_path / f"{serial_file.stem}.chunks"
    assert not (tmp_path / serial_file.name).exists()
    assert sorted(p.name for p in chunk_dir.glob("chunk_*.h5")) == [f"chunk_{i:05d}_n100.h5" for i in sorted(written)]

    def counting(job, events, chunk_dir):
        written.append(job.index)
        return real(job, events, chunk_dir)

    first = sorted(written)
    written.clear()
    monkeypatch.setattr(ttbar, "write_chunk_file", counting)
    path = _generate(tmp_path, **kwargs)
    assert sorted(written) == sorted(set(range(10)) - set(first))  # only the missing chunks ran
    assert _sha(path) == _sha(serial_file)


def test_worker_killed_mid_run(client, serial_file, tmp_path):
    pids = client.run(os.getpid)
    seen = {}

    def kill_a_busy_worker():
        deadline = time.time() + 60
        while time.time() < deadline and not list(tmp_path.glob("*.chunks/chunk_*.h5")):
            time.sleep(0.005)
        busy = [addr for addr, keys in client.processing().items() if keys]
        seen["final_existed"] = (tmp_path / serial_file.name).exists()
        if busy:
            seen["victim"] = pids[busy[0]]
            os.kill(seen["victim"], signal.SIGKILL)

    killer = threading.Thread(target=kill_a_busy_worker)
    killer.start()
    path = _generate(tmp_path, client=client)
    killer.join()
    assert "victim" in seen and not seen["final_existed"], "no worker was busy when the first chunk landed"
    assert seen["victim"] not in client.run(os.getpid).values()  # the nanny started a new worker
    assert stored_hash_matches(path) and _sha(path) == _sha(serial_file)


# --- the rubric sweep on the cluster ------------------------------------------------------------

def test_sweep_on_dask_matches_serial(client):
    config, conditions = RubricConfig(**{**TINY, "ensemble_size": 0}), ["proxy_sft"]
    serial = run_sweep(config, conditions, [0], progress=False)
    dask = run_sweep(config, conditions, [0], client=client, progress=False)
    pd.testing.assert_frame_equal(serial.final.drop(columns="seconds"), dask.final.drop(columns="seconds"))
    pd.testing.assert_frame_equal(serial.sensitivity, dask.sensitivity)
    assert np.isfinite(dask.final["transfer"]).all()
