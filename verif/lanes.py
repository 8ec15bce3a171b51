"""Per-lane fields on flat buses: lane l of a W-bit field sits at bits [W*l +: W] (the RTL's convention)."""

from __future__ import annotations


def pack(values, width: int) -> int:
    """Lane values (signed or unsigned) into one bus word, two's complement per lane."""
    word = 0
    for i, v in enumerate(values):
        word |= (int(v) & ((1 << width) - 1)) << (width * i)
    return word


def unpack(word: int, width: int, n: int, signed: bool) -> list[int]:
    """A bus word into n lane values, sign-extended when `signed`."""
    out = []
    for i in range(n):
        v = (word >> (width * i)) & ((1 << width) - 1)
        if signed and v >> (width - 1):
            v -= 1 << width
        out.append(v)
    return out
