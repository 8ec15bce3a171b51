"""The element-wise unit's descriptor (rtl/tt_ewise.v): its fields, their legality, the plain reference of one
descriptor and the RTL's port values.

One `EwiseDesc` per compiled op of kind axpby, acc, axpby_relu, relu_bwd, derive, zero, mask, penalty, adam_v or
adam_step (SPEC 5.2, 5.3, 5.5, 5.6). Every op is one datapath, element i = 0 .. count-1 in address order (x, z
and y at base + i):
  t = A(alpha * x_i, align_x) + A(beta * z_i, align_z)
      A(p, e): p * 2^e for e >= 0, floor((p + 2^(-e-1)) / 2^-e) else
  y = SAT_y(RQ(gate_i ? t : 0, shift, mode))              [ACC: y = SAT_y(old_y_i + y)]
  [AXPBY_RELU: the word written is max(y, 0); the saturations and max |y| are y's, before the ReLU]
The z term is formed by AXPBY and AXPBY_RELU only; the x term by every op but ZERO. gate_i is 1, except
RELU_BWD: z_i > 0 (z is the saved activation h); MASK: mask_left[r_prev] and mask_right[r_next] with element
i = (r_prev, m*n, r_next) of a core of shape (r0, m*n, r1); ZERO: 0. The engine knows no tensor and no
format: the lowering turns fraction bits into the alignments and the shift.
  AXPBY, AXPBY_RELU (SPEC 5.2, 5.3): Fc = axpby_fc(...), align_x = Fc - (F_alpha + F_x), align_z = Fc - (F_beta +
  F_z), shift Fc - F_y.
  ACC: alpha 1, shift F_src - F_out, accumulate. DERIVE: alpha 1, shift F_w - F_c, NEAREST.
  RELU_BWD, MASK: alpha 1, shift 0, NEAREST (exact, no draw). ZERO: alpha 0, no read.
  ADAM_V (SPEC 5.5 step 2): x = v, z = g, and the z term is beta * z_i^2 (exact): AXPBY's alignment rule with
    z's width taken as 2 z_w - 1 (|z^2| <= 2^(2 z_w - 2)).
  ADAM_STEP (SPEC 5.5 step 3): x = m, z = v, y = w; alpha is the host's step size lr_t, beta the epsilon eps_q
    (>= 1), align_z the fraction bits F_v of v. Per element: u = max(z_i, 0) + eps_q, (RSQRT[idx], h) =
    rsqrt_parts(u, F_v) (golden/semantics.py), t = A(alpha * x_i * RSQRT[idx], align_x) (the lowering gives align_x 0),
    delta = SAT_16(RQ(t, shift + h, mode)), y = SAT_y(old_y_i - delta). Only the last clamp counts (as in the
    golden machine). The x term's width is x_w + 14 (RSQRT < 2^14).
mode STOCHASTIC consumes one draw per element, in element order (SPEC 2.2); NEAREST none.

Fields (golden/arch.py; ValueError from `check_ewise` names the one that does not fit): opcode EW_OP_W = 4 bits;
count, bases and m*n ADDR_W = 20 bits unsigned (count >= 1; the last element of every operand addressable); alpha,
beta EW_CONST_W = 16 bits two's complement; align_x, align_z and shift EW_ALIGN_W = SHIFT_W = 7 bits two's
complement; mode 1 bit; x_w, z_w, y_w OUT_W_W = 6 bits (0 for an operand the op does not read); r0, r1
EW_RANK_W = 5 bits; MASK and PENALTY also tab_left, tab_right (ADDR_W bits) and tab_on (2 bits): where their
bonds' MASK or TAU words sit, read when the op starts (ewise_tables).
Legal descriptors (checked when the op starts; the RTL raises error_code, `execute_ewise` a ValueError; see
`ewise_error`): 1 shift outside -16..47; 2 y_w outside 2..OUT_W or a used x_w / z_w outside 2..X_W / Z_W;
3 count 0, or a MASK / PENALTY with r0 or r1 outside 1..EW_MASK_N or m*n = 0; 4 a used alignment below -47 or
with width + align > ACC_W - 17 (then |alpha x 2^align| <= 2^(15 + x_w - 1 + align) <= 2^45, and PENALTY's 17-bit
tau sum gives |z term| <= 2^46, so the sum of the two terms always fits the 48-bit accumulator; an op that forms the
x term alone may go one higher, to 2^46: MASK over Adam's 32-bit v); 5 unknown opcode
(ADAM_V and ADAM_STEP too, on a unit built without Adam); 6 ADAM_STEP with eps_q < 1. Adam's own limits: ADAM_V
needs z_w <= 16 and ADAM_STEP x_w <= 17 (code 2; the unit's 18-bit squarer), ADAM_STEP's element shifts shift + h
must lie in -16..47 for every h its v can give (code 1; golden/semantics.py adam_h_range). Several: the lowest code.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np

from golden import fxp
from golden.arch import (
    ADDR_W,
    EW_ADAM_OPS,
    EW_ALIGN_W,
    EW_CONST_W,
    EW_CORE_OPS,
    EW_ERR_ALIGN,
    EW_ERR_COUNT,
    EW_ERR_EPS,
    EW_ERR_OPCODE,
    EW_ERR_SHIFT,
    EW_ERR_WIDTH,
    EW_MASK_N,
    EW_OP_W,
    EW_PORT_W,
    EW_RANK_W,
    EW_WIDEST,
    OUT_W_W,
    SHIFT_W,
    EwOpcode,
)
from golden.fxp import STOCHASTIC, Fmt
from golden.semantics import ADAM_DELTA_FMT, adam_h_range, rsqrt_parts

EW_ALIGN_MIN = -47  # a right shift by 47 leaves 0 or -1 of any product
EW_ALIGN_TOP = fxp.ACC_W - 17  # width + align <= 31: each term below 2^45 in magnitude
EW_ADAM_Z_W = 16  # ADAM_V: the widest g its squarer takes
EW_ADAM_X_W = 17  # ADAM_STEP: the widest m its multiplier by RSQRT takes
EW_RSQRT_W = 14  # RSQRT entries are below 2^14
EW_EPS_MAX = (1 << (EW_CONST_W - 1)) - 1  # ADAM_STEP's eps_q rides in beta
KNOWN_OPCODES = frozenset(EwOpcode)


@dataclass(frozen=True)
class EwiseDesc:
    opcode: int
    count: int  # elements
    x_base: int
    z_base: int
    y_base: int
    alpha: int  # 16-bit signed constants
    beta: int
    align_x: int  # alignment of alpha * x: left shift if >= 0, floor right shift by -align_x if < 0
    align_z: int
    shift: int  # RQ shift (SPEC 2.1)
    mode: int  # NEAREST 0 / STOCHASTIC 1 (one draw per element)
    x_w: int  # widths in bits: x and z for the accumulator bound, y the saturation range
    z_w: int
    y_w: int
    shape: tuple[int, int, int] = (1, 1, 1)  # MASK, PENALTY: the core as (r0, m*n, r1); other ops (1, count, 1)
    # MASK, PENALTY: the bonds' tables the unit reads (on its x port) before the elements: r0 words from tab_left
    # (MASK: live where the word is not 0; PENALTY: the taus, 16-bit signed) if tab_on bit 0, r1 words from
    # tab_right if bit 1; an absent side has every slice live and every tau 0.
    tab_left: int = 0
    tab_right: int = 0
    tab_on: int = 0
    banks: tuple[str, str, str] = ("", "", "")  # banks of x, z, y (for the sequencer; not a descriptor field)
    tab_banks: tuple[str, str] = ("", "")  # banks of the two tables (likewise)
    names: tuple[str, str, str] = field(default=("", "", ""), compare=False)  # tensors x, z, y, for messages
    tables: tuple[str, str] = field(default=("", ""), compare=False)  # the MASK or TAU tensors, "" = absent

    @property
    def table_words(self) -> int:
        """Words read before the elements (MASK, PENALTY): the present sides' ranks."""
        if self.opcode not in EW_CORE_OPS:
            return 0
        r0, _, r1 = self.shape
        return (r0 if self.tab_on & 1 else 0) + (r1 if self.tab_on & 2 else 0)

    @property
    def reads_x(self) -> bool:
        """The x term is formed (every known op but ZERO)."""
        return self.opcode in KNOWN_OPCODES and self.opcode != EwOpcode.ZERO

    @property
    def z_term(self) -> bool:
        """The z term is formed: beta * z (AXPBY), (tau_left[r_prev] + tau_right[r_next]) * z (PENALTY) or
        beta * z^2 (ADAM_V)."""
        return self.opcode in (EwOpcode.AXPBY, EwOpcode.AXPBY_RELU, EwOpcode.PENALTY, EwOpcode.ADAM_V)

    @property
    def reads_z(self) -> bool:
        return self.z_term or self.opcode in (EwOpcode.RELU_BWD, EwOpcode.ADAM_STEP)

    @property
    def accumulate(self) -> bool:
        return self.opcode == EwOpcode.ACC

    @property
    def reads_old(self) -> bool:
        """The destination's old word is read: ACC adds to it, ADAM_STEP subtracts from it."""
        return self.opcode in (EwOpcode.ACC, EwOpcode.ADAM_STEP)

    @property
    def term_widths(self) -> tuple[int, int]:
        """The widths the accumulator bound takes for the x and z terms' operands (0: no such term)."""
        x = self.x_w + EW_RSQRT_W if self.opcode == EwOpcode.ADAM_STEP else self.x_w
        z = 2 * self.z_w - 1 if self.opcode == EwOpcode.ADAM_V else self.z_w
        return (x if self.reads_x else 0), (z if self.z_term else 0)

    @property
    def draws(self) -> int:
        return self.count if self.mode == STOCHASTIC else 0


