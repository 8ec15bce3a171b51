"""Sequence items with named fields and seed-driven randomisation.

Randomness: every generator in a testbench comes from `seeded_rng(*keys)`, a numpy Generator seeded from
cocotb.RANDOM_SEED (set by SEED=n through verif/runner.py) plus stable string keys (the test's name, the
sequence's or component's name). crc32 makes the keys stable across processes (Python's hash() of a str is
salted per process), so a test's stimulus does not depend on which other tests ran before it in the same
simulation, and SEED=n reproduces a run exactly.
"""

from __future__ import annotations

import zlib
from typing import Any

import cocotb
import numpy as np
from pyuvm import uvm_root, uvm_sequence_item


def current_test_name() -> str:
    """Class name of the running pyuvm test ("no_test" outside one)."""
    top = getattr(uvm_root(), "uvm_test_top", None)
    return type(top).__name__ if top is not None else "no_test"


def seeded_rng(*keys: Any) -> np.random.Generator:
    """numpy Generator from cocotb.RANDOM_SEED and `keys` (str() of each, hashed with crc32)."""
    seed = int(cocotb.RANDOM_SEED) & 0xFFFF_FFFF_FFFF_FFFF
    return np.random.default_rng([seed, *(zlib.crc32(str(k).encode()) for k in keys)])


class SeqItem(uvm_sequence_item):
    """Base transaction: subclasses list their data fields in FIELDS and implement `do_randomize`.

    - `randomize(rng=None, **constraints)`: fills the fields from `rng` (default: one generator per item class
      and test, from `seeded_rng`) by calling `do_randomize(rng, **constraints)`; returns self.
    - `==` / pyuvm's `compare()` compare FIELDS only (not names, ids or anything in NOCOMPARE); `diff(other)`
      lists the differing fields for error messages.
    """

    FIELDS: tuple[str, ...] = ()
    _default_rngs: dict = {}

    def __init__(self, name: str = "item"):
        super().__init__(name)
        for f in self.FIELDS:
            setattr(self, f, None)

    # --- randomisation -------------------------------------------------------------------------------
    @classmethod
    def default_rng(cls) -> np.random.Generator:
        top = getattr(uvm_root(), "uvm_test_top", None)
        key = cls.__qualname__
        entry = SeqItem._default_rngs.get(key)
        if entry is None or entry[0] is not top:  # a new test starts a new, reproducible stream
            entry = (top, seeded_rng(current_test_name(), key))
            SeqItem._default_rngs[key] = entry
        return entry[1]

    def randomize(self, rng: np.random.Generator | None = None, **constraints) -> SeqItem:
        self.do_randomize(rng if rng is not None else self.default_rng(), **constraints)
        return self

    def do_randomize(self, rng: np.random.Generator, **constraints) -> None:
        raise NotImplementedError(f"{type(self).__name__} must implement do_randomize(rng, **constraints)")

    # --- compare / print ---------------------------------------------------------------------------
    def fields(self) -> dict:
        return {f: getattr(self, f) for f in self.FIELDS}

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and self.fields() == other.fields()

    __hash__ = uvm_sequence_item.__hash__  # identity, as for any uvm_object

    def do_compare(self, rhs) -> bool:
        return self == rhs

    def diff(self, other) -> list[str]:
        """['field: self_value != other_value', ...] for every differing field."""
        if type(other) is not type(self):
            return [f"type {type(self).__name__} != {type(other).__name__}"]
        return [
            f"{f}: {getattr(self, f)!r} != {getattr(other, f)!r}"
            for f in self.FIELDS
            if getattr(self, f) != getattr(other, f)
        ]

    def __str__(self) -> str:
        return f"{type(self).__name__}(" + ", ".join(f"{k}={v!r}" for k, v in self.fields().items()) + ")"

    __repr__ = __str__
