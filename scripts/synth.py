"""`make synth`: synthesize (and place and route) one FPGA target and judge its quality of results.

    python scripts/synth.py --target ice40-up5k|ecp5-85k|zynq-usplus [--top M] [--param K=V ...]
                            [--optimizer adam] [--rank-adaptation] [--update-baseline] [--bitstream] [--ooc]
                            [--seeds N] [--lanes N] [--buf-depth N] [--vec N] [--drain N] [--preload 0|1]
                            [--no-pnr]

Targets live in scripts/synth_targets.json (tool flow, part, top module, model, RTL files, constraint
file, clocks and requested MHz, resource names, device capacity). The top's parameters come from the target's
model: hdl_parameters(params_for(compile_network(load_config(model)), lanes=, buf_depth=, vec=, drain=, preload=)),
with the target's "lanes", "buf_depth", "vec", "drain" and "preload" (the contraction engine; default 1 lane, no
vector loads, one element drained a cycle, two buffer sets), computed on every run (model_params); "params" in the
target and --param override them; --lanes, --buf-depth, --vec, --drain and --preload build another engine for
the target's model. With the target's top and model, the report also gives the model's cycles per training sample on
that engine (golden/cost.py, the RTL's exact timing) and the training samples/s at the achieved Fmax.
Each run writes build/synth/<target>/:
report.json (the figures), synth.ys and yosys.log, stat.json/stat.txt (cell counts), pre_map.json
(multipliers and memories before technology mapping), and for place-and-route targets pnr.log and
pnr_report.json. It prints a short table and:
  - says whether every multiplier went to a DSP and every memory to block RAM, and what did not;
  - gives the area of each unit (the cells of each instance two levels down, scripts/netlist_units.py), which the
    baseline guards like the totals;
  - fails when the design does not fit (which resource, by how much) or misses a requested clock;
  - compares with scripts/qor_baselines/<target>.json and fails when Fmax drops or a resource grows beyond
    the tolerances stated in that file. --update-baseline writes the baseline from this run instead;
    a run that does not fit writes a does-not-fit baseline (resources, no Fmax; later runs still fail on the fit).
    It refuses a run that misses its requested clock, and one that builds other than the target's own build
    (engine, top, parameter, model or nextpnr options).
--seeds N (place-and-route targets) places and routes the same netlist again with nextpnr seeds 2..N (in
build/synth/<target>/seed<k>/) and reports each Fmax and their spread: placement noise, to tell a real gain
from a lucky seed. The verdict and the baseline stay those of seed 1.
Exit status: 0 pass, 1 QoR failure (does not fit, timing, regression), 2 tool or configuration error.

The parsing and comparison functions are pure and tested without synthesis (scripts/tests/).
"""

from __future__ import annotations

import argparse
import datetime
import fnmatch
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TypedDict

ROOT = Path(__file__).resolve().parent.parent
TARGETS_FILE = ROOT / "scripts" / "synth_targets.json"
BASELINE_DIR = ROOT / "scripts" / "qor_baselines"
BUILD_DIR = ROOT / "build" / "synth"

DEFAULT_TOLERANCES = {
    "fmax_drop_pct": 5.0,
    "resource_growth_pct": 5.0,
    "resource_abs_slack": 2,
}
TOLERANCE_RULE = (
    "fail when fmax < baseline * (1 - fmax_drop_pct/100) for any clock, or when a resource "
    "> baseline + max(baseline * resource_growth_pct/100, resource_abs_slack)"
)

# Cell types that say where a memory went (from yosys' "mapping memory X via Y" lines).
_BLOCK_RAM_HINTS = (
    "RAM4K",
    "RAM40",
    "SPRAM",
    "DP16KD",
    "PDPW16KD",
    "RAMB",
    "BRAM",
    "BLOCKRAM",
    "URAM",
    "HUGERAM",
    "EBR",
)
_LUT_RAM_HINTS = ("DPR16X4", "LUTRAM", "RAM16X", "RAM32X", "RAM64X", "RAM128X", "RAM256X", "RAM32M", "RAM64M", "SRL")


class ToolError(RuntimeError):
    """A tool failed or the configuration is wrong (exit status 2)."""


# --------------------------------------------------------------------------------------------------------
# Pure functions: parsing, counting, judging. Tested in scripts/tests/test_synth_report.py.
# --------------------------------------------------------------------------------------------------------


def parse_yosys_stat_json(text: str, top: str | None = None) -> dict:
    """Cell counts from `tee -o f stat -json` (yosys 0.23 and 0.70 formats).

    Returns {"cells": {type: n}, "num_cells": n, "num_memories": n, "num_port_bits": n or None}. Uses the
    whole-design section when there is one, else the top module's (or the only module's).
    """
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in yosys stat output")
    data = json.loads(text[start:])
    section = data.get("design")
    if section is None:
        mods = data.get("modules", {})
        if top is not None and ("\\" + top) in mods:
            section = mods["\\" + top]
        elif top is not None and top in mods:
            section = mods[top]
        elif len(mods) == 1:
            section = next(iter(mods.values()))
        else:
            raise ValueError(f"yosys stat: cannot tell the top among modules {sorted(mods)}")
    cells = {k: int(v) for k, v in section.get("num_cells_by_type", {}).items() if not k.startswith("$scopeinfo")}
    return {
        "cells": cells,
        "num_cells": sum(cells.values()),
        "num_memories": int(section.get("num_memories", 0)),
        "num_port_bits": int(section["num_port_bits"]) if "num_port_bits" in section else None,
    }


_STAT_TEXT_OLD = re.compile(r"^\s{5,}(\$?[A-Za-z_][\w$\\.]*)\s+(\d+)\s*$")  # yosys 0.23: "     SB_LUT4   2162"
_STAT_TEXT_NEW = re.compile(r"^\s*(\d+)\s+(\$?[A-Za-z_][\w$\\.]*)\s*$")  # yosys 0.70: "  7849   LUT4"
_STAT_TEXT_SKIP = {
    "wires",
    "wire",
    "bits",
    "public",
    "ports",
    "port",
    "cells",
    "memories",
    "memory",
    "processes",
    "submodules",
}


def parse_yosys_stat_text(text: str, top: str | None = None) -> dict:
    """Cell counts from the text of `stat` (fallback when the JSON is missing).

    Takes the section of the top module (`=== top ===`), or the last section, and reads the cell-type
    lines in both the 0.23 layout ("   SB_LUT4    2162") and the 0.70 layout ("   2162   SB_LUT4").
    """
    sections: list[tuple[str, list[str]]] = []
    for line in text.splitlines():
        m = re.match(r"^===\s*(.*?)\s*===\s*$", line)
        if m:
            sections.append((m.group(1), []))
        elif sections:
            sections[-1][1].append(line)
    if not sections:
        raise ValueError("no `=== module ===` section in yosys stat text")
    chosen = sections[-1]
    if top is not None:
        for name, lines in sections:
            if name.lstrip("\\") == top:
                chosen = (name, lines)
    cells: dict[str, int] = {}
    in_cells = False
    for line in chosen[1]:
        if re.search(r"Number of cells:|^\s*\d+\s+cells\s*$", line):
            in_cells = True
            continue
        if not in_cells:
            continue
        if not line.strip():
            if cells:
                break
            continue
        m_new = _STAT_TEXT_NEW.match(line)
        m_old = _STAT_TEXT_OLD.match(line)
        if m_new and m_new.group(2) not in _STAT_TEXT_SKIP:
            name, n = m_new.group(2), int(m_new.group(1))
        elif m_old and m_old.group(1) not in _STAT_TEXT_SKIP:
            name, n = m_old.group(1), int(m_old.group(2))
        else:
            if cells:
                break
            continue
        if not name.startswith("$scopeinfo"):
            cells[name] = n
    return {"cells": cells, "num_cells": sum(cells.values()), "num_memories": 0, "num_port_bits": None}


def count_resources(cells: dict[str, int], spec: dict, source: str) -> dict[str, float]:
    """Sum cell (yosys) or bel (nextpnr) counts into the target's resource names.

    spec: {"LUT": {"yosys": ["LUT4"], "pnr": [...], "weights": {type: w}}, ...}; type names may be globs.
    Only resources with a list for `source` appear in the result.
    """
    out: dict[str, float] = {}
    for res, how in spec.items():
        patterns = how.get(source)
        if not isinstance(patterns, list):
            continue
        weights = how.get("weights", {})
        total = 0.0
        for cell, n in cells.items():
            for pat in patterns:
                if fnmatch.fnmatchcase(cell, pat):
                    total += n * float(weights.get(pat, weights.get(cell, 1)))
                    break
        out[res] = int(total) if float(total).is_integer() else total
    return out