def ewise_fail(what: str, problem: str) -> NoReturn:
    raise ValueError(f"ewise descriptor for {what}: {problem}")


def _ew_what(desc: EwiseDesc) -> str:
    kind = EwOpcode(desc.opcode).name.lower() if desc.opcode in KNOWN_OPCODES else f"opcode {desc.opcode}"
    return f"{kind} {desc.names[2] or 'op'} <- {', '.join(n for n in desc.names[:2] if n) or '-'}"


def check_ewise(desc: EwiseDesc) -> EwiseDesc:
    """Every field within its width; raises ValueError naming the field that does not fit."""
    what = _ew_what(desc)

    def unsigned(name, v, bits, lo=0):
        if not lo <= v < 1 << bits:
            ewise_fail(what, f"{name} {v} outside {lo}..{(1 << bits) - 1} ({bits}-bit field)")

    def signed(name, v, bits):
        if not -(1 << (bits - 1)) <= v < 1 << (bits - 1):
            ewise_fail(what, f"{name} {v} outside the {bits}-bit two's complement field")

    unsigned("opcode", desc.opcode, EW_OP_W)
    unsigned("count", desc.count, ADDR_W, lo=1)
    for name, base, used in (
        ("x", desc.x_base, desc.reads_x),
        ("z", desc.z_base, desc.reads_z),
        ("y", desc.y_base, True),
    ):
        unsigned(f"{name}_base", base, ADDR_W)
        if used and base + desc.count - 1 >= 1 << ADDR_W:
            ewise_fail(
                what,
                f"operand {name} spans addresses {base}..{base + desc.count - 1}, beyond the "
                f"{ADDR_W}-bit address field",
            )
    signed("alpha", desc.alpha, EW_CONST_W)
    signed("beta", desc.beta, EW_CONST_W)
    signed("align_x", desc.align_x, EW_ALIGN_W)
    signed("align_z", desc.align_z, EW_ALIGN_W)
    signed("shift", desc.shift, SHIFT_W)
    unsigned("mode", desc.mode, 1)
    for name in ("x_w", "z_w", "y_w"):
        unsigned(name, getattr(desc, name), OUT_W_W)
    r0, mn, r1 = desc.shape
    unsigned("r0", r0, EW_RANK_W)
    unsigned("m*n", mn, ADDR_W)
    unsigned("r1", r1, EW_RANK_W)
    unsigned("tab_on", desc.tab_on, 2)
    for name, base, bit, n in (("tab_left", desc.tab_left, 1, r0), ("tab_right", desc.tab_right, 2, r1)):
        unsigned(name, base, ADDR_W)
        if desc.tab_on & bit and base + n - 1 >= 1 << ADDR_W:
            ewise_fail(what, f"{name} {base} + {n} words goes beyond the {ADDR_W}-bit address field")
    if desc.opcode not in EW_CORE_OPS and (desc.tab_on or desc.tab_left or desc.tab_right):
        ewise_fail(what, "tables given to an op that reads none")
    if desc.opcode in EW_CORE_OPS and r0 * mn * r1 != desc.count:
        ewise_fail(what, f"shape {desc.shape} has {r0 * mn * r1} elements, count is {desc.count}")
    return desc


