"""Lowering: a compiled op (golden/ir.py) and the current formats -> the descriptor of the unit that runs it
(golden/isa/). The bases are the tensors' addresses in their banks; golden/program.py makes them global and packs
the descriptors into program records.
"""

from __future__ import annotations

import math

from golden.arch import EW_WIDEST
from golden.fxp import NEAREST
from golden.ir import Compiled, Op, OpKind
from golden.isa.contract import ContractDesc, check_desc, contract_fail, spec_loops
from golden.isa.ewise import EW_ALIGN_MIN, EW_EPS_MAX, EwiseDesc, check_ewise, ewise_error, ewise_fail
from golden.isa.rank import RankDesc, check_rank, rank_error, rank_fail
from golden.isa.sce import SceDesc, check_sce, sce_error, sce_fail
from golden.semantics import LAMBDA_FMT, adam_eps_q, axpby_fc, inv_d, penalty_fc, quant_const


def lower_contract(comp: Compiled, op: Op, frac: dict[str, int]) -> ContractDesc:
    """The descriptor of one compiled contract op with the current fraction bits `frac` (like Machine.frac).

    Operand bases are the layout addresses (a per-sample tensor: its address for the one sample in flight).
    Raises ValueError when the loop nest or a field does not fit the descriptor.
    """
    if op.kind != OpKind.CONTRACT:
        raise ValueError(f"op {op.kind} -> {op.out} is not a contraction")
    a, b = op.ins
    names = (a, b, op.out)
    what = f"{op.out} <- {a} x {b} ({op.spec})"
    lhs, out_idx = op.spec.split("->")
    ia, ib = lhs.split(",")
    sizes = comp.letter_sizes
    if len(set(out_idx)) != len(out_idx):
        contract_fail(what, "an output index is repeated")
    if set(out_idx) - set(ia + ib):
        contract_fail(what, "an output index appears in neither operand")
    for name, idx in zip(names, (ia, ib, out_idx)):
        n = math.prod(sizes[c] for c in idx)
        if n != comp.tensors[name].size:
            contract_fail(what, f"tensor {name} has {comp.tensors[name].size} elements, its indices {idx!r} give {n}")
    out_loops, red_loops = spec_loops(op.spec, op.element_order(), sizes, what)
    out_t = comp.tensors[op.out]
    persistent = not out_t.per_sample
    if bool(op.accumulate) != persistent:
        # The machine accumulates exactly into persistent buffers (gradients): the flag must say so.
        contract_fail(
            what, f"accumulate={op.accumulate} but the output is {'persistent' if persistent else 'per-sample'}"
        )
    (bank_a, base_a), (bank_b, base_b), (bank_o, base_o) = (comp.layout[n] for n in names)
    desc = ContractDesc(
        a_base=base_a,
        b_base=base_b,
        o_base=base_o,
        out_count=out_t.size,
        out_loops=out_loops,
        red_loops=red_loops,
        shift=frac[a] + frac[b] - frac[op.out],
        mode=op.mode,
        accumulate=bool(op.accumulate),
        out_w=out_t.fmt.width,
        banks=(bank_a, bank_b, bank_o),
        names=names,
    )
    return check_desc(desc)


def _ew_range(comp: Compiled, name: str) -> tuple[str, int, int]:
    bank, base = comp.layout[name]
    return bank, base, base + comp.tensors[name].size


