"""The area of each unit of a mapped, flattened netlist: its cells counted by resource, per instance of the
hierarchy (the contraction engine, the banks, the sequencer, ...).

yosys flattens the design before mapping, so `stat` sees one module. The cells keep the hierarchy in their names:
a flip-flop is named after its register (`u_accel.u_contract.u_loop.mark_b_q_TRELLIS_FF_Q_21`), and ABC9 names a
LUT after the net it drives, so a unit's combinational logic is counted with the unit whose register or wire it
computes. A cell's unit is the chain of instance names in front of its own name, generate scopes (`g_lane[3]`,
`genblk2`) dropped: `u_accel.u_contract.u_mac.g_lane[0].u_mul...` belongs to `u_accel.u_contract.u_mac`, and is
counted at every level above it too. Cells of the top module itself are the unit "(top)".

`unit_resources` is pure (the netlist as yosys's write_json gives it) and tested on small netlists
(scripts/tests/test_netlist_units.py).
"""

from __future__ import annotations

import fnmatch

TOP_UNIT = "(top)"


def unit_of(cell_name: str, depth: int) -> str:
    """The instance path (at most `depth` instances) that a flattened cell's name puts it in; TOP_UNIT for none."""
    scopes = cell_name.split(".")[:-1]
    instances = [s for s in scopes if s.startswith("u_")]
    return ".".join(instances[:depth]) or TOP_UNIT


def unit_resources(netlist: dict, top: str, spec: dict, depth: int = 2) -> dict[str, dict[str, int]]:
    """{unit: {resource: cells}} of the top module, for the units down to `depth` instances (a unit's count includes
    its sub-units'). `spec`: the target's resources, each with the yosys cell types that make it (fnmatch patterns);
    cells of no listed resource are not counted. Units are ordered by their first resource's count, largest first, and
    their resources in the order of `spec`."""
    mod: dict = netlist.get("modules", {}).get(top) or next(iter(netlist.get("modules", {}).values()), {})
    kinds = {res: s.get("yosys", []) for res, s in spec.items() if s.get("yosys")}
    out: dict[str, dict[str, int]] = {}
    for name, cell in mod.get("cells", {}).items():
        res = next((r for r, types in kinds.items() if any(fnmatch.fnmatchcase(cell["type"], t) for t in types)), None)
        if res is None:
            continue
        levels = {unit_of(name, d) for d in range(1, depth + 1)}
        for unit in levels:
            counts = out.setdefault(unit, {})
            counts[res] = counts.get(res, 0) + 1
    first = next(iter(kinds), "")
    return {
        unit: {res: counts[res] for res in kinds if res in counts}  # each unit's resources in the target's order
        for unit, counts in sorted(out.items(), key=lambda kv: (-kv[1].get(first, 0), kv[0]))
    }
