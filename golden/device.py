"""The training device and the host's policy on top of it.

A device executes what the accelerator executes: it takes the golden machine's state (`upload`), runs the
train_sample program for each sample of a mini-batch, the update program, the shift-control step, the rank programs,
inference, and re-assembles its program when the formats or the step change. `Device` lists these operations; the
golden Machine (`GoldenDevice`) and the co-simulated RTL (verif/rtl_device.py) implement them, with async methods
because the RTL's operations wait on the simulator.

The host decides the rest, and that is written here once for every device: a mini-batch is its samples, then the
update, then shift control; calibration repeats a batch whose gradients it discards until the formats settle; a
batch's loss comes from p[label]. Bookkeeping (formats, live ranks, the learning-rate schedule, quantising the
input) stays on the golden Machine, which the host holds beside the device.
"""

from __future__ import annotations

import inspect
from collections.abc import Coroutine
from typing import Any, Protocol, TypeVar

import numpy as np

from golden.machine import Machine
from golden.program import AccelParams
from golden.semantics import sce_loss

CALIBRATION_ROUNDS = 48  # at most: a batch whose formats never settle must not hold the run
T = TypeVar("T")


class Device(Protocol):
    """The operations a training device executes. Every one also leaves the golden machine the host holds in the
    state the device is in, so that the host's bookkeeping reads the device's state from it."""

    async def upload(self) -> None:
        """Make the device's state the golden machine's: program, persistent tensors, statistics, random stream."""

    async def train_samples(self, xq: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The train_sample program once per sample, in order (the gradients accumulate): per sample the prediction
        and p[label]."""
        ...

    async def update(self) -> None:
        """The update program, at the step the golden machine's schedule gives for this update."""

    async def adapt(self) -> int:
        """Shift control (SPEC 4.2) on the max registers, which restart at 0: how many formats changed."""
        ...

    async def zero_gradients(self) -> None:
        """Every gradient sum to 0."""

    async def refresh_program(self) -> None:
        """Re-assemble for the golden machine's current formats, step and rank constants."""

    async def rank_update(self) -> None:
        """SPEC 5.6: the rank_update program, then rank_prune."""

    async def rank_freeze(self) -> None:
        """The end of the prune phase: every tau 0."""

    async def infer(self, xq: np.ndarray) -> np.ndarray:
        """The infer program per sample: the predicted classes."""
        ...

    @property
    def sim_cycles(self) -> int | None:
        """Accelerator cycles simulated so far; None for a device that does not count them."""
        ...

    @property
    def params(self) -> AccelParams | None:
        """The accelerator's build parameters; None for a device that is not an accelerator build."""
        ...

    def device_report(self) -> dict | None:
        """What report.json records of the device (cycles per program, build); None: nothing."""
        ...


# the names of Device's operations, for check_device
OPERATIONS = tuple(
    name
    for name, member in vars(Device).items()
    if not name.startswith("_") and (callable(member) or isinstance(member, property))
)


def check_device(device: Any) -> Device:
    """`device`, once sure it has every operation of `Device`, the async ones async: a device that lacks one would
    otherwise fail only when the run first needs it, maybe hours in. TypeError naming what is wrong."""
    missing = [name for name in OPERATIONS if not hasattr(device, name)]
    not_async = [
        name
        for name in OPERATIONS
        if name not in missing
        and inspect.iscoroutinefunction(vars(Device)[name])
        and not inspect.iscoroutinefunction(getattr(device, name))
    ]
    problems = ([f"it lacks {', '.join(missing)}"] if missing else []) + (
        [f"{', '.join(not_async)} must be async"] if not_async else []
    )
    if problems:
        raise TypeError(
            f"{type(device).__name__} is not a training device (golden/device.py Device): {'; '.join(problems)}"
        )
    return device


class GoldenDevice:
    """The golden Machine as the device: each operation is the machine's own, run at once (no coroutine of it ever
    waits), so a golden run is as fast as the machine."""

    def __init__(self, machine: Machine):
        self.machine = machine

    async def upload(self) -> None:
        """The machine is the state."""

    async def train_samples(self, xq: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        out = self.machine.accumulate_batch(xq, labels)  # the batch vectorised, bit-exact with sample by sample
        return out["pred"], out["p_label"]

    async def update(self) -> None:
        self.machine.update()

    async def adapt(self) -> int:
        return self.machine.adapt()

    async def zero_gradients(self) -> None:
        self.machine.zero_gradients()

    async def refresh_program(self) -> None:
        """The machine reads the formats and the step as it runs: nothing to assemble."""

    async def rank_update(self) -> None:
        self.machine.rank_update()

    async def rank_freeze(self) -> None:
        self.machine.rank_freeze()

    async def infer(self, xq: np.ndarray) -> np.ndarray:
        return self.machine.infer(xq)

    @property
    def sim_cycles(self) -> int | None:
        return None

    @property
    def params(self) -> AccelParams | None:
        return None

    def device_report(self) -> dict | None:
        return None


# --- the host's policy, on any device ---------------------------------------------------------------------------
def batch_loss(golden: Machine, p_label: np.ndarray) -> np.ndarray:
    """Each sample's softmax cross-entropy from its p[label] in the output error's format."""
    return sce_loss(np.asarray(p_label), golden.frac["E_out"])


async def accumulate_batch(device: Device, golden: Machine, xq: np.ndarray, labels: np.ndarray) -> dict:
    """The samples of a mini-batch, their gradients summed: per sample the loss and the prediction."""
    pred, p_label = await device.train_samples(xq, labels)
    return {"loss": batch_loss(golden, p_label), "pred": pred}


async def train_batch(device: Device, golden: Machine, xq: np.ndarray, labels: np.ndarray) -> dict:
    """One mini-batch: its samples, the update, shift control."""
    out = await accumulate_batch(device, golden, xq, labels)
    await device.update()
    await device.adapt()
    return out


async def calibrate(
    device: Device, golden: Machine, xq: np.ndarray, labels: np.ndarray, rounds: int = CALIBRATION_ROUNDS
) -> int:
    """Settle the adaptive formats on one batch before training: run it, discard the gradients, adapt, until no
    format moves (at most `rounds` times); then each momentum's format from its gradient's (SPEC 5.5). How many
    rounds ran."""
    done = 0
    for _ in range(rounds):
        done += 1
        await device.train_samples(xq, labels)
        await device.zero_gradients()
        if await device.adapt() == 0:
            break
    golden.calibrate_momentum_formats()
    await device.refresh_program()
    return done


def run_now(coro: Coroutine[Any, Any, T]) -> T:
    """The result of a coroutine that never waits, such as the host's policy on a GoldenDevice: run without an event
    loop, for synchronous callers. RuntimeError if it waits (its device is not the golden one)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError("the coroutine waited: only a device whose operations never wait runs synchronously")


def calibrate_machine(machine: Machine, xq: np.ndarray, labels: np.ndarray, rounds: int = CALIBRATION_ROUNDS) -> int:
    """`calibrate` on the golden machine itself, synchronously (tests, scripts)."""
    return run_now(calibrate(GoldenDevice(machine), machine, xq, labels, rounds))
