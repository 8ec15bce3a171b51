"""The softmax cross-entropy gradient unit's descriptor (rtl/tt_sce.v): its fields, their legality, the plain
reference of one descriptor and the RTL's port values.

One `SceDesc` per compiled `sce` op and sample (the label is the sample's): SPEC 5.4 for one sample, exactly
golden/semantics.py sce_gradient. Logits z at z_base + j (j < n_out; the first `classes` used), errors e at
e_base + j (0 for the padded j >= classes); the unit also returns pred, p[label] (the host's loss) and the
saturation count. No random draws.

Fields (golden/arch.py; ValueError from `check_sce` names the one that does not fit): bases ADDR_W = 20 bits unsigned
(the last element addressable); n_out, classes, label SCE_N_W = 8 bits unsigned; frac_z SHIFT_W = 7 bits two's
complement; err_w OUT_W_W = 6 bits; err_frac SCE_FRAC_W = 6 bits unsigned.
Legal descriptors (checked when the op starts; the RTL raises error_code, `execute_sce` a ValueError; see
`sce_error`): 1 n_out 0, classes 0 or classes > n_out; 2 label >= classes; 3 err_w outside 2..OUT_W; 4 frac_z
outside -32..47 (fxp.Fmt's fraction range: any format a configuration can give the logits) or err_frac above 31
(p <= 2^err_frac then fits the unit's 32-bit p_label, and the subtraction of 2^err_frac needs err_frac >= 0).
Several: the lowest code.

The unit reads z three times (max, sum, output) and writes e[j] after reading z[j] in the last pass, so e may be
z itself, below it or apart; golden/lowering.py `lower_sce` rejects e above z and overlapping it in the same bank.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NoReturn

import numpy as np

from golden.arch import (
    ADDR_W,
    OUT_W_W,
    SCE_ERR_COUNT,
    SCE_ERR_FRAC,
    SCE_ERR_LABEL,
    SCE_ERR_WIDTH,
    SCE_FRAC_W,
    SCE_N_W,
    SCE_PORT_W,
    SHIFT_W,
)
from golden.fxp import Fmt
from golden.semantics import sce_gradient

SCE_FRAC_Z_MIN, SCE_FRAC_Z_MAX = -32, 47  # legal frac_z
SCE_ERR_FRAC_MAX = 31  # legal err_frac 0..31


@dataclass(frozen=True)
class SceDesc:
    z_base: int
    e_base: int
    n_out: int  # outputs: logits read, errors written
    classes: int  # used classes, 1..n_out
    label: int  # 0..classes-1
    frac_z: int  # fraction bits of the logits
    err_w: int  # error format: width, fraction bits
    err_frac: int
    banks: tuple[str, str] = ("", "")  # banks of z, e (for the sequencer; not a descriptor field)
    names: tuple[str, str] = field(default=("", ""), compare=False)  # tensors z, e, for messages


def sce_fail(desc: SceDesc, problem: str) -> NoReturn:
    raise ValueError(f"sce descriptor for {desc.names[1] or 'op'} <- {desc.names[0] or '?'}: {problem}")


def check_sce(desc: SceDesc) -> SceDesc:
    """Every field within its width; raises ValueError naming the field that does not fit."""

    def unsigned(name, v, bits):
        if not 0 <= v < 1 << bits:
            sce_fail(desc, f"{name} {v} outside 0..{(1 << bits) - 1} ({bits}-bit field)")

    for name, base in (("z_base", desc.z_base), ("e_base", desc.e_base)):
        unsigned(name, base, ADDR_W)
        if base + desc.n_out - 1 >= 1 << ADDR_W:
            sce_fail(desc, f"{name} {base} + n_out {desc.n_out} goes beyond the {ADDR_W}-bit address field")
    for name in ("n_out", "classes", "label"):
        unsigned(name, getattr(desc, name), SCE_N_W)
    if not -(1 << (SHIFT_W - 1)) <= desc.frac_z < 1 << (SHIFT_W - 1):
        sce_fail(desc, f"frac_z {desc.frac_z} outside the {SHIFT_W}-bit two's complement field")
    unsigned("err_w", desc.err_w, OUT_W_W)
    unsigned("err_frac", desc.err_frac, SCE_FRAC_W)
    return desc


def sce_error(desc: SceDesc, out_w_max: int = SCE_PORT_W) -> tuple[int, str]:
    """The RTL's start-time check: (error code, reason), (0, "") for a legal descriptor. out_w_max is the RTL's
    error word width OUT_W."""
    if desc.n_out == 0 or desc.classes == 0 or desc.classes > desc.n_out:
        return SCE_ERR_COUNT, f"n_out {desc.n_out}, classes {desc.classes}: need 1 <= classes <= n_out"
    if desc.label >= desc.classes:
        return SCE_ERR_LABEL, f"label {desc.label} >= classes {desc.classes}"
    if not 2 <= desc.err_w <= out_w_max:
        return SCE_ERR_WIDTH, f"err_w {desc.err_w} outside 2..{out_w_max}"
    if not SCE_FRAC_Z_MIN <= desc.frac_z <= SCE_FRAC_Z_MAX:
        return SCE_ERR_FRAC, f"frac_z {desc.frac_z} outside {SCE_FRAC_Z_MIN}..{SCE_FRAC_Z_MAX}"
    if desc.err_frac > SCE_ERR_FRAC_MAX:
        return SCE_ERR_FRAC, f"err_frac {desc.err_frac} above {SCE_ERR_FRAC_MAX}"
    return 0, ""


def execute_sce(desc: SceDesc, mem_z, mem_e, out_w_max: int = SCE_PORT_W) -> tuple[np.ndarray, int, int, int]:
    """Plain reference of one descriptor on flat memories: golden/semantics.py sce_gradient on the sample's logits
    (all read before the first write). Returns (the e memory after the op, saturations, p[label], pred)."""
    code, why = sce_error(desc, out_w_max)
    if code:
        raise ValueError(f"sce descriptor for {desc.names[1] or 'op'}: error {code}: {why}")
    z = np.array([int(v) for v in mem_z[desc.z_base : desc.z_base + desc.n_out]], dtype=np.int64)
    err, n_sat, p, pred = sce_gradient(
        z[None, :], desc.frac_z, np.array([desc.label]), desc.classes, Fmt(desc.err_w, desc.err_frac)
    )
    mem_e = np.array(mem_e, dtype=np.int64, copy=True)
    mem_e[desc.e_base : desc.e_base + desc.n_out] = err[0]
    return mem_e, int(n_sat), int(p[0, desc.label]), int(pred[0])


def pack_sce_ports(desc: SceDesc) -> dict[str, int]:
    """The descriptor as the RTL's port values (rtl/tt_sce.v)."""
    return {
        "z_base": desc.z_base,
        "e_base": desc.e_base,
        "n_out": desc.n_out,
        "classes": desc.classes,
        "label": desc.label,
        "frac_z": desc.frac_z & ((1 << SHIFT_W) - 1),
        "err_w": desc.err_w,
        "err_frac": desc.err_frac,
    }
