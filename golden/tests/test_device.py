"""The device protocol (golden/device.py): what a run refuses as a device, the golden machine as one, and the host's
policy, which is the same on every device. verif/test_device.py checks the co-simulated RTL's device."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest

from golden.compiler import compile_network
from golden.config_file import config_from_dict, config_to_dict, load_config
from golden.device import (
    OPERATIONS,
    Device,
    GoldenDevice,
    calibrate,
    calibrate_machine,
    check_device,
    run_now,
    train_batch,
)
from golden.machine import Machine
from golden.program import AccelParams
from golden.train import Run, init_float_params


def _machine(seed: int = 1) -> Machine:
    cfg = load_config("tiny")
    m = Machine(compile_network(cfg), seed)
    m.load_float_params(*init_float_params(cfg, np.random.default_rng(seed)))
    return m


def _batches(m: Machine, n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    b = m.cfg.train.batch
    return m.quantize_input(rng.random((n * b, m.cfg.input_size))), rng.integers(0, m.cfg.classes, n * b)


def test_the_golden_device_is_a_device():
    m = _machine()
    device: Device = GoldenDevice(m)  # mypy checks GoldenDevice against the protocol here
    assert check_device(device) is device


def test_the_operations_are_the_protocols():
    assert set(OPERATIONS) == {
        "upload",
        "train_samples",
        "update",
        "adapt",
        "zero_gradients",
        "refresh_program",
        "rank_update",
        "rank_freeze",
        "infer",
        "sim_cycles",
        "params",
        "device_report",
    }


class _NoFreeze(GoldenDevice):
    """A device without rank_freeze: the attribute lookup fails as for a class that never defined it."""

    def __getattribute__(self, name: str):
        if name == "rank_freeze":
            raise AttributeError(name)
        return super().__getattribute__(name)


class _SyncUpdate(GoldenDevice):
    def update(self) -> None:  # type: ignore[override]  # the mistake under test
        self.machine.update()


def test_a_device_missing_an_operation_is_refused():
    with pytest.raises(TypeError, match=r"_NoFreeze is not a training device .*: it lacks rank_freeze$"):
        check_device(_NoFreeze(_machine()))
    with pytest.raises(TypeError, match=r"it lacks .*adapt.*rank_update"):
        check_device(object())


def test_a_device_with_a_synchronous_operation_is_refused():
    with pytest.raises(TypeError, match=r"_SyncUpdate is not a training device .*: update must be async$"):
        check_device(_SyncUpdate(_machine()))


def test_a_run_refuses_such_a_device_before_it_trains(tmp_path, tiny_data):
    with pytest.raises(TypeError, match="it lacks rank_freeze"):
        Run(load_config("tiny"), tiny_data, 1, tmp_path / "out", 1, make_device=_NoFreeze)
    assert not (tmp_path / "out").exists()


def test_the_host_policy_on_the_golden_device_is_the_machines():
    """calibrate and train_batch over GoldenDevice leave the machine as its own accumulate, update and adapt do."""
    a, b = _machine(), _machine()
    xq, y = _batches(a, 3)
    n = a.cfg.train.batch
    rounds = calibrate_machine(a, xq[:n], y[:n])
    assert rounds > 1  # formats moved: the loop ran
    done = 0
    for _ in range(48):  # the calibration spelled out on the machine
        done += 1
        b.accumulate_batch(xq[:n], y[:n])
        b.zero_gradients()
        if b.adapt() == 0:
            break
    b.calibrate_momentum_formats()
    assert rounds == done
    for u in (1, 2):
        sl = slice(u * n, (u + 1) * n)
        got = run_now(train_batch(GoldenDevice(a), a, xq[sl], y[sl]))
        want = b.train_batch(xq[sl], y[sl])
        assert np.array_equal(got["pred"], want["pred"]) and np.array_equal(got["loss"], want["loss"])
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys() and all(np.array_equal(sa["mem"][k], sb["mem"][k]) for k in sb["mem"])
    assert {k: v for k, v in sa.items() if k != "mem"} == {k: v for k, v in sb.items() if k != "mem"}


class _Counting(GoldenDevice):
    """A device whose operations wait on the event loop, as the co-simulated RTL's do, and count cycles (one per
    operation): the run must take what it reports and train as on the golden device."""

    def __init__(self, machine: Machine):
        super().__init__(machine)
        self.ops = 0

    async def _op(self, name: str, *args):
        await asyncio.sleep(0)
        self.ops += 1
        return await getattr(super(), name)(*args)

    async def train_samples(self, xq: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return await self._op("train_samples", xq, labels)

    async def update(self) -> None:
        await self._op("update")

    async def adapt(self) -> int:
        return await self._op("adapt")

    async def infer(self, xq: np.ndarray) -> np.ndarray:
        return await self._op("infer", xq)

    @property
    def sim_cycles(self) -> int | None:
        return self.ops

    @property
    def params(self) -> AccelParams | None:
        return None

    def device_report(self) -> dict | None:
        return {"ops": self.ops}


def test_a_waiting_device_trains_as_the_golden_one(tmp_path, tiny_data, no_plots):
    d = config_to_dict(load_config("tiny"))
    d["train"]["epochs"] = 1
    cfg = config_from_dict(d)
    golden = Run(cfg, tiny_data, 2, tmp_path / "golden", 1).run()
    counted = Run(cfg, tiny_data, 2, tmp_path / "counted", 1, make_device=_Counting, executor="counting").run()
    for name in ("test_acc", "formats", "saturations_total", "lfsr_draws"):
        assert counted[name] == golden[name], name
    assert "device" not in golden and counted["device"]["ops"] > 0
    assert "sim_cycles_per_s" not in golden["history"][0] and counted["history"][0]["sim_cycles_per_s"] > 0
    with np.load(Path(tmp_path / "golden" / "weights.npz")) as g, np.load(tmp_path / "counted" / "weights.npz") as c:
        assert all(np.array_equal(g[k], c[k]) for k in g.files)
    assert json.loads((tmp_path / "counted" / "report.json").read_text())["executor"] == "counting"


def test_a_coroutine_that_waits_is_not_run_synchronously():
    m = _machine()
    xq, y = _batches(m, 1)
    with pytest.raises(RuntimeError, match="waited"):
        run_now(calibrate(_Counting(m), m, xq, y))
