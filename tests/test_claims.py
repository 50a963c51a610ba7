"""posteval.claims: recording claims and their conclusions in the chapter record."""

import pytest

from posteval import book
from posteval.claims import ADJUSTED_P, claims_frame, conclusions, record_claim, record_claims
from posteval import numformat
from posteval.metrics.claims import CALIBRATION_WORDS, CLAIM_KEYS, Claim, evaluate_claims

from tests.metrics.test_claims import _iv


# ---------------------------------------------------------------------------------------------
# recording and showing claims
# ---------------------------------------------------------------------------------------------
def test_record_claims_records_its_keys_and_conclusions_show_them(monkeypatch):
    monkeypatch.setattr(book, "_recorded", {})
    claims = [Claim("up", "x is positive (this book)", source="this book"),
              Claim("cal", "x is calibrated (paper)", direction=0, margin=0.5, margin_reason="test",
                    words=CALIBRATION_WORDS, source="paper", family="exploratory")]
    table = evaluate_claims(claims, intervals={"up": _iv(0.3, 0.0, 0.05, 1), "cal": _iv(0.0, 0.0, 0.05, 1)})
    assert record_claims(table) is table
    rec = book.recorded()
    for name in ("up", "cal"):
        assert {f"{k}.{name}" for k in CLAIM_KEYS} <= set(rec)
        assert rec[f"claim.{name}"] == table.loc[name, "word"]
        assert rec[f"claim_p_holm.{name}"] == pytest.approx(table.loc[name, "p_holm"])
        assert rec[f"claim_sentence.{name}"] == table.loc[name, "sentence"]
        r = table.loc[name]
        assert rec[f"claim_ci.{name}"] == numformat.interval(r["estimate"], r["lo"], r["hi"])
        assert conclusions(table).loc[r["sentence"], "estimate [interval]"] == numformat.one_line(rec[f"claim_ci.{name}"])
    assert rec["claim.cal"] == "calibrated"
    assert (rec["claim_source.up"], rec["claim_family.up"]) == ("this book", "confirmatory")
    assert (rec["claim_source.cal"], rec["claim_family.cal"]) == ("paper", "exploratory")
    shown = conclusions(table)
    assert shown.index.name == "claim" and shown.columns.tolist() == ["estimate [interval]", ADJUSTED_P, "verdict"]
    assert shown.loc["x is positive (this book)", "verdict"] == "yes"
    assert shown.loc["x is positive (this book)", ADJUSTED_P] == "< 0.001"
    chapter4 = conclusions(table.assign(n_seeds=[3, 5]), effect="difference [95 % interval]", p_holm=False, seeds=True)
    assert chapter4.columns.tolist() == ["difference [95 % interval]", "verdict", "seeds"]
    assert chapter4["seeds"].tolist() == [3, 5]
    with pytest.raises(ValueError, match="n_seeds"):
        conclusions(table.drop(columns="n_seeds", errors="ignore"), seeds=True)
    record_claims(table, prefix="ch.")
    assert "claim_lo.ch.up" in book.recorded()
    with pytest.raises(ValueError, match="missing columns"):
        record_claims(table.drop(columns="p_holm"))


def test_claims_frame_collects_words_and_refuses_numbers(monkeypatch):
    monkeypatch.setattr(book, "_recorded", {})
    assert record_claim("a_above_b", "yes") == "yes"
    book.record("best.crps", "flow")
    book.record("crps.flow", 0.4)
    frame = claims_frame()
    assert frame["verdict"].to_dict() == {"best.crps": "flow", "claim.a_above_b": "yes"}
    with pytest.raises(ValueError, match="claim"):
        record_claim("c", "maybe")
    with pytest.raises(ValueError, match="prefixes"):
        claims_frame("claim.")
    with pytest.raises(ValueError, match="no recorded words"):
        claims_frame(("nothing.",))
    book.record("claim.number", 1.0)
    with pytest.raises(ValueError, match="number"):
        claims_frame()


