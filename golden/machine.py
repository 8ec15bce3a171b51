"""The bit-exact integer model: executes the compiler's programs exactly as the accelerator does (SPEC 4-6).

A mini-batch of B samples is executed vectorised: the accelerator runs `train_sample` once per sample, so
sample b's random draws are the b-th block of the stream, and gradient buffers accumulate sample by sample
with saturation. Formats adapt only between mini-batches, so they are constant within the vectorised run.
Products are formed in float64 BLAS, exact because every sum stays far below 2^53 (the compiler bounds them
to the 48-bit accumulator).
"""
from __future__ import annotations

import math

import numpy as np

from golden import fxp
from golden.compiler import BANK_ACT, Compiled, Op
from golden.fxp import NEAREST, STOCHASTIC, Fmt

EXP2_ROM = np.array([round(2**15 * 2 ** (-f / 256)) for f in range(256)], dtype=np.int64)
LOG2E_Q12 = 5909


def sce_gradient(z: np.ndarray, frac_z: int, labels: np.ndarray, classes: int, err_fmt: Fmt):
    """SPEC 5.4 for a batch of logits z [B, n_out]: returns (error [B, n_out] saturated, n_sat, p [B, C], pred)."""
    zc = z[:, :classes]
    d = zc.max(axis=1, keepdims=True) - zc
    t = (d * LOG2E_Q12) >> (frac_z + 4) if frac_z + 4 >= 0 else (d * LOG2E_Q12) << -(frac_z + 4)
    ip = t >> 8
    e = np.where(ip >= 16, 0, EXP2_ROM[t & 255] >> np.minimum(ip, 63))
    s = e.sum(axis=1, keepdims=True)
    r = (1 << 31) // s
    p = (e * r) >> (31 - err_fmt.frac)
    onehot = np.zeros_like(p)
    onehot[np.arange(len(labels)), labels] = 1 << err_fmt.frac
    err = np.zeros_like(z)
    err[:, :classes] = p - onehot
    err, n_sat = fxp.saturate(err, err_fmt)
    return err, n_sat, p, np.argmax(zc, axis=1)


