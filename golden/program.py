"""The back end's assembler: compiled programs -> unit descriptors -> the program memory image (rtl/tt_seq.v),
the build parameters a network needs (`params_for`), and the sequencer's cycles per record.

The record format, the descriptors' field layouts and the banks are golden/arch.py's. A CONTRACT descriptor is in
the lane form (golden/isa/contract.py) where golden/isa/lanes.py `with_lanes` chooses it for the accelerator's MAC
lanes and lane buffer depth (AccelParams lanes, buf_depth), else in the direct form.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from golden import fxp
from golden.arch import (
    ADDR_W,
    BANK_READ_PORTS,
    BANKS,
    BUF_W,
    CONTRACT_FIELDS,
    CONTRACT_SHORT_FIELDS,
    EW_CORE_OPS,
    EW_PORT_W,
    EWISE_FIELDS,
    EWISE_SHORT_FIELDS,
    KIND_CONTRACT,
    KIND_END,
    KIND_EWISE,
    KIND_SCE,
    LANE_W,
    MAX_VEC,
    N_SLOTS,
    NWORDS_LSB,
    NWORDS_W,
    OBSERVE_BIT,
    RANK_FIELDS,
    SCE_FIELDS,
    SLOT_LSB,
    UNIT_OF_KIND,
    WORD,
    banks_built,
    payload_words,
)
from golden.ir import Compiled, Op, OpKind, accumulator_bits
from golden.isa.contract import ContractDesc, check_desc, pack_ports
from golden.isa.ewise import check_ewise, ewise_error, pack_ewise_ports
from golden.isa.lanes import with_lanes
from golden.isa.rank import check_rank, pack_rank_ports
from golden.isa.sce import pack_sce_ports
from golden.isa.timing import MEM_LAT, SEQ_OP_CYCLES, contract_cycles, head_start, record_wait, unit_cycles
from golden.lowering import lower_contract, lower_ewise, lower_rank, lower_sce


class ProgramError(ValueError):
    """A network or program that the accelerator (with the given parameters) cannot hold or execute."""


def pack_fields(fields, values: dict[str, int]) -> list[int]:
    """Pack `values` (unsigned port values, e.g. golden/isa/contract.py pack_ports) LSB first into 32-bit words."""
    bits, pos = 0, 0
    for name, width in fields:
        v = values[name]
        if not 0 <= v < 1 << width:
            raise ProgramError(f"field {name} = {v} does not fit {width} bits")
        bits |= v << pos
        pos += width
    return [(bits >> (WORD * i)) & 0xFFFFFFFF for i in range(payload_words(fields))]


def unpack_fields(fields, bits: int) -> dict[str, int]:
    """The inverse of pack_fields on the payload as one integer (word 0 in the low bits)."""
    out, pos = {}, 0
    for name, width in fields:
        out[name] = bits >> pos & ((1 << width) - 1)
        pos += width
    return out


def header(kind: int, slot: int = 0, observe: bool = False, nwords: int = 0) -> int:
    return kind | slot << SLOT_LSB | int(observe) << OBSERVE_BIT | nwords << NWORDS_LSB


def header_nwords(word: int) -> int:
    """The payload length of a record from its header word."""
    return word >> NWORDS_LSB & ((1 << NWORDS_W) - 1)


# rank_update and rank_prune (SPEC 5.6) are empty (an END only) for a network without rank adaptation
PROGRAMS = ("train_sample", "update", "infer", "rank_update", "rank_prune")


@dataclass(frozen=True)
class AccelParams:
    """The RTL parameters that bound a program (rtl/tt_accel.v): bank sizes and widths, program memory, and the
    contraction engine's MAC lanes (LANES), words per lane buffer (BUF_DEPTH), vector loads (VEC words a beat
    from the banks with rows of VEC words, bank_vec) and its drain (DRAIN elements a cycle into those banks), which
    decide the lane forms."""

    bank_shift: int  # bank b's words sit at global addresses (b << bank_shift) + i
    bank_depth: tuple[int, ...]  # words per bank, in the order of `banks`
    bank_width: tuple[int, ...]  # bits per word
    prog_depth: int  # 32-bit program words
    lanes: int = 1
    buf_depth: int = 0  # unused with one lane
    adam: bool = False  # the element-wise unit has the Adam ops (tt_ewise ADAM)
    rank: bool = False  # the rank-update unit is built (tt_accel RANK)
    vec: int = 1  # words a vector load reads (1: none)
    bank_vec: tuple[bool, ...] = ()  # with vec > 1, per bank: built in rows of vec words (vector loads, wide drains)
    drain: int = 1  # elements the contraction engine's drain writes a cycle (1: one; a power of two up to vec)
    acc_w: int = fxp.ACC_W  # the contraction engine's accumulator bits (the network's bound suffices: SPEC 1.2)
    lane_sum: bool = True  # with vec > 1: lane sums may be planned (the engine has them wherever it loads vectors)
    rows: bool = True  # with vec > 1: rows of lanes may be planned (likewise)
    # two sets of lane buffer words (tt_contract PRELOAD): a contraction may load the next one's b during its own
    # compute; one set halves the buffers' memory, and the assembler links no preloads
    preload: bool = True

    @property
    def banks(self) -> tuple[str, ...]:
        return banks_built(self.adam)

    @property
    def vec_banks(self) -> frozenset[str]:
        """The banks built in rows: a vector load may read them, a wide drain write them."""
        return frozenset(b for b, v in zip(self.banks, self.bank_vec) if v) if self.vec > 1 else frozenset()

    @property
    def read_ports(self) -> tuple[int, ...]:
        """Read ports per bank built (BANK_READ_PORTS)."""
        return BANK_READ_PORTS[: len(self.banks)]

    @property
    def ewise_ports(self) -> tuple[int, int, int]:
        """The element-wise unit's X_W, Z_W and OUT_W: the widest bank, at least 16 bits (rtl/tt_accel.v DATA_W)."""
        return (max(*self.bank_width, EW_PORT_W),) * 3

    def check(self) -> None:
        if len(self.bank_depth) != len(self.banks) or len(self.bank_width) != len(self.banks):
            raise ProgramError(f"need a depth and a width for each of the banks {self.banks}")
        if (len(self.banks) - 1) << self.bank_shift >= 1 << ADDR_W:
            raise ProgramError(f"bank_shift {self.bank_shift}: the banks do not fit the {ADDR_W}-bit address")
        for name, d in zip(self.banks, self.bank_depth):
            if not 1 <= d <= 1 << self.bank_shift:
                raise ProgramError(f"bank {name}: depth {d} outside 1..{1 << self.bank_shift} (bank_shift)")
        if not 1 <= self.lanes < 1 << LANE_W:
            raise ProgramError(f"lanes {self.lanes} outside 1..{(1 << LANE_W) - 1} ({LANE_W}-bit lanes field)")
        if self.lanes > 1 and not 1 <= self.buf_depth <= 1 << BUF_W:
            raise ProgramError(
                f"buf_depth {self.buf_depth} outside 1..{1 << BUF_W} with {self.lanes} lanes "
                f"(buffer addresses from {BUF_W}-bit strides)"
            )
        if self.vec < 1 or self.vec & (self.vec - 1) or self.vec > max(self.lanes, 1) or self.vec > MAX_VEC:
            raise ProgramError(
                f"vec {self.vec}: must be a power of two, at most the lanes ({self.lanes}) and {MAX_VEC}"
            )
        if self.drain < 1 or self.drain & (self.drain - 1) or (self.drain > 1 and self.drain > self.vec):
            raise ProgramError(
                f"drain {self.drain}: must be a power of two and at most vec ({self.vec}): a wide "
                f"drain writes part of a bank row"
            )
        if self.vec > 1 and len(self.bank_vec) != len(self.banks):
            raise ProgramError(f"need a bank_vec flag for each of the banks {self.banks}")


