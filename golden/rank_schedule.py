"""The host's rank schedule in optimizer steps, whatever unit the config counts its phases in.

A step is one mini-batch update, counted from 0 over the whole run; an epoch has `steps_per_epoch` of them (the
training loop's count: golden/train.py drops a last partial mini-batch, the float model keeps it). The config's
phases (train.rank, golden/config.py) become steps here:
- epochs e: step e * steps_per_epoch;
- samples s: the first mini-batch that starts at or after sample s, step ceil(s / batch);
- steps: as given.
Warm-up: steps < prune_start; prune phase: prune_start <= step < prune_end (no end: to the run's end); after it
the fine-tuning. A rank update follows the mini-batch of step s in the prune phase when the `every`-th mini-batch
comes round: counted within the epoch in the epoch form (as it always was), from the prune phase's start
otherwise.

The prior per mini-batch (the batch-summed gradient's tau numerator, Machine.rank_constants): prior * batch under
"per_sample", prior * batch / N under "map" (the MAP objective's share of one mini-batch).

budget_target: the prior alone prunes what it prunes; where it lags a straight path from the full core parameter
count at the prune phase's start to the budget at `ramp_end` (three quarters of the prune phase; the run's end
stands for a missing prune end), the rank update runs at a threshold raised just above the lambdas of the slices
that bring the count back onto the path, smallest lambda first (squeeze_cut). So the budget is reached by the
ramp's end with a quarter of the phase left to adapt, one slice at a time rather than at once; whatever remains at
the prune end is squeezed there (SQUEEZE_ROUNDS rank updates), and what cannot go (a bond keeps one slice) is
reported.

Both the bit-exact run (golden/train.py) and the float model (golden/float_train.py train_float) use this.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from golden.config import NetConfig, RankCfg, core_params_at

RAMP_FRACTION = 0.75  # budget_target: the share of the prune phase the path to the budget takes
# cycles budgets: live ranks at more than this many times the budget's cycles are not fitted (fit_ranks is slow), as
# the largest gain a fit has shown over the live ranks is 1.58x (paper at 128 lanes, README)
FIT_REACH = 1.6
SQUEEZE_ROUNDS = 8  # budget_target: rank updates at a raised threshold before the closest result is kept


def phase_step(value: int, unit: str, steps_per_epoch: int, batch: int) -> int:
    """The optimizer step a phase boundary `value`, counted in `unit`, falls on."""
    if unit == "epochs":
        return value * steps_per_epoch
    if unit == "samples":
        return -(-value // batch)
    return value


@dataclass(frozen=True)
class RankSchedule:
    steps_per_epoch: int
    prune_start: int
    prune_end: int | None  # None: the prune phase lasts to the run's end
    every: int
    epoch_cadence: bool  # the epoch form: the rank-update cadence restarts with each epoch
    prior_per_update: float  # tau numerator of one mini-batch's batch-summed gradient at the configured prior
    ramp_end: int  # budget_target: the step by which the path reaches the budget

    @classmethod
    def of(cls, rank: RankCfg, n_train: int, batch: int, steps_per_epoch: int, total_steps: int) -> RankSchedule:
        """The schedule of a run of `total_steps` mini-batches of `batch` on `n_train` training samples,
        `steps_per_epoch` of them an epoch."""
        unit = rank.phase_unit
        warmup, end = rank.phases()
        start = phase_step(warmup, unit, steps_per_epoch, batch)
        stop = None if end is None else phase_step(end, unit, steps_per_epoch, batch)
        scale = batch / n_train if rank.prior_scaling == "map" else batch
        length = max((total_steps if stop is None else stop) - start, 1)
        return cls(
            steps_per_epoch=steps_per_epoch,
            prune_start=start,
            prune_end=stop,
            every=rank.every,
            epoch_cadence=unit == "epochs",
            prior_per_update=rank.prior * scale,
            ramp_end=start + math.ceil(RAMP_FRACTION * length),
        )

    def phase(self, step: int) -> str:
        """ "warmup", "prune" or "finetune": the phase mini-batch `step` trains in."""
        if step < self.prune_start:
            return "warmup"
        if self.prune_end is None or step < self.prune_end:
            return "prune"
        return "finetune"

    def update_due(self, step: int) -> bool:
        """Whether a rank update follows the mini-batch of `step` (the budget aside)."""
        if self.phase(step) != "prune":
            return False
        counted = step % self.steps_per_epoch if self.epoch_cadence else step - self.prune_start
        return (counted + 1) % self.every == 0

    def budget_path(self, step: int, full: float, target: float) -> float:
        """budget_target: the cost (RankBudget.cost) allowed after the rank update that follows mini-batch `step`:
        from `full` at the prune phase's start down a straight line to `target` at ramp_end."""
        done = min(max(step + 1 - self.prune_start, 0), self.ramp_end - self.prune_start)
        return full - (full - target) * done / (self.ramp_end - self.prune_start)


