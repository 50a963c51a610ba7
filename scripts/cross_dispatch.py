"""Cross-dispatch check: do the book's portable kernel settings give the same digits whatever the CPU's own
best path is?

No second CPU is at hand, so the CPU is emulated by the knobs that decide which instructions each library
may use: ``MKL_ENABLE_INSTRUCTIONS`` (MKL's widest ISA), ``ONEDNN_MAX_CPU_ISA`` (oneDNN's), oneDNN switched
on or off (``torch.backends.mkldnn``), ``NPY_DISABLE_CPU_FEATURES`` (numpy's dispatched SIMD) and
``ATEN_CPU_CAPABILITY`` / ``MKL_CBWR`` themselves. Each *setting* below is run in a fresh process (the
libraries read these variables once, at their first use) that computes

* the kernels the chapters' training uses (matmul, exp, softmax, layer norm, attention, numpy's
  transcendental functions and sorts ...) on inputs that are the same bits on every CPU, and
* the training cells of the chapters in miniature: every model class of ``posteval.models`` fitted for
  a fixed number of steps through the book's own ``fit`` (the model contract's one-batch fits, on three
  seeds: each must drop its loss by ``CONTRACT_MARGIN`` times what the contract test asks, under every
  setting, so that the test passes whatever the rounding), chapter
  3's four event models at the ci encoder's size for two epochs on 2,048 events, and their draws,

and prints the SHA-256 of each result. Two groups of settings:

* **portable**: :data:`posteval.runtime.PORTABLE_KERNELS` (with oneDNN off, as the chapters run) and then
  with one *CPU knob* forced each time (MKL's and oneDNN's widest ISA from SSE4.1 to all, numpy without
  its AVX2 kernels, as on a CPU that lacks them). The check
  passes when every portable setting gives the same hash for every item: the settings insulate the
  digits from what the CPU offers.
* **controls**: settings that leave one library to the CPU (ATen's AVX2 kernels, MKL's own dispatch,
  oneDNN on, numpy's own SIMD). They must *differ* from the portable digits on some item: otherwise the check could not have
  seen a difference, and its "identical" would be no evidence.

Run from the repository root (``make test-other-machine`` runs it):

    .venv/bin/python scripts/cross_dispatch.py [--json out.json] [--compare results/kernels/<machine>.json]

``--compare`` also checks this machine's portable hashes against those another machine wrote with ``--json``
(``results/kernels/`` keeps them, with the CPU and the commit): the same hashes on an Intel and an AMD CPU
are the cross-vendor measurement this check cannot make on one CPU. Hashes depend on the code, so only files
of the same commit (or of commits that did not change the hashed code) compare.

Exit status 0 when the portable settings agree on every item and every control differs somewhere, 1
otherwise; the table printed names each item that differs, per setting.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))

from posteval.runtime import PORTABLE_KERNELS  # noqa: E402

#: Knobs that emulate another CPU's best path, each forced on top of the portable settings.
CPU_KNOBS = {
    "MKL to SSE4.2": {"MKL_ENABLE_INSTRUCTIONS": "SSE4_2"},
    "MKL to AVX2": {"MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "MKL to AVX-512": {"MKL_ENABLE_INSTRUCTIONS": "AVX512"},
    "oneDNN to SSE4.1": {"ONEDNN_MAX_CPU_ISA": "SSE41"},
    "oneDNN to all": {"ONEDNN_MAX_CPU_ISA": "ALL"},
    "numpy without AVX2": {"NPY_DISABLE_CPU_FEATURES": "X86_V3"},
}
#: The model contract's one-batch fits must drop the loss by this many times what the test asks, under every
#: setting (controls included: other rounding), so that the test passes on any machine's rounding.
CONTRACT_MARGIN = 1.25
#: Settings that leave one library to the CPU: they must change some digit (the check's power).
CONTROLS = {
    "ATen's AVX2 kernels": {"ATEN_CPU_CAPABILITY": "avx2"},
    "MKL's own dispatch": {"MKL_CBWR": "AUTO"},
    "oneDNN on, at its AVX2 kernels": {"POSTEVAL_ONEDNN_ON": "1", "ONEDNN_MAX_CPU_ISA": "AVX2"},
    "numpy's own SIMD": {"NPY_DISABLE_CPU_FEATURES": ""},
}

CHILD = r'''
import hashlib, json, os, sys
import numpy as np
import torch
from posteval.runtime import seed_everything

ONEDNN_ON = bool(os.environ.get("POSTEVAL_ONEDNN_ON"))
def seed(s):
    """The chapters' seeding (portable kernels included); a control may switch oneDNN back on."""
    seed_everything(s, threads=1)
    torch.backends.mkldnn.enabled = ONEDNN_ON