def params_for(
    comp: Compiled,
    prog_depth: int = 2048,
    lanes: int = 1,
    buf_depth: int = 0,
    vec: int = 1,
    drain: int = 1,
    preload: bool = True,
) -> AccelParams:
    """The smallest bank parameters that hold `comp` (power-of-two bank windows), the given program memory and
    contraction lanes, the Adam ops where the network trains with Adam, the rank unit where it adapts ranks. With
    vec > 1 the banks in rows of vec words are those a vector load of the programs reads or a wide drain (`drain`
    elements a cycle) writes (every bank may; the others stay plain: rows cost block RAMs where a bank's depth per
    row is not a block RAM's)."""
    adam = comp.cfg.train.optimizer == "adam"
    banks = banks_built(adam)
    depth = tuple(max(comp.bank_words.get(b, 0), 1) for b in banks)
    width = tuple(max([t.fmt.width for t in comp.tensors.values() if t.bank == b], default=16) for b in banks)
    p = AccelParams(
        bank_shift=max(d - 1 for d in depth).bit_length(),
        bank_depth=depth,
        bank_width=width,
        prog_depth=prog_depth,
        lanes=lanes,
        buf_depth=buf_depth,
        adam=adam,
        rank=comp.cfg.train.rank.enabled,
        vec=vec,
        bank_vec=(True,) * len(banks) if vec > 1 else (),
        drain=drain,
        acc_w=accumulator_bits(comp),
        preload=preload,
    )
    if vec > 1:
        frac = {n: t.fmt.frac for n, t in comp.tensors.items()}  # the forms do not depend on the formats
        descs = [
            contract_desc(comp, p, op, frac)
            for prog in PROGRAMS
            for op in getattr(comp, prog)
            if op.kind == OpKind.CONTRACT
        ]
        used = (
            {d.banks[1] for d in descs if d.vec > 1}
            | {d.banks[2] for d in descs if d.drain > 1}
            | {d.banks[0] for d in descs if d.lane_sum or d.rows}
        )
        p = replace(p, bank_vec=tuple(b in used for b in banks))
    return p


