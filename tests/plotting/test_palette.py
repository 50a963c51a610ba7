"""The book's palette: one colour per model, shared roles share a colour, unknown names fail."""

import pytest

from posteval.plotting import palette


def test_models_in_the_same_role_share_a_colour_and_others_differ():
    assert palette.colour("mlp_mse") == palette.colour("transformer_mse")
    distinct = ["truth", "oracle", "mlp_mse", "mlp_mae", "transformer_mmd", "flow_mean",
                "nu_weighting", "mdn", "flow", "cfm", "prior", "flow_constraint", "constraint_is", "constraint_floor"]
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


# --- user_colours: distinct for normal and deuteranope vision --------------------------------
# CIEDE2000 (Sharma, Wu & Dalal 2005) from sRGB via CIELAB (D65), and the deuteranopia
# simulation of Machado, Oliveira & Fernandes (2009), severity 1, applied to linear RGB.

import itertools

import numpy as np

SRGB_TO_XYZ = np.array([[0.4124564, 0.3575761, 0.1804375],
                        [0.2126729, 0.7151522, 0.0721750],
                        [0.0193339, 0.1191920, 0.9503041]])
MACHADO_DEUTERANOPIA = np.array([[0.367322, 0.860646, -0.227968],
                                 [0.280085, 0.672501, 0.047413],
                                 [-0.011820, 0.042940, 0.968881]])
BOOK_GREY = palette.colour("oracle")


def linear_rgb(hex_colour: str) -> np.ndarray:
    c = np.array([int(hex_colour.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4)])
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def lab(hex_colour: str, deuteranope: bool = False) -> np.ndarray:
    """CIELAB (D65) of an sRGB colour, as seen with normal vision or simulated deuteranopia."""
    rgb = linear_rgb(hex_colour)
    if deuteranope:
        rgb = np.clip(MACHADO_DEUTERANOPIA @ rgb, 0, 1)
    xyz = SRGB_TO_XYZ @ rgb / SRGB_TO_XYZ.sum(axis=1)
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e00(lab1, lab2) -> float:
    """CIEDE2000 colour difference (kL = kC = kH = 1)."""
    (L1, a1, b1), (L2, a2, b2) = lab1, lab2
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25**7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    h1, h2 = np.degrees(np.arctan2(b1, a1)) % 360, np.degrees(np.arctan2(b2, a2)) % 360
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180
    d_big_h = 2 * np.sqrt(c1 * c2) * np.sin(np.radians(dh) / 2)
    l_bar, c_bar = (L1 + L2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_bar = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_bar = (h1 + h2) / 2
    else:
        h_bar = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    t = (1 - 0.17 * np.cos(np.radians(h_bar - 30)) + 0.24 * np.cos(np.radians(2 * h_bar))
         + 0.32 * np.cos(np.radians(3 * h_bar + 6)) - 0.20 * np.cos(np.radians(4 * h_bar - 63)))
    r_c = 2 * np.sqrt(c_bar**7 / (c_bar**7 + 25**7))
    r_t = -np.sin(np.radians(60 * np.exp(-(((h_bar - 275) / 25) ** 2)))) * r_c
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_bar, 1 + 0.015 * c_bar * t
    dl, dc, dhh = (L2 - L1) / s_l, (c2 - c1) / s_c, d_big_h / s_h
    return float(np.sqrt(dl**2 + dc**2 + dhh**2 + r_t * dc * dhh))


@pytest.mark.parametrize("lab1, lab2, expected", [  # Sharma, Wu & Dalal (2005), table 1, pairs 1, 7, 17, 34
    ((50, 2.6772, -79.7751), (50, 0, -82.7485), 2.0425),
    ((50, 0, 0), (50, -1, 2), 2.3669),
    ((50, 2.5, 0), (73, 25, -18), 27.1492),
    ((2.0776, 0.0795, -1.1350), (0.9033, -0.0636, -0.5514), 0.9082),
])
def test_delta_e00_matches_the_published_test_data(lab1, lab2, expected):
    assert delta_e00(lab1, lab2) == pytest.approx(expected, abs=1e-4)


def test_deuteranopia_simulation_keeps_greys_and_merges_red_with_green():
    assert np.allclose(lab("#949494", deuteranope=True), lab("#949494"), atol=0.1)
    assert delta_e00(lab("#D55E00", True), lab("#999933", True)) < delta_e00(lab("#D55E00"), lab("#999933")) / 3


def test_user_colours_are_distinct_for_normal_and_deuteranope_vision():
    names = [f"model {i}" for i in range(len(palette.USER_COLOURS))]
    assert len(names) >= 6
    got = palette.user_colours(names)
    assert list(got) == names and len(set(got.values())) == len(names)
    for (a, ca), (b, cb) in itertools.combinations(got.items(), 2):
        assert delta_e00(lab(ca), lab(cb)) >= 20, f"{a} {ca} and {b} {cb} too close"
        assert delta_e00(lab(ca, True), lab(cb, True)) >= 10, f"{a} {ca} and {b} {cb} too close for deuteranopes"


def test_user_colours_are_never_black_nor_grey():
    for c in palette.USER_COLOURS:
        chroma = np.hypot(*lab(c)[1:])
        assert chroma >= 30, f"{c} is nearly grey (C* = {chroma:.1f})"
        for ref in ("#000000", BOOK_GREY):
            assert delta_e00(lab(c), lab(ref)) >= 20, f"{c} is too close to {ref}"


def test_user_colours_are_in_order_and_refuse_too_many_or_repeated_names():
    assert palette.user_colours(["b", "a"]) == {"b": palette.USER_COLOURS[0], "a": palette.USER_COLOURS[1]}
    assert palette.user_colours([]) == {}
    n = len(palette.USER_COLOURS)
    with pytest.raises(ValueError, match=f"{n + 1} names given, at most {n} models are supported"):
        palette.user_colours([f"m{i}" for i in range(n + 1)])
    with pytest.raises(ValueError, match="repeated: 'flow'"):
        palette.user_colours(["flow", "mdn", "flow"])


# The models that share a figure in chapters 2 and 3 (chapter 4's conditions are not checked here).
FIGURE_SETS = {
    "chapter 2": ["truth", "oracle", "mlp_mse", "mlp_mae", "mdn", "flow", "cfm", "flow_mean"],
    "chapter 3": ["truth", "transformer_mse", "transformer_mmd", "flow_mean", "flow", "cfm", "flow_constraint",
                  "nu_weighting", "constraint_is", "constraint_floor", "prior"],
}


@pytest.mark.parametrize("chapter", FIGURE_SETS)
def test_model_colours_of_a_chapter_are_distinct_for_normal_and_deuteranope_vision(chapter):
    got = palette.colours(FIGURE_SETS[chapter])
    for (a, ca), (b, cb) in itertools.combinations(got.items(), 2):
        assert delta_e00(lab(ca), lab(cb)) >= 20, f"{chapter}: {a} {ca} and {b} {cb} too close"
        assert delta_e00(lab(ca, True), lab(cb, True)) >= 10, f"{chapter}: {a} {ca} and {b} {cb} too close for deuteranopes"
