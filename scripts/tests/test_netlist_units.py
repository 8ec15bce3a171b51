"""scripts/netlist_units.py on small netlists: the unit a flattened cell's name puts it in, and the counts per unit
and resource."""

from scripts.netlist_units import TOP_UNIT, unit_of, unit_resources

SPEC = {
    "LUT": {"yosys": ["LUT4"], "pnr": ["TRELLIS_COMB"]},
    "FF": {"yosys": ["TRELLIS_FF"]},
    "BRAM": {"yosys": ["DP16KD", "PDPW16KD"]},
    "IO": {"pnr": ["TRELLIS_IO"]},
}


def test_unit_of_keeps_instances_and_drops_generate_scopes():
    name = "u_accel.u_contract.u_mac.g_lane[0].u_mul.genblk3.g_ecp5.u_mul.u_mult"
    assert unit_of(name, 1) == "u_accel"
    assert unit_of(name, 3) == "u_accel.u_contract.u_mac"
    assert unit_of(name, 9) == "u_accel.u_contract.u_mac.u_mul.u_mul"  # the cell's own name is not a unit
    assert unit_of("u_accel.u_contract.g_lanes.ld_last_lane_q_TRELLIS_FF_Q", 3) == "u_accel.u_contract"
    assert unit_of("addr_q_TRELLIS_FF_Q", 2) == TOP_UNIT


def _netlist(cells: dict[str, str]) -> dict:
    return {"modules": {"top": {"cells": {name: {"type": t} for name, t in cells.items()}}}}


def test_unit_resources_count_each_level_and_skip_cells_of_no_resource():
    net = _netlist(
        {
            "bit_cnt_TRELLIS_FF_Q": "TRELLIS_FF",
            "u_accel.busy_q_TRELLIS_FF_Q": "TRELLIS_FF",
            "u_accel.u_contract.acc_q_TRELLIS_FF_Q": "TRELLIS_FF",
            "u_accel.u_contract.acc_q_DI_LUT4_Z": "LUT4",
            "u_accel.u_contract.g_lanes.ld_q_DI_LUT4_Z": "LUT4",
            "u_accel.u_banks.g_bank[0].u_bank.g_copy[0].u_ram.u_cell": "PDPW16KD",
            "u_accel.u_banks.sel_q_DI_LUT4_Z": "LUT4",
            "u_accel.u_banks.io_cell": "TRELLIS_IO",  # IO has no yosys types: not counted
            "u_accel.u_contract.pll": "EHXPLLL",  # of no resource
        }
    )
    got = unit_resources(net, "top", SPEC)
    assert got == {
        "u_accel": {"FF": 2, "LUT": 3, "BRAM": 1},
        "u_accel.u_contract": {"FF": 1, "LUT": 2},
        "u_accel.u_banks": {"BRAM": 1, "LUT": 1},
        TOP_UNIT: {"FF": 1},
    }
    assert list(got) == ["u_accel", "u_accel.u_contract", "u_accel.u_banks", TOP_UNIT]  # by LUTs, largest first
    assert unit_resources(net, "top", SPEC, depth=1) == {"u_accel": {"FF": 2, "LUT": 3, "BRAM": 1}, TOP_UNIT: {"FF": 1}}