def check_fits(comp: Compiled, p: AccelParams) -> None:
    """Raise ProgramError naming every bank that the network does not fit and by how much."""
    p.check()
    problems = []
    for b in comp.bank_words:
        if b not in p.banks:
            problems.append(
                f"tensors in bank {b!r}, which the accelerator does not have"
                + (" (built without Adam)" if b in BANKS else "")
            )
    for i, b in enumerate(p.banks):
        need = comp.bank_words.get(b, 0)
        if need > p.bank_depth[i]:
            problems.append(f"bank {b} needs {need} words, has {p.bank_depth[i]} ({need - p.bank_depth[i]} short)")
        widths = {t.fmt.width for t in comp.tensors.values() if t.bank == b}
        if widths and max(widths) > p.bank_width[i]:
            problems.append(f"bank {b} holds {max(widths)}-bit words, is {p.bank_width[i]} bits wide")
    need = accumulator_bits(comp)
    if need > p.acc_w:
        problems.append(f"its contractions need a {need}-bit accumulator, the contraction engine's is {p.acc_w} bits")
    if problems:
        raise ProgramError("the network does not fit the accelerator: " + "; ".join(problems))


def slot_map(comp: Compiled) -> dict[str, int]:
    """Statistics slot of every tensor an op writes (in tensor order)."""
    written = {op.out for prog in PROGRAMS for op in getattr(comp, prog)}
    names = [n for n in comp.tensors if n in written]
    if len(names) > N_SLOTS:
        raise ProgramError(f"{len(names)} written tensors, the accelerator has {N_SLOTS} statistics slots")
    return {n: i for i, n in enumerate(names)}


def _globalise(p: AccelParams, banks, bases) -> list[int]:
    return [base + (BANKS.index(bank) << p.bank_shift if bank else 0) for bank, base in zip(banks, bases)]


