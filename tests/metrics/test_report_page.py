"""The protocol report page (posteval.metrics.report_page) reads well and fits a 1,280 px window.

Unit tests cover the number formatting, interval cells, escaping, layout and argument errors.
The page test renders realistic content, opens it in headless Chromium at 1,280 x 900, measures
the laid-out DOM (an inline script writes the measurements into the document, read back with
--dump-dom) and saves a full-page screenshot to _build/test-artifacts/report_1280.png. The same
check run on one wide table (the old layout) must fail, so the check can fail.
"""

import ast
import doctest
import hashlib
import html
import io
import json
import re
import struct

import numpy as np
import pandas as pd
import pytest

from posteval import book
from posteval.metrics import report_page
from posteval.metrics.report_page import FOOTNOTE, MISSING, format_interval, format_number, html_page

WIDTH, HEIGHT = 1280, 900
ARTIFACT = book.ROOT / "_build" / "test-artifacts" / "report_1280.png"
MODELS = ["mlp_mse", "mdn", "flow", "cfm"]
DIMENSIONS = ["top_pt", "top_eta", "ttbar_mass"]
INTERVAL_METRICS = ["rmse", "mae", "crps", "coverage_error_raw", "coverage_error_conformal"]

MEASURE = """<script>
window.addEventListener("load", () => {
  const root = document.documentElement;
  const name = (el) => el.tagName.toLowerCase() + ": " + el.textContent.trim().slice(0, 40);
  const tables = [...document.querySelectorAll("table")].map((t) => ({
    scrollWidth: t.scrollWidth, parentWidth: t.parentElement.clientWidth,
    right: t.getBoundingClientRect().right, header: name(t.querySelector("th"))}));
  const cells = [...document.querySelectorAll("td, th, dd, dt, li, figcaption")]
    .filter((c) => c.scrollWidth > c.clientWidth + 1).map(name);
  const images = [...document.querySelectorAll("img")].map((i) => ({
    natural: i.naturalWidth, shown: i.getBoundingClientRect().width, parentWidth: i.parentElement.clientWidth}));
  const out = {innerWidth: window.innerWidth, scrollWidth: root.scrollWidth, clientWidth: root.clientWidth,
               scrollHeight: root.scrollHeight, tables, overflowing: cells, images};
  const pre = document.createElement("pre");
  pre.id = "measurements";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
});
</script>"""


# --- realistic content -----------------------------------------------------------------------

def protocol_table() -> pd.DataFrame:
    """4 models x 3 dimensions, 14 numeric columns, the kind, and intervals of 5 metrics."""
    rng = np.random.default_rng(7)
    rows = []
    for model in MODELS:
        point = model == "mlp_mse"
        for dim in DIMENSIONS:
            scale = {"top_pt": 30.0, "top_eta": 0.8, "ttbar_mass": 95.0}[dim]
            rmse = scale * rng.uniform(0.6, 1.1)
            row = dict(model=model, dimension=dim, rmse=rmse, mae=0.78 * rmse,
                       crps=(0.78 if point else 0.55) * rmse, chi2=rng.uniform(8, 400), ndf=19,
                       chi2_ndf=np.nan, chi2_pvalue=10 ** -rng.uniform(0, 9), chi2_pvalue_exchange=np.nan,
                       coverage_error_raw=np.nan if point else rng.uniform(0.002, 0.2),
                       coverage_error_conformal=rng.uniform(0.001, 0.02) if point else np.nan,
                       energy_score=1.3 * rmse, bias=rng.normal(0, 0.05) * scale,
                       pit_ks=rng.uniform(0.01, 0.3), sharpness_68=scale * rng.uniform(0.3, 1.2),
                       kind="point" if point else "samples")
            row["chi2_ndf"] = row["chi2"] / row["ndf"]
            rows.append(row)
    table = pd.DataFrame(rows)
    for metric in INTERVAL_METRICS:
        half = 0.04 * table[metric]
        table[f"{metric}_lo"], table[f"{metric}_hi"] = table[metric] - half, table[metric] + 1.2 * half
    return table


