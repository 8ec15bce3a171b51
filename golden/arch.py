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
from enum import IntEnum, IntFlag

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

# --- the units' error codes (a unit's error_code; 0 is no error) ----------------------------------------------------
ERR_W = 4
CT_ERR_SHIFT, CT_ERR_OUT_W, CT_ERR_COUNT, CT_ERR_LANES = 1, 2, 3, 4  # rtl/tt_contract.v's descriptor check
UNIT_ERRORS = {  # the codes each unit's check cycle reports, for the Verilog header
    "CT": {"SHIFT": CT_ERR_SHIFT, "OUT_W": CT_ERR_OUT_W, "COUNT": CT_ERR_COUNT, "LANES": CT_ERR_LANES},
    "EW": {
        "SHIFT": EW_ERR_SHIFT,
        "WIDTH": EW_ERR_WIDTH,
        "COUNT": EW_ERR_COUNT,
        "ALIGN": EW_ERR_ALIGN,
        "OPCODE": EW_ERR_OPCODE,
        "EPS": EW_ERR_EPS,
    },
    "SCE": {"COUNT": SCE_ERR_COUNT, "LABEL": SCE_ERR_LABEL, "WIDTH": SCE_ERR_WIDTH, "FRAC": SCE_ERR_FRAC},
    "RANK": {"RANK": RANK_ERR_RANK, "COUNT": RANK_ERR_COUNT, "SHIFT": RANK_ERR_SHIFT},
}


class SeqError(IntEnum):
    """The sequencer's error codes (rtl/tt_seq.v; the ERROR register's code field)."""

    ILLEGAL = 1  # an illegal op record
    OVERRUN = 2  # the program runs off the program memory
    ADDR = 3  # an address outside every bank
    PORT = 4  # two reads of one bank's read port in a cycle
    UNIT = 5  # a unit refused the descriptor (the unit's own code beside it)
    BUSY = 6  # a start while busy


# --- the random stream (SPEC 3; rtl/tt_lfsr.v, rtl/tt_seq.v) -------------------------------------------------------
LFSR_MASK = 0x80200003  # x^32 + x^22 + x^2 + x + 1, Galois, right-shifting
LFSR_STEPS_PER_DRAW = 8
LFSR_SEED_XOR = 0xA5A5A5A5  # a seed's state is seed ^ LFSR_SEED_XOR (0 maps to 1)

# --- the host's register map (rtl/tt_accel.v, verif/host.py) -------------------------------------------------------
# The AXI4-Lite slave decodes word addresses (byte address / 4): bits [WIN_LSB +: WIN_W] choose a window, the bits
# below a word in it. Window WIN_REG holds REG_WORDS registers (its other words answer SLVERR), WIN_PROG the program
# memory, WIN_STAT the statistics slots (word 2 s: slot s's saturation count, 2 s + 1: its max |x|), and bank b's
# words are window WIN_BANK0 + b.
WIN_LSB, WIN_W = 18, 4
WIN_REG, WIN_PROG, WIN_STAT, WIN_BANK0 = 0, 1, 2, 4
REG_IDX_W = 8
REG_WORDS = 1 << REG_IDX_W
STAT_WORDS_PER_SLOT = 2
ACCEL_ID = 0x54544131  # the ID register: "TTA1"


class Reg(IntEnum):
    """Register word indices in window WIN_REG. A register of several words (REG_SPAN) holds a wide value low word
    first, or one word per bank (P_DEPTH, P_WIDTH, P_PORTS: banks 0..3; P_MOMENT: the moment bank's depth, width,
    read ports) or per unit (UNIT_CYCLES: a 64-bit counter per unit in record-kind order, the rank unit's at
    RANK_CYCLES). The P_ registers read the parameters the build was made with."""

    ID = 0x00
    CTRL = 0x01  # write: CTRL_ bits, each a one-cycle pulse
    STATUS = 0x02  # STATUS_ bits
    ERROR = 0x03  # code [3:0], the unit's code [7:4] (code UNIT), pc [31:16]
    START_PC = 0x04
    LABEL = 0x05
    SEED = 0x06
    LFSR = 0x07
    PRED = 0x08
    P_LABEL = 0x09
    CYCLES = 0x0A
    UNIT_CYCLES = 0x0C
    OPS = 0x12
    SAT_TOTAL = 0x13
    PC = 0x14
    STREAM_BASE = 0x15
    STREAM_WORDS = 0x16
    STREAM_FRAMES = 0x17
    RANK_CYCLES = 0x18
    P_BANK_SHIFT = 0x20
    P_PROG_DEPTH = 0x21
    P_DEPTH = 0x22
    P_WIDTH = 0x26
    P_PORTS = 0x2A
    P_SLOTS = 0x2E
    P_LANES = 0x2F
    P_BUF_DEPTH = 0x30
    P_ADAM = 0x31
    P_MOMENT = 0x32
    P_RANK = 0x35
    P_VEC = 0x36
    P_VEC_BANKS = 0x37
    P_DRAIN = 0x38
    P_ACC_W = 0x39
    P_PRELOAD = 0x3A