@dataclass(frozen=True)
class Record:
    """One op of a program image: where it sits, what it is."""

    pc: int
    program: str
    index: int  # position in the compiled program
    kind: int
    op: object  # the compiled golden.ir.Op
    # the unit descriptor the record carries (golden/isa/: ContractDesc, EwiseDesc, SceDesc or RankDesc)
    desc: Any = None
    nwords: int = 0  # payload words


@dataclass(frozen=True)
class Image:
    words: tuple[int, ...]
    entry: dict  # program name -> start pc
    records: tuple[Record, ...]
    slots: dict  # tensor name -> statistics slot


def lower_op(
    comp: Compiled,
    p: AccelParams,
    op: Op,
    frac: dict[str, int],
    observe: bool,
    host_step: tuple[int, int] | None,
    slots: dict[str, int],
    rank_constants: tuple[float, float] | None = None,
) -> tuple[int, list[int], object]:
    """(kind, words, descriptor) of one op: its header and packed descriptor."""
    d: Any  # the unit's descriptor: ContractDesc, EwiseDesc, SceDesc or RankDesc
    kind = op.kind.record_kind
    if kind == KIND_CONTRACT:
        d = contract_desc(comp, p, op, frac)
        payload = contract_payload(d)
    elif kind == KIND_EWISE:
        d = lower_ewise(comp, op, frac, host_step=host_step)
        code, why = ewise_error(d, *p.ewise_ports, adam=p.adam, rank=p.rank)
        if code:
            raise ProgramError(f"the element-wise unit refuses it (error {code}): {why}")
        x, z, y = _globalise(p, d.banks, (d.x_base, d.z_base, d.y_base))
        tl, tr = _globalise(p, d.tab_banks, (d.tab_left, d.tab_right))
        d = check_ewise(replace(d, x_base=x, z_base=z, y_base=y, tab_left=tl, tab_right=tr))
        fields = EWISE_FIELDS if d.opcode in EW_CORE_OPS else EWISE_SHORT_FIELDS
        payload = pack_fields(fields, pack_ewise_ports(d))
    elif kind == KIND_SCE:
        d = lower_sce(comp, op, frac, label=0)  # the label is the LABEL register's, written per sample
        z, e = _globalise(p, d.banks, (d.z_base, d.e_base))
        d = replace(d, z_base=z, e_base=e)
        payload = pack_fields(SCE_FIELDS, pack_sce_ports(d))
    else:
        if not p.rank:
            raise ProgramError("the accelerator is built without the rank unit (RANK = 0)")
        d = lower_rank(comp, op, frac, rank_constants)
        d = check_rank(
            replace(
                d,
                **dict(
                    zip(
                        ("left_base", "right_base", "lam_base", "mask_base", "tau_base"),
                        _globalise(p, d.banks, d.bases()),
                    )
                ),
            )
        )
        payload = pack_fields(RANK_FIELDS, pack_rank_ports(d))
    return kind, [header(kind, slots[op.out], observe, len(payload))] + payload, d


def contract_desc(comp: Compiled, p: AccelParams, op: Op, frac: dict[str, int]) -> ContractDesc:
    """The descriptor of contract `op` at its global addresses, in the lane form where `p`'s lanes pay."""
    d = lower_contract(comp, op, frac)
    a, b, o = _globalise(p, d.banks, (d.a_base, d.b_base, d.o_base))
    return check_desc(
        with_lanes(
            replace(d, a_base=a, b_base=b, o_base=o),
            p.lanes,
            p.buf_depth,
            p.vec,
            p.vec_banks,
            p.drain,
            p.lane_sum,
            p.rows,
        )
    )


def contract_payload(d: ContractDesc) -> list[int]:
    """A CONTRACT record's payload: the preload's fields only when it carries one."""
    return pack_fields(CONTRACT_FIELDS if d.preload else CONTRACT_SHORT_FIELDS, pack_ports(d))


def _span(base: int, loops, key: str) -> tuple[int, int]:
    return base, base + sum((lp.count - 1) * getattr(lp, key) for lp in loops)


