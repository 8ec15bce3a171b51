"""The program image format (golden/program.py): images assemble and are checked against the accelerator's
parameters."""

import copy
from dataclasses import replace
from pathlib import Path

import pytest

from golden import program as P
from golden.arch import (
    BANKS,
    BUF_W,
    CONTRACT_FIELDS,
    CONTRACT_SHORT_FIELDS,
    EWISE_FIELDS,
    EWISE_SHORT_FIELDS,
    IDLE_W,
    KIND_CONTRACT,
    KIND_END,
    KIND_EWISE,
    KIND_RANK,
    KIND_SCE,
    LANE_W,
    NLOOPS,
    RANK_FIELDS,
    SCE_FIELDS,
    field_bits,
    payload_words,
)
from golden.compiler import compile_network
from golden.config_file import config_from_dict, config_to_dict, load_config
from golden.ir import OpKind
from golden.isa.contract import drain_ok, pack_ports, vec_ok
from golden.isa.lanes import with_lanes
from golden.isa.timing import contract_cycles
from golden.lowering import lower_contract
from golden.machine import Machine

ROOT = Path(__file__).resolve().parents[2]


def test_pack_fields_round_trip():
    fields = (("a", 20), ("b", 7), ("c", 40))
    words = P.pack_fields(fields, {"a": 0xABCDE, "b": 0x55, "c": (1 << 40) - 3})
    bits = sum(w << (32 * i) for i, w in enumerate(words))
    assert bits & 0xFFFFF == 0xABCDE and bits >> 20 & 0x7F == 0x55 and bits >> 27 == (1 << 40) - 3
    with pytest.raises(P.ProgramError, match="field b"):
        P.pack_fields(fields, {"a": 0, "b": 128, "c": 0})


def _config(model: str):
    """A model by name; "-rank": with rank adaptation (the rank_update and rank_prune programs not empty)."""
    name, _, rank = model.partition("-")
    d = config_to_dict(load_config(name))
    if rank:
        d["train"]["rank"]["enabled"] = True
    return config_from_dict(d)


@pytest.mark.parametrize("model", ["tiny", "digits", "paper", "digits-rank", "paper-rank"])
def test_images_assemble_with_one_record_per_op(model):
    comp = compile_network(_config(model))
    m = Machine(comp, 1)
    img = P.assemble(comp, P.params_for(comp), m.frac, host_step=m.sgd_step())
    ops = sum(len(getattr(comp, prog)) for prog in P.PROGRAMS)
    assert len(img.records) == ops
    for rec in img.records:  # every record: a header naming its kind and a payload of its unit's length
        hdr = img.words[rec.pc]
        fields = {
            KIND_CONTRACT: CONTRACT_FIELDS,
            KIND_EWISE: EWISE_FIELDS,
            KIND_SCE: SCE_FIELDS,
            KIND_RANK: RANK_FIELDS,
        }[rec.kind]
        if rec.kind == KIND_EWISE and rec.op.kind not in (OpKind.MASK, OpKind.PENALTY):  # no tables
            fields = EWISE_SHORT_FIELDS
        if rec.kind == KIND_CONTRACT and not rec.desc.preload:  # one lane: no preloads
            fields = CONTRACT_SHORT_FIELDS
        assert hdr & 15 == rec.kind and P.header_nwords(hdr) == payload_words(fields)
    for prog, pc in img.entry.items():  # each program ends with END (an empty one is an END only)
        recs = [r.pc for r in img.records if r.program == prog]
        nxt = max(recs) + 1 + P.header_nwords(img.words[max(recs)]) if recs else pc
        assert img.words[nxt] == P.header(KIND_END)
    assert bool(comp.rank_update) == model.endswith("-rank") == bool(comp.rank_prune)


def test_short_element_wise_records_leave_out_only_zero_table_bits():
    """A record without the tables' addresses is the full record cut after EW_SHORT_WORDS words: the bits it leaves
    out of its last word (the first table address's low bits) are 0 in the full packing too, so the sequencer's
    cleared descriptor register holds the same descriptor."""
    cut = field_bits(EWISE_SHORT_FIELDS)
    assert payload_words(EWISE_SHORT_FIELDS) * 32 - cut < field_bits(EWISE_FIELDS[-3:])
    comp = compile_network(load_config("digits"))
    m = Machine(comp, 1)
    img = P.assemble(comp, P.params_for(comp), m.frac, host_step=m.sgd_step())
    for rec in img.records:
        if rec.kind == KIND_EWISE:
            n = P.header_nwords(img.words[rec.pc])
            assert n == payload_words(EWISE_SHORT_FIELDS)
            bits = sum(w << (32 * i) for i, w in enumerate(img.words[rec.pc + 1 : rec.pc + 1 + n]))
            assert bits >> cut == 0, rec