def parse_nextpnr_report(data: dict) -> dict:
    """nextpnr --report JSON -> {"fmax": {net: {"achieved": MHz, "constraint": MHz}},
    "utilization": {bel: {"used": n, "available": n}}, "critical": {net: summary}}."""
    fmax = {
        net: {"achieved": float(v["achieved"]), "constraint": float(v.get("constraint", 0.0))}
        for net, v in data.get("fmax", {}).items()
    }
    util = {
        bel: {"used": int(v["used"]), "available": int(v["available"])}
        for bel, v in data.get("utilization", {}).items()
    }
    critical = {}
    for cp in data.get("critical_paths", []):
        src, dst = cp.get("from", ""), cp.get("to", "")
        path = cp.get("path", [])
        if not path or not src.startswith("posedge ") or src != dst:
            continue
        net = src[len("posedge ") :]
        delay = sum(float(p.get("delay", 0.0)) for p in path)
        logic = sum(float(p.get("delay", 0.0)) for p in path if p.get("type") == "logic")
        routing = sum(float(p.get("delay", 0.0)) for p in path if p.get("type") == "routing")
        critical[net] = {
            "from": path[0].get("from", {}).get("cell", "?"),
            "to": path[-1].get("to", {}).get("cell", "?"),
            "delay_ns": round(delay, 3),
            "logic_ns": round(logic, 3),
            "routing_ns": round(routing, 3),
            "steps": len(path),
        }
    return {"fmax": fmax, "utilization": util, "critical": critical}


def clock_port_of_net(net: str) -> str:
    """The top-level port a nextpnr clock net comes from: 'clk$SB_IO_IN_$glb_clk' -> 'clk',
    '$glbnet$clk' -> 'clk', 'clk$TRELLIS_IO_IN' -> 'clk'."""
    n = net
    for prefix in ("$glbnet$", "$gbuf$"):
        if n.startswith(prefix):
            n = n[len(prefix) :]
    return n.split("$", 1)[0] if not n.startswith("$") else n


def match_clocks(requested: dict[str, float], fmax: dict[str, dict]) -> dict[str, dict]:
    """Pair each requested clock port with nextpnr's clock net and judge it.

    Returns {port: {"requested_mhz", "fmax_mhz" (None if no net found), "net", "pass", "constraint_mhz" (the
    clock nextpnr timed the net at), "slack_ns" (at that constraint)}}. Nets that belong
    to no requested port (e.g. nextpnr's constant-net pseudo clocks) are ignored; if exactly one port and
    one real net are left unmatched they are paired.
    """
    out: dict[str, dict] = {}
    unmatched = {net: v for net, v in fmax.items() if not clock_port_of_net(net).startswith("$")}
    for port, mhz in requested.items():
        hit = [net for net in unmatched if clock_port_of_net(net) == port]
        out[port] = {
            "requested_mhz": float(mhz),
            "fmax_mhz": None,
            "net": None,
            "pass": None,
            "constraint_mhz": None,
            "slack_ns": None,
        }
        if hit:
            net = hit[0]
            out[port].update(_timed(net, unmatched.pop(net)))
    missing = [p for p, v in out.items() if v["net"] is None]
    if len(missing) == 1 and len(unmatched) == 1:
        out[missing[0]].update(_timed(*unmatched.popitem()))
    for v in out.values():
        if v["fmax_mhz"] is not None:
            v["pass"] = v["fmax_mhz"] >= v["requested_mhz"]
    return out


def _timed(net: str, v: dict) -> dict:
    """A clock net's figures: its Fmax, the clock nextpnr timed it at and the slack there."""
    got = {"net": net, "fmax_mhz": round(v["achieved"], 2)}
    if v.get("constraint"):
        got["constraint_mhz"] = round(v["constraint"], 4)
        got["slack_ns"] = round(1000.0 / v["constraint"] - 1000.0 / v["achieved"], 3)
    return got


_UTIL_LINE = re.compile(r"^Info:\s+(\S+):\s+(\d+)\s*/\s*(\d+)\s+(\d+)%")


def parse_nextpnr_log_utilisation(log: str) -> dict[str, dict]:
    """The last 'Device utilisation' block of a nextpnr log: {bel: {"used", "available"}}. Available even
    when nextpnr stopped before writing its report (e.g. the design did not fit)."""
    util: dict[str, dict] = {}
    block: dict[str, dict] = {}
    in_block = False
    for line in log.splitlines():
        if "Device utilisation" in line or "Device utilization" in line:
            in_block, block = True, {}
            continue
        if in_block:
            m = _UTIL_LINE.match(line)
            if m:
                block[m.group(1)] = {"used": int(m.group(2)), "available": int(m.group(3))}
                continue
            if block:
                util = block
                in_block = False
    if in_block and block:
        util = block
    return util


_NO_BELS = re.compile(r"no BELs remaining to implement cell type '([^']+)'")
_NOT_ENOUGH = re.compile(r"not enough ([A-Za-z_][\w]*)", re.IGNORECASE)


def parse_nextpnr_errors(log: str) -> list[str]:
    """The ERROR lines of a nextpnr log (stripped)."""
    return [line.strip() for line in log.splitlines() if line.lstrip().startswith("ERROR")]


def resource_of_error(line: str) -> str | None:
    """The resource a nextpnr placement/packing error runs out of ('ICESTORM_DSP', 'DP16KD', ...)."""
    for pat in (_NO_BELS, _NOT_ENOUGH):
        m = pat.search(line)
        if m:
            return m.group(1)
    return None


def resource_name(bel: str, spec: dict) -> str:
    """The target's resource key for a nextpnr bel type ('ICESTORM_DSP' -> 'DSP'), else the bel type."""
    for res, how in spec.items():
        if any(fnmatch.fnmatchcase(bel, p) for p in how.get("pnr", []) or []):
            return res
    return bel


def check_fit(used: dict[str, float], capacity: dict[str, float]) -> list[dict]:
    """Resources whose use exceeds the device: [{"resource", "used", "available", "over", "over_pct"}]."""
    over = []
    for res, cap in capacity.items():
        n = used.get(res)
        if n is None or cap is None or n <= cap:
            continue
        over.append(
            {
                "resource": res,
                "used": n,
                "available": cap,
                "over": n - cap,
                "over_pct": round(100.0 * (n - cap) / cap, 1) if cap else None,
            }
        )
    return over


def check_fit_pnr(util: dict[str, dict]) -> list[dict]:
    """Over-used bel types from nextpnr's utilisation (report JSON or log)."""
    return check_fit({b: v["used"] for b, v in util.items()}, {b: v["available"] for b, v in util.items()})


def _is_const(bits: list) -> bool:
    return all(isinstance(b, str) for b in bits)


class Multiplier(TypedDict):
    cell: str
    a_width: int
    b_width: int
    y_width: int
    const: bool  # one operand is a constant (address arithmetic)


class Memory(TypedDict):
    name: str
    width: int
    depth: int
    bits: int
    rd_ports: int
    wr_ports: int


class Inventory(TypedDict):
    multipliers: list[Multiplier]
    memories: list[Memory]


def inventory_from_netlist(netlist: dict) -> Inventory:
    """Multipliers and memories in a coarse (pre-technology-mapping) yosys JSON netlist."""
    muls: list[Multiplier] = []
    mems: list[Memory] = []
    for mod in netlist.get("modules", {}).values():
        for name, cell in mod.get("cells", {}).items():
            t, p, c = cell.get("type", ""), cell.get("parameters", {}), cell.get("connections", {})
            if t in ("$mul", "$macc", "$macc_v2"):
                a, b = c.get("A", []), c.get("B", [])
                muls.append(
                    {
                        "cell": name,
                        "a_width": len(a),
                        "b_width": len(b),
                        "y_width": len(c.get("Y", [])),
                        "const": _is_const(a) or _is_const(b),
                    }
                )
            elif t in ("$mem", "$mem_v2"):
                width, size = _param_int(p.get("WIDTH", 0)), _param_int(p.get("SIZE", 0))
                mems.append(
                    {
                        "name": _param_str(p.get("MEMID", name)),
                        "width": width,
                        "depth": size,
                        "bits": width * size,
                        "rd_ports": _param_int(p.get("RD_PORTS", 0)),
                        "wr_ports": _param_int(p.get("WR_PORTS", 0)),
                    }
                )
    return {"multipliers": muls, "memories": mems}


def _param_int(v) -> int:
    if isinstance(v, int):
        return v
    s = str(v)
    if s and set(s) <= {"0", "1", "x", "z"} and len(s) >= 8:
        return int(s.replace("x", "0").replace("z", "0"), 2)
    return int(s)


