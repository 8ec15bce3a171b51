"""Compiler: network config -> tensors, memory layout and the programs the accelerator executes (SPEC 6), in the
intermediate representation of golden/ir.py.

The golden machine (golden/machine.py) and the RTL execute the same op lists. The contraction order, layouts and
element orders are golden/planner.py's.
"""

from __future__ import annotations

from dataclasses import replace

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
from golden.planner import lane_order, plan_contraction, refine_layouts, refine_orders
from golden.semantics import quant_const

LAMBDA_WORD_FMT = Fmt(16, 0)  # a lambda is two words in the state bank: its low half, then its high half
MASK_FMT = Fmt(16, 0)  # a word of the state bank: 1 live, 0 pruned


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