def budget_params(budget: float | None, full: int) -> int:
    """The most live core parameters a `budget` (a fraction of the `full` count) allows."""
    if budget is None:
        raise ValueError("no rank budget")
    return math.floor(budget * full)


class RankBudget:
    """What a rank budget measures and how far it may go: the live core parameters (train.rank.budget, a fraction
    of the full count) or a training sample's accelerator cycles with its share of the update (train.rank.
    budget_cycles) on the config's budget_engine, at the ranks golden/cost.py fit_ranks picks for the live ones
    (kept pruned slices included; the fit is never slower than the live ranks, so it runs only for live ranks
    above the budget and within FIT_REACH of it, once per set of them: seconds on digits, about 40 s on paper).

    `cost(ranks)` is what the path and the lambda cut follow (the parameters, or the cycles at the live ranks
    themselves: an upper bound of the fitted ones); `measure(ranks)` what the budget is checked against."""

    def __init__(self, cfg: NetConfig):
        self.cfg = cfg
        rank = cfg.train.rank
        self.kind = "cycles" if rank.budget_cycles is not None else "params" if rank.budget is not None else None
        self.full_ranks = [list(layer.ranks) for layer in cfg.layers]
        self._cycles: dict[tuple[int, ...], float] = {}
        self._fits: dict[tuple[int, ...], dict] = {}
        self.full = self.cost(self.full_ranks)
        self.target: int
        if rank.budget_cycles is not None:
            self.target = rank.budget_cycles
        elif rank.budget is not None:
            self.target = budget_params(rank.budget, core_params_at(cfg.layers, self.full_ranks))
        else:
            self.target = math.ceil(self.full)

    @property
    def unit(self) -> str:
        return "cycles a training sample" if self.kind == "cycles" else "live core parameters"

    def cost(self, ranks: list[list[int]]) -> float:
        if self.kind != "cycles":
            return core_params_at(self.cfg.layers, ranks)
        key = tuple(r for layer in ranks for r in layer)
        if key not in self._cycles:
            from golden.config_file import with_ranks
            from golden.cost import cost_report

            e = self.cfg.train.rank.budget_engine
            progs = cost_report(with_ranks(self.cfg, ranks), e.lanes, e.buf_depth, vec=e.vec, drain=e.drain)
            progs = progs["programs"]
            self._cycles[key] = progs["train_sample"]["cycles"] + progs["update"]["cycles"] / self.cfg.train.batch
        return self._cycles[key]

    def fit(self, ranks: list[list[int]]) -> dict | None:
        """fit_ranks on the budget engine for live `ranks` (cycles budgets only; cached)."""
        if self.kind != "cycles":
            return None
        key = tuple(r for layer in ranks for r in layer)
        if key not in self._fits:
            from golden.cost import fit_ranks

            e = self.cfg.train.rank.budget_engine
            self._fits[key] = fit_ranks(self.cfg, ranks, e.lanes, e.buf_depth, vec=e.vec, drain=e.drain, log=None)
        return self._fits[key]

    def measure(self, ranks: list[list[int]]) -> float:
        cost = self.cost(ranks)
        if self.kind != "cycles" or cost <= self.target or cost > FIT_REACH * self.target:
            return cost
        fit = self.fit(ranks)
        assert fit is not None
        return fit["cycles"]

    def reached(self, ranks: list[list[int]]) -> bool:
        return self.kind is not None and self.measure(ranks) <= self.target

    def describe(self) -> str:
        """The budget as the config gives it."""
        rank = self.cfg.train.rank
        return f"{rank.budget_cycles:,} cycles" if self.kind == "cycles" else f"{rank.budget:g}"


def squeeze_cut(
    cost: Callable[[list[list[int]]], float],
    ranks: list[list[int]],
    live_lambdas: Sequence[tuple[float, int, int, int]],
    target: float,
) -> float | None:
    """budget_target: the lambda (the RANK op's integer, or the float model's float) at or below which the live
    slices of smallest lambda go to bring `cost` of the ranks (RankBudget.cost) from `ranks` to at most `target`,
    each bond keeping one slice as the RANK op does. `live_lambdas`: (lambda, layer, bond, slice) of every live
    slice. None when nothing can go (every bond at one slice, or already within the target)."""
    ranks = [list(r) for r in ranks]
    cut = None
    for lam, l, k, _ in sorted(live_lambdas):
        if cost(ranks) <= target:
            break
        if ranks[l][k] > 1:
            ranks[l][k] -= 1
            cut = lam
    return cut
