"""The programs' intermediate representation: tensors, ops and a compiled network.

golden/compiler.py produces it; the executors (golden/machine.py, golden/scalar_machine.py) run it, and the back end
(golden/lowering.py, golden/program.py) turns its ops into the units' descriptors. A program never holds a shift:
every op derives it from the current formats of its tensors (SPEC 4.2), so shift control needs no rewrite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

from golden.arch import KIND_CONTRACT, KIND_EWISE, KIND_RANK, KIND_SCE, EwOpcode
from golden.config import NetConfig
from golden.fxp import STOCHASTIC, Fmt

# Memory banks: what a tensor is stored in. Sample-local tensors live in ACT and are rewritten per sample.
BANK_CORE, BANK_MASTER, BANK_STATE, BANK_ACT = "core", "master", "state", "act"
BANK_MOMENT = "moment"  # Adam's 32-bit second moments: a bank of their own, so the state bank stays 16 bits


@dataclass
class Tensor:
    name: str
    shape: tuple[int, ...]
    bank: str
    fmt: Fmt  # initial format; adaptive tensors change F during training
    adaptive: bool = False
    indices: str = ""  # einsum letters of the dimensions (contraction operands)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def per_sample(self) -> bool:
        return self.bank == BANK_ACT


class OpKind(StrEnum):
    """What an op computes (golden/SPEC.md section 5). A value is the name programs, reports and messages print;
    the element-wise unit runs the kinds it has an opcode of the same name for (golden/arch.py EwOpcode)."""

    CONTRACT = "contract"  # SPEC 5.1
    ACC = "acc"  # a gradient buffer += a per-sample tensor (the bias gradient)
    AXPBY = "axpby"  # SPEC 5.2
    AXPBY_RELU = "axpby_relu"  # SPEC 5.3
    RELU_BWD = "relu_bwd"
    SCE = "sce"  # SPEC 5.4
    DERIVE = "derive"  # a compute core from its master copy (SPEC 5.5)
    ZERO = "zero"
    MASK = "mask"  # SPEC 5.6: the pruned rank slices of a tensor zeroed
    PENALTY = "penalty"  # SPEC 5.6: the rank prior's gradient
    RANK = "rank"  # SPEC 5.6: lambda, mask and tau of one bond
    ADAM_V = "adam_v"  # SPEC 5.5
    ADAM_STEP = "adam_step"

    @property
    def ewise_opcode(self) -> EwOpcode | None:
        """The element-wise unit's opcode of this kind; None for the kinds the other units run."""
        return EwOpcode.__members__.get(self.name)

    @property
    def record_kind(self) -> int:
        """The kind of the program record that runs an op of this kind: the unit (golden/arch.py KIND_*)."""
        return KIND_EWISE if self.ewise_opcode is not None else _RECORD_KIND[self]

    @property
    def draws(self) -> bool:
        """Does a STOCHASTIC op of this kind take one draw per element it writes (SPEC 2.2)? Those that requantise
        their result in the op's rounding mode; the others are exact or always round to nearest (DERIVE)."""
        return self in _DRAWING


EWISE_KINDS = tuple(OpKind[o.name] for o in EwOpcode)  # the kinds the element-wise unit runs, in opcode order
_RECORD_KIND = {OpKind.CONTRACT: KIND_CONTRACT, OpKind.SCE: KIND_SCE, OpKind.RANK: KIND_RANK}  # the other units'
_DRAWING = frozenset(
    {
        OpKind.CONTRACT,
        OpKind.ACC,
        OpKind.AXPBY,
        OpKind.AXPBY_RELU,
        OpKind.PENALTY,
        OpKind.ADAM_V,
        OpKind.ADAM_STEP,
    }
)


@dataclass
class Op:
    kind: OpKind  # a kind's name (str) is taken too
    out: str
    ins: tuple[str, ...] = ()
    spec: str = ""  # einsum of a contract op
    mode: int = STOCHASTIC
    accumulate: bool = False  # contract: out <- SAT(out + RQ(result))
    alpha: tuple[int, int] = (1, 0)  # axpby constants as (integer, fraction bits), golden/semantics.py quant_const
    beta: tuple[int, int] = (1, 0)
    macs: int = 0
    note: str = ""
    host_step: bool = (
        False  # axpby: beta, adam_step: alpha is the step-size register the host writes before each update
    )
    # contract: the output indices in the order its elements are computed and draw (SPEC 5.1); "": the spec's
    order: str = ""

    def __post_init__(self) -> None:
        self.kind = OpKind(self.kind)

    def element_order(self) -> str:
        """A contract op's output indices, outer to inner, in the order its elements are computed and draw."""
        return self.order or self.spec.split("->")[1]


@dataclass
class Compiled:
    cfg: NetConfig
    tensors: dict[str, Tensor]
    train_sample: list[Op]
    update: list[Op]
    infer: list[Op]
    rank_update: list[Op]
    rank_prune: list[Op]  # after rank_update: the update's MASK ops and the DERIVE ops of the cores they zero
    letter_sizes: dict[str, int]
    layout: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> (bank, base address)
    bank_words: dict[str, int] = field(default_factory=dict)

    def macs(self, program: str) -> int:
        return sum(op.macs for op in getattr(self, program))


def contraction_bits(comp: Compiled, op: Op) -> tuple[int, int, int, int]:
    """(bits, k, wa, wb) of a contraction: it sums k products of wa- and wb-bit signed words, whose worst case
    (magnitude below k 2^(wa-1) 2^(wb-1)) a signed accumulator of `bits` bits holds without wrapping."""
    lhs, out = op.spec.split("->")
    k = math.prod(comp.letter_sizes[c] for c in set(lhs.replace(",", "")) - set(out))
    wa, wb = (comp.tensors[n].fmt.width for n in op.ins)
    return (k << (wa - 1 + wb - 1)).bit_length() + 1, k, wa, wb


def accumulator_bits(comp: Compiled) -> int:
    """The narrowest accumulator that every contraction of the network fits (SPEC 1.2): a build of the contraction
    engine that wide gives the same sums as the spec's ACC_W-bit one."""
    return max((contraction_bits(comp, op)[0] for op in comp.train_sample if op.kind == OpKind.CONTRACT), default=2)
