"""One seed's setup (world, data, cold-start policy, proxies, held-out judges) and one RL condition.

Everything a condition depends on except its reward is fixed per seed in :class:`Setup` and shared
by all conditions: the same cold-start policy, the same frozen proxies, the same held-out judges,
the same test pairs and the same rollout random numbers.
"""

from __future__ import annotations

import copy
import time
from dataclasses import asdict, dataclass, field, fields, replace

import numpy as np
import pandas as pd
import torch
from posteval.progress import tqdm

from . import grammar
from .evaluate import completion_metrics
from .grpo import group_advantages, grpo_loss
from .judges import (PROXY_TRAINING, Ensemble, ReaderProxy, RuleJudge, SetJudge, rubric_sensitivity, train_proxy,
                     train_set_judge, verifier_fidelity)
from .held_out_judges import build_held_out
from .proxy_data import teacher_rubric_verdicts
from .policy import PolicyLM, build_policy, completion_logprobs, generate, sft
from .reward import accuracy_reward, aggregation_mode, combine, proxy_reward
from .task import Pairs, World, encode_prompts, make_world, sample_pairs


@dataclass(frozen=True)
class RubricConfig:
    """Sizes and hyper-parameters of the miniature (defaults: the full profile of the chapter)."""

    # world
    n_types: int = 128
    n_criteria: int = 8
    n_generic: int = 2
    n_relevant: int = 2
    n_levels: int = 4
    max_rubric: int = 3
    # data
    n_sft: int = 2048
    n_proxy: int = 1536
    n_rl: int = 4096
    n_test: int = 1024
    p_good: float = 0.4
    label_noise: float = 0.0
    # policy and cold start
    d_model: int = 64
    n_layers: int = 2
    n_heads: int = 4
    d_ff: int = 128
    sft_epochs: int = 30
    sft_batch_size: int = 256
    sft_lr: float = 6e-3
    # proxies and held-out judge
    proxy_epochs: int = 40
    proxy_rl_data_factor: int = 2
    ensemble_size: int = 3
    e2_n: int = 4096
    e2_epochs: int = 25
    held_out_n: int = 4096
    held_out_epochs: int = 25
    order_bias: float = 1.3862943611198906  # log 4: the order-biased proxy says "1" unless P(2) > 0.8
    # GRPO
    group_size: int = 8
    prompts_per_step: int = 32
    rl_epochs: int = 2
    lr: float = 3e-4
    beta: float = 0.01
    clip: float = 0.2
    n_minibatches: int = 2
    temperature: float = 1.0
    grad_clip: float = 1.0
    eval_every: int = 16

    def __post_init__(self):
        for f in fields(self):
            v = getattr(self, f.name)
            if f.type in ("int", int):
                if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                    raise ValueError(f"{f.name} must be an int, got {v!r}")
                lo = 0 if f.name in ("n_generic", "ensemble_size") else 1
                if v < lo:
                    raise ValueError(f"{f.name} must be >= {lo}, got {v!r}")
            else:
                if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)) or not np.isfinite(v):
                    raise ValueError(f"{f.name} must be a finite number, got {v!r}")
        if self.group_size < 2:
            raise ValueError(f"group_size must be >= 2, got {self.group_size}")
        if not 0.0 <= self.p_good <= 1.0:
            raise ValueError(f"p_good must be in [0, 1], got {self.p_good}")
        if self.prompts_per_step % self.n_minibatches:
            raise ValueError(f"prompts_per_step ({self.prompts_per_step}) must be divisible by "
                             f"n_minibatches ({self.n_minibatches})")
        if self.prompts_per_step > self.n_rl:
            raise ValueError(f"prompts_per_step ({self.prompts_per_step}) exceeds n_rl ({self.n_rl})")
        for name in ("lr", "sft_lr", "clip", "temperature", "grad_clip"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.beta < 0:
            raise ValueError(f"beta must be >= 0, got {self.beta}")

    @classmethod
    def from_dict(cls, d: dict) -> "RubricConfig":
        """Build from a mapping, raising ValueError on unknown keys."""
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - names)
        if unknown:
            raise ValueError(f"unknown RubricConfig keys: {unknown}")
        return cls(**d)

    def to_dict(self) -> dict:
        return asdict(self)

    @property
    def max_new(self) -> int:
        return grammar.max_completion_len(self.max_rubric)