def verdicts_table() -> pd.DataFrame:
    return pd.DataFrame({
        "question": ["lowest CRPS", "lowest CRPS", "calibrated", "right spectrum"],
        "dimension": ["top_pt", "ttbar_mass", "top_eta", "ttbar_mass"],
        "leader": ["flow", "cfm", "mdn", "flow"],
        "difference": [-0.0007, -1.8412, 0.0183, np.nan],
        "difference_lo": [-0.0031, -2.9020, 0.0102, np.nan],
        "difference_hi": [0.0017, -0.7733, 0.0261, np.nan],
        "verdict": [
            "not resolved: flow has the lowest CRPS but its lead over mdn is inside the event-sampling "
            "interval, so the two are tied on this test set",
            "yes: cfm has the lowest CRPS on the pair mass, and the whole interval of its lead over flow "
            "lies below zero",
            "no: the coverage error of mdn is above the noise floor of 0.012 for 20,000 events at every level",
            "not computed: the spectrum exchange test needs --spectrum-resamples > 0; the chi-square alone is not a verdict",
        ],
    })


def calibration_table() -> pd.DataFrame:
    return pd.DataFrame({
        "model": MODELS, "coverage_68": [0.671, 0.655, 0.682, 0.679], "coverage_90": [0.898, 0.871, 0.902, 0.897],
        "coverage_95": [0.949, 0.93, 0.951, 0.948], "noise_floor": [0.0117] * 4,
        "calibration_events": [20000, 0, 0, 0]})


def png_figure(width_in: float, height_in: float, title: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(width_in, height_in), dpi=110)
    x = np.linspace(0, 400, 200)
    for k, model in enumerate(MODELS):
        ax.plot(x, np.exp(-((x - 150 - 10 * k) / 60) ** 2), label=model)
    ax.set(title=title, xlabel="top pT [GeV]", ylabel="density")
    ax.legend()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def provenance() -> dict:
    files = ["truth.npy", "mlp_mse_pred.npy", "flow_samples.npz", "calibration_truth.npy"]
    return {
        "posteval version": "0.2.0",
        "command line": ("python -m posteval.metrics report --samples mlp_mse=/data/runs/2026-11-30/mlp_mse_pred.npy "
                         "--samples flow=/data/runs/2026-11-30/flow_samples.npz:samples --truth /data/runs/truth.npy "
                         "--calibration mlp_mse=/data/runs/cal_pred.npy,/data/runs/calibration_truth.npy "
                         "--dims top_pt,top_eta,ttbar_mass --out /data/reports/2026-12-01"),
        "date": "2026-12-01T13:40:00+00:00",
        "input files": [{"path": f"/data/runs/2026-11-30/{f}", "sha256": hashlib.sha256(f.encode()).hexdigest()}
                        for f in files],
        "CRPS estimator": "nrg (energy form, E|X - y| - E|X - X'|/2 over the m samples)",
        "point value of a sampler": "the first sample per event (one reconstruction)",
        "bootstrap": {"level": 0.95, "resamples": 1000, "seed": 0},
    }


def realistic_page() -> str:
    return html_page(
        title="Evaluation protocol report",
        summary=[
            "flow has the lowest CRPS (dimension top_pt); its lead over mdn is not resolved: "
            "difference \u22120.0007 [\u22120.0031, 0.0017]",
            "mlp_mse has the lowest RMSE on every dimension and the highest CRPS on two of three.",
            "mdn is not calibrated: its coverage error is above the noise floor at every level.",
        ],
        sections=[("Protocol table", protocol_table(), "Per model and dimension; lower is better except p-values."),
                  ("Verdicts", verdicts_table(), "Each question answered yes, no or not resolved."),
                  ("Calibration", calibration_table(), "Empirical coverage of the central intervals.")],
        figures=[("Spectra of one reconstruction per event against the truth.", png_figure(14, 4.5, "spectra")),
                 ("Coverage curves.", png_figure(5, 4, "coverage"))],
        provenance=provenance(),
        notes=["chi2 pvalue exchange is not computed without --spectrum-resamples.",
               "coverage error raw is not computed for point predictors; coverage error conformal needs "
               "calibration data."],
    )


