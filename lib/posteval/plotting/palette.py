"""One colour per model, the same in every figure of every chapter.

Keys are the model names the chapters use in code and in `book/results/*.json`; a model that
plays the same role in two chapters (the MSE regressor, the flow, flow matching) has one colour.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

import seaborn as sns

_CB = sns.color_palette("colorblind").as_hex()  # 10 colour-blind-safe colours

MODEL_COLOURS: dict[str, str] = {
    # references
    "truth": "#000000",
    "oracle": "#555555",  # the exact posterior (dark grey)
    # point estimators
    "mlp_mse": _CB[0],
    "transformer_mse": _CB[0],
    "mlp_mae": _CB[9],
    "transformer_mmd": _CB[4],
    "flow_mean": _CB[8],
    "nu_weighting": "#CC3311",  # Tol vibrant red
    # samplers
    "mdn": "#661100",  # Tol dark red
    "flow": _CB[1],
    "cfm": _CB[2],
    "prior": "#BBBBBB",  # Tol light grey: the sampler that ignores the event
    "flow_constraint": "#332288",  # the flow on the constraint variables (Tol indigo)
    "constraint_is": "#882255",  # constraint importance sampling (Tol wine)
    "constraint_floor": "#66CCEE",  # the untrained constraint sampler (Tol bright cyan)
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
    "ensemble_mixed": "#661100",  # the heterogeneous ensemble (Proxy-SFT, Proxy-RL, Proxy-SFT-follow), Tol dark red
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


# Colours for models the book does not know (a user's own), in the order they are handed out:
# the Okabe-Ito set less its black and grey, yellow last (faint on white), then two of Paul
# Tol's colour-blind-safe colours. Every pair is >= 20 CIEDE2000 apart, >= 10 under simulated
# deuteranopia (tests/plotting/test_palette.py checks both).
USER_COLOURS: tuple[str, ...] = (
    "#0072B2",  # Okabe-Ito blue
    "#E69F00",  # Okabe-Ito orange
    "#009E73",  # Okabe-Ito bluish green
    "#D55E00",  # Okabe-Ito vermillion
    "#CC79A7",  # Okabe-Ito reddish purple
    "#56B4E9",  # Okabe-Ito sky blue
    "#332288",  # Tol indigo
    "#882255",  # Tol wine
    "#F0E442",  # Okabe-Ito yellow
)


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


def user_colours(names: Iterable[str]) -> dict[str, str]:
    """{name: colour} for a user's own models, in order, from :data:`USER_COLOURS`.

    The colours are never black (the truth) nor grey (the book's exact posterior) and no two
    models share one. They come from the Okabe-Ito set (Okabe & Ito 2008, "Color Universal
    Design") and Paul Tol's colour-blind-safe schemes (Tol 2021, "Colour Schemes", SRON/EPS/TN/09-002),
    chosen so that every pair differs by CIEDE2000

        dE00 = sqrt((dL'/S_L)^2 + (dC'/S_C)^2 + (dH'/S_H)^2 + R_T (dC'/S_C)(dH'/S_H))

    (Sharma, Wu & Dalal 2005; sRGB to CIELAB under D65) of at least 20 in normal vision and at
    least 10 after simulating deuteranopia with the severity-1 matrix of Machado, Oliveira &
    Fernandes (2009) applied to linear RGB.

    >>> user_colours(["my flow", "my mdn"])
    {'my flow': '#0072B2', 'my mdn': '#E69F00'}

    Raises ValueError for a repeated name or for more names than there are colours.
    """
    names = list(names)
    repeated = sorted(n for n, k in Counter(names).items() if k > 1)
    if repeated:
        raise ValueError(f"user_colours: names must be distinct, repeated: {', '.join(map(repr, repeated))}")
    if len(names) > len(USER_COLOURS):
        raise ValueError(
            f"user_colours: {len(names)} names given, at most {len(USER_COLOURS)} models are supported "
            "(distinct colour-blind-safe colours that are neither black nor grey)"
        )
    return dict(zip(names, USER_COLOURS))
