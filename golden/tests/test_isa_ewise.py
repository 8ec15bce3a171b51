"""Tests of the element-wise lowering (golden/lowering.py lower_ewise) and unit (golden/isa/ewise.py). Every axpby,
acc, relu, relu_bwd, derive, zero and mask op of tiny and digits (rank adaptation on, so the mask ops exist), lowered
with random legal fractions and executed by execute_ewise on flat banks, equals the Machine's result for that op:
values, saturations, max |y| and draws. The helpers are also the reference of the RTL test
(verif/blocks/tt_ewise/tb_tt_ewise.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pytest

from golden.arch import EW_ERR_ALIGN, EwOpcode
from golden.compiler import compile_network
from golden.config_file import config_from_dict, config_to_dict, load_config
from golden.fxp import STOCHASTIC
from golden.ir import EWISE_KINDS, Compiled, Op, OpKind
from golden.isa.ewise import EW_ALIGN_TOP, EwiseDesc, check_ewise, ewise_error, execute_ewise
from golden.lowering import lower_ewise
from golden.machine import Machine
from golden.semantics import AXPBY_GUARD as G, quant_const
from golden.tests.test_isa import _range, bank_width

FRAC_SPREAD = 5  # fractions drawn within +-FRAC_SPREAD of the configured ones


def ewise_compiled(model: str, rank: bool = True) -> Compiled:
    """The compiled model with rank adaptation switched on (so the update program has its mask ops); a model name
    ending in "-adam" is the model with the Adam optimizer (its update has the adam_v and adam_step ops)."""
    model, adam = model.removesuffix("-adam"), model.endswith("-adam")
    data = config_to_dict(load_config(model))
    data["train"]["rank"]["enabled"] = rank
    if adam:
        data["train"]["optimizer"] = "adam"
    return compile_network(config_from_dict(data))


def ewise_ops(comp: Compiled) -> list[Op]:
    """Every element-wise op of train_sample, infer (NEAREST) and update."""
    return [op for op in comp.train_sample + comp.infer + comp.update if op.kind in EWISE_KINDS]


@dataclass
class EwiseCase:
    """One element-wise op with its operands: the inputs of both references."""

    comp: Compiled
    op: Op  # with a host step, the op as the Machine runs it: beta = step, host_step False
    frac: dict[str, int]
    values: dict[str, np.ndarray]  # sources, the initial destination and the masks
    banks: dict[str, np.ndarray]
    rand: np.ndarray | None
    desc: EwiseDesc


def random_step(rng: np.random.Generator, comp: Compiled) -> tuple[int, int]:
    """A host step-size constant -lr/B (Machine.sgd_step) for a random learning rate."""
    return quant_const(-float(rng.uniform(1e-4, 2.0)) / comp.cfg.train.batch)


def ewise_case(
    comp: Compiled,
    op: Op,
    rng: np.random.Generator,
    extremes: bool = False,
    step: tuple[int, int] | None = None,
    fracs: bool = True,
) -> EwiseCase:
    """Random legal fractions (`fracs`), operands over their full ranges (only the extreme values with
    `extremes`), random garbage elsewhere in the banks, random 0/1 masks; a random host step when the op needs
    one and `step` is None."""
    if op.kind == OpKind.ADAM_STEP:  # the Machine takes lr_t from its own host register (Machine.adam_lr)
        step = step or Machine(comp, seed=0).adam_lr()
        op_m = op
    elif op.host_step:
        step = step or random_step(rng, comp)
        op_m = replace(op, beta=step, host_step=False)
    else:
        op_m = op
    names = [n for n in (*op.ins, op.out) if n]
    base = {n: t.fmt.frac for n, t in comp.tensors.items()}
    lo_f, hi_f = comp.cfg.formats.frac_min, comp.cfg.formats.frac_max
    for _ in range(200):
        frac = dict(base)
        if fracs:
            for n in names:
                if not n.startswith("MASK"):
                    frac[n] = int(np.clip(base[n] + rng.integers(-FRAC_SPREAD, FRAC_SPREAD + 1), lo_f, hi_f))
        try:
            desc = lower_ewise(comp, op, frac, host_step=step)
            break
        except ValueError:
            continue
    else:
        raise AssertionError(f"no legal fractions found for {op.kind} {op.out}")
    banks = {}
    for bank, words in comp.bank_words.items():
        lo, hi = _range(bank_width(comp, bank))
        banks[bank] = rng.integers(lo, hi + 1, size=words)
    values = {}
    for name in names:
        t = comp.tensors[name]
        if name.startswith("MASK"):
            v = rng.integers(0, 2, size=t.size)
        else:
            lo, hi = _range(t.fmt.width)
            if extremes:
                v = rng.choice(np.array([lo, hi, lo + 1, hi - 1, -1, 0, 1]), size=t.size)
            else:
                v = rng.integers(lo, hi + 1, size=t.size)
        bank, b = comp.layout[name]
        values[name] = v
        banks[bank][b : b + t.size] = v
    rand = rng.integers(0, 256, size=desc.count) if desc.draws else None
    return EwiseCase(comp, op_m, frac, values, banks, rand, desc)


def machine_ewise(case: EwiseCase) -> tuple[np.ndarray, int, int | None, int]:
    """The Machine's result of the op (a batch of one sample for per-sample tensors): (destination, saturations,
    max |y| where the Machine observes one (per-sample AXPBY, ACC) else None, draws)."""
    comp, op = case.comp, case.op
    m = Machine(comp, seed=0)
    m.frac.update(case.frac)
    env = {}
    for name, v in case.values.items():
        if comp.tensors[name].per_sample:
            env[name] = v[None, :].astype(np.int64)
        else:
            m.mem[name] = v.astype(np.int64).copy()
    draws = m._plan_draws([op])[-1]
    m.run([op], env, None if case.rand is None else case.rand[None, :], observe=True)
    out = env[op.out][0] if comp.tensors[op.out].per_sample else m.mem[op.out]
    observed = op.kind in (OpKind.AXPBY, OpKind.ACC) and op.out in m.maxabs
    return out, m.sat_by_tensor[op.out], m.maxabs[op.out] if observed else None, draws


def desc_ewise(case: EwiseCase) -> tuple[np.ndarray, int, int, int, np.ndarray]:
    """execute_ewise on the case's flat banks: (destination, saturations, max |y|, draws, the whole y bank)."""
    d = case.desc

    def bank(b):
        return case.banks[b] if b else None

    tab_bank = next((b for b in d.tab_banks if b), "")  # MASK, PENALTY: both tables in the state bank
    mem_y, n_sat, maxabs, draws = execute_ewise(
        d, bank(d.banks[0]), bank(d.banks[1]), case.banks[d.banks[2]], case.rand, bank(tab_bank)
    )
    return mem_y[d.y_base : d.y_base + d.count], n_sat, maxabs, draws, mem_y


