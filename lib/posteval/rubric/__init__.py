"""Proxy-rubric reward models in miniature (chapter 4): a CPU-sized Proxy-GRM with its claims tested.

Modules
-------
task        world (hidden relevant criteria per query type), vocabulary, preference pairs, prompts
grammar     completion grammar ``rubric </rubric> evals </eval> verdict``, strict format check,
            the rubric segment a proxy may read, teacher (cold-start) completions
reward      upstream's reward values ``r_acc + r_proxy + 0.5 r_format`` and the ``use_fb`` modes
judges      rule follower E1, learned set judge E2, reader proxies (Proxy-SFT, -RL, -SFT-follow),
            ensembles, rubric sensitivity
held_out_judges  judges independent of every proxy: E3 (most decisive criterion), E4 (learned from
            a majority-of-criteria annotator on its own pairs)
proxy_data  the proxies' targets from the task's own data (labels, the teacher's own-rubric verdicts)
policy      tiny causal transformer, sampling with a KV cache, cold-start SFT
grpo        group advantages, k3 KL, clipped token-mean GRPO loss
evaluate    held-out metrics: verdict accuracy, transfer (E1, E2), rationalisation, rubric F1,
            eval faithfulness, verdict-eval consistency
experiment  per-seed setup shared by all conditions, the RL conditions, one GRPO run
sweep       conditions x seeds in worker processes; ``python -m posteval.rubric.sweep``
report      tables, contract numbers and plots for the chapter
claims      claims (a)-(f), leak, order, unseen as paired verdicts over seeds (posteval.metrics.verdicts), the
            source's claims that cannot be tested here, a run extended after a look decided on its new seeds
basins      same setup, several rollout streams: what decides a label-trained proxy's basin
basin_tests the registered basin test: exact McNemar per pair, its words by the one rule (Holm over the pairs)
provenance  commit, library versions, machine, workers and wall time of a sweep record
bridge      the same environment as text through ``trl.GRPOTrainer`` with a local tiny Qwen2
"""

from posteval._extras import require

require("posteval.rubric", "torch", extra="rubric")