def test_a_network_that_does_not_fit_is_refused_with_the_shortfall():
    comp = compile_network(load_config("digits"))
    p = P.params_for(comp)
    small = replace(p, bank_depth=(p.bank_depth[0] - 10,) + p.bank_depth[1:])
    with pytest.raises(P.ProgramError, match="bank act needs 2112 words, has 2102 \\(10 short\\)"):
        P.check_fits(comp, small)
    with pytest.raises(P.ProgramError, match="program memory has 16"):
        P.assemble(comp, replace(p, prog_depth=16), Machine(comp, 1).frac, host_step=(1, 0))


def test_adam_needs_the_adam_build():
    """A network that trains with Adam gets an accelerator with the Adam ops (params_for), and one built without
    them refuses its program, naming the op."""
    cfg = load_config("digits")
    cfg = replace(cfg, train=replace(cfg.train, optimizer="adam"))
    comp = compile_network(cfg)
    p = P.params_for(comp)
    assert p.adam and p.banks == BANKS and p.read_ports == (2, 1, 1, 2, 1) and p.ewise_ports == (32, 32, 32)
    assert p.bank_width[BANKS.index("state")] == 16 and p.bank_width[BANKS.index("moment")] == 32
    m = Machine(comp, 1)
    assert P.assemble(comp, p, m.frac, host_step=m.host_step()).words
    sgd_build = replace(p, adam=False, bank_depth=p.bank_depth[:-1], bank_width=p.bank_width[:-1])
    with pytest.raises(P.ProgramError, match="bank 'moment', which the accelerator does not have .built without Adam"):
        P.assemble(comp, sgd_build, m.frac, host_step=(1, 0))
    # the second moments moved into the state bank: the program fits, and its first Adam op is refused
    moved = copy.deepcopy(comp)
    for name, t in moved.tensors.items():
        if t.bank == "moment":
            t.bank = "state"
            moved.layout[name] = ("state", moved.bank_words["state"] + moved.layout[name][1])
    moved.bank_words["state"] += moved.bank_words.pop("moment")
    sgd_build = replace(
        sgd_build,
        bank_shift=sgd_build.bank_shift + 1,
        bank_depth=(*sgd_build.bank_depth[:-1], moved.bank_words["state"]),
        bank_width=(*sgd_build.bank_width[:-1], 32),
    )
    with pytest.raises(P.ProgramError, match="adam_v .*unknown opcode 8 .a unit built without Adam"):
        P.assemble(moved, sgd_build, m.frac, host_step=(1, 0))


def test_mask_and_penalty_descriptors_address_the_rank_state():
    """MASK and PENALTY records carry the global addresses of their bonds' MASK or TAU tensors (the state bank) and
    which sides exist; the image does not depend on the rank state (the unit reads the tables when the op runs)."""
    cfg = load_config("digits")
    comp = compile_network(replace(cfg, train=replace(cfg.train, rank=replace(cfg.train.rank, enabled=True))))
    m = Machine(comp, 1)
    p = P.params_for(comp)
    img = P.assemble(comp, p, m.frac, host_step=m.sgd_step())
    for op in comp.rank_update:  # a pruned state: the image stays the same
        m.mem[op.ins[3]][0] = 0
        m.mem[op.ins[2]][:] = 77
    assert P.assemble(comp, p, m.frac, host_step=m.sgd_step()).words == img.words
    seen = set()
    state = BANKS.index("state") << p.bank_shift
    for rec in img.records:
        if rec.kind != KIND_EWISE:
            continue
        n = P.header_nwords(img.words[rec.pc])
        f = P.unpack_fields(
            EWISE_FIELDS, sum(w << (32 * i) for i, w in enumerate(img.words[rec.pc + 1 : rec.pc + 1 + n]))
        )
        if rec.op.kind not in (OpKind.MASK, OpKind.PENALTY):
            assert n == payload_words(EWISE_SHORT_FIELDS) and (f["tab_left"], f["tab_right"], f["tab_on"]) == (
                0,
                0,
                0,
            )
            continue
        tables = rec.op.ins[1:] if rec.op.kind == OpKind.MASK else rec.op.ins[2:]
        want_on = int(bool(tables[0])) | int(bool(tables[1])) << 1
        assert f["tab_on"] == want_on and want_on, rec
        for key, t in zip(("tab_left", "tab_right"), tables):
            assert f[key] == (state + comp.layout[t][1] if t else 0), (rec, key)
        seen.add(rec.op.kind)
    assert seen == {"mask", "penalty"}


