"""scripts/logic_depth.py on netlists small enough to count by hand."""

import pytest

from scripts.logic_depth import deepest_paths


def _cell(kind: str, inputs: dict[str, list[int]], outputs: dict[str, list[int]]) -> dict:
    return {
        "type": kind,
        "port_directions": {**{p: "input" for p in inputs}, **{p: "output" for p in outputs}},
        "connections": {**inputs, **outputs},
    }


def _netlist(cells: dict, nets: dict[str, list[int]]) -> dict:
    return {"modules": {"top": {"cells": cells, "netnames": {n: {"bits": b} for n, b in nets.items()}}}}


def _ff(d: int, q: int) -> dict:
    return _cell("TRELLIS_FF", {"CLK": [1], "DI": [d]}, {"Q": [q]})


def test_levels_count_luts_carries_and_wide_muxes_by_hand():
    # a_q -> LUT -> LUT -> PFUMX -> CCU2C (through its LUT input) -> carry in of the next CCU2C -> b_q
    #          1       1      0.25          1                                 0.1            = 3.35
    # and a shallow path a_q -> LUT -> c_q (1 level), whose net t1 has 2 sinks
    cells = {
        "a_ff": _ff(90, 10),
        "l1": _cell("LUT4", {"A": [10], "B": [2]}, {"Z": [11]}),
        "l2": _cell("LUT4", {"A": [11]}, {"Z": [12]}),
        "mux": _cell("PFUMX", {"ALUT": [12], "BLUT": [11], "C0": [3]}, {"Z": [13]}),
        "cc0": _cell("CCU2C", {"A0": [13], "CIN": [4]}, {"S0": [14], "COUT": [15]}),
        "cc1": _cell("CCU2C", {"A0": [5], "CIN": [15]}, {"S0": [16], "COUT": [17]}),
        "b_ff": _ff(16, 20),
        "c_ff": _ff(11, 21),
    }
    nets = {"a_q": [10], "t1": [11], "t2": [12], "m": [13], "s0": [14], "carry": [15], "sum": [16], "b_q": [20]}
    paths = deepest_paths(_netlist(cells, nets), "top")
    assert paths[0]["levels"] == pytest.approx(3.35)
    assert paths[0]["start"] == "a_q" and paths[0]["end"] == "b_ff .DI"
    assert paths[0]["nets"] == ["a_q", "t1", "t2", "m", "carry", "sum"]
    assert paths[0]["max_fanout"] == 3  # t1: l2, the mux and c_ff
    assert [p["end"] for p in paths] == ["b_ff .DI", "c_ff .DI"]
    assert paths[1]["levels"] == 1.0
    assert [p["end"] for p in deepest_paths(_netlist(cells, nets), "top", n=1)] == ["b_ff .DI"]


def test_bits_of_one_register_count_once():
    # two bits of register r (mapped as r_TRELLIS_FF_Q and r_TRELLIS_FF_Q_1) behind one LUT each from s_q
    cells = {
        "s": _ff(90, 10),
        "la": _cell("LUT4", {"A": [10]}, {"Z": [11]}),
        "lb": _cell("LUT4", {"A": [10]}, {"Z": [12]}),
        "r_TRELLIS_FF_Q": _ff(11, 20),
        "r_TRELLIS_FF_Q_1": _ff(12, 21),
        "other": _ff(10, 22),
    }
    paths = deepest_paths(_netlist(cells, {"s_q": [10]}), "top")
    # other (fed by s_q directly) has no logic on its path and is left out
    assert [(p["end"].split(" ")[0].startswith("r_TRELLIS"), p["endpoints"], p["levels"]) for p in paths] == [
        (True, 2, 1.0)
    ]


def test_a_combinational_loop_ends_instead_of_hanging():
    cells = {
        "x": _cell("LUT4", {"A": [11]}, {"Z": [10]}),
        "y": _cell("LUT4", {"A": [10]}, {"Z": [11]}),
        "f": _ff(10, 12),
    }
    paths = deepest_paths(_netlist(cells, {}), "top")
    assert paths and paths[0]["levels"] >= 1.0


def test_a_missing_top_is_named():
    with pytest.raises(ValueError, match="no module 'nope'"):
        deepest_paths(_netlist({}, {}), "nope")
