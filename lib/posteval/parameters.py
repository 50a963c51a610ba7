"""What each chapter parameter may be: the ranges the runner checks before a chapter executes.

A type check (``posteval.book.check_parameters``) only says that ``n_eval=-5`` is an int like its
default; the rules here say what the value must mean: a positive count, a finite float in a
range, a non-empty list, one of a few words, a mapping with the keys the chapter reads. They
are data, one rule per parameter name (:data:`RULES`; a chapter that reads a name differently
overrides it in :data:`CHAPTER_RULES`), so a new parameter is one line here, and a parameter
with no rule is an error naming it. :func:`parameter_problem` applies them.

Every rule is a callable ``rule(value)``: None when the value is valid, otherwise what the value
must be (``"an integer >= 1"``, written to follow "must be"), or, from the rules of mappings and
lists, a :class:`Problem` naming the key or index at fault (``training.lr = -1 must be ...``).

Importing this module imports neither numpy nor torch; the few rules whose words come from a
library module (generator modes, ODE methods, rubric conditions) import it when they run.
"""

from __future__ import annotations

import importlib
import math
import numbers
from dataclasses import dataclass
from typing import Callable, Union

#: Profiles of ``params/<profile>/``; the parameter ``profile`` of a chapter is set from it.
PROFILES = ("ci", "full")


@dataclass(frozen=True)
class Problem:
    """A value inside a mapping or list that breaks its rule: where (``.lr``, ``[2]``), what, and the rule."""

    where: str
    value: object
    must: str


Rule = Callable[[object], Union[str, Problem, None]]


def _inside(where: str, value, problem: str | Problem) -> Problem:
    """``problem`` of ``value``, found at ``where`` inside a mapping or list."""
    if isinstance(problem, Problem):
        return Problem(where + problem.where, problem.value, problem.must)
    return Problem(where, value, problem)


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def count(minimum: int = 1) -> Rule:
    """An integer >= ``minimum`` (a count of events, epochs, processes...; a seed with 0)."""
    must = f"an integer >= {minimum}"

    def rule(value):
        return None if _is_int(value) and value >= minimum else must
    return rule


def real(low: float | None = None, high: float | None = None, *, low_open: bool = False,
         high_open: bool = False) -> Rule:
    """A finite number between ``low`` and ``high`` (each bound closed unless said open)."""
    parts = ["a finite number"]
    if low is not None:
        parts.append(f"{'>' if low_open else '>='} {low:g}")
    if high is not None:
        parts.append(f"{'<' if high_open else '<='} {high:g}")
    must = " ".join(parts[:2]) + (f" and {parts[2]}" if len(parts) == 3 else "")

    def rule(value):
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not math.isfinite(value):
            return must
        if low is not None and (value <= low if low_open else value < low):
            return must
        if high is not None and (value >= high if high_open else value > high):
            return must
        return None
    return rule


def positive() -> Rule:
    """A finite number > 0 (a width, a rate, a noise level)."""
    return real(0, low_open=True)


def boolean() -> Rule:
    """``true`` or ``false``."""
    return lambda value: None if isinstance(value, bool) else "true or false"


def text() -> Rule:
    """A non-empty string."""
    return lambda value: None if isinstance(value, str) and value.strip() else "a non-empty string"


def choice(*options: str, loader: tuple[str, str] | None = None) -> Rule:
    """One of ``options``, or of the names in ``loader = (module, attribute)`` (read when checked)."""
    def rule(value):
        known = tuple(getattr(importlib.import_module(loader[0]), loader[1])) if loader else options
        return None if isinstance(value, str) and value in known else f"one of {', '.join(known)}"
    return rule


def device(*, auto: bool) -> Rule:
    """A torch device name: ``cpu``, ``cuda`` or ``cuda:N`` (and ``auto`` when the chapter resolves it)."""
    words = ("auto", "cpu", "cuda") if auto else ("cpu", "cuda")
    must = f"one of {', '.join(words)} or cuda:N"

    def rule(value):
        if not isinstance(value, str):
            return must
        head, _, index = value.partition(":")
        ok = value in words or (head == "cuda" and index.isdigit())
        return None if ok else must
    return rule


