"""Tests of the CONTRACT lowering (golden/lowering.py, golden/isa/contract.py): every descriptor, executed by the plain
loop reference on flat bank memories built from the layout, equals the golden Machine's result for one sample, bit for
bit (outputs, saturation count, max |y|); descriptors that do not fit raise.

The helpers `contract_case` and `machine_contract` are also the reference of the RTL test
(verif/blocks/tt_contract/tb_tt_contract.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np
import pytest

from golden.arch import ADDR_W, CNT_W, MAX_OUT, MAX_RED
from golden.compiler import compile_network
from golden.config_file import load_config
from golden.fxp import STOCHASTIC, Fmt
from golden.ir import BANK_ACT, Compiled, Op, OpKind, Tensor
from golden.isa.contract import ContractDesc, pack_ports
from golden.isa.loop_nest import execute_desc
from golden.lowering import lower_contract
from golden.machine import Machine

SHIFTS = (-16, -3, 0, 1, 4, 7, 8, 9, 12, 16, 20, 30, 47)  # legal shifts, both ends and the rounding edges


def contract_ops(comp: Compiled) -> list[Op]:
    """Every contract op of train_sample (STOCHASTIC) and infer (NEAREST)."""
    return [op for op in comp.train_sample + comp.infer if op.kind == OpKind.CONTRACT]


def _range(width: int) -> tuple[int, int]:
    return -(1 << (width - 1)), (1 << (width - 1)) - 1


def bank_width(comp: Compiled, bank: str) -> int:
    return max(t.fmt.width for t in comp.tensors.values() if comp.layout[t.name][0] == bank)


@dataclass
class Case:
    """One contract op with its operands: the inputs of both references."""

    comp: Compiled | None  # None, with op: a hand-built descriptor, no network behind it
    op: Op | None
    frac: dict[str, int]
    values: dict[str, np.ndarray]  # a, b and (when accumulating) the initial output
    banks: dict[str, np.ndarray]  # flat bank memories holding the values at their layout addresses
    rand: np.ndarray | None  # one draw per output element (STOCHASTIC)
    desc: ContractDesc


def contract_case(
    comp: Compiled, op: Op, rng: np.random.Generator, shift: int | None = None, extremes: bool = False
) -> Case:
    """Random fractions giving shift `shift` (random legal if None), operands over their full ranges (only the
    extreme values with `extremes`), random garbage elsewhere in the banks, a random initial output buffer."""
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    a, b = op.ins
    fab = frac[a] + frac[b]
    if shift is None:  # a legal shift that keeps F_out inside the formats' range (-32..47)
        shift = int(rng.choice([s for s in SHIFTS if -32 <= fab - s <= 47]))
    s = shift
    frac[op.out] = fab - s
    banks = {}
    for bank, words in comp.bank_words.items():
        lo, hi = _range(bank_width(comp, bank))
        banks[bank] = rng.integers(lo, hi + 1, size=words)
    values = {}
    for name in (a, b, op.out):
        t = comp.tensors[name]
        lo, hi = _range(t.fmt.width)
        if extremes:
            v = rng.choice(np.array([lo, hi, lo + 1, hi - 1, -1, 0, 1]), size=t.size)
        else:
            v = rng.integers(lo, hi + 1, size=t.size)
        bank, base = comp.layout[name]
        if name != op.out or op.accumulate:
            values[name] = v
            banks[bank][base : base + t.size] = v
    rand = rng.integers(0, 256, size=comp.tensors[op.out].size) if op.mode == STOCHASTIC else None
    return Case(comp, op, frac, values, banks, rand, lower_contract(comp, op, frac))


def machine_contract(case: Case) -> tuple[np.ndarray, int, int]:
    """The Machine's result of the op for a batch of one sample: (output tensor, saturations, max |y|)."""
    comp, op = case.comp, case.op
    if comp is None or op is None:
        raise ValueError(f"{case.desc}: a hand-built case has no op for the Machine")
    m = Machine(comp, seed=0)
    m.frac.update(case.frac)
    env = {}
    for name, v in case.values.items():
        if comp.tensors[name].per_sample:
            env[name] = v[None, :].astype(np.int64)
        else:
            m.mem[name] = v.astype(np.int64).copy()
    m.run([op], env, None if case.rand is None else case.rand[None, :], observe=True)
    out = env[op.out][0] if comp.tensors[op.out].per_sample else m.mem[op.out]
    return out, m.sat_by_tensor[op.out], m.maxabs[op.out]


