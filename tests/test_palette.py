"""The book's palette: one colour per model, shared roles share a colour, unknown names fail."""

import pytest

from posteval.plotting import palette


def test_models_in_the_same_role_share_a_colour_and_others_differ():
    assert palette.colour("mlp_mse") == palette.colour("transformer_mse")
    distinct = ["truth", "oracle", "mlp_mse", "mlp_mae", "transformer_mmd", "flow_mean",
                "nu_weighting", "mdn", "flow", "cfm", "prior"]
    assert len({palette.colour(n) for n in distinct}) == len(distinct)


def test_unknown_model_is_a_clear_error():
    with pytest.raises(ValueError, match="no colour for model 'flw'"):
        palette.colour("flw")


def test_colours_maps_names_for_seaborn():
    assert palette.colours(["flow", "cfm"]) == {"flow": palette.colour("flow"), "cfm": palette.colour("cfm")}


def test_line_colours_prefer_explicit_then_palette_then_spares():
    from posteval.plotting import line_colours

    got = line_colours(["flow", "my model", "truth-like"], {"my model": "#123456"})
    assert got["flow"] == palette.colour("flow")
    assert got["my model"] == "#123456"
    assert got["truth-like"] not in (got["flow"], "#123456")