REG_SPAN = {  # words of the registers of more than one
    Reg.CYCLES: 2,
    Reg.UNIT_CYCLES: 6,
    Reg.RANK_CYCLES: 2,
    Reg.P_DEPTH: 4,
    Reg.P_WIDTH: 4,
    Reg.P_PORTS: 4,
    Reg.P_MOMENT: 3,
}
REG_WRITABLE = (Reg.CTRL, Reg.START_PC, Reg.LABEL, Reg.SEED, Reg.STREAM_BASE, Reg.STREAM_WORDS, Reg.STREAM_FRAMES)
ERROR_CODE_LSB, ERROR_UNIT_CODE_LSB, ERROR_PC_LSB = 0, 4, 16


class Ctrl(IntFlag):
    """CTRL's bits: each starts its action the cycle after the write."""

    START = 1
    CLEAR_ERROR = 2
    CLEAR_COUNTERS = 4
    SEED = 8  # load the LFSR from SEED


class Status(IntFlag):
    BUSY = 1
    DONE = 2
    ERROR = 4  # the sequencer's error (ERROR says which)
    STREAM_ERROR = 8  # a sample stream frame of the wrong length
    STREAM_PENDING = 16  # a complete frame waits to start its run


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


def _bit(flag: int) -> int:
    return flag.bit_length() - 1


def arch_header() -> str:
    """rtl/tt_arch.vh: the register map, the control and status bits, the opcodes, the error codes and the random
    stream's constants, generated from this module."""
    out = [
        "// Generated by `python -m golden.arch header` from golden/arch.py: do not edit.",
        "// The host's register map, opcodes, error codes and the random stream's constants.",
        "// Each including module uses only its part of this table, hence the lint waiver.",
        "/* verilator lint_off UNUSEDPARAM */",
        f"localparam [31:0] ACCEL_ID = 32'h{ACCEL_ID:08X};",
        f"localparam integer GADDR_W = {ADDR_W};  // a global element address (bank << bank_shift | word)",
        f"localparam integer WIN_LSB = {WIN_LSB};",
        f"localparam integer WIN_W = {WIN_W};",
    ]
    for name, value in (("REG", WIN_REG), ("PROG", WIN_PROG), ("STAT", WIN_STAT), ("BANK0", WIN_BANK0)):
        out.append(f"localparam [{WIN_W - 1}:0] WIN_{name} = {WIN_W}'d{value};")
    out.append(f"localparam integer REG_IDX_W = {REG_IDX_W};")
    out.append(f"localparam integer STAT_WORDS_PER_SLOT = {STAT_WORDS_PER_SLOT};")
    for reg in Reg:
        out.append(f"localparam [{REG_IDX_W - 1}:0] REG_{reg.name} = {REG_IDX_W}'h{reg.value:02X};")
    writable = sum(1 << r for r in REG_WRITABLE)
    out.append(f"localparam [{REG_WORDS - 1}:0] REG_WRITABLE = {REG_WORDS}'h{writable:X};  // by word index")
    out.append(f"localparam integer CTRL_W = {len(Ctrl)};")
    out += [f"localparam integer CTRL_{c.name}_BIT = {_bit(c)};" for c in Ctrl]
    out.append(f"localparam integer STATUS_W = {len(Status)};")
    out += [f"localparam integer STATUS_{st.name}_BIT = {_bit(st)};" for st in Status]
    for name, lsb in (("CODE", ERROR_CODE_LSB), ("UNIT_CODE", ERROR_UNIT_CODE_LSB), ("PC", ERROR_PC_LSB)):
        out.append(f"localparam integer ERROR_{name}_LSB = {lsb};")
    out.append(f"localparam integer ERR_W = {ERR_W};")
    out.append(f"localparam [{ERR_W - 1}:0] ERR_NONE = {ERR_W}'d0;")
    out += [f"localparam [{ERR_W - 1}:0] SEQ_ERR_{e.name} = {ERR_W}'d{e.value};" for e in SeqError]
    for unit, codes in UNIT_ERRORS.items():
        out += [f"localparam [{ERR_W - 1}:0] {unit}_ERR_{k} = {ERR_W}'d{v};" for k, v in codes.items()]
    out.append(f"localparam integer EW_OP_W = {EW_OP_W};")
    out += [f"localparam [{EW_OP_W - 1}:0] EW_OP_{op.name} = {EW_OP_W}'d{op.value};" for op in EwOpcode]
    out.append(f"localparam integer SCE_N_W = {SCE_N_W};")
    out.append(f"localparam [31:0] LFSR_MASK = 32'h{LFSR_MASK:08X};")
    out.append(f"localparam [31:0] LFSR_SEED_XOR = 32'h{LFSR_SEED_XOR:08X};")
    out.append(f"localparam integer LFSR_STEPS_PER_DRAW = {LFSR_STEPS_PER_DRAW};")
    out.append("/* verilator lint_on UNUSEDPARAM */")
    return "\n".join(out) + "\n"


HEADERS = {"tt_desc_fields.vh": verilog_header, "tt_arch.vh": arch_header}  # rtl/ file: its generator


if __name__ == "__main__":
    import sys
    from pathlib import Path

    if sys.argv[1:] != ["header"]:
        raise SystemExit("usage: python -m golden.arch header   (rewrites rtl/tt_desc_fields.vh and rtl/tt_arch.vh)")
    for name, generate in HEADERS.items():
        path = Path(__file__).resolve().parent.parent / "rtl" / name
        path.write_text(generate())
        print(f"wrote {path}")