def desc_contract(case: Case) -> tuple[np.ndarray, int, int, np.ndarray]:
    """execute_desc on the case's flat banks: (output tensor, saturations, max |y|, the whole output bank)."""
    d = case.desc
    mem_o, n_sat, maxabs = execute_desc(
        d, case.banks[d.banks[0]], case.banks[d.banks[1]], case.banks[d.banks[2]], case.rand
    )
    size = d.out_count
    return mem_o[d.o_base : d.o_base + size], n_sat, maxabs, mem_o


def _check(case: Case) -> tuple[int, int]:
    want, want_sat, want_max = machine_contract(case)
    got, sat, mx, mem_o = desc_contract(case)
    op = case.op
    assert op is not None  # machine_contract ran it
    what = f"{op.out} ({op.spec}, shift {case.desc.shift}, mode {op.mode})"
    assert np.array_equal(got, want), what
    assert (sat, mx) == (want_sat, want_max), what
    d = case.desc
    outside = np.ones(len(mem_o), dtype=bool)
    outside[d.o_base : d.o_base + d.out_count] = False
    assert np.array_equal(mem_o[outside], case.banks[d.banks[2]][outside]), f"{what}: wrote outside the output"
    return sat, int(op.accumulate and sat > 0)


# ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["tiny", "digits"])
def test_every_contract_op_matches_machine(model):
    comp = compile_network(load_config(model))
    rng = np.random.default_rng(7)
    total_sat = acc_sat = 0
    for op in contract_ops(comp):
        for trial in range(3):
            sat, accs = _check(contract_case(comp, op, rng, extremes=trial == 2))
            total_sat += sat
            acc_sat += accs
    assert total_sat > 0 and acc_sat > 0, "the cases never saturated: the counts were not tested"


def test_descriptor_shape():
    """Loops in the documented order with row-major strides; bases from the layout; shift from the formats."""
    comp = compile_network(load_config("digits"))
    op = next(o for o in comp.train_sample if o.out == "F0[G0.1+G0.2+X0]")
    assert op.spec == "gebh,habf->fega" and not op.order
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    d = lower_contract(comp, op, frac)
    s = comp.letter_sizes
    assert [lp.index for lp in d.out_loops] == ["", "", "f", "e", "g", "a"]
    assert [lp.index for lp in d.red_loops] == ["", "", "b", "h"]
    assert [lp.so for lp in d.out_loops[2:]] == [s["e"] * s["g"] * s["a"], s["g"] * s["a"], s["a"], 1]
    a = d.out_loops[5]
    assert (a.sa, a.sb) == (0, s["b"] * s["f"])
    assert (d.a_base, d.b_base, d.o_base) == tuple(comp.layout[n][1] for n in (*op.ins, op.out))
    assert d.shift == frac[op.ins[0]] + frac[op.ins[1]] - frac[op.out]
    assert d.macs == op.macs and d.out_count == comp.tensors[op.out].size
    ports = pack_ports(d)
    assert ports["counts"] & ((1 << CNT_W) - 1) == s["h"]  # loop 0 of the RTL is the innermost reduction
    assert (ports["stride_o"] >> (ADDR_W * MAX_RED)) & ((1 << ADDR_W) - 1) == 1


# --- synthetic contractions: every loop slot, diagonals, narrow widths, accumulation -------------------------


