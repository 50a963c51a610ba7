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
    # chapter 4 (proxies and judges)
}


def colour(name: str) -> str:
    """The book's colour (hex) for model `name`; ValueError for a name the palette lacks."""
    try:
        return MODEL_COLOURS[name]
    except KeyError:
        raise ValueError(
            f"no colour for model {name!r}: add it to lib.plotting.palette.MODEL_COLOURS "
            f"(known: {', '.join(sorted(MODEL_COLOURS))})"
        ) from None


def colours(names: Iterable[str]) -> dict[str, str]:
    """{name: colour} for several models, for seaborn's `palette=` argument."""
    return {n: colour(n) for n in names}