def _check_ewise(case: EwiseCase) -> int:
    want, want_sat, want_max, want_draws = machine_ewise(case)
    got, sat, mx, draws, mem_y = desc_ewise(case)
    d = case.desc
    what = f"{case.op.kind} {case.op.out} (align {d.align_x}/{d.align_z}, shift {d.shift}, mode {d.mode})"
    assert np.array_equal(got, want), what
    assert (sat, draws) == (want_sat, want_draws), what
    assert want_max is None or mx == want_max, what
    outside = np.ones(len(mem_y), dtype=bool)
    outside[d.y_base : d.y_base + d.count] = False
    assert np.array_equal(mem_y[outside], case.banks[d.banks[2]][outside]), f"{what}: wrote outside the output"
    return sat


ADAM_KINDS = {OpKind.ADAM_V, OpKind.ADAM_STEP}


@pytest.mark.parametrize("model", ["tiny", "digits", "tiny-adam", "digits-adam"])
def test_every_ewise_op_matches_machine(model):
    comp = ewise_compiled(model)
    rng = np.random.default_rng(5)
    kinds, sat_kinds = set(), set()
    for op in ewise_ops(comp):
        for trial in range(3):
            if _check_ewise(ewise_case(comp, op, rng, extremes=trial == 2, fracs=trial > 0)):
                sat_kinds.add(op.kind)
            kinds.add(op.kind)
    adam = model.endswith("-adam")  # SGD's programs have every kind but Adam's; Adam's lack the SGD step only
    assert kinds == set(EWISE_KINDS) - (set() if adam else ADAM_KINDS)
    assert {"axpby", "acc", "derive"} <= sat_kinds, "the cases never saturated: the counts were not tested"


