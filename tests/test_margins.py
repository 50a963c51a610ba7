"""posteval.margins: every margin, tolerance and target registered with its reason and where it was
set; a value that changes without its reason and set_at changing fails here, and so does a copy of a
registered value elsewhere (the library's constants, the chapters' parameter files) that differs."""

import ast
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from posteval import margins
from posteval.physics.consistency import EXACT_SAMPLER_RULE, Tolerances
from posteval.rubric import claims as rubric_claims

ROOT = Path(__file__).resolve().parents[1]
FILE = "lib/posteval/margins.py"


def _registry(source: str) -> dict:
    """REGISTRY of one version of margins.py, read without importing it."""
    for node in ast.parse(source).body:
        target = node.target if isinstance(node, ast.AnnAssign) else (node.targets[0] if isinstance(node, ast.Assign)
                                                                      else None)
        if isinstance(target, ast.Name) and target.id == "REGISTRY":
            return ast.literal_eval(node.value)
    raise AssertionError("no REGISTRY in margins.py")


def _changes(old: dict, new: dict) -> list[str]:
    """Entries whose value changed while their reason or set_at did not."""
    return [name for name in old.keys() & new.keys()
            if old[name]["value"] != new[name]["value"]
            and (old[name]["reason"] == new[name]["reason"] or old[name]["set_at"] == new[name]["set_at"])]


FIELDS = {"value", "unit", "reason", "set_at", "fixed", "evidence", "independent"}
#: a "before" entry's evidence names the commit of the first computation of the quantity it decides
FIRST_COMPUTED = re.compile(r"first computed in ([0-9a-f]{7,40})")
#: a set_at that starts with the commit that set the value
SET_COMMIT = re.compile(r"^([0-9a-f]{7,40}) ")


def _git(*args) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)


def test_every_entry_says_when_it_was_fixed_and_why():
    """value, unit, reason, set_at, and fixed "before" or "after" the data it decides, with its evidence; an
    "after" entry gives a value derived without the data (or None) with its derivation."""
    for name, e in margins.REGISTRY.items():
        assert set(e) == FIELDS, (name, set(e) ^ FIELDS)
        assert isinstance(e["value"], (int, float)) and all(len(e[k]) > 10 for k in ("unit", "reason", "set_at")), name
        assert e["fixed"] in margins.FIXED and len(e["evidence"]) > 10, name
        ind = e["independent"]
        if ind is not None:
            assert e["fixed"] == "after", f"{name}: only an 'after' entry needs a value derived without the data"
            assert set(ind) == {"value", "derivation"} and isinstance(ind["value"], (int, float)), name
            assert len(ind["derivation"]) > 20, name
        r = margins.registered(name)
        assert (r.fixed, r.evidence, r.independent) == (e["fixed"], e["evidence"], None if ind is None else ind["value"])


def test_a_margin_fixed_before_the_data_was_set_in_a_commit_before_the_first_computation():
    """From git history: a "before" entry's set_at commit is a strict ancestor of the commit its evidence
    names as the quantity's first computation, and that commit computes it (its message or a chapter's
    reference notebook changes in it)."""
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
        pytest.skip("a shallow clone has no history to check")
    for name, e in margins.REGISTRY.items():
        if e["fixed"] != "before":
            continue
        set_commit, first = SET_COMMIT.match(e["set_at"]), FIRST_COMPUTED.search(e["evidence"])
        assert set_commit and first, f"{name}: a 'before' entry names its commit and the first computation's"
        a, b = set_commit.group(1), first.group(1)
        assert a != b and _git("merge-base", "--is-ancestor", a, b).returncode == 0, \
            f"{name}: set in {a}, which is not before {b}, the first computation"


def test_the_prose_never_calls_a_margin_fixed_before_the_data_unless_it_was():
    """No page or registry text says "before the data" (or "beside results") of a margin: when a margin was
    fixed, before or after, comes from the registry (claim_fixed.<name>, the margins table), never typed."""
    pages = [*sorted((ROOT / "chapters").glob("*.md")), *sorted((ROOT / "book").glob("*.md"))]
    texts = {p.relative_to(ROOT).as_posix(): p.read_text() for p in pages}
    texts.update({f"margins {k}.{f}": str(e[f]) for k, e in margins.REGISTRY.items() for f in ("reason", "set_at")})
    bad = [where for where, text in texts.items()
           if re.search(r"(fixed|set|registered)\s+before\s+(the\s+)?(data|results|any model)|before the data|"
                        r"beside results", text, flags=re.I)]
    assert bad == [], f"typed 'before the data' (the registry says when each margin was fixed): {bad}"


def test_a_value_that_changes_without_its_reason_fails():
    """The rule itself, on a planted change; then over every version of margins.py in git."""
    e = {"value": 0.02, "unit": "u", "reason": "r", "set_at": "s"}
    assert _changes({"m": e}, {"m": {**e, "value": 0.03}}) == ["m"]
    assert _changes({"m": e}, {"m": {**e, "value": 0.03, "reason": "r2"}}) == ["m"]  # set_at too
    assert _changes({"m": e}, {"m": {**e, "value": 0.03, "reason": "r2", "set_at": "s2"}}) == []
    revs = subprocess.run(["git", "log", "--format=%H", "--", FILE], cwd=ROOT, capture_output=True, text=True)
    versions = [_registry(subprocess.run(["git", "show", f"{h}:{FILE}"], cwd=ROOT, capture_output=True,
                                         text=True).stdout) for h in reversed(revs.stdout.split())]
    versions.append(_registry((ROOT / FILE).read_text()))  # the working tree last
    for old, new in zip(versions, versions[1:]):
        assert not _changes(old, new), f"margins changed without a new reason and set_at: {_changes(old, new)}"


def test_the_library_and_the_chapters_use_the_registered_values():
    for name, v in Tolerances().values.items():  # the defaults: the tolerances set with the first physics checks
        assert v == margins.value(f"03.physics.{name}"), name
        assert Tolerances().registered(name) == f"03.physics.{name}", name
    assert margins.registered(EXACT_SAMPLER_RULE).fixed == "after"  # chapter 3's rule, fixed after the data were seen
    assert rubric_claims.ORDER_MARGIN == margins.value("04.order_margin")
    assert rubric_claims.ORDER_MARGIN_REASON == margins.registered("04.order_margin").reason
    for profile in ("ci", "full"):
        p = yaml.safe_load((ROOT / "params" / profile / "02_synthetic_bimodal.yaml").read_text())
        assert p["target_crps_ratio"] == margins.value(f"02.target_crps_ratio.{profile}")
        assert p["target_coverage_floor"] == margins.value("02.target_coverage_floor")


def test_an_unknown_name_lists_the_registered_ones():
    with pytest.raises(KeyError, match="calibration.coverage_margin"):
        margins.registered("nothing")
