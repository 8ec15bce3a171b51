"""The hardware/software contract (golden/arch.py): the generated Verilog headers are current, and no fact of the
contract is written a second time in the RTL or the host driver."""

import re
from pathlib import Path

import pytest

from golden.arch import HEADERS, REG_SPAN, REG_WORDS, Ctrl, Reg, Status

ROOT = Path(__file__).resolve().parents[2]
RTL = sorted(p for p in (ROOT / "rtl").rglob("*.v"))


@pytest.mark.parametrize("name", sorted(HEADERS))
def test_generated_headers_are_current(name):
    assert (ROOT / "rtl" / name).read_text() == HEADERS[name](), (
        f"run `python -m golden.arch header` and commit rtl/{name}"
    )


def test_registers_do_not_overlap_and_fit_the_window():
    words = [r + k for r in Reg for k in range(REG_SPAN.get(r, 1))]
    assert len(words) == len(set(words)) and max(words) < REG_WORDS
    assert all(len(list(flags)) == len({f.value for f in flags}) for flags in (Ctrl, Status))


# What the RTL would hold if a fact of the contract were copied into it by hand: a local error code, opcode or
# seed constant, the ID value, or a register index as a literal in the register decode.
HAND_COPIES = {
    "error code": re.compile(r"localparam\s*\[3:0\]\s*ERR_[A-Z_]+\s*="),
    "element-wise opcode": re.compile(r"localparam\s*\[3:0\]\s*OP_(?!LAST)[A-Z_]+\s*="),
    "LFSR constant": re.compile(r"32'h\s*(A5A5_?A5A5|8020_?0003)", re.I),
    "accelerator ID": re.compile(r"32'h5454_?4131", re.I),
    "register index": re.compile(r"^\s*8'h[0-9A-F]{2}\s*:", re.I | re.M),
}


@pytest.mark.parametrize("path", RTL, ids=lambda p: p.name)
def test_the_rtl_takes_the_contract_from_the_generated_headers(path):
    text = path.read_text()
    found = [what for what, pattern in HAND_COPIES.items() if pattern.search(text)]
    assert not found, f"{path.name}: {', '.join(found)} written by hand; use rtl/tt_arch.vh (golden/arch.py)"


def test_the_hand_copy_check_can_fail():
    planted = "  localparam [3:0] ERR_SHIFT = 4'd1;\n      8'h04: start_pc_q <= d;\n"
    assert HAND_COPIES["error code"].search(planted) and HAND_COPIES["register index"].search(planted)


def test_the_host_driver_takes_the_register_map_from_arch():
    host = (ROOT / "verif" / "host.py").read_text()
    # a register index, window base or status bit as a number would be a copy: the driver names golden/arch.py's
    assert not re.search(r"\brd\(0x|\bwr\(0x|<< 18\b|0x54544131|0xA5A5A5A5", host, re.I)
