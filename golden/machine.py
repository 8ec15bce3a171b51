"""The bit-exact integer model: executes the compiler's programs exactly as the accelerator does (SPEC 4-6).

A mini-batch of B samples is executed vectorised: the accelerator runs `train_sample` once per sample, so
sample b's random draws are the b-th block of the stream, and gradient buffers accumulate sample by sample
with saturation. Formats adapt only between mini-batches, so they are constant within the vectorised run.
Products are formed in float64 BLAS, exact because every sum stays far below 2^53 (the compiler bounds them
to the 48-bit accumulator).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from golden import fxp
from golden.config import core_params_at
from golden.fxp import NEAREST, STOCHASTIC, Fmt, align_round, max_abs
from golden.ir import Compiled, Op, OpKind
from golden.semantics import (
    ADAM_DELTA_FMT,
    LAMBDA_FMT,
    MOMENTUM_HEADROOM_BITS,
    SAT_COUNTER_MAX,
    adam_eps_q,
    adam_h_range,
    axpby_sum,
    bond_sums,
    draw_index,
    inv_d,
    pack_lambdas,
    penalty_fc,
    quant_const,
    rank_bond,
    rsqrt_parts,
    sce_gradient,
    sce_loss,
    shift_control,
    slice_gate,
    slice_mean_squares,
    slice_taus,
    unpack_lambdas,
)


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
        self.updates = 0  # mini-batch updates done (Adam's t - 1)
        self.total_updates = 0  # of the whole run, for the learning-rate schedule (set by the host)
        self._draw_offsets = self._plan_draws(comp.train_sample)
        rank = self.cfg.train.rank
        # (the prior per mini-batch: tau = it / lambda on the batch-summed gradient, the pruning threshold): what
        # the RANK ops' descriptors carry; the host's rank schedule may change them (set_rank_constants)
        self.rank_constants = (rank.prior * self.cfg.train.batch, rank.threshold)
        # When a list: run() appends (op, copy of the op's output) after every op, for op-by-op checks.
        self.op_trace: list | None = None
        self._execute: dict[OpKind, Callable[[dict, Op, Any, bool], None]] = {
            OpKind.CONTRACT: self._run_contract,
            OpKind.ACC: self._run_acc,
            OpKind.AXPBY: self._run_axpby,
            OpKind.AXPBY_RELU: self._run_axpby,
            OpKind.RELU_BWD: self._run_relu_bwd,
            OpKind.SCE: self._run_sce,
            OpKind.DERIVE: self._run_derive,
            OpKind.ZERO: self._run_zero,
            OpKind.MASK: self._run_mask,
            OpKind.PENALTY: self._run_penalty,
            OpKind.RANK: self._run_rank,
            OpKind.ADAM_V: self._run_adam_v,
            OpKind.ADAM_STEP: self._run_adam_step,
        }

    def _count_sat(self, name: str, n: int) -> None:
        """The 32-bit saturating counters of SPEC 2.3: the global one and one per tensor."""
        self.sat_total = min(self.sat_total + n, SAT_COUNTER_MAX)
        self.sat_by_tensor[name] = min(self.sat_by_tensor[name] + n, SAT_COUNTER_MAX)

    # --- formats ------------------------------------------------------------------------------------------
    def fmt(self, name: str) -> Fmt:
        return Fmt(self.comp.tensors[name].fmt.width, self.frac[name])

    def adapt(self, names=None) -> int:
        """SPEC 4.2 shift control (of the tensors `names`, default every adaptive one); returns how many formats
        changed."""
        lo_f, hi_f = self.cfg.formats.frac_min, self.cfg.formats.frac_max
        changed = 0
        for n in self.maxabs if names is None else names:
            f = shift_control(self.maxabs[n], self.comp.tensors[n].fmt.width, self.frac[n], lo_f, hi_f)
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
                self.mem[w] = fxp.quantize_float(g.ravel(), self.fmt(w))[0]
                self._derive(f"G{l}.{k}", w)
            b = f"B{l}"
            self.mem[b] = fxp.quantize_float(biases[l], self.fmt(b))[0]
        self.init_rank_state()

    def float_params(self):
        cores = [
            [
                self.mem[f"W{l}.{k}"].reshape(layer.core_shape(k)) * 2.0 ** -self.frac[f"W{l}.{k}"]
                for k in range(layer.d)
            ]
            for l, layer in enumerate(self.cfg.layers)
        ]
        biases = [self.mem[f"B{l}"] * 2.0 ** -self.frac[f"B{l}"] for l in range(len(self.cfg.layers))]
        return cores, biases

    # --- input --------------------------------------------------------------------------------------------
    def quantize_input(self, x: np.ndarray) -> np.ndarray:
        """Host-side: float pixels [B, input_size] -> input format, zero-padded to the first layer."""
        f = self.fmt("X0")
        q = np.zeros((x.shape[0], self.cfg.padded_input), dtype=np.int64)
        q[:, : x.shape[1]] = fxp.quantize_float(x, f)[0]
        return q

    # --- execution ----------------------------------------------------------------------------------------
    def _plan_draws(self, prog: list[Op]) -> list[int]:
        offs, pos = [], 0
        for op in prog:
            offs.append(pos)
            if op.mode == STOCHASTIC and op.kind.draws:
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
        y, n = fxp.saturate(fxp.round_shift(acc, shift, op.mode, rand), f)
        if self.comp.tensors[out].per_sample:
            env[out] = states = y
        else:  # SPEC 5.1: out <- SAT(out + RQ(...)), sample after sample; RQ saturates first
            buf = self.mem[out]
            states = buf + np.cumsum(y, axis=0)
            if states.max(initial=0) > f.qmax or states.min(initial=0) < f.qmin:
                rows = []
                for row in y:
                    buf, k = fxp.saturate(buf + row, f)
                    n += k
                    rows.append(buf)
                states = np.stack(rows)
            self.mem[out] = states[-1].copy()
        self._count_sat(out, n)
        if observe and out in self.maxabs:
            self.maxabs[out] = max(self.maxabs[out], max_abs(states))

    def _run_contract(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        a, b = op.ins
        lhs, out_idx = op.spec.split("->")
        ia, ib = lhs.split(",")
        ba, bb = a in env, b in env
        batched = ba or bb
        sa, sb, so = ("Z" if ba else "") + ia, ("Z" if bb else "") + ib, ("Z" if batched else "") + out_idx
        acc = np.einsum(
            f"{sa},{sb}->{so}",
            self._operand(env, a, ia, True).astype(np.float64),
            self._operand(env, b, ib, True).astype(np.float64),
            optimize=True,
        )
        acc = acc.astype(np.int64, order="C")  # exact: every value is an integer below 2^53
        shift = self.frac[a] + self.frac[b] - self.frac[op.out]
        if rand is not None and op.order:  # the draws go in the element order, the results in the layout
            rand = rand[:, draw_index(out_idx, op.order, self.comp.letter_sizes)]
        self._write(env, op, acc, shift, rand, observe)

    def run(self, prog: list[Op], env: dict, rand: np.ndarray | None, observe: bool) -> None:
        """Execute `prog`; per-sample tensors in `env` have a leading batch axis. `rand` [B, draws per sample]."""
        offs = self._draw_offsets if prog is self.comp.train_sample else self._plan_draws(prog)
        for i, op in enumerate(prog):
            r: Any = None  # this op's draws, if it draws
            if rand is not None and offs[i + 1] > offs[i]:
                r = rand[:, offs[i] : offs[i + 1]]
            self._execute[op.kind](env, op, r, observe)
            if self.op_trace is not None:
                self.op_trace.append((op, np.array(env[op.out] if op.out in env else self.mem[op.out])))

    # --- the ops: each kind's executor takes (env, op, its draws [B, elements] or None, observe) ---------------
    def _run_acc(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        (src,) = op.ins
        self._write(env, op, env[src], self.frac[src] - self.frac[op.out], rand, observe)

    def _run_axpby(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        """AXPBY and AXPBY_RELU (SPEC 5.2, 5.3); with host_step, beta is the step the host writes (sgd_step)."""
        x, z = op.ins
        xv = env[x] if x in env else self.mem[x]
        zv = env[z] if z in env else self.mem[z]
        if op.host_step:
            op = replace(op, beta=self.sgd_step())
        t = self.comp.tensors
        acc, shift = axpby_sum(
            xv, self.frac[x], zv, self.frac[z], op.alpha, op.beta, self.frac[op.out], (t[x].fmt.width, t[z].fmt.width)
        )
        if not self.comp.tensors[op.out].per_sample:  # a parameter update: one row, written in place
            self._store(op.out, acc, shift, op.mode, rand[0] if rand is not None else None)
        else:
            self._write(env, op, acc, shift, rand, observe)
            if op.kind == OpKind.AXPBY_RELU:  # SPEC 5.3: after the write's saturations and observation
                env[op.out] = np.maximum(env[op.out], 0)

    def _run_relu_bwd(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        e, h = op.ins
        env[op.out] = np.where(env[h] > 0, env[e], 0)

    def _run_sce(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        (z,) = op.ins
        err, n, p, pred = sce_gradient(env[z], self.frac[z], env["labels"], self.cfg.classes, self.fmt(op.out))
        env[op.out], env["p"], env["pred"] = err, p, pred
        self._count_sat(op.out, n)

    def _run_mask(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        self.mem[op.out] = self.mem[op.ins[0]] * self._keep(op.out, *op.ins[1:])

    def _run_derive(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        self._derive(op.out, op.ins[0])

    def _run_zero(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        self.mem[op.out][:] = 0

    # --- Adam (SPEC 5.5) ----------------------------------------------------------------------------------
    def _store(self, name: str, acc: np.ndarray, shift: int, mode: int, rand) -> None:
        fxp.check_acc(acc, f"{name}")
        self.mem[name], n = fxp.saturate(fxp.round_shift(acc, shift, mode, rand), self.fmt(name))
        self._count_sat(name, n)

    def _run_adam_v(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        """v <- RQ(beta2 v 2^kv + (1 - beta2) g^2 2^kg, s), aligned as AXPBY with g^2 of 2 w_g - 1 bits."""
        v, g = op.ins
        gg = self.mem[g] * self.mem[g]
        t = self.comp.tensors
        acc, shift = axpby_sum(
            self.mem[v],
            self.frac[v],
            gg,
            2 * self.frac[g],
            op.alpha,
            op.beta,
            self.frac[v],
            (t[v].fmt.width, 2 * t[g].fmt.width - 1),
        )
        self._store(v, acc, shift, op.mode, rand[0])

    def sgd_step(self) -> tuple[int, int]:
        """-lr_t / B for this update (the host's step-size register), lr_t from the schedule."""
        tr = self.cfg.train
        return quant_const(-tr.lr_at(self.updates, self.total_updates) / tr.batch)

    def host_step(self) -> tuple[int, int]:
        """The step-size register the host writes before this update: the SGD step or Adam's lr_t."""
        return self.adam_lr() if self.cfg.train.optimizer == "adam" else self.sgd_step()

    def adam_lr(self) -> tuple[int, int]:
        """The step size of update t with both bias corrections folded in (the host's per-step register)."""
        tr, t = self.cfg.train, self.updates + 1
        fv = self.cfg.formats.adam_v
        h_max = adam_h_range(fv.width, fv.frac)[1]  # the largest normalisation exponent of v (rsqrt_parts)
        max_frac = fxp.SHIFT_MAX - (self.cfg.formats.adam_m.frac + 16 + h_max - self.cfg.formats.master.frac)
        lr = tr.lr_at(self.updates, self.total_updates)
        return quant_const(lr * math.sqrt(1 - tr.beta2**t) / (1 - tr.momentum**t), max_frac=max_frac)

    def _run_adam_step(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        """w <- SAT(w - RQ(lr_t m RSQRT(v + eps), ...)), the shift per element from the normalisation of v."""
        w, m, v = op.ins
        tr = self.cfg.train
        fv = self.frac[v]
        r, h = rsqrt_parts(np.maximum(self.mem[v], 0) + adam_eps_q(tr, fv), fv)
        lr_q, lr_f = self.adam_lr()
        acc = lr_q * self.mem[m] * r
        fxp.check_acc(acc, f"adam step -> {w}")
        shifts = lr_f + self.frac[m] + 16 + h - self.frac[w]
        delta = np.empty_like(acc)
        for s in np.unique(shifts):  # the per-element shift of the hardware, grouped for numpy
            sel = shifts == s
            delta[sel] = fxp.round_shift(acc[sel], int(s), op.mode, rand[0][sel])
        delta = fxp.saturate(delta, ADAM_DELTA_FMT)[0]
        self.mem[w], n = fxp.saturate(self.mem[w] - delta, self.fmt(w))
        self._count_sat(w, n)

    # --- rank adaptation (SPEC 5.6) ------------------------------------------------------------------------
    def _slice_view(self, name: str) -> np.ndarray:
        return self.mem[name].reshape(self.comp.tensors[name].shape)

    def _keep(self, core: str, mask_left: str, mask_right: str) -> np.ndarray:
        """1 where neither adjoining rank slice of an element of `core` (r_prev, m, n, r_next) is pruned."""
        masks = (self.mem[mask_left] if mask_left else None, self.mem[mask_right] if mask_right else None)
        return slice_gate(self.comp.tensors[core].shape, *masks)

    def _tau_sum(self, core: str, tau_left: str, tau_right: str) -> np.ndarray:
        taus = (self.mem[tau_left] if tau_left else None, self.mem[tau_right] if tau_right else None)
        return slice_taus(self.comp.tensors[core].shape, *taus)

    def _run_penalty(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        """g <- RQ(A(g) + A((tau_l[r_prev] + tau_r[r_next]) w), Fc - F_g): the prior's gradient, batch-summed."""
        g, w, tau_l, tau_r = op.ins
        f_tau = self.frac[tau_l or tau_r]
        fg, fw = self.frac[g], self.frac[w]
        t = self.comp.tensors
        fc = penalty_fc((t[g].fmt.width, fg), (t[w].fmt.width, fw), f_tau)
        prior = self._tau_sum(w, tau_l, tau_r) * self.mem[w]
        acc = align_round(self.mem[g], fg, fc) + align_round(prior, f_tau + fw, fc)
        self._store(g, acc, fc - fg, op.mode, rand[0])

    def _slice_sums(self, left: str, right: str) -> tuple[list[int], int]:
        """M of every slice of the bond between cores `left` and `right` (SPEC 5.6 step 1), and D."""
        return bond_sums(self._slice_view(left), self._slice_view(right))

    def _q_shift(self, left: str, right: str) -> int:
        fw = self.frac[left]
        assert self.frac[right] == fw
        return 2 * fw + 24 - LAMBDA_FMT.frac

    def _run_rank(self, env: dict, op: Op, rand: Any, observe: bool) -> None:
        self._rank(op)

    def _rank(self, op: Op) -> None:
        """SPEC 5.6 steps 1-4 for one bond: lambda, mask and tau from the master cores as they stand (the pruned
        slices are zeroed afterwards, by rank_prune)."""
        lam, (w_left, w_right, tau, mask) = op.out, op.ins
        sums, d = self._slice_sums(w_left, w_right)
        new_lam, keep, taus = rank_bond(
            self.lambdas(lam),
            [int(v) for v in self.mem[mask]],
            sums,
            inv_d(d),
            self._q_shift(w_left, w_right),
            self.rank_threshold(),
            self.tau_numerator(tau),
        )
        self.mem[lam] = pack_lambdas(new_lam)
        self.mem[mask], self.mem[tau] = (np.array(v, dtype=np.int64) for v in (keep, taus))

    def lambdas(self, lam: str) -> list[int]:
        """The lambdas of a bond from its LAM tensor's words (low half, high half per slice)."""
        return unpack_lambdas(self.mem[lam])

    def rank_threshold(self) -> int:
        return round(self.rank_constants[1] * 2**LAMBDA_FMT.frac)

    def tau_numerator(self, tau: str) -> int:
        """c_q 2^(24 + F_tau - F_c): tau = this // lambda (SPEC 5.6 step 4)."""
        c_q, c_f = quant_const(self.rank_constants[0])
        return c_q << (LAMBDA_FMT.frac + self.frac[tau] - c_f)

    def set_rank_constants(self, prior_per_update: float, threshold: float) -> None:
        """The host's rank schedule: the prior per mini-batch (tau = it / lambda) and the pruning threshold the
        next rank updates use, written into the RANK ops' descriptors (program.assemble). The taus' format follows
        the prior as the compiler chose it (a tau of the config's threshold fills 16 bits), so doubling the prior
        takes one fraction bit from tau and the words keep their precision. Call it only right before a rank
        update, or while every tau is 0: the taus in the state bank are in the format of the update that wrote
        them, and the penalty reads them in the current one."""
        self.rank_constants = (float(prior_per_update), float(threshold))
        tau_frac = quant_const(prior_per_update / self.cfg.train.rank.threshold)[1]
        for op in self.comp.rank_update:
            self.frac[op.ins[2]] = tau_frac

    def init_rank_state(self) -> None:
        """All slices live, lambda = M/(D+1) of the initial master cores, tau from it."""
        for op in self.comp.rank_update:
            lam, (w_left, w_right, tau, mask) = op.out, op.ins
            self.mem[mask][:] = 1
            sums, d = self._slice_sums(w_left, w_right)
            self.mem[lam] = pack_lambdas(slice_mean_squares(sums, inv_d(d), self._q_shift(w_left, w_right)))
            self.mem[tau][:] = 0  # no penalty before the warm-up ends: the first rank update sets tau

    def live_ranks(self) -> list[list[int]]:
        out = []
        for l, layer in enumerate(self.cfg.layers):
            out.append(
                [
                    int(self.mem[f"MASK{l}.{k}"].sum()) if f"MASK{l}.{k}" in self.mem else layer.ranks[k]
                    for k in range(layer.d - 1)
                ]
            )
        return out

    def live_core_params(self) -> int:
        return core_params_at(self.cfg.layers, self.live_ranks())

    def rank_update(self) -> None:
        """SPEC 5.6: every bond's rank op, then the pruned slices zeroed and the compute cores re-derived."""
        self.run(self.comp.rank_update, {}, None, observe=False)
        self.run(self.comp.rank_prune, {}, None, observe=False)

    def rank_freeze(self) -> None:
        """SPEC 5.6, end of the prune phase: the host writes tau <- 0 for every slice and issues no more rank
        updates, so the penalty op adds nothing; the masks (the pruned ranks) stay. Idempotent."""
        for op in self.comp.rank_update:
            self.mem[op.ins[2]][:] = 0

    def _derive(self, compute: str, master: str) -> None:
        y = fxp.round_shift(self.mem[master], self.frac[master] - self.frac[compute], NEAREST)
        self.mem[compute], n = fxp.saturate(y, self.fmt(compute))
        self._count_sat(compute, n)

    # --- the host's view ----------------------------------------------------------------------------------
    def train_batch(self, xq: np.ndarray, labels: np.ndarray) -> dict:
        """Run train_sample for each sample (vectorised), then the update and shift control."""
        out = self.accumulate_batch(xq, labels)
        self.update()
        self.adapt()
        return out

    def update(self) -> None:
        """The update program, once per mini-batch: its draws are one row of the stream."""
        self.run(self.comp.update, {}, self.stream.take(self._plan_draws(self.comp.update)[-1])[None, :], observe=False)
        self.updates += 1

    def accumulate_batch(self, xq: np.ndarray, labels: np.ndarray) -> dict:
        n = xq.shape[0]
        per_sample = self._draw_offsets[-1]
        rand = self.stream.take(n * per_sample).reshape(n, per_sample)
        env = {"X0": xq.astype(np.int64), "labels": labels}
        self.run(self.comp.train_sample, env, rand, observe=True)
        self.samples_seen += n
        fe = self.frac["E_out"]
        pc = env["p"][np.arange(n), labels]
        loss = sce_loss(pc, fe)
        return {"loss": loss, "pred": env["pred"], "p_label": pc}

    def zero_gradients(self) -> None:
        """Every gradient sum to 0: calibration's batches settle formats and must not train."""
        for name in self.mem:
            if name.startswith("d"):
                self.mem[name][:] = 0

    def calibrate_momentum_formats(self) -> None:
        """Each momentum's format from its gradient's (SPEC 5.5), once the gradients' formats settled."""
        for name in self.frac:
            grad = "dB" + name[2:] if name.startswith("VB") else "dG" + name[1:] if name.startswith("V") else None
            if grad in self.frac:
                self.frac[name] = self.frac[grad] - MOMENTUM_HEADROOM_BITS

    def infer(self, xq: np.ndarray) -> np.ndarray:
        env = {"X0": xq.astype(np.int64)}
        self.run(self.comp.infer, env, None, observe=False)
        last = self.comp.infer[-1].out
        return np.argmax(env[last][:, : self.cfg.classes], axis=1)

    def state_dict(self) -> dict:
        return {
            "mem": {k: v.copy() for k, v in self.mem.items()},
            "frac": dict(self.frac),
            "maxabs": dict(self.maxabs),
            "lfsr": self.stream.state,
            "drawn": self.stream.drawn,
            "sat_total": self.sat_total,
            "sat_by_tensor": dict(self.sat_by_tensor),
            "samples_seen": self.samples_seen,
            "updates": self.updates,
            "rank_constants": list(self.rank_constants),
        }

    def load_state_dict(self, s: dict) -> None:
        self.mem = {k: np.asarray(v, dtype=np.int64).copy() for k, v in s["mem"].items()}
        self.frac.update(s["frac"])
        self.maxabs.update(s["maxabs"])
        self.stream.state, self.stream.drawn = int(s["lfsr"]), int(s["drawn"])
        self.sat_total, self.samples_seen = int(s["sat_total"]), int(s["samples_seen"])
        self.updates = int(s["updates"])
        self.sat_by_tensor.update(s["sat_by_tensor"])
        if s.get("rank_constants") is not None:
            self.set_rank_constants(*s["rank_constants"])
