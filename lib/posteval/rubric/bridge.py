"""Bridge to full scale: the same environment as text, trained with ``trl``'s ``GRPOTrainer``.

The miniature's tokens become whitespace-separated words (``<bos> <q17> c0=2/1 ... c7=0/3`` for a
prompt, ``c2 c5 </rubric> d+1 d-2 </eval> <answer1>`` for a completion). A word-level tokenizer is
built locally with the word ids equal to the miniature's token ids, and a tiny ``Qwen2ForCausalLM``
is initialised from a config: nothing is downloaded. The three reward terms are plain Python
callables, combined by ``trl`` with ``reward_weights=[1, 1, 0.5]``, which is upstream's
``r_acc + r_proxy + 0.5 r_format``.
"""

from __future__ import annotations

import os
import tempfile
import time
import warnings

import numpy as np
import pandas as pd
import torch

from . import grammar
from .evaluate import completion_metrics
from .experiment import Setup, seed_stream
from .policy import sft
from .reward import accuracy_reward, proxy_reward
from .task import Pairs, World, encode_prompts, sample_pairs


def render(vocab, tokens) -> str:
    """Text of a token sequence (PAD dropped)."""
    return " ".join(vocab.name(t) for t in np.asarray(tokens).ravel() if t != vocab.PAD)


def build_tokenizer(world: World):
    """Word-level ``PreTrainedTokenizerFast`` whose ids are the miniature's token ids; padding on the left."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import WhitespaceSplit
    from transformers import PreTrainedTokenizerFast

    vocab = world.vocab
    tok = Tokenizer(WordLevel({name: i for i, name in enumerate(vocab.names())}, unk_token="<pad>"))
    tok.pre_tokenizer = WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<bos>",
                                   eos_token=vocab.name(vocab.verdict2), unk_token="<pad>")
    fast.padding_side = "left"
    return fast


def tiny_causal_lm(world: World, *, seed: int = 0, hidden: int = 64, layers: int = 2, heads: int = 4,
                   kv_heads: int = 2):
    """A randomly initialised ``Qwen2ForCausalLM`` over the miniature's vocabulary (built from a config)."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    vocab = world.vocab
    cfg = Qwen2Config(vocab_size=vocab.size, hidden_size=hidden, intermediate_size=2 * hidden,
                      num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv_heads,
                      max_position_embeddings=64, pad_token_id=vocab.PAD, bos_token_id=vocab.BOS,
                      eos_token_id=[vocab.verdict1, vocab.verdict2], tie_word_embeddings=True)
    torch.manual_seed(int(seed))
    model = Qwen2ForCausalLM(cfg)
    model.generation_config.eos_token_id = [vocab.verdict1, vocab.verdict2]
    model.generation_config.pad_token_id = vocab.PAD
    return model