def can_preload(d: ContractDesc, nxt: ContractDesc, bank_shift: int) -> bool:
    """May op `d` walk the next op's b into the other buffer set (golden/isa/contract.py, preload)? Both are in the
    lane form, `d` does not write the words of that b, and the banks have a read port for it beside d's own reads
    after its load (a, and the old output words when accumulating; BANK_READ_PORTS, the ports of every build)."""
    if d.lanes == 1 or nxt.lanes == 1:
        return False
    o_lo, o_hi = _span(d.o_base, d.loops, "so")
    b_lo, b_hi = _span(nxt.b_base, nxt.loops, "sb")
    if o_lo <= b_hi and b_lo <= o_hi:
        return False
    reads = [d.a_base, nxt.b_base] + ([d.o_base] if d.accumulate else [])
    banks = [r >> bank_shift for r in reads]
    return all(banks.count(b) <= BANK_READ_PORTS[b] for b in banks)


PRELOAD_WORDS = payload_words(CONTRACT_FIELDS) - payload_words(CONTRACT_SHORT_FIELDS)


def link_preloads(descs: list, bank_shift: int, mem_lat: int = MEM_LAT) -> list:
    """Pair consecutive contractions of one program for preloading (golden/isa/contract.py, preload) where it saves
    cycles: the next op's head start (contract_cycles of the previous op past its own walk, plus the sequencer's gap)
    must gain it more cycles than the PRELOAD_WORDS the previous record grows by (an upper bound of what they cost: the
    sequencer waits for them only where the op before that record is shorter than its load, record_wait). `descs`: the
    program's descriptors in order (None for other units); returns them with the pairs linked."""
    return _linked(descs, bank_shift, mem_lat)[0]


def linked_cycles(descs: list, bank_shift: int, mem_lat: int = MEM_LAT) -> int:
    """The contraction unit's cycles over `descs` (as link_preloads takes them) once link_preloads has paired them,
    each preloaded op with the head start link_preloads judged it by (its predecessor's record without a preload's
    fields): the cost the compiler compares element orders by (golden/planner.py refine_orders)."""
    linked, heads = _linked(descs, bank_shift, mem_lat)
    return sum(contract_cycles(d, mem_lat, head=h) for d, h in zip(linked, heads) if d is not None)


def _linked(descs: list, bank_shift: int, mem_lat: int) -> tuple[list, list[int]]:
    """link_preloads' pairing and the head start of every descriptor (0 where not preloaded)."""
    out = list(descs)
    heads = [0] * len(out)
    for i in range(len(out) - 1):
        d, nxt = out[i], out[i + 1]
        if not (isinstance(d, ContractDesc) and isinstance(nxt, ContractDesc) and can_preload(d, nxt, bank_shift)):
            continue
        new_head = head_start(d, heads[i], payload_words(CONTRACT_SHORT_FIELDS), mem_lat)
        if contract_cycles(nxt, mem_lat) - contract_cycles(nxt, mem_lat, head=new_head) <= PRELOAD_WORDS:
            continue
        out[i] = replace(d, preload=replace(nxt, preload=None, preloaded=False))
        out[i + 1] = replace(nxt, preloaded=True)
        heads[i + 1] = new_head
    return out, heads


def observes(comp: Compiled, program: str, op: Op) -> bool:
    """Does the op update its destination's max register (golden/machine.py: Machine._write with observe)."""
    t = comp.tensors[op.out]
    via_write = op.kind in (OpKind.CONTRACT, OpKind.ACC) or (
        op.kind in (OpKind.AXPBY, OpKind.AXPBY_RELU) and t.per_sample
    )
    return program == "train_sample" and via_write and t.adaptive


