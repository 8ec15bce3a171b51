"""Cycle model of two-dimensional multi-lane contraction engines, per contraction of a compiled training step: a model
for deciding which lane forms to build, not a measurement. The built engine's exact cycles are golden/isa/timing.py
contract_cycles (`python -m golden cost`); the simulated RTL's come from `python -m verif.top.bench_rtl`.

The modelled engine: LA x LB MAC lanes (LA * LB = --lanes) computing an outer-product tile of the output. Per
contraction `out[i, j] = sum_k a[i, k] b[k, j]`, with i the output indices of one operand only and j those of the
other (the model tries both assignments), a tile of j (LB wide) sits in lane-local buffers, loaded K * LB / W
cycles from a bank that reads W elements a cycle (double-buffered: hidden behind the previous tile's compute,
except the first); each cycle one vector of LA elements of the other operand streams past every lane column;
finished tiles drain through R requantisers (--requant) a cycle, hidden behind compute when it is shorter. Per
column tile: max(compute, load, drain). Not modelled: layouts that keep the lane indices contiguous (the
compiler owns intermediates' index order, and may keep permuted copies of 4-bit cores), pipeline fill per op.

    python scripts/lane_model.py --model paper [--lanes 128] [--width 16] [--requant 16] [--one-dimensional]

--reduction-lanes R models another two-dimensional array, built from the one-dimensional lane form with the layouts
the compiler gives: its L output lanes (the compiled lane form at --lanes / R lanes, vector loads and a drain of
--width) times R reduction lanes, as the lane sum splits a reduction (rtl/ARCHITECTURE.md): lane (c, r) MACs word r
of a's row with its own buffer word, and an adder tree per output lane adds the R partial sums. An op qualifies
where a reduction loop steps a at stride 1 (a's run of R words aligned) and b: its groups then take max(K / R,
drain) cycles and its load the same beats (the same b words into R times the buffers); every other op keeps its
compiled cycles. With --rows, the outer product's rows too, where the layouts allow them: the output loop just
outside the lane loop steps a at stride 1 and not b (R rows of a read as one aligned run), R x L outputs a group
drained --requant a cycle; each op takes the faster kind.

    python scripts/lane_model.py --model paper --lanes 128 --reduction-lanes 8 [--rows]

Both kinds are built (lane sums with output lanes, and rows; R chosen per op by golden/isa/lanes.py with_lanes), so for
them this model is an approximation; the engine's exact cycles are `python -m golden cost --lanes 128 ...`.

--two-indices gives a ceiling for pruned ranks, which the built forms serve poorly at 128 lanes: lanes over any two
of an op's indices (output or reduction), L1 x L2 <= --lanes of any counts, each op taking ceil(n / L) steps of
every lane index and all of every other index; no load, drain or fill. With --pow2-lanes, L1 and L2 are powers of
two (the built engine's lane numbering); --ranks recompiles at other inner ranks. The non-contraction ops' cycles
(element-wise, softmax, sequencer) are golden/cost.py's, added for a per-sample total.

    python scripts/lane_model.py --model paper --ranks '[[11, 9, 15], [15]]' --two-indices [--pow2-lanes]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
from dataclasses import dataclass, replace

from golden import program as P
from golden.compiler import compile_network
from golden.config import ConfigError
from golden.config_file import load_config, with_ranks
from golden.cost import cost_report
from golden.ir import OpKind
from golden.isa.contract import ContractDesc, drain_beats
from golden.isa.timing import contract_cycles, contract_losses, load_beats


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


def plan_op(
    spec: str, macs: int, sizes: dict[str, int], lanes: int, width: int, requant: int, max_la: int | None = None
) -> Plan:
    """The cheapest lane shape (LA a power of two <= width and <= max_la, LB = lanes / LA) and operand
    assignment. max_la 1: a one-dimensional array."""
    k, only_a, only_b = split(spec, sizes)
    best: Plan | None = None
    for rows, cols in ((only_a, only_b), (only_b, only_a)):
        la = 1
        while la <= min(width, lanes, max_la or lanes):
            p = Plan(
                spec, macs, k, rows, cols, la, lanes // la, tile_cycles(k, rows, cols, la, lanes // la, width, requant)
            )
            if best is None or p.cycles < best.cycles:
                best = p
            la *= 2
    if best is None:  # no power of two fits under width, lanes and max_la
        raise ValueError(f"{spec}: no lane shape for {lanes} lanes, width {width}, max_la {max_la}")
    return best


def plan_program(
    model: str, lanes: int, width: int, requant: int, max_la: int | None = None, program: str = "train_sample"
) -> list[Plan]:
    comp = compile_network(load_config(model))
    return [
        plan_op(op.spec, op.macs, comp.letter_sizes, lanes, width, requant, max_la)
        for op in getattr(comp, program)
        if op.kind == OpKind.CONTRACT
    ]


@dataclass(frozen=True)
class SplitPlan:
    spec: str
    macs: int
    lanes: int  # MAC lanes the op uses: its compiled lanes, times R where it takes a second dimension
    cycles: float
    kind: str  # "lanes" (the compiled form alone), "reduction" or "rows"


def split_reduction(d: ContractDesc, r: int) -> ContractDesc | None:
    """The compiled lane-form descriptor `d` with its reduction split over r lanes (its reduction steps K / r), or
    None where no reduction loop steps a at stride 1 and b with a count that r divides, or a's runs are off r."""
    if d.lanes == 1 or d.lane_sum or r < 2:
        return None
    loops = [i for i, lp in enumerate(d.red_loops) if lp.sa == 1 and lp.sb and lp.count % r == 0]
    aligned = d.a_base % r == 0 and all(lp.sa % r == 0 for lp in d.loops if lp.sa != 1)
    if not loops or not aligned:
        return None
    i = loops[-1]
    lp = d.red_loops[i]
    return replace(d, red_loops=d.red_loops[:i] + (replace(lp, count=lp.count // r),) + d.red_loops[i + 1 :])


def split_cycles(d: ContractDesc, r: int) -> tuple[float, int]:
    """(model cycles, lanes) of `d` on the array of --reduction-lanes r: the groups' compute at K / r a group (no less
    than the drain) or the load beats (unchanged), whichever is longer, plus the compiled op's fill and the tree's
    log2 r stages; else d's own cycles."""
    s = split_reduction(d, r)
    if s is None:
        return contract_cycles(d), d.lanes
    fill = contract_losses(d, d.lanes)["fill"]  # the compiled op's pipeline fill and drain, check and start
    compute = d.groups * max(s.red_count, drain_beats(d))
    return max(compute, load_beats(d)) + fill + (r - 1).bit_length(), d.lanes * r


def rows_cycles(d: ContractDesc, r: int, requant: int) -> float | None:
    """Model cycles of `d` with r rows of the outer product (lanes d.lanes x r), or None where the output loop just
    outside the lane loop does not step a alone at stride 1 with a count r divides, or a's runs are off r: r x L
    outputs a group, K cycles or their drain at `requant` a cycle, whichever is longer, or the load beats (unchanged),
    plus the compiled op's fill."""
    if d.lanes == 1 or d.lane_sum or r < 2:
        return None
    row = d.out_loops[-2]
    aligned = d.a_base % r == 0 and all(lp.sa % r == 0 for lp in d.loops if lp is not row)
    if not (row.sa == 1 and row.sb == 0 and row.count % r == 0 and aligned):
        return None
    fill = contract_losses(d, d.lanes)["fill"]
    compute = d.groups // r * max(d.red_count, math.ceil(d.lanes * r / requant))
    return max(compute, load_beats(d)) + fill


def plan_split(
    model: str, lanes: int, r: int, width: int, rows: bool = False, requant: int = 16, program: str = "train_sample"
) -> list[SplitPlan]:
    """SplitPlan of every contraction of `program` on the --reduction-lanes r array of `lanes` MAC lanes (with `rows`,
    the rows kind where it is faster)."""
    comp = compile_network(load_config(model))
    p = P.params_for(comp, lanes=lanes // r, buf_depth=512, vec=min(width, lanes // r), drain=min(width, lanes // r))
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    out = []
    for op in getattr(comp, program):
        if op.kind == OpKind.CONTRACT:
            d = P.contract_desc(comp, p, op, frac)
            cycles, used = split_cycles(d, r)
            plan = SplitPlan(op.spec, d.macs, used, cycles, "reduction" if used > d.lanes else "lanes")
            by_rows = rows_cycles(d, r, requant) if rows else None
            if by_rows is not None and by_rows < plan.cycles:
                plan = SplitPlan(op.spec, d.macs, d.lanes * r, by_rows, "rows")
            out.append(plan)
    return out


def two_index_steps(sizes: dict[str, int], lanes: int, pow2: bool = False) -> tuple[int, tuple[str, int, str, int]]:
    """(steps, (index, L1, index, L2)) of the cheapest --two-indices shape for one contraction whose indices have
    `sizes`: L1 x L2 <= lanes (each at most its index's count; powers of two with `pow2`), steps the product over the
    indices of ceil(count / L), L 1 for the indices without lanes."""
    best = (math.prod(sizes.values()), ("", 1, "", 1))
    for i, j in itertools.permutations(sorted(sizes), 2):
        for l1 in range(1, min(sizes[i], lanes) + 1):
            l2 = min(sizes[j], lanes // l1)
            if pow2:
                if l1 & (l1 - 1):
                    continue
                l2 = 1 << (l2.bit_length() - 1)
            lane = {i: l1, j: l2}
            steps = math.prod(-(-n // lane.get(c, 1)) for c, n in sizes.items())
            best = min(best, (steps, (i, l1, j, l2)))
    return best


def plan_two_indices(
    model: str, lanes: int, ranks=None, pow2: bool = False, width: int = 16, requant: int = 16
) -> tuple[list[tuple], int]:
    """([(spec, MACs, steps, shape)] per contraction of train_sample, the other units' and the sequencer's cycles on
    the built engine of `lanes` lanes, vector loads of `width` words and a drain of `requant`) of the --two-indices
    ceiling; `ranks`: inner ranks to recompile at."""
    cfg = load_config(model) if ranks is None else with_ranks(load_config(model), ranks)
    comp = compile_network(cfg)
    rows = []
    for op in comp.train_sample:
        if op.kind == OpKind.CONTRACT:
            sizes = {c: comp.letter_sizes[c] for c in sorted(set(op.spec) - set(",->"))}
            rows.append((op.spec, op.macs, *two_index_steps(sizes, lanes, pow2)))
    vec = min(width, lanes)
    report = cost_report(cfg, lanes, 512 if lanes > 1 else 0, vec=vec, drain=min(requant, vec))["programs"][
        "train_sample"
    ]
    other = report["cycles"] - report["units"]["contract"]
    return rows, other


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="paper")
    ap.add_argument("--lanes", type=int, default=128)
    ap.add_argument("--width", type=int, default=16, help="elements a bank read delivers per cycle")
    ap.add_argument("--requant", type=int, default=16, help="requantisers (outputs drained per cycle)")
    ap.add_argument("--one-dimensional", action="store_true", help="LA = 1: lanes over one operand's outputs only")
    ap.add_argument(
        "--reduction-lanes",
        type=int,
        default=0,
        metavar="R",
        help="model the compiled lane forms with R reduction lanes each (module docstring)",
    )
    ap.add_argument("--rows", action="store_true", help="with --reduction-lanes: the outer product's R rows too")
    ap.add_argument(
        "--two-indices",
        action="store_true",
        help="the ceiling of lanes over any two indices of an op (module docstring)",
    )
    ap.add_argument("--pow2-lanes", action="store_true", help="with --two-indices: lane counts powers of two")
    ap.add_argument("--ranks", help="with --two-indices: inner TT ranks per layer as JSON, e.g. '[[11, 9, 15], [15]]'")
    a = ap.parse_args()
    if a.lanes < 1 or a.width < 1 or a.requant < 1:
        raise SystemExit("error: --lanes, --width and --requant must be >= 1")
    if (a.ranks or a.pow2_lanes) and not a.two_indices:
        raise SystemExit("error: --ranks and --pow2-lanes go with --two-indices")
    if a.two_indices:
        try:
            rows, other = plan_two_indices(
                a.model, a.lanes, json.loads(a.ranks) if a.ranks else None, a.pow2_lanes, a.width, a.requant
            )
        except (ValueError, ConfigError) as e:
            raise SystemExit(f"error: {e}") from None
        print(
            f"{a.model}{f' at ranks {a.ranks}' if a.ranks else ''}: {a.lanes} lanes over any two indices of an op"
            f"{' (powers of two)' if a.pow2_lanes else ''}, no load, drain or fill (a ceiling, not a measurement)"
        )
        print("| contraction | lanes | steps | ideal MACs/lanes |")
        print("|---|---|---|---|")
        for spec, macs, steps, (i, l1, j, l2) in rows:
            print(f"| {spec} | {i} {l1} x {j} {l2} = {l1 * l2} | {steps} | {macs / a.lanes:.0f} |")
        total, ideal = sum(r[2] for r in rows), sum(r[1] for r in rows) / a.lanes
        print(
            f"contractions: {total} steps against {ideal:.0f} ideal ({total / ideal:.3f}x); with the other units' "
            f"and the sequencer's {other} cycles (golden/cost.py): {total + other} a training sample"
        )
        return 0
    if a.reduction_lanes:
        r = a.reduction_lanes
        if r < 2 or r & (r - 1) or a.lanes % r or r > a.width:
            raise SystemExit(
                "error: --reduction-lanes must be a power of two >= 2 that divides --lanes, at most --width"
            )
        splits = plan_split(a.model, a.lanes, r, a.width, a.rows, a.requant)
        print(
            f"{a.model}: {a.lanes // r} output lanes x {r} reduction lanes{' or rows' if a.rows else ''}, compiled "
            f"layouts (a model, not a measurement)"
        )
        print("| contraction | second dimension | lanes used | model cycles | ideal MACs/lanes |")
        print("|---|---|---|---|---|")
        for s in splits:
            print(f"| {s.spec} | {s.kind} | {s.lanes} | {s.cycles:.0f} | {s.macs / a.lanes:.0f} |")
        total, ideal = sum(s.cycles for s in splits), sum(s.macs for s in splits) / a.lanes
        print(f"contractions: {total:.0f} model cycles against {ideal:.0f} ideal ({total / ideal:.3f}x)")
        return 0
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