seed(0)
out = {"# capability": torch.backends.cpu.get_cpu_capability(),
       "# numpy": ",".join(sorted(k for k, v in np._core._multiarray_umath.__cpu_features__.items() if v))}

def h(x):
    if isinstance(x, torch.Tensor):
        x = x.detach().cpu().numpy()
    if isinstance(x, (list, tuple)):
        return hashlib.sha256(b"".join(np.ascontiguousarray(np.asarray(v)).tobytes() for v in x)).hexdigest()[:16]
    return hashlib.sha256(np.ascontiguousarray(np.asarray(x)).tobytes()).hexdigest()[:16]

# -- kernels, on inputs that are the same bits on every CPU (integers from numpy's bit generator)
rng = np.random.default_rng(1)
def rand(*shape, dtype=np.float32):
    return (rng.integers(-2**20, 2**20, size=shape) / 2**18).astype(dtype)
A, B, v = torch.from_numpy(rand(257, 129)), torch.from_numpy(rand(129, 65)), torch.from_numpy(rand(4096))
F = torch.nn.functional
kern = {"matmul": A @ B, "bmm": torch.bmm(A[:256].reshape(8, 32, 129), A[:256].reshape(8, 129, 32)),
        "exp": v.exp(), "log": v.abs().add(1e-3).log(), "tanh": v.tanh(), "sigmoid": v.sigmoid(),
        "softplus": F.softplus(v), "gelu": F.gelu(v), "silu": F.silu(v), "erf": torch.erf(v),
        "softmax": torch.softmax(A, 1), "log_softmax": torch.log_softmax(A, 1), "logsumexp": torch.logsumexp(A, 1),
        "sum": A.sum(1), "var": A.var(0), "norm": A.norm(dim=1), "pow1.5": v.abs().pow(1.5),
        "layer_norm": F.layer_norm(A, (129,)), "atan2": torch.atan2(v, v.flip(0)), "cumsum": v.cumsum(0),
        "cdist": torch.cdist(A[:64], A[64:128])}
x64 = rand(4096, dtype=np.float64); x32 = x64.astype(np.float32)
for name, f in {"exp": np.exp, "log": lambda a: np.log(np.abs(a) + 1e-3), "sin": np.sin, "cos": np.cos,
                "tanh": np.tanh, "arctan2": lambda a: np.arctan2(a, a[::-1]), "log1p": lambda a: np.log1p(np.abs(a)),
                "expm1": np.expm1, "power": lambda a: np.power(np.abs(a), 1.5), "sqrt": lambda a: np.sqrt(np.abs(a)),
                "sum": lambda a: a.reshape(64, 64).sum(1), "matmul": lambda a: a.reshape(64, 64) @ a.reshape(64, 64),
                "erf-like cumsum": np.cumsum}.items():
    kern[f"np.{name} f64"] = f(x64)
    kern[f"np.{name} f32"] = f(x32)
ties = np.round(x64 * 4) / 4
kern["np.sort"] = np.sort(x64); kern["np.argsort ties"] = np.argsort(ties); kern["np.argsort ties f32"] = np.argsort(ties.astype(np.float32))
kern["np.quantile"] = np.quantile(x64.reshape(64, 64), [0.05, 0.5, 0.95], axis=1)
for k, x in kern.items():
    out["kernel " + k] = h(x)

# -- the chapters' training cells in miniature: every model class through the book's fit
sys.path.insert(0, "tests")
from test_model_contract import MODELS, batch_of, context_and_target, one_batch_fit
from posteval.models import TrainingSettings
margins = {}
for name, (build, kind, steps, lr) in MODELS.items():
    for s in range(3):   # the contract test's fit (seed 0), and two more draws of model and batch
        seed(0)
        torch.manual_seed(s)
        model = build()
        context, x = context_and_target(kind, seed=s)
        before, after, asked = one_batch_fit(model, batch_of(context, x), steps, lr)
        margins[f"{name} seed {s}"] = (before - after) / asked
        out[f"fit {name} seed {s}"] = h([p for p in model.state_dict().values()])
    if hasattr(model, "sample"):
        out["draws " + name] = h(model.sample(context, 4, generator=torch.Generator().manual_seed(1)))
out["# contract margins"] = margins

# -- chapter 3's event models at the ci encoder's size: two epochs on 2,048 events
import yaml
from posteval.models import train_model
from posteval.models.event_models import build_event_model
p = yaml.safe_load(open("params/ci/03_top_quark.yaml"))
g = torch.Generator().manual_seed(0)
def events(n):
    return (torch.randn(n, 4, generator=g), torch.randn(n, 2, 6, generator=g), torch.randn(n, 6, 5, generator=g),
            torch.rand(n, 6, generator=g) < 0.7, torch.randn(n, 6, generator=g))
