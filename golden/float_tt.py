"""Float TT-matrix layer math: the float reference model's layers (golden/float_model.py).

A layer has d cores ``G_k`` of shape ``(r_{k-1}, m_k, n_k, r_k)`` (r_0 = r_d = 1) and
``W[(m_1..m_d), (n_1..n_d)] = G_1[:, m_1, n_1, :] @ ... @ G_d[:, m_d, n_d, :]``; ``y = W x + b`` with ``x`` read as
``(n_1..n_d)`` and ``y`` written row-major over ``(m_1..m_d)``. The dense weight is never formed (``tt_to_dense``
exists for tests only): the cores are split at a bond ``p`` into a left group ``L = G_1..G_p`` (``(M_L, N_L, r_p)``)
and a right group ``R = G_{p+1}..G_d`` (``(r_p, M_R, N_R)``), each merged once per call (a cost independent of the
batch, like opt_einsum's pre-merge), and the batch is contracted with ``L`` and ``R`` by two GEMMs. The split and
which group meets the input first are chosen per shape and batch size to minimise MACs (``tt_plan``). The backward
pass returns the input gradient and the core gradients by contractions (the gradients of the merged groups, then back
through the merges); no dense weight gradient is formed. A one-core layer (d = 1) is an ordinary dense layer: its
core is W.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from golden.config import LayerCfg


def _shape_of(cores: Sequence[np.ndarray]) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(out_shape, in_shape, full ranks r_0..r_d) of a list of cores, checked for consistency."""
    ms, ns, rs = [], [], [cores[0].shape[0]]
    for k, g in enumerate(cores):
        if g.ndim != 4 or g.shape[0] != rs[-1]:
            raise ValueError(f"core {k} has shape {g.shape}; expected (r_{k}={rs[-1]}, m, n, r)")
        ms.append(g.shape[1])
        ns.append(g.shape[2])
        rs.append(g.shape[3])
    if rs[0] != 1 or rs[-1] != 1:
        raise ValueError(f"outer ranks must be 1, got r_0={rs[0]}, r_d={rs[-1]}")
    return tuple(ms), tuple(ns), tuple(rs)


def tt_to_dense(cores: Sequence[np.ndarray]) -> np.ndarray:
    """The dense weight W (prod m, prod n) of a TT matrix. For tests only: training never forms W."""
    _shape_of(cores)
    acc = cores[0][0]  # (m1, n1, r1)
    for g in cores[1:]:
        M, N, _ = acc.shape
        _, m, n, b = g.shape
        acc = np.tensordot(acc, g, axes=([2], [0])).transpose(0, 2, 1, 3, 4).reshape(M * m, N * n, b)
    return acc[:, :, 0]


@dataclass(frozen=True)
class TTPlan:
    """How a batch is contracted with a TT layer: split bond p (cores[:p] form L, cores[p:] form R) and
    order "L" (input meets L first) or "R" (input meets R first). p = 0 marks the dense (d = 1) case."""

    p: int
    order: str
    ML: int
    NL: int
    r: int
    MR: int
    NR: int
    macs_fwd_per_sample: int  # batch contractions only
    macs_merge: int  # merging the groups (once per call, independent of the batch)

    def macs_train(self, batch: int) -> int:
        """Approximate MACs for forward + input gradient + core gradients of one mini-batch."""
        return 3 * (self.macs_fwd_per_sample * batch + self.macs_merge)


@lru_cache(maxsize=256)
def tt_plan(
    out_shape: tuple[int, ...],
    in_shape: tuple[int, ...],
    ranks: tuple[int, ...],
    batch: int,
    p: int | None = None,
    order: str | None = None,
) -> TTPlan:
    """The split and order minimising training MACs for this shape at this batch size (cached).
    ``ranks`` are the full ranks r_0..r_d. ``p`` / ``order`` force the split / order (tests use them)."""
    d = len(in_shape)
    if d == 1:
        return TTPlan(0, "dense", 1, 1, 1, out_shape[0], in_shape[0], out_shape[0] * in_shape[0], 0)
    force_p, force_order = p, order
    best: tuple[tuple[int, int], TTPlan] | None = None
    if force_p is not None and not 1 <= force_p < d:
        raise ValueError(f"split p={force_p} outside 1..{d - 1}")
    for p in range(1, d) if force_p is None else (force_p,):
        ML, NL = math.prod(out_shape[:p]), math.prod(in_shape[:p])
        MR, NR = math.prod(out_shape[p:]), math.prod(in_shape[p:])
        r = ranks[p]
        merge = 0
        for j in range(1, p):  # left partial (M, N, r_j) times core j
            merge += (
                math.prod(out_shape[:j])
                * math.prod(in_shape[:j])
                * ranks[j]
                * out_shape[j]
                * in_shape[j]
                * ranks[j + 1]
            )
        for j in range(p, d - 1):  # core j times right partial (r_{j+1}, M, N)
            merge += (
                ranks[j]
                * out_shape[j]
                * in_shape[j]
                * ranks[j + 1]
                * math.prod(out_shape[j + 1 :])
                * math.prod(in_shape[j + 1 :])
            )
        for order, fwd in (("L", ML * r * NR * (NL + MR)), ("R", NL * r * MR * (NR + ML))):
            if force_order is not None and order != force_order:
                continue
            plan = TTPlan(p, order, ML, NL, r, MR, NR, fwd, merge)
            key = (plan.macs_train(batch), plan.ML * plan.NL + plan.MR * plan.NR)
            if best is None or key < best[0]:
                best = (key, plan)
    assert best is not None, "no plan"
    return best[1]