def assemble(
    comp: Compiled,
    p: AccelParams,
    frac: dict[str, int],
    host_step: tuple[int, int] | None = None,
    rank_constants: tuple[float, float] | None = None,
) -> Image:
    """The program memory image of every program of PROGRAMS (each ended by END) for formats `frac`.

    `host_step`: the SGD step constant of this update (golden.machine.Machine.sgd_step). `rank_constants`: the
    prior per mini-batch and the pruning threshold the host's rank schedule has set (Machine.rank_constants; None:
    the config's). The host re-assembles (and rewrites the changed words) when the step, a format or a rank
    constant changes; the rank state (lambda, masks, taus) is data in the state bank, which the MASK, PENALTY and
    RANK ops address. Raises ProgramError when an op or the image does not fit."""
    check_fits(comp, p)
    slots = slot_map(comp)
    words: list[int] = []
    entry, records = {}, []
    for prog in PROGRAMS:
        entry[prog] = len(words)
        lowered = []
        for i, op in enumerate(getattr(comp, prog)):
            try:
                lowered.append(lower_op(comp, p, op, frac, observes(comp, prog, op), host_step, slots, rank_constants))
            except ValueError as e:
                raise ProgramError(f"{prog} op {i} ({op.kind} -> {op.out}): {e}") from None
        descs = [d if k == KIND_CONTRACT else None for k, _, d in lowered]
        linked = link_preloads(descs, p.bank_shift) if p.preload else descs
        for i, (op, (kind, rec, desc), new) in enumerate(zip(getattr(comp, prog), lowered, linked)):
            if new is not None and new != desc:
                desc = new
                payload = contract_payload(desc)
                rec = [header(kind, slots[op.out], observes(comp, prog, op), len(payload))] + payload
            records.append(Record(len(words), prog, i, kind, op, desc, len(rec) - 1))
            words += rec
        words.append(header(KIND_END))
    if len(words) > p.prog_depth:
        raise ProgramError(
            f"the programs need {len(words)} words, the program memory has {p.prog_depth} "
            f"({len(words) - p.prog_depth} short)"
        )
    return Image(tuple(words), entry, tuple(records), slots)


def record_cycles(rec: Record, mem_lat: int = MEM_LAT, head: int = 0, prev_unit: int | None = None) -> tuple[int, int]:
    """(unit cycles, sequencer cycles) of one record as rtl/tt_seq.v counts them: its unit counter holds the op from
    the start cycle to done (the unit's start-to-done cycles + 1), and the sequencer adds SEQ_OP_CYCLES and the
    record_wait after the op before it (`prev_unit`: that op's unit cycles, None for the first record). The unit
    models are the ones the block tests check cycle for cycle; `head`: a preloaded contraction's head start
    (program_heads)."""
    unit = unit_cycles(rec.kind, rec.desc, mem_lat, head) + 1
    return unit, SEQ_OP_CYCLES + record_wait(prev_unit, rec.nwords)


def program_heads(records, mem_lat: int = MEM_LAT) -> list[int]:
    """The head start of every record of one program run in order: head_start for a preloaded contraction, else 0."""
    heads: list[int] = []
    prev: tuple[ContractDesc, int] | None = None
    for r in records:
        head = 0
        if r.kind == KIND_CONTRACT and r.desc.preloaded:
            assert prev is not None, "the first record cannot be preloaded"
            head = head_start(*prev, r.nwords, mem_lat)
        heads.append(head)
        prev = (r.desc, head)
    return heads


def program_cycles(image: Image, program: str, mem_lat: int = MEM_LAT) -> dict:
    """The modelled cycle counters of one run of `program` (rtl/tt_seq.v CYCLES and the per-unit counters): the
    busy cycles, each unit's, the sequencer's own (`end`: its wait for the END record), and (record, unit cycles,
    sequencer cycles, head start) per record."""
    recs = [r for r in image.records if r.program == program]
    per, prev_unit = [], None
    for r, h in zip(recs, program_heads(recs, mem_lat)):
        unit, seq = record_cycles(r, mem_lat, h, prev_unit)
        per.append((r, unit, seq, h))
        prev_unit = unit
    end = record_wait(prev_unit, 0)
    units = {u: sum(c for r, c, _, _ in per if UNIT_OF_KIND[r.kind] == u) for u in UNIT_OF_KIND.values()}
    seq = sum(s for _, _, s, _ in per) + end
    return {"cycles": sum(units.values()) + seq, "units": units, "sequencer": seq, "end": end, "records": per}