class _LogitsAdapter(torch.nn.Module):
    """Gives a HF causal LM the ``model(tokens, last=k)`` interface of :class:`policy.PolicyLM`."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, tokens, *, last=None):
        logits = self.model(input_ids=tokens).logits
        return logits if last is None else logits[:, -last:]


def cold_start_hf(model, world: World, pairs: Pairs, seed: int, *, epochs: int = 20, p_good: float = 0.4,
                  max_rubric: int = 3, lr: float = 6e-3) -> list[float]:
    """Cold-start SFT of the HF model on the same teacher data as the miniature (completion-only loss)."""
    comp, _ = grammar.teacher_completions(world, pairs, seed_stream(seed, 5), p_good=p_good, max_rubric=max_rubric)
    return sft(_LogitsAdapter(model), encode_prompts(world, pairs), torch.as_tensor(comp), pad=world.vocab.PAD,
               epochs=epochs, batch_size=256, lr=lr, seed=seed)


def _ids(world: World, completion_ids, length: int) -> np.ndarray:
    out = np.full((len(completion_ids), length), world.vocab.PAD, dtype=np.int64)
    for i, ids in enumerate(completion_ids):
        ids = list(ids)[:length]
        out[i, :len(ids)] = ids
    return out


def _pairs(types, q1, q2, label) -> Pairs:
    return Pairs(np.asarray(types), np.asarray(q1), np.asarray(q2), np.asarray(label))


def make_reward_functions(world: World, proxy, *, max_rubric: int = 3) -> list:
    """``[r_acc, r_proxy, r_format]`` as trl reward callables (``completion_ids`` + dataset columns)."""
    length = grammar.max_completion_len(max_rubric)

    def accuracy(completion_ids, label, **kw):
        parsed = grammar.parse_batch(world.vocab, _ids(world, completion_ids, length), max_rubric=max_rubric)
        return accuracy_reward(np.array([p.verdict for p in parsed]), np.asarray(label)).tolist()

    def proxy_term(completion_ids, qtype, q1, q2, label, **kw):
        flags = grammar.rubric_flags(world.vocab, _ids(world, completion_ids, length))  # rubric segment only
        pairs = _pairs(qtype, q1, q2, label)
        return proxy_reward(proxy.predict(pairs, flags), pairs.labels).tolist()

    def format_term(completion_ids, **kw):
        return grammar.format_ok(world.vocab, _ids(world, completion_ids, length), max_rubric=max_rubric).astype(float).tolist()

    accuracy.__name__, proxy_term.__name__, format_term.__name__ = "r_acc", "r_proxy", "r_format"
    return [accuracy, proxy_term, format_term]


def to_dataset(world: World, pairs: Pairs):
    """``datasets.Dataset`` with a text ``prompt`` and the columns the reward functions need."""
    from datasets import Dataset

    prompts = encode_prompts(world, pairs).numpy()
    return Dataset.from_dict({"prompt": [render(world.vocab, p) for p in prompts], "label": pairs.labels.tolist(),
                              "qtype": pairs.types.tolist(), "q1": pairs.q1.tolist(), "q2": pairs.q2.tolist()})


@torch.no_grad()
def greedy_completions(model, world: World, pairs: Pairs, *, max_rubric: int = 3) -> np.ndarray:
    """Greedy completions of the HF model as miniature token ids (PAD after the verdict)."""
    length = grammar.max_completion_len(max_rubric)
    prompts = encode_prompts(world, pairs)
    model.eval()
    out = model.generate(input_ids=prompts, attention_mask=torch.ones_like(prompts), do_sample=False,
                         max_new_tokens=length, eos_token_id=[world.vocab.verdict1, world.vocab.verdict2],
                         pad_token_id=world.vocab.PAD)
    return _ids(world, out[:, prompts.shape[1]:].tolist(), length)


# trl 1.16 still uses transformers' ``gradient_checkpointing`` names, deprecated in transformers 5.
_TRL_DEPRECATED_NAMES = r"`\w*gradient_checkpointing\w*` is deprecated and will be removed in v6"


def run_trl_grpo(setup: Setup, *, steps: int = 30, n_sft: int = 1024, sft_epochs: int = 20, proxy: str = "follow",
                 prompts_per_step: int = 8, lr: float = 3e-4, workdir=None, seed: int | None = None) -> dict:
    """Cold start + ``trl.GRPOTrainer`` on the text version of one seed's environment.

    Returns
    -------
    dict with ``log`` (DataFrame of trl's per-step logs), ``before`` / ``after`` (test metrics of
    the greedy policy, same definitions as the miniature), ``config`` (the GRPOConfig values
    used) and ``seconds``.
    """
    from transformers.utils import logging as hf_logging
    from trl import GRPOConfig, GRPOTrainer

    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ValueError(f"steps must be a positive int, got {steps!r}")
    if proxy not in setup.proxies or proxy == "ensemble":
        raise ValueError(f"proxy must be one of 'sft', 'rl', 'follow', got {proxy!r}")
    t0 = time.perf_counter()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()  # no shard-writing / weight-loading bars in the chapter
    world, c = setup.world, setup.config
    seed = setup.seed if seed is None else int(seed)
    G = c.group_size
    tokenizer = build_tokenizer(world)
    model = tiny_causal_lm(world, seed=seed)
    sft_loss = cold_start_hf(model, world, sample_pairs(world, n_sft, seed_stream(seed, 1)), seed, epochs=sft_epochs,
                             p_good=c.p_good, max_rubric=c.max_rubric)
    test = setup.test_pairs

    def metrics(m):
        comp = greedy_completions(m, world, test, max_rubric=c.max_rubric)
        return completion_metrics(world, test, comp, judge_e2=setup.judge_e2, proxy=setup.proxies[proxy],
                                  held_out=setup.held_out, max_rubric=c.max_rubric)

    before = metrics(model)
    own = workdir is None
    tmp = tempfile.TemporaryDirectory() if own else None
    root = tmp.name if own else str(workdir)
    try:
        path = os.path.join(root, "tiny-qwen2")
        model.save_pretrained(path)  # trl rebuilds the KL reference model from a path (beta > 0)
        tokenizer.save_pretrained(path)
        with warnings.catch_warnings():  # only trl's own calls, see _TRL_DEPRECATED_NAMES
            warnings.filterwarnings("ignore", message=_TRL_DEPRECATED_NAMES, category=FutureWarning)
            args = GRPOConfig(output_dir=os.path.join(root, "out"), per_device_train_batch_size=prompts_per_step * G,
                              num_generations=G, max_completion_length=grammar.max_completion_len(c.max_rubric),
                              beta=c.beta, epsilon=c.clip, learning_rate=lr, max_steps=int(steps), logging_steps=1,
                              reward_weights=[1.0, 1.0, 0.5], temperature=c.temperature, loss_type="dapo",
                              scale_rewards="group", use_cpu=True, report_to="none", save_strategy="no", seed=seed,
                              disable_tqdm=True, lr_scheduler_type="constant", max_grad_norm=c.grad_clip)
            trainer = GRPOTrainer(model=path, reward_funcs=make_reward_functions(world, setup.proxies[proxy],
                                                                                max_rubric=c.max_rubric),
                                  args=args, train_dataset=to_dataset(world, setup.rl_pairs), processing_class=tokenizer)
            from transformers.trainer_callback import PrinterCallback
            trainer.remove_callback(PrinterCallback)  # per-step logs are returned as a DataFrame instead
            trainer.train()
        log = pd.DataFrame([r for r in trainer.state.log_history if "reward" in r])
        after = metrics(trainer.model)
    finally:
        if own:
            tmp.cleanup()
    keys = ("per_device_train_batch_size", "num_generations", "max_completion_length", "beta", "epsilon",
            "learning_rate", "reward_weights", "temperature", "loss_type", "scale_rewards")
    return {"log": log, "before": before, "after": after, "sft_loss": sft_loss,
            "config": {k: getattr(args, k) for k in keys}, "seconds": time.perf_counter() - t0}
