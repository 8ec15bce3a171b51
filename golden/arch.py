"""The hardware/software contract: every fact that both the RTL and the Python side use.

Field widths and layouts of the units' descriptors, the element-wise opcodes, the units' error codes, the banks, and
the program memory's record format. Nothing here computes; the layers above (golden/SPEC.md's arithmetic in
golden/semantics.py, the units in golden/isa/, the assembler in golden/program.py) take their constants from here.

Program records (rtl/tt_seq.v). A program is a sequence of op records in the 32-bit program memory. A record is a
header word followed by `nwords` payload words; the payload is the unit's descriptor packed LSB first (field i at
the bits after field i-1, word 0 holding bits 0..31). Header bits:
    [3:0]   kind    0 END (the program is finished), 1 CONTRACT (rtl/tt_contract.v), 2 EWISE (rtl/tt_ewise.v),
                    3 SCE (rtl/tt_sce.v), 4 RANK (rtl/tt_rank.v, built for networks with rank adaptation);
                    anything else is an illegal op
    [9:4]   slot    statistics slot of the destination tensor (saturation counter, max |x| register)
    [10]    observe the op's max |word written| updates the slot's max register (SPEC 4.2: per-sample writes
                    of adaptive tensors in train_sample only, as golden/machine.py does)
    [23:16] nwords  payload words that follow: the unit's payload length; an element-wise record other than
                    MASK and PENALTY stops before the tables' addresses (EW_SHORT_WORDS), a contraction that preloads no
                    next op before the preload's fields (CT_SHORT_WORDS); the missing fields read as 0
Addresses in descriptors are global element addresses: bank b's word i is (b << bank_shift) + i, so the units
address every bank through one 20-bit field and the top decodes the bank from the high bits.

The field lists below are the single source of the bit positions: rtl/tt_desc_fields.vh is generated from them
(`python -m golden.arch header`), and a test checks that the committed header is current.
"""

from __future__ import annotations

import math
from enum import IntEnum

# --- contraction unit (rtl/tt_contract.v, golden/isa/contract.py) ------------------------------------------------
MAX_OUT = 6  # output loops of a descriptor
MAX_RED = 4  # reduction loops
NLOOPS = MAX_OUT + MAX_RED
CNT_W = 16  # loop count field, unsigned
ADDR_W = 20  # base address and stride fields, unsigned element addresses
SHIFT_W = 7  # shift field, two's complement
OUT_W_W = 6  # output width field (2..32)
LANE_W = 8  # lanes field, unsigned (1..255)
BUF_W = 12  # buffer stride field, unsigned
IDLE_W = 4  # idle rows field, unsigned (below the rows loop's count R <= 16)
MAX_VEC = 16  # rtl/tt_banks.v: the widest vector load (words of a bank row)


# --- element-wise unit (rtl/tt_ewise.v, golden/isa/ewise.py) ------------------------------------------------------
class EwOpcode(IntEnum):
    """The element-wise unit's opcodes; each name is that of the op kind it runs (golden/ir.py OpKind)."""

    AXPBY = 0
    ACC = 1
    AXPBY_RELU = 2
    RELU_BWD = 3
    DERIVE = 4
    ZERO = 5
    MASK = 6
    PENALTY = 7
    ADAM_V = 8
    ADAM_STEP = 9


EW_CORE_OPS = (EwOpcode.MASK, EwOpcode.PENALTY)  # over a core (r0, m*n, r1) by rank slice; built with RANK
EW_ADAM_OPS = (EwOpcode.ADAM_V, EwOpcode.ADAM_STEP)  # built only with the unit's ADAM parameter
EW_OP_W = 4  # opcode field
EW_CONST_W = 16  # alpha, beta: signed
EW_ALIGN_W = 7  # align_x, align_z: signed
EW_RANK_W = 5  # r0, r1
EW_MASK_N = 16  # table entries (masks or taus) per side, the largest rank (rtl/tt_ewise.v MASK_N)
EW_PORT_W = 16  # data width of the RTL's read and write ports (X_W, Z_W, OUT_W)
EW_WIDEST = 32  # the widest ports the unit can be built with
EW_ERR_SHIFT, EW_ERR_WIDTH, EW_ERR_COUNT, EW_ERR_ALIGN, EW_ERR_OPCODE, EW_ERR_EPS = 1, 2, 3, 4, 5, 6