def synthetic(
    rng: np.random.Generator,
    n_out: int,
    n_red: int,
    sizes: tuple[int, int] = (1, 4),
    widths: Sequence[int] = (4, 16, 16),
    accumulate: bool = False,
    mode: int = STOCHASTIC,
    base: Sequence[int] = (0, 0, 0),
) -> tuple[Compiled, Op]:
    """A Compiled with one random contraction over n_out output and n_red contracted letters."""
    letters = "abcdefghijklmnop"[: n_out + n_red]
    out_idx = "".join(rng.permutation(list(letters[:n_out])))
    red = list(letters[n_out:])
    ls = {c: int(rng.integers(*sizes, endpoint=True)) for c in letters}
    # every contracted letter in at least one operand; output letters in one or both
    in_a: list[str] = []
    in_b: list[str] = []
    for c in red + list(out_idx):
        where = rng.integers(0, 3)
        if where in (0, 2):
            in_a.append(c)
        if where in (1, 2):
            in_b.append(c)
    ia, ib = "".join(rng.permutation(in_a)), "".join(rng.permutation(in_b))
    tensors, layout = {}, {}
    banks = ("core", BANK_ACT, "state" if accumulate else BANK_ACT)
    for name, idx, w, bank, b in zip("ABO", (ia, ib, out_idx), widths, banks, base):
        tensors[name] = Tensor(name, tuple(ls[c] for c in idx), bank, Fmt(w, 0), adaptive=True, indices=idx)
        layout[name] = (bank, b)
    if banks[1] == banks[2]:  # A and the output share a bank: place them apart
        layout["O"] = (banks[2], max(base[2], base[1] + tensors["B"].size))
    op = Op(OpKind.CONTRACT, "O", ("A", "B"), f"{ia},{ib}->{out_idx}", mode, accumulate)
    comp = Compiled(load_config("tiny"), tensors, [op], [], [], [], [], ls, layout)
    for bank in set(banks):
        comp.bank_words[bank] = max(layout[n][1] + tensors[n].size for n in tensors if layout[n][0] == bank)
    return comp, op


@pytest.mark.parametrize("accumulate", [False, True])
def test_random_contractions(accumulate):
    rng = np.random.default_rng(11 + accumulate)
    total_sat = 0
    for trial in range(60):
        n_out = int(rng.integers(1, MAX_OUT + 1))
        n_red = int(rng.integers(0, MAX_RED + 1))
        widths = (int(rng.integers(2, 9)), int(rng.integers(2, 17)), int(rng.integers(2, 17)))
        mode = int(rng.integers(0, 2))
        comp, op = synthetic(
            rng,
            n_out,
            n_red,
            widths=widths,
            accumulate=accumulate,
            mode=mode,
            base=tuple(int(x) for x in rng.integers(0, 50, size=3)),
        )
        total_sat += _check(contract_case(comp, op, rng, shift=int(rng.integers(-4, 12)), extremes=trial % 3 == 0))[0]
    assert total_sat > 0


def test_does_not_fit():
    rng = np.random.default_rng(3)

    def frac(comp):
        return {n: 0 for n in comp.tensors}

    comp, op = synthetic(rng, MAX_OUT + 1, 1, sizes=(1, 2))
    with pytest.raises(ValueError, match=f"7 output loops, the descriptor has {MAX_OUT}"):
        lower_contract(comp, op, frac(comp))
    comp, op = synthetic(rng, 1, MAX_RED + 1, sizes=(1, 2))
    with pytest.raises(ValueError, match=f"5 reduction loops, the descriptor has {MAX_RED}"):
        lower_contract(comp, op, frac(comp))
    comp, op = synthetic(rng, 2, 1, sizes=(2, 2))
    lower_contract(comp, op, frac(comp))  # fits
    big = replace(comp, letter_sizes={**comp.letter_sizes, "a": 1 << CNT_W})
    for t in big.tensors.values():
        t.shape = tuple(big.letter_sizes[c] for c in t.indices)
    with pytest.raises(ValueError, match="count 65536 outside"):
        lower_contract(big, op, frac(big))
    comp, op = synthetic(rng, 2, 1, sizes=(2, 2), base=(0, 0, (1 << ADDR_W) - 2))
    with pytest.raises(ValueError, match="operand out spans addresses .* beyond the 20-bit address field"):
        lower_contract(comp, op, frac(comp))
    comp, op = synthetic(rng, 2, 1, sizes=(2, 2))
    with pytest.raises(ValueError, match="shift 64 outside the 7-bit shift field"):
        lower_contract(comp, op, {**frac(comp), "O": -64})
    d = lower_contract(comp, op, {**frac(comp), "O": -63})  # fits the field, but SPEC 2.1 forbids it
    with pytest.raises(ValueError, match="requantisation shift 63 outside"):
        execute_desc(
            d,
            np.zeros(100, dtype=np.int64),
            np.zeros(100, dtype=np.int64),
            np.zeros(100, dtype=np.int64),
            np.zeros(d.out_count, dtype=np.int64),
        )
    acc_op = replace(op, accumulate=True)  # a per-sample output cannot accumulate
    with pytest.raises(ValueError, match="accumulate=True but the output is per-sample"):
        lower_contract(comp, acc_op, frac(comp))
