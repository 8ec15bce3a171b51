"""The program image format (golden/program.py): the generated RTL header is current, images assemble and are
checked against the accelerator's parameters."""
from dataclasses import replace
from pathlib import Path

import pytest

from golden import program as P
from golden.compiler import compile_network
from golden.config import load_config
from golden.machine import Machine

ROOT = Path(__file__).resolve().parents[2]


def test_rtl_header_is_generated_from_the_field_lists():
    assert (ROOT / "rtl" / "tt_desc_fields.vh").read_text() == P.verilog_header(), \
        "run `python -m golden.program header` and commit rtl/tt_desc_fields.vh"


def test_pack_fields_round_trip():
    fields = (("a", 20), ("b", 7), ("c", 40))
    words = P.pack_fields(fields, {"a": 0xABCDE, "b": 0x55, "c": (1 << 40) - 3})
    bits = sum(w << (32 * i) for i, w in enumerate(words))
    assert bits & 0xFFFFF == 0xABCDE and bits >> 20 & 0x7F == 0x55 and bits >> 27 == (1 << 40) - 3
    with pytest.raises(P.ProgramError, match="field b"):
        P.pack_fields(fields, {"a": 0, "b": 128, "c": 0})


@pytest.mark.parametrize("model", ["tiny", "digits", "paper"])
def test_images_assemble_with_one_record_per_op(model):
    comp = compile_network(load_config(model))
    m = Machine(comp, 1)
    img = P.assemble(comp, P.params_for(comp), m.frac, host_step=m.sgd_step())
    ops = sum(len(getattr(comp, prog)) for prog in P.PROGRAMS)
    assert len(img.records) == ops
    for rec in img.records:  # every record: a header naming its kind and a payload of its unit's length
        hdr = img.words[rec.pc]
        assert hdr & 15 == rec.kind and hdr >> P.NWORDS_LSB & 255 == P.payload_words(
            {P.KIND_CONTRACT: P.CONTRACT_FIELDS, P.KIND_EWISE: P.EWISE_FIELDS, P.KIND_SCE: P.SCE_FIELDS}[rec.kind])
    for prog, pc in img.entry.items():  # each program ends with END
        last = max(r.pc for r in img.records if r.program == prog)
        nxt = last + 1 + (img.words[last] >> P.NWORDS_LSB & 255)
        assert img.words[nxt] == P.header(P.KIND_END)


def test_a_network_that_does_not_fit_is_refused_with_the_shortfall():
    comp = compile_network(load_config("digits"))
    p = P.params_for(comp)
    small = replace(p, bank_depth=(p.bank_depth[0] - 10,) + p.bank_depth[1:])
    with pytest.raises(P.ProgramError, match="bank act needs 2112 words, has 2102 \\(10 short\\)"):
        P.check_fits(comp, small)
    with pytest.raises(P.ProgramError, match="program memory has 16"):
        P.assemble(comp, replace(p, prog_depth=16), Machine(comp, 1).frac, host_step=(1, 0))


def test_ops_the_rtl_lacks_are_refused():
    cfg = load_config("digits")
    cfg = replace(cfg, train=replace(cfg.train, rank=replace(cfg.train.rank, enabled=True)))
    comp = compile_network(cfg)
    with pytest.raises(P.ProgramError, match="rank|does not have"):
        P.assemble(comp, P.params_for(comp), Machine(comp, 1).frac, host_step=(1, 0))
