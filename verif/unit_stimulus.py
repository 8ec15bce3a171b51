"""Stimulus shared by the testbenches of the op-executing units (tt_contract, tt_ewise)."""
from __future__ import annotations

import numpy as np


def busy_restarts(gen: np.random.Generator, total: int) -> frozenset:
    """Cycles (1 .. total-1: the unit is busy) in which to pulse start again during an op of `total` cycles:
    the cycle right after the start (start held two cycles) and the last busy cycle (the last write is on the
    port), start held high for a stretch, or one to three random cycles."""
    last = total - 1
    kind = int(gen.integers(0, 4))
    if kind == 0:
        return frozenset({1, last})
    if kind == 1:
        a = int(gen.integers(1, last + 1))
        return frozenset(range(a, min(last, a + int(gen.integers(1, 6))) + 1))
    return frozenset(int(c) for c in gen.integers(1, last + 1, size=int(gen.integers(1, 4))))