def ewise_error(
    desc: EwiseDesc,
    x_w_max: int = EW_PORT_W,
    z_w_max: int = EW_PORT_W,
    out_w_max: int = EW_PORT_W,
    adam: bool = False,
    rank: bool = True,
) -> tuple[int, str]:
    """The RTL's start-time check: (error code, reason), (0, "") for a legal descriptor. The *_max are the RTL's
    port widths X_W, Z_W, OUT_W; `adam`: the unit was built with the Adam ops (its ADAM parameter); `rank`: with
    MASK and PENALTY (its RANK parameter)."""
    r0, mn, r1 = desc.shape
    op = desc.opcode
    known = (
        op in KNOWN_OPCODES and (adam or op not in EW_ADAM_OPS) and (rank or op not in EW_CORE_OPS)
    )  # an unknown opcode forms no term
    x_max = min(x_w_max, EW_ADAM_X_W) if op == EwOpcode.ADAM_STEP else x_w_max
    z_max = min(z_w_max, EW_ADAM_Z_W) if op == EwOpcode.ADAM_V else z_w_max
    wx, wz = desc.term_widths
    widths = [("x", desc.x_w, x_max)] if known and desc.reads_x else []
    widths += [("z", desc.z_w, z_max)] if known and (desc.z_term or op == EwOpcode.ADAM_STEP) else []
    terms = [("x", wx, desc.align_x)] if known and desc.reads_x else []
    terms += [("z", wz, desc.align_z)] if known and desc.z_term else []
    if not fxp.SHIFT_MIN <= desc.shift <= fxp.SHIFT_MAX:
        return EW_ERR_SHIFT, f"shift {desc.shift} outside {fxp.SHIFT_MIN}..{fxp.SHIFT_MAX}"
    if known and op == EwOpcode.ADAM_STEP:
        h_lo, h_hi = adam_h_range(desc.z_w, desc.align_z)
        if desc.shift + h_lo < fxp.SHIFT_MIN or desc.shift + h_hi > fxp.SHIFT_MAX:
            return EW_ERR_SHIFT, (
                f"adam step shift {desc.shift} + h in {h_lo}..{h_hi} (v: {desc.z_w} bits, "
                f"F_v {desc.align_z}) leaves {fxp.SHIFT_MIN}..{fxp.SHIFT_MAX}"
            )
    if not 2 <= desc.y_w <= out_w_max:
        return EW_ERR_WIDTH, f"y_w {desc.y_w} outside 2..{out_w_max}"
    for name, w, w_max in widths:
        if not 2 <= w <= w_max:
            return EW_ERR_WIDTH, f"{name}_w {w} outside 2..{w_max}"
    if desc.count == 0:
        return EW_ERR_COUNT, "count 0"
    if known and op in EW_CORE_OPS and not (1 <= r0 <= EW_MASK_N and 1 <= r1 <= EW_MASK_N and mn >= 1):
        return EW_ERR_COUNT, f"core shape {desc.shape}: ranks outside 1..{EW_MASK_N} or m*n = 0"
    top = EW_ALIGN_TOP + (len(terms) == 1)  # one term alone may take up to 2^46
    for name, w, e in terms:
        if e < EW_ALIGN_MIN or w + e > top:
            return EW_ERR_ALIGN, (
                f"align_{name} {e} with a {w}-bit {name} term: outside {EW_ALIGN_MIN}.."
                f"{top - w}, the {fxp.ACC_W}-bit accumulator could overflow"
            )
    if not known:
        why = (
            " (a unit built without Adam)"
            if op in EW_ADAM_OPS
            else " (a unit built without RANK)"
            if op in EW_CORE_OPS
            else ""
        )
        return EW_ERR_OPCODE, f"unknown opcode {op}{why}"
    if op == EwOpcode.ADAM_STEP and desc.beta < 1:
        return EW_ERR_EPS, f"adam step eps_q {desc.beta} below 1"
    return 0, ""