# --- formatting ------------------------------------------------------------------------------

def test_numbers_have_four_significant_digits():
    assert format_number(0.519412) == "0.5194"
    assert format_number(0.517) == "0.5170"
    assert format_number(1234.56) == "1235"
    assert format_number(123456.0) == "1.235e5"
    assert format_number(3.2e-7) == "3.200e\u22127"
    assert format_number(-12.3456) == "\u221212.35"


def test_missing_is_an_en_dash_and_zero_is_never_negative():
    assert format_number(float("nan")) == format_number(None) == format_number(pd.NA) == MISSING == "\u2013"
    assert format_number(-0.0) == format_number(0.0) == "0"
    assert format_number(-0.0, integer=True) == "0"
    assert format_interval(-0.0, -0.0, 0.0) == "0 [0, 0]"
    assert format_interval(float("nan"), 1.0, 2.0) == MISSING
    assert format_interval(0.5, float("nan"), 0.7) == "0.5000"


def test_integer_columns_are_integers_and_intervals_merge():
    table = pd.DataFrame({"model": ["a", "b"], "ndf": [19, 20], "events": [20000.0, 0.0],
                          "crps": [0.51941, 0.5302], "crps_lo": [0.517, 0.5281], "crps_hi": [0.5218, 0.5323],
                          "bias_lo": [0.1, 0.2]})
    page = html_page(title="t", summary=[], sections=[("s", table, "")], figures=[], provenance={})
    assert '<td class="num">19</td>' in page and '<td class="num">20000</td>' in page
    assert '<td class="num">0.5194 [0.5170, 0.5218]</td>' in page
    assert 'class="group"' not in page, "no rules between rows of distinct models"
    assert "crps [lo, hi]" in page and "crps lo" not in page
    assert "bias lo" in page, "an _lo column without its base and _hi stays a column"
    assert FOOTNOTE not in page


def test_missing_values_get_the_footnote():
    table = pd.DataFrame({"model": ["a", "b"], "chi2_pvalue_exchange": [np.nan, 0.3], "note": [None, "x"]})
    page = html_page(title="t", summary=[], sections=[("s", table, "")], figures=[], provenance={})
    assert page.count(f">{MISSING}</td>") == 2 and html.escape(FOOTNOTE) in page
    assert "chi2 pvalue exchange" in page


def test_everything_is_escaped():
    evil = "<script>alert(1)</script>"
    table = pd.DataFrame({"model": [f"my {evil} model"], "crps": [0.5]})
    page = html_page(title=f"report {evil}", summary=[f"{evil} wins"], sections=[(evil, table, evil)],
                     figures=[(evil, png_figure(2, 2, "x"))], provenance={evil: [evil, {evil: evil}]},
                     notes=[evil])
    assert "<script" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 13  # every place the text was given


def test_a_wide_table_is_split_with_the_identifying_columns_repeated():
    table = protocol_table()
    page = html_page(title="t", summary=[], sections=[("s", table, "")], figures=[], provenance={})
    tables = re.findall(r"<table>.*?</table>", page)
    assert len(tables) >= 2 and all(f"part {k} of {len(tables)}" in t for k, t in enumerate(tables, 1))
    for t in tables:
        assert re.search(r'<th scope="col">model</th><th scope="col">dimension</th>', t)
        assert t.count('<th scope="row">flow</th>') == len(DIMENSIONS)
        assert t.count('<tr class="group">') == len(MODELS) - 1, "a rule above each model's first row"
    headers = [h for t in tables for h in re.findall(r'<th scope="col">([^<]*)</th>', t) if h not in ("model", "dimension")]
    expected = [c.replace("_", " ") + (" [lo, hi]" if c in INTERVAL_METRICS else "")
                for c in table.columns if c not in ("model", "dimension") and not c.endswith(("_lo", "_hi"))]
    assert headers == expected, "every column once, in order"


