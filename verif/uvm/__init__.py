"""Reusable pyuvm verification environment (block level now, the accelerator's top level later).

Pieces (each module's docstring has the details):
  item.SeqItem           sequence item with named FIELDS, a seed-driven `randomize` (numpy Generator seeded from
                         cocotb.RANDOM_SEED + stable keys), field-wise compare and diff
  item.seeded_rng        the one way to get random numbers in a testbench (reproducible with SEED=n)
  scoreboard.Scoreboard  two analysis FIFOs (expected, actual); in-order compare in check_phase; fails the test on
                         any mismatch, missing or extra transaction and on an empty run (all three are counted)
  coverage.Coverage      cocotb-coverage CoverPoint/CoverCross declared per test; check_phase writes the coverage
                         database (YAML + XML) to the test's build dir and fails the test when any bin is unhit
  env.Predictor          subscriber that turns input transactions into expected transactions (golden model)
  env.ClockedDriver      driver base: drives at the falling edge, keeps items back to back when the sequence
                         supplies them without a gap
  env.ClockedMonitor     monitor base: samples after each rising edge (ReadOnly), stamps the cycle number,
                         ignores everything before the first reset
  env.BlockEnv           sequencer + driver + monitors + predictor + scoreboard + coverage, wired by type
                         attributes (factory-created, so a test can override any of them); reads the DUT's HDL
                         parameters into ConfigDB "PARAMS"; clock, reset, drain
  env.BlockTest          test base: run the (factory-overridable) main sequence, drain, check

A new environment (example: verif/blocks/tt_requant/tb_uvm_requant.py):
  1. transactions: SeqItem subclasses with FIELDS (compared) and do_randomize(rng, **constraints);
  2. sequences: uvm_sequence subclasses; `item.randomize(...)` or seeded_rng(current_test_name(), name);
  3. ClockedDriver.drive_item / drive_idle, ClockedMonitor.sample(cycle) for the input and output sides,
     Predictor.predict(txn) calling the golden model (never hand-written values), expected transactions
     stamped with the cycle they are due;
  4. Coverage.declare() (points, crosses, ignore bins derived from self.params) and samples(txn);
  5. a BlockEnv subclass naming HDL_PARAMS and the component types; BlockTest subclasses decorated with
     @pyuvm.test(), variants overriding the sequence (or any component) with uvm_factory() in build_phase;
  6. a pytest runner calling verif.runner.run_block(..., test_module="...tb_<name>", testcase=[...]).
"""

from verif.uvm.coverage import Coverage
from verif.uvm.env import (
    BlockEnv,
    BlockTest,
    ClockedDriver,
    ClockedMonitor,
    DutParams,
    Predictor,
    read_hdl_params,
    signal_int,
)
from verif.uvm.item import SeqItem, current_test_name, seeded_rng
from verif.uvm.scoreboard import Scoreboard

__all__ = [
    "BlockEnv",
    "BlockTest",
    "ClockedDriver",
    "ClockedMonitor",
    "Coverage",
    "DutParams",
    "Predictor",
    "Scoreboard",
    "SeqItem",
    "current_test_name",
    "read_hdl_params",
    "seeded_rng",
    "signal_int",
]