def _merge_left(cores: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Partials L_j = G_1..G_j as (M_j, N_j, r_j) for j = 1..len(cores)."""
    parts = [cores[0][0]]
    for g in cores[1:]:
        prev = parts[-1]
        M, N, _ = prev.shape
        _, m, n, b = g.shape
        parts.append(np.tensordot(prev, g, axes=([2], [0])).transpose(0, 2, 1, 3, 4).reshape(M * m, N * n, b))
    return parts


def _merge_left_backward(cores, parts, dL) -> list[np.ndarray]:
    """Core gradients of cores[:p] from the gradient of the last left partial."""
    grads = [np.empty(0)] * len(cores)  # every slot is set below
    for j in range(len(cores) - 1, 0, -1):
        g, prev = cores[j], parts[j - 1]
        M, N, a = prev.shape
        _, m, n, b = g.shape
        d5 = dL.reshape(M, m, N, n, b)
        grads[j] = np.tensordot(prev, d5, axes=([0, 1], [0, 2]))  # (a, m, n, b)
        dL = np.tensordot(d5, g, axes=([1, 3, 4], [1, 2, 3]))  # (M, N, a)
    grads[0] = dL[None]
    return grads


def _merge_right(cores: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Partials R_j = G_j..G_last as (r_{j-1}, M_j, N_j), listed first core first."""
    parts = [cores[-1][:, :, :, 0]]
    for g in cores[-2::-1]:
        nxt = parts[0]
        _, M, N = nxt.shape
        a, m, n, _ = g.shape
        parts.insert(0, np.tensordot(g, nxt, axes=([3], [0])).transpose(0, 1, 3, 2, 4).reshape(a, m * M, n * N))
    return parts


def _merge_right_backward(cores, parts, dR) -> list[np.ndarray]:
    """Core gradients of cores[p:] from the gradient of the first right partial."""
    grads = [np.empty(0)] * len(cores)  # every slot is set below
    for j in range(len(cores) - 1):
        g, nxt = cores[j], parts[j + 1]
        a, m, n, b = g.shape
        _, M, N = nxt.shape
        d5 = dR.reshape(a, m, M, n, N)
        grads[j] = np.tensordot(d5, nxt, axes=([2, 4], [1, 2]))  # (a, m, n, b)
        dR = np.tensordot(g, d5, axes=([0, 1, 2], [0, 1, 3]))  # (b, M, N)
    grads[-1] = dR[:, :, :, None]
    return grads


def tt_forward(cores: Sequence[np.ndarray], x: np.ndarray, plan: TTPlan | None = None):
    """y = W x for a batch x (B, prod n) -> (B, prod m), W never formed. Returns (y, cache) where cache feeds
    ``tt_backward``."""
    ms, ns, rs = _shape_of(cores)
    B = x.shape[0]
    if x.shape[1] != math.prod(ns):
        raise ValueError(f"input has {x.shape[1]} features, layer expects {math.prod(ns)}")
    if plan is None:
        plan = tt_plan(ms, ns, rs, B)
    if plan.p == 0:
        W = cores[0][0, :, :, 0]
        return x @ W.T, (plan, x, None, None, None)
    p = plan.p
    Ls = _merge_left(cores[:p])
    Rs = _merge_right(cores[p:])
    L, R = Ls[-1], Rs[0]
    ML, NL, r, MR, NR = plan.ML, plan.NL, plan.r, plan.MR, plan.NR
    if plan.order == "L":
        L2 = L.transpose(0, 2, 1).reshape(ML * r, NL)
        T = np.matmul(L2, x.reshape(B, NL, NR))  # (B, ML*r, NR)
        R2 = R.transpose(0, 2, 1).reshape(r * NR, MR)
        y = (T.reshape(B * ML, r * NR) @ R2).reshape(B, ML * MR)
    else:
        R3 = R.transpose(2, 0, 1).reshape(NR, r * MR)
        T = (x.reshape(B * NL, NR) @ R3).reshape(B, NL * r, MR)  # U[b, nL r, mR]
        L3 = L.reshape(ML, NL * r)
        y = np.matmul(L3, T).reshape(B, ML * MR)
    return y, (plan, x, Ls, Rs, T)


def tt_backward(cores: Sequence[np.ndarray], cache, dy: np.ndarray, need_dx: bool = True):
    """From dL/dy (B, prod m): (dL/dx (B, prod n) or None, [dL/dG_k]). Gradients are sums over the batch
    rows of dy (the caller scales dy by 1/B for a mean loss)."""
    plan, x, Ls, Rs, T = cache
    B = x.shape[0]
    if plan.p == 0:
        W = cores[0][0, :, :, 0]
        dW = dy.T @ x
        dx = dy @ W if need_dx else None
        return dx, [dW[None, :, :, None]]
    p = plan.p
    L, R = Ls[-1], Rs[0]
    ML, NL, r, MR, NR = plan.ML, plan.NL, plan.r, plan.MR, plan.NR
    if plan.order == "L":
        R2 = R.transpose(0, 2, 1).reshape(r * NR, MR)
        dY = dy.reshape(B * ML, MR)
        dR2 = T.reshape(B * ML, r * NR).T @ dY  # (r*NR, MR)
        dT = (dY @ R2.T).reshape(B, ML * r, NR)
        X = x.reshape(B, NL, NR)
        dL2 = np.tensordot(dT, X, axes=([0, 2], [0, 2]))  # (ML*r, NL)
        dL = dL2.reshape(ML, r, NL).transpose(0, 2, 1)
        dR = dR2.reshape(r, NR, MR).transpose(0, 2, 1)
        if need_dx:
            L2 = L.transpose(0, 2, 1).reshape(ML * r, NL)
            dx = np.matmul(L2.T, dT).reshape(B, NL * NR)
    else:
        L3 = L.reshape(ML, NL * r)
        dy3 = dy.reshape(B, ML, MR)
        dU = np.matmul(L3.T, dy3)  # (B, NL*r, MR)
        dL3 = np.tensordot(dy3, T, axes=([0, 2], [0, 2]))  # (ML, NL*r)
        dL = dL3.reshape(ML, NL, r)
        dU2 = dU.reshape(B * NL, r * MR)
        dR3 = x.reshape(B * NL, NR).T @ dU2  # (NR, r*MR)
        dR = dR3.reshape(NR, r, MR).transpose(1, 2, 0)
        if need_dx:
            R3 = R.transpose(2, 0, 1).reshape(NR, r * MR)
            dx = (dU2 @ R3.T).reshape(B, NL * NR)
    grads = _merge_left_backward(cores[:p], Ls, np.ascontiguousarray(dL)) + _merge_right_backward(
        cores[p:], Rs, np.ascontiguousarray(dR)
    )
    return (dx if need_dx else None), grads


def tt_input_grad(cores, x, dy):
    """dL/dx for y = W x."""
    return tt_backward(cores, tt_forward(cores, x)[1], dy)[0]


def tt_core_grads(cores, x, dy):
    """[dL/dG_k] for y = W x (summed over the batch)."""
    return tt_backward(cores, tt_forward(cores, x)[1], dy, need_dx=False)[1]


def bias_grad(dy):
    """dL/db for y = W x + b (summed over the batch)."""
    return dy.sum(axis=0)


def tt_init_std(layer: LayerCfg) -> float:
    """s = (2 / (n_in * prod(inner ranks)))^(1/(2d)), so that Var(W) = s^(2d) prod(ranks) = 2 / n_in."""
    return (2.0 / (layer.n_in * math.prod(layer.ranks))) ** (1.0 / (2 * layer.d))


def init_tt_cores(layer: LayerCfg, rng: np.random.Generator, dtype=np.float32) -> list[np.ndarray]:
    s = tt_init_std(layer)
    return [(rng.standard_normal(layer.core_shape(k)) * s).astype(dtype) for k in range(layer.d)]
