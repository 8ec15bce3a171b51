"""golden/isa/rank.py: RankDesc, check_rank, rank_error, execute_rank, rank_reads; golden/lowering.py rank_fields.

execute_rank is checked against the Machine's own rank update (golden.machine.Machine._rank on its tensors) for
every bond of a rank-adaptive tiny and digits, with cores scaled so that slices prune, and the rules of
golden/semantics.py rank_bond by hand: the threshold, the keep-one rule (largest lambda, first of equals, dead slices
last), tau's clamp and the clamp of Q that rtl/tt_rank.v relies on. The helpers (`rank_compiled`, `bond_memory`,
`random_rank`) are also the stimulus of the RTL testbench verif/blocks/tt_rank.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from golden.arch import EW_MASK_N, RANK_ERR_COUNT, RANK_ERR_RANK, RANK_ERR_SHIFT
from golden.compiler import compile_network
from golden.config_file import config_from_dict, config_to_dict, load_config
from golden.float_tt import init_tt_cores
from golden.isa.rank import RankDesc, check_rank, execute_rank, rank_error, rank_reads
from golden.lowering import rank_fields
from golden.machine import Machine
from golden.semantics import LAMBDA_FMT, Q_CLAMP, TAU_MAX, rank_bond


def rank_compiled(model: str, prior: float = 1e-2, seed: int = 0) -> Machine:
    """A Machine of `model` with rank adaptation on, initial cores loaded and its rank state initialised."""
    d = config_to_dict(load_config(model))
    d["train"]["rank"] = {"enabled": True, "prior": prior, "warmup_epochs": 0}
    cfg = config_from_dict(d)
    m = Machine(compile_network(cfg), seed)
    rng = np.random.default_rng(seed)
    m.load_float_params(
        [init_tt_cores(layer, rng, dtype=np.float64) for layer in cfg.layers],
        [np.zeros(layer.n_out) for layer in cfg.layers],
    )
    m.init_rank_state()
    return m


def bond_memory(m: Machine, op, gap: int = 3) -> tuple[RankDesc, np.ndarray]:
    """The bond of rank op `op` packed into one flat memory (cores, then lambda halves, masks and taus, `gap`
    junk words between the regions) and its descriptor."""
    w_left, w_right, tau, mask = op.ins
    fields = rank_fields(m.comp, op, m.frac)
    r = fields["rank"]
    parts = [m.mem[w_left], m.mem[w_right], m.mem[op.out], m.mem[mask], m.mem[tau]]  # lambdas: two words each
    bases = []
    pos = gap
    for p in parts:
        bases.append(pos)
        pos += len(p) + gap
    mem = np.full(pos, 0x5A5A - (1 << 16), dtype=np.int64)  # junk, never read
    for base, p in zip(bases, parts):
        mem[base : base + len(p)] = p
    mem = np.where(mem >= 1 << 15, mem - (1 << 16), mem)
    left_base, right_base, lam_base, mask_base, tau_base = bases
    flat = ("",) * 5  # one flat memory, no banks
    desc = RankDesc(left_base, right_base, lam_base, mask_base, tau_base, **fields, banks=flat, names=(w_left, w_right))
    assert len(m.mem[op.out]) == 2 * r
    return check_rank(desc), mem


def random_rank(
    rng: np.random.Generator, mask_n: int = EW_MASK_N, rows_max: int = 12, gap: int = 2
) -> tuple[RankDesc, np.ndarray]:
    """A random legal descriptor and its memory: cores of random widths (up to 16 bits, so sums and Q run over
    their ranges), lambdas from negative to saturated, masks with dead and junk-valued words, thresholds and
    numerators that make every rule fire somewhere."""
    r = int(rng.integers(1, mask_n + 1))
    rows, cols = (int(v) for v in rng.integers(1, rows_max + 1, size=2))
    core_w = int(rng.choice([2, 4, 8, 12, 16]))
    lo, hi = -(1 << (core_w - 1)), (1 << (core_w - 1)) - 1
    left = rng.integers(lo, hi + 1, size=rows * r)
    right = rng.integers(lo, hi + 1, size=r * cols)
    kind = int(rng.integers(0, 4))
    if kind == 0:  # a few slices all zero (M = 0), the rest small
        right[rng.integers(0, r * cols, size=cols)] = 0
    if kind == 1:  # extremes only
        left, right = rng.choice(np.array([lo, hi]), size=left.size), rng.choice(np.array([lo, hi]), size=right.size)
    lam = rng.integers(0, 1 << int(rng.integers(1, 32)), size=r)
    if rng.random() < 0.2:
        lam[rng.integers(0, r)] = int(rng.choice([LAMBDA_FMT.qmin, LAMBDA_FMT.qmax, -1, 0]))
    mask = (rng.random(r) < 0.8).astype(np.int64)
    if rng.random() < 0.2:
        mask[rng.integers(0, r)] = int(rng.choice([-1, 2, -(1 << 15), (1 << 15) - 1]))
    if rng.random() < 0.2:
        mask[:] = 0  # every slice dead already: the largest lambda is -1 for all, slice 0 stays
    q_shift = int(rng.integers(0, 48)) if rng.random() < 0.3 else 2 * int(rng.integers(0, core_w))
    inv_d = round(2**24 / (rows + cols + 1)) if rng.random() < 0.7 else int(rng.integers(0, 1 << 24))
    thr = max(int(np.median(lam)), 0) if rng.random() < 0.6 else int(rng.integers(0, 1 << 32))
    num = int(rng.integers(0, 1 << int(rng.integers(1, 49))))
    tau = rng.integers(-(1 << 15), 1 << 15, size=r)
    parts = [left, right, np.ravel(np.column_stack([lam & 0xFFFF, lam >> 16])), mask, tau]
    bases, pos = [], gap
    for p in parts:
        bases.append(pos)
        pos += len(p) + gap
    mem = rng.integers(-(1 << 15), 1 << 15, size=pos)
    for base, p in zip(bases, parts):
        mem[base : base + len(p)] = p
    mem = np.where(mem >= 1 << 15, mem - (1 << 16), mem)
    left_base, right_base, lam_base, mask_base, tau_base = bases
    desc = RankDesc(
        left_base,
        right_base,
        lam_base,
        mask_base,
        tau_base,
        rank=r,
        left_rows=rows,
        right_cols=cols,
        inv_d=inv_d,
        q_shift=q_shift,
        threshold=thr,
        tau_num=num,
    )
    return check_rank(desc), mem


def _lam_of(desc: RankDesc, mem: np.ndarray) -> list[int]:
    return [
        (int(mem[desc.lam_base + 2 * r + 1]) << 16) | (int(mem[desc.lam_base + 2 * r]) & 0xFFFF)
        for r in range(desc.rank)
    ]


ROUNDS = 60  # 0.9^60 = 0.0018 of the initial mean squares (below 0.2) is below the threshold 1e-3


@pytest.mark.parametrize("model", ["tiny", "digits"])
@pytest.mark.parametrize("scale", [1.0, 0.3, 0.0])
def test_execute_rank_equals_the_machine(model, scale):
    """Every bond, ROUNDS rank updates in a row: lambda, mask and tau after execute_rank on the packed memory equal
    the Machine's after its rank op; with the cores zeroed, lambda decays by 0.9 a round and slices prune, down
    to the keep-one slice."""
    m = rank_compiled(model)
    for op in m.comp.rank_update:
        for w in op.ins[:2]:
            m.mem[w] = np.round(m.mem[w] * scale).astype(np.int64)
    pruned = 0
    for op, _ in [(op, i) for op in m.comp.rank_update for i in range(ROUNDS)]:
        desc, mem = bond_memory(m, op)
        out = execute_rank(desc, mem)
        m._rank(op)
        assert _lam_of(desc, out) == m.lambdas(op.out)
        assert [int(out[desc.mask_base + r]) for r in range(desc.rank)] == [int(v) for v in m.mem[op.ins[3]]]
        assert [int(out[desc.tau_base + r]) for r in range(desc.rank)] == [int(v) for v in m.mem[op.ins[2]]]
        untouched = np.ones(len(mem), dtype=bool)
        for name in ("lambda", "mask", "tau"):
            lo, hi = desc.regions()[name]
            untouched[lo:hi] = False
        assert np.array_equal(out[untouched], mem[untouched]), "a word outside the state changed"
    pruned = sum(len(m.mem[op.ins[3]]) - int(m.mem[op.ins[3]].sum()) for op in m.comp.rank_update)
    assert (pruned > 0) == (scale == 0.0)


def test_keep_one_rule_and_threshold():
    sums = [0, 0, 0, 0]
    # all below the threshold: the largest lambda stays, the first of equals
    lam, keep, tau = rank_bond([100, 300, 300, 50], [1, 1, 1, 1], sums, 0, 0, 1 << 30, 1 << 20)
    assert keep == [0, 1, 0, 0]
    assert lam == [(58982 * v + (1 << 15)) >> 16 for v in (100, 300, 300, 50)]
    assert tau == [0, (1 << 20) // lam[1], 0, 0]
    # a dead slice never comes back, even with the largest lambda; a live one with a negative lambda beats it
    _, keep, _ = rank_bond([-5 << 16, 10 << 16], [1, 0], sums[:2], 0, 0, 1 << 30, 1)
    assert keep == [1, 0]
    # all dead already: every candidate is -1, slice 0 stays
    _, keep, tau = rank_bond([5, 9], [0, 0], sums[:2], 0, 0, 0, 1 << 40)
    assert keep == [1, 0] and tau == [TAU_MAX, 0]
    # at the threshold a slice stays; lambda <= 0 divides by 1
    lam, keep, tau = rank_bond([0, 1 << 16], [1, 1], [0, 0], 0, 0, 58982, 7)
    assert lam == [0, 58982] and keep == [0, 1] and tau == [0, 0]


def test_q_clamp_is_exact():
    """rtl/tt_rank.v clamps Q at Q_CLAMP: any larger Q gives the same lambda (saturated), for every old lambda."""
    for old in (LAMBDA_FMT.qmin, -1, 0, 1, LAMBDA_FMT.qmax):
        for q in (Q_CLAMP, Q_CLAMP + 1, Q_CLAMP << 20):
            a = rank_bond([old], [1], [q], 1, 0, 0, 1)
            b = rank_bond([old], [1], [Q_CLAMP], 1, 0, 0, 1)
            assert a == b and a[0] == [LAMBDA_FMT.qmax]


def test_errors_and_fields():
    rng = np.random.default_rng(3)
    desc, _ = random_rank(rng)
    assert rank_error(desc) == (0, "")
    assert rank_error(replace(desc, rank=0))[0] == RANK_ERR_RANK
    assert rank_error(replace(desc, rank=17))[0] == RANK_ERR_RANK
    assert rank_error(replace(desc, rank=5), mask_n=4)[0] == RANK_ERR_RANK
    assert rank_error(replace(desc, left_rows=0))[0] == RANK_ERR_COUNT
    assert rank_error(replace(desc, right_cols=0, q_shift=50))[0] == RANK_ERR_COUNT  # the lowest code
    assert rank_error(replace(desc, q_shift=48))[0] == RANK_ERR_SHIFT
    with pytest.raises(ValueError, match="error 3"):
        execute_rank(replace(desc, q_shift=48), np.zeros(1000))
    with pytest.raises(ValueError, match=r"tau_num .* \(48-bit field\)"):
        check_rank(replace(desc, tau_num=1 << 48))
    with pytest.raises(ValueError, match="lambda words .* overlap left core"):
        check_rank(replace(desc, lam_base=desc.left_base))
    with pytest.raises(ValueError, match="mask words .* overlap tau"):
        check_rank(replace(desc, tau_base=desc.mask_base))
    with pytest.raises(ValueError, match="beyond the 20-bit address field"):
        check_rank(replace(desc, right_base=(1 << 20) - 1))


def test_rank_fields_of_digits():
    m = rank_compiled("digits")
    op = m.comp.rank_update[0]
    f = rank_fields(m.comp, op, m.frac)
    r0, mm, n, r = m.comp.tensors[op.ins[0]].shape
    _, m2, n2, r1 = m.comp.tensors[op.ins[1]].shape
    assert f["rank"] == r and f["left_rows"] * f["right_cols"] == r0 * mm * n * m2 * n2 * r1
    assert f["inv_d"] == round(2**24 / (r0 * mm * n + m2 * n2 * r1 + 1))
    assert f["q_shift"] == 2 * m.frac[op.ins[0]]
    assert f["tau_num"] == m.tau_numerator(op.ins[2]) and f["threshold"] == m.rank_threshold()
    with pytest.raises(ValueError, match="not a rank update"):
        rank_fields(m.comp, m.comp.update[0], m.frac)


def test_reads_cover_each_slice_once():
    """Pass 1 reads each slice's lambda, mask and words once, pass 2 each lambda again (the RTL's cycle count,
    rank_cycles, is checked by verif/blocks/tt_rank against the unit)."""
    desc, _ = random_rank(np.random.default_rng(5))
    reads = rank_reads(desc)
    cores = [a for a in reads if a < desc.lam_base]
    assert sorted(cores) == list(range(desc.left_base, desc.left_base + desc.left_rows * desc.rank)) + list(
        range(desc.right_base, desc.right_base + desc.right_cols * desc.rank)
    )
    assert sorted(a for a in reads if a >= desc.lam_base) == sorted(
        [desc.mask_base + r for r in range(desc.rank)] + [desc.lam_base + i for i in range(2 * desc.rank)] * 2
    )
