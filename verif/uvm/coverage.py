"""Functional coverage base built on cocotb-coverage (CoverPoint / CoverCross).

A subclass declares its model in `declare()` with `self.point(...)` and `self.cross(...)`, and says how one
analysis transaction becomes samples in `samples(txn)` (default: the transaction itself; e.g. one sample per
lane). A sample is any object the points' `xf` functions read; a plain SimpleNamespace is the safe choice
(cocotb-coverage inspects the first sample's members).

Every test gets its own coverage tree, `<test class>[_<n>].<component path>.<point>`, in cocotb-coverage's
process-wide coverage_db, so several tests in one simulation never pool their hits. check_phase

  1. writes the whole coverage_db of the simulation so far to <test dir>/coverage.yml and coverage.xml
     (coverage_db.export_to_yaml / export_to_xml; <test dir> is where cocotb writes results.xml: the
     build dir of verif/runner.py's run_block),
  2. logs each point's and cross's hit bins out of its size, and
  3. fails the test (AssertionError) when any declared bin has fewer than `at_least` hits, listing the holes.

Bins that cannot be reached for the DUT's parameters belong in `ignore` of cross() (or out of `bins`), decided
from the HDL parameters in `self.params`: a declared bin is a promise that the stimulus reaches it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cocotb_coverage.coverage import CoverCross, CoverPoint, coverage_db
from pyuvm import ConfigDB, uvm_subscriber

from verif.uvm.item import current_test_name


@dataclass
class _Point:
    name: str
    xf: Callable[[Any], Any]
    bins: list
    at_least: int
    rel: Callable | None


@dataclass
class _Cross:
    name: str
    items: list[str]
    ignore: list[tuple] = field(default_factory=list)
    at_least: int = 1


def results_dir() -> Path:
    """Directory of the running cocotb test's results.xml (its test dir), else the working directory."""
    res = os.environ.get("COCOTB_RESULTS_FILE")
    return Path(res).resolve().parent if res else Path.cwd()


class Coverage(uvm_subscriber):
    REPORT_NAME = "coverage"  # <test dir>/coverage.yml and coverage.xml

    # --- to override ---------------------------------------------------------------------------------
    def declare(self) -> None:
        """Declare points and crosses with self.point() / self.cross()."""
        raise NotImplementedError

    def samples(self, txn) -> Iterable[Any]:
        return (txn,)

    # --- declaration API -----------------------------------------------------------------------------
    def point(
        self, name: str, xf: Callable[[Any], Any], bins: Sequence, at_least: int = 1, rel: Callable | None = None
    ) -> None:
        self._points.append(_Point(name, xf, list(bins), at_least, rel))

    def cross(self, name: str, items: Sequence[str], ignore: Iterable[tuple] = (), at_least: int = 1) -> None:
        """Cross of earlier points (by name); `ignore`: bin tuples to drop, None matching any bin."""
        self._crosses.append(_Cross(name, list(items), [tuple(i) for i in ignore], at_least))

    # --- phases --------------------------------------------------------------------------------------
    def build_phase(self):
        self.params = ConfigDB().get(self, "", "PARAMS", None)
        self._points: list[_Point] = []
        self._crosses: list[_Cross] = []
        base = current_test_name()
        root, n = base, 1
        while any(k == root or k.startswith(root + ".") for k in coverage_db):  # same test class run again
            n += 1
            root = f"{base}_{n}"
        self.root = f"{root}.{self.get_full_name()}"
        self.declare()
        names = [p.name for p in self._points] + [c.name for c in self._crosses]
        assert len(set(names)) == len(names), f"duplicate coverage item names in {names}"

        def _sample(s):  # innermost: crosses must see the points' hits of this very sample
            return None

        # Points are created first (a cross reads its points' bins when created); when sampling, the
        # outermost wrapper runs first, so the points wrap the crosses.
        points = [
            CoverPoint(self._full(p.name), xf=p.xf, bins=p.bins, at_least=p.at_least, rel=p.rel, inj=True)
            for p in self._points
        ]
        crosses = []
        for c in self._crosses:
            for item in c.items:
                assert item in [p.name for p in self._points], f"cross {c.name}: no point named {item}"
            crosses.append(
                CoverCross(
                    self._full(c.name), items=[self._full(i) for i in c.items], ign_bins=c.ignore, at_least=c.at_least
                )
            )
        f = _sample
        for cov in crosses + points:
            f = cov(f)
        self._sampler = f
        self.n_samples = 0

    def _items(self) -> list[_Point | _Cross]:
        return [*self._points, *self._crosses]

    def _full(self, name: str) -> str:
        return f"{self.root}.{name}"

    def write(self, txn):
        for s in self.samples(txn):
            self._sampler(s)
            self.n_samples += 1

    def holes(self) -> dict[str, list]:
        """{item name: [bins with fewer than at_least hits]} for every point and cross that has any."""
        out = {}
        for it in self._items():
            cov = coverage_db[self._full(it.name)]
            missing = [b for b, h in cov.detailed_coverage.items() if h < it.at_least]
            if missing:
                out[it.name] = missing
        return out

    def check_phase(self):
        out = results_dir()
        coverage_db.export_to_yaml(str(out / f"{self.REPORT_NAME}.yml"))
        coverage_db.export_to_xml(str(out / f"{self.REPORT_NAME}.xml"))
        for it in self._items():
            cov = coverage_db[self._full(it.name)]
            self.logger.info(f"coverage {it.name}: {cov.coverage}/{cov.size} bins ({cov.cover_percentage:.1f} %)")
        top = coverage_db[self.root]
        self.logger.info(
            f"coverage {self.root}: {top.cover_percentage:.1f} % of {top.size} bins, "
            f"{self.n_samples} samples; report {out / self.REPORT_NAME}.yml"
        )
        holes = self.holes()
        for name, bins in holes.items():
            self.logger.error(
                f"coverage hole in {name}: {len(bins)} bins not hit: {bins[:20]}" + (" ..." if len(bins) > 20 else "")
            )
        assert not holes, (
            f"functional coverage not closed: {sum(map(len, holes.values()))} bins unhit in {sorted(holes)}"
        )