def test_contract_fields_round_trip_the_lane_form():
    """pack_ports -> pack_fields -> unpack_fields gives the ports back, lanes and buffer strides included (loop i
    of the packed buses the i-th from the innermost reduction loop, as for the other strides)."""
    comp = compile_network(load_config("digits"))
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    op = next(o for o in comp.train_sample if o.out == "dG0.1")  # eagf,ahfb->gebh
    d = with_lanes(lower_contract(comp, op, frac), 8, 512)
    assert d.lanes == 8 and any(lp.sbuf for lp in d.loops)
    for desc in (d, lower_contract(comp, op, frac)):
        ports = pack_ports(desc)
        words = P.pack_fields(CONTRACT_FIELDS, ports)
        assert len(words) == payload_words(CONTRACT_FIELDS)
        assert P.unpack_fields(CONTRACT_FIELDS, sum(w << (32 * i) for i, w in enumerate(words))) == ports
        inner_first = desc.red_loops[::-1] + desc.out_loops[::-1]
        mask = (1 << BUF_W) - 1
        assert [ports["stride_buf"] >> (BUF_W * i) & mask for i in range(NLOOPS)] == [lp.sbuf for lp in inner_first]
        assert ports["lanes"] == desc.lanes
    nxt = with_lanes(lower_contract(comp, next(o for o in comp.train_sample if o.out == "dG0.0"), frac), 8, 512)
    linked = replace(d, preload=nxt, preloaded=True)
    ports = pack_ports(linked)
    words = P.pack_fields(CONTRACT_FIELDS, ports)
    assert P.unpack_fields(CONTRACT_FIELDS, sum(w << (32 * i) for i, w in enumerate(words))) == ports
    nxt_ports = pack_ports(nxt)
    assert (ports["pre_lanes"], ports["pre_b_base"], ports["preloaded"], ports["pre_lane_sum"]) == (
        nxt.lanes,
        nxt.b_base,
        1,
        int(nxt.lane_sum),
    )
    assert (ports["pre_counts"], ports["pre_stride_b"], ports["pre_stride_buf"]) == (
        nxt_ports["counts"],
        nxt_ports["stride_b"],
        nxt_ports["stride_buf"],
    )
    assert CONTRACT_SHORT_FIELDS[-11:] == (
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
    )
    assert CONTRACT_FIELDS[len(CONTRACT_SHORT_FIELDS) :][0] == ("pre_lanes", LANE_W)


def test_short_contract_records_leave_out_only_zero_preload_bits():
    """A contraction record without a preload is the full record cut after CT_SHORT_WORDS words, and the bits of
    its last word past the short fields are 0 (pre_lanes 0: no preload), as the sequencer's cleared register
    reads them; a record with a preload is the full length."""
    img = _image("paper", 16)[0]
    cut = field_bits(CONTRACT_SHORT_FIELDS)
    lengths = set()
    for rec in img.records:
        if rec.kind == KIND_CONTRACT:
            n = P.header_nwords(img.words[rec.pc])
            lengths.add(n)
            assert n == payload_words(CONTRACT_FIELDS if rec.desc.preload else CONTRACT_SHORT_FIELDS)
            full = P.pack_fields(CONTRACT_FIELDS, pack_ports(rec.desc))
            assert list(img.words[rec.pc + 1 : rec.pc + 1 + n]) == full[:n]
            if not rec.desc.preload:
                assert sum(w << (32 * i) for i, w in enumerate(full)) >> cut == 0, rec
    assert lengths == {payload_words(CONTRACT_SHORT_FIELDS), payload_words(CONTRACT_FIELDS)}


def _image(model: str, lanes: int) -> tuple[P.Image, int]:
    """The model's image at `lanes` lanes with 512-word lane buffers, and its bank_shift."""
    comp = compile_network(load_config(model))
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    params = P.params_for(comp, lanes=lanes, buf_depth=512)
    return P.assemble(comp, params, frac, host_step=(1, 0)), params.bank_shift


