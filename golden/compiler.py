"""Compiler: network config -> tensors, memory layout and the programs the accelerator executes (SPEC 6), in the
intermediate representation of golden/ir.py.

The golden machine (golden/machine.py) and the RTL execute the same op lists. The contraction order, layouts and
element orders are planned with the units' exact cycles (golden/isa/lanes.py spec_cycles, golden/program.py
linked_cycles).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass, replace

from golden import program as P
from golden.config import LayerCfg, NetConfig
from golden.fxp import ACC_W, NEAREST, STOCHASTIC, Fmt
from golden.ir import (
    BANK_ACT,
    BANK_CORE,
    BANK_MASTER,
    BANK_MOMENT,
    BANK_STATE,
    Compiled,
    Op,
    OpKind,
    Tensor,
    contraction_bits,
)
from golden.isa.lanes import spec_cycles
from golden.semantics import quant_const

LAMBDA_WORD_FMT = Fmt(16, 0)  # a lambda is two words in the state bank: its low half, then its high half
MASK_FMT = Fmt(16, 0)  # a word of the state bank: 1 live, 0 pruned


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


# --- network compilation ----------------------------------------------------------------------------------


class _Letters:
    def __init__(self):
        self._it = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXY")

    def __call__(self) -> str:
        return next(self._it)


def _layer_indices(layer: LayerCfg, fresh: _Letters):
    n = [fresh() for _ in range(layer.d)]
    m = [fresh() for _ in range(layer.d)]
    r = [fresh() for _ in range(layer.d - 1)]
    core_idx = []
    for k in range(layer.d):
        core_idx.append((r[k - 1] if k > 0 else "") + m[k] + n[k] + (r[k] if k < layer.d - 1 else ""))
    sizes = {}
    for k in range(layer.d):
        sizes[n[k]], sizes[m[k]] = layer.in_shape[k], layer.out_shape[k]
        if k < layer.d - 1:
            sizes[r[k]] = layer.ranks[k]
    return "".join(n), "".join(m), core_idx, sizes


def core_name(l: int, k: int) -> str:
    return f"G{l}.{k}"


def compile_network(cfg: NetConfig) -> Compiled:
    f = cfg.formats
    t: dict[str, Tensor] = {}
    fwd: list[Op] = []
    infer: list[Op] = []
    update: list[Op] = []
    intermediates: list[str] = []  # the chains' intermediate tensors, in the order they are made

    def add(name, shape, bank, fmt, adaptive=False, indices=""):
        t[name] = Tensor(name, tuple(shape), bank, fmt, adaptive, indices)
        return name

    def emit_chain(
        prog, operands, sizes, out_name, out_idx, out_fmt_kind, cache, weights, label, mode=STOCHASTIC, accumulate=False
    ):
        """Emit the planned pairwise contractions; intermediates become adaptive ACT tensors."""
        steps, _ = plan_contraction(operands, sizes, out_idx, {k: v for k, v in cache.items()}, weights)
        names_of = dict(cache)
        for n in operands:
            names_of[frozenset([n])] = n
        for i, st in enumerate(steps):
            last = i == len(steps) - 1
            a, b = names_of[st.left], names_of[st.right]
            if last:
                dst = out_name
            else:
                st.indices = lane_order(st.indices, operands.get(a, t[a].indices), operands.get(b, t[b].indices), sizes)
                dst = f"{label}[{'+'.join(sorted(st.result))}]"
                init = f.act if out_fmt_kind == "act" else f.bwd
                add(dst, [sizes[c] for c in st.indices], BANK_ACT, init, True, st.indices)
                intermediates.append(dst)
            ia, ib = operands.get(a, t[a].indices), operands.get(b, t[b].indices)
            spec = f"{ia},{ib}->{st.indices}"
            # the last step's output has its layout already: lane_order decides the element order alone
            order = lane_order(st.indices, ia, ib, sizes) if last else st.indices
            prog.append(
                Op(
                    OpKind.CONTRACT,
                    dst,
                    (a, b),
                    spec,
                    mode,
                    accumulate and last,
                    order=order if order != st.indices else "",
                    macs=st.macs,
                    note=label,
                )
            )
            names_of[st.result] = dst
            if not last:
                cache[st.result] = dst
        return steps

    def add_optimizer_state(suffix: str, shape) -> None:
        for prefix, fmt, bank in optimizer_state(cfg):
            add(f"{prefix}{suffix}", shape, bank, fmt)

    letters = _Letters()
    all_sizes: dict[str, int] = {}
    x_name = add("X0", [cfg.padded_input], BANK_ACT, f.input)
    layer_info = []
    for l, layer in enumerate(cfg.layers):
        n_idx, m_idx, core_idx, sizes = _layer_indices(layer, letters)
        all_sizes.update(sizes)
        t[x_name].indices = n_idx  # the previous layer's output, seen as this layer's (n1..nd)
        cores = []
        for k in range(layer.d):
            shape = layer.core_shape(k)
            g = add(core_name(l, k), shape, BANK_CORE, f.core, indices=core_idx[k])
            add(f"W{l}.{k}", shape, BANK_MASTER, f.master)
            add(f"dG{l}.{k}", shape, BANK_STATE, f.grad, True, core_idx[k])
            add_optimizer_state(f"{l}.{k}", shape)
            cores.append(g)
        add(f"B{l}", [layer.n_out], BANK_STATE, f.bias)
        add(f"dB{l}", [layer.n_out], BANK_STATE, f.grad, True)
        add_optimizer_state(f"B{l}", [layer.n_out])
        z = add(f"Z{l}", [layer.n_out], BANK_ACT, f.act, True, m_idx)  # W x, before the bias
        y = add(f"Y{l}", [layer.n_out], BANK_ACT, f.act, True, m_idx)  # + bias (and ReLU in place)
        operands = {x_name: n_idx, **{g: core_idx[k] for k, g in enumerate(cores)}}
        cache: dict[frozenset, str] = {}
        weights = frozenset(cores)
        emit_chain(fwd, operands, sizes, z, m_idx, "act", cache, weights, f"F{l}")
        fwd.append(Op(OpKind.AXPBY_RELU if layer.relu else OpKind.AXPBY, y, (z, f"B{l}"), note="bias"))  # SPEC 5.3
        layer_info.append((l, layer, x_name, cores, operands, sizes, n_idx, m_idx, core_idx, cache, y))
        x_name = y
    # inference = the forward ops with nearest rounding
    infer = [replace(o, mode=NEAREST) for o in fwd]

    last_y = x_name
    err = add("E_out", [cfg.layers[-1].n_out], BANK_ACT, f.err, False, layer_info[-1][7])
    bwd: list[Op] = [Op(OpKind.SCE, err, (last_y,))]
    for l, layer, x_in, cores, _operands, sizes, n_idx, m_idx, core_idx, cache, _y in reversed(layer_info):
        if not cfg.train.reuse_forward:
            cache = {}  # recompute partial products in the backward pass instead of keeping them
        bwd.append(Op(OpKind.ACC, f"dB{l}", (err,), note="bias gradient"))
        weights = frozenset(cores)
        if l > 0:
            e_in = add(f"EX{l}", [layer.n_in], BANK_ACT, f.bwd, True, n_idx)
            ops_e = {err: m_idx, **{g: core_idx[k] for k, g in enumerate(cores)}}
            emit_chain(bwd, ops_e, sizes, e_in, n_idx, "bwd", cache, weights, f"B{l}")
        for k, g in reversed(list(enumerate(cores))):  # from the error side: shared partial products die sooner
            ops_g = {x_in: n_idx, err: m_idx, **{h: core_idx[j] for j, h in enumerate(cores) if j != k}}
            emit_chain(
                bwd, ops_g, sizes, f"dG{l}.{k}", core_idx[k], "bwd", cache, weights - {g}, f"D{l}.{k}", accumulate=True
            )
        if l > 0:
            bwd.append(Op(OpKind.RELU_BWD, e_in, (e_in, x_in)))  # in place: the error keeps its format
            err = e_in

    rank_update: list[Op] = []
    rank = cfg.train.rank
    bonds = {}  # (l, k) -> (lambda, tau, mask) tensor names of the bond between cores k and k+1 of layer l
    if rank.enabled:
        tau_fmt = Fmt(16, quant_const(rank.prior * cfg.train.batch / rank.threshold)[1])
        for l, layer in enumerate(cfg.layers):
            for k in range(layer.d - 1):
                r = layer.ranks[k]
                names = (
                    add(f"LAM{l}.{k}", [r, 2], BANK_STATE, LAMBDA_WORD_FMT),
                    add(f"TAU{l}.{k}", [r], BANK_STATE, tau_fmt),
                    add(f"MASK{l}.{k}", [r], BANK_STATE, MASK_FMT),
                )
                bonds[(l, k)] = names
                rank_update.append(
                    Op(
                        OpKind.RANK,
                        names[0],
                        (f"W{l}.{k}", f"W{l}.{k + 1}", *names[1:]),
                        mode=NEAREST,
                        note=f"bond {l}.{k}",
                    )
                )

    tr = cfg.train
    try:
        step = quant_const(-tr.lr / tr.batch)  # the host writes each update's step; this is the constant schedule's
    except ValueError:
        raise CompileError(
            f"train.lr {tr.lr:g}: the step lr / batch is too large for the accelerator's 16-bit step "
            f"register; use a smaller train.lr"
        ) from None
    for l, layer in enumerate(cfg.layers):
        params: list[tuple[str, str, str, str | None]] = [
            (f"W{l}.{k}", f"dG{l}.{k}", f"{l}.{k}", core_name(l, k)) for k in range(layer.d)
        ]
        params.append((f"B{l}", f"dB{l}", f"B{l}", None))
        for k, (w, g, suffix, compute) in enumerate(params):
            left = bonds.get((l, k - 1)) if compute else None
            right = bonds.get((l, k)) if compute else None
            if compute and (left or right):
                taus = (left[1] if left else "", right[1] if right else "")
                update.append(Op(OpKind.PENALTY, g, (g, w, *taus), note="rank prior"))
            state = [f"{prefix}{suffix}" for prefix, _, _ in optimizer_state(cfg)]
            if tr.optimizer == "adam":
                m, v = state
                update.append(
                    Op(
                        OpKind.AXPBY,
                        m,
                        (m, g),
                        alpha=quant_const(tr.momentum),
                        beta=quant_const(1 - tr.momentum),
                        note="adam first moment",
                    )
                )
                update.append(
                    Op(
                        OpKind.ADAM_V,
                        v,
                        (v, g),
                        alpha=quant_const(tr.beta2),
                        beta=quant_const(1 - tr.beta2),
                        note="adam second moment",
                    )
                )
                update.append(Op(OpKind.ADAM_STEP, w, (w, m, v), note="adam step", host_step=True))
            elif state:
                (v,) = state
                update.append(Op(OpKind.AXPBY, v, (v, g), alpha=quant_const(tr.momentum), note="momentum"))
                update.append(Op(OpKind.AXPBY, w, (w, v), beta=step, note="sgd step", host_step=True))
            else:
                update.append(Op(OpKind.AXPBY, w, (w, g), beta=step, note="sgd step", host_step=True))
            if compute and (left or right):
                masks = (left[2] if left else "", right[2] if right else "")
                for target in (w, *state):
                    update.append(Op(OpKind.MASK, target, (target, *masks)))
            if compute:
                update.append(Op(OpKind.DERIVE, compute, (w,), mode=NEAREST))
            update.append(Op(OpKind.ZERO, g))

    refine_layouts([fwd + bwd, infer], t, all_sizes, intermediates)
    masked = {op.out for op in update if op.kind == OpKind.MASK}
    rank_prune = [op for op in update if op.kind == OpKind.MASK or (op.kind == OpKind.DERIVE and op.ins[0] in masked)]
    comp = Compiled(cfg, t, fwd + bwd, update, infer, rank_update, rank_prune, all_sizes)
    _check_accumulator_bounds(comp)
    _allocate(comp)
    try:
        refine_orders(comp)
    except ValueError as e:  # a loop nest or memory that no descriptor's fields hold, on any engine
        raise CompileError(
            f"the network does not fit the accelerator's op descriptors: {e}; use smaller factors or ranks"
        ) from None
    return comp


class CompileError(ValueError):
    """A network the accelerator cannot run as configured, with the op and the reason."""


def _check_accumulator_bounds(comp: Compiled) -> None:
    """SPEC 1.2: the worst-case sum of every contraction must fit the accumulator, so it can never wrap."""
    for op in comp.train_sample:
        if op.kind != OpKind.CONTRACT:
            continue
        bits, k, wa, wb = contraction_bits(comp, op)
        if bits > ACC_W:
            raise CompileError(
                f"contraction {op.out} <- {' x '.join(op.ins)} sums {k} products of {wa}- and "
                f"{wb}-bit values: the worst case needs more than the {ACC_W}-bit accumulator; "
                f"use narrower formats or smaller factors"
            )


def optimizer_state(cfg: NetConfig) -> list[tuple[str, Fmt, str]]:
    """(name prefix, format, bank) of the optimizer state kept per parameter tensor."""
    if cfg.train.optimizer == "adam":
        return [("M", cfg.formats.adam_m, BANK_STATE), ("S", cfg.formats.adam_v, BANK_MOMENT)]
    if cfg.train.momentum:
        return [("V", cfg.formats.momentum, BANK_STATE)]
    return []


def _live_ranges(prog: list[Op], tensors: dict[str, Tensor]) -> dict[str, tuple[int, int]]:
    """First write and last read (op index) of every per-sample tensor; the input is written before op 0."""
    ranges: dict[str, list[int]] = {}
    for i, op in enumerate(prog):
        for name in (*op.ins, op.out):
            if name in tensors and tensors[name].per_sample:
                r = ranges.setdefault(name, [i, i])
                r[1] = i
    ranges["X0"][0] = -1
    return {k: (a, b) for k, (a, b) in ranges.items()}


def _allocate(comp: Compiled) -> None:
    """Base addresses, in words of each bank. Parameters and state get fixed places; the per-sample ACT
    tensors share space where their live ranges in train_sample do not overlap (first fit, largest first)."""
    live = _live_ranges(comp.train_sample, comp.tensors)
    placed: list[tuple[int, int, int, int]] = []  # (base, size, first, last)
    for name in sorted(live, key=lambda n: (-comp.tensors[n].size, live[n])):
        size, (first, last) = comp.tensors[name].size, live[name]
        busy = sorted((b, b + sz) for b, sz, f, l in placed if not (l < first or f > last))
        base = 0
        for lo, hi in busy:
            if base + size <= lo:
                break
            base = max(base, hi)
        placed.append((base, size, first, last))
        comp.layout[name] = (BANK_ACT, base)
    comp.bank_words[BANK_ACT] = max((b + sz for b, sz, _, _ in placed), default=0)
    for name, ten in comp.tensors.items():
        if ten.per_sample:
            continue
        base = comp.bank_words.get(ten.bank, 0)
        comp.layout[name] = (ten.bank, base)
        comp.bank_words[ten.bank] = base + ten.size
