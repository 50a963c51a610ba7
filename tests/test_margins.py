"""posteval.margins: every margin, tolerance and target registered with its reason and where it was
set; a value that changes without its reason and set_at changing fails here, and so does a copy of a
registered value elsewhere (the library's constants, the chapters' parameter files) that differs."""

import ast
import dataclasses
import subprocess
from pathlib import Path

import pytest
import yaml

from posteval import margins
from posteval.physics.consistency import Tolerances
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


def test_every_entry_has_a_value_unit_reason_and_set_at():
    for name, e in margins.REGISTRY.items():
        assert set(e) == {"value", "unit", "reason", "set_at"}, name
        assert isinstance(e["value"], (int, float)) and all(len(e[k]) > 10 for k in ("unit", "reason", "set_at")), name
        assert "before the data" in e["set_at"] or "beside results" in e["set_at"], name


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
    tol = dataclasses.asdict(Tolerances())
    for name, v in tol.items():
        assert v == margins.value(f"03.physics.{name}"), name
    assert rubric_claims.ORDER_MARGIN == margins.value("04.order_margin")
    assert rubric_claims.ORDER_MARGIN_REASON == margins.registered("04.order_margin").reason
    for profile in ("ci", "full"):
        p = yaml.safe_load((ROOT / "params" / profile / "02_synthetic_bimodal.yaml").read_text())
        assert p["target_crps_ratio"] == margins.value(f"02.target_crps_ratio.{profile}")
        assert p["target_coverage_floor"] == margins.value("02.target_coverage_floor")


def test_an_unknown_name_lists_the_registered_ones():
    with pytest.raises(KeyError, match="calibration.coverage_margin"):
        margins.registered("nothing")