def _param_str(v) -> str:
    s = str(v)
    if s and set(s) <= {"0", "1"} and len(s) % 8 == 0 and len(s) >= 8:
        raw = int(s, 2).to_bytes(len(s) // 8, "big")
        try:
            return raw.decode("ascii").lstrip("\x00")
        except UnicodeDecodeError:
            return s
    return s


_MEM_VIA = re.compile(r"mapping memory (\S+) via (\S+)")


def _mem_key(name: str) -> str:
    return name.replace("\\", "")


def mapping_verdict(inventory: Inventory, post: dict[str, float], yosys_log: str) -> dict:
    """Say whether multipliers went to DSPs and memories to block RAM.

    inventory: from inventory_from_netlist; post: post-synthesis resources (DSP, BRAM, LUTRAM keys);
    yosys_log: the synthesis log ("mapping memory X via Y" lines). Returns
    {"multipliers": n, "dsp": n, "memories": [...with "mapped_to"/"kind"], "ok": bool, "notes": [str]}.
    """
    notes: list[str] = []
    ok = True
    muls = [m for m in inventory.get("multipliers", []) if not m["const"] and min(m["a_width"], m["b_width"]) >= 2]
    consts = [m for m in inventory.get("multipliers", []) if m["const"]]
    dsp = post.get("DSP", 0) or 0
    if muls:
        shapes = sorted({f"{m['a_width']}x{m['b_width']}" for m in muls})
        if dsp == 0:
            ok = False
            notes.append(f"multipliers NOT mapped to DSP: {len(muls)} ({', '.join(shapes)}) built from logic")
        elif dsp < len(muls):
            ok = False
            notes.append(
                f"only {dsp:g} DSP for {len(muls)} multipliers ({', '.join(shapes)}): "
                f"{len(muls) - int(dsp)} or more built from logic"
            )
        else:
            notes.append(f"{len(muls)} multipliers ({', '.join(shapes)}) -> {dsp:g} DSP")
    if consts:
        notes.append(f"{len(consts)} multiplications by a constant (address arithmetic) left to logic")
    via: dict[str, str] = {}
    via_short: dict[str, str] = {}
    for m in _MEM_VIA.finditer(yosys_log):
        full = _mem_key(m.group(1).split(".", 1)[-1])  # drop the module name
        via[full] = m.group(2)
        via_short.setdefault(full.split(".")[-1], m.group(2))
    mems = []
    for mem in inventory.get("memories", []):
        key = _mem_key(mem["name"])
        name = key.split(".")[-1]
        cell = via.get(key, via_short.get(name))
        if cell is None:
            kind = "logic"
        elif any(h in cell.upper() for h in _LUT_RAM_HINTS):
            kind = "lut-ram"
        elif any(h in cell.upper() for h in _BLOCK_RAM_HINTS):
            kind = "block-ram"
        else:
            kind = "other"
        mems.append({**mem, "mapped_to": cell, "kind": kind})
        desc = f"memory {name} ({mem['depth']}x{mem['width']}, {mem['bits']} bits)"
        if kind == "block-ram":
            notes.append(f"{desc} -> block RAM ({cell})")
        elif kind == "lut-ram":
            notes.append(f"{desc} -> LUT RAM ({cell}), NOT block RAM")
        elif kind == "other":
            notes.append(f"{desc} -> {cell}")
        else:
            ok = False if mem["bits"] >= 1024 else ok
            notes.append(f"{desc} NOT mapped to RAM: built from flip-flops and logic")
    return {"multipliers": len(muls), "dsp": dsp, "memories": mems, "ok": ok, "notes": notes}


# What a block RAM or a multiplier cell of the netlist is for, from its hierarchical name (rtl/tt_accel.v's
# instances); the bank indices are golden/compiler.py's.
_KIND_PATTERNS = (
    (re.compile(r"u_contract\.g_lanes\.g_(buf|pair)"), "lane buffers"),
    (re.compile(r"u_contract\.u_mac\."), "MAC lanes"),
    (re.compile(r"u_banks\.g_bank\[(\d)\]"), "bank"),
    (re.compile(r"u_prog\b"), "program"),
    (re.compile(r"u_(ewise|sce|rank|seq)\b"), "unit"),
)
BANK_NAMES = ("act", "core", "master", "state", "moment")


def cell_kind(name: str) -> str:
    """The use of a netlist cell by its name: lane buffers, MAC lanes, bank <name>, program, <unit>, other. yosys
    escapes the names of a flattened hierarchy (`$flatten\\u_accel.\\u_contract...`): the backslashes are dropped."""
    plain = name.replace("\\", "")
    for pattern, kind in _KIND_PATTERNS:
        m = pattern.search(plain)
        if m:
            if kind == "bank":
                k = int(m.group(1))
                return f"bank {BANK_NAMES[k] if k < len(BANK_NAMES) else k}"
            return m.group(1) if kind == "unit" else kind
    return "other"


def resource_kinds(netlist: dict, spec: dict, resources: tuple[str, ...] = ("BRAM", "DSP")) -> dict[str, dict]:
    """Per resource (the target's names, from yosys cell types), its cells counted by use (cell_kind)."""
    cells = [c for m in netlist.get("modules", {}).values() for c in m.get("cells", {}).items()]
    out: dict[str, dict] = {}
    for res in resources:
        types = spec.get(res, {}).get("yosys", [])
        counts: dict[str, int] = {}
        for name, cell in cells:
            if any(fnmatch.fnmatchcase(cell["type"], t) for t in types):
                kind = cell_kind(name)
                counts[kind] = counts.get(kind, 0) + 1
        if counts:
            out[res] = dict(sorted(counts.items(), key=lambda kv: -kv[1]))
    return out


def high_fanout_nets(netlist: dict, top: str, n: int = 8) -> list[dict]:
    """The `n` nets of the mapped top with the most cell inputs (sinks), clock inputs not counted: nextpnr-ecp5 neither
    buffers nor replicates a net, so a net that reaches thousands of flip-flops is routed as one long tree and
    bounds Fmax. Each net is named by its shortest name (the register or wire it is in the source)."""
    mod: dict = netlist.get("modules", {}).get(top) or next(iter(netlist.get("modules", {}).values()), {})
    sinks: dict[int, int] = {}
    for cell in mod.get("cells", {}).values():
        dirs = cell.get("port_directions", {})
        for port, bits in cell.get("connections", {}).items():
            if dirs.get(port) == "input" and not port.startswith("CLK"):
                for b in bits:
                    if isinstance(b, int):
                        sinks[b] = sinks.get(b, 0) + 1
    project_imports()
    from scripts.logic_depth import net_names

    names = net_names(mod)
    ranked = sorted(sinks, key=lambda b: (-sinks[b], names.get(b, "")))
    return [{"net": names.get(b, f"bit {b}"), "sinks": sinks[b]} for b in ranked[:n]]


def fmax_of(report: dict) -> dict[str, tuple[float, int]]:
    """{port: (Fmax, seeds)}: the median over the seed sweep when the run has one (placement noise is larger than
    the Fmax tolerance on ECP5), else the seed-1 figure."""
    sweep = report.get("seed_sweep", {})
    out = {}
    for port, c in report.get("clocks", {}).items():
        sw = sweep.get("clocks", {}).get(port)
        if sw and sw.get("median") is not None:
            out[port] = (round(sw["median"], 2), sum(f is not None for f in sw["fmax_mhz"]))
        elif c.get("fmax_mhz") is not None:
            out[port] = (c["fmax_mhz"], 1)
    return out


def baseline_refusal(report: dict, no_pnr: bool, variant: list[str]) -> tuple[int, str] | None:
    """Why a run may not become its target's baseline, as (exit status, reason), or None when it may. `variant`: the
    options by which the run builds something other than the target's own build (another engine, top, parameters,
    model options or nextpnr options)."""
    if no_pnr:
        return 2, "--no-pnr measures no Fmax"
    if variant:
        return 2, (
            f"{', '.join(variant)} build other than the target's own build, which the baseline guards; drop them, "
            "or change the target in scripts/synth_targets.json"
        )
    if report["status"] not in ("ok", "does-not-fit"):
        return 2, f"the run is not usable ({report['status']})"
    if report["status"] == "ok" and report["timing"] == "FAIL":
        return 1, (
            "the run misses its requested clock, and a baseline must meet it; lower the clock in "
            "scripts/synth_targets.json or shorten the failing path"
        )
    return None


def make_baseline(report: dict, tolerances: dict | None = None) -> dict:
    """The baseline record for a report (the figures that later runs are compared with). Fmax: fmax_of."""
    tol = dict(DEFAULT_TOLERANCES)
    if tolerances:
        tol.update({k: v for k, v in tolerances.items() if k in DEFAULT_TOLERANCES})
    return {
        "target": report["target"],
        "part": report.get("part"),
        "top": report["top"],
        "model": report.get("model"),
        "params": report.get("params", {}),
        "out_of_context": bool(report.get("out_of_context")),
        # "does-not-fit": the configured model does not fit the part; the baseline then holds the resources
        # it needs (no Fmax), so that growth is still caught, and every run still fails on the fit check.
        "status": report.get("status", "ok"),
        "fits": report.get("status", "ok") != "does-not-fit",
        "does_not_fit": [
            {k: o.get(k) for k in ("resource", "used", "available", "over")} for o in report.get("does_not_fit", [])
        ],
        "tolerances": {**tol, "rule": TOLERANCE_RULE},
        "timing": report.get("timing"),
        "clocks_requested_mhz": {p: c["requested_mhz"] for p, c in report.get("clocks", {}).items()},
        "metrics": {
            "fmax_mhz": {p: f for p, (f, _) in fmax_of(report).items()},
            "fmax_seeds": {p: n for p, (_, n) in fmax_of(report).items()},
            "resources": dict(report.get("resources", {})),
            "unit_resources": dict(report.get("unit_resources", {})),
        },
        "tools": report.get("tools", {}),
        "recorded": report.get("date"),
        "git_commit": report.get("git_commit"),
    }


def compare_to_baseline(report: dict, baseline: dict) -> dict:
    """Compare a run with its baseline.

    Returns {"comparable": bool, "reason": str, "ok": bool, "rows": [{"metric", "baseline", "now",
    "delta_pct", "limit", "verdict"}]}; verdict is "ok", "better" or "REGRESSION". Not comparable (and not
    failing) when the top or the parameters differ from the baseline's. Fmax compares fmax_of (the median over
    the run's seeds); a baseline taken over more seeds than the run had is still compared, and its row says so.
    """
    if (
        baseline.get("top") != report.get("top")
        or dict(baseline.get("params", {})) != dict(report.get("params", {}))
        or bool(baseline.get("out_of_context")) != bool(report.get("out_of_context"))
    ):
        return {
            "comparable": False,
            "ok": True,
            "rows": [],
            "reason": (
                f"baseline is for {baseline.get('top')} {baseline.get('params')}, this run is "
                f"{report.get('top')} {report.get('params')}"
            ),
        }
    tol = {**DEFAULT_TOLERANCES, **{k: v for k, v in baseline.get("tolerances", {}).items() if k in DEFAULT_TOLERANCES}}
    rows, ok = [], True
    now_f = fmax_of(report)
    base_seeds = baseline.get("metrics", {}).get("fmax_seeds", {})
    for port, base in baseline.get("metrics", {}).get("fmax_mhz", {}).items():
        now, seeds = now_f.get(port, (None, 0))
        floor = base * (1.0 - tol["fmax_drop_pct"] / 100.0)
        if now is None:
            verdict = "REGRESSION"
        elif now < floor:
            verdict = "REGRESSION"
        elif now > base:
            verdict = "better"
        else:
            verdict = "ok"
        ok &= verdict != "REGRESSION"
        metric = f"Fmax {port} MHz"
        if base_seeds.get(port, 1) > 1 or seeds > 1:
            metric += f" (median of {base_seeds.get(port, 1)} -> {seeds} seeds)"
        rows.append(
            {
                "metric": metric,
                "baseline": base,
                "now": now,
                "delta_pct": None if now is None else round(100.0 * (now - base) / base, 1) if base else None,
                "limit": f">= {floor:.2f}",
                "verdict": verdict,
            }
        )
    base_r = baseline.get("metrics", {}).get("resources", {})
    now_r = report.get("resources", {})
    for res in sorted(set(base_r) | set(now_r)):
        row = resource_row(res, base_r.get(res, 0) or 0, now_r.get(res, 0) or 0, tol)
        ok &= row["verdict"] != "REGRESSION"
        rows.append(row)
    # each unit's yosys cells (scripts/netlist_units.py), by the same rule: a unit that grows is named. A run
    # without the figures (no mapped netlist) has no unit rows rather than every unit "better" at 0.
    base_u = baseline.get("metrics", {}).get("unit_resources", {})
    now_u = report.get("unit_resources", {})
    for unit in base_u if now_u else ():
        for res in sorted(set(base_u[unit]) | set(now_u.get(unit, {}))):
            base, now = base_u[unit].get(res, 0), now_u.get(unit, {}).get(res, 0)
            row = resource_row(f"{unit} {res}", base, now, tol)
            ok &= row["verdict"] != "REGRESSION"
            rows.append(row)
    return {"comparable": True, "ok": ok, "rows": rows, "reason": ""}


def resource_row(metric: str, base: float, now: float, tol: dict) -> dict:
    """One resource's comparison row: a regression past base + max(growth %, absolute slack)."""
    ceiling = base + max(base * tol["resource_growth_pct"] / 100.0, tol["resource_abs_slack"])
    return {
        "metric": metric,
        "baseline": base,
        "now": now,
        "delta_pct": round(100.0 * (now - base) / base, 1) if base else None,
        "limit": f"<= {ceiling:g}",
        "verdict": "REGRESSION" if now > ceiling else "better" if now < base else "ok",
    }


def xdc_clock_periods(xdc_text: str) -> dict[str, float]:
    """create_clock periods (ns) by port from an XDC: {port: period}."""
    out = {}
    for line in xdc_text.splitlines():
        line = line.split("#", 1)[0]
        m = re.search(r"create_clock\b.*?-period\s+([\d.]+).*?\[get_ports\s+\{?\s*(\w+)", line)
        if m:
            out[m.group(2)] = float(m.group(1))
    return out


def constraint_clocks(path: Path) -> dict[str, float]:
    """The clocks a constraint file puts on ports, in MHz: LPF `FREQUENCY PORT "p" f MHZ;`, PCF `set_frequency p f`,
    XDC create_clock periods."""
    text = path.read_text()
    if path.suffix == ".xdc":
        return {p: 1000.0 / period for p, period in xdc_clock_periods(text).items()}
    out = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0]
        m = (
            re.search(r'^\s*FREQUENCY\s+PORT\s+"?(\w+)"?\s+([\d.]+)\s*MHZ', line, re.I)
            if path.suffix == ".lpf"
            else re.search(r"^\s*set_frequency\s+(\w+)\s+([\d.]+)", line)
        )
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