@pytest.mark.parametrize("spread", [15, 16, 22, 30])
def test_penalty_with_a_tiny_tau_lowers_its_alignment(spread):
    """F_tau + F_w - F_g beyond 15 (a small prior against a coarse gradient format) would put the 16-bit g term
    past the accumulator bound: PENALTY lowers Fc so that g's alignment is at most 15 and rounds the product's low
    bits away (golden/semantics.py penalty_fc), and the descriptor equals the Machine."""
    comp = ewise_compiled("digits")
    rng = np.random.default_rng(spread)
    for op in (o for o in comp.update if o.kind == OpKind.PENALTY):
        g, w, *taus = op.ins
        case = ewise_case(comp, op, rng, fracs=False)
        frac = dict(case.frac)
        frac[g] = frac[w] + 20 - spread
        for t in taus:
            if t:
                frac[t] = 20
        case = replace(case, frac=frac, desc=lower_ewise(comp, op, frac))
        x_w = comp.tensors[g].fmt.width
        assert case.desc.align_x == min(spread, EW_ALIGN_TOP - x_w), case.desc
        assert case.desc.align_z == case.desc.align_x - spread
        _check_ewise(case)


def test_ewise_host_step_of_the_machine():
    """The step the Machine's host writes (Machine.sgd_step), passed to lower_ewise, gives the Machine's update."""
    comp = ewise_compiled("tiny", rank=False)
    rng = np.random.default_rng(9)
    m = Machine(comp, seed=0)
    for op in (o for o in comp.update if o.host_step):
        case = ewise_case(comp, op, rng, step=m.sgd_step())
        _check_ewise(case)
        case.op = op  # the Machine takes the step from its own host register
        assert np.array_equal(machine_ewise(case)[0], desc_ewise(case)[0])


def test_ewise_descriptor_fields():
    comp = ewise_compiled("digits")
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    bias = next(o for o in comp.train_sample if o.kind == OpKind.AXPBY_RELU)  # Y0 = ReLU(Z0 + B0)
    d = lower_ewise(comp, bias, frac)
    assert d.opcode == EwOpcode.AXPBY_RELU
    fy = frac[bias.out]
    assert (d.align_x, d.align_z, d.shift) == (fy + G - frac["Z0"], fy + G - frac["B0"], G)
    assert (d.x_base, d.z_base, d.y_base) == tuple(comp.layout[n][1] for n in ("Z0", "B0", "Y0"))
    assert (d.count, d.mode, d.x_w, d.z_w, d.y_w) == (64, STOCHASTIC, 16, 16, 16)
    mom = next(o for o in comp.update if o.note == "momentum")
    d = lower_ewise(comp, mom, frac)
    fa = mom.alpha[1]
    assert (d.alpha, d.align_x, d.align_z) == (
        mom.alpha[0],
        frac[mom.out] + G - fa - frac[mom.ins[0]],
        frac[mom.out] + G - frac[mom.ins[1]],
    )
    sgd = next(o for o in comp.update if o.host_step)
    d = lower_ewise(comp, sgd, frac, host_step=(-1234, 20))
    assert (d.beta, d.align_z) == (-1234, frac[sgd.out] + G - 20 - frac[sgd.ins[1]])
    acc = next(o for o in comp.train_sample if o.kind == OpKind.ACC)
    d = lower_ewise(comp, acc, frac)
    assert (d.alpha, d.shift, d.accumulate, d.z_w) == (1, frac[acc.ins[0]] - frac[acc.out], True, 0)
    mask = next(o for o in comp.update if o.kind == OpKind.MASK and o.out == "W0.1")
    d = lower_ewise(comp, mask, frac)
    assert d.shape == (8, 16, 8) and d.tables == ("MASK0.0", "MASK0.1") and d.mode == 0 and d.draws == 0
    assert (d.tab_left, d.tab_right, d.tab_on) == (comp.layout["MASK0.0"][1], comp.layout["MASK0.1"][1], 3)
    derive = next(o for o in comp.update if o.kind == OpKind.DERIVE)
    d = lower_ewise(comp, derive, frac)
    assert (d.shift, d.mode, d.y_w, d.x_w) == (frac[derive.ins[0]] - frac[derive.out], 0, 4, 8)
    zero = next(o for o in comp.update if o.kind == OpKind.ZERO)
    d = lower_ewise(comp, zero, frac)
    assert (d.alpha, d.x_w, d.z_w, d.draws, d.reads_x) == (0, 0, 0, 0, False)


