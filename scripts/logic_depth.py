"""The deepest register-to-register paths of a mapped netlist, counted in LUT levels.

nextpnr names a critical path only after routing, which takes the better part of an hour on the wide engines; the
logic depth of the mapped netlist is known as soon as yosys is done. A path starts at a flip-flop, a memory or
multiplier output or a top-level port, runs through the combinational cells (LUTs and the carry and wide-mux cells
beside them), and ends at any other cell input. Its depth is the sum of the cells' costs:

  a LUT                                          1
  a carry cell from its LUT inputs               1   (it holds the LUT that feeds the carry)
  a carry cell from the carry in                 0.1 (the dedicated carry chain)
  a wide multiplexer (PFUMX, L6MUX21, MUXF*)     0.25 (inside the slice, no general routing)

Each level on a real device costs a LUT delay and a hop of routing, so the deepest paths of this count are where
timing fails first; fan-out is reported beside them, since a net with hundreds of sinks is a long route.
`deepest_paths` is pure (the netlist as yosys's write_json gives it) and tested on small netlists
(scripts/tests/test_logic_depth.py).
"""

from __future__ import annotations

from typing import TypedDict

LUT = 1.0
WIDE_MUX = 0.25
CARRY_IN = 0.1

# cell type -> (cost from a general input, {port: cost} for the ports that differ)
COMBINATIONAL: dict[str, tuple[float, dict[str, float]]] = {
    # ECP5
    "LUT4": (LUT, {}),
    "PFUMX": (WIDE_MUX, {}),
    "L6MUX21": (WIDE_MUX, {}),
    "CCU2C": (LUT, {"CIN": CARRY_IN}),
    # iCE40
    "SB_LUT4": (LUT, {}),
    "SB_CARRY": (LUT, {"CI": CARRY_IN}),
    # Xilinx UltraScale+
    **{f"LUT{k}": (LUT, {}) for k in range(1, 7)},
    "MUXF7": (WIDE_MUX, {}),
    "MUXF8": (WIDE_MUX, {}),
    "MUXF9": (WIDE_MUX, {}),
    "CARRY8": (LUT, {"CI": CARRY_IN, "CI_TOP": CARRY_IN}),
}


class DepthPath(TypedDict):
    levels: float
    start: str  # the net a path leaves a register, memory, multiplier or port by
    end: str  # the cell and port it enters
    endpoints: int  # the endpoints of the same start and end register (bits of one bus count once)
    max_fanout: int  # the largest sink count of a net on the path
    nets: list[str]  # the path's nets, start first


def net_names(mod: dict) -> dict[int, str]:
    """bit -> its shortest net name (the register or wire it is in the source), without yosys's escapes."""
    names: dict[int, str] = {}
    for name, net in mod.get("netnames", {}).items():
        for i, b in enumerate(net.get("bits", [])):
            label = name if len(net["bits"]) == 1 else f"{name}[{i}]"
            if isinstance(b, int) and (b not in names or len(label) < len(names[b])):
                names[b] = label.replace("\\", "")
    return names


def _base(cell: str) -> str:
    """A mapped flip-flop's name without yosys's per-bit suffix, so that the bits of one register count once."""
    return cell.replace("\\", "").split("_TRELLIS_FF")[0].split("_SB_DFF")[0].split("_FD")[0]


def deepest_paths(netlist: dict, top: str, n: int = 10) -> list[DepthPath]:
    """The `n` deepest paths of module `top` through at least one combinational cell, deepest first, one per
    (start net, end register)."""
    mod = netlist.get("modules", {}).get(top)
    if mod is None:
        raise ValueError(f"the netlist has no module {top!r}")
    cells = mod.get("cells", {})
    driver: dict[int, str] = {}
    sinks: dict[int, int] = {}
    for name, cell in cells.items():
        dirs = cell.get("port_directions", {})
        for port, bits in cell.get("connections", {}).items():
            for b in bits:
                if not isinstance(b, int):
                    continue
                if dirs.get(port) == "output":
                    driver[b] = name
                else:
                    sinks[b] = sinks.get(b, 0) + 1

    # arrival[b] = (levels at net b, the input net of b's driver that sets them); iterative, so that deep netlists
    # need no recursion, and a combinational loop (never in this RTL) ends at the net seen twice.
    arrival: dict[int, tuple[float, int | None]] = {}

    def inputs(b: int) -> list[tuple[int, float]]:
        cell = cells[driver[b]]
        base, ports = COMBINATIONAL[cell["type"]]
        dirs = cell.get("port_directions", {})
        return [
            (ib, ports.get(port, base))
            for port, bits in cell.get("connections", {}).items()
            if dirs.get(port) == "input"
            for ib in bits
            if isinstance(ib, int)
        ]

    def resolve(bit: int) -> tuple[float, int | None]:
        stack = [bit]
        visiting: set[int] = set()
        while stack:
            b = stack[-1]
            if b in arrival:
                stack.pop()
                continue
            cell = driver.get(b)
            if cell is None or cells[cell]["type"] not in COMBINATIONAL:
                arrival[b] = (0.0, None)
                stack.pop()
                continue
            pending = [ib for ib, _ in inputs(b) if ib not in arrival and ib not in visiting]
            if pending and b not in visiting:
                visiting.add(b)
                stack.extend(pending)
                continue
            best: tuple[float, int | None] = (0.0, None)
            for ib, cost in inputs(b):
                level = arrival.get(ib, (0.0, None))[0] + cost
                if level > best[0]:
                    best = (level, ib)
            arrival[b] = best
            visiting.discard(b)
            stack.pop()
        return arrival[bit]

    def chain(b: int) -> list[int]:
        """The nets of the deepest path into net b, b first (a loop ends where it closes)."""
        nets = [b]
        prev = arrival[b][1]
        while prev is not None and prev not in nets:
            nets.append(prev)
            prev = arrival[prev][1]
        return nets

    ends: dict[tuple[int, str], tuple[float, str, int, int]] = {}
    for name, cell in cells.items():
        if cell["type"] in COMBINATIONAL:
            continue
        dirs = cell.get("port_directions", {})
        for port, bits in cell.get("connections", {}).items():
            if dirs.get(port) != "input" or port.startswith("CLK") or port == "C":  # a clock is no data path
                continue
            for b in bits:
                if not isinstance(b, int):
                    continue
                levels, _ = resolve(b)
                if levels == 0:
                    continue  # register to register: no logic
                start = chain(b)[-1]
                key = (start, _base(name))
                old = ends.get(key)
                count = (old[3] if old else 0) + 1
                if old is None or levels > old[0]:
                    ends[key] = (levels, f"{name.replace(chr(92), '')} .{port}", b, count)
                else:
                    ends[key] = (*old[:3], count)

    names = net_names(mod)
    out: list[DepthPath] = []
    for (start, _), (levels, end, b, count) in sorted(ends.items(), key=lambda kv: -kv[1][0])[:n]:
        nets = chain(b)
        out.append(
            {
                "levels": round(levels, 2),
                "start": names.get(start, f"bit {start}"),
                "end": end,
                "endpoints": count,
                "max_fanout": max(sinks.get(x, 0) for x in nets),
                "nets": [names.get(x, f"bit {x}") for x in reversed(nets)],
            }
        )
    return out