class Machine:
    """State of the accelerator (memories, formats, max and saturation registers, LFSR) and its executor."""

    def __init__(self, comp: Compiled, seed: int):
        self.comp = comp
        self.cfg = comp.cfg
        t = comp.tensors
        self.frac = {n: x.fmt.frac for n, x in t.items()}
        self.mem = {n: np.zeros(x.size, dtype=np.int64) for n, x in t.items() if not x.per_sample}
        self.maxabs = {n: 0 for n, x in t.items() if x.adaptive}
        self.sat_total = 0
        self.sat_by_tensor = {n: 0 for n in t}
        self.stream = fxp.LfsrStream(seed)
        self.samples_seen = 0
        self._draw_offsets = self._plan_draws(comp.train_sample)

    # --- formats ------------------------------------------------------------------------------------------
    def fmt(self, name: str) -> Fmt:
        return Fmt(self.comp.tensors[name].fmt.width, self.frac[name])

    def adapt(self) -> int:
        """SPEC 4.2 shift control; returns how many formats changed."""
        lo_f, hi_f = self.cfg.formats.frac_min, self.cfg.formats.frac_max
        changed = 0
        for n, m in self.maxabs.items():
            w = self.comp.tensors[n].fmt.width
            f = self.frac[n]
            if m > (9 << (w - 1)) // 10:
                f = max(f - 1, lo_f)
            elif m < (3 << (w - 1)) // 10:
                f = min(f + 1, hi_f)
            changed += f != self.frac[n]
            self.frac[n] = f
            self.maxabs[n] = 0
        return changed

    # --- parameters ---------------------------------------------------------------------------------------
    def load_float_params(self, cores: list[list[np.ndarray]], biases: list[np.ndarray]) -> None:
        """Quantise float parameters (nearest, saturating) into the master copies and derive the compute cores."""
        for l, layer_cores in enumerate(cores):
            for k, g in enumerate(layer_cores):
                w = f"W{l}.{k}"
                self.mem[w] = fxp.saturate(np.floor(g.ravel() * 2.0 ** self.frac[w] + 0.5), self.fmt(w))[0]
                self._derive(f"G{l}.{k}", w)
            b = f"B{l}"
            self.mem[b] = fxp.saturate(np.floor(biases[l] * 2.0 ** self.frac[b] + 0.5), self.fmt(b))[0]

    def float_params(self):
        cores = [[self.mem[f"W{l}.{k}"].reshape(layer.core_shape(k)) * 2.0 ** -self.frac[f"W{l}.{k}"]
                  for k in range(layer.d)] for l, layer in enumerate(self.cfg.layers)]
        biases = [self.mem[f"B{l}"] * 2.0 ** -self.frac[f"B{l}"] for l in range(len(self.cfg.layers))]
        return cores, biases

    # --- input --------------------------------------------------------------------------------------------
    def quantize_input(self, x: np.ndarray) -> np.ndarray:
        """Host-side: float pixels [B, input_size] -> input format, zero-padded to the first layer."""
        f = self.fmt("X0")
        q = np.zeros((x.shape[0], self.cfg.padded_input), dtype=np.int64)
        q[:, :x.shape[1]] = fxp.saturate(np.floor(x * 2.0 ** f.frac + 0.5), f)[0]
        return q

    # --- execution ----------------------------------------------------------------------------------------
    def _plan_draws(self, prog: list[Op]) -> list[int]:
        offs, pos = [], 0
        for op in prog:
            offs.append(pos)
            if op.mode == STOCHASTIC and op.kind in ("contract", "acc", "axpby"):
                pos += self.comp.tensors[op.out].size
        offs.append(pos)
        return offs

    def _operand(self, env: dict, name: str, indices: str, batched: bool) -> np.ndarray:
        arr = env[name] if name in env else self.mem[name]
        shape = [self.comp.letter_sizes[c] for c in indices]
        return arr.reshape(([arr.shape[0]] if arr.ndim == 2 and batched else []) + shape)

    def _write(self, env, op: Op, acc: np.ndarray, shift: int, rand, observe: bool) -> None:
        """RQ into op.out (per-sample) or accumulate sample by sample into a persistent buffer."""
        out = op.out
        f = self.fmt(out)
        acc = acc.reshape(acc.shape[0], -1) if acc.ndim > 1 else acc.reshape(1, -1)
        fxp.check_acc(acc, f"op {op.kind} -> {out}")
        y = fxp.round_shift(acc, shift, op.mode, rand)
        if self.comp.tensors[out].per_sample:
            y, n = fxp.saturate(y, f)
            env[out] = y
            maxabs = int(np.abs(y).max(initial=0))
        else:  # accumulate into the buffer, one sample after another, saturating each time
            buf = self.mem[out]
            csum = buf + np.cumsum(y, axis=0)
            if csum.max(initial=0) <= f.qmax and csum.min(initial=0) >= f.qmin:
                n, states = 0, csum
            else:
                n, rows = 0, []
                for row in y:
                    buf, k = fxp.saturate(buf + row, f)
                    n += k
                    rows.append(buf)
                states = np.stack(rows)
            self.mem[out] = states[-1].copy()
            maxabs = int(np.abs(states).max(initial=0))
        self.sat_total += n
        self.sat_by_tensor[out] += n
        if observe and out in self.maxabs:
            self.maxabs[out] = max(self.maxabs[out], maxabs)

    def _contract(self, env, op: Op, rand, observe):
        a, b = op.ins
        lhs, out_idx = op.spec.split("->")
        ia, ib = lhs.split(",")
        ba, bb = a in env, b in env
        batched = ba or bb
        sa, sb, so = ("Z" if ba else "") + ia, ("Z" if bb else "") + ib, ("Z" if batched else "") + out_idx
        acc = np.einsum(f"{sa},{sb}->{so}", self._operand(env, a, ia, True).astype(np.float64),
                        self._operand(env, b, ib, True).astype(np.float64), optimize=True)
        acc = np.rint(acc).astype(np.int64)
        shift = self.frac[a] + self.frac[b] - self.frac[op.out]
        self._write(env, op, acc, shift, rand, observe)

    def _axpby(self, x: np.ndarray, fx: int, z: np.ndarray, fz: int, op: Op, fy: int):
        (qa, fa), (qb, fb) = op.alpha, op.beta
        fc = max(fa + fx, fb + fz)
        acc = qa * x * (1 << (fc - fa - fx)) + qb * z * (1 << (fc - fb - fz))
        return acc, fc - fy

    def run(self, prog: list[Op], env: dict, rand: np.ndarray | None, observe: bool) -> None:
        """Execute `prog`; per-sample tensors in `env` have a leading batch axis. `rand` [B, draws per sample]."""
        offs = self._draw_offsets if prog is self.comp.train_sample else self._plan_draws(prog)
        for i, op in enumerate(prog):
            r = None
            if rand is not None and offs[i + 1] > offs[i]:
                r = rand[:, offs[i]:offs[i + 1]]
            if op.kind == "contract":
                self._contract(env, op, r, observe)
            elif op.kind == "acc":
                (src,) = op.ins
                self._write(env, op, env[src], self.frac[src] - self.frac[op.out], r, observe)
            elif op.kind == "axpby":
                x, z = op.ins
                xv = env[x] if x in env else self.mem[x]
                zv = env[z] if z in env else self.mem[z]
                acc, shift = self._axpby(xv, self.frac[x], zv, self.frac[z], op, self.frac[op.out])
                if not self.comp.tensors[op.out].per_sample:  # a parameter update: one row, written in place
                    f = self.fmt(op.out)
                    fxp.check_acc(acc, f"axpby -> {op.out}")
                    y, n = fxp.saturate(fxp.round_shift(acc, shift, op.mode, r[0] if r is not None else None), f)
                    self.mem[op.out] = y
                    self.sat_total += n
                    self.sat_by_tensor[op.out] += n
                else:
                    self._write(env, op, acc, shift, r, observe)
            elif op.kind == "relu":
                env[op.out] = np.maximum(env[op.ins[0]], 0)
            elif op.kind == "relu_bwd":
                e, h = op.ins
                env[op.out] = np.where(env[h] > 0, env[e], 0)
            elif op.kind == "sce":
                (z,) = op.ins
                err, n, p, pred = sce_gradient(env[z], self.frac[z], env["labels"], self.cfg.classes,
                                               self.fmt(op.out))
                env[op.out], env["p"], env["pred"] = err, p, pred
                self.sat_total += n
                self.sat_by_tensor[op.out] += n
            elif op.kind == "derive":
                self._derive(op.out, op.ins[0])
            elif op.kind == "zero":
                self.mem[op.out][:] = 0
            else:
                raise ValueError(f"unknown op kind {op.kind}")

    def _derive(self, compute: str, master: str) -> None:
        y = fxp.round_shift(self.mem[master], self.frac[master] - self.frac[compute], NEAREST)
        self.mem[compute], n = fxp.saturate(y, self.fmt(compute))
        self.sat_total += n

    # --- the host's view ----------------------------------------------------------------------------------
    def train_batch(self, xq: np.ndarray, labels: np.ndarray) -> dict:
        """Run train_sample for each sample (vectorised), then the update and shift control."""
        out = self.accumulate_batch(xq, labels)
        self.run(self.comp.update, {}, self.stream.take(self._plan_draws(self.comp.update)[-1])[None, :],
                 observe=False)
        self.adapt()
        return out

    def accumulate_batch(self, xq: np.ndarray, labels: np.ndarray) -> dict:
        n = xq.shape[0]
        per_sample = self._draw_offsets[-1]
        rand = self.stream.take(n * per_sample).reshape(n, per_sample)
        env = {"X0": xq.astype(np.int64), "labels": labels}
        self.run(self.comp.train_sample, env, rand, observe=True)
        self.samples_seen += n
        fe = self.frac["E_out"]
        pc = env["p"][np.arange(n), labels]
        loss = -np.log(np.maximum(pc, 1) / 2.0**fe)
        return {"loss": loss, "pred": env["pred"]}

    def calibrate(self, xq: np.ndarray, labels: np.ndarray, rounds: int = 48) -> int:
        """Settle the adaptive formats on one batch before training: run it, discard the gradients, adapt."""
        for i in range(rounds):
            self.accumulate_batch(xq, labels)
            for name, t in self.comp.tensors.items():
                if name.startswith("d"):
                    self.mem[name][:] = 0
            if self.adapt() == 0:
                return i + 1
        return rounds

    def infer(self, xq: np.ndarray) -> np.ndarray:
        env = {"X0": xq.astype(np.int64)}
        self.run(self.comp.infer, env, None, observe=False)
        last = self.comp.infer[-1].out
        return np.argmax(env[last][:, :self.cfg.classes], axis=1)

    def state_dict(self) -> dict:
        return {"mem": {k: v.copy() for k, v in self.mem.items()}, "frac": dict(self.frac),
                "maxabs": dict(self.maxabs), "lfsr": self.stream.state, "drawn": self.stream.drawn,
                "sat_total": self.sat_total, "samples_seen": self.samples_seen}

    def load_state_dict(self, s: dict) -> None:
        self.mem = {k: np.asarray(v, dtype=np.int64).copy() for k, v in s["mem"].items()}
        self.frac.update(s["frac"])
        self.maxabs.update(s["maxabs"])
        self.stream.state, self.stream.drawn = int(s["lfsr"]), int(s["drawn"])
        self.sat_total, self.samples_seen = int(s["sat_total"]), int(s["samples_seen"])


def param_count(comp: Compiled) -> int:
    return sum(t.size for t in comp.tensors.values() if t.bank == "master") + \
        sum(math.prod(l.out_shape) for l in comp.cfg.layers)


__all__ = ["Machine", "sce_gradient", "param_count", "BANK_ACT"]
