"""Which basin a label-trained proxy's run lands in: the seed's setup, or the rollout noise?

For a few seeds, one setup each (world, data, cold start, proxies, judges), the same condition is
run with several rollout streams (prompt order and sampled completions). If the final transfer
splits by setup and not by rollout stream, the setup decides the basin. Command line::

    python -m posteval.rubric.basins --params params/full/04_proxy_rubric.yaml \\
        --out results/full/04_proxy_rubric_basins.json --seeds 0 2 --rollouts 0 1 2
"""

from __future__ import annotations

import argparse
import time

import pandas as pd
import torch
import yaml
from posteval.progress import tqdm

from .experiment import build_setup, run_condition
from .provenance import sweep_provenance
from .sweep import check_seeds, split_params, write_json


def rollout_replicates(config, seeds, rollouts, *, condition: str = "proxy_sft", progress: bool = True) -> pd.DataFrame:
    """One row per (seed, rollout stream): the final test metrics of ``condition``."""
    seeds, rollouts = check_seeds(seeds), check_seeds(rollouts)
    rows = []
    for s in tqdm(seeds, desc="setups", disable=not progress):
        setup = build_setup(config, s)
        sens = setup.sensitivity.set_index("judge")
        for r in rollouts:
            res = run_condition(setup, condition, rollout_seed=r)
            rows.append({"seed": s, "rollout": r, "condition": condition, **res["final"],
                         "proxy_sensitivity": float(sens.loc[condition, "sensitivity"])
                         if condition in sens.index else float("nan"),
                         "cold_transfer": setup.cold_start["transfer"], "cold_rubric_f1": setup.cold_start["rubric_f1"]})
    return pd.DataFrame(rows)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--params", default="params/full/04_proxy_rubric.yaml")
    p.add_argument("--out", default="results/full/04_proxy_rubric_basins.json")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 2])
    p.add_argument("--rollouts", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--condition", default="proxy_sft")
    args = p.parse_args(argv)
    with open(args.params) as fh:
        config, _, _ = split_params(yaml.safe_load(fh) or {})
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    df = rollout_replicates(config, args.seeds, args.rollouts, condition=args.condition)
    out = {"config": config.to_dict(), "condition": args.condition, "rows": df.to_dict(orient="records"),
           "provenance": sweep_provenance(workers=1, wall_seconds=time.perf_counter() - t0,
                                          command="python -m posteval.rubric.basins " + " ".join(argv or []))}
    write_json(out, args.out)
    return out


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