@dataclass(frozen=True)
class Condition:
    """An RL condition: which proxy (None: no proxy term), aggregation mode, share of the RL prompts."""

    proxy: str | None = "sft"
    mode: str = "additive"
    ensemble: bool = False
    data_fraction: float = 1.0
    leak: bool = False  # the proxy sees the answer segment: it returns the completion's verdict when there is one
    order_biased: bool = False  # the proxy's logit for "response 1" gets + config.order_bias
    note: str = ""


#: Conditions of the chapter. Claims: (a)/(b) no_proxy vs proxy_sft; (c) proxy_sft vs proxy_rl
#: (and proxy_follow); (d) ensemble3; (e) agg_*; (f) proxy_sft_quarter vs no_proxy; leak, order,
#: unseen: proxy_sft_leak, proxy_sft_order, proxy_sft_unseen against proxy_sft / no_proxy.
CONDITIONS = {
    "no_proxy": Condition(proxy=None, note="r_acc + 0.5 r_format"),
    "proxy_sft": Condition(proxy="sft", note="additive, Proxy-SFT"),
    "proxy_rl": Condition(proxy="rl", note="additive, Proxy-RL"),
    "proxy_follow": Condition(proxy="follow", note="additive, Proxy-SFT on rubric-following targets"),
    "ensemble3": Condition(proxy="sft", ensemble=True, note="additive, mean vote of bootstrap Proxy-SFTs"),
    "ensemble3_follow": Condition(proxy="follow", ensemble=True,
                                  note="additive, mean vote of bootstrap Proxy-SFT-follows"),
    "ensemble_mixed": Condition(proxy="mixed", ensemble=True,
                                note="additive, mean vote of Proxy-SFT, Proxy-RL and Proxy-SFT-follow "
                                     "(heterogeneous: other objectives and training data)"),
    "agg_and_gate": Condition(proxy="sft", mode="and_gate", note="use_fb=1"),
    "agg_gate": Condition(proxy="sft", mode="gate", note="use_fb=2"),
    "agg_modulated": Condition(proxy="sft", mode="modulated", note="use_fb=3"),
    "agg_implicit": Condition(proxy="sft", mode="implicit", note="use_fb=7"),
    "agg_and_gate_follow": Condition(proxy="follow", mode="and_gate", note="use_fb=1, Proxy-SFT-follow"),
    "agg_gate_follow": Condition(proxy="follow", mode="gate", note="use_fb=2, Proxy-SFT-follow"),
    "agg_modulated_follow": Condition(proxy="follow", mode="modulated", note="use_fb=3, Proxy-SFT-follow"),
    "agg_implicit_follow": Condition(proxy="follow", mode="implicit", note="use_fb=7, Proxy-SFT-follow"),
    "proxy_sft_quarter": Condition(proxy="sft", data_fraction=0.25, note="Proxy-SFT, N/4 RL prompts"),
    "proxy_follow_quarter": Condition(proxy="follow", data_fraction=0.25, note="Proxy-SFT-follow, N/4 RL prompts"),
    "no_proxy_quarter": Condition(proxy=None, data_fraction=0.25, note="no proxy, N/4 RL prompts"),
    "proxy_sft_leak": Condition(proxy="sft", leak=True, note="Proxy-SFT that sees the answer segment"),
    "proxy_sft_order": Condition(proxy="sft", order_biased=True, note="Proxy-SFT biased toward response 1"),
    "proxy_sft_unseen": Condition(proxy="sft_unseen",
                                  note="Proxy-SFT that never saw the last criterion in a training rubric"),
}

#: The members of the heterogeneous ensemble (condition ensemble_mixed): proxies trained with other
#: objectives (preference labels; RL on a pool proxy_rl_data_factor x as large; rubric-following targets).
MIXED_MEMBERS = ("sft", "rl", "follow")
#: Proxy kinds that get a bootstrap ensemble of ``ensemble_size`` members (setup key, member seed offset).
ENSEMBLES = {"sft": ("ensemble", 100), "follow": ("ensemble_follow", 200)}


def seed_stream(seed: int, tag: int) -> np.random.Generator:
    """Independent random stream number `tag` of a seed (one per data split, model or run)."""
    return np.random.default_rng([int(seed), int(tag)])


