"""posteval.rubric.plots: chapter 4's figures, palette colours, readable sizes, clear errors (its
tables: tests/rubric/test_report.py)."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from posteval.plotting import palette
from posteval.rubric import plots
from posteval.rubric.experiment import CONDITIONS
from posteval.rubric.report import CONDITION_NAMES, CONDITION_TEXT


#: Chapter-4 names that deliberately share a colour with another (same proxy, fewer prompts).
ALIASES = {"no_proxy_quarter": "no_proxy", "proxy_sft_quarter": "proxy_sft",
           "proxy_follow_quarter": "proxy_follow", "ensemble3": "ensemble",
           "ensemble3_follow": "ensemble_follow"}


SHOWN = ["no_proxy", "proxy_sft", "proxy_rl", "proxy_follow", "proxy_sft_unseen", "ensemble",
         "ensemble_follow", "proxy_sft_leak", "proxy_sft_order", "agg_and_gate", "agg_gate",
         "agg_modulated", "agg_implicit", "judge_rule", "judge_e2", "judge_max", "judge_vote"]


def _history(conditions, seeds=(0, 1, 2), steps=(0, 16, 32)):
    rng = np.random.default_rng(0)
    rows = [{"seed": s, "condition": c, "step": t,
             **{f"test_{m}": rng.uniform() for m in ("transfer", "verdict_acc", "rationalisation")}}
            for c in conditions for s in seeds for t in steps]
    return pd.DataFrame(rows)


def _sensitivity(judges, seeds=(0, 1, 2)):
    rng = np.random.default_rng(1)
    return pd.DataFrame([{"seed": s, "judge": j, **{r: rng.uniform(0.5, 1) for r in plots.RUBRICS}}
                         for j in judges for s in seeds])


def _font_sizes(fig):
    return [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text) if t.get_text()]


def test_chapter4_names_have_distinct_colours_except_declared_aliases():
    got = {n: palette.colour(n) for n in SHOWN}
    assert len(set(got.values())) == len(SHOWN)
    for alias, base in ALIASES.items():
        assert palette.colour(alias) == palette.colour(base)


def test_sensitivity_figure_colours_each_verifier_and_splits_proxies_from_judges():
    judges = ["proxy_sft", "proxy_follow", "judge_rule", "judge_max"]
    fig = plots.sensitivity_figure(_sensitivity(judges))
    left, right = fig.axes[:2]
    assert [to_hex(c.lines[0].get_color()) for c in left.containers] == [
        palette.colour("proxy_sft"), palette.colour("proxy_follow")]
    assert {t.get_text() for t in right.get_legend().get_texts()} == {
        plots.VERIFIERS["judge_rule"], plots.VERIFIERS["judge_max"]}
    assert fig.get_size_inches()[0] <= 7.0 and min(_font_sizes(fig)) >= 8
    plt.close(fig)
    with pytest.raises(ValueError, match="lacks columns"):
        plots.sensitivity_figure(pd.DataFrame({"judge": ["proxy_sft"]}))


def test_steps_figure_dashes_quarter_runs_in_their_proxys_colour():
    conds = ["no_proxy", "proxy_sft", "proxy_sft_quarter"]
    fig = plots.steps_figure(_history(conds), ["transfer", "verdict_acc"], conds)
    names = [CONDITION_NAMES[c] for c in conds]  # the legend in reader names, not config keys
    lines = dict(zip(conds, fig.axes[0].get_lines()))
    assert [l.get_label() for l in lines.values()] == names
    assert to_hex(lines["proxy_sft_quarter"].get_color()) == palette.colour("proxy_sft")
    assert lines["proxy_sft_quarter"].get_linestyle() == "--"
    assert lines["proxy_sft"].get_linestyle() == "-"
    assert [t.get_text() for t in fig.legends[0].get_texts()] == names
    assert not fig.axes[2].get_visible()  # 2 metrics on a 3-column grid
    assert len(fig.axes[0].collections) == len(conds)  # one sd band per condition
    plt.close(fig)
    fig = plots.steps_figure(_history(conds), ["transfer"], conds, band=False)
    assert not fig.axes[0].collections
    assert fig.get_size_inches()[0] <= 7.0 and min(_font_sizes(fig)) >= 8
    plt.close(fig)
    with pytest.raises(ValueError, match="have no history"):
        plots.steps_figure(_history(conds), ["transfer"], ["agg_gate"])
    with pytest.raises(ValueError, match="lacks columns"):
        plots.steps_figure(_history(conds), ["rubric_f1"], conds)


def test_bridge_figure_needs_the_trl_log_columns():
    log = pd.DataFrame({"step": [1, 2], "rewards/r_acc/mean": [0.1, 0.2],
                        "rewards/r_proxy/mean": [0.0, 0.3], "rewards/r_format/mean": [1.0, 1.0],
                        "kl": [0.0, 0.01]})
    fig = plots.bridge_figure(log)
    assert len(fig.axes) == 4
    assert to_hex(fig.axes[0].get_lines()[0].get_color()) == palette.colour("proxy_follow")
    plt.close(fig)
    with pytest.raises(ValueError, match="kl"):
        plots.bridge_figure(log.drop(columns="kl"))


def test_every_condition_has_a_reader_name_and_a_description():
    """A condition added to the experiment gets both the name its legends show and the sentence its tables show."""
    assert set(CONDITION_NAMES) == set(CONDITIONS) <= set(CONDITION_TEXT)
    assert len(set(CONDITION_NAMES.values())) == len(CONDITION_NAMES)