@pytest.mark.parametrize("model,lanes", [("paper", 16), ("digits", 8)])
def test_preloads_link_legal_pairs_that_pay(model, lanes, monkeypatch):
    """Every preloading record carries the next record's b walk, which it does not write and whose bank has a read
    port free beside its own reads; linking saves each linked op more than the record's extra words, and the
    programs' modelled cycles drop against the same image without preloads."""
    img, shift = _image(model, lanes)
    linked = 0
    for prog in P.PROGRAMS:
        recs = [r for r in img.records if r.program == prog]
        heads = P.program_heads(recs)
        for i, r in enumerate(recs):
            if r.kind != KIND_CONTRACT or not r.desc.preload:
                continue
            nxt = recs[i + 1]
            assert nxt.desc.preloaded and r.desc.preload == replace(nxt.desc, preload=None, preloaded=False)
            assert P.can_preload(r.desc, nxt.desc, shift)
            saved = contract_cycles(nxt.desc) - contract_cycles(nxt.desc, head=heads[i + 1])
            assert saved > P.PRELOAD_WORDS
            linked += 1
        assert not recs or not getattr(recs[0].desc, "preloaded", False)  # nothing preloads a program's first op
    assert linked > 0
    with_pre = {p: P.program_cycles(img, p)["cycles"] for p in ("train_sample", "infer")}
    monkeypatch.setattr(P, "link_preloads", lambda descs, *a, **k: descs)
    without = {p: P.program_cycles(_image(model, lanes)[0], p)["cycles"] for p in ("train_sample", "infer")}
    assert with_pre["train_sample"] < without["train_sample"] and with_pre["infer"] <= without["infer"]


def test_can_preload_refuses_a_written_b_and_a_busy_bank():
    img, shift = _image("digits", 8)
    d, nxt = next(
        (r.desc, img.records[i + 1].desc)
        for i, r in enumerate(img.records)
        if r.kind == KIND_CONTRACT and r.desc.preload
    )
    assert P.can_preload(d, nxt, shift)
    assert not P.can_preload(replace(d, o_base=nxt.b_base), nxt, shift)  # the op writes the next op's b
    assert not P.can_preload(d, replace(nxt, lanes=1), shift)  # the next op has no buffers
    core = BANKS.index("core") << shift
    # the core bank's one read port: a from the core bank while the next b is in it too
    assert not P.can_preload(replace(d, a_base=core), replace(nxt, b_base=core + 1000), shift)


def test_accel_params_check_the_lanes():
    p = P.params_for(compile_network(load_config("tiny")))
    assert (p.lanes, p.buf_depth) == (1, 0)
    for lanes, buf_depth in ((1, 0), (16, 512), (255, 1), (2, 1 << BUF_W)):
        replace(p, lanes=lanes, buf_depth=buf_depth).check()
    for lanes, buf_depth, message in (
        (0, 0, "lanes 0 outside 1..255"),
        (256, 512, "lanes 256 outside 1..255"),
        (16, 0, "buf_depth 0 outside 1..4096 with 16 lanes"),
        (2, 4097, "buf_depth 4097 outside 1..4096 with 2 lanes"),
    ):
        with pytest.raises(P.ProgramError, match=message):
            replace(p, lanes=lanes, buf_depth=buf_depth).check()


def test_accel_params_check_the_vector_loads():
    p = P.params_for(compile_network(load_config("tiny")), lanes=16, buf_depth=64)
    rows = (True,) * len(p.banks)
    for vec in (1, 2, 16):
        replace(p, vec=vec, bank_vec=rows if vec > 1 else ()).check()
    for vec, lanes in ((3, 16), (0, 16), (8, 4), (32, 64)):
        with pytest.raises(P.ProgramError, match=f"vec {vec}: must be a power of two, at most the lanes"):
            replace(p, vec=vec, lanes=lanes, bank_vec=rows).check()
    with pytest.raises(P.ProgramError, match="need a bank_vec flag for each of the banks"):
        replace(p, vec=4, bank_vec=(True,)).check()


def test_accel_params_check_the_drain():
    p = P.params_for(compile_network(load_config("tiny")), lanes=16, buf_depth=64, vec=8)
    for drain in (1, 2, 8):
        replace(p, drain=drain).check()
    for drain, vec in ((3, 8), (0, 8), (16, 8), (2, 1)):
        with pytest.raises(P.ProgramError, match=f"drain {drain}: must be a power of two and at most vec"):
            replace(p, drain=drain, vec=vec, bank_vec=p.bank_vec if vec > 1 else ()).check()


