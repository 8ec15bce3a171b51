"""A second, independent executor of the compiler's programs: one element at a time, on golden/fxp_ref.py.

`ScalarMachine` has the public interface and the semantics of golden.machine.Machine (SPEC 4-6) but shares
none of its execution code: it takes only the compiler's data structures (tensors, programs, letter sizes), the
format type and constants of golden/fxp.py and the scalar LFSR step `fxp.lfsr_draw`. It runs exactly what the
accelerator's sequencer would:

- `train_sample` once per sample, sample 0 first; within the program, ops in order; within an op, output
  elements in row-major order of its output indices (a contraction's in its element order, SPEC 5.1, while
  the element is stored at its row-major address over the output indices). Every element written by a STOCHASTIC
  contract/acc/axpby op takes the next LFSR draw (SPEC 2.2, 3), whatever its shift.
- A contraction's element is the exact sum over the contracted indices (in row-major order of those indices,
  ordered by first appearance in the einsum) of products, in the 48-bit accumulator, then RQ.
- Gradient buffers (`accumulate` contractions and `acc` ops) are updated sample by sample as
  `out <- SAT(out + RQ(...))` with RQ itself saturating (SPEC 5.1, 2.3); each clamp counts.
- The max registers observe every element written to an adaptive tensor by train_sample (after saturation;
  for a gradient buffer, the buffer value after the add); `infer` and `update` do not observe (as Machine).
  Formats change only in `adapt()` (SPEC 4.2), called after the update of every mini-batch.
- Saturation counters: one per tensor written and a global one (32-bit, saturating) (SPEC 2.3).
- Per-sample tensors live where the compiler placed them: one flat ACT bank addressed by `comp.layout`, in
  which tensors with disjoint live ranges share words, and operands are read from it element by element
  while the output is written. A wrong allocation (a live tensor overwritten) therefore shows up as a
  difference from Machine, which keeps every per-sample tensor separately.
- Ops it does not implement (rank adaptation: penalty/mask/rank; Adam: adam_v/adam_step) are refused when
  the machine is built, never silently skipped.

It is slow (~0.2 s per training sample of the `tiny` model); use it on tiny models only.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from golden import fxp_ref as ref
from golden.fxp import NEAREST, STOCHASTIC, Fmt, lfsr_draw, lfsr_seed_state
from golden.ir import BANK_ACT, Compiled, Op, OpKind

SAT_COUNTER_MAX = (1 << 32) - 1


def _strides(shape: list[int]) -> list[int]:
    out, acc = [], 1
    for s in reversed(shape):
        out.append(acc)
        acc *= s
    return out[::-1]


class ScalarMachine:
    """Accelerator state (memories, formats, max and saturation registers, LFSR) and an element-wise executor."""

    def __init__(self, comp: Compiled, seed: int):
        self.comp = comp
        self.cfg = comp.cfg
        # the executor of each op kind it implements: (op, env, observe)
        self._execute: dict[OpKind, Callable[[Op, dict, bool], None]] = {
            OpKind.CONTRACT: self._contract,
            OpKind.ACC: self._acc,
            OpKind.AXPBY: self._axpby,
            OpKind.AXPBY_RELU: self._run_axpby_relu,
            OpKind.RELU_BWD: self._run_relu_bwd,
            OpKind.SCE: self._run_sce,
            OpKind.DERIVE: self._run_derive,
            OpKind.ZERO: self._run_zero,
        }
        programs = (comp.train_sample, comp.update, comp.infer, getattr(comp, "rank_update", []))
        unsupported = sorted({op.kind for prog in programs for op in prog} - set(self._execute))
        if unsupported:
            raise NotImplementedError(f"ScalarMachine does not implement op kinds {', '.join(unsupported)}")
        t = comp.tensors
        self.frac = {n: x.fmt.frac for n, x in t.items()}
        self.mem = {n: [0] * x.size for n, x in t.items() if not x.per_sample}
        self.act = [0] * comp.bank_words.get(BANK_ACT, 0)  # the shared per-sample bank
        self.base = {n: comp.layout[n][1] for n, x in t.items() if x.per_sample}
        for n in self.base:
            if comp.layout[n][0] != BANK_ACT or self.base[n] + t[n].size > len(self.act):
                raise ValueError(f"per-sample tensor {n} placed outside the ACT bank: {comp.layout[n]}")
        self.maxabs = {n: 0 for n, x in t.items() if x.adaptive}
        self.sat_total = 0
        self.sat_by_tensor = {n: 0 for n in t}
        self.lfsr_state = lfsr_seed_state(seed)
        self.drawn = 0
        self.samples_seen = 0
        self.updates = 0

    # --- formats ------------------------------------------------------------------------------------------
    def width(self, name: str) -> int:
        return self.comp.tensors[name].fmt.width

    def fmt(self, name: str) -> Fmt:
        return Fmt(self.width(name), self.frac[name])

    def adapt(self) -> int:
        """SPEC 4.2: per adaptive tensor, move F by one against the 0.9 / 0.3 full-scale thresholds; clear M."""
        lo_f, hi_f = self.cfg.formats.frac_min, self.cfg.formats.frac_max
        changed = 0
        for name in self.maxabs:
            w, f, m = self.width(name), self.frac[name], self.maxabs[name]
            if m == 0:  # nothing but zeros written: no evidence of scale, the format stays
                new = f
            elif m > (9 * (1 << (w - 1))) // 10:
                new = max(f - 1, lo_f)
            elif m < (3 * (1 << (w - 1))) // 10:
                new = min(f + 1, hi_f)
            else:
                new = f
            changed += new != f
            self.frac[name] = new
            self.maxabs[name] = 0
        return changed

    # --- random stream ------------------------------------------------------------------------------------
    def _draw(self) -> int:
        self.lfsr_state, r = lfsr_draw(self.lfsr_state)
        self.drawn += 1
        return r

    # --- host side ----------------------------------------------------------------------------------------
    def load_float_params(self, cores: list[list[np.ndarray]], biases: list[np.ndarray]) -> None:
        """Float parameters -> master copies (round half up, saturating), then DERIVE of the compute cores."""
        for l, layer_cores in enumerate(cores):
            for k, g in enumerate(layer_cores):
                w = f"W{l}.{k}"
                f = self.fmt(w)
                self.mem[w] = [ref.quantize_float_scalar(float(v), f)[0] for v in np.asarray(g).ravel()]
                self._derive(f"G{l}.{k}", w)
            b = f"B{l}"
            f = self.fmt(b)
            self.mem[b] = [ref.quantize_float_scalar(float(v), f)[0] for v in np.asarray(biases[l]).ravel()]

    def float_params(self):
        cores = [
            [
                np.array(self.mem[f"W{l}.{k}"], dtype=np.float64).reshape(layer.core_shape(k))
                * 2.0 ** -self.frac[f"W{l}.{k}"]
                for k in range(layer.d)
            ]
            for l, layer in enumerate(self.cfg.layers)
        ]
        biases = [
            np.array(self.mem[f"B{l}"], dtype=np.float64) * 2.0 ** -self.frac[f"B{l}"]
            for l in range(len(self.cfg.layers))
        ]
        return cores, biases

    def quantize_input(self, x: np.ndarray) -> np.ndarray:
        """Float pixels [B, input_size] -> the input format (half up, saturating), zero-padded."""
        f = self.fmt("X0")
        q = np.zeros((x.shape[0], self.cfg.padded_input), dtype=np.int64)
        for b in range(x.shape[0]):
            for i in range(x.shape[1]):
                q[b, i] = ref.quantize_float_scalar(float(x[b, i]), f)[0]
        return q

    # --- storage ------------------------------------------------------------------------------------------
    def _where(self, name: str) -> tuple[list[int], int]:
        """The memory holding `name` and its base address there."""
        if name in self.base:
            return self.act, self.base[name]
        return self.mem[name], 0

    def values(self, name: str) -> list[int]:
        """The current contents of a tensor (a copy)."""
        arr, base = self._where(name)
        return arr[base : base + self.comp.tensors[name].size]

    def _count(self, name: str, sat: bool | int) -> None:
        if sat:
            self.sat_total = min(self.sat_total + int(sat), SAT_COUNTER_MAX)
            self.sat_by_tensor[name] = min(self.sat_by_tensor[name] + int(sat), SAT_COUNTER_MAX)

    def _observe(self, name: str, v: int, observe: bool) -> None:
        if observe and name in self.maxabs and abs(v) > self.maxabs[name]:
            self.maxabs[name] = abs(v)

    def _store(self, op: Op, i: int, y: int, sat: bool, observe: bool) -> None:
        """Write RQ result y (already saturated to the output format) to element i of op.out."""
        out = op.out
        self._count(out, sat)
        arr, base = self._where(out)
        if not self.comp.tensors[out].per_sample and (op.kind == OpKind.ACC or op.accumulate):
            y, sat2 = ref.accumulate_scalar(arr[base + i], y, self.fmt(out))  # out <- SAT(out + RQ(...))
            self._count(out, sat2)
        arr[base + i] = y
        self._observe(out, y, observe)

    # --- ops ----------------------------------------------------------------------------------------------
    def _contract(self, op: Op, env: dict, observe: bool) -> None:
        a, b = op.ins
        lhs, out_idx = op.spec.split("->")
        ia, ib = lhs.split(",")
        sizes = self.comp.letter_sizes
        contracted = [c for c in dict.fromkeys(ia + ib) if c not in out_idx]
        for name, idx in ((a, ia), (b, ib), (op.out, out_idx)):
            if math.prod(sizes[c] for c in idx) != self.comp.tensors[name].size:
                raise ValueError(f"op {op.spec}: {name} has {self.comp.tensors[name].size} elements, not {idx}")
        (av, ba), (bv, bb) = self._where(a), self._where(b)
        sa = dict(zip(ia, _strides([sizes[c] for c in ia])))
        sb = dict(zip(ib, _strides([sizes[c] for c in ib])))
        wa, wb = self.width(a), self.width(b)
        shift = self.frac[a] + self.frac[b] - self.frac[op.out]
        fo = self.fmt(op.out)
        red = list(itertools.product(*[range(sizes[c]) for c in contracted]))
        so = dict(zip(out_idx, _strides([sizes[c] for c in out_idx])))
        order = op.element_order()
        for oi in itertools.product(*[range(sizes[c]) for c in order]):  # the elements in the op's order
            pos = dict(zip(order, oi))
            i = sum(pos[c] * so[c] for c in out_idx)
            xs, ys = [], []
            for ci in red:  # the operands are read from memory now, element by element
                pos.update(zip(contracted, ci))
                xs.append(av[ba + sum(pos[c] * sa[c] for c in ia)])
                ys.append(bv[bb + sum(pos[c] * sb[c] for c in ib)])
            acc = ref.mac_scalar(xs, ys, wa, wb, f"op {op.kind} -> {op.out}")
            r = self._draw() if op.mode == STOCHASTIC else None
            y, sat = ref.requantize_scalar(acc, shift, op.mode, fo, r)
            self._store(op, i, y, sat, observe)

    def _acc(self, op: Op, env: dict, observe: bool) -> None:
        (src,) = op.ins
        xs, bx = self._where(src)
        shift = self.frac[src] - self.frac[op.out]
        fo = self.fmt(op.out)
        for i in range(self.comp.tensors[op.out].size):
            r = self._draw() if op.mode == STOCHASTIC else None
            y, sat = ref.requantize_scalar(xs[bx + i], shift, op.mode, fo, r)
            self._store(op, i, y, sat, observe)

    def _axpby(self, op: Op, env: dict, observe: bool) -> None:
        x, z = op.ins
        (xs, bx), (zs, bz) = self._where(x), self._where(z)
        fx, fz, wx, wz = self.frac[x], self.frac[z], self.width(x), self.width(z)
        fo = self.fmt(op.out)
        for i in range(self.comp.tensors[op.out].size):
            r = self._draw() if op.mode == STOCHASTIC else None
            y, sat = ref.axpby_scalar(xs[bx + i], fx, wx, zs[bz + i], fz, wz, op.alpha, op.beta, fo, op.mode, r)
            self._store(op, i, y, sat, observe)

    def _elementwise(self, op: Op, fn, observe: bool) -> None:
        """A ReLU or RELU_BWD: no rounding, no draws, the format of the output is that of its input."""
        srcs = [self._where(n) for n in op.ins]
        out, bo = self._where(op.out)
        for i in range(self.comp.tensors[op.out].size):
            v = fn(*[arr[base + i] for arr, base in srcs])
            out[bo + i] = v
            self._observe(op.out, v, observe)

    def _derive(self, compute: str, master: str) -> None:
        fw, fc = self.frac[master], self.fmt(compute)
        for i, w in enumerate(self.mem[master]):
            y, sat = ref.derive_scalar(w, fw, fc)
            self.mem[compute][i] = y
            self._count(compute, sat)

    def _run_sce(self, op: Op, env: dict, observe: bool) -> None:
        (z,) = op.ins
        err, n_sat, p, pred = ref.sce_scalar(
            self.values(z), self.frac[z], self.width(z), env["label"], self.cfg.classes, self.fmt(op.out)
        )
        out, bo = self._where(op.out)
        out[bo : bo + len(err)] = err
        env["p"], env["pred"] = p, pred
        self._count(op.out, n_sat)

    def _run_axpby_relu(self, op: Op, env: dict, observe: bool) -> None:
        """SPEC 5.3: the ReLU after the AXPBY's saturations and observation."""
        self._axpby(op, env, observe)
        self._elementwise(replace(op, ins=(op.out,)), lambda v: v if v > 0 else 0, False)

    def _run_relu_bwd(self, op: Op, env: dict, observe: bool) -> None:
        self._elementwise(op, lambda e, h: e if h > 0 else 0, observe)

    def _run_derive(self, op: Op, env: dict, observe: bool) -> None:
        self._derive(op.out, op.ins[0])

    def _run_zero(self, op: Op, env: dict, observe: bool) -> None:
        self.mem[op.out] = [0] * self.comp.tensors[op.out].size

    def run(self, prog: list[Op], env: dict, observe: bool) -> None:
        """Execute `prog` once: for one sample (`env` holds its label and receives p and pred) or the update."""
        for op in prog:
            self._execute[op.kind](op, env, observe)

    def _load_input(self, row) -> None:
        """The host writes one sample's input words into the ACT bank."""
        base = self.base["X0"]
        self.act[base : base + self.comp.tensors["X0"].size] = [int(v) for v in row]

    # --- the host's view ----------------------------------------------------------------------------------
    def accumulate_batch(self, xq: np.ndarray, labels: np.ndarray) -> dict:
        """train_sample for sample 0, then sample 1, ...: gradients accumulate, formats stay fixed."""
        losses, preds = [], []
        for b in range(xq.shape[0]):
            label = int(labels[b])
            env: dict[str, Any] = {"label": label}
            self._load_input(xq[b])
            self.run(self.comp.train_sample, env, observe=True)
            pc = env["p"][label]
            losses.append(-math.log(max(pc, 1) / 2.0 ** self.frac["E_out"]))
            preds.append(env["pred"])
        self.samples_seen += xq.shape[0]
        return {"loss": np.array(losses), "pred": np.array(preds, dtype=np.int64)}

    def train_batch(self, xq: np.ndarray, labels: np.ndarray) -> dict:
        """One mini-batch: train_sample per sample, then the update program, then shift control."""
        out = self.accumulate_batch(xq, labels)
        self.run(self.comp.update, {}, observe=False)
        self.updates += 1
        self.adapt()
        return out

    def calibrate(self, xq: np.ndarray, labels: np.ndarray, rounds: int = 48) -> int:
        """Settle the adaptive formats on one batch: run it, discard the gradients, adapt; until nothing moves.
        Then fix each momentum's format from its gradient's."""
        done = 0
        for _ in range(rounds):
            done += 1
            self.accumulate_batch(xq, labels)
            for name in self.mem:
                if name.startswith("d"):
                    self.mem[name] = [0] * len(self.mem[name])
            if self.adapt() == 0:
                break
        for op in self.comp.update:  # SPEC 5.5: the momentum gets 4 integer bits more than its gradient
            if op.kind == OpKind.AXPBY and op.note == "momentum":
                self.frac[op.out] = self.frac[op.ins[1]] - 4
        return done

    def infer(self, xq: np.ndarray) -> np.ndarray:
        """The infer program (NEAREST, no draws) per sample; the prediction is the first maximal logit."""
        last = self.comp.infer[-1].out
        preds = []
        for b in range(xq.shape[0]):
            self._load_input(xq[b])
            self.run(self.comp.infer, {}, observe=False)
            logits = self.values(last)[: self.cfg.classes]
            best = 0
            for j in range(1, len(logits)):
                if logits[j] > logits[best]:
                    best = j
            preds.append(best)
        return np.array(preds, dtype=np.int64)

    def state_dict(self) -> dict:
        return {
            "mem": {k: np.array(v, dtype=np.int64) for k, v in self.mem.items()},
            "frac": dict(self.frac),
            "maxabs": dict(self.maxabs),
            "lfsr": self.lfsr_state,
            "drawn": self.drawn,
            "sat_total": self.sat_total,
            "samples_seen": self.samples_seen,
            "updates": self.updates,
        }

    def load_state_dict(self, s: dict) -> None:
        self.mem = {k: [int(x) for x in np.asarray(v).ravel()] for k, v in s["mem"].items()}
        self.frac.update(s["frac"])
        self.maxabs.update(s["maxabs"])
        self.lfsr_state, self.drawn = int(s["lfsr"]), int(s["drawn"])
        self.sat_total, self.samples_seen = int(s["sat_total"]), int(s["samples_seen"])
        self.updates = int(s.get("updates", 0))


__all__ = ["ScalarMachine", "NEAREST", "STOCHASTIC"]