def ewise_tables(desc: EwiseDesc, mem_tab) -> tuple[list[int], list[int]]:
    """The (left, right) tables a MASK or PENALTY op reads from `mem_tab` (its x port's memory): per slice the word
    as a 16-bit signed value (a wider word's low 16 bits); an absent side gives EW_MASK_N ones (MASK: every slice
    live) or zeros (PENALTY: no tau)."""
    r0, _, r1 = desc.shape
    absent = 1 if desc.opcode == EwOpcode.MASK else 0
    out = []
    for base, bit, n in ((desc.tab_left, 1, r0), (desc.tab_right, 2, r1)):
        if desc.tab_on & bit:
            out.append([((int(mem_tab[base + r]) + (1 << 15)) & 0xFFFF) - (1 << 15) for r in range(n)])
        else:
            out.append([absent] * EW_MASK_N)
    return out[0], out[1]


def execute_ewise(desc: EwiseDesc, mem_x, mem_z, mem_y, rand=None, mem_tab=None) -> tuple[np.ndarray, int, int, int]:
    """Plain reference of one descriptor on flat memories (exact Python ints; sources all read before the first
    write). Returns (the y memory after the op, saturations, max |word written|, draws consumed). `rand`: one
    draw per element (STOCHASTIC only); `mem_tab`: the memory MASK and PENALTY read their tables from
    (ewise_tables; default mem_x: the unit reads them on its x port). A source not read may be None. Saturations
    count the RQ clamp and, for ACC, the clamp of the sum, so one element may count twice; ADAM_STEP counts only
    the clamp of old_y - delta. Legal means legal on the widest unit (32-bit ports, Adam built).
    """
    code, why = ewise_error(desc, EW_WIDEST, EW_WIDEST, EW_WIDEST, adam=True)
    if code:
        raise ValueError(f"ewise descriptor for {_ew_what(desc)}: error {code}: {why}")
    fmt = Fmt(desc.y_w, 0)
    n = desc.count
    if desc.mode == STOCHASTIC:
        rand = np.asarray(rand, dtype=np.int64)
        if rand.shape != (n,):
            raise ValueError(f"need {n} draws, got shape {rand.shape}")
    mem_y = np.array(mem_y, dtype=np.int64, copy=True)
    xs = [int(mem_x[desc.x_base + i]) if desc.reads_x else 0 for i in range(n)]
    zs = [int(mem_z[desc.z_base + i]) if desc.reads_z else 0 for i in range(n)]
    olds = [int(mem_y[desc.y_base + i]) for i in range(n)]
    _, mn, r1 = desc.shape
    left, right = ewise_tables(desc, mem_x if mem_tab is None else mem_tab) if desc.opcode in EW_CORE_OPS else ([], [])

    def beta(i: int) -> int:  # element i = (r_prev, m*n, r_next)
        if desc.opcode == EwOpcode.PENALTY:
            return left[i // (mn * r1)] + right[i % r1]
        return desc.beta

    def gate(i: int) -> bool:
        if desc.opcode == EwOpcode.RELU_BWD:
            return zs[i] > 0
        if desc.opcode == EwOpcode.MASK:  # element i = (r_prev, m*n, r_next)
            return left[i // (mn * r1)] != 0 and right[i % r1] != 0
        return desc.opcode != EwOpcode.ZERO

    n_sat = maxabs = 0
    for i in range(n):
        g = gate(i)
        t, shift = 0, desc.shift
        x = xs[i]
        if desc.opcode == EwOpcode.ADAM_STEP:  # x = m times 1/sqrt(v + eps), the shift per element
            rs, h = rsqrt_parts(np.array([max(zs[i], 0) + desc.beta]), desc.align_z)
            x, shift = x * int(rs[0]), shift + int(h[0])
        z = zs[i] * zs[i] if desc.opcode == EwOpcode.ADAM_V else zs[i]
        if g and desc.reads_x:
            t += int(fxp.align_round(np.array([desc.alpha * x]), 0, desc.align_x)[0])
        if g and desc.z_term:
            t += int(fxp.align_round(np.array([beta(i) * z]), 0, desc.align_z)[0])
        acc = np.array([t], dtype=np.int64)
        fxp.check_acc(acc, f"ewise -> {desc.names[2]}")
        v = fxp.round_shift(acc, shift, desc.mode, rand[i : i + 1] if desc.mode == STOCHASTIC else None)
        if desc.opcode == EwOpcode.ADAM_STEP:  # w - SAT_16(delta): the delta's clamp does not count
            v, k = fxp.saturate(olds[i] - fxp.saturate(v, ADAM_DELTA_FMT)[0], fmt)
        else:
            v, k = fxp.saturate(v, fmt)
        n_sat += k
        if desc.accumulate:
            v, k = fxp.saturate(v + olds[i], fmt)
            n_sat += k
        mem_y[desc.y_base + i] = max(int(v[0]), 0) if desc.opcode == EwOpcode.AXPBY_RELU else int(v[0])
        maxabs = max(maxabs, abs(int(v[0])))
    return mem_y, n_sat, maxabs, desc.draws


def pack_ewise_ports(desc: EwiseDesc) -> dict[str, int]:
    """The descriptor as the RTL's port values (rtl/tt_ewise.v)."""
    r0, mn, r1 = desc.shape

    def sgn(v, bits):
        return v & ((1 << bits) - 1)

    return {
        "opcode": desc.opcode,
        "count": desc.count,
        "x_base": desc.x_base,
        "z_base": desc.z_base,
        "y_base": desc.y_base,
        "alpha": sgn(desc.alpha, EW_CONST_W),
        "beta": sgn(desc.beta, EW_CONST_W),
        "align_x": sgn(desc.align_x, EW_ALIGN_W),
        "align_z": sgn(desc.align_z, EW_ALIGN_W),
        "shift": sgn(desc.shift, SHIFT_W),
        "mode": desc.mode,
        "x_w": desc.x_w,
        "z_w": desc.z_w,
        "y_w": desc.y_w,
        "r0": r0,
        "mn": mn,
        "r1": r1,
        "tab_left": desc.tab_left,
        "tab_right": desc.tab_right,
        "tab_on": desc.tab_on,
    }