# --- softmax cross-entropy gradient unit (rtl/tt_sce.v, golden/isa/sce.py) ----------------------------------------
SCE_N_W = 8  # n_out, classes, label (rtl/tt_sce.v N_W)
SCE_FRAC_W = 6  # err_frac field
SCE_PORT_W = 16  # the RTL's default error word width OUT_W
SCE_ERR_COUNT, SCE_ERR_LABEL, SCE_ERR_WIDTH, SCE_ERR_FRAC = 1, 2, 3, 4

# --- rank-update unit (rtl/tt_rank.v, golden/isa/rank.py) ---------------------------------------------------------
RANK_W = 5  # the bond's rank
RANK_INV_W = 24  # inv_d
RANK_Q_SHIFT_W = 6  # q_shift
RANK_THR_W = 32  # threshold
RANK_NUM_W = 48  # tau_num
RANK_ERR_RANK, RANK_ERR_COUNT, RANK_ERR_SHIFT = 1, 2, 3

# --- banks (rtl/tt_banks.v) ----------------------------------------------------------------------------------------
# Bank index = position: the RTL's bank order. The moment bank (Adam's 32-bit second moments) is built only for a
# network that trains with Adam (golden/program.py AccelParams.banks).
BANKS = ("act", "core", "master", "state", "moment")
# Read ports per bank (copies in rtl/tt_bank.v): two where one op reads two operands from the bank in a cycle
# (two activations, a gradient and its momentum, or a bias's first moment and the bias in its Adam step); the
# cores, master copies and second moments are read once per op.
BANK_READ_PORTS = (2, 1, 1, 2, 1)


def banks_built(adam: bool) -> tuple[str, ...]:
    """The banks of a build: the moment bank only with the Adam ops."""
    return BANKS if adam else BANKS[:-1]


# --- program records (rtl/tt_seq.v; module docstring) --------------------------------------------------------------
KIND_END, KIND_CONTRACT, KIND_EWISE, KIND_SCE, KIND_RANK = 0, 1, 2, 3, 4
KIND_W, SLOT_W, NWORDS_W = 4, 6, 8
SLOT_LSB, OBSERVE_BIT, NWORDS_LSB = 4, 10, 16
N_SLOTS = 1 << SLOT_W
WORD = 32
UNIT_OF_KIND = {KIND_CONTRACT: "contract", KIND_EWISE: "ewise", KIND_SCE: "sce", KIND_RANK: "rank"}  # the counters

CONTRACT_FIELDS = (
    ("a_base", ADDR_W),
    ("b_base", ADDR_W),
    ("o_base", ADDR_W),
    ("counts", NLOOPS * CNT_W),
    ("stride_a", NLOOPS * ADDR_W),
    ("stride_b", NLOOPS * ADDR_W),
    ("stride_o", NLOOPS * ADDR_W),
    ("shift", SHIFT_W),
    ("mode", 1),
    ("accumulate", 1),
    ("out_w", OUT_W_W),
    ("lanes", LANE_W),
    ("stride_buf", NLOOPS * BUF_W),
    ("preloaded", 1),
    ("vec_load", 1),
    ("vec_store", 1),
    ("pre_vec_load", 1),
    ("lane_sum", 1),
    ("pre_lane_sum", 1),
    ("rows", 1),
    ("idle_rows", IDLE_W),
    ("pre_rows", 1),
    # the next op's load walk (golden/isa/contract.py, preload): a record without a preload stops before these
    ("pre_lanes", LANE_W),
    ("pre_b_base", ADDR_W),
    ("pre_counts", NLOOPS * CNT_W),
    ("pre_stride_b", NLOOPS * ADDR_W),
    ("pre_stride_buf", NLOOPS * BUF_W),
)
CONTRACT_SHORT_FIELDS = CONTRACT_FIELDS[: CONTRACT_FIELDS.index(("pre_rows", 1)) + 1]
EWISE_FIELDS = (
    ("opcode", EW_OP_W),
    ("count", ADDR_W),
    ("x_base", ADDR_W),
    ("z_base", ADDR_W),
    ("y_base", ADDR_W),
    ("alpha", EW_CONST_W),
    ("beta", EW_CONST_W),
    ("align_x", EW_ALIGN_W),
    ("align_z", EW_ALIGN_W),
    ("shift", SHIFT_W),
    ("mode", 1),
    ("x_w", OUT_W_W),
    ("z_w", OUT_W_W),
    ("y_w", OUT_W_W),
    ("r0", EW_RANK_W),
    ("mn", ADDR_W),
    ("r1", EW_RANK_W),
    ("tab_left", ADDR_W),
    ("tab_right", ADDR_W),
    ("tab_on", 2),
)
EWISE_SHORT_FIELDS = EWISE_FIELDS[:-3]  # without the tables' addresses: every element-wise op but MASK and PENALTY
SCE_FIELDS = (  # the label is not a field: the host writes it to the LABEL register before each sample
    ("z_base", ADDR_W),
    ("e_base", ADDR_W),
    ("n_out", SCE_N_W),
    ("classes", SCE_N_W),
    ("frac_z", SHIFT_W),
    ("err_w", OUT_W_W),
    ("err_frac", SCE_FRAC_W),
)
RANK_FIELDS = (
    ("left_base", ADDR_W),
    ("right_base", ADDR_W),
    ("lam_base", ADDR_W),
    ("mask_base", ADDR_W),
    ("tau_base", ADDR_W),
    ("rank", RANK_W),
    ("left_rows", CNT_W),
    ("right_cols", CNT_W),
    ("inv_d", RANK_INV_W),
    ("q_shift", RANK_Q_SHIFT_W),
    ("threshold", RANK_THR_W),
    ("tau_num", RANK_NUM_W),
)
UNIT_FIELDS = {"CT": CONTRACT_FIELDS, "EW": EWISE_FIELDS, "SCE": SCE_FIELDS, "RK": RANK_FIELDS}
SHORT_FIELDS = {
    "CT": CONTRACT_SHORT_FIELDS,
    "EW": EWISE_SHORT_FIELDS,
}  # units whose records may also carry only a leading part of the fields


