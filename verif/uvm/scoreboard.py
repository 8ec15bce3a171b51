"""Scoreboard base: predicted vs actual transactions, compared in check_phase.

Connect the predictor's analysis port to `expected_export` and the output monitor's to `actual_export`. Both
feed uvm_tlm_analysis_fifos; check_phase drains them and pairs the transactions in order (within each
`key(txn)` stream when a subclass defines keys, e.g. one stream per AXI ID or per output buffer). It counts

  matched     pairs that compare equal (`expected.compare(actual)`, i.e. SeqItem field equality)
  mismatched  pairs that differ (each is logged with `expected.diff(actual)`, the first MAX_REPORTED in full)
  missing     expected transactions the DUT never produced
  extra       DUT transactions nobody predicted

and fails the test (AssertionError out of check_phase) unless mismatched == missing == extra == 0 and
matched >= min_matches (default 1, so an empty run cannot pass). The counts stay on the object for the
test's own checks and reports.
"""

from __future__ import annotations

from collections import OrderedDict

from pyuvm import uvm_component, uvm_get_port, uvm_tlm_analysis_fifo


class Scoreboard(uvm_component):
    MAX_REPORTED = 10

    def build_phase(self):
        self.expected_fifo = uvm_tlm_analysis_fifo("expected_fifo", self)
        self.actual_fifo = uvm_tlm_analysis_fifo("actual_fifo", self)
        self.expected_export = self.expected_fifo.analysis_export
        self.actual_export = self.actual_fifo.analysis_export
        self.expected_get = uvm_get_port("expected_get", self)
        self.actual_get = uvm_get_port("actual_get", self)
        self.min_matches = 1
        self.matched = self.mismatched = self.missing = self.extra = 0
        self.errors: list[str] = []

    def connect_phase(self):
        self.expected_get.connect(self.expected_fifo.get_export)
        self.actual_get.connect(self.actual_fifo.get_export)

    # --- hooks ---------------------------------------------------------------------------------------
    def key(self, txn):
        """Stream a transaction belongs to; transactions are paired in order within a stream."""
        return None

    def compare(self, expected, actual) -> list[str]:
        """Differences between a predicted and an actual transaction ([] when they match)."""
        if expected.compare(actual):
            return []
        return expected.diff(actual) if hasattr(expected, "diff") else [f"{expected} != {actual}"]

    # --- during the run ------------------------------------------------------------------------------
    def outstanding(self) -> int:
        """Predicted transactions not yet matched by an actual one (negative: extra actual ones)."""
        return self.expected_fifo.used() - self.actual_fifo.used()

    # --- check ----------------------------------------------------------------------------------------
    @staticmethod
    def _drain(port) -> list[object]:
        out: list[object] = []
        while True:
            ok, txn = port.try_get()
            if not ok:
                return out
            out.append(txn)

    def _streams(self, txns) -> OrderedDict[object, list]:
        streams: OrderedDict = OrderedDict()
        for t in txns:
            streams.setdefault(self.key(t), []).append(t)
        return streams

    def _error(self, msg: str) -> None:
        if len(self.errors) < self.MAX_REPORTED:
            self.logger.error(msg)
        self.errors.append(msg)

    def check_phase(self):
        expected = self._streams(self._drain(self.expected_get))
        actual = self._streams(self._drain(self.actual_get))
        for k in list(expected) + [k for k in actual if k not in expected]:
            exp, act = expected.get(k, []), actual.get(k, [])
            tag = "" if k is None else f"[{k}] "
            for i, (e, a) in enumerate(zip(exp, act)):
                diffs = self.compare(e, a)
                if diffs:
                    self.mismatched += 1
                    self._error(
                        f"{tag}transaction {i}: MISMATCH: " + "; ".join(diffs) + f"\n  expected {e}\n  actual   {a}"
                    )
                else:
                    self.matched += 1
            for i, e in enumerate(exp[len(act) :], start=len(act)):
                self.missing += 1
                self._error(f"{tag}transaction {i}: MISSING (predicted, never seen): {e}")
            for i, a in enumerate(act[len(exp) :], start=len(exp)):
                self.extra += 1
                self._error(f"{tag}transaction {i}: EXTRA (seen, not predicted): {a}")
        summary = (
            f"scoreboard: {self.matched} matched, {self.mismatched} mismatched, {self.missing} missing, "
            f"{self.extra} extra"
        )
        if len(self.errors) > self.MAX_REPORTED:
            summary += f" ({len(self.errors) - self.MAX_REPORTED} further errors not printed)"
        self.logger.info(summary)
        assert not (self.mismatched or self.missing or self.extra), summary
        assert self.matched >= self.min_matches, f"{summary}: fewer than {self.min_matches} transactions checked"
