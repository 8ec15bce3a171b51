"""Cycle model of a two-dimensional multi-lane contraction engine, per contraction of a compiled training step: the
plan for the engine after today's (rtl/ARCHITECTURE.md), not a measurement. The RTL has a one-dimensional lane array
whose exact cycles are golden/isa.py contract_cycles; the measured ones come from `python -m verif.top.bench_rtl`.

The modelled engine: LA x LB MAC lanes (LA * LB = --lanes) computing an outer-product tile of the output. Per
contraction `out[i, j] = sum_k a[i, k] b[k, j]`, with i the output indices of one operand only and j those of the
other (the model tries both assignments), a tile of j (LB wide) sits in lane-local buffers, loaded K * LB / W
cycles from a bank that reads W elements a cycle (double-buffered: hidden behind the previous tile's compute,
except the first); each cycle one vector of LA elements of the other operand streams past every lane column;
finished tiles drain through R requantisers (--requant) a cycle, hidden behind compute when it is shorter. Per
column tile: max(compute, load, drain). Not modelled: layouts that keep the lane indices contiguous (the
compiler owns intermediates' index order, and may keep permuted copies of 4-bit cores), pipeline fill per op.

    python scripts/lane_model.py --model paper [--lanes 128] [--width 16] [--requant 16] [--one-dimensional]
"""
from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from golden.compiler import compile_network
from golden.config import load_config


@dataclass(frozen=True)
class Plan:
    spec: str
    macs: int
    k: int  # reduction length
    rows: int  # output elements of the streamed operand (i)
    cols: int  # output elements of the buffered operand (j)
    la: int
    lb: int
    cycles: float


def split(spec: str, sizes: dict[str, int]) -> tuple[int, int, int]:
    """(K, output elements indexed by the first operand only, by the second only) of an einsum 'A,B->O'."""
    ins, out = spec.split("->")
    a, b = ins.split(",")
    k = math.prod(sizes[x] for x in set(a + b) if x not in out)
    only_a = math.prod(sizes[x] for x in out if x in a and x not in b)
    only_b = math.prod(sizes[x] for x in out if x in b and x not in a)
    return k, only_a, only_b


def tile_cycles(k: int, rows: int, cols: int, la: int, lb: int, width: int, requant: int) -> float:
    load = k * min(lb, cols) / width
    compute = math.ceil(rows / la) * k
    drain = math.ceil(rows / la) * min(lb, cols) * min(la, rows) / requant
    return math.ceil(cols / lb) * max(compute, load, drain) + load


def plan_op(spec: str, macs: int, sizes: dict[str, int], lanes: int, width: int, requant: int,
            max_la: int | None = None) -> Plan:
    """The cheapest lane shape (LA a power of two <= width and <= max_la, LB = lanes / LA) and operand
    assignment. max_la 1: a one-dimensional array."""
    k, only_a, only_b = split(spec, sizes)
    best = None
    for rows, cols in ((only_a, only_b), (only_b, only_a)):
        la = 1
        while la <= min(width, lanes, max_la or lanes):
            p = Plan(spec, macs, k, rows, cols, la, lanes // la,
                     tile_cycles(k, rows, cols, la, lanes // la, width, requant))
            if best is None or p.cycles < best.cycles:
                best = p
            la *= 2
    return best


def plan_program(model: str, lanes: int, width: int, requant: int, max_la: int | None = None,
                 program: str = "train_sample") -> list[Plan]:
    comp = compile_network(load_config(model))
    return [plan_op(op.spec, op.macs, comp.letter_sizes, lanes, width, requant, max_la)
            for op in getattr(comp, program) if op.kind == "contract"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="paper")
    ap.add_argument("--lanes", type=int, default=128)
    ap.add_argument("--width", type=int, default=16, help="elements a bank read delivers per cycle")
    ap.add_argument("--requant", type=int, default=16, help="requantisers (outputs drained per cycle)")
    ap.add_argument("--one-dimensional", action="store_true", help="LA = 1: lanes over one operand's outputs only")
    a = ap.parse_args()
    if a.lanes < 1 or a.width < 1 or a.requant < 1:
        raise SystemExit("error: --lanes, --width and --requant must be >= 1")
    plans = plan_program(a.model, a.lanes, a.width, a.requant, 1 if a.one_dimensional else None)
    print(f"{a.model}: {a.lanes} lanes, {a.width}-element reads, {a.requant} requantisers (a model, not a measurement)")
    print("| contraction | K | streamed outputs | buffered outputs | lanes | model cycles | ideal MACs/lanes |")
    print("|---|---|---|---|---|---|---|")
    for p in plans:
        print(f"| {p.spec} | {p.k} | {p.rows} | {p.cols} | {p.la}x{p.lb} | {p.cycles:.0f} | {p.macs / a.lanes:.0f} |")
    total = sum(p.cycles for p in plans)
    ideal = sum(p.macs for p in plans) / a.lanes
    print(f"contractions: {total:.0f} model cycles against {ideal:.0f} ideal ({total / ideal:.3f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