def lower_ewise(comp: Compiled, op: Op, frac: dict[str, int], host_step: tuple[int, int] | None = None) -> EwiseDesc:
    """The descriptor of one compiled element-wise op with the current fraction bits `frac` (like Machine.frac).

    `host_step`: the step-size constant (q, F) of an SGD step or an Adam step (op.host_step), which the host writes
    before each update (Machine.sgd_step, Machine.adam_lr). Raises ValueError naming the field when the op does not fit
    the descriptor or
    could overflow the accumulator.
    """
    opcode = op.kind.ewise_opcode
    if opcode is None:
        raise ValueError(f"op {op.kind} -> {op.out} is not an element-wise op")
    out_t = comp.tensors[op.out]
    y = op.out
    x = z = ""
    alpha, beta, align_x, align_z, shift, mode = 1, 0, 0, 0, 0, NEAREST
    tables = ("", "")
    shape = (1, out_t.size, 1)
    what = f"{op.kind} {op.out} <- {', '.join(n for n in op.ins if n) or '-'}"
    if op.kind in (OpKind.AXPBY, OpKind.AXPBY_RELU):
        x, z = op.ins
        (alpha, fa), (beta, fb) = op.alpha, op.beta
        if op.host_step:
            if host_step is None:
                ewise_fail(what, "beta is the host's step size: pass host_step")
            beta, fb = host_step
        t = comp.tensors
        fc = axpby_fc(frac[y], (t[x].fmt.width, fa + frac[x]), (t[z].fmt.width, fb + frac[z]))
        # A right shift by 47 or more leaves 0 of any term (|product| < 2^45): clamp it to what the unit has.
        align_x, align_z = max(fc - (fa + frac[x]), EW_ALIGN_MIN), max(fc - (fb + frac[z]), EW_ALIGN_MIN)
        shift, mode = fc - frac[y], op.mode
    elif op.kind == OpKind.ADAM_V:  # v <- beta2 v + (1 - beta2) g^2: AXPBY's alignment with g^2 (2 F_g, 2 w_g - 1 bits)
        x, z = op.ins
        (alpha, fa), (beta, fb) = op.alpha, op.beta
        t = comp.tensors
        fc = axpby_fc(frac[y], (t[x].fmt.width, fa + frac[x]), (2 * t[z].fmt.width - 1, fb + 2 * frac[z]))
        align_x, align_z = fc - (fa + frac[x]), fc - (fb + 2 * frac[z])  # below -47: rejected, not clamped
        shift, mode = fc - frac[y], op.mode
    elif op.kind == OpKind.ADAM_STEP:  # w <- w - SAT_16(RQ(lr_t m RSQRT, F_lr + F_m + 16 + h - F_w)) (SPEC 5.5)
        w, x, z = op.ins
        if host_step is None:
            ewise_fail(what, "alpha is the host's step size lr_t: pass host_step")
        alpha, f_lr = host_step
        beta = adam_eps_q(comp.cfg.train, frac[z])
        if beta > EW_EPS_MAX:
            ewise_fail(
                what,
                f"eps_q {beta} (epsilon {comp.cfg.train.eps} at batch {comp.cfg.train.batch}, F_v "
                f"{frac[z]}) does not fit the 16-bit beta field (at most {EW_EPS_MAX})",
            )
        align_z, shift, mode = frac[z], f_lr + frac[x] + 16 - frac[w], op.mode
    elif op.kind == OpKind.ACC:
        (x,) = op.ins
        shift, mode = frac[x] - frac[y], op.mode
    elif op.kind == OpKind.RELU_BWD:
        x, z = op.ins
    elif op.kind == OpKind.DERIVE:
        (x,) = op.ins
        shift = frac[x] - frac[y]  # always NEAREST (SPEC 5.5)
    elif op.kind == OpKind.ZERO:
        alpha = 0
    else:  # mask, penalty: ops over the rank slices of a core
        if op.kind == OpKind.MASK:
            x, *ms = op.ins
            tables = (ms[0], ms[1])
        else:  # g <- RQ(A(g, align_x) + A((tau_l[r_prev] + tau_r[r_next]) w, align_z), align_x) (Machine._penalty)
            x, z, *ts = op.ins
            tables = (ts[0], ts[1])
            f_tau = frac[tables[0] or tables[1]]
            fc = penalty_fc((comp.tensors[x].fmt.width, frac[x]), (comp.tensors[z].fmt.width, frac[z]), f_tau)
            align_x, align_z, shift, mode = fc - frac[x], fc - f_tau - frac[z], fc - frac[y], op.mode
        if len(out_t.shape) != 4:
            ewise_fail(what, f"{op.kind} target {y} has shape {out_t.shape}, not a core (r0, m, n, r1)")
        r0, m, n, r1 = out_t.shape
        shape = (r0, m * n, r1)
    if x and comp.tensors[x].size != out_t.size or z and comp.tensors[z].size != out_t.size:
        ewise_fail(what, "operands of different sizes")
    ranges = {name: _ew_range(comp, name) for name in (x, z, y) if name}
    for name in (x, z):  # read-all-then-write semantics need a source to be the destination or apart from it
        if name and name != y and ranges[name][0] == ranges[y][0]:
            (_, lo, hi), (_, ylo, yhi) = ranges[name], ranges[y]
            if lo < yhi and ylo < hi and lo != ylo:
                ewise_fail(what, f"{name} overlaps {y} at an offset")

    def width(name):
        return comp.tensors[name].fmt.width if name else 0

    def base(name):
        return comp.layout[name][1] if name else 0

    def bank(name):
        return comp.layout[name][0] if name else ""

    desc = EwiseDesc(
        opcode=opcode,
        count=out_t.size,
        x_base=base(x),
        z_base=base(z),
        y_base=base(y),
        alpha=alpha,
        beta=beta,
        align_x=align_x,
        align_z=align_z,
        shift=shift,
        mode=mode,
        x_w=width(x),
        z_w=width(z),
        y_w=out_t.fmt.width,
        shape=shape,
        tab_left=base(tables[0]),
        tab_right=base(tables[1]),
        tab_on=int(bool(tables[0])) | int(bool(tables[1])) << 1,
        banks=(bank(x), bank(z), bank(y)),
        tab_banks=(bank(tables[0]), bank(tables[1])),
        names=(x, z, y),
        tables=tables,
    )
    check_ewise(desc)
    # legal on the widest unit; golden/program.py checks the op against the accelerator's build
    code, why = ewise_error(desc, EW_WIDEST, EW_WIDEST, EW_WIDEST, adam=True)
    if code:
        ewise_fail(what, why)
    return desc


