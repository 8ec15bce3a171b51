"""The co-simulated accelerator as a training device, checked in lock-step against the golden machine.

`RtlDevice` is a training device (golden/device.py Device): every sample, update and inference runs on the RTL
through the host driver (verif/host.py), and the same work runs on a golden Machine beside it. The host's
decisions are golden/device.py's and the golden machine's: how a mini-batch and the calibration go, the step size
of each update (Machine.host_step), the shift-control rule applied to the max |x| registers it reads back
(Machine.adapt), and when to run the rank update (SPEC 5.6: the rank_update and rank_prune programs, whose
lambdas, masks and taus stay in the state bank) -- the accelerator executes, the host schedules.

Checks (`check`): "every" runs each program op by op (the host plants an END after the op, runs it, restores
the word) and compares every op's output with the golden machine's trace (Machine.op_trace), plus all of
"sample"'s checks; "sample" (default) compares after every sample the prediction, p[label], the random
stream and every persistent tensor the sample wrote (gradients), and after every update every persistent
tensor and every statistics slot; "batch" compares predictions after every sample and the full state after
every update; "off" compares nothing (the golden machine still runs: it is the state a checkpoint saves).
A difference raises `Mismatch` naming the sample, the program (and with "every" the op), the tensor and the
first differing element.
"""

from __future__ import annotations

import numpy as np

from golden import program as P
from golden.arch import BANKS, KIND_END, Reg
from golden.ir import OpKind
from golden.isa.timing import MEM_LAT
from golden.machine import Machine
from verif.host import AccelHost, Backdoor, SampleStream

CHECKS = ("every", "sample", "batch", "off")


class Mismatch(AssertionError):
    pass