def optional(inner: Rule) -> Rule:
    """None (null in YAML), or what ``inner`` asks for."""
    def rule(value):
        problem = None if value is None else inner(value)
        return f"null or {problem}" if isinstance(problem, str) else problem
    return rule


def list_of(item: Rule, *, distinct: bool = False) -> Rule:
    """A non-empty list whose items satisfy ``item`` (and, with ``distinct``, differ)."""
    def rule(value):
        if not isinstance(value, (list, tuple)) or not value:
            return "a non-empty list"
        for i, v in enumerate(value):
            problem = item(v)
            if problem is not None:
                return _inside(f"[{i}]", v, problem)
        if distinct and len(set(map(repr, value))) < len(value):
            return "a list without repeated items"
        return None
    return rule


def mapping(required: dict[str, Rule], optional_keys: dict[str, Rule] | None = None) -> Rule:
    """A mapping with every key of ``required``, any of ``optional_keys`` and no other key."""
    known = {**required, **(optional_keys or {})}

    def rule(value):
        if not isinstance(value, dict):
            return f"a mapping with the keys {sorted(required)}"
        missing = [k for k in required if k not in value]
        if missing:
            return (f"a mapping with the keys {sorted(required)}, missing {missing} "
                    "(--set NAME.KEY=VALUE changes one key of a mapping)")
        unknown = [k for k in value if k not in known]
        if unknown:
            return f"a mapping of the keys {sorted(known)}, not {unknown}"
        for key, sub in value.items():
            problem = known[key](sub)
            if problem is not None:
                return _inside(f".{key}", sub, problem)
        return None
    return rule


def fractions(names: tuple[str, ...]) -> Rule:
    """A mapping of ``names`` to fractions in (0, 1) that sum to at most 1."""
    each = mapping({n: real(0, 1, low_open=True, high_open=True) for n in names})

    def rule(value):
        problem = each(value)
        if problem is None and sum(value.values()) > 1 + 1e-9:
            return f"fractions of {list(names)} summing to at most 1 (they sum to {sum(value.values()):g})"
        return problem
    return rule


_COUNT = count(1)
_SEED = count(0)