def lower_sce(comp: Compiled, op: Op, frac: dict[str, int], label: int) -> SceDesc:
    """The descriptor of a compiled sce op for one sample of class `label`, with the current fraction bits `frac`
    (like Machine.frac). Raises ValueError when the op does not fit the descriptor or is illegal."""
    if op.kind != OpKind.SCE:
        raise ValueError(f"op {op.kind} -> {op.out} is not a softmax cross-entropy")
    (z,) = op.ins
    e = op.out
    zt, et = comp.tensors[z], comp.tensors[e]
    (zbank, zbase), (ebank, ebase) = comp.layout[z], comp.layout[e]
    desc = SceDesc(
        z_base=zbase,
        e_base=ebase,
        n_out=et.size,
        classes=comp.cfg.classes,
        label=int(label),
        frac_z=frac[z],
        err_w=et.fmt.width,
        err_frac=frac[e],
        banks=(zbank, ebank),
        names=(z, e),
    )
    if zt.size != et.size:
        sce_fail(desc, f"{z} has {zt.size} elements, {e} {et.size}")
    if zbank == ebank and zbase < ebase < zbase + zt.size:
        sce_fail(desc, f"{e} overlaps {z} above its base: a write would overtake a read")
    check_sce(desc)
    code, why = sce_error(desc)
    if code:
        sce_fail(desc, why)
    return desc


def rank_fields(
    comp: Compiled, op: Op, frac: dict[str, int], rank_constants: tuple[float, float] | None = None
) -> dict[str, int]:
    """The descriptor fields of a compiled rank op that do not depend on where its tensors sit: rank, the slice
    shape, inv_d, q_shift, threshold and tau_num, with the current fraction bits `frac` (like Machine.frac).
    `rank_constants`: (the prior per mini-batch, the pruning threshold) the host schedules (Machine.rank_constants);
    None: the config's (prior * batch, threshold)."""
    if op.kind != OpKind.RANK:
        raise ValueError(f"op {op.kind} -> {op.out} is not a rank update")
    w_left, w_right, tau, _ = op.ins
    r0, m, n, r = comp.tensors[w_left].shape
    _, m2, n2, r1 = comp.tensors[w_right].shape
    if frac[w_left] != frac[w_right]:
        raise ValueError(
            f"rank update of {w_left} - {w_right}: the cores have {frac[w_left]} and {frac[w_right]} fraction bits"
        )
    rank = comp.cfg.train.rank
    prior, threshold = (rank.prior * comp.cfg.train.batch, rank.threshold) if rank_constants is None else rank_constants
    c_q, c_f = quant_const(prior)
    return {
        "rank": r,
        "left_rows": r0 * m * n,
        "right_cols": m2 * n2 * r1,
        "inv_d": inv_d(r0 * m * n + m2 * n2 * r1),
        "q_shift": 2 * frac[w_left] + 24 - LAMBDA_FMT.frac,
        "threshold": round(threshold * 2**LAMBDA_FMT.frac),
        "tau_num": c_q << (LAMBDA_FMT.frac + frac[tau] - c_f),
    }


def lower_rank(
    comp: Compiled, op: Op, frac: dict[str, int], rank_constants: tuple[float, float] | None = None
) -> RankDesc:
    """The descriptor of a compiled rank op, bases in words of each tensor's bank (golden/program.py globalises
    them), with the current fraction bits `frac` and the host's `rank_constants` (rank_fields). Raises ValueError
    when it does not fit the descriptor."""
    w_left, w_right, tau, mask = op.ins
    names = (w_left, w_right, op.out, mask, tau)
    (banks, bases) = zip(*(comp.layout[n] for n in names))
    left_base, right_base, lam_base, mask_base, tau_base = bases
    desc = RankDesc(
        left_base,
        right_base,
        lam_base,
        mask_base,
        tau_base,
        **rank_fields(comp, op, frac, rank_constants),
        banks=banks,
        names=(w_left, w_right),
    )
    check_rank(desc)
    code, why = rank_error(desc)
    if code:
        rank_fail(desc, why)
    return desc