@pytest.mark.parametrize("model,lanes", [("tiny", 4), ("digits", 8), ("paper", 16)])
def test_row_banks_are_those_the_vector_loads_and_wide_drains_use(model, lanes):
    """With a wide drain as well, params_for builds in rows exactly the banks that a vector load reads or a wide
    drain writes; every record with a wide drain keeps drain_ok's rules, and no program takes more modelled cycles
    than on the same build draining one element a cycle."""
    comp = compile_network(load_config(model))
    m = Machine(comp, 1)
    p = P.params_for(comp, lanes=lanes, buf_depth=512, vec=lanes, drain=lanes)
    img = P.assemble(comp, p, m.frac, host_step=m.sgd_step())
    ct = [r.desc for r in img.records if r.kind == KIND_CONTRACT]
    drains = {d.banks[2] for d in ct if d.drain > 1}
    assert drains and set(p.vec_banks) == {d.banks[1] for d in ct if d.vec > 1} | drains
    assert all(d.drain == 1 or drain_ok(d, lanes) for d in ct)
    narrow = P.assemble(comp, replace(p, drain=1), m.frac, host_step=m.sgd_step())
    for prog in P.PROGRAMS:
        assert P.program_cycles(img, prog)["cycles"] <= P.program_cycles(narrow, prog)["cycles"], prog


@pytest.mark.parametrize("model,lanes", [("tiny", 4), ("digits", 8), ("paper", 16)])
def test_vector_banks_are_those_the_vector_loads_read(model, lanes):
    """params_for builds in rows exactly the banks that some vector load of the programs reads b from; every record
    with a vector load keeps vec_ok's rules, and no program takes more modelled cycles than on the same build
    loading one word a cycle."""
    comp = compile_network(load_config(model))
    m = Machine(comp, 1)
    p = P.params_for(comp, lanes=lanes, buf_depth=512, vec=lanes)
    img = P.assemble(comp, p, m.frac, host_step=m.sgd_step())
    vec_reads = {r.desc.banks[1] for r in img.records if r.kind == KIND_CONTRACT and r.desc.vec > 1}
    assert vec_reads and set(p.vec_banks) == vec_reads
    assert [b in vec_reads for b in p.banks] == list(p.bank_vec)
    plain = P.assemble(comp, replace(p, vec=1), m.frac, host_step=m.sgd_step())
    for r in img.records:
        assert r.kind != KIND_CONTRACT or r.desc.vec == 1 or vec_ok(r.desc, lanes), r
    for prog in P.PROGRAMS:
        assert P.program_cycles(img, prog)["cycles"] <= P.program_cycles(plain, prog)["cycles"], prog


@pytest.mark.parametrize("rank", [False, True])
def test_paper_programs_fit_with_lanes(rank):
    """The paper model's programs fit the 2048-word program memory, and each contraction record holds the lane
    form with_lanes chooses for the engine's lanes and buffers."""
    cfg = load_config("paper")
    comp = compile_network(replace(cfg, train=replace(cfg.train, rank=replace(cfg.train.rank, enabled=rank))))
    m = Machine(comp, 1)
    p = P.params_for(comp, prog_depth=2048, lanes=16, buf_depth=512)
    img = P.assemble(comp, p, m.frac, host_step=m.sgd_step())
    assert len(img.words) <= 2048
    lanes = []
    for rec in img.records:
        if rec.kind == KIND_CONTRACT:
            words = img.words[rec.pc + 1 : rec.pc + 1 + payload_words(CONTRACT_FIELDS)]
            f = P.unpack_fields(CONTRACT_FIELDS, sum(w << (32 * i) for i, w in enumerate(words)))
            lanes.append(f["lanes"])
            assert f["lanes"] == with_lanes(lower_contract(comp, rec.op, m.frac), 16, 512).lanes, rec
    assert max(lanes) == 16 and min(lanes) == 1


def test_one_buffer_set_links_no_preloads():
    """An engine with one set of lane buffer words (preload False, tt_contract PRELOAD = 0) gets the same lane forms
    and no preload: no record carries a next op's walk or is marked preloaded, and the records are shorter."""
    comp = compile_network(load_config("digits"))
    m = Machine(comp, 1)
    images = {
        preload: P.assemble(
            comp, P.params_for(comp, lanes=8, buf_depth=512, preload=preload), m.frac, host_step=m.sgd_step()
        )
        for preload in (True, False)
    }
    contract = {k: [r.desc for r in img.records if r.kind == KIND_CONTRACT] for k, img in images.items()}
    assert any(d.preload is not None for d in contract[True]), "digits on 8 lanes links no preload: a vacuous test"
    assert not any(d.preload is not None or d.preloaded for d in contract[False])
    strip = [replace(d, preload=None, preloaded=False) for d in contract[True]]
    assert strip == contract[False]
    assert len(images[False].words) < len(images[True].words)
