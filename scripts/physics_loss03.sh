#!/usr/bin/env bash
# Issue 25, a design tried: chapter 3's cells up to its model definitions (ci sizes), then the
# lepton-frame flow with and without the MET likelihood term (scripts/physics_loss03.py), one seed.
# Usage: bash scripts/physics_loss03.sh [WEIGHT ...]   (writes /tmp/physics_loss03/out.ipynb)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUT_DIR:-/tmp/physics_loss03}
mkdir -p "$out"
.venv/bin/python - "$out" "${@:-1.0}" <<'PY'
import sys
sys.path.insert(0, "scripts")
from chapter03_prefix import write_notebook
out, weights = sys.argv[1], [float(w) for w in sys.argv[2:]]
write_notebook(out, f"""
import sys, time
sys.path.insert(0, "../scripts")
from physics_loss03 import PhysicsTermFlow, frame_tensors as aux_of
from posteval.physics.consistency import consistency_scores
from posteval.physics.kinematics import truth_matched_bjets, met_resolution
from posteval.models.training import TrainingSettings, train_models
from posteval.models.inference import draw_samples
ev = {{k: subset_events(events, idx) for k, idx in split.items()}}
s0 = SEEDS[0]
from posteval.data.lepton_frame import LeptonFrameTargets
frame = LeptonFrameTargets.fit(parts["train"])  # chapter 3 v4 no longer defines it
frame_tensors = {{k: (*t[:4], torch.as_tensor(frame.to_standard(parts[k]))) for k, t in tensors.items()}}
i = 4  # the seed offset the lepton-frame flow had in chapter 3 v3 (KINDS.index("flow_physics"))
aux = {{k: aux_of(parts[k], frame) for k in ("train", "val")}}
data = {{k: (*frame_tensors[k][:4], aux[k], frame_tensors[k][4]) for k in ("train", "val")}}
sigma = float(met_resolution(events))
lo = np.concatenate([frame.guards.lo, np.full((2, 1), -np.inf)], axis=1)
hi = np.concatenate([frame.guards.hi, np.full((2, 1), np.inf)], axis=1)
bjets_test, _ = truth_matched_bjets(ev["test"]["jet_p4"], ev["test"]["jet_truth_index"])
_, matched = matched_observables(ev["test"], ev["test"]["neutrino_momenta"])
def scores(nu):
    sc = consistency_scores(ev["test"]["lep_p4"], bjets_test, np.reshape(nu, (len(truth), -1, 2, 3)),
                            ev["test"]["met"], matched=matched)
    return {{k: float(np.mean(v)) for k, v in sc.items()}}
def crps_of(samples):
    return float(np.mean([metrics.crps(samples[..., j], truth[:, j]).mean() for j in range(6)]))
rows = {{"truth": scores(truth)}}
def build(weight):
    base = build_event_model("flow", dims, encoder, heads["flow"])
    return PhysicsTermFlow(base.encoder, 6, mean=frame.mean, sd=frame.sd, lo=lo, hi=hi, sigma=sigma,
                           weight=weight, **heads["flow"])
for name, make, d in [("lepton-frame flow", partial(build_event_model, "flow", dims, encoder, heads["flow"]), frame_tensors)] + \\
        [(f"+ MET term, weight {{w}}", partial(build, w), data) for w in {weights!r}]:
    t0 = time.perf_counter()
    (model, hist), = train_models([(make, s0 + i)], d["train"], d["val"], TrainingSettings(**training, lr_schedule=lr_schedule),
                                  train_rows=[train_rows[s0]], threads=2, workers=1, device=device, progress=False)
    secs = time.perf_counter() - t0
    raw = draw_samples(model, tensors["test"][:4], m_samples,
                       batch_size=sample_batch, seed=s0, device=device)
    nu = frame.to_physical(raw, parts["test"])
    rows[name] = {{**scores(nu), "CRPS [GeV]": crps_of(nu), "epochs": hist.epochs, "train s": round(secs)}}
    print(name, rows[name], flush=True)
pd.DataFrame(rows).T
""")
PY
.venv/bin/papermill "$out/in.ipynb" "$out/out.ipynb" -f params/ci/03_top_quark.yaml --cwd chapters --log-output