def field_bits(fields) -> int:
    return sum(w for _, w in fields)


def payload_words(fields) -> int:
    return math.ceil(field_bits(fields) / WORD)


def verilog_header() -> str:
    """rtl/tt_desc_fields.vh: the descriptor bit positions and header layout, generated from this module."""
    out = [
        "// Generated by `python -m golden.arch header` from golden/arch.py: do not edit.",
        "// Descriptor fields in the payload bits of a program record (LSB first), and the header layout.",
        "// Each including module uses only its part of this table, hence the lint waiver.",
        "/* verilator lint_off UNUSEDPARAM */",
        f"localparam integer HDR_KIND_W = {KIND_W};",
        f"localparam integer HDR_SLOT_LSB = {SLOT_LSB};",
        f"localparam integer HDR_SLOT_W = {SLOT_W};",
        f"localparam integer HDR_OBSERVE_BIT = {OBSERVE_BIT};",
        f"localparam integer HDR_NWORDS_LSB = {NWORDS_LSB};",
        f"localparam integer HDR_NWORDS_W = {NWORDS_W};",
        f"localparam [{KIND_W - 1}:0] KIND_END = {KIND_W}'d{KIND_END};",
        f"localparam [{KIND_W - 1}:0] KIND_CONTRACT = {KIND_W}'d{KIND_CONTRACT};",
        f"localparam [{KIND_W - 1}:0] KIND_EWISE = {KIND_W}'d{KIND_EWISE};",
        f"localparam [{KIND_W - 1}:0] KIND_SCE = {KIND_W}'d{KIND_SCE};",
        f"localparam [{KIND_W - 1}:0] KIND_RANK = {KIND_W}'d{KIND_RANK};",
    ]
    longest = 0
    for unit, fields in UNIT_FIELDS.items():
        pos = 0
        for name, width in fields:
            key = f"{unit}_{name.upper()}"
            out.append(f"localparam integer {key}_LSB = {pos};")
            out.append(f"localparam integer {key}_W = {width};")
            pos += width
        out.append(f"localparam integer {unit}_WORDS = {payload_words(fields)};")
        if unit in SHORT_FIELDS:
            out.append(f"localparam integer {unit}_SHORT_WORDS = {payload_words(SHORT_FIELDS[unit])};")
        longest = max(longest, payload_words(fields))
    out.append(f"localparam integer DESC_WORDS = {longest};  // the longest payload")
    out.append("/* verilator lint_on UNUSEDPARAM */")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    import sys
    from pathlib import Path

    if sys.argv[1:] != ["header"]:
        raise SystemExit("usage: python -m golden.arch header   (rewrites rtl/tt_desc_fields.vh)")
    path = Path(__file__).resolve().parent.parent / "rtl" / "tt_desc_fields.vh"
    path.write_text(verilog_header())
    print(f"wrote {path}")
