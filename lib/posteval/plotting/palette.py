"""One colour per model, the same in every figure of every chapter.

Keys are the model names the chapters use in code and in `book/results/*.json`; a model that
plays the same role in two chapters (the MSE regressor, the flow, flow matching) has one colour.
"""

from __future__ import annotations

from collections.abc import Iterable

import seaborn as sns

_CB = sns.color_palette("colorblind").as_hex()  # 10 colour-blind-safe colours

MODEL_COLOURS: dict[str, str] = {
    # references
    "truth": "#000000",
    "oracle": _CB[7],  # the exact posterior (grey)
    # point estimators
    "mlp_mse": _CB[0],
    "transformer_mse": _CB[0],
    "mlp_mae": _CB[9],
    "transformer_mmd": _CB[4],
    "flow_mean": _CB[8],
    "nu_weighting": _CB[3],
    # samplers
    "mdn": _CB[5],
    "flow": _CB[1],
    "cfm": _CB[2],
    "prior": _CB[6],
    # chapter 4 (proxies, judges, GRPO conditions). Colour = the proxy that rewards the policy;
    # a condition at N/4 prompts keeps its proxy's colour (its curve is dashed). The names of
    # one figure draw on the Okabe-Ito colours (seaborn's colour-blind set) and Paul Tol's
    # colour-blind-safe "muted" set, all distinct within the chapter.
    "no_proxy": _CB[7],
    "no_proxy_quarter": _CB[7],
    "proxy_sft": _CB[0],
    "proxy_sft_quarter": _CB[0],
    "proxy_rl": _CB[2],
    "proxy_follow": _CB[3],
    "proxy_follow_quarter": _CB[3],
    "proxy_sft_unseen": _CB[4],
    "ensemble": _CB[9],  # the bootstrap ensemble of Proxy-SFTs (condition ensemble3)
    "ensemble3": _CB[9],
    "ensemble_follow": _CB[1],
    "ensemble3_follow": _CB[1],
    "proxy_sft_leak": "#882255",  # Tol wine
    "proxy_sft_order": _CB[5],
    "agg_and_gate": "#117733",  # Tol green
    "agg_gate": "#DDCC77",  # Tol sand
    "agg_modulated": "#AA4499",  # Tol purple
    "agg_implicit": "#CC6677",  # Tol rose
    "judge_rule": "#000000",  # E1
    "judge_e2": "#332288",  # E2, Tol indigo
    "judge_max": "#44AA99",  # E3, Tol teal
    "judge_vote": "#999933",  # E4, Tol olive
}


def colour(name: str) -> str:
    """The book's colour (hex) for model `name`; ValueError for a name the palette lacks."""
    try:
        return MODEL_COLOURS[name]
    except KeyError:
        raise ValueError(
            f"no colour for model {name!r}: add it to posteval.plotting.palette.MODEL_COLOURS "
            f"(known: {', '.join(sorted(MODEL_COLOURS))})"
        ) from None


def colours(names: Iterable[str]) -> dict[str, str]:
    """{name: colour} for several models, for seaborn's `palette=` argument."""
    return {n: colour(n) for n in names}