class RtlDevice:
    def __init__(
        self,
        host: AccelHost,
        backdoor: Backdoor,
        params: P.AccelParams,
        golden: Machine,
        check: str = "sample",
        mem_lat: int = MEM_LAT,
    ):
        if check not in CHECKS:
            raise ValueError(f"check {check!r}: expected one of {CHECKS}")
        self.host, self.backdoor, self.params, self.golden, self.check = host, backdoor, params, golden, check
        self.comp = golden.comp
        P.check_fits(self.comp, params)
        self.image: P.Image | None = None
        self.image_rank_constants: tuple[float, float] | None = None  # those the loaded image's RANK ops carry
        self.samples = 0  # samples run on the RTL (for messages)
        self.cycles = {prog: 0 for prog in P.PROGRAMS}
        self.runs = {prog: 0 for prog in P.PROGRAMS}
        self.mem_lat = mem_lat  # the top's bank read latency (MEM_PIPE), for the cycle model
        self._model: tuple[P.Image | None, dict[str, int]] = (None, {})  # (the image, its cycles per program)
        t = self.comp.tensors
        self.persistent = [n for n in self.comp.layout if not t[n].per_sample]
        self.sample_writes = sorted({op.out for op in self.comp.train_sample if not t[op.out].per_sample})
        # generous bounds: MACs + 64 cycles per element-wise element + per-op overhead; a rank op reads both cores
        self.budget = {
            prog: 4
            * sum(
                max(op.macs, t[op.out].size)
                + 64
                + (t[op.ins[0]].size + t[op.ins[1]].size + 100 * t[op.ins[3]].size if op.kind == OpKind.RANK else 0)
                for op in getattr(self.comp, prog)
            )
            + 1000
            for prog in P.PROGRAMS
        }

    def recompiled(self, golden: Machine) -> RtlDevice:
        """A device on the same RTL for another golden machine (a network recompiled, golden/compact.py); its
        upload() makes the RTL's state that machine's."""
        return RtlDevice(self.host, self.backdoor, self.params, golden, check=self.check, mem_lat=self.mem_lat)

    @property
    def loaded(self) -> P.Image:
        """The program image on the RTL (upload or refresh_program writes it)."""
        if self.image is None:
            raise RuntimeError("no program on the device: upload() first")
        return self.image

    # --- state transfer -----------------------------------------------------------------------------------
    async def refresh_program(self) -> None:
        """Re-assemble for the current formats and step size; write the words that changed."""
        img = P.assemble(
            self.comp,
            self.params,
            self.golden.frac,
            host_step=self.golden.host_step(),
            rank_constants=self.golden.rank_constants,
        )
        await self.host.write_program(img.words, None if self.image is None else self.image.words)
        self.image = img
        self.image_rank_constants = self.golden.rank_constants

    async def upload(self) -> None:
        """Make the RTL's state the golden machine's: program, every persistent tensor, statistics, stream."""
        await self.refresh_program()
        for name in self.persistent:
            bank, base = self.comp.layout[name]
            await self.host.write_bank(bank, base, self.golden.mem[name])
        for name, slot in self.loaded.slots.items():
            await self.host.write_stat(slot, self.golden.sat_by_tensor[name], self.golden.maxabs.get(name, 0))
        await self.host.set_lfsr_state(self.golden.stream.state)
        await self.compare(self.persistent, "upload")

    # --- checks -------------------------------------------------------------------------------------------
    async def compare(self, names, where: str) -> None:
        for name in names:
            await self.compare_tensor(name, self.golden.mem[name], where)
        state = await self.host.rd(Reg.LFSR)
        if state != self.golden.stream.state:
            raise Mismatch(f"{where}: random stream state RTL {state:#010x}, golden {self.golden.stream.state:#010x}")

    async def compare_tensor(self, name: str, want: np.ndarray, where: str) -> None:
        bank, base = self.comp.layout[name]
        want = np.asarray(want).reshape(-1)
        got = np.array(self.backdoor.read(bank, base, len(want)), dtype=np.int64)
        bad = np.flatnonzero(got != want)
        if bad.size:
            i = int(bad[0])
            raise Mismatch(
                f"{where}: tensor {name} differs in {bad.size} of {len(want)} elements; first at "
                f"index {i}: RTL {got[i]}, golden {want[i]}"
            )

    async def compare_stats(self, where: str) -> None:
        for name, slot in self.loaded.slots.items():
            sat, mx = await self.host.read_stat(slot)
            want = (self.golden.sat_by_tensor[name], self.golden.maxabs.get(name, 0))
            if (sat, mx) != want:
                raise Mismatch(
                    f"{where}: statistics of {name} (slot {slot}): RTL saturations {sat}, max {mx}; "
                    f"golden {want[0]}, {want[1]}"
                )

    # --- programs -----------------------------------------------------------------------------------------
    def _golden(self, fn, *args):
        """Run the golden machine's `fn`; with check "every", also return its op trace."""
        g = self.golden
        g.op_trace = [] if self.check == "every" else None
        try:
            return fn(*args), g.op_trace
        finally:
            g.op_trace = None

    async def _run(self, prog: str, where: str, label: int | None = None, trace: list | None = None) -> None:
        """Run program `prog` on the RTL; given the golden op trace, op by op, checking each op's output."""
        c0 = await self.host.rd(Reg.CYCLES)
        if trace is None:
            await self.host.run(self.loaded.entry[prog], self.budget[prog], label)
        else:
            records = [r for r in self.loaded.records if r.program == prog]
            assert len(records) == len(trace), (prog, len(records), len(trace))
            for k, (rec, (op, want)) in enumerate(zip(records, trace)):
                nxt = records[k + 1].pc if k + 1 < len(records) else None  # the last op is followed by END
                if nxt is not None:
                    await self.host.write_program([P.header(KIND_END)], base=nxt)
                await self.host.run(rec.pc, self.budget[prog], label)
                if nxt is not None:
                    await self.host.write_program([self.loaded.words[nxt]], base=nxt)
                await self.compare_tensor(op.out, want, f"{where} op {rec.index} ({op.kind} -> {op.out})")
        busy = (await self.host.rd(Reg.CYCLES) - c0) & 0xFFFF_FFFF
        if trace is None:  # a whole run: the cycle model (golden/cost.py) must be exact
            want = self.model_cycles(prog)
            assert busy == want, f"{where}: {prog} took {busy} cycles, the cycle model says {want}"
        self.cycles[prog] += busy
        self.runs[prog] += 1

    def model_cycles(self, prog: str) -> int:
        """golden/program.py program_cycles of `prog` in the current image (cached per image)."""
        img = self.loaded
        if self._model[0] is not img:
            self._model = (img, {p: P.program_cycles(img, p, self.mem_lat)["cycles"] for p in P.PROGRAMS})
        return self._model[1][prog]

    async def train_sample(self, x: np.ndarray, label: int) -> tuple[int, int]:
        """One sample on the RTL and on the golden machine: (pred, p_label), both checked."""
        bank, base = self.comp.layout["X0"]
        await self.host.write_bank(bank, base, x)
        ref, trace = self._golden(self.golden.accumulate_batch, x[None, :], np.array([label]))
        where = f"sample {self.samples} (train_sample)"
        await self._run("train_sample", where, int(label), trace)
        pred, p_label = await self.host.rd(Reg.PRED), await self.host.rd(Reg.P_LABEL)
        self.samples += 1
        if self.check != "off" and (pred, p_label) != (int(ref["pred"][0]), int(ref["p_label"][0])):
            raise Mismatch(
                f"{where}: RTL pred {pred} p[label] {p_label}, golden {int(ref['pred'][0])} {int(ref['p_label'][0])}"
            )
        if self.check in ("every", "sample"):
            await self.compare(self.sample_writes, where)
        return pred, p_label

    async def train_samples(self, xq: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """train_sample for each sample in turn: the predictions and p[label]s."""
        out = [await self.train_sample(x, int(y)) for x, y in zip(xq, labels)]
        return np.array([pred for pred, _ in out]), np.array([p for _, p in out])

    async def stream_samples(
        self, stream: SampleStream, xq: np.ndarray, labels: np.ndarray, release=None
    ) -> tuple[int, int]:
        """Samples through the AXI4-Stream input: the host queues all the frames and allows len(xq) of them
        (`release`, if given, is awaited instead of that allow: a test's own checks, then the allow); each frame
        starts train_sample by itself, and the stream waits while a run is busy. Checked when the last run ends:
        the busy cycles (the cycle model's, times the samples), the last prediction and p[label], and (unless
        check is "off") the gradients all the samples accumulated and the random stream. Returns (pred,
        p_label) of the last sample."""
        bank, base = self.comp.layout["X0"]
        n = len(xq)
        await self.host.stream_setup(
            (BANKS.index(bank) << self.params.bank_shift) + base, xq.shape[1], self.loaded.entry["train_sample"]
        )
        c0 = await self.host.rd(Reg.CYCLES)
        for x, y in zip(xq, labels):
            stream.send(stream.frame(x, y))
        await (release() if release else self.host.allow_frames(n))
        await stream.wait(n * (self.budget["train_sample"] + 100 * xq.shape[1]))
        await self.host.wait_stream_run(self.budget["train_sample"])
        busy = (await self.host.rd(Reg.CYCLES) - c0) & 0xFFFF_FFFF
        assert busy == n * self.model_cycles("train_sample"), (
            f"{n} streamed samples took {busy} cycles, the cycle model says {n} x {self.model_cycles('train_sample')}"
        )
        left = await self.host.rd(Reg.STREAM_FRAMES)
        assert left == 0, f"{left} of {n} frames not taken"
        for x, y in zip(xq, labels):
            ref, _ = self._golden(self.golden.accumulate_batch, x[None, :], np.array([y]))
        where = f"samples {self.samples} to {self.samples + n - 1} (streamed)"
        self.samples += n
        self.cycles["train_sample"] += busy
        self.runs["train_sample"] += n
        pred, p_label = await self.host.rd(Reg.PRED), await self.host.rd(Reg.P_LABEL)
        if self.check != "off":
            if (pred, p_label) != (int(ref["pred"][0]), int(ref["p_label"][0])):
                raise Mismatch(
                    f"{where}: last RTL pred {pred} p[label] {p_label}, golden {int(ref['pred'][0])} "
                    f"{int(ref['p_label'][0])}"
                )
            await self.compare(self.sample_writes, where)
        return pred, p_label

    async def update(self) -> None:
        await self.refresh_program()  # this update's step size
        g = self.golden
        _, trace = self._golden(g.update)
        where = f"update {g.updates} (after sample {self.samples})"
        await self._run("update", where, trace=trace)
        if self.check != "off":
            await self.compare(self.persistent, where)
            await self.compare_stats(f"update {g.updates}")

    async def adapt(self) -> int:
        """Shift control (SPEC 4.2): the golden host's rule on the RTL's max registers, which restart at 0. How many
        formats changed."""
        if self.check != "off":
            await self.compare_stats(f"shift control after update {self.golden.updates}")
        changed = self.golden.adapt()
        for name in self.golden.maxabs:
            slot = self.loaded.slots[name]
            await self.host.write_stat(slot, self.golden.sat_by_tensor[name], 0)
        await self.refresh_program()
        return changed

    async def zero_gradients(self) -> None:
        """Calibration discards the gradients (golden/device.py calibrate): the host clears them through the window."""
        self.golden.zero_gradients()
        for name in self.persistent:
            if name.startswith("d"):
                bank, base = self.comp.layout[name]
                await self.host.write_bank(bank, base, self.golden.mem[name])

    # --- the device's report -------------------------------------------------------------------------------
    @property
    def sim_cycles(self) -> int:
        """Accelerator cycles spent in programs so far (the busy-cycle counter's increments)."""
        return sum(self.cycles.values())

    def device_report(self) -> dict:
        per = {p: round(self.cycles[p] / self.runs[p]) for p in self.cycles if self.runs[p]}
        ns = self.host.period_ns
        return {
            "cycles_per_program_run": per,
            "program_runs": dict(self.runs),
            "check": self.check,
            "sim_cycles": self.sim_cycles,
            "clock_mhz": 1e3 / ns,
            "simulated_s": self.sim_cycles * ns * 1e-9,
            "macs_per_sample": {p: self.comp.macs(p) for p in ("train_sample", "infer")},
            "params": {
                "bank_shift": self.params.bank_shift,
                "bank_depth": list(self.params.bank_depth),
                "bank_width": list(self.params.bank_width),
                "prog_depth": self.params.prog_depth,
                "lanes": self.params.lanes,
                "buf_depth": self.params.buf_depth,
                "vec": self.params.vec,
                "adam": self.params.adam,
                "read_ports": list(self.params.read_ports),
            },
        }

    async def rank_update(self) -> None:
        """SPEC 5.6 on the accelerator: the rank_update program (every bond's RANK op: lambda, mask and tau into
        the state bank), then rank_prune (the MASK ops, which read the new masks, and the DERIVEs). The golden
        machine runs the same two programs."""
        g = self.golden
        if self.image is not None and self.image_rank_constants != g.rank_constants:
            await self.refresh_program()  # the host's schedule raised the prior or the threshold
        where = f"rank update after update {g.updates}"
        for prog in ("rank_update", "rank_prune"):
            _, trace = self._golden(g.run, getattr(self.comp, prog), {}, None, False)
            await self._run(prog, where, trace=trace)
        if self.check != "off":
            await self.compare(self.persistent, where)
            await self.compare_stats(where)

    async def rank_freeze(self) -> None:
        """The end of the prune phase (Machine.rank_freeze): every tau 0, written into the state bank."""
        self.golden.rank_freeze()
        for op in self.comp.rank_update:
            bank, base = self.comp.layout[op.ins[2]]
            await self.host.write_bank(bank, base, self.golden.mem[op.ins[2]])

    async def infer(self, xq: np.ndarray) -> np.ndarray:
        bank, base = self.comp.layout["X0"]
        preds = []
        ref = self.golden.infer(xq) if self.check in ("sample", "batch") else None
        last = self.comp.infer[-1].out
        lbank, lbase = self.comp.layout[last]
        classes = self.golden.cfg.classes
        for i, x in enumerate(xq):
            where = f"inference of test sample {i}"
            want, trace = (ref[i] if ref is not None else None), None
            if self.check == "every":  # sample by sample, for its op trace
                (want,), trace = self._golden(self.golden.infer, x[None, :])
            await self.host.write_bank(bank, base, x)
            await self._run("infer", where, trace=trace)
            logits = np.array(await self.host.read_bank(lbank, lbase, classes))
            preds.append(int(np.argmax(logits)))
            if want is not None and preds[-1] != want:
                raise Mismatch(f"{where}: RTL class {preds[-1]}, golden {want}")
        return np.array(preds)
