"""Training the float reference models (golden/float_model.py) on a dataset, under the same rank schedule as the
bit-exact run (golden/rank_schedule.py), and their speed on the CPU.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from golden.config import NetConfig, TrainCfg
from golden.float_model import FloatTTNet, make_net, make_optimizer, pad_inputs
from golden.rank_schedule import SQUEEZE_ROUNDS, RankBudget, RankSchedule, squeeze_cut


def train_float(
    cfg: NetConfig,
    dataset,
    seed: int = 0,
    epochs: int | None = None,
    dense: bool = False,
    progress: bool = True,
    dtype=np.float32,
    eval_every_epoch: bool = True,
) -> dict:
    """Train the float TT net (or the dense MLP when ``dense``) on ``dataset`` with ``cfg.train``.

    One seed drives all randomness (init, then the per-epoch shuffles). Learning rate from
    ``cfg.train.lr_at`` (the schedule), set before each update. The last
    mini-batch of an epoch may be smaller. Rank adaptation (TT only, ``cfg.train.rank.enabled``): from epoch
    ``warmup_epochs`` (0-based) until ``end_epoch`` (if set), the penalty is on and every ``every``-th mini-batch
    runs the lambda update and pruning; after it (or once the live core parameters are down to ``budget`` of the
    full count) the ranks stay and the live slices fine-tune without penalty. Returns a dict of per-epoch lists
    (``train_loss`` = mean CE of the epoch's batches,
    ``train_acc`` of those batches, ``test_acc``, ``live_ranks``, ``core_params``, ``time`` = cumulative wall
    seconds of training, excluding evaluation) plus ``final_test_acc``, ``samples_per_s`` and ``pruned``.
    The phases, the prior's scaling and budget_target follow golden/rank_schedule.py in steps, as the bit-exact
    run does (the penalty here is on the batch-mean loss: the prior per mini-batch over the batch)."""
    tc = cfg.train
    E = tc.epochs if epochs is None else int(epochs)
    rng = np.random.default_rng(seed)
    net = make_net(cfg, dense=dense, dtype=dtype, rng=rng)
    opt = make_optimizer(tc, net.params())
    n_in = net.n_in
    Xtr = pad_inputs(dataset.train_x, n_in, dtype)
    Ytr = np.asarray(dataset.train_y, dtype=np.int64)
    Xte = pad_inputs(dataset.test_x, n_in, dtype)
    Yte = np.asarray(dataset.test_y, dtype=np.int64)
    N, B = len(Xtr), tc.batch
    rank_on = (not dense) and net.rank is not None
    hist: dict[str, Any] = {
        k: [] for k in ("train_loss", "train_acc", "test_acc", "live_ranks", "core_params", "time", "penalty")
    }
    hist["pruned"] = []
    params = net.params()
    updates = 0  # for the learning-rate schedule
    t_train = 0.0
    bar_mod: Any = None
    if progress:
        try:
            import tqdm as bar_mod
        except ImportError:  # pragma: no cover
            bar_mod = None
    budget_met = False  # train.rank.budget reached: the prune phase is over for good
    steps_per_epoch = -(-N // B)  # the last mini-batch of an epoch may be smaller
    schedule = RankSchedule.of(tc.rank, N, B, steps_per_epoch, E * steps_per_epoch)
    budget = RankBudget(cfg)
    if rank_on:
        net.rank.prior = schedule.prior_per_update / B
    penalty_on = False  # warm-up and fine-tuning: off
    for epoch in range(E):
        perm = rng.permutation(N)
        t0 = time.perf_counter()
        ce_sum, correct = 0.0, 0
        starts = range(0, N, B)
        it = (
            bar_mod.tqdm(starts, desc=f"{cfg.name} {'dense' if dense else 'tt'} epoch {epoch + 1}/{E}", leave=False)
            if bar_mod
            else starts
        )
        for i in it:
            step = epoch * steps_per_epoch + i // B
            if rank_on:
                if tc.rank.budget_target and not budget_met and schedule.phase(step) == "finetune":
                    _squeeze_float(net, opt, budget, step, hist, epoch)
                    budget_met = True  # the prune phase is over: what the squeeze left stays
                penalty_on = net.penalty_on = schedule.phase(step) == "prune" and not budget_met
            idx = perm[i : i + B]
            yb = Ytr[idx]
            opt.lr = tc.lr_at(updates, E * len(starts))
            updates += 1
            _, grads = net.loss_and_grads(Xtr[idx], yb)
            ce_sum += net.last_ce * len(idx)
            correct += int(np.sum(net._pred == yb))
            opt.step(params, grads)
            if penalty_on and schedule.update_due(step):
                net.rank.threshold = tc.rank.threshold
                if tc.rank.budget_target:
                    cut = _float_lambda_cut(net, budget, schedule.budget_path(step, budget.full, budget.target))
                    if cut is not None:
                        net.rank.threshold = max(tc.rank.threshold, float(np.nextafter(cut, np.inf)))
                for l, k, r in net.rank_update(opt.states()):
                    hist["pruned"].append((epoch, l, k, r, step))
                budget_met = budget.reached([list(r) for r in net.live_ranks()])
                if budget_met:
                    penalty_on = net.penalty_on = False
        t_train += time.perf_counter() - t0
        hist["train_loss"].append(ce_sum / N)
        hist["train_acc"].append(correct / N)
        hist["penalty"].append(net.penalty())
        hist["test_acc"].append(net.accuracy(Xte, Yte) if (eval_every_epoch or epoch == E - 1) else None)
        hist["live_ranks"].append(net.live_ranks())
        hist["core_params"].append(net.n_core_params())
        hist["time"].append(t_train)
        if progress:
            msg = (
                f"epoch {epoch + 1}/{E}: loss {hist['train_loss'][-1]:.4f} train {hist['train_acc'][-1]:.4f} "
                f"test {hist['test_acc'][-1]} ranks {hist['live_ranks'][-1]} ({t_train:.1f}s)"
            )
            (bar_mod.tqdm.write if bar_mod else print)(msg)
    hist["final_test_acc"] = hist["test_acc"][-1] if E else None
    hist["samples_per_s"] = (N * E / t_train) if t_train > 0 else None
    hist["net"] = net
    return hist


def _float_lambda_cut(net: FloatTTNet, budget: RankBudget, allowed: float) -> float | None:
    """The float twin of golden/prune_phase.py PrunePhase._lambda_cut: the lambda at or below which the live slices of
    smallest lambda go to bring the budget's cost to at most `allowed`."""
    ranks = [list(r) for r in net.live_ranks()]
    if net.rank is None or budget.cost(ranks) <= allowed:
        return None
    live_lambdas = [
        (float(net.rank.lam[(l, k)][r]), l, k, int(r))
        for l, k in net.rank.bonds
        for r in np.flatnonzero(net.rank.live[(l, k)])
    ]
    return squeeze_cut(budget.cost, ranks, live_lambdas, allowed)


