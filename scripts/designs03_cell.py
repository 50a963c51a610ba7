# Appended to chapter 3's cells by scripts/designs03.sh (runs in the chapter's namespace, ci sizes).
import json
from pathlib import Path
import subprocess
import sys
import time
from datetime import datetime, timezone

sys.path.insert(0, "../scripts")

from posteval.data.lepton_frame import JointFrameTargets, LeptonFrameTargets
from posteval.metrics.intervals import event_interval, paired_event_interval, stack_seeds
from posteval.models.inference import draw_samples
from posteval.models.training import TrainingSettings
from posteval.physics.consistency import consistency_scores
from posteval.physics.kinematics import truth_matched_bjets

ev = {k: subset_events(events, idx) for k, idx in split.items()}
frame = LeptonFrameTargets.fit(parts["train"])  # chapter 3 v4 no longer trains in these coordinates itself
frame_tensors = {k: (*t[:4], torch.as_tensor(frame.to_standard(parts[k]))) for k, t in tensors.items()}
joint = JointFrameTargets.fit(parts["train"])
joint_tensors = {k: (*t[:4], torch.as_tensor(joint.to_standard(parts[k]))) for k, t in tensors.items()}
bjets_test, _ = truth_matched_bjets(ev["test"]["jet_p4"], ev["test"]["jet_truth_index"])
_, matched = matched_observables(ev["test"], ev["test"]["neutrino_momenta"])


def scores(nu):
    return consistency_scores(ev["test"]["lep_p4"], bjets_test, np.reshape(nu, (len(truth), -1, 2, 3)),
                              ev["test"]["met"], matched=matched)


def crps_per_event(samples):
    return np.mean([metrics.crps_ensemble(samples[..., j], truth[:, j]) for j in range(6)], axis=0)


flow_build = partial(build_event_model, "flow", dims, encoder, heads["flow"])
DESIGNS = {  # name: (what the flow models, build, training tensors, samples -> GeV)
    "cartesian": ("(px, py, pz) of each neutrino, standardised (the nu2flows convention)", flow_build, tensors,
                  lambda raw: physical(raw)),
    "lepton_frame": ("D: (log m^2, tau, psi) of each neutrino about its lepton", flow_build, frame_tensors,
                     lambda raw: frame.to_physical(raw, parts["test"])),
    "joint_feasible": ("FH: the region where both W-mass constraints can hold as a coordinate "
                       "(theta, s, r_x, r_y, y_nu, y_nubar)", flow_build, joint_tensors,
                       lambda raw: joint.to_physical(raw, parts["test"])),
}
physical = scaler.targets_to_physical
i_flow = KINDS.index("flow")
per_design, epochs, train_seconds = {}, {}, {}
truth_scores = scores(truth)
import pickle
PARTS = Path("/tmp/designs03/parts")
PARTS.mkdir(parents=True, exist_ok=True)
for name, (_, build, data, to_gev) in DESIGNS.items():
    part = PARTS / f"{name}.pkl"
    if part.exists():  # a design already measured by an interrupted run of this commit's code
        per_design[name], epochs[name], train_seconds[name] = pickle.loads(part.read_bytes())
        continue
    t0 = time.perf_counter()
    out = train_models([(build, s + i_flow) for s in SEEDS], data["train"], data["val"],
                       TrainingSettings(**training, lr_schedule=lr_schedule),
                       train_rows=[train_rows[s] for s in SEEDS], threads=threads, workers=train_workers,
                       device=device, progress=False)
    train_seconds[name] = time.perf_counter() - t0
    epochs[name] = [h.epochs for _, h in out]
    rows = []
    for s, (model, _) in zip(SEEDS, out):
        raw = draw_samples(model, tensors["test"][:4], m_samples, batch_size=sample_batch, seed=s, device=device)
        nu = to_gev(raw)
        rows.append({**scores(nu), "crps": crps_per_event(nu.reshape(len(truth), -1, 6))})
    per_design[name] = rows
    part.write_bytes(pickle.dumps((rows, epochs[name], train_seconds[name])))
    print(name, f"{train_seconds[name]:.0f} s", epochs[name], flush=True)

TRANSFORM = {"w_window.nu": "logit", "w_window.nubar": "logit", "top_window": "logit", "met_closure": "log",
             "mt_excess": "logit", "crps": "identity"}
record_out = {"meta": {
    "what": "chapter 3's flow in four coordinate designs, ci sizes, the chapter's seeds and test events",
    "designs": {k: v[0] for k, v in DESIGNS.items()},
    "commit": subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip(),
    "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    "command": "bash scripts/designs03.sh",
    "profile": "ci", "seeds": SEEDS, "n_test_events": int(len(truth)), "m_samples": int(m_samples),
    "epochs": epochs, "train_seconds": {k: round(v) for k, v in train_seconds.items()},
}}
for k in truth_scores:
    t = truth_scores[k]
    record_out[f"{k}.truth"] = float(np.mean(t))
for name, rows in per_design.items():
    for k, how in TRANSFORM.items():
        block = stack_seeds([r[k] for r in rows])
        finite_range = how != "logit" or (0 < block.mean() < 1)
        iv = event_interval(block, transform=how if finite_range else "identity")
        record_out[f"{k}.{name}"], record_out[f"{k}_lo.{name}"], record_out[f"{k}_hi.{name}"] = iv.estimate, iv.lo, iv.hi
    d = paired_event_interval(stack_seeds([r["crps"] for r in rows]),
                              stack_seeds([r["crps"] for r in per_design["cartesian"]]))
    record_out[f"crps_diff.{name}"], record_out[f"crps_diff_lo.{name}"], record_out[f"crps_diff_hi.{name}"] = \
        d.estimate, d.lo, d.hi
path = Path("../results/designs/03_neutrino_coordinates.json")
path.write_text(json.dumps(record_out, indent=1) + "\n")
pd.DataFrame({n: {k: record_out[f"{k}.{n}"] for k in TRANSFORM} for n in DESIGNS}).T
