"""scripts/mutate.py's mechanics and its catalogue (scripts/mutants.json), without simulation.

The catalogue must stay in step with rtl/: every mutant's original text occurs exactly once in its file, so
an RTL edit that removes or duplicates it fails `make regress` here instead of leaving a mutant that tests
nothing.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest

from scripts import mutate
from verif.filelist import TECHS, sources

ROOT = Path(__file__).resolve().parents[2]
CAT = mutate.load_catalogue()
MUTANTS = CAT["mutants"]
IDS = [m["id"] for m in MUTANTS]


def test_catalogue_is_well_formed_and_up_to_date():
    assert mutate.validate(CAT) == []


def test_at_least_20_distinct_mutants():
    assert len(MUTANTS) >= 20
    assert len(set(IDS)) == len(IDS), [i for i, n in Counter(IDS).items() if n > 1]
    changes = [(m["file"], m["original"], m["replacement"]) for m in MUTANTS]
    assert len(set(changes)) == len(changes), "two mutants make the same change"


def test_every_block_with_mutants_has_tests_and_every_catalogue_block_is_mutated():
    used = {m["block"] for m in MUTANTS}
    assert used == set(CAT["blocks"])
    for name, b in CAT["blocks"].items():
        assert (ROOT / b["tests"]).is_dir() and any((ROOT / b["tests"]).glob("test_*.py")), name
        # a mutant may sit in any file the block's tests build (a shared sub-module such as tt_writeback, any
        # technology's version of a primitive)
        built = {str(f.relative_to(ROOT)) for t in TECHS for f in sources(b["toplevel"], t) if f.is_relative_to(ROOT)}
        assert all(m["file"] in built for m in MUTANTS if m["block"] == name), name


def test_equivalent_mutants_give_a_reason():
    for m in MUTANTS:
        if m.get("equivalent"):
            assert len(m.get("reason", "")) > 20, m["id"]


@pytest.mark.parametrize("mid", IDS)
def test_original_occurs_exactly_once(mid):
    m = next(m for m in MUTANTS if m["id"] == mid)
    assert (ROOT / m["file"]).read_text().count(m["original"]) == 1, (
        f"{mid}: its original text is not exactly once in {m['file']}: update scripts/mutants.json"
    )


@pytest.mark.parametrize("mid", IDS)
def test_applying_changes_exactly_that_text(mid):
    m = next(m for m in MUTANTS if m["id"] == mid)
    text = (ROOT / m["file"]).read_text()
    out = mutate.apply_mutant(text, m)
    i = text.index(m["original"])
    assert out != text
    assert out[:i] == text[:i]
    assert out[i : i + len(m["replacement"])] == m["replacement"]
    assert out[i + len(m["replacement"]) :] == text[i + len(m["original"]) :]
    assert len(out) - len(text) == len(m["replacement"]) - len(m["original"])


def test_apply_refuses_a_missing_or_repeated_original():
    m = {"id": "x", "file": "rtl/f.v", "original": "a + b", "replacement": "a - b"}
    assert mutate.apply_mutant("y = a + b;", m) == "y = a - b;"
    with pytest.raises(mutate.MutantError, match="0 times"):
        mutate.apply_mutant("y = a - b;", m)
    with pytest.raises(mutate.MutantError, match="2 times"):
        mutate.apply_mutant("y = a + b; z = a + b;", m)


def test_plant_mutates_only_the_copy(tmp_path):
    m = MUTANTS[0]
    before = {p.name: p.read_bytes() for p in (ROOT / "rtl").iterdir() if p.is_file()}
    rtl = mutate.plant(m, tmp_path)
    after = {p.name: p.read_bytes() for p in (ROOT / "rtl").iterdir() if p.is_file()}
    assert after == before, "rtl/ itself was modified"
    copied = {p.name: p.read_bytes() for p in rtl.iterdir() if p.is_file()}
    assert copied.keys() == before.keys()
    target = Path(m["file"]).name
    assert [n for n in before if copied[n] != before[n]] == [target]
    assert copied[target].decode() == mutate.apply_mutant(before[target].decode(), m)
    # planting another mutant into the same directory starts from a fresh copy: only the new change is there
    m2 = next(x for x in MUTANTS if x["file"] == m["file"] and x["id"] != m["id"])
    rtl = mutate.plant(m2, tmp_path)
    assert (rtl / target).read_text() == mutate.apply_mutant(before[target].decode(), m2)


def test_validate_catches_stale_and_malformed_entries():
    bad = copy.deepcopy(CAT)
    bad["mutants"][0]["original"] = "this text is not in the RTL"
    bad["mutants"][1]["id"] = bad["mutants"][2]["id"]
    bad["mutants"][3]["category"] = "cosmic ray"
    bad["mutants"][4]["replacement"] = bad["mutants"][4]["original"]
    del bad["mutants"][5]["block"]
    bad["mutants"].append({**bad["mutants"][6], "id": "eq_without_reason", "equivalent": True})
    errors = "\n".join(mutate.validate(bad))
    assert f"{bad['mutants'][0]['id']}: original occurs 0 times" in errors
    assert "duplicate id" in errors
    assert "unknown category 'cosmic ray'" in errors
    assert "replacement == original" in errors
    assert "missing ['block']" in errors
    assert "eq_without_reason: equivalent without a reason" in errors


def test_select_and_list(capsys):
    assert [m["block"] for m in mutate.select(CAT, ["tt_lfsr"], None)] == ["tt_lfsr"] * sum(
        m["block"] == "tt_lfsr" for m in MUTANTS
    )
    assert [m["id"] for m in mutate.select(CAT, None, IDS[:2])] == IDS[:2]
    with pytest.raises(mutate.MutantError):
        mutate.select(CAT, ["no_such_block"], None)
    with pytest.raises(mutate.MutantError):
        mutate.select(CAT, None, ["no_such_mutant"])
    assert mutate.main(["--list"]) == 0
    assert f"{len(MUTANTS)} mutants" in capsys.readouterr().out


def test_catalogue_file_is_plain_json():
    json.loads((ROOT / "scripts" / "mutants.json").read_text())


def test_first_failure_is_the_cocotb_assertion_not_the_runner_summary():
    log = (
        "E           AssertionError: tt_lfsr DRAWS1 on icarus in build/...: cocotb tests failed (exit 1)\n"
        "verif/runner.py:163: AssertionError\n"
        "                          assert got_state == model.state\n"
        "                      AssertionError: seed 0xa5a5a5a5: state 0x00000000 != golden 0x00000001\n"
    )
    assert mutate.first_failure(log) == "AssertionError: seed 0xa5a5a5a5: state 0x00000000 != golden 0x00000001"
    assert mutate.first_failure("10 passed in 3.0s\n") == ""


def test_run_tests_classifies_pass_fail_and_timeout(tmp_path):
    """run_tests on stand-in pytest suites (no simulator): pass -> passed, assert -> failed, hang -> timeout."""
    suites = {
        "ok": "def test_ok():\n    pass\n",
        "bad": "def test_bad():\n    assert 1 == 2, 'planted'\n",
        "hang": "import time\n\ndef test_hang():\n    time.sleep(60)\n",
    }
    got = {}
    for name, body in suites.items():
        d = tmp_path / name
        d.mkdir()
        (d / f"test_{name}.py").write_text(body)
        timeout = 3 if name == "hang" else 120
        got[name] = mutate.run_tests(
            {"tests": str(d)}, tmp_path, "unused", "icarus", 1, timeout, tmp_path / f"{name}.log"
        )
    assert got["ok"] == ("passed", [])
    assert got["bad"][0] == "failed" and got["bad"][1][0].endswith("test_bad.py::test_bad")
    assert got["hang"] == ("timeout", [])


def _row(mid: str, block: str, result: str, equivalent: bool = False) -> dict:
    reason = "same output: x | 0 is x" if equivalent else ""
    return {
        "id": mid,
        "block": block,
        "result": result,
        "equivalent": equivalent,
        "reason": reason,
        "log": f"build/mutate/{mid}/x.log",
    }


def test_catalogue_summary_counts_by_block_and_lists_what_was_not_killed():
    rows = [
        _row("a1", "tt_a", "killed"),
        _row("a2", "tt_a", "timeout"),
        _row("a3", "tt_a", "survived", equivalent=True),
        _row("a4", "tt_a", "killed", equivalent=True),
        _row("b1", "tt_b", "survived"),
        _row("b2", "tt_b", "stillborn"),
    ]
    meta = {"date": "2026-01-01", "commit": "abc1234", "sim": "icarus", "seed": 7, "catalogue_size": 7, "wall_s": 60}
    text = mutate.catalogue_summary(rows, meta)
    assert "| tt_a | 4 | 2 | 0 | 2 | 0 |" in text
    assert "| tt_b | 2 | 0 | 1 | 0 | 1 |" in text
    assert "| all | 6 | 2 | 1 | 2 | 1 |" in text
    assert "7 mutants (interrupted: 6 run)" in text and "SEED=7" in text and "abc1234" in text
    listed = [
        line.split(" | ")[0].lstrip("| ") for line in text.splitlines() if line.startswith("| ") and "/x.log" in line
    ]
    # an equivalent that survived gives its reason (a table-safe copy); one a test killed gives its log
    assert listed == ["a4", "b1", "b2"]
    assert "| a3 | tt_a | survived (marked equivalent) | same output: x / 0 is x |" in text


def test_only_a_whole_catalogue_run_writes_the_results_page(tmp_path, monkeypatch):
    monkeypatch.setattr(mutate, "OUT", tmp_path / "out")
    monkeypatch.setattr(mutate, "RESULTS", tmp_path / "mutation.md")
    (tmp_path / "out").mkdir()
    row = {**_row("a1", "tt_a", "killed"), "category": "c", "seconds": 1.0}
    meta = {"date": "d", "commit": "c", "sim": "icarus", "seed": 1, "catalogue_size": 1, "wall_s": 1.0}
    mutate.write_reports([row], {**meta, "whole_catalogue": False})
    assert not (tmp_path / "mutation.md").exists()
    mutate.write_reports([row], {**meta, "whole_catalogue": True})
    assert "| all | 1 | 1 | 0 | 0 | 0 |" in (tmp_path / "mutation.md").read_text()