def _squeeze_float(net: FloatTTNet, opt, budget: RankBudget, step: int, hist: dict, epoch: int) -> None:
    """budget_target at the prune end (golden/prune_phase.py PrunePhase._squeeze): rank updates at a threshold just
    above the lambdas of the slices to go, up to SQUEEZE_ROUNDS."""
    if net.rank is None:
        return
    for _ in range(SQUEEZE_ROUNDS):
        cut = (
            None
            if budget.reached([list(r) for r in net.live_ranks()])
            else _float_lambda_cut(net, budget, budget.target)
        )
        if cut is None:
            break
        net.rank.threshold = float(np.nextafter(cut, np.inf))
        for l, k, r in net.rank_update(opt.states()):
            hist["pruned"].append((epoch, l, k, r, step))


def measure_speed(
    cfg: NetConfig,
    batch: int = 64,
    n: int = 6400,
    dense: bool = False,
    threads: int | None = 1,
    seed: int = 0,
    optimizer: str | None = None,
    dtype=np.float32,
) -> float:
    """Training samples per second (forward, backward, optimizer step) on random data, after one warm-up
    batch. ``threads`` limits the BLAS threads (via threadpoolctl when installed; None leaves them alone)."""
    import contextlib

    ctx = contextlib.nullcontext()
    if threads is not None:
        try:
            from threadpoolctl import threadpool_limits

            ctx = threadpool_limits(limits=threads)
        except ImportError:  # pragma: no cover
            pass
    rng = np.random.default_rng(seed)
    net = make_net(cfg, dense=dense, dtype=dtype, rng=rng)
    tc = TrainCfg(optimizer=optimizer or cfg.train.optimizer, lr=1e-4, momentum=cfg.train.momentum, batch=batch)
    opt = make_optimizer(tc, net.params())  # a small lr: random labels must not blow up (speed is lr-blind)
    X = rng.random((max(batch * 8, batch), cfg.input_size), dtype=np.float32)
    X = pad_inputs(X, net.n_in, dtype)
    Y = rng.integers(0, cfg.classes, len(X))
    params = net.params()
    nb = max(1, n // batch)
    with ctx:
        _, g = net.loss_and_grads(X[:batch], Y[:batch])
        opt.step(params, g)
        t0 = time.perf_counter()
        for j in range(nb):
            s = (j * batch) % (len(X) - batch + 1)
            _, g = net.loss_and_grads(X[s : s + batch], Y[s : s + batch])
            opt.step(params, g)
        dt = time.perf_counter() - t0
    return nb * batch / dt