@dataclass
class Setup:
    """Everything fixed per seed. Picklable, so it can be sent to worker processes."""

    config: RubricConfig
    seed: int
    world: World
    rl_pairs: Pairs
    test_pairs: Pairs
    policy: PolicyLM
    proxies: dict  # name -> ReaderProxy ("sft", "rl", "follow", "sft_unseen") or list for "ensemble"
    judge_e2: SetJudge
    sensitivity: pd.DataFrame
    cold_start: dict  # cold-start policy metrics on the test pairs
    sft_loss: list
    seconds: dict
    held_out: dict = field(default_factory=dict)  # independent judges E3, E4 (held_out_judges.HELD_OUT)


def _train_proxies(world: World, proxy_pool: Pairs, pool_flags, pool_verdicts, c: RubricConfig, seed: int) -> dict:
    """The seed's proxies by name (:attr:`Setup.proxies`), trained on the teacher rubrics of the proxy pool:
    Proxy-SFT, -RL and -SFT-follow, the unseen-criterion proxy and the bootstrap ensembles, in this order."""
    training = replace(PROXY_TRAINING, epochs=c.proxy_epochs)
    n = c.n_proxy
    head = proxy_pool.subset(np.arange(n))
    # The unseen-criterion proxy: the same head with every pair whose teacher rubric names the last criterion dropped.
    seen = np.flatnonzero(pool_flags[:n, -1] == 0)
    proxies = {
        "sft": train_proxy(world, head, pool_flags[:n], "sft", seed=seed, settings=training),
        "rl": train_proxy(world, proxy_pool, pool_flags, "rl", seed=seed, settings=training),
        "follow": train_proxy(world, head, pool_flags[:n], "follow", seed=seed, settings=training,
                              rubric_verdicts=pool_verdicts[:n]),
        "sft_unseen": train_proxy(world, head.subset(seen), pool_flags[seen], "sft", seed=seed, settings=training),
    }
    for kind, (key, offset) in ENSEMBLES.items():
        members = []
        for m in range(c.ensemble_size):
            idx = seed_stream(seed, offset + m).integers(0, n, n)
            members.append(train_proxy(world, head.subset(idx), pool_flags[idx], kind,
                                       seed=seed * 1000 + offset + m, settings=training,
                                       rubric_verdicts=pool_verdicts[idx] if kind == "follow" else None))
        if members:
            proxies[key] = members
    return proxies


def _all_judges(proxies: dict, judge_e2: SetJudge, held_out: dict) -> dict:
    """Every judge of a seed by name (the proxies, their ensembles, E1, E2 and the held-out judges)."""
    judges = {"proxy_sft": proxies["sft"], "proxy_rl": proxies["rl"], "proxy_follow": proxies["follow"],
              "proxy_sft_unseen": proxies["sft_unseen"]}
    for key, _ in ENSEMBLES.values():
        if key in proxies:
            judges[key] = Ensemble(proxies[key])
    judges.update({"judge_e2": judge_e2, "judge_rule": RuleJudge(), **held_out})
    return judges