def test_a_wide_table_of_few_rows_is_transposed():
    table = pd.DataFrame({"model": ["flow", "mdn"], **{f"metric_{k}": [0.1 * k, 0.2 * k] for k in range(1, 25)}})
    page = html_page(title="t", summary=[], sections=[("s", table, "")], figures=[], provenance={})
    assert page.count("<table>") == 1
    assert '<th scope="col">flow</th><th scope="col">mdn</th>' in page
    assert '<th scope="row">metric 24</th><td class="num">2.400</td><td class="num">4.800</td>' in page


def test_errors_name_the_argument():
    ok = dict(title="t", summary=[], sections=[], figures=[], provenance={})
    with pytest.raises(ValueError, match="title"):
        html_page(**{**ok, "title": " "})
    with pytest.raises(TypeError, match="summary: expected a list of strings, got a single string"):
        html_page(**{**ok, "summary": "flow wins"})
    with pytest.raises(TypeError, match=r"notes\[1\]: expected a string, got int"):
        html_page(**{**ok, "notes": ["a", 3]})
    with pytest.raises(TypeError, match=r"sections\[0\]: expected a pandas DataFrame, got dict"):
        html_page(**{**ok, "sections": [("s", {"a": [1]}, "")]})
    with pytest.raises(TypeError, match=r"sections\[0\]: expected \(heading, DataFrame, caption\)"):
        html_page(**{**ok, "sections": [("s", pd.DataFrame({"a": [1]}))]})
    with pytest.raises(ValueError, match=r"figures\[0\] \('spectra'\): expected the bytes of a PNG file"):
        html_page(**{**ok, "figures": [("spectra", b"GIF89a")]})
    with pytest.raises(TypeError, match="provenance: expected a mapping, got list"):
        html_page(**{**ok, "provenance": [("a", 1)]})


def test_the_docstring_examples_run():
    assert doctest.testmod(report_page).failed == 0


def test_the_page_module_imports_no_plotting():
    tree = ast.parse(open(report_page.__file__).read())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m for m in imported if m.split(".")[0] in ("matplotlib", "seaborn") or "plotting" in m}


# --- the page in Chromium --------------------------------------------------------------------

def measure(chromium, page: str, path) -> dict:
    """Layout measurements of `page` in a 1,280 x 900 window (the MEASURE script's output)."""
    path.write_text(page.replace("</body>", MEASURE + "</body>"))
    proc = chromium(f"--window-size={WIDTH},{HEIGHT}", "--dump-dom", path.as_uri())
    found = re.search(r'<pre id="measurements">(.*?)</pre>', proc.stdout, re.S)
    assert found, f"Chromium returned no measurements: {proc.stderr[-500:]}"
    m = json.loads(html.unescape(found.group(1)))
    assert m["innerWidth"] == WIDTH, f"the window is {m['innerWidth']} px wide, not {WIDTH}"
    return m


def layout_problems(m: dict) -> list[str]:
    """What does not fit: page wider than the window, tables wider than their box, cells overflowing."""
    problems = []
    if m["scrollWidth"] > WIDTH:
        problems.append(f"page scrolls horizontally: {m['scrollWidth']} px")
    problems += [f"table ({t['header']}) {t['scrollWidth']} px in a {t['parentWidth']} px box"
                 for t in m["tables"] if t["scrollWidth"] > t["parentWidth"] or t["right"] > WIDTH]
    problems += [f"overflowing cell {c}" for c in m["overflowing"]]
    problems += [f"image {i['shown']:.0f} px in a {i['parentWidth']} px box"
                 for i in m["images"] if i["natural"] == 0 or i["shown"] > i["parentWidth"] + 0.5]
    return problems


def test_the_report_fits_a_1280_px_window(chromium, tmp_path):
    page = realistic_page()
    m = measure(chromium, page, tmp_path / "report.html")
    assert len(m["tables"]) >= 4 and len(m["images"]) == 2
    assert layout_problems(m) == []
    ARTIFACT.parent.mkdir(parents=True, exist_ok=True)
    ARTIFACT.unlink(missing_ok=True)
    (tmp_path / "plain.html").write_text(page)
    height = min(m["scrollHeight"], 16000)
    chromium(f"--window-size={WIDTH},{height}", "--hide-scrollbars", f"--screenshot={ARTIFACT}",
             (tmp_path / "plain.html").as_uri())
    data = ARTIFACT.read_bytes() if ARTIFACT.exists() else b""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, f"no screenshot at {ARTIFACT}"
    assert struct.unpack(">II", data[16:24]) == (WIDTH, height)


