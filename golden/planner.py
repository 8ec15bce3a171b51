"""The compiler's planning: the pairwise contraction order of a chain (a dynamic programme over subsets, minimum
MACs), each intermediate's index layout and each contraction's element order, chosen by the contraction unit's exact
cycles on the engines the plans are made for (golden/isa/lanes.py spec_cycles, golden/program.py linked_cycles).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, replace

from golden import program as P
from golden.ir import Compiled, Op, OpKind, Tensor
from golden.isa.lanes import spec_cycles


@dataclass
class Step:
    """One pairwise contraction chosen by the planner."""

    left: frozenset
    right: frozenset
    result: frozenset
    indices: str
    macs: int


# --- contraction order ------------------------------------------------------------------------------------


def plan_contraction(
    operands: dict[str, str],
    sizes: dict[str, int],
    out_indices: str,
    cached: dict[frozenset, str],
    weights: frozenset = frozenset(),
) -> tuple[list[Step], int]:
    """Binary contraction tree over `operands` (name -> index letters) minimising MACs.

    Dynamic programme over subsets. A subset in `cached` (already computed, e.g. a forward intermediate saved
    for the backward pass) costs nothing. Subsets made only of `weights` with two or more members are not
    allowed: merged cores would have to be recomputed for every sample.
    """
    names = sorted(operands)
    full = frozenset(names)

    def indices_of(subset: frozenset) -> str:
        inside = set("".join(operands[n] for n in subset))
        outside = set(out_indices).union(*(set(operands[n]) for n in full - subset))
        order = "".join(dict.fromkeys("".join(operands[n] for n in names)))  # first-appearance order
        return "".join(c for c in order if c in inside and c in outside)

    best: dict[frozenset, tuple[int, list[Step]]] = {}
    for size in range(1, len(names) + 1):
        for combo in itertools.combinations(names, size):
            s = frozenset(combo)
            if size == 1 or s in cached:
                best[s] = (0, [])
                continue
            if s <= weights:
                continue
            cands = []
            members = sorted(s)
            for k in range(1, size // 2 + 1):
                for left in itertools.combinations(members, k):
                    a = frozenset(left)
                    b = s - a
                    if len(a) == len(b) and min(a) > min(b):
                        continue
                    if a not in best or b not in best:
                        continue
                    idx = set(indices_of(a)) | set(indices_of(b))
                    macs = math.prod(sizes[c] for c in idx)
                    cands.append(
                        (best[a][0] + best[b][0] + macs, best[a][1] + best[b][1] + [Step(a, b, s, indices_of(s), macs)])
                    )
            if cands:
                best[s] = min(cands, key=lambda t: t[0])
    cost, steps = best[full]
    if steps:
        steps[-1].indices = out_indices
    return steps, cost


LANE_HINT = 128  # the MAC lanes lane_order's first guess plans for (the paper target's)


def lane_order(indices: str, ia: str, ib: str, sizes: dict[str, int]) -> str:
    """An intermediate's index order: first appearance, with one index that only one operand of the step has
    (a one-sided index) moved innermost, and that operand's other one-sided indices outermost. The contraction
    engine spreads the innermost output index over its MAC lanes, loading that operand into the lane buffers
    (golden/isa/lanes.py with_lanes), so the step costs about |operand| + outputs / l * max(K, l) cycles with l lanes (l
    the largest divisor of the index's size up to LANE_HINT, K the reduction length) when nothing of the load
    is hidden: the index with the lowest cost goes innermost (the larger index among equal costs, then the last).
    The load runs beside the compute a slice at a time (golden/isa/timing.py group_starts); with the operand's other
    indices outermost, each slice is used for every output of the other operand before the next is needed."""
    only = [c for c in indices if (c in ia) != (c in ib)]
    if not only:
        return indices
    red = math.prod(sizes[c] for c in set(ia + ib) - set(indices))
    outputs = math.prod(sizes[c] for c in indices)

    def cost(c: str) -> tuple[int, int]:
        owner = ia if c in ia else ib
        lanes = max(d for d in range(1, min(LANE_HINT, sizes[c]) + 1) if sizes[c] % d == 0)
        return math.prod(sizes[x] for x in set(owner)) + outputs // lanes * max(red, lanes), -sizes[c]

    return _with_lane(indices, min(reversed(only), key=cost), ia, ib)


def _with_lane(indices: str, lane: str, ia: str, ib: str) -> str:
    """`indices` with the one-sided index `lane` innermost and its operand's other one-sided indices outermost."""
    owner = ia if lane in ia else ib
    outer = [c for c in indices if c != lane and c in owner and (c in ia) != (c in ib)]
    return "".join(outer) + "".join(c for c in indices if c != lane and c not in outer) + lane


def layout_candidates(indices: str, ia: str, ib: str) -> list[str]:
    """lane_order's family for an intermediate of a step ia x ib: each one-sided index as the innermost."""
    return [_with_lane(indices, c, ia, ib) for c in indices if (c in ia) != (c in ib)]


def respec(op: Op, name: str, layout: str) -> str:
    """The einsum of contract `op` with the tensor `name` (an operand or the output) in the index order `layout`."""
    (ia, ib), out = op.spec.split("->")[0].split(","), op.spec.split("->")[1]
    ia, ib = (layout if op.ins[0] == name else ia), (layout if op.ins[1] == name else ib)
    return f"{ia},{ib}->{layout if op.out == name else out}"


@dataclass(frozen=True)
class PlanEngine:
    """A contraction engine the compiler plans for: MAC lanes, words per lane buffer, vector load words, drain."""

    lanes: int
    buf_depth: int
    vec: int
    drain: int


# The engines the layouts and element orders are planned for (any other engine runs the same program): the paper
# target (128 lanes, rows of 16 words, a drain of 16) and the ECP5 build that places and routes today (16 lanes, one
# word a beat). A plan's cost is the sum of its lane-cycles on them (cycles x lanes: the MAC slots an op holds).
# Planned for the target alone, the ECP5 build took 276,020 cycles a paper sample instead of 172,615 (one op's order
# left it no lane form) and the target 22,027 instead of 22,128.
PLAN_ENGINES = (PlanEngine(128, 512, 16, 16), PlanEngine(16, 512, 1, 1))


def plan_lane_cycles(spec: str, order: str, sizes: dict[str, int]) -> int:
    """The lane-cycles of one contraction, given by its einsum and element order, on PLAN_ENGINES (golden/isa/lanes.py
    spec_cycles x lanes, summed); raises ValueError where the nest does not fit a descriptor."""
    return _plan_lane_cycles(spec, order, tuple((c, sizes[c]) for c in sorted(set(spec) - set(",->"))))


@functools.lru_cache(maxsize=1 << 14)
def _plan_lane_cycles(spec: str, order: str, sizes: tuple[tuple[str, int], ...]) -> int:
    """plan_lane_cycles of the sizes of the spec's letters alone, cached: the planner asks the same questions many
    times, and golden/cost.py fit_ranks across rank sets that share most sizes."""
    return sum(
        e.lanes * spec_cycles(spec, order, dict(sizes), e.lanes, e.buf_depth, e.vec, e.drain) for e in PLAN_ENGINES
    )


def layout_cycles(ops: list[Op], name: str, layout: str, sizes: dict[str, int]) -> float:
    """plan_lane_cycles summed over the contractions `ops` with the tensor `name` in the index order `layout`; inf
    where one of them does not fit a descriptor."""
    total = 0
    for op in ops:
        spec = respec(op, name, layout)
        try:
            total += plan_lane_cycles(spec, op.order or spec.split("->")[1], sizes)
        except ValueError:
            return math.inf
    return total


def refine_layouts(
    progs: list[list[Op]], tensors: dict[str, Tensor], sizes: dict[str, int], intermediates: list[str]
) -> None:
    """Re-choose each intermediate's layout among lane_order's candidates (each one-sided index of the step that
    computes it as the lane index, that operand's other one-sided indices outermost) by the exact lane-cycles on
    PLAN_ENGINES (layout_cycles) of every contraction in `progs` that writes or reads it.
    lane_order's cost model is a guess that can pick a short lane index (a pruned rank); its choice stays unless
    another candidate is faster. Passes in the order the intermediates were made, until one changes nothing (a
    choice changes the ops an earlier one was judged by; every change makes the sum of the cycles smaller, so the
    passes end); the specs of the ops and the tensors' indices and shapes are updated in place."""
    contracts = [op for prog in progs for op in prog if op.kind == OpKind.CONTRACT]
    changed = True
    while changed:
        changed = False
        for name in intermediates:
            touching = [op for op in contracts if op.out == name or name in op.ins]
            ia, ib = next(op for op in touching if op.out == name).spec.split("->")[0].split(",")
            current = tensors[name].indices
            best = min(
                layout_candidates(current, ia, ib),
                default=current,
                key=lambda layout: (layout_cycles(touching, name, layout, sizes), layout != current),
            )
            if best != current:
                for op in touching:
                    op.spec = respec(op, name, best)
                tensors[name].indices = best
                tensors[name].shape = tuple(sizes[c] for c in best)
                changed = True


def plan_params(comp: Compiled, engine: PlanEngine):
    """The accelerator parameters (golden/program.py AccelParams) refine_orders plans for on `engine`: its lanes,
    buffer words, vector loads and drain, with lane sums and rows, every bank in rows (the orders decide which banks a
    build needs in rows)."""
    p = P.params_for(comp, lanes=engine.lanes, buf_depth=engine.buf_depth, vec=engine.vec, drain=engine.drain)
    return replace(p, bank_vec=(True,) * len(p.banks))


def refine_orders(comp: Compiled) -> None:
    """Re-choose each contraction's element order (its loop nest and the order its elements draw; the layouts
    stay) among its output's layout_candidates, by the contraction unit's lane-cycles on PLAN_ENGINES (cycles x
    lanes, plan_params) over the op and its neighbouring contractions with preloading (golden/program.py
    linked_cycles).
    An op can be preloaded only when its lane operand (the one the lane index belongs to) is not the output of the
    op before it, which the layout choice alone (refine_layouts, each op by itself) does not see. One pass in
    program order over train_sample and infer; the current order stays unless another is faster."""
    engines = [(e.lanes, plan_params(comp, e)) for e in PLAN_ENGINES]
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}  # cycles do not depend on the formats
    for prog in (comp.train_sample, comp.infer):
        for i, op in enumerate(prog):
            if op.kind != OpKind.CONTRACT:
                continue
            window = [j for j in (i - 1, i, i + 1) if 0 <= j < len(prog)]
            (ia, ib), out = op.spec.split("->")[0].split(","), op.spec.split("->")[1]
            current = op.element_order()
            neighbours = [
                {
                    j: P.contract_desc(comp, p, prog[j], frac) if prog[j].kind == OpKind.CONTRACT else None
                    for j in window
                    if j != i
                }
                for _, p in engines
            ]  # lowered once: only op i's order varies

            candidates = dict.fromkeys([current, *layout_candidates(out, ia, ib)])
            cost: dict[str, tuple[float, bool]] = {}
            for order in candidates:  # in a loop, not a closure: the cost reads this iteration's op and window
                op.order = order if order != out else ""
                total: float = 0
                for (lanes, p), lowered in zip(engines, neighbours):
                    try:
                        own = P.contract_desc(comp, p, op, frac)
                    except ValueError:  # the loop nest does not fit a descriptor in this order
                        total = math.inf
                        break
                    total += lanes * P.linked_cycles([own if j == i else lowered[j] for j in window], p.bank_shift)
                cost[order] = (total, order != current)
            best = min(candidates, key=cost.__getitem__)
            op.order = best if best != out else ""