_CELL_SUFFIX = re.compile(r"_(?:SB_|TRELLIS_|ICESTORM_|LUT4|CCU2C|MULT18|ALU54|DP16KD|PDPW16KD|\$)")


def short_cell(name: str) -> str:
    """A readable name for a packed cell: the RTL signal before the tool-added suffixes
    ('u_rq.g_lane[0].sat_d_SB_LUT4_O_I0_..._LC' -> 'u_rq.g_lane[0].sat_d')."""
    return _CELL_SUFFIX.split(name, 1)[0] or name


def format_table(rows: list[list], header: list[str]) -> str:
    cols = [header] + [[("" if v is None else str(v)) for v in r] for r in rows]
    widths = [max(len(c[i]) for c in cols) for i in range(len(header))]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(v.rjust(w) if i else v.ljust(w) for i, (v, w) in enumerate(zip(r, widths))) for r in cols[1:]]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------------------
# Running the tools
# --------------------------------------------------------------------------------------------------------


def load_targets() -> dict:
    data = json.loads(TARGETS_FILE.read_text())
    return {k: v for k, v in data.items() if not k.startswith("_")}


def find_tool(name: str) -> str:
    """A tool from the venv's bin directory (yowasp-*) or PATH."""
    venv_bin = Path(sys.executable).parent
    for cand in (venv_bin / name, ROOT / ".venv" / "bin" / name):
        if cand.exists():
            return str(cand)
    found = shutil.which(name)
    if not found:
        raise ToolError(f"tool not found: {name} (run `make setup`)")
    return found


def tool_path(path: Path) -> str:
    """`path` as the tools see it: relative to the repository root, their working directory. YoWASP's WebAssembly
    sandbox reaches the working directory and its parents by relative paths, but maps /tmp to a directory of its own,
    so an absolute path into a clone under /tmp would miss."""
    return os.path.relpath(path, ROOT)


def tool_env() -> dict:
    env = dict(os.environ)
    env.setdefault("YOWASP_CACHE_DIR", str(ROOT / "build" / "yowasp-cache"))
    return env


def tool_version(cmd: list[str]) -> str:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=tool_env())
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unknown ({e})"
    text = (out.stdout + out.stderr).strip().splitlines()
    lines = [l for l in text if l.strip() and "Preparing to run" not in l]
    return lines[0].strip() if lines else "unknown"


class Progress:
    def __init__(self, target: str):
        self.target = target
        self.t0 = time.monotonic()

    def say(self, msg: str) -> None:
        print(f"[synth {self.target} {time.monotonic() - self.t0:6.1f}s] {msg}", flush=True)


def _last_phase(log_path: Path, kind: str) -> str:
    try:
        with open(log_path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 65536))
            tail = f.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    for line in reversed(tail):
        if kind == "yosys":
            m = re.match(r"^(\d+(?:\.\d+)*)\. Executing (.*?)\.?$", line)
            if m:
                return m.group(2)[:70]
        else:
            s = line.strip()
            if s.startswith("Info:") and len(s) > 6:
                return " ".join(s[5:].split())[:70]
    return ""