def test_a_claim_that_is_not_testable_keeps_its_reason_and_leaves_the_family(monkeypatch):
    """The fourth word: a claim whose preconditions fail is "not testable" with its reason
    (``claim_reason.<name>``), shown in the reader's table, and takes no part in Holm's adjustment."""
    monkeypatch.setattr(book, "_recorded", {})
    claims = [Claim("a", "a is positive (paper)"), Claim("b", "b is positive (paper)"),
              Claim("ab", "a and b are positive (paper)", parts=("a", "b"))]
    ivs = {"a": _iv(0.3, 0.0, 0.05, 1), "b": _iv(0.3, 0.0, 0.05, 1)}
    both = evaluate_claims(claims, intervals=ivs)
    t = evaluate_claims(claims, intervals=ivs, not_testable={"b": "the model fails the W-mass check"})
    assert t.loc["b", "word"] == "not testable" and t.loc["b", "reason"] == "the model fails the W-mass check"
    # a claim of parts gives its failing parts' reasons, each once, without the parts' keys
    assert t.loc["ab", "word"] == "not testable" and t.loc["ab", "reason"] == "the model fails the W-mass check"
    three = [Claim("c", "c (paper)"), Claim("d", "d (paper)"), Claim("e", "e (paper)"),
             Claim("cde", "c, d and e (paper)", parts=("c", "d", "e"))]
    gated = evaluate_claims(three, intervals={k: _iv(0.3, 0.0, 0.05, 1) for k in "cde"},
                            not_testable={"c": "x fails", "d": "x fails", "e": "y fails"})
    assert gated.loc["cde", "reason"] == "x fails; y fails"
    assert t.loc["b", "estimate"] == pytest.approx(0.3)  # the interval is still shown
    assert t.loc["a", "p_holm"] == pytest.approx(2 * t.loc["a", "p"])  # a family of one claim (2 words) now
    assert both.loc["a", "p_holm"] == pytest.approx(4 * both.loc["a", "p"])  # of two claims (4 words) before
    record_claims(t)
    assert book.recorded()["claim_reason.b"] == "the model fails the W-mass check"
    assert book.recorded()["claim_reason.a"] == ""
    assert conclusions(t).loc["b is positive (paper)", "verdict"] == "not testable: the model fails the W-mass check"
    assert conclusions(t).loc["b is positive (paper)", ADJUSTED_P] == numformat.MISSING
    with pytest.raises(ValueError, match="not claims"):
        evaluate_claims(claims, intervals=ivs, not_testable={"zz": "why"})
    with pytest.raises(ValueError, match="reason"):
        evaluate_claims(claims, intervals=ivs, not_testable={"a": " "})


def test_claims_overview_gives_each_claim_its_words_measure_verdict_and_why():
    from posteval.claims import OVERVIEW_INDEX, claims_overview
    claims = [Claim("up", "x is positive", "crps", "a", source="this book", family="exploratory"),
              Claim("down", "y is negative", "rmse", "a", "b", direction=-1, source="paper"),
              Claim("both", "x and y", parts=("up", "down"), source="paper"),
              Claim("gated", "z is positive", "z", "b", source="paper"),
              Claim("gated_too", "z and x", parts=("gated", "up"), source="paper")]
    table = evaluate_claims(claims, intervals={"up": _iv(0.3, 0.0, 0.05, 1), "down": _iv(0.1, 0.0, 0.05, 1),
                                               "gated": _iv(0.3, 0.0, 0.05, 1)},
                            not_testable={"gated": "model b fails the W-mass check"})
    view = claims_overview(table, [claims[2], claims[0], claims[1], claims[3], claims[4]],
                           names={"b": "model b"})
    assert view.index.name == OVERVIEW_INDEX
    assert view.index.tolist() == ["x and y [paper (confirmatory)]", "x is positive [this book (exploratory)]",
                                   "y is negative [paper (confirmatory)]", "z is positive [paper (confirmatory)]",
                                   "z and x [paper (confirmatory)]"]
    assert view.columns.tolist() == ["what we measured", "verdict", "why"]
    up, down, both, gated, gated_too = (view.iloc[i] for i in (1, 2, 0, 3, 4))
    assert up["verdict"] == "yes" and up["what we measured"] == "CRPS: a"
    assert up["why"].startswith("difference " + numformat.one_line(
        numformat.interval(*table.loc["up", ["estimate", "lo", "hi"]])) + " lies above 0")
    assert down["verdict"] == "no" and down["what we measured"] == "RMSE: a − model b"
    assert "lies above 0" in down["why"] and "adjusted p" in down["why"]
    assert gated["verdict"] == "not testable" and gated["why"] == "model b fails the W-mass check"
    assert gated_too["why"] == "model b fails the W-mass check"  # its part's reason, without the part's key
    assert both["what we measured"] == "all of its 2 parts"
    assert both["verdict"] == "no" and both["why"].startswith("a part that does not hold")
    with pytest.raises(ValueError, match="not a claim of the table"):
        claims_overview(table, [Claim("other", "z (paper)", "z", "a")])
