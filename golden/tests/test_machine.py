"""Tests of the bit-exact machine (golden/machine.py) through its public interface: integer TT contraction,
mini-batch vectorisation, adaptive formats, saturation, rank adaptation and determinism (SPEC 2-6)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from golden.compiler import compile_network, core_name
from golden.config_file import config_from_dict, config_to_dict, load_config
from golden.float_tt import init_tt_cores, tt_to_dense
from golden.ir import BANK_MASTER, OpKind
from golden.machine import Machine
from golden.semantics import draw_index

INT_FORMATS = {"core": [4, 0], "master": [8, 0], "bias": [16, 0], "input": [16, 0], "act": [24, 0]}


def _cfg(layers, classes, formats=None, train=None, input_size=None, name="t"):
    d = {
        "name": name,
        "input_size": input_size or int(np.prod(layers[0]["in_shape"])),
        "classes": classes,
        "layers": layers,
    }
    if formats:
        d["formats"] = formats
    if train:
        d["train"] = train
    return config_from_dict(d)


def _layer(in_shape, out_shape, ranks, relu):
    return {"in_shape": list(in_shape), "out_shape": list(out_shape), "ranks": list(ranks), "relu": relu}


def _init_machine(cfg, seed=1, init_seed=0):
    m = Machine(compile_network(cfg), seed)
    rng = np.random.default_rng(init_seed)
    m.load_float_params(
        [init_tt_cores(layer, rng, dtype=np.float64) for layer in cfg.layers],
        [np.zeros(layer.n_out) for layer in cfg.layers],
    )
    return m


def _assert_same_state(a: Machine, b: Machine):
    sa, sb = a.state_dict(), b.state_dict()
    assert sa["mem"].keys() == sb["mem"].keys()
    for k in sa["mem"]:
        assert np.array_equal(sa["mem"][k], sb["mem"][k]), f"memory {k} differs"
    for k in ("frac", "maxabs", "lfsr", "drawn", "sat_total", "samples_seen"):
        assert sa[k] == sb[k], f"{k} differs"


def _final_output(comp) -> str:
    """The logits tensor the infer program leaves (the last op writing the last layer's outputs)."""
    n_out = comp.cfg.layers[-1].n_out
    return [op.out for op in comp.infer if comp.tensors[op.out].size == n_out][-1]


def _run_infer(m: Machine, xq: np.ndarray) -> np.ndarray:
    env = {"X0": xq.astype(np.int64)}
    m.run(m.comp.infer, env, None, observe=False)
    return env[_final_output(m.comp)]


# ---------------------------------------------------------------------------------------------------------
# (1) integer TT contraction == dense reconstruction


def _random_int_net(rng, single: bool):
    """One or two layers, d = 1..3, factors 1..3 and ranks 2..3; the second layer is a TT layer over the first
    one's output factors or a dense layer."""
    d0 = int(rng.integers(1, 4))
    in0 = [int(rng.integers(1, 4)) for _ in range(d0)]
    out0 = [int(rng.integers(1, 4)) for _ in range(d0)]
    out0[-1] = max(out0[-1], 2)
    layers = [_layer(in0, out0, [int(rng.integers(2, 4)) for _ in range(d0 - 1)], True)]
    if single:
        layers[0]["relu"] = False
    else:
        in1 = out0 if rng.random() < 0.6 else [int(np.prod(out0))]
        out1 = [int(rng.integers(1, 4)) for _ in range(len(in1))]
        out1[-1] = max(out1[-1], 2)
        layers.append(_layer(in1, out1, [int(rng.integers(2, 4)) for _ in range(len(in1) - 1)], False))
    return layers


@pytest.mark.parametrize("seed", range(10))
def test_integer_contraction_equals_dense_product(seed):
    """With integer formats (F = 0 everywhere, 24-bit activations) no op shifts or saturates, so the machine's
    output must equal the dense integer product W_L relu(... W_1 x) with W_l reconstructed from the cores."""
    rng = np.random.default_rng(seed)
    layers = _random_int_net(rng, single=seed % 4 == 3)
    cfg = _cfg(layers, classes=2, formats=INT_FORMATS)
    comp = compile_network(cfg)
    m = Machine(comp, seed=3)
    cores = [[rng.integers(-3, 4, size=layer.core_shape(k)) for k in range(layer.d)] for layer in cfg.layers]
    biases = [rng.integers(-5, 6, size=layer.n_out) for layer in cfg.layers]
    m.load_float_params(
        [[c.astype(np.float64) for c in layer] for layer in cores], [b.astype(np.float64) for b in biases]
    )
    x = rng.integers(-3, 4, size=(5, cfg.padded_input))
    h = x
    for layer, lc, b in zip(cfg.layers, cores, biases):
        w = tt_to_dense(lc)  # integer cores -> exact integer W (prod m, prod n)
        h = h @ w.T + b
        if layer.relu:
            h = np.maximum(h, 0)
    assert np.abs(h).max() < 2**23
    sat0 = m.sat_total
    got = _run_infer(m, x)
    assert got.dtype.kind == "i"
    np.testing.assert_array_equal(got, h)
    assert m.sat_total == sat0
    np.testing.assert_array_equal(m.infer(x), np.argmax(h[:, : cfg.classes], axis=1))


# ---------------------------------------------------------------------------------------------------------
# (2) the vectorised mini-batch == the accelerator's sample-by-sample execution


def _variants():
    tiny = config_to_dict(load_config("tiny"))
    rank = copy.deepcopy(tiny)
    rank["train"]["rank"] = {"enabled": True, "prior": 1e-2, "warmup_epochs": 0}
    sat = copy.deepcopy(tiny)  # gradient buffers far too fine: the batch sums saturate sample by sample
    sat["formats"] = {"grad": [16, 26], "frac_max": 30}
    nomom = copy.deepcopy(tiny)
    nomom["train"]["momentum"] = 0.0
    digits = config_to_dict(load_config("digits"))
    return {"tiny": tiny, "rank": rank, "saturating": sat, "no-momentum": nomom, "digits": digits}


@pytest.mark.parametrize("variant", list(_variants()))
def test_batch_equals_sample_by_sample(variant):
    cfg = config_from_dict(_variants()[variant])
    B = cfg.train.batch
    rng = np.random.default_rng(7)
    a, b = _init_machine(cfg, seed=11), _init_machine(cfg, seed=11)
    sat_seen = 0
    for _step in range(3):
        x = a.quantize_input(rng.random((B, cfg.input_size)))
        y = rng.integers(0, cfg.classes, size=B)
        out_a = a.train_batch(x, y)
        losses, preds = [], []
        for i in range(B - 1):
            o = b.accumulate_batch(x[i : i + 1], y[i : i + 1])
            losses.append(o["loss"]), preds.append(o["pred"])
        o = b.train_batch(x[B - 1 :], y[B - 1 :])  # the last sample, then the same update and shift control
        losses.append(o["loss"]), preds.append(o["pred"])
        np.testing.assert_array_equal(out_a["loss"], np.concatenate(losses))
        np.testing.assert_array_equal(out_a["pred"], np.concatenate(preds))
        if cfg.train.rank.enabled:
            a.rank_update(), b.rank_update()
        _assert_same_state(a, b)
        sat_seen = a.sat_total
    if variant == "saturating":
        assert sat_seen > 0


# ---------------------------------------------------------------------------------------------------------
# (3) adaptive formats (SPEC 4.2)


def test_adapt_rule_at_the_thresholds():
    cfg = load_config("tiny")
    m = _init_machine(cfg)
    lo_f, hi_f = cfg.formats.frac_min, cfg.formats.frac_max
    names = sorted(m.maxabs)
    assert names, "tiny has adaptive tensors"

    def cases(width):
        full = 1 << (width - 1)
        hi, lo = (9 * full) // 10, (3 * full) // 10
        mid = (lo_f + hi_f) // 2
        return [
            (mid, 0, mid),
            (mid, hi, mid),
            (mid, hi + 1, mid - 1),
            (mid, full, mid - 1),
            (mid, lo, mid),
            (mid, lo - 1, mid + 1),
            (mid, 1, mid + 1),
            (lo_f, full, lo_f),
            (hi_f, 1, hi_f),
            (lo_f, 1, lo_f + 1),
            (hi_f, full, hi_f - 1),
            (lo_f, 0, lo_f),
            (hi_f, 0, hi_f),
        ]

    n_cases = len(cases(16))
    for rot in range(n_cases):
        before, expect = {}, {}
        for i, n in enumerate(names):
            f, mx, f_new = cases(m.comp.tensors[n].fmt.width)[(i + rot) % n_cases]
            m.frac[n], m.maxabs[n] = f, mx
            before[n], expect[n] = f, f_new
        changed = m.adapt()
        assert {n: m.frac[n] for n in names} == expect
        assert changed == sum(expect[n] != before[n] for n in names)
        assert all(m.maxabs[n] == 0 for n in names)


def _adapt_cfg():
    d = config_to_dict(load_config("tiny"))
    d["formats"].update({"frac_min": 6, "frac_max": 12})  # act starts at 8, bwd and grad at 12
    return config_from_dict(d)


def _forward_tensors(comp):
    return sorted({op.out for op in comp.infer if comp.tensors[op.out].adaptive})


@pytest.mark.parametrize("pixel,direction", [(255.0, "down"), (1 / 128, "up"), (0.0, "keep")])
def test_formats_follow_the_data(pixel, direction):
    """Huge inputs saturate every forward tensor: F falls to frac_min and stays; inputs of one LSB leave them
    small: F rises to frac_max and stays; all-zero inputs give all-zero tensors, which keep their format."""
    cfg = _adapt_cfg()
    m = Machine(compile_network(cfg), seed=2)
    layers = cfg.layers
    m.load_float_params(
        [[np.full(l.core_shape(k), 0.5) for k in range(l.d)] for l in layers], [np.zeros(l.n_out) for l in layers]
    )
    fwd = _forward_tensors(m.comp)
    assert fwd
    x = m.quantize_input(np.full((4, cfg.input_size), pixel))
    y = np.arange(4) % cfg.classes
    start = {n: m.frac[n] for n in fwd}
    history = [start]
    for _ in range(8):
        m.accumulate_batch(x, y)
        m.adapt()
        history.append({n: m.frac[n] for n in fwd})
        for n, t in m.comp.tensors.items():
            if t.adaptive:
                assert cfg.formats.frac_min <= m.frac[n] <= cfg.formats.frac_max, n
    for n in fwd:
        seq = [h[n] for h in history]
        if direction == "down":
            assert all(b == a - 1 or b == a == cfg.formats.frac_min for a, b in zip(seq, seq[1:])), (n, seq)
            assert seq[-1] == cfg.formats.frac_min
        elif direction == "up":
            assert all(b == a + 1 or b == a == cfg.formats.frac_max for a, b in zip(seq, seq[1:])), (n, seq)
            assert seq[-1] == cfg.formats.frac_max
        else:
            assert seq == [start[n]] * len(seq), (n, seq)


# ---------------------------------------------------------------------------------------------------------
# (4) saturation is counted and never wraps (SPEC 2.3)


def test_contraction_saturates_exactly():
    """A dense layer with 8-bit integer activations: the output is clip(W x) and every clamp is counted."""
    rng = np.random.default_rng(5)
    cfg = _cfg([_layer([16], [6], [], False)], classes=6, formats={**INT_FORMATS, "act": [8, 0]})
    m = Machine(compile_network(cfg), seed=1)
    w = rng.integers(-8, 8, size=(1, 6, 16, 1))
    m.load_float_params([[w.astype(np.float64)]], [np.zeros(6)])
    x = rng.integers(-20, 21, size=(9, 16))
    exact = x @ tt_to_dense([w]).T
    assert (exact > 127).any() and (exact < -128).any()
    sat0 = m.sat_total
    got = _run_infer(m, x)
    np.testing.assert_array_equal(got, np.clip(exact, -128, 127))
    assert m.sat_total - sat0 == int(((exact > 127) | (exact < -128)).sum())


def _in_range(m: Machine):
    for name, q in m.mem.items():
        t = m.comp.tensors[name]
        lo, hi = -(1 << (t.fmt.width - 1)), (1 << (t.fmt.width - 1)) - 1
        assert q.min(initial=0) >= lo and q.max(initial=0) <= hi, f"{name} left its {t.fmt.width}-bit range"


def test_huge_learning_rate_saturates_and_never_wraps():
    d = config_to_dict(load_config("tiny"))
    d["train"]["lr"] = 1000.0
    cfg = config_from_dict(d)
    m = _init_machine(cfg, seed=4)
    rng = np.random.default_rng(3)
    steps = [
        op
        for op in m.comp.update
        if op.kind == OpKind.AXPBY and m.comp.tensors[op.out].bank == BANK_MASTER and op.out == op.ins[0]
    ]
    assert steps, "the update program has SGD steps on the master cores"
    sat_prev = m.sat_total
    forced_total = 0
    for _ in range(3):
        x = m.quantize_input(rng.random((cfg.train.batch, cfg.input_size)))
        m.train_batch(x, rng.integers(0, cfg.classes, size=cfg.train.batch))
        _in_range(m)
        forced = 0
        for op in steps:
            w, v = op.ins
            t = m.comp.tensors[w]
            step = cfg.train.lr / cfg.train.batch * m.mem[v] * 2.0 ** -m.frac[v]  # what the step subtracts
            big = np.abs(step) > 4.0  # far beyond the master range [-1, 1): must land on a rail, never wrap
            want = np.where(step > 0, -(1 << (t.fmt.width - 1)), (1 << (t.fmt.width - 1)) - 1)
            np.testing.assert_array_equal(m.mem[w][big], want[big])
            forced += int(big.sum())
        assert m.sat_total >= sat_prev + forced  # each of those is a counted clamp
        sat_prev = m.sat_total
        forced_total += forced
        for l, layer in enumerate(cfg.layers):  # DERIVE: nearest, then saturate to the compute format
            for k in range(layer.d):
                g, wname = core_name(l, k), f"W{l}.{k}"
                s = m.frac[wname] - m.frac[g]
                fc = m.comp.tensors[g].fmt
                want = np.clip((m.mem[wname] + (1 << (s - 1))) >> s, -(1 << (fc.width - 1)), (1 << (fc.width - 1)) - 1)
                np.testing.assert_array_equal(m.mem[g], want)
    assert forced_total > 0


# ---------------------------------------------------------------------------------------------------------
# (6) determinism


def _lfsr_reference(seed: int, n: int) -> list[int]:
    """SPEC 3 from its text: Galois LFSR 0x80200003, seeded with SEED ^ 0xA5A5A5A5, 8 steps per draw."""
    s = (seed ^ 0xA5A5A5A5) & 0xFFFFFFFF or 1
    out = []
    for _ in range(n):
        for _ in range(8):
            s = (s >> 1) ^ (0x80200003 if s & 1 else 0)
        out.append(s & 0xFF)
    return out


def test_same_seed_same_state_different_seed_different_stream():
    cfg = load_config("tiny")
    rng = np.random.default_rng(9)
    batches = [
        (rng.random((cfg.train.batch, cfg.input_size)), rng.integers(0, 4, size=cfg.train.batch)) for _ in range(3)
    ]
    machines = [_init_machine(cfg, seed=s) for s in (21, 21, 22)]
    for m in machines:
        for x, y in batches:
            m.train_batch(m.quantize_input(x), y)
    _assert_same_state(machines[0], machines[1])
    a, c = machines[0].state_dict(), machines[2].state_dict()
    assert a["lfsr"] != c["lfsr"]
    assert any(not np.array_equal(a["mem"][k], c["mem"][k]) for k in a["mem"]), "stochastic rounding differs"
    s21 = Machine(compile_network(cfg), 21).stream.take(64).tolist()
    s22 = Machine(compile_network(cfg), 22).stream.take(64).tolist()
    assert s21 == _lfsr_reference(21, 64) and s22 == _lfsr_reference(22, 64)
    assert s21 != s22


# ---------------------------------------------------------------------------------------------------------
# disagreements between the machine and SPEC.md (see the reasons)


def test_global_saturation_counter_saturates_at_32_bits():
    cfg = _cfg([_layer([16], [6], [], False)], classes=6, formats={**INT_FORMATS, "act": [8, 0]})
    m = Machine(compile_network(cfg), seed=1)
    m.load_float_params([[np.full((1, 6, 16, 1), 7.0)]], [np.zeros(6)])
    st = m.state_dict()
    st["sat_total"] = 2**32 - 2
    m.load_state_dict(st)
    _run_infer(m, np.full((2, 16), 20))  # 12 clamped outputs
    assert m.sat_total == 2**32 - 1


def test_lambda_update_follows_spec():
    d = config_to_dict(load_config("tiny"))
    d["layers"][0]["ranks"] = [4]
    d["train"]["rank"] = {"enabled": True, "prior": 1e-2}
    cfg = config_from_dict(d)
    m = _init_machine(cfg, seed=1)
    rng = np.random.default_rng(0)
    (op,) = m.comp.rank_update
    lam, (w_left, w_right, _, _) = op.out, op.ins
    for _ in range(40):
        m.train_batch(m.quantize_input(rng.random((8, 16))), rng.integers(0, 4, size=8))
        a = m.mem[w_left].reshape(m.comp.tensors[w_left].shape)
        b = m.mem[w_right].reshape(m.comp.tensors[w_right].shape)
        sumsq = (a * a).sum(axis=(0, 1, 2)) + (b * b).sum(axis=(1, 2, 3))
        inv_d = round(2**24 / (a[..., 0].size + b[0].size + 1))
        fw = m.frac[w_left]
        q = (sumsq * inv_d + 2 ** (2 * fw - 1)) >> (2 * fw)  # mean square, 24 fraction bits, nearest
        want = np.clip((58982 * np.array(m.lambdas(lam)) + 6554 * q + 2**15) >> 16, -(2**31), 2**31 - 1)
        m.rank_update()
        np.testing.assert_array_equal(m.lambdas(lam), want)


def test_draw_index_follows_the_element_order():
    """SPEC 5.1 by hand: a 2 x 3 output stored row-major over ij, computed in order ji: element (i, j) at address
    3 i + j takes draw 2 j + i."""
    sizes = {"i": 2, "j": 3}
    assert draw_index("ij", "ji", sizes).tolist() == [0, 2, 4, 1, 3, 5]
    assert draw_index("ij", "ij", sizes).tolist() == [0, 1, 2, 3, 4, 5]
    # three indices, order kij over layout ijk (sizes 2, 2, 2): (i, j, k) takes draw 4 k + 2 i + j
    cube = {"i": 2, "j": 2, "k": 2}
    assert draw_index("ijk", "kij", cube).tolist() == [0, 4, 1, 5, 2, 6, 3, 7]
