"""The prune phase of a training run (SPEC 5.6, the host's side): the scheduled rank updates, the budget as a target
(a raised threshold, the squeeze at the prune end), the end of the phase, the recompile at smaller ranks, and the
report of what the phase did. golden/train.py's Run drives it; the schedule's arithmetic is golden/rank_schedule.py's.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from golden.compact import compact
from golden.config import NetConfig
from golden.cost import fit_ranks
from golden.datasets import Dataset
from golden.device import Device
from golden.ir import Compiled
from golden.machine import Machine
from golden.rank_schedule import SQUEEZE_ROUNDS, RankBudget, RankSchedule, squeeze_cut
from golden.semantics import LAMBDA_FMT


class PrunePhase:
    """The rank-adaptation part of golden/train.py's Run, which it inherits: the attributes below are the Run's."""

    cfg: NetConfig
    data: Dataset
    golden: Machine
    comp: Compiled
    device: Device
    schedule: RankSchedule
    budget: RankBudget
    rank_log: dict[str, Any]
    recompiled: list[list[int]] | None
    device_before_recompile: dict | None
    make_device: Callable[[Machine], Device]
    perm: Any
    xq_train: np.ndarray
    epoch: int

    def say(self, line: str) -> None:  # the Run's: a line above the progress bar
        raise NotImplementedError

    def _adopt(self, golden: Machine) -> None:  # the Run's: train `golden` (on the device) from here
        raise NotImplementedError

    async def _recompile(self, say) -> None:
        """train.rank.recompile, once the prune phase is over: the network recompiled at smaller ranks, its state
        carried over (golden/compact.py): the live ranks (those fit_ranks picks on a cycles budget's engine), or on
        an accelerator (a device with build parameters) the ranks fit_ranks finds fastest on its engine. The formats
        a new contraction order needs are calibrated on the epoch's first mini-batch."""
        if not self.cfg.train.rank.recompile or self.recompiled is not None:
            return
        live = self.golden.live_ranks()
        engine = self.device.params
        fit = self.budget.fit(live) if engine is None else None  # a cycles budget's engine, without a device
        ranks = (
            (live if fit is None else fit["ranks"])
            if engine is None
            else fit_ranks(
                self.cfg, live, engine.lanes, engine.buf_depth, vec=engine.vec, drain=engine.drain, log=sys.stdout
            )["ranks"]
        )
        first = self.perm[: self.cfg.train.batch]
        macs = self.comp.macs("train_sample")
        device = self.device.device_report()
        if device is not None:  # the recompiled network runs on a new device, counting afresh
            self.device_before_recompile = {"ranks": [list(layer.ranks) for layer in self.comp.cfg.layers], **device}
        self._adopt(compact(self.golden, ranks, calibration=(self.xq_train[first], self.data.train_y[first])))
        self.recompiled = ranks
        await self.device.upload()
        say(
            f"recompiled at ranks {ranks} (live {live}): {macs} -> {self.comp.macs('train_sample')} MACs per "
            f"training sample"
        )

    async def _scheduled_rank_update(self, step: int) -> None:
        """The rank update after mini-batch `step`; under budget_target at a raised threshold when the live core
        parameters lag the path to the budget (rank_schedule.budget_path). The prune phase ends here if the budget
        is reached (penalty off, ranks fixed)."""
        rank = self.cfg.train.rank
        threshold = rank.threshold
        if rank.budget_target:
            cut = self._lambda_cut(self.schedule.budget_path(step, self.budget.full, self.budget.target))
            if cut is not None:
                threshold = max(threshold, (cut + 1) / 2**LAMBDA_FMT.frac)
                self.rank_log["raised_threshold_updates"] += 1
        if self.golden.rank_constants[1] != threshold:
            self.golden.set_rank_constants(self.golden.rank_constants[0], threshold)
        await self._rank_update_logged(step)
        if self.within_budget():
            self.rank_log["budget_reached_step"] = step
            await self._end_prune_phase(step + 1)

    def _lambda_cut(self, allowed: float) -> float | None:
        """The lambda at or below which the live slices of smallest lambda go to bring the budget's cost to at most
        `allowed` (squeeze_cut), read from the state bank's LAM and MASK words; None if none need to."""
        if self.budget.cost(self.golden.live_ranks()) <= allowed:
            return None
        masks = self._masks()
        live_lambdas = [
            (lam, int(l), int(k), r)
            for op in self.comp.rank_update
            for l, k in [op.ins[3][len("MASK") :].split(".")]
            for r, lam in enumerate(self.golden.lambdas(op.out))
            if masks[f"{l}.{k}"][r]
        ]
        return squeeze_cut(self.budget.cost, self.golden.live_ranks(), live_lambdas, allowed)

    async def _rank_update_logged(self, step: int) -> bool:
        """One rank update (the RANK ops, then the pruning) after mini-batch `step`; records which slices it
        pruned. Whether it pruned any."""
        before = self._masks()
        await self.device.rank_update()
        pruned = False
        for bond, mask in self._masks().items():
            for r, (was, now) in enumerate(zip(before[bond], mask)):
                if was and not now:
                    self.rank_log["pruned"].setdefault(bond, {})[str(r)] = step
                    pruned = True
        return pruned

    def _masks(self) -> dict[str, list[int]]:
        """Per bond ("layer.bond"), which slices are live."""
        return {
            op.ins[3][len("MASK") :]: [int(w != 0) for w in self.golden.mem[op.ins[3]]] for op in self.comp.rank_update
        }

    async def _end_prune_phase(self, step: int, recompile: bool = True) -> None:
        """The prune phase ends before mini-batch `step`: under budget_target with the budget not reached, the
        slices of smallest lambda are pruned first (_squeeze); then the penalty goes off and the ranks stay
        (recompiled if the config asks, unless the run is over)."""
        rank = self.cfg.train.rank
        if rank.budget_target and not self.within_budget():
            await self._squeeze(step - 1)
        await self.device.rank_freeze()
        self.rank_log["ended_step"] = step
        ranks = self.golden.live_ranks()
        if self.budget.kind is not None and self.within_budget():
            self.say(
                f"rank budget {self.budget.describe()} reached after mini-batch {step - 1} of the run (epoch "
                f"{self.epoch + 1}, {step - self.schedule.prune_start} steps of pruning): "
                f"{self.budget.measure(ranks):,.0f} {self.budget.unit}, ranks {ranks}; fine-tuning from here"
            )
        elif self.budget.kind is not None:
            self.say(
                f"rank budget {self.budget.describe()} not reached: {self._budget_shortfall()}; fine-tuning the "
                f"closest result" + ("" if rank.budget_target else " (train.rank.budget_target true prunes on to it)")
            )
        if recompile:
            await self._recompile(self.say)

    def _budget_shortfall(self) -> str:
        b = self.budget
        live = b.measure(self.golden.live_ranks())
        return (
            f"{live:,.0f} {b.unit} ({100 * live / b.full:.1f} % of {b.full:,.0f}) against at most {b.target:,}, ranks "
            f"{self.golden.live_ranks()} after {self.rank_log['ended_step'] - self.schedule.prune_start} steps "
            f"of pruning (every bond keeps at least one slice)"
        )

    async def _squeeze(self, step: int) -> None:
        """budget_target at the prune end: rank updates at a threshold just above the lambdas of the slices to go
        (smallest lambda first, squeeze_cut), up to SQUEEZE_ROUNDS, since each update moves lambda on before it
        compares; the RANK ops prune, the host only picks the threshold from the lambdas in the state bank."""
        for _ in range(SQUEEZE_ROUNDS):
            cut = None if self.within_budget() else self._lambda_cut(self.budget.target)
            if cut is None:
                return
            self.golden.set_rank_constants(self.golden.rank_constants[0], (cut + 1) / 2**LAMBDA_FMT.frac)
            self.rank_log["squeeze_rounds"] += 1
            await self._rank_update_logged(step)

    def rank_report(self) -> dict:
        """The rank schedule's outcome for report.json: the phases in steps, the prior, per bond the step each
        slice was pruned after, and whether, where and after how many steps of pruning the budget was reached."""
        rank, log, sch = self.cfg.train.rank, self.rank_log, self.schedule
        full = sum(layer.n_core_params for layer in self.cfg.layers)
        b, live_ranks = self.budget, self.golden.live_ranks()
        reached = None if b.kind is None else self.within_budget()
        ended = log["ended_step"]
        fit = b.fit(live_ranks)
        return {
            "phase_unit": rank.phase_unit,
            "steps_per_epoch": sch.steps_per_epoch,
            "prune_start_step": sch.prune_start,
            "prune_end_step": sch.prune_end,
            "prune_ended_step": ended,
            "prune_steps": None if ended is None else ended - sch.prune_start,
            "prior_scaling": rank.prior_scaling,
            "prior_per_update": sch.prior_per_update,
            "ramp_end_step": sch.ramp_end if rank.budget_target else None,
            "raised_threshold_updates": log["raised_threshold_updates"],
            "squeeze_rounds": log["squeeze_rounds"],
            "budget": rank.budget,
            "budget_cycles": rank.budget_cycles,
            "budget_engine": None if b.kind != "cycles" else dataclasses.asdict(rank.budget_engine),
            "budget_unit": b.unit,
            "budget_text": None if b.kind is None else b.describe(),
            "budget_full": b.full,
            "budget_allowed": b.target,
            "budget_measured": None if b.kind is None else b.measure(live_ranks),
            "fitted_ranks": None if fit is None else fit["ranks"],
            "budget_target": rank.budget_target,
            "budget_reached": reached,
            "budget_reached_step": log["budget_reached_step"],
            "full_core_params": full,
            "live_core_params": self.golden.live_core_params(),
            "full_ranks": [list(layer.ranks) for layer in self.cfg.layers],
            "live_ranks": live_ranks,
            "pruned_at_step": log["pruned"],
            "pruned_in_epoch": {
                bond: {r: step // sch.steps_per_epoch + 1 for r, step in slices.items()}
                for bond, slices in log["pruned"].items()
            },
        }

    def within_budget(self) -> bool:
        """Whether the live ranks are within the rank budget (RankBudget: parameters or cycles): a function of the
        masks alone, so a resumed run decides as the uninterrupted one did."""
        return self.budget.reached(self.golden.live_ranks())
