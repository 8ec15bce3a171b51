"""The vectorised golden machine (golden/machine.py) against the independent element-wise ScalarMachine
(golden/scalar_machine.py, on the fixedpoint-library primitives of golden/fxp_ref.py), on the `tiny` model.

Every observable is compared: all memories, all formats, the max registers (just before each adaptation),
the saturation counters, the LFSR state and draw count, and the predictions."""

from dataclasses import replace

import numpy as np
import pytest

from golden.compiler import compile_network
from golden.config_file import load_config
from golden.datasets import load_dataset
from golden.device import calibrate_machine
from golden.fxp import Fmt
from golden.machine import Machine
from golden.scalar_machine import ScalarMachine
from golden.train import init_float_params

SEED = 0
N_TEST = 32


@pytest.fixture(scope="module")
def tiny():
    cfg = load_config("tiny")
    return cfg, compile_network(cfg), load_dataset("tiny")


def lfsr_of(mach) -> int:
    return mach.stream.state if isinstance(mach, Machine) else mach.lfsr_state


def drawn_of(mach) -> int:
    return mach.stream.drawn if isinstance(mach, Machine) else mach.drawn


def diff(m: Machine, s: ScalarMachine) -> list[str]:
    """Every observable that differs, named."""
    out = []
    a, b = m.state_dict(), s.state_dict()
    if a["mem"].keys() != b["mem"].keys():
        out.append(f"memories {sorted(a['mem'].keys() ^ b['mem'].keys())}")
    for k in sorted(a["mem"].keys() & b["mem"].keys()):
        if not np.array_equal(np.asarray(a["mem"][k]), np.asarray(b["mem"][k])):
            out.append(f"mem {k}")
    for k in ("frac", "maxabs", "sat_total", "samples_seen", "updates"):
        if a[k] != b[k]:
            out.append(k)
    if lfsr_of(m) != lfsr_of(s):
        out.append("lfsr")
    if drawn_of(m) != drawn_of(s):
        out.append("drawn")
    out += [f"sat {k}" for k in m.sat_by_tensor if m.sat_by_tensor[k] != s.sat_by_tensor[k]]
    return out


def watch_adapt(mach) -> list[dict]:
    """Record the max registers each time the machine adapts (they are cleared by it)."""
    seen, orig = [], mach.adapt

    def adapt():
        seen.append(dict(mach.maxabs))
        return orig()

    mach.adapt = adapt
    return seen


def machines(comp, cfg, seed=SEED):
    m, s = Machine(comp, seed), ScalarMachine(comp, seed)
    cores, biases = init_float_params(cfg, np.random.default_rng(seed))
    m.load_float_params(cores, biases)
    s.load_float_params(cores, biases)
    return m, s


def test_tiny_end_to_end(tiny):
    """Same floats and seed into both: calibrate on one batch, train 3 mini-batches, infer 32 test samples."""
    cfg, comp, data = tiny
    b = cfg.train.batch
    m, s = machines(comp, cfg)
    assert diff(m, s) == []
    seen_m, seen_s = watch_adapt(m), watch_adapt(s)

    xq = m.quantize_input(data.train_x[: 4 * b])
    assert np.array_equal(xq, s.quantize_input(data.train_x[: 4 * b]))
    y = data.train_y

    rounds = calibrate_machine(m, xq[:b], y[:b])
    assert s.calibrate(xq[:b], y[:b]) == rounds
    assert seen_m == seen_s and len(seen_m) == rounds
    assert diff(m, s) == [], "after calibration"

    for i in range(1, 4):
        sl = slice(i * b, (i + 1) * b)
        out_m, out_s = m.train_batch(xq[sl], y[sl]), s.train_batch(xq[sl], y[sl])
        assert np.array_equal(out_m["pred"], out_s["pred"])
        np.testing.assert_allclose(out_m["loss"], out_s["loss"], rtol=1e-12)
        assert seen_m[-1] == seen_s[-1] and any(seen_m[-1].values())
        assert diff(m, s) == [], f"after mini-batch {i}"

    xt = m.quantize_input(data.test_x[:N_TEST])
    assert np.array_equal(xt, s.quantize_input(data.test_x[:N_TEST]))
    pred = m.infer(xt)
    assert np.array_equal(pred, s.infer(xt))
    assert diff(m, s) == [], "after inference"
    assert m.sat_total > 0 and drawn_of(m) > 0  # the run exercised saturation and the random stream


class SkipOneDraw(ScalarMachine):
    """A broken machine: its `skip_at`-th draw is lost (the LFSR advances twice)."""

    skip_at = 10

    def _draw(self):
        if self.drawn == self.skip_at:
            super()._draw()
        return super()._draw()


def test_perturbed_machine_is_detected(tiny):
    """From one calibrated state, an intact ScalarMachine matches Machine on a mini-batch; one that skips a
    single LFSR draw does not."""
    cfg, comp, data = tiny
    m = Machine(comp, SEED)
    cores, biases = init_float_params(cfg, np.random.default_rng(SEED))
    m.load_float_params(cores, biases)
    xq = m.quantize_input(data.train_x[:12])
    calibrate_machine(m, xq[:8], data.train_y[:8])
    state, sat0 = m.state_dict(), dict(m.sat_by_tensor)  # per-tensor counters are not in state_dict
    xb, yb = xq[8:12], data.train_y[8:12]

    s = ScalarMachine(comp, SEED)
    s.load_state_dict(state)
    s.sat_by_tensor = dict(sat0)
    m.train_batch(xb, yb)
    s.train_batch(xb, yb)
    assert diff(m, s) == []

    bad = SkipOneDraw(comp, SEED)
    bad.load_state_dict(state)
    bad.sat_by_tensor = dict(sat0)
    bad.skip_at = state["drawn"] + 10
    bad.train_batch(xb, yb)
    found = diff(m, bad)
    assert "lfsr" in found and "drawn" in found
    assert any(f.startswith("mem ") for f in found), found  # the lost draw changed a stored value

    s.mem["W0.0"][3] += 1  # and a single stored word
    assert diff(m, s) == ["mem W0.0"]