train, val = events(2048), events(512)
settings = TrainingSettings(**{**p["training"], "epochs": 2, "patience": 3})
for kind in ("transformer_mse", "transformer_mmd", "flow", "cfm"):
    seed(1)
    model, hist = train_model(lambda: build_event_model(kind, (4, 6, 5), p["encoder"], p["heads"][kind]), train, val,
                              settings, seed=1, disable=True)
    out["ch3 fit " + kind] = h([p for p in model.state_dict().values()])
    out["ch3 val loss " + kind] = h(np.asarray(hist.val_loss))
print(json.dumps(out))
'''


def settings() -> dict[str, dict[str, str]]:
    """Every setting the check runs: the portable one, with each CPU knob forced, and the controls."""
    portable = dict(PORTABLE_KERNELS)
    runs = {"portable": portable}
    for name, knob in CPU_KNOBS.items():
        extra = dict(knob)
        if "NPY_DISABLE_CPU_FEATURES" in extra:  # on top of the portable numpy setting
            extra["NPY_DISABLE_CPU_FEATURES"] = f"{portable.get('NPY_DISABLE_CPU_FEATURES', '')} {extra['NPY_DISABLE_CPU_FEATURES']}".strip()
        runs[f"portable, {name}"] = {**portable, **extra}
    for name, knob in CONTROLS.items():
        runs[f"control: {name}"] = {**portable, **knob}
    return runs


def run(env_extra: dict[str, str]) -> tuple[dict[str, str], float]:
    """One fresh process under ``env_extra`` (every kernel variable not named is removed): its hashes and CPU-s."""
    names = set(PORTABLE_KERNELS) | {k for s in (*CPU_KNOBS.values(), *CONTROLS.values()) for k in s}
    env = {k: v for k, v in os.environ.items() if k not in names}  # nothing inherited from the caller
    env.update(env_extra)
    env.setdefault("OMP_NUM_THREADS", "1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "lib"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    t0 = os.times()
    proc = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, capture_output=True, text=True)
    t1 = os.times()
    if proc.returncode != 0:
        raise RuntimeError(f"the check's child failed under {env_extra}:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1]), (t1.children_user - t0.children_user
                                                            + t1.children_system - t0.children_system)


def _cpu() -> str:
    """The CPU's model name (Linux), else the platform's machine name."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def _commit() -> str:
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return out.stdout.strip() or "unknown"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, help="write every setting's hashes here")
    ap.add_argument("--compare", type=Path, help="another machine's --json file: its portable hashes must equal ours")
    args = ap.parse_args(argv)
    other = json.loads(args.compare.read_text()) if args.compare else None
    results, cpu = {}, {}
    for name, env in settings().items():
        t = time.time()
        results[name], cpu[name] = run(env)
        print(f"ran {name:42s} {cpu[name]:6.1f} CPU-s  ({time.time() - t:.0f} s)", flush=True)
    ref = results["portable"]
    items = [k for k in ref if not k.startswith("#")]
    ok = True
    worst = {name: min(res["# contract margins"].items(), key=lambda kv: kv[1]) for name, res in results.items()}
    print(f"\nthe model contract's one-batch fits (3 seeds each) drop the loss by at least {CONTRACT_MARGIN} times "
          "what the test asks, under every setting:")
    for name, (fit_name, ratio) in worst.items():
        good = ratio >= CONTRACT_MARGIN
        ok &= good
        print(f"    {name:44s} smallest {ratio:5.2f} ({fit_name}){'' if good else '  TOO SMALL'}")
    print(f"\n{len(items)} items; reference: the portable setting ({ref['# capability']}, numpy {ref['# numpy']})")
    for name, res in results.items():
        if name == "portable":
            continue
        diff = [k for k in items if res.get(k) != ref[k]]
        control = name.startswith("control")
        good = bool(diff) if control else not diff
        ok &= good
        verdict = ("differs, as a control must" if diff else "IDENTICAL: the check cannot see this control") \
            if control else ("identical" if not diff else "DIFFERS")
        print(f"{name:44s} {len(diff):3d} of {len(items)} differ: {verdict}")
        for k in diff[:12]:
            print(f"    {k}")
        if len(diff) > 12:
            print(f"    ... and {len(diff) - 12} more")
    if other is not None:
        theirs = other["results"]["portable"]
        diff = [k for k in items if theirs.get(k) != ref[k]]
        print(f"\nagainst {args.compare} ({other.get('cpu', '?')}, commit {other.get('commit', '?')}): "
              f"{len(diff)} of {len(items)} portable hashes differ" + "".join(f"\n    {k}" for k in diff[:20]))
        ok &= not diff
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"cpu": _cpu(), "commit": _commit(), "results": results, "cpu_seconds": cpu,
                                         "ok": ok}, indent=1) + "\n")
    print("\ncross-dispatch check:", "passed" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