#: One rule per parameter name of every chapter's ``parameters`` cell and ``params/*/*.yaml``.
RULES: dict[str, Rule] = {
    # shared
    "profile": choice(*PROFILES),
    "seed": _SEED,
    "n_seeds": _COUNT,
    "m_samples": _COUNT,
    "threads": _COUNT,
    "device": device(auto=True),
    # chapter 1
    "noise": positive(),
    "n_eval": _COUNT,
    "train_sizes": list_of(_COUNT),
    "n_repeats": _COUNT,
    "n_random_problems": _COUNT,
    # chapter 2
    "sigma": positive(),
    "n_train": _COUNT, "n_val": _COUNT, "n_cal": _COUNT, "n_test": _COUNT,
    "epochs": _COUNT, "patience": _COUNT, "batch_size": _COUNT, "lr": positive(),
    "mlp_hidden": _COUNT, "mdn_components": _COUNT,
    "flow_transforms": _COUNT, "flow_hidden": _COUNT, "flow_bins": _COUNT,
    "cfm_hidden": _COUNT, "cfm_layers": _COUNT, "cfm_steps": _COUNT,
    "cfm_method": choice(loader=("posteval.models.cfm", "METHODS")),
    "cfm_epochs": _COUNT, "cfm_lr": positive(),
    "sweep_sizes": list_of(_COUNT),
    "m_max": _COUNT, "n_events_m": _COUNT,
    "target_crps_ratio": real(1),
    "target_coverage_floor": real(1),  # a target below an exact sampler's floor cannot be met
    "progress": boolean(),
    # chapter 3
    "generation_mode": choice(loader=("posteval.physics.config", "MODES")),
    "other_mode_events": _COUNT,
    "train_workers": _COUNT,
    "n_generated": _COUNT,
    "n_workers": _COUNT,
    "max_jets": _COUNT,
    "splits": fractions(("train", "val", "calib", "test")),
    "encoder": mapping({**{k: _COUNT for k in ("width", "heads", "self_layers", "class_layers", "ff_hidden",
                                              "embed_hidden", "context_dim", "context_hidden")},
                        "dropout": real(0, 1, high_open=True)}),
    "heads": mapping({
        "transformer_mse": mapping({"hidden": _COUNT}),
        "transformer_mmd": mapping({"hidden": _COUNT, "mmd_weight": real(0), "bandwidths": list_of(positive())}),
        "flow": mapping({"transforms": _COUNT, "hidden": list_of(_COUNT), "bins": _COUNT, "bound": positive()}),
        "flow_constraint": mapping({"transforms": _COUNT, "hidden": list_of(_COUNT), "bins": _COUNT, "bound": positive(),
                                    "pairing_hidden": _COUNT}),
        "cfm": mapping({"hidden": _COUNT, "layers": _COUNT, "steps": _COUNT}),
    }),
    "training": mapping({"epochs": _COUNT, "batch_size": _COUNT, "lr": positive(), "grad_clip": optional(positive())},
                        {"patience": _COUNT, "weight_decay": real(0), "lr_decay_patience": optional(_COUNT),
                         "max_seconds": optional(positive())}),
    "schedule": optional(mapping({}, {"warmup_epochs": count(0), "cycle_epochs": _COUNT, "min_factor": real(0, 1)})),
    "cfm_steps_sweep": list_of(_COUNT),
    "sample_batch": _COUNT,
    "n_examples": _COUNT,
    "n_example_samples": _COUNT,
    "null_repeats": _COUNT,
    # chapter 4
    "seeds": list_of(_SEED, distinct=True),
    "conditions": list_of(choice(loader=("posteval.rubric.experiment", "CONDITIONS")), distinct=True),
    "n_rl": _COUNT, "rl_epochs": _COUNT, "prompts_per_step": _COUNT, "eval_every": _COUNT,
    "ensemble_size": count(0),
    "workers": _COUNT,
    "bridge_steps": _COUNT, "bridge_sft_epochs": _COUNT,
    "reuse_full_results": boolean(),
    "full_results": text(), "power_results": text(), "mixed_results": text(), "follow_results": text(),
    "fidelity_results": text(), "aggregation_results": text(),
    # chapter 5
    "max_proposals": _COUNT,
    "n_resamples": _COUNT,
}

#: Rules that differ for one chapter (by stem), taking precedence over :data:`RULES`.
CHAPTER_RULES: dict[str, dict[str, Rule]] = {
    "03_top_quark": {"device": device(auto=False)},  # the chapter passes it to torch as it is
}

#: ``name: other``: where both are parameters of a chapter, ``name`` must be at most ``other``.
AT_MOST = {"n_events_m": "n_test"}


def parameter_problem(chapter: str, params: dict) -> str | None:
    """The first parameter of ``params`` outside its declared range, as one line (None if all fit).

    Parameters
    ----------
    chapter : the chapter's stem (``03_top_quark``): it selects :data:`CHAPTER_RULES`
    params : every parameter the chapter will run with (its defaults with the profile's values
        and the overrides applied)
    """
    rules = {**RULES, **CHAPTER_RULES.get(chapter, {})}
    for name, value in params.items():
        if name not in rules:
            return (f"{chapter}: parameter {name!r} has no declared range; add a rule for it to "
                    "posteval.parameters.RULES")
        problem = rules[name](value)
        if isinstance(problem, Problem):
            return f"{chapter}: parameter {name}{problem.where} = {problem.value!r} must be {problem.must}"
        if problem is not None:
            return f"{chapter}: parameter {name} = {value!r} must be {problem}"
    for name, other in AT_MOST.items():
        if name in params and other in params and params[name] > params[other]:
            return f"{chapter}: parameter {name} = {params[name]!r} must be at most {other} = {params[other]!r}"
    return None