def test_wrong_buffer_sharing_is_detected(tiny):
    """The ScalarMachine runs in the compiler's shared ACT bank: a live tensor placed on top of another live one
    (here the forward partial product F0, still read by the backward pass, under Z0) changes the results."""
    cfg, comp, data = tiny
    part = next(n for n in comp.tensors if n.startswith("F0["))
    bad_layout = dict(comp.layout, Z0=comp.layout[part])
    bad = replace(comp, layout=bad_layout)
    m, s = machines(comp, cfg)
    s_bad = ScalarMachine(bad, SEED)
    s_bad.load_state_dict(s.state_dict())
    s_bad.sat_by_tensor = dict(s.sat_by_tensor)
    xq, y = m.quantize_input(data.train_x[:2]), data.train_y[:2]
    for mach in (m, s, s_bad):
        mach.accumulate_batch(xq, y)
    assert diff(m, s) == []
    assert any(f.startswith("mem dG0.") for f in diff(m, s_bad))


def test_unsupported_ops_refused(tiny):
    cfg, _, _ = tiny
    rank_cfg = replace(cfg, train=replace(cfg.train, rank=replace(cfg.train.rank, enabled=True)))
    with pytest.raises(NotImplementedError):
        ScalarMachine(compile_network(rank_cfg), SEED)


# --- discrepancies found (the scalar machine follows SPEC; Machine does not) ------------------------------------


def test_gradient_accumulate_saturates_each_contribution(tiny):
    cfg, comp, data = tiny
    m, s = machines(comp, cfg)
    idx = [int(np.flatnonzero(data.train_y == c)[0]) for c in (0, 1)]  # samples 1 and 6: labels 0, 1
    xq, y = m.quantize_input(data.train_x[idx]), data.train_y[idx]
    m.frac["dB1"] = s.frac["dB1"] = 22  # RQ(E_out, 14 - 22) = e << 8: one sample's error overflows Q16
    m.accumulate_batch(xq, y)
    s.accumulate_batch(xq, y)
    # SPEC: dB1 = [-1, -1, 32767, 32767] (-32768 + 32767 ...); Machine: [32767, -32768, 32767, 32767]
    assert m.mem["dB1"].tolist() == s.mem["dB1"]
    assert m.sat_total == s.sat_total


def test_derive_saturations_counted_per_tensor(tiny):
    """SPEC 2.3: a DERIVE clamp counts for the compute core and globally (it once counted only globally)."""
    cfg, comp, _ = tiny
    m, s = Machine(comp, SEED), ScalarMachine(comp, SEED)
    cores, biases = init_float_params(cfg, np.random.default_rng(SEED))
    cores[0][0].flat[0] = 0.99  # master 127 -> compute RQ(127, 4) = 8 > 7: saturates
    m.load_float_params(cores, biases)
    s.load_float_params(cores, biases)
    assert m.sat_total == s.sat_total >= 1
    assert m.sat_by_tensor["G0.0"] == s.sat_by_tensor["G0.0"]


def test_host_quantisation_rounds_the_exact_value(tiny):
    cfg, comp, _ = tiny
    m, s = Machine(comp, SEED), ScalarMachine(comp, SEED)
    px = np.zeros((1, cfg.input_size), dtype=np.float32)
    px[0, 0] = np.float32(2.0**-8 - 2.0**-32)
    assert m.quantize_input(px)[0, 0] == s.quantize_input(px)[0, 0] == 0
    cores, biases = init_float_params(cfg, np.random.default_rng(SEED))
    cores[0][0].flat[0] = (0.5 - 2.0**-54) * 2.0**-7
    m.load_float_params(cores, biases)
    s.load_float_params(cores, biases)
    assert m.mem["W0.0"][0] == s.mem["W0.0"][0] == 0


def test_compiler_rejects_possible_accumulator_overflow(tiny):
    """SPEC 1.2: with 32-bit input and error formats the gradient contraction dG0.1 (ab,dae->edb) sums 4
    products of two 32-bit words, which can exceed 48 bits: the compiler must refuse the program. (Before it
    did, Machine._contract's float64 einsum returned -2^31 + 2 for the exact -(2^31 - 1) of
    x = [-(2^31-1), 2^31-1], d = [2^31-1, 2^31-2], silently.)"""
    cfg, _, _ = tiny
    wide = replace(cfg, formats=replace(cfg.formats, input=Fmt(32, 0), bwd=Fmt(32, 0), grad=Fmt(32, 0)))
    with pytest.raises(ValueError):
        compile_network(wide)


def test_adam_step_shift_in_range(tiny):
    cfg, _, _ = tiny
    adam = replace(cfg, train=replace(cfg.train, optimizer="adam", lr=1e-4))
    comp = compile_network(adam)
    m = Machine(comp, SEED)
    m.mem["S0.0"][:] = (1 << 31) - 1
    m.run(comp.update, {}, m.stream.take(m._plan_draws(comp.update)[-1])[None, :], observe=False)
