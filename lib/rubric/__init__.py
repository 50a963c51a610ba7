"""Proxy-rubric reward models in miniature (chapter 4): a CPU-sized Proxy-GRM with its claims tested.

Modules
-------
task        world (hidden relevant criteria per query type), vocabulary, preference pairs, prompts
grammar     completion grammar ``rubric </rubric> evals </eval> verdict``, strict format check,
            the rubric segment a proxy may read, teacher (cold-start) completions
reward      upstream's reward values ``r_acc + r_proxy + 0.5 r_format`` and the ``use_fb`` modes
judges      rule follower E1, learned set judge E2, reader proxies (Proxy-SFT, -RL, -SFT-follow),
            ensembles, rubric sensitivity
policy      tiny causal transformer, sampling with a KV cache, cold-start SFT
grpo        group advantages, k3 KL, clipped token-mean GRPO loss
evaluate    held-out metrics: verdict accuracy, transfer (E1, E2), rationalisation, rubric F1,
            eval faithfulness, verdict-eval consistency
experiment  per-seed setup shared by all conditions, the RL conditions, one GRPO run
sweep       conditions x seeds in worker processes; ``python -m lib.rubric.sweep``
report      tables, contract numbers and plots for the chapter
bridge      the same environment as text through ``trl.GRPOTrainer`` with a local tiny Qwen2
"""