def test_extreme_content_still_fits(chromium, tmp_path):
    """Long names, negative exponents in 20 interval columns, unbroken tokens, 60 columns of 2 rows."""
    wide = pd.DataFrame({"model": ["a_rather_long_model_name_x", "flow"] * 3, "dimension": ["ttbar_mass_over_pt"] * 6})
    for k in range(20):
        v = -np.linspace(1, 9, 6) * 1e-7
        wide[f"metric_{k}"], wide[f"metric_{k}_lo"], wide[f"metric_{k}_hi"] = v, 1.1 * v, 0.9 * v
    token = "/very/long/path/without/any/space/" + "x" * 120
    texts = pd.DataFrame({f"text_{k}": [token, "words " * 40] for k in range(8)})
    few = pd.DataFrame({"model": ["flow", "mdn"], **{f"metric_{k}": [-1.2345e-9, 123456789.0] for k in range(60)}})
    headers = pd.DataFrame({f"averyveryverylongcolumnnamewithoutunderscores{k}": [1.5, 2.5, 3.5, 4.5] for k in range(4)})
    page = html_page(title="report " + "z" * 300, summary=["q" * 500], notes=["n" * 400],
                     sections=[("wide", wide, ""), ("texts", texts, token), ("few", few, ""), ("headers", headers, "")],
                     figures=[], provenance={"k" * 200: "v" * 500, "nested": [["a" * 300], {"b" * 100: "c" * 300}]})
    m = measure(chromium, page, tmp_path / "extreme.html")
    assert len(m["tables"]) > 4 and layout_problems(m) == []


def test_the_check_fails_on_one_wide_table(chromium, tmp_path, monkeypatch):
    monkeypatch.setattr(report_page, "PAGE_CHARS", 10_000)  # the old layout: every column in one table
    page = html_page(title="t", summary=[], sections=[("s", protocol_table(), "")], figures=[], provenance={})
    assert page.count("<table>") == 1
    problems = layout_problems(measure(chromium, page, tmp_path / "wide.html"))
    assert any(p.startswith("table (th: model)") for p in problems), problems


def test_the_cli_report_fits_a_1280_px_window(chromium, tmp_path, monkeypatch, capsys):
    """The page the report CLI writes for four samplers and a point predictor over three
    dimensions (leads, calibration and protocol tables, three figures) fits the window too."""
    from posteval.metrics import cli

    rng = np.random.default_rng(3)
    n, m = 500, 32
    truth = rng.normal(size=(n, 3))
    np.save(tmp_path / "truth.npy", truth)
    for k, name in enumerate(("sampler_a", "a_rather_long_model_name", "flow", "mdn")):
        np.save(tmp_path / f"{name}.npy", truth[:, None, :] + (1 + 0.2 * k) * rng.normal(size=(n, m, 3)))
    np.save(tmp_path / "regressor.npy", truth + rng.normal(size=(n, 3)))
    monkeypatch.chdir(tmp_path)
    args = [a for name in ("sampler_a", "a_rather_long_model_name", "flow", "mdn", "regressor")
            for a in ("--samples", f"{name}={name}.npy")]
    assert cli.main(["report", "--quiet", *args, "--truth", "truth.npy", "--dims", "px,py,pz", "--out", "r"]) == 0
    capsys.readouterr()
    m_ = measure(chromium, (tmp_path / "r" / "report.html").read_text(), tmp_path / "measured.html")
    assert len(m_["images"]) == 3 and len(m_["tables"]) >= 3
    assert layout_problems(m_) == []
    shot = ARTIFACT.with_name("report_cli_1280.png")
    chromium(f"--window-size={WIDTH},{min(m_['scrollHeight'], 16000)}", "--hide-scrollbars", f"--screenshot={shot}",
             (tmp_path / "r" / "report.html").as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
