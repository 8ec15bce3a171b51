"""Move the fabric register behind each ECP5 block RAM read port into the block RAM's own output register.

rtl/tt_bank.v (OUT_REG = 1) puts a plain register (no enable, no reset) after every block RAM's read register, so
that the RAM's slow clock-to-out does not start a long route. The DP16KD has that register built in
(REGMODE_x = OUTREG): data one cycle after the read register, with the port's clock, output enable OCEx and reset
RSTx. yosys 0.70 does not use it, so the register lands in the fabric, and nextpnr places it wherever its fanout
pulls it, with the RAM's clock-to-out and a long route in front of it. This pass rewrites the netlist yosys wrote
(`synth_ecp5 -json`) before place and route: a read port whose every used data bit drives exactly one TRELLIS_FF
(same clock, not inverted, enable constant 1, reset constant 0) and nothing else loses those flip-flops, its data
bits take over their outputs, and the port becomes REGMODE OUTREG. The function is the same cycle for cycle; the
registers' power-up value is not (the RAM's output register is not initialised like a fabric flip-flop), which
tt_bank's users never read (its data is used only in the cycles after a read).

    python scripts/ecp5_outreg.py netlist.json out.json
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict

RAM = "DP16KD"
FF = "TRELLIS_FF"
DATA_BITS = 18


def _const(bits: list, value: str) -> bool:
    return len(bits) == 1 and bits[0] == value


def _plain_register(ff: dict, clock_net) -> bool:
    """A TRELLIS_FF that loads D every cycle on the rising edge of clock_net and is never reset or set."""
    p, c = ff["parameters"], ff["connections"]
    enable_const = str(p.get("CEMUX", "CE")).strip() == "1" or _const(c.get("CE", []), "1")
    no_reset = ("LSR" not in c) or _const(c["LSR"], "0")
    return (c.get("CLK") == [clock_net] and str(p.get("CLKMUX", "CLK")).strip() == "CLK" and enable_const
            and no_reset and set(c) <= {"CLK", "DI", "Q", "CE", "LSR"})


def absorb_output_registers(module: dict) -> dict:
    """Rewrite one module of a yosys JSON netlist in place; return what it did: ports converted, flip-flops removed,
    and ports left alone with the reason."""
    cells = module["cells"]
    sinks: dict = defaultdict(list)  # net -> [(cell, port)] of every input connection
    for name, cell in cells.items():
        dirs = cell.get("port_directions", {})
        for port, bits in cell["connections"].items():
            if dirs.get(port, "input") != "output":
                for b in bits:
                    if isinstance(b, int):
                        sinks[b].append((name, port))
    port_nets = {b for p in module.get("ports", {}).values() for b in p["bits"] if isinstance(b, int)}
    done = {"ports": 0, "registers": 0, "skipped": defaultdict(int)}
    for name, cell in list(cells.items()):
        if cell["type"] != RAM:
            continue
        p, c = cell["parameters"], cell["connections"]
        for side in "AB":
            outs = [(f"DO{side}{i}", c.get(f"DO{side}{i}", [None])[0]) for i in range(DATA_BITS)]
            used = [(pin, net) for pin, net in outs if isinstance(net, int) and (sinks.get(net) or net in port_nets)]
            if not used:
                continue
            if p.get(f"REGMODE_{side}", "NOREG") != "NOREG" or not _const(c.get(f"OCE{side}", []), "1") \
                    or not _const(c.get(f"RST{side}", []), "0") \
                    or str(p.get(f"CLK{side}MUX", f"CLK{side}")).strip() != f"CLK{side}":
                done["skipped"]["port configured otherwise"] += 1
                continue
            clock = c.get(f"CLK{side}", [None])[0]
            regs = []
            for pin, net in used:
                s = sinks.get(net, [])
                if net in port_nets or len(s) != 1 or s[0][1] != "DI" or cells[s[0][0]]["type"] != FF \
                        or not _plain_register(cells[s[0][0]], clock):
                    break
                regs.append((pin, s[0][0]))
            else:
                for pin, reg in regs:
                    c[pin] = list(cells[reg]["connections"]["Q"])
                    del cells[reg]
                p[f"REGMODE_{side}"] = "OUTREG"
                done["ports"] += 1
                done["registers"] += len(regs)
                continue
            done["skipped"]["a data bit does not drive one plain register"] += 1
    done["skipped"] = dict(done["skipped"])
    return done


def absorb_netlist(netlist: dict, top: str | None = None) -> dict:
    """absorb_output_registers over the top module (the only one after synth_ecp5's flatten, or `top`)."""
    mods = netlist["modules"]
    name = top or next((n for n, m in mods.items() if m.get("attributes", {}).get("top")), None) or next(iter(mods))
    return absorb_output_registers(mods[name])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("netlist")
    ap.add_argument("out")
    ap.add_argument("--top")
    a = ap.parse_args(argv)
    with open(a.netlist) as f:
        net = json.load(f)
    done = absorb_netlist(net, a.top)
    with open(a.out, "w") as f:
        json.dump(net, f)
    print(f"ecp5_outreg: {done['ports']} block RAM ports to OUTREG, {done['registers']} flip-flops removed"
          + (f"; left alone: {done['skipped']}" if done["skipped"] else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
