"""posteval.rubric.report: the chapter's tables."""

import matplotlib

matplotlib.use("Agg")

import pandas as pd
import pytest

from posteval.rubric import report
from posteval.rubric.experiment import CONDITIONS


def test_mean_sd_table_rounds_to_the_asked_decimals():
    final = pd.DataFrame({"condition": ["a", "a", "b", "b"], "transfer": [0.5, 0.7, 0.9, 0.9]})
    t = report.mean_sd_table(final, metrics=("transfer",), decimals=2)
    assert t.loc["a", report.LABELS["transfer"]] == "0.60 ± 0.14"
    assert t.loc["b", report.LABELS["transfer"]] == "0.90 ± 0.00"
    assert report.mean_sd_table(final, metrics=("transfer",)).loc["a"].iloc[0] == "0.6000 ± 0.1414"
    with pytest.raises(ValueError, match="decimals"):
        report.mean_sd_table(final, metrics=("transfer",), decimals=-1)


def test_every_condition_is_defined_for_the_reader():
    table = report.conditions_table(list(CONDITIONS))
    assert list(table.index) == list(CONDITIONS) and table.iloc[:, 0].str.len().min() > 10
    with pytest.raises(ValueError, match="no description"):
        report.conditions_table(["proxy_magic"])


def test_highlight_marks_only_the_key_row_with_stable_ids():
    table = pd.DataFrame({"x": [0.123, 0.456]}, index=["a", "b"])
    html = report.highlight(table, ["b"], uuid="t1", decimals=2).to_html()
    assert html == report.highlight(table, ["b"], uuid="t1", decimals=2).to_html()
    assert "#T_t1_row1_col0" in html and "#T_t1_row0_col0" not in html
    assert "0.46" in html and "0.456" not in html
    with pytest.raises(ValueError, match="not in the table"):
        report.highlight(table, ["c"], uuid="t1")


def _summary(conditions, seeds, cold=0.5):
    return {"config": {"n_rl": 8}, "seeds": seeds, "conditions": conditions,
            "cold_start": {"verdict_acc": {"values": [cold] * len(seeds)}},
            "sensitivity": {"sensitivity": {}},
            "history": [{"seed": s, "condition": c, "step": st, "test_verdict_acc": 0.5 + 0.1 * st}
                        for s in seeds for c in conditions for st in (0, 1)]}


def test_join_conditions_adds_several_records_and_checks_their_cold_starts():
    base = _summary(["a"], [0, 1, 2])
    out = report.join_conditions(base, _summary(["b"], [0, 1, 2]), _summary(["c"], [1, 2, 5], cold=0.501), atol=0.01)
    assert out["shared_seeds"] == [0, 1, 2] and out["shared_seeds_each"] == [[0, 1, 2], [1, 2]]
    assert out["cold_start_max_diff"][0] == 0 and out["cold_start_max_diff"][1] == pytest.approx(0.001)
    assert set(out["final"].loc[out["final"]["condition"] == "c", "seed"]) == {1, 2}
    with pytest.raises(ValueError, match="another cold start"):
        report.join_conditions(base, _summary(["c"], [1], cold=0.501))  # the default: equal to 1e-12
    with pytest.raises(ValueError, match="in both"):
        report.join_conditions(base, _summary(["a"], [1]))
    with pytest.raises(ValueError, match="config differs"):
        report.join_conditions(base, dict(_summary(["b"], [1]), config={"n_rl": 16}))
