"""Tests of the float reference model (golden/float_model.py)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from golden.config import LayerCfg, NetConfig, RankCfg, TrainCfg
from golden.float_model import SGD, Adam, FloatDenseNet, FloatTTNet, RankAdapter, softmax_xent
from golden.float_train import measure_speed, train_float
from golden.float_tt import init_tt_cores, tt_backward, tt_forward, tt_init_std, tt_plan, tt_to_dense

# ---------------------------------------------------------------------------------------------------------
# configs built straight from the dataclasses (load_config may not exist yet)

PAPER = NetConfig(
    name="paper",
    input_size=784,
    classes=10,
    layers=(LayerCfg((7, 4, 2, 16), (4, 4, 2, 16), (16, 16, 16), True), LayerCfg((32, 16), (1, 16), (16,), False)),
    train=TrainCfg(optimizer="adam", lr=1e-3, batch=64, epochs=3),
)
DIGITS = NetConfig(
    name="digits",
    input_size=64,
    classes=10,
    layers=(LayerCfg((4, 4, 4), (4, 4, 4), (8, 8), True), LayerCfg((64,), (10,), (), False)),
    train=TrainCfg(optimizer="sgd", lr=0.02, momentum=0.9, batch=16, epochs=20),
)
TINY = NetConfig(
    name="tiny",
    input_size=14,
    classes=3,  # input padded 14 -> 16, logits padded 3 -> 4
    layers=(LayerCfg((4, 4), (4, 2), (2,), True), LayerCfg((8,), (4,), (), False)),
    train=TrainCfg(optimizer="sgd", lr=0.1, batch=8, epochs=2),
)


def rand_cores(rng, ms, ns, ranks, dtype=np.float64, scale=1.0):
    fr = (1, *ranks, 1)
    return [(rng.standard_normal((fr[k], ms[k], ns[k], fr[k + 1])) * scale).astype(dtype) for k in range(len(ms))]


def all_plans(ms, ns, ranks, batch):
    """Every split and order of a layer shape (just the dense plan for d = 1)."""
    fr = (1, *ranks, 1)
    if len(ms) == 1:
        return [tt_plan(ms, ns, fr, batch)]
    return [tt_plan(ms, ns, fr, batch, p=p, order=o) for p in range(1, len(ms)) for o in ("L", "R")]


SHAPES = [  # (out_shape, in_shape, ranks)
    ((5,), (7,), ()),  # d = 1: dense
    ((3, 2), (2, 4), (3,)),
    ((2, 3, 2), (3, 2, 2), (2, 4)),
    ((2, 1, 3, 2), (3, 2, 2, 3), (2, 3, 4)),  # 4 cores, with a unit mode
    ((1, 16), (32, 16), (16,)),  # the paper's fc2
]


# ---------------------------------------------------------------------------------------------------------
# TT layer math


@pytest.mark.parametrize("ms,ns,ranks", SHAPES)
@pytest.mark.parametrize("batch", [1, 5])
def test_forward_equals_dense(ms, ns, ranks, batch):
    rng = np.random.default_rng(1)
    cores = rand_cores(rng, ms, ns, ranks)
    W = tt_to_dense(cores)
    assert W.shape == (math.prod(ms), math.prod(ns))
    x = rng.standard_normal((batch, math.prod(ns)))
    for plan in all_plans(ms, ns, ranks, batch):
        y, _ = tt_forward(cores, x, plan)
        np.testing.assert_allclose(y, x @ W.T, rtol=1e-12, atol=1e-12)
    y, _ = tt_forward(cores, x)  # the automatically chosen plan
    np.testing.assert_allclose(y, x @ W.T, rtol=1e-12, atol=1e-12)


def test_forward_random_shapes_and_paper_layer():
    rng = np.random.default_rng(2)
    for _ in range(20):
        d = int(rng.integers(1, 5))
        ms = tuple(int(v) for v in rng.integers(1, 5, d))
        ns = tuple(int(v) for v in rng.integers(1, 5, d))
        ranks = tuple(int(v) for v in rng.integers(1, 5, d - 1))
        cores = rand_cores(rng, ms, ns, ranks)
        x = rng.standard_normal((int(rng.integers(1, 9)), math.prod(ns)))
        W = tt_to_dense(cores)
        for plan in all_plans(ms, ns, ranks, len(x)):
            np.testing.assert_allclose(tt_forward(cores, x, plan)[0], x @ W.T, rtol=1e-11, atol=1e-11)
    # the paper's fc1 in float32 at batch 64
    layer = PAPER.layers[0]
    cores = init_tt_cores(layer, rng, np.float32)
    x = rng.random((64, layer.n_in), dtype=np.float32)
    y, cache = tt_forward(cores, x)
    assert cache[0].p in (1, 2, 3) and y.dtype == np.float32
    ref = x.astype(np.float64) @ tt_to_dense([c.astype(np.float64) for c in cores]).T
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


def test_plan_picks_cheapest_and_tt_to_dense_d1():
    plan = tt_plan((4, 4, 2, 16), (7, 4, 2, 16), (1, 16, 16, 16, 1), 64)
    costs = [
        tt_plan((4, 4, 2, 16), (7, 4, 2, 16), (1, 16, 16, 16, 1), 64, p=p, order=o).macs_train(64)
        for p in (1, 2, 3)
        for o in "LR"
    ]
    assert plan.macs_train(64) == min(costs)
    assert plan.macs_fwd_per_sample < 700_000  # well under the 0.97M of a plain left-to-right sweep
    g = np.arange(6.0).reshape(1, 2, 3, 1)
    np.testing.assert_array_equal(tt_to_dense([g]), g[0, :, :, 0])


def _central_fd(f, arr, idx, eps=1e-6):
    old = arr[idx]
    arr[idx] = old + eps
    fp = f()
    arr[idx] = old - eps
    fm = f()
    arr[idx] = old
    return (fp - fm) / (2 * eps)


@pytest.mark.parametrize("ms,ns,ranks", SHAPES[:4])
def test_layer_gradients_finite_differences(ms, ns, ranks):
    """Input and core gradients of a nonlinear scalar of y = W x, for every plan, against central FD."""
    rng = np.random.default_rng(3)
    cores = rand_cores(rng, ms, ns, ranks, scale=0.7)
    x = rng.standard_normal((3, math.prod(ns)))
    t = rng.standard_normal((3, math.prod(ms)))

    def scalar(plan):
        y, _ = tt_forward(cores, x, plan)
        return float(np.sum(np.sin(y) * t))

    for plan in all_plans(ms, ns, ranks, 3):
        y, cache = tt_forward(cores, x, plan)
        dy = np.cos(y) * t
        dx, dcores = tt_backward(cores, cache, dy)
        assert dx.shape == x.shape and [g.shape for g in dcores] == [c.shape for c in cores]

        def f(plan=plan):
            return scalar(plan)

        for idx in [(0, 0), (2, x.shape[1] - 1), (1, x.shape[1] // 2)]:
            assert dx[idx] == pytest.approx(_central_fd(f, x, idx), rel=1e-6, abs=1e-8)
        for k, g in enumerate(cores):
            for _ in range(4):
                idx = tuple(int(rng.integers(0, s)) for s in g.shape)
                assert dcores[k][idx] == pytest.approx(_central_fd(f, g, idx), rel=1e-6, abs=1e-8)
        _, dcores2 = tt_backward(cores, cache, dy, need_dx=False)
        for a, b in zip(dcores, dcores2):
            np.testing.assert_allclose(a, b)


def test_net_gradients_finite_differences_with_penalty():
    """Whole-network gradients (padding, ReLU, padded logits, bias, rank penalty) against central FD."""
    cfg = dataclasses.replace(TINY, train=dataclasses.replace(TINY.train, rank=RankCfg(enabled=True, prior=0.3)))
    net = FloatTTNet(cfg, seed=4, dtype=np.float64)
    rng = np.random.default_rng(4)
    for b in net.biases:
        b[:] = rng.standard_normal(b.shape) * 0.1
    net.rank.lam[(0, 0)][:] = [0.5, 2.0]  # distinct taus
    net.penalty_on = True
    x = rng.random((6, cfg.input_size))
    y = rng.integers(0, cfg.classes, 6)
    loss, grads = net.loss_and_grads(x, y)
    assert loss > net.last_ce > 0

    def f():
        return net.loss(x, y)

    for p, g in zip(net.params(), grads):
        assert g.shape == p.shape
        for flat in rng.choice(p.size, size=min(p.size, 6), replace=False):
            idx = np.unravel_index(flat, p.shape)
            assert g[idx] == pytest.approx(_central_fd(f, p, idx), rel=1e-5, abs=1e-8)
    # padded logit (index 3) gets no gradient: the last bias's padded entry
    assert grads[-1][3] == 0.0


def test_softmax_xent_ignores_padded_logits():
    rng = np.random.default_rng(5)
    z = rng.standard_normal((4, 6))
    y = np.array([0, 1, 2, 1])
    loss, g, pred = softmax_xent(z, y, 3)
    zz = z[:, :3]
    ref = np.mean(np.log(np.exp(zz).sum(1)) - zz[np.arange(4), y])
    assert loss == pytest.approx(ref)
    assert np.all(g[:, 3:] == 0)
    np.testing.assert_allclose(g[:, :3].sum(1), 0, atol=1e-15)
    np.testing.assert_array_equal(pred, zz.argmax(1))


def test_dense_net_gradients_finite_differences():
    net = FloatDenseNet((10, 7, 5), seed=6, classes=4, dtype=np.float64)
    rng = np.random.default_rng(6)
    x = rng.random((5, 9))  # padded to 10
    y = rng.integers(0, 4, 5)
    _, grads = net.loss_and_grads(x, y)

    def f():
        return net.loss(x, y)

    for p, g in zip(net.params(), grads):
        for flat in rng.choice(p.size, size=5, replace=False):
            idx = np.unravel_index(flat, p.shape)
            assert g[idx] == pytest.approx(_central_fd(f, p, idx), rel=1e-5, abs=1e-8)
    assert net.n_params() == 10 * 7 + 7 + 7 * 5 + 5


# ---------------------------------------------------------------------------------------------------------
# init and parameter counts


def test_init_scale_and_param_counts():
    assert tt_init_std(PAPER.layers[0]) == pytest.approx(0.165, abs=5e-4)
    assert tt_init_std(PAPER.layers[1]) == pytest.approx(0.125, abs=5e-4)
    net = FloatTTNet(PAPER, seed=0)
    assert net.n_core_params() == 9664 + 4608
    assert net.n_params() == 14272 + 528
    var = np.var(tt_to_dense([c.astype(np.float64) for c in net.cores[0]]))
    assert var == pytest.approx(2 / 896, rel=0.15)
    assert all(np.all(b == 0) for b in net.biases)
    dense = FloatDenseNet((896, 512, 16), seed=0)
    assert dense.n_params() == 467_472  # PAPER.md counts the 528 biases in
    assert np.var(dense.W[0]) == pytest.approx(2 / 896, rel=0.02)
    # same seed, same net; another seed, another net
    np.testing.assert_array_equal(FloatTTNet(PAPER, seed=0).cores[0][1], net.cores[0][1])
    assert not np.array_equal(FloatTTNet(PAPER, seed=1).cores[0][1], net.cores[0][1])


# ---------------------------------------------------------------------------------------------------------
# optimizers


def test_adam_two_steps_hand_derived():
    lr, b1, b2, eps = 0.1, 0.9, 0.999, 1e-8
    w = np.array([1.0, -2.0])
    g1 = np.array([0.5, -0.02])
    g2 = np.array([-0.2, 0.4])
    opt = Adam([w], lr, b1, b2, eps)
    opt.step([w], [g1])
    # step 1: m = (1-b1) g1, v = (1-b2) g1^2, corrections 1-b1 and 1-b2 -> update lr * g1 / (|g1| + eps)
    w1 = np.array([1.0, -2.0]) - lr * g1 / (np.abs(g1) + eps)
    np.testing.assert_allclose(w, w1, rtol=1e-14)
    opt.step([w], [g2])
    m2 = b1 * (1 - b1) * g1 + (1 - b1) * g2
    v2 = b2 * (1 - b2) * g1**2 + (1 - b2) * g2**2
    w2 = w1 - lr * (m2 / (1 - b1**2)) / (np.sqrt(v2 / (1 - b2**2)) + eps)
    np.testing.assert_allclose(w, w2, rtol=1e-14)
    # the numbers, worked by hand for the first element: m2 = 0.025, v2 = 2.8975e-4,
    # m_hat = 0.025 / 0.19, v_hat = 2.8975e-4 / 0.001999, w2 = 0.9 - 0.1 * m_hat / sqrt(v_hat)
    assert w[0] == pytest.approx(0.9 - 0.1 * (0.025 / 0.19) / math.sqrt(2.8975e-4 / 0.001999), rel=1e-7)
    assert w[0] == pytest.approx(0.865440, abs=1e-6)
    np.testing.assert_allclose(opt.m[0], m2)
    np.testing.assert_allclose(opt.v[0], v2)


def test_sgd_momentum_two_steps():
    w = np.array([1.0])
    opt = SGD([w], lr=0.1, momentum=0.9)
    opt.step([w], [np.array([2.0])])  # v = 2, w = 1 - 0.2
    opt.step([w], [np.array([-1.0])])  # v = 1.8 - 1 = 0.8, w = 0.8 - 0.08
    assert w[0] == pytest.approx(0.72)
    w = np.array([1.0])
    SGD([w], lr=0.1, momentum=0.0).step([w], [np.array([2.0])])
    assert w[0] == pytest.approx(0.8)


# ---------------------------------------------------------------------------------------------------------
# rank adaptation


def test_rank_adapter_lambda_update_prune_and_penalty():
    rng = np.random.default_rng(7)
    cores = rand_cores(rng, (2, 3, 2), (3, 2, 2), (3, 4))
    ad = RankAdapter([cores], prior=0.2, threshold=0.05)
    D0 = 2 * 3 * 1 + 3 * 2 * 4  # slice of bond 0: G_0[..., r] (1*2*3) and G_1[r] (3*2*4)
    M0 = (cores[0][..., 1] ** 2).sum() + (cores[1][1] ** 2).sum()
    assert ad.D[(0, 0)] == D0
    assert ad.lam[(0, 0)][1] == pytest.approx(M0 / (D0 + 1))
    # penalty = prior * sum M / (2 lambda)
    M = ad.sumsq([cores])
    ref = sum(0.2 * np.sum(M[b] / (2 * ad.lam[b])) for b in ad.bonds)
    assert ad.penalty([cores]) == pytest.approx(ref)
    # penalty gradient on G_1 = (tau_left[r_0] + tau_right[r_1]) * w
    grads = [np.zeros_like(c) for c in cores]
    ad.add_penalty_grads([cores], [grads])
    tl, tr = 0.2 / ad.lam[(0, 0)], 0.2 / ad.lam[(0, 1)]
    np.testing.assert_allclose(grads[1], (tl[:, None, None, None] + tr[None, None, None, :]) * cores[1])
    np.testing.assert_allclose(grads[0], tl[None, None, None, :] * cores[0])
    # damped update, then prune slice 2 of bond 1 by shrinking it
    lam_before = ad.lam[(0, 1)].copy()
    cores[1][..., 2] *= 1e-3
    cores[2][2] *= 1e-3
    M = ad.sumsq([cores])[(0, 1)]
    D1 = 3 * 3 * 2 + 2 * 2 * 1
    expect = 0.9 * lam_before + 0.1 * M / (D1 + 1)
    newly = ad.update([cores])
    np.testing.assert_allclose(ad.lam[(0, 1)], expect)
    for _ in range(60):
        newly += ad.update([cores])
    assert (0, 1, 2) in newly
    assert ad.live_ranks() == [(3, 3)]
    ad.zero_pruned([cores])
    assert np.all(cores[1][..., 2] == 0) and np.all(cores[2][2] == 0)
    assert ad.tau((0, 1))[2] == 0  # pruned slices take no penalty
    lam_frozen = ad.lam[(0, 1)][2]
    ad.update([cores])
    assert ad.lam[(0, 1)][2] == lam_frozen  # pruned for good
    # a bond keeps at least keep_min (1) live slices: the one with the largest lambda survives
    cores[0] *= 1e-3
    cores[1] *= 1e-3
    ad.lam[(0, 0)][:] = [2e-3, 3e-3, 2.5e-3]
    ad.update([cores])
    assert ad.live_ranks()[0][0] == 1 and ad.live[(0, 0)][1]
    ad0 = RankAdapter([[c.copy() for c in cores]], prior=0.2, threshold=0.05, keep_min=0)
    ad0.update([cores])
    assert ad0.live_ranks()[0][0] == 0


def test_rank_pruning_recovers_low_rank():
    """A rank-2 target TT matrix fitted by a rank-6 TT with rank adaptation: the live rank falls to <= 3 and
    the fit stays accurate."""
    rng = np.random.default_rng(0)
    ms, ns = (4, 4), (8, 8)
    target = rand_cores(rng, ms, ns, (2,), scale=0.7)
    Wt = tt_to_dense(target)
    cores = rand_cores(rng, ms, ns, (6,), scale=0.3)
    ad = RankAdapter([cores], prior=5e-2, threshold=1e-3)
    opt = Adam(cores, 1e-2)
    warmup = 200
    for t in range(1000):
        x = rng.standard_normal((32, 64))
        y, cache = tt_forward(cores, x)
        _, grads = tt_backward(cores, cache, (y - x @ Wt.T) / len(x), need_dx=False)
        if t >= warmup:
            ad.add_penalty_grads([cores], [grads])
            ad.zero_pruned([grads])
        opt.step(cores, grads)
        if t >= warmup and ad.update([cores]):
            ad.zero_pruned([cores])
            for st in opt.states():
                ad.zero_pruned([st])
    live = ad.live_ranks()[0][0]
    err = np.linalg.norm(tt_to_dense(cores) - Wt) / np.linalg.norm(Wt)
    assert live <= 3, live
    assert err < 0.03, err
    dead = ~ad.live[(0, 0)]
    assert np.all(cores[0][..., dead] == 0) and np.all(cores[1][dead] == 0)
    assert np.all(opt.m[0][..., dead] == 0) and np.all(opt.v[1][dead] == 0)


# ---------------------------------------------------------------------------------------------------------
# training


def _digits():
    try:
        from golden.datasets import load_dataset

        return load_dataset("digits")
    except ImportError:  # pragma: no cover - before golden/datasets.py lands
        from types import SimpleNamespace

        from sklearn.datasets import load_digits

        d = load_digits()
        x, y = (d.data / 16).astype(np.float32), d.target.astype(np.int64)
        p = np.random.RandomState(0).permutation(len(x))
        x, y, n = x[p], y[p], len(x) * 4 // 5
        return SimpleNamespace(train_x=x[:n], train_y=y[:n], test_x=x[n:], test_y=y[n:], classes=10, image_shape=(8, 8))


def test_digits_training_sgd_and_dense():
    ds = _digits()
    h = train_float(DIGITS, ds, seed=0, epochs=8, progress=False)
    assert h["final_test_acc"] >= 0.94, h["test_acc"]
    assert h["train_loss"][-1] < h["train_loss"][0]
    assert len(h["test_acc"]) == 8 and h["live_ranks"][-1] == [(8, 8), ()]
    assert h["core_params"][-1] == 4 * 4 * 8 + 8 * 4 * 4 * 8 + 8 * 4 * 4 + 640
    assert h["time"][-1] > 0 and h["samples_per_s"] > 0
    hd = train_float(DIGITS, ds, seed=0, epochs=5, dense=True, progress=False)
    assert hd["final_test_acc"] >= 0.94, hd["test_acc"]
    # one seed drives everything: a rerun is identical
    h2 = train_float(DIGITS, ds, seed=0, epochs=2, progress=False)
    h3 = train_float(DIGITS, ds, seed=0, epochs=2, progress=False)
    assert h2["train_loss"] == h3["train_loss"] and h2["test_acc"] == h3["test_acc"]


def test_digits_training_with_rank_adaptation():
    ds = _digits()
    rank = RankCfg(enabled=True, prior=1e-3, threshold=1e-3, every=1, warmup_epochs=1)
    cfg = dataclasses.replace(DIGITS, train=dataclasses.replace(DIGITS.train, epochs=6, rank=rank))
    h = train_float(cfg, ds, seed=0, progress=False)
    assert h["final_test_acc"] >= 0.9, h["test_acc"]
    live = h["live_ranks"][-1][0]
    assert all(1 <= r <= 8 for r in live) and sum(live) < 16, h["live_ranks"]  # some slices pruned
    assert h["live_ranks"][0] == [(8, 8), ()]  # nothing pruned during the warm-up epoch
    assert len(h["pruned"]) == 16 - sum(live)
    net = h["net"]
    assert h["core_params"][-1] == net.n_core_params() <= 1920
    for (l, k), alive in net.rank.live.items():
        assert np.all(net.cores[l][k][..., ~alive] == 0) and np.all(net.cores[l][k + 1][~alive] == 0)
    assert h["penalty"][0] == 0.0 and h["penalty"][-1] > 0.0
    # a rank budget between the full and the pruned count ends the prune phase early: penalty off, ranks kept
    budget = (1920 + h["core_params"][-1]) / 2 / 1920
    capped_cfg = dataclasses.replace(
        cfg, train=dataclasses.replace(cfg.train, rank=dataclasses.replace(rank, budget=budget))
    )
    hc = train_float(capped_cfg, ds, seed=0, progress=False)
    assert h["core_params"][-1] < hc["core_params"][-1] <= budget * 1920
    assert hc["penalty"][-1] == 0.0 and hc["core_params"][-2] == hc["core_params"][-1]


def test_measure_speed_smoke():
    assert measure_speed(TINY, batch=8, n=64) > 0
    assert measure_speed(TINY, batch=8, n=64, dense=True, optimizer="adam") > 0
