"""Tests of the rank schedule (golden/rank_schedule.py) and of its runs: the phases in steps from epochs, steps and
samples, the rank-update cadence, the prior's scaling, the budget path and the lambda cut, all by hand-computed
cases; the config's checks; a budget_target run that reaches the budget on digits where the old schedule pruned
nothing, and one whose budget cannot be reached; the float model under the same schedule."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from golden.checkpoint import CHECKPOINT
from golden.config import ConfigError, LayerCfg, RankCfg, core_params_at
from golden.config_file import config_from_dict, config_to_dict, load_config
from golden.datasets import load_dataset
from golden.float_train import train_float
from golden.rank_schedule import RankBudget, RankSchedule, phase_step, squeeze_cut
from golden.run_report import summary
from golden.train import Run


@pytest.fixture(scope="module")
def digits():
    return load_dataset("digits")


# --- the arithmetic, by hand ------------------------------------------------------------------------------


def test_phase_boundaries_in_each_unit():
    # 10 mini-batches an epoch of batch 64: epoch 3 starts at step 30; sample 100 is in the second mini-batch
    # (samples 64..127), so the first mini-batch starting at or after it is step 2; 1000 / 64 = 15.6 -> step 16
    assert phase_step(3, "epochs", 10, 64) == 30
    assert phase_step(100, "samples", 10, 64) == 2
    assert phase_step(128, "samples", 10, 64) == 2
    assert phase_step(1000, "samples", 10, 64) == 16
    assert phase_step(7, "steps", 10, 64) == 7


def test_schedule_phases_and_cadence_in_epochs():
    rank = RankCfg(enabled=True, warmup_epochs=1, end_epoch=3, every=3)
    s = RankSchedule.of(rank, n_train=640, batch=64, steps_per_epoch=10, total_steps=50)
    assert (s.prune_start, s.prune_end) == (10, 30)
    assert [s.phase(t) for t in (0, 9, 10, 29, 30, 49)] == ["warmup"] * 2 + ["prune"] * 2 + ["finetune"] * 2
    # the epoch form counts the cadence within each epoch, as it always did: the 3rd, 6th and 9th mini-batch
    assert [t for t in range(50) if s.update_due(t)] == [12, 15, 18, 22, 25, 28]


def test_schedule_phases_and_cadence_in_steps_and_samples():
    steps = RankSchedule.of(
        RankCfg(enabled=True, warmup_steps=5, end_step=14, every=3), 640, 64, steps_per_epoch=10, total_steps=50
    )
    assert (steps.prune_start, steps.prune_end) == (5, 14)
    # counted from the prune phase's start, across the epoch boundary at step 10
    assert [t for t in range(50) if steps.update_due(t)] == [7, 10, 13]
    samples = RankSchedule.of(
        RankCfg(enabled=True, warmup_samples=100, end_sample=1000), 640, 64, steps_per_epoch=10, total_steps=50
    )
    assert (samples.prune_start, samples.prune_end) == (2, 16)
    assert [t for t in range(50) if samples.update_due(t)] == list(range(2, 16))


def test_prior_per_mini_batch():
    per_sample = RankSchedule.of(RankCfg(prior=4e-5), 60_000, 64, 937, 9370)
    assert per_sample.prior_per_update == pytest.approx(4e-5 * 64)
    # MAP: batch / N of the data set's prior; 2.4 at N = 60,000 pulls as 4e-5 per sample did
    full = RankSchedule.of(RankCfg(prior=2.4, prior_scaling="map"), 60_000, 64, 937, 9370)
    assert full.prior_per_update == pytest.approx(per_sample.prior_per_update)
    small = RankSchedule.of(RankCfg(prior=2.4, prior_scaling="map"), 6_000, 64, 93, 930)
    assert small.prior_per_update == pytest.approx(2.4 * 64 / 6000)
    # an epoch pulls the same whatever N: mini-batches an epoch times the pull of each
    assert 93 * small.prior_per_update == pytest.approx(937 * full.prior_per_update, rel=0.01)


def test_budget_path_is_a_straight_line_over_three_quarters_of_the_prune_phase():
    s = RankSchedule.of(RankCfg(enabled=True, warmup_epochs=1, end_epoch=3), 640, 64, 10, 50)
    assert s.ramp_end == 25  # 10 + 0.75 * 20
    assert s.budget_path(9, 1000, 700) == 1000  # before the prune phase
    assert s.budget_path(14, 1000, 700) == pytest.approx(900)  # 5 of 15 steps: a third of the way
    assert s.budget_path(24, 1000, 700) == 700
    assert s.budget_path(29, 1000, 700) == 700
    no_end = RankSchedule.of(RankCfg(enabled=True, warmup_steps=0), 640, 64, 10, 40)
    assert no_end.ramp_end == 30  # the run's end stands for the prune end


def test_lambda_cut_prunes_the_smallest_lambdas_and_keeps_one_slice():
    layers = [LayerCfg(in_shape=(2, 2), out_shape=(2, 2), ranks=(4,), relu=False)]
    assert core_params_at(layers, [[4]]) == 32 and core_params_at(layers, [[3]]) == 24  # 8 a slice

    def cost(ranks):
        return core_params_at(layers, ranks)

    lambdas = [(5, 0, 0, 0), (1, 0, 0, 1), (3, 0, 0, 2), (9, 0, 0, 3)]
    assert squeeze_cut(cost, [[4]], lambdas, 24) == 1
    assert squeeze_cut(cost, [[4]], lambdas, 16) == 3
    assert squeeze_cut(cost, [[4]], lambdas, 0) == 5  # the largest lambda stays: a bond keeps one slice
    assert squeeze_cut(cost, [[4]], lambdas, 32) is None
    assert squeeze_cut(cost, [[1]], [(5, 0, 0, 0)], 0) is None


def test_budgets_measure_parameters_or_cycles():
    cfg = load_config("digits")  # ranks [8, 8]: 1,920 core parameters
    d = config_to_dict(cfg)
    d["train"]["rank"].update(enabled=True, budget=0.7)
    params = RankBudget(config_from_dict(d))
    assert (params.full, params.target, params.kind) == (1920, 1344, "params")
    assert params.reached([[5, 6], []]) and not params.reached([[6, 6], []])  # 1296 and 1408 parameters
    d["train"]["rank"].update(budget=None, budget_cycles=7000)
    cycles = RankBudget(config_from_dict(d))
    assert cycles.kind == "cycles" and cycles.full > 7000
    assert cycles.reached([[5, 6], []]) and not cycles.reached([[8, 8], []])


def _rank_dict(**rank) -> dict:
    d = config_to_dict(load_config("tiny"))
    d["train"]["rank"] = {"enabled": True, **rank}
    return d


@pytest.mark.parametrize(
    "rank,message",
    [
        ({"end_step": 10}, "train.rank.end_step: give warmup_steps too"),
        ({"warmup_steps": 1, "warmup_samples": 8}, "give steps or samples, not both"),
        ({"warmup_steps": 1, "end_epoch": 3}, "drop warmup_epochs and end_epoch"),
        ({"warmup_samples": 64, "end_sample": 64}, "train.rank.end_sample: must be > warmup_samples"),
        ({"budget_target": True}, "train.rank.budget_target: needs a budget"),
        ({"budget": 0.5, "budget_cycles": 100}, "in parameters (budget) or in cycles, not both"),
        ({"prior_scaling": "per_batch"}, "train.rank.prior_scaling: unknown scaling 'per_batch'"),
        ({"budget_engine": {"lanes": 0}}, "train.rank.budget_engine.lanes: must be >= 1"),
    ],
)
def test_bad_schedule_fields_are_refused_in_one_sentence(rank, message):
    with pytest.raises(ConfigError, match=re.escape(message)) as e:
        config_from_dict(_rank_dict(**rank))
    assert "\n" not in str(e.value)


def test_schedule_fields_survive_the_round_trip():
    cfg = config_from_dict(
        _rank_dict(warmup_steps=3, end_step=9, prior_scaling="map", budget_cycles=500, budget_target=True)
    )
    assert config_from_dict(config_to_dict(cfg)) == cfg
    assert cfg.train.rank.phase_unit == "steps" and cfg.train.rank.phases() == (3, 9)


# --- runs -------------------------------------------------------------------------------------------------


def _digits_cfg(**rank):
    """digits for 4 epochs, rank adaptation with a weak prior (5e-4 per sample, which prunes nothing in 4 epochs)
    from epoch 1 to 3, unless `rank` says otherwise."""
    d = config_to_dict(load_config("digits"))
    d["train"]["epochs"] = 4
    d["train"]["rank"] = {"enabled": True, "prior": 5e-4, "warmup_epochs": 1, "end_epoch": 3, **rank}
    return config_from_dict(d)


def test_budget_target_reaches_the_budget_where_the_old_schedule_pruned_nothing(tmp_path, digits, no_plots, capsys):
    old = Run(_digits_cfg(budget=0.7), digits, 1, tmp_path / "old", 4).run()
    assert old["history"][-1]["ranks"] == [[8, 8], []], "the weak prior now prunes: pick a weaker one"
    assert old["rank_schedule"]["budget_reached"] is False
    assert "rank budget 0.7 not reached" in capsys.readouterr().out  # said, not silent
    # the same phases in steps (89 mini-batches an epoch): the budget a target
    new = Run(
        _digits_cfg(warmup_epochs=1, end_epoch=None, warmup_steps=89, end_step=267, budget=0.7, budget_target=True),
        digits,
        1,
        tmp_path / "new",
        4,
    ).run()
    rs = new["rank_schedule"]
    assert rs["phase_unit"] == "steps" and (rs["prune_start_step"], rs["prune_end_step"]) == (89, 267)
    assert rs["budget_reached"] is True and rs["live_core_params"] <= 0.7 * 1920
    assert 89 <= rs["budget_reached_step"] < 267 and rs["prune_steps"] == rs["budget_reached_step"] + 1 - 89
    pruned = [s for bond in rs["pruned_at_step"].values() for s in bond.values()]
    assert len(pruned) == 16 - sum(rs["live_ranks"][0]) and all(89 <= s <= rs["budget_reached_step"] for s in pruned)
    assert new["test_acc"] > 0.9  # pruned gradually: the network still classifies
    assert all(h["ranks"] == rs["live_ranks"] for h in new["history"][2:])  # fixed once reached


def test_unreachable_budget_ends_with_the_closest_result_and_says_so(tmp_path, digits, no_plots, capsys):
    report = Run(_digits_cfg(budget=0.01, budget_target=True), digits, 1, tmp_path / "out", 4).run()
    out = capsys.readouterr().out
    assert "warning: rank budget 0.01 is below the smallest network" in out
    assert "rank budget 0.01 not reached: 688 live core parameters" in out
    rs = report["rank_schedule"]
    assert rs["budget_reached"] is False and rs["live_ranks"] == [[1, 1], []]  # the closest: one slice a bond
    assert "rank budget 0.01 NOT reached: 688 live core parameters against at most 19" in summary(
        report, tmp_path / "out", "x"
    )


def test_budget_target_resume_is_bit_identical(tmp_path, digits, no_plots):
    """The host's schedule state (the lambda cuts' threshold, the pruning record) is in the checkpoint: a run
    stopped in the prune phase ends as the uninterrupted one."""
    cfg = _digits_cfg(budget=0.7, budget_target=True)
    ref = Run(cfg, digits, 1, tmp_path / "ref", 4).run()
    run = Run(cfg, digits, 1, tmp_path / "cut", 4)
    run.stop_after = 150
    with pytest.raises(SystemExit):
        run.run()
    with np.load(tmp_path / "cut" / CHECKPOINT) as z:
        assert json.loads(str(z["meta"]))["rank_log"]["pruned"], "stopped before any pruning: stop later"
    again = Run(cfg, digits, 1, tmp_path / "cut", 4).run()
    assert again["rank_schedule"] == ref["rank_schedule"] and again["test_acc"] == ref["test_acc"]
    with np.load(tmp_path / "ref" / "weights.npz") as a, np.load(tmp_path / "cut" / "weights.npz") as b:
        assert all(np.array_equal(a[k], b[k]) for k in a.files)


def test_float_model_keeps_the_schedule_semantics(digits):
    """The float model counts its phases in the same steps (its epochs keep the last partial mini-batch: 90 of
    them) and reaches a budget target the same way."""
    by_epochs = train_float(_digits_cfg(budget=0.7, budget_target=True), digits, seed=1, progress=False)
    by_steps = train_float(
        _digits_cfg(warmup_epochs=1, end_epoch=None, warmup_steps=90, end_step=270, budget=0.7, budget_target=True),
        digits,
        seed=1,
        progress=False,
    )
    assert by_epochs["live_ranks"] == by_steps["live_ranks"] and by_epochs["test_acc"] == by_steps["test_acc"]
    assert by_epochs["core_params"][-1] <= 0.7 * 1920
    assert all(90 <= p[4] < 270 for p in by_epochs["pruned"])