def test_ewise_does_not_fit():
    comp = ewise_compiled("tiny")
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    sgd = next(o for o in comp.update if o.host_step)
    with pytest.raises(ValueError, match="pass host_step"):
        lower_ewise(comp, sgd, frac)
    with pytest.raises(ValueError, match="not an element-wise op"):
        lower_ewise(comp, next(o for o in comp.train_sample if o.kind == OpKind.CONTRACT), frac)
    acc = next(o for o in comp.train_sample if o.kind == OpKind.ACC)
    with pytest.raises(ValueError, match="shift 48 outside -16..47"):
        lower_ewise(comp, acc, {**frac, acc.out: frac[acc.ins[0]] - 48})
    bias = next(o for o in comp.train_sample if o.kind == OpKind.AXPBY_RELU)
    z, b = bias.ins
    # A term that would overflow the accumulator lowers Fc (fewer guard bits) instead of failing (SPEC 5.2) ...
    lowered = lower_ewise(comp, bias, {**frac, z: frac[bias.out] - (16 - G)})
    assert lowered.x_w + lowered.align_x == 31 and lowered.shift == G - 1
    # ... and an alignment of -47 or less, which leaves 0 of any product, is executed as -47.
    assert lower_ewise(comp, bias, {**frac, b: frac[bias.out] + G + 48}).align_z == -47
    assert lower_ewise(comp, bias, {**frac, b: frac[bias.out] + G + 47}).align_z == -47
    d = lower_ewise(comp, bias, frac)
    with pytest.raises(ValueError, match="align_x 100 outside the 7-bit"):
        check_ewise(replace(d, align_x=100))
    for bad, message in (
        (replace(d, count=1 << 20), "count 1048576 outside 1..1048575"),
        (replace(d, count=0), "count 0 outside 1"),
        (replace(d, y_base=(1 << 20) - 2), "operand y spans addresses"),
        (replace(d, alpha=1 << 15), "alpha 32768 outside the 16-bit"),
        (replace(d, opcode=16), "opcode 16 outside 0..15"),
        (replace(d, y_w=64), "y_w 64 outside 0..63"),
        (replace(d, opcode=EwOpcode.MASK, shape=(2, 4, 2)), "shape .* count is 8"),
    ):
        with pytest.raises(ValueError, match=message):
            check_ewise(bad)
    assert ewise_error(replace(d, align_x=23, x_w=8))[0] == 0
    assert ewise_error(replace(d, align_x=23, x_w=9))[0] == EW_ERR_ALIGN
    with pytest.raises(ValueError, match="error 5: unknown opcode 10"):
        execute_ewise(replace(d, opcode=10), None, None, np.zeros(100, dtype=np.int64))
    # the Adam ops are unknown to a unit built without them
    assert ewise_error(replace(d, opcode=EwOpcode.ADAM_V))[:1] == (5,)
    assert ewise_error(replace(d, opcode=EwOpcode.ADAM_V), adam=True)[0] != 5
    wide = replace(comp.tensors["G0.0"], shape=(17, 4, 4, 1))
    big = replace(comp, tensors={**comp.tensors, "G0.0": wide, "W0.0": replace(wide, name="W0.0")})
    mask = next(o for o in big.update if o.kind == OpKind.MASK and o.out == "W0.0")
    with pytest.raises(ValueError, match=r"core shape \(17, 16, 1\): ranks outside 1..16"):
        lower_ewise(big, mask, frac)