def run_step(
    progress: Progress, name: str, cmd: list[str], log_path: Path, kind: str, every: float = 15.0
) -> tuple[int, float]:
    """Run one tool in the repository root (its paths by tool_path) with its output in log_path, printing a progress
    line every `every` seconds."""
    progress.say(f"{name}: start ({shlex.join([Path(cmd[0]).name] + cmd[1:])[:160]})")
    t0 = time.monotonic()
    with open(log_path.with_suffix(".stdout"), "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=tool_env())
        last = t0
        while True:
            try:
                rc = proc.wait(timeout=1.0)
                break
            except subprocess.TimeoutExpired:
                pass
            if time.monotonic() - last >= every:
                last = time.monotonic()
                phase = _last_phase(log_path, kind) or _last_phase(log_path.with_suffix(".stdout"), kind)
                progress.say(f"{name}: running, {last - t0:.0f} s" + (f" ({phase})" if phase else ""))
    dt = time.monotonic() - t0
    progress.say(f"{name}: {'done' if rc == 0 else f'FAILED (exit {rc})'} in {dt:.1f} s")
    return rc, dt


def project_imports() -> None:
    """Make the project's packages importable when this file runs as `python scripts/synth.py`."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))


def rtl_files(top: str, tech: str) -> list[Path]:
    """The rtl/ files of `top` and everything under it for technology `tech` (verif/filelist.py; synthesis knows the
    vendor cells, so their simulation models stay out)."""
    project_imports()
    from verif.filelist import RTL, sources

    try:
        return [f for f in sources(top, tech) if f.is_relative_to(RTL)]
    except ValueError as e:
        raise ToolError(str(e)) from e


def verilog_value(v) -> str:
    """A parameter value as yosys's chparam takes it: an integer, or a string in double quotes."""
    return str(v) if isinstance(v, int) else '"' + str(v).strip('"') + '"'


def yosys_script(cfg: dict, top: str, params: dict, files: list[Path], out: Path, write_netlist: bool) -> str:
    chparams = f"chparam {' '.join(f'-set {k} {verilog_value(v)}' for k, v in params.items())} {top}" if params else ""
    reads = "\n".join(f"read_verilog -sv {shlex.quote(tool_path(f))}" for f in files)
    # autoname names the cells after the nets they drive, which carry the hierarchy (synth_ecp5 does it itself):
    # the area by unit (scripts/netlist_units.py) reads a cell's instance from its name
    netlist = f"autoname\nwrite_json {shlex.quote(tool_path(out / 'netlist.json'))}" if write_netlist else ""
    return f"""# generated by scripts/synth.py for target {cfg["_name"]}
{cfg.get("cell_library", "")}
{reads}
{chparams}
hierarchy -check -top {top}
# inventory before technology mapping: multipliers and memories (restored afterwards)
design -save elaborated
proc
flatten
opt -fast
wreduce
memory -nomap
opt_clean
delete t:* t:$mul t:$macc t:$mem t:$mem_v2 %u %u %u %d
hierarchy -purge_lib -top {top}
write_json {shlex.quote(tool_path(out / "pre_map.json"))}
design -load elaborated
{cfg["synth"]} -top {top}
{netlist}
tee -q -o {shlex.quote(tool_path(out / "stat.json"))} stat -json
tee -q -o {shlex.quote(tool_path(out / "stat.txt"))} stat
"""


def git_commit(paths: tuple[str, ...] = ("rtl",)) -> str | None:
    """HEAD's short hash, with '+<paths>-changes' (e.g. '+rtl-changes') when those paths differ from it; None
    outside a git checkout."""
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", *paths], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() + (f"+{'-'.join(paths)}-changes" if dirty.stdout.strip() else "")


def model_params(
    model: str,
    lanes: int = 1,
    buf_depth: int = 0,
    optimizer: str | None = None,
    adapt_ranks: bool = False,
    vec: int = 1,
    drain: int = 1,
    preload: int = 1,
) -> dict:
    """The accelerator top's parameters for a model (golden/configs) on a contraction engine of `lanes` MAC lanes
    with `buf_depth` words per lane buffer, vector loads of `vec` words and a drain of `drain` elements a cycle, trained
    with `optimizer` (None: the
    config's), with rank adaptation
    when `adapt_ranks` (else the config's): the banks, units and program memory its compiled network needs, as the
    co-simulation uses them (verif/top/accel_env.py hdl_parameters)."""
    project_imports()
    try:
        from golden import program as P
        from golden.compiler import compile_network
        from verif.top.accel_env import hdl_parameters, model_config

        comp = compile_network(model_config(model, optimizer=optimizer, adapt_ranks=adapt_ranks))
        params = P.params_for(comp, lanes=lanes, buf_depth=buf_depth, vec=vec, drain=drain, preload=bool(preload))
        return dict(hdl_parameters(params))
    except Exception as e:  # a missing model or a broken compiler is a configuration error
        raise ToolError(f"cannot derive the top's parameters from model {model!r}: {type(e).__name__}: {e}") from e


# A target's contraction engine (golden/program.py params_for) and its defaults: MAC lanes, words per lane buffer,
# vector load words, drain elements, two buffer sets for preloads (1) or one (0).
ENGINE_DEFAULTS = {"lanes": 1, "buf_depth": 0, "vec": 1, "drain": 1, "preload": 1}


def engine_of(cfg: dict) -> dict:
    return {k: cfg.get(k, default) for k, default in ENGINE_DEFAULTS.items()}


def core_clock(cfg: dict) -> tuple[str, float]:
    """The target's core clock: the net name and the requested MHz (the one entry of "clocks")."""
    ((net, mhz),) = cfg["clocks"].items()
    return net, float(mhz)


def pll_settings(cfg: dict) -> dict | None:
    """The PLL that makes the target's core clock from its board's oscillator (scripts/pll.py: the vendor
    calculator's dividers), None for a target without one; a clock the PLL cannot make is a ToolError naming the
    nearest it can."""
    if not cfg.get("oscillator") or cfg.get("tech", "generic") == "generic":
        return None
    project_imports()
    from scripts import pll

    _, mhz = core_clock(cfg)
    try:
        return pll.settings(cfg["tech"], float(cfg["oscillator"]["mhz"]), mhz)
    except pll.PllError as e:
        raise ToolError(str(e)) from e


def target_params(cfg: dict, optimizer: str | None = None, adapt_ranks: bool = False) -> dict:
    """The configured top's parameters: the model's (when the target names one; trained with `optimizer`, None:
    the config's; with rank adaptation when `adapt_ranks`), the technology (TECH) and its PLL's dividers for the
    requested clock, then the target's "params"."""
    params = (
        model_params(cfg["model"], optimizer=optimizer, adapt_ranks=adapt_ranks, **engine_of(cfg))
        if cfg.get("model")
        else {}
    )
    if cfg.get("tech"):
        params["TECH"] = cfg["tech"]
    settings = pll_settings(cfg)
    if settings:
        params.update(settings["params"])
    params.update(cfg.get("params", {}))
    return params


def model_throughput(cfg: dict, optimizer: str | None = None, adapt_ranks: bool = False) -> dict:
    """The target model's cycles per training sample on the target's engine, from golden/cost.py (the RTL's exact
    timing, which the top-level tests check against its counters): one train_sample run and the mini-batch update
    spread over its samples. Host transfers (about one cycle per input word through the sample stream) and the rank
    update (once every few mini-batches) are not included."""
    project_imports()
    from golden.cost import cost_report
    from verif.top.accel_env import model_config

    net = model_config(cfg["model"], optimizer=optimizer, adapt_ranks=adapt_ranks)
    try:
        e = engine_of(cfg)
        programs = cost_report(net, **{**e, "preload": bool(e["preload"])})["programs"]
    except Exception as e:  # the programs do not fit the engine's buffers or the program memory
        raise ToolError(
            f"cannot model the cycles of {cfg['model']!r} on {engine_of(cfg)}: {type(e).__name__}: {e}"
        ) from e
    sample, update, batch = programs["train_sample"]["cycles"], programs["update"]["cycles"], net.train.batch
    return {
        "train_sample_cycles": sample,
        "update_cycles": update,
        "batch": batch,
        "cycles_per_sample": sample + update / batch,
        "macs_per_sample": programs["train_sample"]["macs"],
    }


def dsp_use(throughput: dict, clock_mhz: float, multipliers: int) -> dict:
    """The multipliers' use while training at `clock_mhz`: MACs a second against the part's multipliers x clock."""
    macs_per_s = throughput["macs_per_sample"] * clock_mhz * 1e6 / throughput["cycles_per_sample"]
    return {
        "clock_mhz": clock_mhz,
        "macs_per_s": macs_per_s,
        "multipliers": multipliers,
        "fraction": macs_per_s / (multipliers * clock_mhz * 1e6),
    }


def samples_per_s(throughput: dict, fmax: dict[str, tuple[float, int]]) -> dict[str, float]:
    """Training samples per second at each clock's achieved Fmax (fmax_of) for model_throughput's cycles."""
    return {port: round(f * 1e6 / throughput["cycles_per_sample"], 1) for port, (f, _) in fmax.items()}


def parse_params(items: list[str]) -> dict:
    out = {}
    for it in items:
        if "=" not in it:
            raise ToolError(f"--param wants K=V, got {it!r}")
        k, v = it.split("=", 1)
        v = v.strip()
        out[k.strip()] = int(v) if re.fullmatch(r"-?\d+", v) else v
    return out


def pnr_choice(cfg: dict, chosen: dict[str, str]) -> tuple[list[str], list[str]]:
    """nextpnr's placer and router options for a run: the target's ("placer" and "router" in its "pnr"), else
    nextpnr's defaults, each replaced by one `chosen` on the command line; and the chosen ones that differ from the
    target's, which name the run's directory (out_dir)."""
    pnr = cfg.get("pnr") or {}  # null for a target without open place and route
    target = {k: pnr[k] for k in ("router", "placer") if k in pnr}
    options = [f"--{k}={v}" for k, v in {**target, **chosen}.items()]
    return options, [v for k, v in chosen.items() if target.get(k) != v]


def out_dir(name: str, cfg: dict, engine: dict) -> Path:
    """Where a run writes: build/synth/<target>, or for another engine than the target's
    build/synth/<target>-lanes<L>-vec<V>-drain<D>, and with other nextpnr options -<router>, -<placer> (runs of
    several engines or options may go on side by side)."""
    tag = ""
    if engine:
        e = engine_of(cfg)
        tag += f"-lanes{e['lanes']}-vec{e['vec']}-drain{e['drain']}" + ("" if e["preload"] else "-oneset")
    tag += "".join("-" + v for v in cfg.get("pnr_variant", []))
    return BUILD_DIR / f"{name}{tag}"


def run_target(
    name: str,
    cfg: dict,
    top: str,
    params: dict,
    bitstream: bool,
    ooc: bool = False,
    seeds: int = 1,
    out: Path | None = None,
    no_pnr: bool = False,
) -> dict:
    """Synthesize (and place and route) one target; return the report dict (also written to disk).

    ooc (out of context): for measuring a block whose ports are not pins. I/O is not checked against the
    package; ECP5 places and routes with --out-of-context (no I/O buffers, no LPF); nextpnr-ice40 has no such
    mode, so ice40 stops after synthesis.
    """
    cfg = {**cfg, "_name": name}
    out = out or BUILD_DIR / name
    out.mkdir(parents=True, exist_ok=True)
    for stale in ("report.json", "stat.json", "stat.txt", "pre_map.json", "pnr_report.json", "pnr.log", "yosys.log"):
        (out / stale).unlink(missing_ok=True)
    progress = Progress(name)
    t_start = time.monotonic()
    files = rtl_files(top, cfg.get("tech", "generic"))
    constraints = ROOT / cfg["constraints"]
    if not constraints.exists():
        raise ToolError(f"constraint file missing: {cfg['constraints']}")
    osc = cfg.get("oscillator")
    if osc and top == cfg["top"]:
        got = constraint_clocks(constraints).get(osc["port"])
        if got is None or abs(got - float(osc["mhz"])) > 1e-3:
            raise ToolError(
                f"{cfg['constraints']} puts {got} MHz on {osc['port']}, but the board's oscillator runs at "
                f"{osc['mhz']:g} MHz (synth_targets.json): make them agree"
            )
    report: dict = {
        "target": name,
        "board": cfg.get("board"),
        "part": cfg["part"],
        "family": cfg["family"],
        "top": top,
        "model": cfg.get("model") if top == cfg["top"] else None,
        "params": params,
        "rtl": [str(f.relative_to(ROOT)) for f in files],
        "constraints": cfg["constraints"],
        "synth_command": cfg["synth"],
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "status": "ok",
        "problems": [],
        "tools": {},
        "runtime_s": {},
        "out_of_context": ooc,
        "pnr_options": cfg.get("pnr_options", []),
    }
    progress.say(f"{cfg['part']} ({cfg.get('board')}), top {top} {params}, {len(files)} RTL files")

    # ---- yosys ----
    yosys = find_tool(cfg["yosys"])
    report["tools"]["yosys"] = tool_version([yosys, "-V"])
    pnr = None if no_pnr else cfg.get("pnr")
    if ooc and pnr and cfg["family"] == "ice40":
        report["problems"].append("out of context: nextpnr-ice40 has no out-of-context mode; synthesis figures only")
        pnr = None
    script = yosys_script(cfg, top, params, files, out, write_netlist=True)
    (out / "synth.ys").write_text(script)
    rc, dt = run_step(
        progress,
        "yosys",
        [yosys, "-q", "-l", tool_path(out / "yosys.log"), "-s", tool_path(out / "synth.ys")],
        out / "yosys.log",
        "yosys",
    )
    report["runtime_s"]["yosys"] = round(dt, 1)
    ylog = (out / "yosys.log").read_text(errors="replace") if (out / "yosys.log").exists() else ""
    if rc != 0:  # without a log (yosys could not open it), what it printed
        ylog = ylog or (out / "yosys.stdout").read_text(errors="replace")
        errs = [l for l in ylog.splitlines() if l.startswith("ERROR")] or ylog.splitlines()[-5:]
        raise ToolError("yosys failed:\n  " + "\n  ".join(errs))
    if (out / "stat.json").exists():
        stat = parse_yosys_stat_json((out / "stat.json").read_text(), top)
    else:
        stat = parse_yosys_stat_text((out / "stat.txt").read_text(), top)
    report["cells"] = dict(sorted(stat["cells"].items()))
    res_spec = cfg["resources"]
    res_y = count_resources(stat["cells"], res_spec, "yosys")
    for res, how in res_spec.items():
        if how.get("ports") and stat.get("num_port_bits") is not None:
            res_y[res] = stat["num_port_bits"]
    report["resources_yosys"] = res_y

    inventory: Inventory = {"multipliers": [], "memories": []}
    if (out / "pre_map.json").exists():
        inventory = inventory_from_netlist(json.loads((out / "pre_map.json").read_text()))
    report["mapping"] = mapping_verdict(inventory, res_y, ylog)
    if (out / "netlist.json").exists():
        netlist = json.loads((out / "netlist.json").read_text())
        report["resource_kinds"] = resource_kinds(netlist, res_spec)
        report["high_fanout"] = high_fanout_nets(netlist, top)
        project_imports()
        from scripts.logic_depth import deepest_paths
        from scripts.netlist_units import unit_resources

        report["deepest_paths"] = deepest_paths(netlist, top)
        report["unit_resources"] = unit_resources(netlist, top, res_spec)

    # ---- place and route ----
    res_p: dict = {}
    report["clocks"] = {
        p: {"requested_mhz": float(f), "fmax_mhz": None, "net": None, "pass": None} for p, f in cfg["clocks"].items()
    }
    if pnr:
        tool = find_tool(pnr["tool"])
        report["tools"]["nextpnr"] = tool_version([tool, "--version"])
        freq = min(cfg["clocks"].values())
        cons = ["--out-of-context"] if ooc else [pnr["constraint_flag"], tool_path(constraints)]

        def pnr_cmd(seed: int, dest: Path) -> list[str]:
            cmd = [
                tool,
                *pnr["args"],
                *cons,
                "--json",
                tool_path(out / "netlist.json"),
                "--report",
                tool_path(dest / "pnr_report.json"),
                "--freq",
                f"{freq:g}",
                "--seed",
                str(seed),
                "--timing-allow-fail",
                "-l",
                tool_path(dest / "pnr.log"),
                *cfg.get("pnr_options", []),
            ]
            if cfg["family"] == "ice40":
                cmd += ["--asc", tool_path(dest / f"{top}.asc")]
            elif cfg["family"] == "ecp5" and not ooc:  # nextpnr 0.11 writes no bitstream config out of context
                cmd += ["--textcfg", tool_path(dest / f"{top}.config")]
            return cmd

        rc, dt = run_step(progress, pnr["tool"], pnr_cmd(1, out), out / "pnr.log", "nextpnr")
        report["runtime_s"]["pnr"] = round(dt, 1)
        plog = (out / "pnr.log").read_text(errors="replace") if (out / "pnr.log").exists() else ""
        util = {}
        if rc == 0 and (out / "pnr_report.json").exists():
            pr = parse_nextpnr_report(json.loads((out / "pnr_report.json").read_text()))
            util = pr["utilization"]
            report["clocks"] = match_clocks(cfg["clocks"], pr["fmax"])
            for port, c in report["clocks"].items():
                if c["constraint_mhz"] is not None and abs(c["constraint_mhz"] - c["requested_mhz"]) > 0.01:
                    report["problems"].append(
                        f"nextpnr timed {port} at {c['constraint_mhz']:g} MHz, not the requested "
                        f"{c['requested_mhz']:g} MHz"
                    )
            report["critical_paths"] = pr["critical"]
        else:
            util = parse_nextpnr_log_utilisation(plog)
        report["pnr_utilisation"] = util
        res_p = count_resources({b: v["used"] for b, v in util.items()}, res_spec, "pnr")
        report["resources_pnr"] = res_p
        if rc == 0 and seeds > 1:
            report["seed_sweep"] = seed_sweep(progress, pnr, pnr_cmd, out, cfg["clocks"], report["clocks"], seeds)
        over = [o for o in check_fit_pnr(util) if not (ooc and resource_name(o["resource"], res_spec) == "IO")]
        for o in over:
            o["bel"], o["resource"] = o["resource"], resource_name(o["resource"], res_spec)
        if rc != 0:
            errs = parse_nextpnr_errors(plog) or plog.splitlines()[-5:]
            short = [r for e in errs if (r := resource_of_error(e))]
            if over:
                report["status"] = "does-not-fit"
                report["does_not_fit"] = over
            elif short:
                report["status"] = "does-not-fit"
                report["does_not_fit"] = [
                    {
                        "resource": resource_name(b, res_spec),
                        "bel": b,
                        "used": None,
                        "available": None,
                        "over": None,
                        "over_pct": None,
                    }
                    for b in short
                ]
            else:
                report["status"] = "error"
            report["problems"] += [f"{pnr['tool']}: {e}" for e in errs]
        elif bitstream and pnr.get("bitstream"):
            bcmd = [
                a.format(
                    asc=tool_path(out / f"{top}.asc"),
                    bin=tool_path(out / f"{top}.bin"),
                    config=tool_path(out / f"{top}.config"),
                    bit=tool_path(out / f"{top}.bit"),
                )
                for a in pnr["bitstream"]
            ]
            bcmd[0] = find_tool(bcmd[0])
            rc, dt = run_step(progress, Path(bcmd[0]).name, bcmd, out / "bitstream.log", "nextpnr")
            report["runtime_s"]["bitstream"] = round(dt, 1)
            if rc != 0:
                report["status"] = "error"
                report["problems"].append(f"bitstream tool {Path(bcmd[0]).name} failed")
    elif cfg.get("pnr") is None:
        xdc = constraints.read_text() if constraints.suffix == ".xdc" else ""
        for port, period in xdc_clock_periods(xdc).items():
            want = cfg["clocks"].get(port)
            if want is not None and abs(1000.0 / period - want) > 0.01 * want:
                report["problems"].append(
                    f"{cfg['constraints']}: clock {port} period {period} ns is "
                    f"{1000.0 / period:.1f} MHz, the target requests {want:g} MHz"
                )

    # ---- merge, judge ----
    resources = dict(res_y)
    resources.update({k: v for k, v in res_p.items()})  # post-place figures win where both exist
    report["resources"] = dict(sorted(resources.items()))
    report["capacity"] = {k: v for k, v in cfg.get("capacity", {}).items() if not (ooc and k == "IO")}
    report["utilisation_pct"] = {
        k: round(100.0 * resources[k] / c, 1) for k, c in report["capacity"].items() if k in resources and c
    }
    if report["status"] != "does-not-fit":
        over = check_fit(resources, report["capacity"])
        if over:
            report["status"] = "does-not-fit"
            report["does_not_fit"] = over
    timed = [c for c in report["clocks"].values() if c["fmax_mhz"] is not None]
    if not pnr:
        report["timing"] = (
            "not measured (no open place and route for this part; see the XDC for Vivado)"
            if cfg.get("pnr") is None
            else "not measured (--no-pnr: synthesis only)"
            if no_pnr
            else "not measured"
        )
    elif report["status"] in ("does-not-fit", "error"):
        report["timing"] = "not measured"
    elif not timed:
        report["timing"] = "no clock found"
        report["problems"].append("nextpnr reported no Fmax for the requested clocks")
    else:
        report["timing"] = "pass" if all(c["pass"] for c in timed) else "FAIL"
    report["runtime_s"]["total"] = round(time.monotonic() - t_start, 1)
    (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    progress.say(f"report: {(out / 'report.json').relative_to(ROOT)}")
    return report


def seed_sweep(progress, pnr: dict, pnr_cmd, out: Path, requested: dict, seed1: dict, seeds: int) -> dict:
    """Place and route the same netlist with seeds 2..`seeds`; Fmax per clock per seed (None: no result)."""
    fmax = {p: [c["fmax_mhz"]] for p, c in seed1.items()}
    for seed in range(2, seeds + 1):
        dest = out / f"seed{seed}"
        dest.mkdir(exist_ok=True)
        (dest / "pnr_report.json").unlink(missing_ok=True)
        rc, _ = run_step(progress, f"{pnr['tool']} seed {seed}", pnr_cmd(seed, dest), dest / "pnr.log", "nextpnr")
        got = (
            match_clocks(requested, parse_nextpnr_report(json.loads((dest / "pnr_report.json").read_text()))["fmax"])
            if rc == 0 and (dest / "pnr_report.json").exists()
            else {}
        )
        for p in fmax:
            fmax[p].append(got.get(p, {}).get("fmax_mhz"))
    summary = {}
    for p, v in fmax.items():
        ok = sorted(f for f in v if f is not None)
        summary[p] = {
            "fmax_mhz": v,
            "min": ok[0] if ok else None,
            "max": ok[-1] if ok else None,
            "median": statistics.median(ok) if ok else None,
        }
    return {"seeds": list(range(1, seeds + 1)), "clocks": summary}


def print_report(report: dict) -> None:
    print()
    print(
        f"== {report['target']}: {report['part']} ({report.get('board')}), top {report['top']}"
        + (f" for model {report['model']}" if report.get("model") else "")
        + f" {report['params']}"
        + (" (out of context)" if report.get("out_of_context") else "")
    )
    rows = []
    for res, n in report["resources"].items():
        cap = report.get("capacity", {}).get(res)
        pct = report.get("utilisation_pct", {}).get(res)
        rows.append([res, f"{n:g}", "" if cap is None else f"{cap:g}", "" if pct is None else f"{pct:.1f}%"])
    print(format_table(rows, ["resource", "used", "available", "util"]))
    for port, c in report["clocks"].items():
        fm = "n/a" if c["fmax_mhz"] is None else f"{c['fmax_mhz']:.2f} MHz"
        verdict = "" if c["pass"] is None else ("pass" if c["pass"] else "FAIL")
        timed = (
            f", timed at {c['constraint_mhz']:g} MHz, slack {c['slack_ns']:+.3f} ns"
            if c.get("constraint_mhz") is not None
            else ""
        )
        print(f"clock {port}: Fmax {fm}, requested {c['requested_mhz']:g} MHz{timed} {verdict}")
        pll = report.get("pll")
        if pll:
            print(
                f"  PLL: {pll['achieved_mhz']:g} MHz (VCO {pll['vco_mhz']:g} MHz), "
                + ", ".join(f"{k} {v}" for k, v in pll["params"].items())
            )
        sweep = report.get("seed_sweep", {}).get("clocks", {}).get(port)
        if sweep:
            print(
                f"  seeds {report['seed_sweep']['seeds']}: Fmax "
                + ", ".join("n/a" if f is None else f"{f:.2f}" for f in sweep["fmax_mhz"])
                + (
                    f" MHz (min {sweep['min']:.2f}, median {sweep['median']:.2f}, max {sweep['max']:.2f})"
                    if sweep["min"] is not None
                    else ""
                )
            )
        crit = report.get("critical_paths", {}).get(c.get("net") or "")
        if crit:
            print(
                f"  critical path {crit['delay_ns']:.1f} ns ({crit['logic_ns']:.1f} logic, "
                f"{crit['routing_ns']:.1f} routing): {short_cell(crit['from'])} -> {short_cell(crit['to'])}"
            )
    print(f"timing: {report['timing']}")
    tp = report.get("throughput")
    if tp:
        e = report["engine"]
        print(
            f"throughput: {tp['cycles_per_sample']:,.0f} cycles per training sample on {e['lanes']} MAC "
            f"lane{'s' if e['lanes'] != 1 else ''} "
            f"(vec {e['vec']}, drain {e['drain']}; golden/cost.py: train_sample {tp['train_sample_cycles']:,} + "
            f"update {tp['update_cycles']:,} / batch {tp['batch']}; host transfers not included)"
            + "".join(f"; {r:,.1f} samples/s at {port}'s Fmax" for port, r in tp["samples_per_s"].items())
            + (
                f"; {tp['samples_per_s_at_clock']:,.1f} samples/s at the requested clock"
                if "samples_per_s_at_clock" in tp
                else ""
            )
        )
    for res, kinds in report.get("resource_kinds", {}).items():
        print(f"{res} by use: " + ", ".join(f"{k} {n}" for k, n in kinds.items()))
    if report.get("high_fanout"):
        print("largest fan-out: " + ", ".join(f"{f['net']} {f['sinks']:,}" for f in report["high_fanout"][:5]))
    for p in report.get("deepest_paths", [])[:3]:
        print(
            f"deep path: {p['levels']:g} LUT levels, {p['start']} -> {p['end']} (largest fan-out {p['max_fanout']:,})"
        )
    use = report.get("dsp_use")
    if use:
        print(
            f"multipliers: {use['macs_per_s'] / 1e9:.2f} G MAC/s of training at {use['clock_mhz']:g} MHz, "
            f"{100 * use['fraction']:.1f} % of the part's {use['multipliers']} multipliers x that clock"
        )
    units = report.get("unit_resources", {})
    if units:
        print("area by unit (yosys cells; scripts/netlist_units.py):")
        for unit, counts in units.items():
            print(f"  {unit:32s} " + ", ".join(f"{r} {n:,}" for r, n in counts.items()))
    for note in report.get("mapping", {}).get("notes", []):
        print(f"mapping: {note}")
    for o in report.get("does_not_fit", []):
        what = o["resource"] + (f" ({o['bel']})" if o.get("bel") and o["bel"] != o["resource"] else "")
        if o.get("used") is None:
            print(f"DOES NOT FIT: not enough {what}")
        else:
            print(
                f"DOES NOT FIT: {what} needs {o['used']:g}, the part has {o['available']:g} "
                f"({o['over']:g} too many, +{o['over_pct']}%)"
            )
    for p in report.get("problems", []):
        print(f"problem: {p}")
    rt = report["runtime_s"]
    print("run time: " + ", ".join(f"{k} {v:.1f} s" for k, v in rt.items()))
    print("tools: " + "; ".join(f"{k}: {v}" for k, v in report["tools"].items()))


def print_comparison(cmp: dict, path: Path) -> None:
    print()
    if not cmp["comparable"]:
        print(f"baseline {path.relative_to(ROOT)}: not compared ({cmp['reason']})")
        return
    rows = [
        [
            r["metric"],
            f"{r['baseline']:g}" if r["baseline"] is not None else "-",
            f"{r['now']:g}" if r["now"] is not None else "-",
            "" if r["delta_pct"] is None else f"{r['delta_pct']:+.1f}%",
            r["limit"],
            r["verdict"],
        ]
        for r in cmp["rows"]
    ]
    print(f"baseline {path.relative_to(ROOT)}:")
    print(format_table(rows, ["metric", "baseline", "now", "delta", "limit", "verdict"]))
    print("baseline: " + ("PASS" if cmp["ok"] else "REGRESSION (see rows marked REGRESSION)"))
    if cmp["ok"] and any(r["verdict"] == "better" for r in cmp["rows"]):
        print("baseline: some figures improved; record them with --update-baseline")


def main(argv: list[str] | None = None) -> int:
    targets = load_targets()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", required=True, choices=sorted(targets))
    ap.add_argument("--top", help="top module (default: the target's; its parameters then do not apply)")
    ap.add_argument("--param", action="append", default=[], metavar="K=V", help="top parameter (repeatable)")
    ap.add_argument(
        "--optimizer",
        choices=("sgd", "adam"),
        help="the target's model trained with this optimizer (adam: the Adam ops and the 32-bit moment "
        "bank); the baseline check reports such a run as not comparable",
    )
    ap.add_argument(
        "--rank-adaptation",
        action="store_true",
        help="the target's model with rank adaptation (the rank unit and the rank state); the baseline "
        "check reports such a run as not comparable",
    )
    for key, what in (
        ("lanes", "MAC lanes"),
        ("buf_depth", "words per lane buffer"),
        ("vec", "words a vector load reads (rows of that many words in the banks)"),
        ("drain", "elements the drain writes a cycle"),
        ("preload", "lane buffer sets less one (1: two sets, contractions preload; 0: one set, half the memory)"),
    ):
        ap.add_argument(
            f"--{key.replace('_', '-')}",
            type=int,
            metavar="N",
            help=f"the contraction engine's {what} instead of the target's (the top's parameters follow; "
            f"the baseline check reports such a run as not comparable)",
        )
    ap.add_argument("--update-baseline", action="store_true", help="write this run as the target's baseline")
    ap.add_argument(
        "--no-pnr",
        action="store_true",
        help="synthesis only: the mapped resources and fan-out in minutes, no place and route (no Fmax; the "
        "baseline check reports such a run as not comparable)",
    )
    ap.add_argument("--bitstream", action="store_true", help="also pack a bitstream (icepack / ecppack)")
    ap.add_argument(
        "--ooc",
        action="store_true",
        help="out of context, for a block whose ports are not pins: no I/O check, ECP5 without LPF "
        "(nextpnr --out-of-context), ice40 synthesis only",
    )
    ap.add_argument(
        "--seeds",
        type=int,
        default=1,
        metavar="N",
        help="also place and route with nextpnr seeds 2..N and report the Fmax spread",
    )
    ap.add_argument(
        "--router",
        choices=("router1", "router2"),
        help="nextpnr's router instead of the target's (its pnr.router, else nextpnr's router1); the run writes a "
        "directory of its own",
    )
    ap.add_argument(
        "--placer",
        choices=("heap", "sa", "static"),
        help="nextpnr's placer instead of the target's (its pnr.placer, else nextpnr's heap); the run writes a "
        "directory of its own",
    )
    args = ap.parse_args(argv)
    if args.seeds < 1:
        ap.error("--seeds must be at least 1")

    cfg = targets[args.target]
    top = args.top or cfg["top"]
    engine = {k: getattr(args, k) for k in ENGINE_DEFAULTS if getattr(args, k) is not None}
    if engine and (top != cfg["top"] or not cfg.get("model")):
        ap.error("--lanes, --buf-depth, --vec, --drain and --preload set the engine of the target's top and model")
    cfg = {**cfg, **engine}
    cfg["pnr_options"], cfg["pnr_variant"] = pnr_choice(
        cfg, {k: getattr(args, k) for k in ("router", "placer") if getattr(args, k)}
    )
    try:
        modelled = top == cfg["top"] and cfg.get("model")
        params = target_params(cfg, args.optimizer, args.rank_adaptation) if top == cfg["top"] else {}
        throughput = model_throughput(cfg, args.optimizer, args.rank_adaptation) if modelled else None
        params.update(parse_params(args.param))
        out = out_dir(args.target, cfg, engine)
        report = run_target(args.target, cfg, top, params, args.bitstream, args.ooc, args.seeds, out, args.no_pnr)
    except ToolError as e:
        print(f"synth: ERROR: {e}", file=sys.stderr)
        return 2
    if throughput:
        report["engine"] = engine_of(cfg)
        report["throughput"] = {**throughput, "samples_per_s": samples_per_s(throughput, fmax_of(report))}
        net, mhz = core_clock(cfg)
        clock = report["clocks"].get(net, {})
        if clock.get("pass"):  # the board runs at the requested (PLL) clock
            report["throughput"]["samples_per_s_at_clock"] = round(mhz * 1e6 / throughput["cycles_per_sample"], 1)
        # the multipliers' use at the clock the build runs at: the PLL's when timing is met, else its Fmax
        runs_at = mhz if clock.get("pass") else clock.get("fmax_mhz")
        if runs_at and cfg.get("capacity", {}).get("DSP"):
            report["dsp_use"] = {
                **dsp_use(throughput, runs_at, cfg["capacity"]["DSP"]),
                "at": "clock" if clock.get("pass") else "fmax",
            }
        settings = pll_settings(cfg)
        if settings:
            report["pll"] = settings
        (out / "report.json").write_text(json.dumps(report, indent=1) + "\n")
    print_report(report)

    failed = report["status"] != "ok" or report["timing"] == "FAIL"
    base_path = BASELINE_DIR / f"{args.target}.json"
    if args.update_baseline:
        variant = [f"--{k.replace('_', '-')}" for k in engine] + [
            opt
            for opt, given in (
                ("--top", args.top and args.top != cfg["top"]),
                ("--param", args.param),
                ("--optimizer", args.optimizer),
                ("--rank-adaptation", args.rank_adaptation),
                ("--router/--placer", cfg["pnr_variant"]),
            )
            if given
        ]
        refusal = baseline_refusal(report, args.no_pnr, variant)
        if refusal:
            print(f"\nbaseline NOT written: {refusal[1]}")
            return refusal[0]
        old_tol = None
        if base_path.exists():
            old_tol = json.loads(base_path.read_text()).get("tolerances")
        base_path.parent.mkdir(parents=True, exist_ok=True)
        base_path.write_text(json.dumps(make_baseline(report, old_tol), indent=1) + "\n")
        print(
            f"\nbaseline written: {base_path.relative_to(ROOT)}"
            + (" (a does-not-fit baseline: resources only)" if report["status"] != "ok" else "")
        )
    elif args.no_pnr:
        print(f"\nbaseline {base_path.relative_to(ROOT)}: not compared (--no-pnr: synthesis only)")
    elif base_path.exists() and report["status"] in ("ok", "does-not-fit"):
        cmp = compare_to_baseline(report, json.loads(base_path.read_text()))
        print_comparison(cmp, base_path)
        failed |= not cmp["ok"]
    elif report["status"] == "ok":
        print(f"\nno baseline yet ({base_path.relative_to(ROOT)}); write one with --update-baseline")

    if report["status"] == "error":
        print("synth: FAILED (tool error)")
        return 2
    why = ""
    if report["status"] == "does-not-fit":
        why = (
            " (does not fit: "
            + ", ".join(
                o["resource"] + ("" if o.get("over") is None else f" {o['used']:g}/{o['available']:g}, +{o['over']:g}")
                for o in report.get("does_not_fit", [])
            )
            + ")"
        )
    elif report["timing"] == "FAIL":
        why = (
            " (timing: "
            + ", ".join(
                f"{p} {c['fmax_mhz']:g} < {c['requested_mhz']:g} MHz"
                for p, c in report["clocks"].items()
                if c["pass"] is False
            )
            + ")"
        )
    print(f"synth {args.target}: " + ("FAILED" + why if failed else "PASSED"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