def build_setup(config: RubricConfig, seed: int, *, progress: bool = False) -> Setup:
    """World, data, cold-start SFT policy, proxies and E2 for one seed (deterministic)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    seed = int(seed)
    c = config
    t0 = time.perf_counter()
    secs = {}
    world = make_world(seed_stream(seed, 0), n_types=c.n_types, n_criteria=c.n_criteria, n_generic=c.n_generic,
                       n_relevant=c.n_relevant, n_levels=c.n_levels)
    vocab = world.vocab
    sft_pairs = sample_pairs(world, c.n_sft, seed_stream(seed, 1), label_noise=c.label_noise)
    proxy_pool = sample_pairs(world, c.n_proxy * c.proxy_rl_data_factor, seed_stream(seed, 2), label_noise=c.label_noise)
    rl_pairs = sample_pairs(world, c.n_rl, seed_stream(seed, 3), label_noise=c.label_noise)
    test_pairs = sample_pairs(world, c.n_test, seed_stream(seed, 4))
    # Cold start on teacher distillation data.
    sft_comp, _ = grammar.teacher_completions(world, sft_pairs, seed_stream(seed, 5), p_good=c.p_good,
                                              max_rubric=c.max_rubric)
    policy = build_policy(vocab, world.prompt_len, c.max_new, seed=seed, d_model=c.d_model, n_layers=c.n_layers,
                          n_heads=c.n_heads, d_ff=c.d_ff)
    sft_loss = sft(policy, encode_prompts(world, sft_pairs), torch.as_tensor(sft_comp), pad=vocab.PAD,
                   epochs=c.sft_epochs, batch_size=c.sft_batch_size, lr=c.sft_lr, seed=seed, progress=progress)
    secs["cold_start"] = time.perf_counter() - t0
    # Proxies: trained on teacher rubrics, then frozen.
    t1 = time.perf_counter()
    pool_comp, _ = grammar.teacher_completions(world, proxy_pool, seed_stream(seed, 6), p_good=c.p_good,
                                               max_rubric=c.max_rubric)
    pool_flags = grammar.rubric_flags(vocab, pool_comp)
    pool_verdicts = teacher_rubric_verdicts(vocab, pool_comp, max_rubric=c.max_rubric)
    proxies = _train_proxies(world, proxy_pool, pool_flags, pool_verdicts, c, seed)
    secs["proxies"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    judge_e2 = train_set_judge(world, n=c.e2_n, seed=seed + 7919, epochs=c.e2_epochs)
    secs["judge_e2"] = time.perf_counter() - t2
    t3 = time.perf_counter()
    held_out = build_held_out(world, n=c.held_out_n, seed=int(seed_stream(seed, 9).integers(2**31)),
                              epochs=c.held_out_epochs)
    secs["held_out"] = time.perf_counter() - t3
    sens = rubric_sensitivity(_all_judges(proxies, judge_e2, held_out), world, test_pairs, seed_stream(seed, 8))
    sens.insert(0, "seed", seed)
    prompts = encode_prompts(world, test_pairs)
    comp, _ = generate(policy, vocab, prompts, c.max_new, greedy=True)
    cold = completion_metrics(world, test_pairs, comp.numpy(), judge_e2=judge_e2, proxy=proxies["sft"],
                              held_out=held_out, max_rubric=c.max_rubric)
    secs["setup_total"] = time.perf_counter() - t0
    return Setup(config=c, seed=seed, world=world, rl_pairs=rl_pairs, test_pairs=test_pairs, policy=policy,
                 proxies=proxies, judge_e2=judge_e2, sensitivity=sens, cold_start=cold, sft_loss=sft_loss,
                 seconds=secs, held_out=held_out)


#: The verifiers whose fidelity to an edited rubric claim (c) compares directly: condition name -> setup key.
FIDELITY_VERIFIERS = {"proxy_sft": "sft", "proxy_rl": "rl", "proxy_follow": "follow", "proxy_sft_unseen": "sft_unseen"}


def setup_fidelity(setup: Setup) -> pd.DataFrame:
    """Each verifier of a seed's setup read on an edited rubric (:func:`~posteval.rubric.judges.verifier_fidelity`
    on the setup's held-out pairs, random stream 12 of its seed): one row per verifier, columns ``seed``,
    ``judge`` (the condition name of :data:`FIDELITY_VERIFIERS`), ``fidelity``, ``follows_label``, ``n_pairs``.
    No RL: the verifiers are the frozen proxies themselves."""
    if not isinstance(setup, Setup):
        raise ValueError(f"setup must be a Setup, got {type(setup).__name__}")
    judges = {name: setup.proxies[key] for name, key in FIDELITY_VERIFIERS.items()}
    rows = verifier_fidelity(judges, setup.world, setup.test_pairs, seed_stream(setup.seed, 12))
    rows.insert(0, "seed", setup.seed)
    return rows


class PolicyReward:
    """Reward of a batch of completions: upstream's terms and aggregation, with a frozen proxy.

    ``proxy`` is None (no proxy term), a judge, or an :class:`Ensemble` (mean of the votes).
    ``leak``: the proxy sees the answer segment and returns the completion's verdict where it has one
    (upstream's proxy reads the whole output when ``</rubric>`` is missing; here it always can).
    """

    def __init__(self, world: World, proxy=None, mode="additive", *, max_rubric: int = 3, leak: bool = False):
        self.world = world
        self.proxy = proxy
        self.mode = aggregation_mode(mode)
        if proxy is None and (self.mode != 0 or leak):
            raise ValueError(f"mode {mode!r} / leak={leak} needs a proxy")
        self.max_rubric = max_rubric
        self.leak = bool(leak)

    def __call__(self, pairs: Pairs, completions) -> dict:
        vocab = self.world.vocab
        parsed = grammar.parse_batch(vocab, completions, max_rubric=self.max_rubric)
        r_acc = accuracy_reward(np.array([p.verdict for p in parsed]), pairs.labels)
        r_fmt = np.array([float(p.well_formed) for p in parsed])
        if self.proxy is None:
            r_proxy = np.zeros_like(r_acc)
        else:
            flags = grammar.rubric_flags(vocab, completions)  # only the rubric segment reaches the proxy
            votes = self.proxy.votes(pairs, flags) if isinstance(self.proxy, Ensemble) else self.proxy.predict(pairs, flags)
            if self.leak:
                verdicts = np.array([p.verdict for p in parsed])
                votes = np.where(verdicts > 0, verdicts, votes)
            r_proxy = proxy_reward(votes, pairs.labels)
        return combine(r_acc, r_proxy, r_fmt, self.mode)


class OrderBiasedProxy:
    """A proxy that prefers the first answer: ``bias`` is added to its logit for "response 1"."""

    def __init__(self, proxy, bias: float):
        if not hasattr(proxy, "logits"):
            raise ValueError("proxy must expose logits(pairs, flags) to be order-biased")
        self.proxy = proxy
        self.bias = float(bias)
        self.name = f"{proxy.name}_order"

    def predict(self, pairs: Pairs, flags) -> np.ndarray:
        return np.where(self.proxy.logits(pairs, flags).numpy() + self.bias > 0, 1, 2)


def condition_proxy(setup: Setup, cond: Condition):
    if cond.proxy is None:
        return None
    if cond.order_biased:
        if cond.ensemble:
            raise ValueError("an order-biased condition takes a single proxy, not an ensemble")
        return OrderBiasedProxy(setup.proxies[cond.proxy], setup.config.order_bias)
    if cond.ensemble and cond.proxy == "mixed":  # heterogeneous members: the seed's own three proxies
        return Ensemble([setup.proxies[k] for k in MIXED_MEMBERS])
    if cond.ensemble:
        key = ENSEMBLES[cond.proxy][0]
        if key not in setup.proxies:
            raise ValueError(f"condition needs an ensemble of {cond.proxy!r} proxies: set ensemble_size >= 1")
        return Ensemble(setup.proxies[key])
    return setup.proxies[cond.proxy]


def _rollout_streams(seed: int, rollout_seed: int | None) -> tuple[np.random.Generator, torch.Generator]:
    """The rollout randomness of a condition: prompt order (numpy) and sampling (torch) streams."""
    if rollout_seed is None:
        rng = seed_stream(seed, 10)  # same rollout randomness in every condition
        gen = torch.Generator().manual_seed(seed * 7 + 11)
    else:
        if isinstance(rollout_seed, bool) or not isinstance(rollout_seed, (int, np.integer)) or rollout_seed < 0:
            raise ValueError(f"rollout_seed must be a non-negative int or None, got {rollout_seed!r}")
        rng = seed_stream(seed, 1000 + int(rollout_seed))
        gen = torch.Generator().manual_seed(int(seed_stream(seed, 2000 + int(rollout_seed)).integers(2**62)))
    return rng, gen


def _frozen_copy(policy: PolicyLM) -> PolicyLM:
    """The reference policy of the KL term: a copy in eval mode without gradients."""
    ref = copy.deepcopy(policy)
    ref.eval()
    for p in ref.parameters():
        p.requires_grad_(False)
    return ref


def _grpo_update(policy: PolicyLM, ref: PolicyLM, opt, c: RubricConfig, rollouts: tuple, label: str,
                 step: int) -> list[dict]:
    """One GRPO update on the rollouts ``(prompts, completions, mask, advantages)`` of a step, in
    ``c.n_minibatches`` minibatches; the loss statistics of each."""
    prompts, comp, mask, adv = rollouts
    with torch.no_grad():
        old = completion_logprobs(policy, prompts, comp)
        ref_lp = completion_logprobs(ref, prompts, comp)
    policy.train()
    stats = []
    per_mb = c.prompts_per_step // c.n_minibatches * c.group_size
    for mb in range(c.n_minibatches):
        sl = slice(mb * per_mb, (mb + 1) * per_mb)
        logp = completion_logprobs(policy, prompts[sl], comp[sl])
        loss, st = grpo_loss(logp, old[sl], ref_lp[sl], adv[sl], mask[sl], clip=c.clip, beta=c.beta)
        if not torch.isfinite(loss):
            raise FloatingPointError(f"{label}: non-finite loss at step {step}")
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(policy.parameters(), c.grad_clip)
        opt.step()
        stats.append(st)
    return stats


def _step_row(step: int, terms: dict, mask: torch.Tensor, stats: list[dict], group: int) -> dict:
    """The history row of one GRPO step: mean reward terms of its rollouts and mean loss statistics."""
    tot = terms["total"].reshape(-1, group)
    return {"step": step, "reward": float(terms["total"].mean()), "r_acc": float(terms["acc"].mean()),
            "r_proxy": float(terms["proxy"].mean()), "r_format": float(terms["format"].mean()),
            "frac_zero_std": float((tot.std(1) == 0).mean()),
            "completion_len": float(mask.sum(1).float().mean()),
            **{k: float(np.mean([s[k] for s in stats])) for k in stats[0]}}


def run_condition(setup: Setup, name: str, *, condition: Condition | None = None, progress: bool = False,
                  max_steps: int | None = None, rollout_seed: int | None = None) -> dict:
    """GRPO from the cold-start policy under one condition.

    ``rollout_seed`` replaces the seed's own rollout stream (prompt order and sampling), the same in
    every condition by default; the setup (world, data, cold start, proxies, judges) stays.

    Returns
    -------
    dict with ``history`` (DataFrame: step, reward terms of the rollouts, loss stats and the test
    metrics at evaluation steps), ``final`` (test metrics at the last step), ``seconds``, ``steps``.
    """
    cond = condition if condition is not None else CONDITIONS.get(name)
    if cond is None:
        raise ValueError(f"name must be one of {sorted(CONDITIONS)} (or pass condition=), got {name!r}")
    if not 0 < cond.data_fraction <= 1:
        raise ValueError(f"data_fraction must be in (0, 1], got {cond.data_fraction}")
    c = setup.config
    world, vocab = setup.world, setup.world.vocab
    t0 = time.perf_counter()
    proxy = condition_proxy(setup, cond)
    reward_fn = PolicyReward(world, proxy, cond.mode, max_rubric=c.max_rubric, leak=cond.leak)
    eval_proxy = proxy if proxy is not None else setup.proxies["sft"]
    policy = copy.deepcopy(setup.policy)
    ref = _frozen_copy(setup.policy)
    opt = torch.optim.Adam(policy.parameters(), lr=c.lr)
    n_rl = max(int(round(c.n_rl * cond.data_fraction)), c.prompts_per_step)
    pool = setup.rl_pairs.subset(np.arange(n_rl))
    pool_prompts = encode_prompts(world, pool)
    test_prompts = encode_prompts(world, setup.test_pairs)
    B, G = c.prompts_per_step, c.group_size
    steps_per_epoch = n_rl // B
    steps = c.rl_epochs * steps_per_epoch
    if max_steps is not None:
        steps = min(steps, int(max_steps))
    rng, gen = _rollout_streams(setup.seed, rollout_seed)
    order = np.array([], dtype=int)

    def evaluate(step):
        comp, _ = generate(policy, vocab, test_prompts, c.max_new, greedy=True)
        m = completion_metrics(world, setup.test_pairs, comp.numpy(), judge_e2=setup.judge_e2,
                               proxy=eval_proxy, held_out=setup.held_out, max_rubric=c.max_rubric)
        return {"step": step, **{f"test_{k}": v for k, v in m.items()}}

    rows = [evaluate(0)]
    for step in tqdm(range(1, steps + 1), desc=f"GRPO {name} seed {setup.seed}", disable=not progress, leave=False):
        if len(order) < B:
            order = np.concatenate([order, rng.permutation(n_rl)])
        idx, order = order[:B], order[B:]
        batch = pool.subset(np.repeat(idx, G))
        prompts = pool_prompts[np.repeat(idx, G)]
        comp, mask = generate(policy, vocab, prompts, c.max_new, temperature=c.temperature, generator=gen)
        terms = reward_fn(batch, comp.numpy())
        adv = torch.as_tensor(group_advantages(terms["total"], G), dtype=torch.float32)
        stats = _grpo_update(policy, ref, opt, c, (prompts, comp, mask, adv), f"GRPO {name}", step)
        row = _step_row(step, terms, mask, stats, G)
        if step % c.eval_every == 0 or step == steps:
            row.update(evaluate(step))
        rows.append(row)
    hist = pd.DataFrame(rows)
    final = {k[5:]: v for k, v in rows[-1].items() if k.startswith("test_")}
    return {"history": hist, "final": final, "seconds": time.perf_counter() - t0, "steps": steps,
            "n_rl": n_rl, "policy": policy}
