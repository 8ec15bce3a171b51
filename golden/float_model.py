"""Float reference model: the accuracy the low-precision model is judged against.

Pure numpy (float32 by default for speed, float64 for gradient checks). Contents:

* TT-matrix layer math. A layer has d cores ``G_k`` of shape ``(r_{k-1}, m_k, n_k, r_k)`` (r_0 = r_d = 1) and
  ``W[(m_1..m_d), (n_1..n_d)] = G_1[:, m_1, n_1, :] @ ... @ G_d[:, m_d, n_d, :]``; ``y = W x + b`` with ``x``
  read as ``(n_1..n_d)`` and ``y`` written row-major over ``(m_1..m_d)``. The dense weight is never formed
  (``tt_to_dense`` exists for tests only): the cores are split at a bond ``p`` into a left group
  ``L = G_1..G_p`` (``(M_L, N_L, r_p)``) and a right group ``R = G_{p+1}..G_d`` (``(r_p, M_R, N_R)``), each
  merged once per call (a cost independent of the batch, like opt_einsum's pre-merge), and the batch is
  contracted with ``L`` and ``R`` by two GEMMs. The split and which group meets the input first are chosen per
  shape and batch size to minimise MACs (``tt_plan``). The backward pass returns the input gradient and the
  core gradients by contractions (the gradients of the merged groups, then back through the merges); no dense
  weight gradient is formed. A one-core layer (d = 1) is an ordinary dense layer: its core is W.
* ``FloatTTNet(cfg, seed)``: the network of a ``NetConfig`` (ReLU where ``layer.relu``, input zero-padded to
  ``layers[0].n_in``, softmax cross-entropy over the first ``cfg.classes`` logits; padded logits are ignored).
* ``FloatDenseNet(sizes, seed)``: the dense MLP of the same shape (He init), for the comparison row.
* ``SGD`` (with momentum, ``v <- mu v + g; w <- w - lr v`` as SPEC 5.5) and ``Adam`` (beta1 for the first
  moment, beta2 for the second, both bias-corrected).
* ``RankAdapter``: Bayesian rank adaptation (PAPER.md, SPEC 5.6), see its docstring for the exact penalty.
* ``train_float(cfg, dataset, seed)`` and ``measure_speed(cfg, batch, n)``.

Loss and gradient scaling: the data term is the mean cross-entropy over the mini-batch, so every gradient is the
batch mean. The rank penalty is added to that mean loss as is (not divided by the batch size).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from golden.config import LayerCfg, NetConfig, RankCfg, TrainCfg
from golden.rank_schedule import SQUEEZE_ROUNDS, RankBudget, RankSchedule, squeeze_cut

__all__ = [
    "tt_to_dense",
    "tt_plan",
    "tt_forward",
    "tt_backward",
    "tt_input_grad",
    "tt_core_grads",
    "bias_grad",
    "tt_init_std",
    "init_tt_cores",
    "softmax_xent",
    "RankAdapter",
    "FloatTTNet",
    "FloatDenseNet",
    "SGD",
    "Adam",
    "make_optimizer",
    "pad_inputs",
    "train_float",
    "measure_speed",
]


# ================================================================================================
# TT-matrix layer math
# ================================================================================================


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


def softmax_xent(logits: np.ndarray, y: np.ndarray, classes: int):
    """Mean softmax cross-entropy over the first ``classes`` logits. Returns (loss, dlogits, pred); the
    gradient is that of the batch mean and is 0 on padded logits."""
    B = logits.shape[0]
    z = logits[:, :classes]
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    s = e.sum(axis=1, keepdims=True)
    rows = np.arange(B)
    loss = float(np.mean(np.log(s[:, 0]) - z[rows, y]))
    g = np.zeros_like(logits)
    gc = e / s
    gc[rows, y] -= 1.0
    g[:, :classes] = gc / B
    return loss, g, np.argmax(z, axis=1)


# ================================================================================================
# Rank adaptation
# ================================================================================================


class RankAdapter:
    """Bayesian rank adaptation over the bonds of TT layers (PAPER.md, SPEC 5.6).

    A bond (l, k) sits between cores k and k+1 of layer l; its slice r is ``G_k[:, :, :, r]`` together with
    ``G_{k+1}[r, :, :, :]`` (D elements in all, counted at full shape). Each slice has a variance lambda and a
    zero-mean Gaussian prior. The penalty added to the (batch-mean) loss is the Gaussian negative log-prior
    scaled by the prior weight::

        P = prior * sum_{l,k,r} M_{k,r} / (2 lambda_{k,r}),     M = sum of squares over the slice,

    so its gradient on an element w of G_k is ``(tau[k-1][r_{k-1}] + tau[k][r_k]) * w`` with
    ``tau = prior / lambda`` (0 for pruned slices, none for the outer bonds): exactly SPEC 5.6's form.

    ``update`` (every ``every`` mini-batches after the warm-up): ``lambda <- 0.9 lambda + 0.1 M / (D + 1)``,
    then any live slice with ``lambda < threshold`` is pruned for good. Initial lambda = M / (D + 1) of the
    initial cores. Pruned slices are zeroed by ``zero_pruned`` (cores, gradients, optimizer state).

    ``keep_min`` (default 1, not in SPEC 5.6): a bond never drops below this many live slices; when more would
    fall, those with the largest lambda stay. A bond of rank 0 makes its layer's output identically zero, so
    without the guard a too-strong prior kills the whole network (seen on digits with prior >= 5e-3)."""

    def __init__(
        self, layers: Sequence[Sequence[np.ndarray]], prior: float = 5e-5, threshold: float = 1e-3, keep_min: int = 1
    ):
        self.prior = float(prior)
        self.threshold = float(threshold)
        self.keep_min = int(keep_min)
        self.bonds: list[tuple[int, int]] = []
        self.lam: dict[tuple[int, int], np.ndarray] = {}
        self.live: dict[tuple[int, int], np.ndarray] = {}
        self.D: dict[tuple[int, int], int] = {}
        self.n_bonds = [max(len(c) - 1, 0) for c in layers]
        for l, cores in enumerate(layers):
            for k in range(len(cores) - 1):
                bond = (l, k)
                self.bonds.append(bond)
                R = cores[k].shape[3]
                self.D[bond] = cores[k].size // R + cores[k + 1].size // R
                self.live[bond] = np.ones(R, dtype=bool)
        M = self.sumsq(layers)
        for bond in self.bonds:
            self.lam[bond] = M[bond] / (self.D[bond] + 1)

    @staticmethod
    def _slice_sumsq(cores, k) -> np.ndarray:
        a = cores[k].astype(np.float64)
        b = cores[k + 1].astype(np.float64)
        return np.einsum("ijkr,ijkr->r", a, a) + np.einsum("rijk,rijk->r", b, b)

    def sumsq(self, layers) -> dict[tuple[int, int], np.ndarray]:
        return {(l, k): self._slice_sumsq(layers[l], k) for (l, k) in self.bonds}

    def tau(self, bond) -> np.ndarray:
        t = np.zeros_like(self.lam[bond])
        live = self.live[bond]
        t[live] = self.prior / self.lam[bond][live]
        return t

    def penalty(self, layers) -> float:
        M = self.sumsq(layers)
        return float(sum(0.5 * np.dot(self.tau(b), M[b]) for b in self.bonds))

    def add_penalty_grads(self, layers, grads) -> None:
        """grads[l][k] += (tau_left + tau_right) * G_k, in place."""
        for l, cores in enumerate(layers):
            d = len(cores)
            for k in range(d):
                if d == 1:
                    continue
                t: float | np.ndarray = 0.0
                if k > 0:
                    t = self.tau((l, k - 1)).astype(cores[k].dtype)[:, None, None, None]
                if k < d - 1:
                    t = t + self.tau((l, k)).astype(cores[k].dtype)[None, None, None, :]
                grads[l][k] += t * cores[k]

    def update(self, layers) -> list[tuple[int, int, int]]:
        """One damped lambda update and pruning step; returns the newly pruned (layer, bond, r)."""
        M = self.sumsq(layers)
        pruned = []
        for bond in self.bonds:
            live = self.live[bond]
            lam = self.lam[bond]
            lam[live] = 0.9 * lam[live] + 0.1 * M[bond][live] / (self.D[bond] + 1)
            newly = live & (lam < self.threshold)
            n_keep = min(self.keep_min, int(live.sum()))
            if int(live.sum() - newly.sum()) < n_keep:  # spare the largest-lambda candidates
                cand = np.flatnonzero(newly)
                spare = cand[np.argsort(-lam[cand], kind="stable")][: n_keep - int(live.sum() - newly.sum())]
                newly[spare] = False
            if newly.any():
                live &= ~newly
                pruned += [(bond[0], bond[1], int(r)) for r in np.flatnonzero(newly)]
        return pruned

    def zero_pruned(self, layers) -> None:
        """Zero the slices of pruned ranks in core-shaped arrays (cores, gradients, optimizer state)."""
        for l, k in self.bonds:
            dead = ~self.live[(l, k)]
            if dead.any():
                layers[l][k][..., dead] = 0
                layers[l][k + 1][dead] = 0

    def live_ranks(self) -> list[tuple[int, ...]]:
        """Live rank of every bond, one tuple per layer (empty for one-core layers)."""
        out: list[list[int]] = [[] for _ in self.n_bonds]
        for l, k in self.bonds:
            out[l].append(int(self.live[(l, k)].sum()))
        return [tuple(x) for x in out]

    def any_pruned(self) -> bool:
        return any((~v).any() for v in self.live.values())


# ================================================================================================
# Networks
# ================================================================================================


def pad_inputs(x: np.ndarray, n: int, dtype=np.float32) -> np.ndarray:
    """Zero-pad the features of a batch (B, D) to (B, n)."""
    x = np.asarray(x)
    if x.shape[1] == n:
        return np.ascontiguousarray(x, dtype=dtype)
    if x.shape[1] > n:
        raise ValueError(f"input has {x.shape[1]} features, more than the padded size {n}")
    out = np.zeros((x.shape[0], n), dtype=dtype)
    out[:, : x.shape[1]] = x
    return out


class _Net:
    """Shared training interface: forward / loss / backward / loss_and_grads / predict / params."""

    classes: int
    n_in: int
    dtype: type

    def params(self) -> list[np.ndarray]:
        raise NotImplementedError

    def _forward(self, x):  # -> logits, caches
        raise NotImplementedError

    def _backward(self, dlogits) -> list[np.ndarray]:
        raise NotImplementedError

    def forward(self, x: np.ndarray) -> np.ndarray:
        """Logits (B, n_out) of a batch; keeps what the backward pass needs."""
        x = pad_inputs(x, self.n_in, self.dtype)
        logits, self._cache = self._forward(x)
        return logits

    def loss(self, x: np.ndarray, y: np.ndarray) -> float:
        """Mean cross-entropy of the batch plus the rank penalty when it is on."""
        logits = self.forward(x)
        ce, self._dlogits, self._pred = softmax_xent(logits, np.asarray(y), self.classes)
        self.last_ce = ce
        return ce + self.penalty()

    def penalty(self) -> float:
        return 0.0

    def backward(self) -> list[np.ndarray]:
        """Gradients (same order as params()) of the last ``loss`` call."""
        return self._backward(self._dlogits)

    def loss_and_grads(self, x, y):
        loss = self.loss(x, y)
        return loss, self.backward()

    def predict(self, x: np.ndarray, batch: int = 1024) -> np.ndarray:
        out = []
        for i in range(0, len(x), batch):
            logits, _ = self._forward(pad_inputs(x[i : i + batch], self.n_in, self.dtype))
            out.append(np.argmax(logits[:, : self.classes], axis=1))
        return np.concatenate(out) if out else np.zeros(0, dtype=np.int64)

    def accuracy(self, x, y) -> float:
        return float(np.mean(self.predict(x) == np.asarray(y)))


class FloatTTNet(_Net):
    """The TT network of a NetConfig in float. ``params()`` order: per layer, its cores then its bias.

    Rank adaptation: ``self.rank`` is a RankAdapter when ``cfg.train.rank.enabled`` (else None);
    ``self.penalty_on`` switches the penalty into loss and gradients (the trainer sets it after the warm-up)."""

    def __init__(self, cfg: NetConfig, seed: int = 0, dtype=np.float32, rng: np.random.Generator | None = None):
        self.cfg = cfg
        self.dtype = np.dtype(dtype).type
        self.classes = cfg.classes
        self.n_in = cfg.layers[0].n_in
        if cfg.input_size > self.n_in:
            raise ValueError("input_size exceeds the first layer's input")
        rng = np.random.default_rng(seed) if rng is None else rng
        self.cores = [init_tt_cores(l, rng, dtype) for l in cfg.layers]
        self.biases = [np.zeros(l.n_out, dtype=dtype) for l in cfg.layers]
        rc: RankCfg = cfg.train.rank
        self.rank = RankAdapter(self.cores, rc.prior, rc.threshold) if rc.enabled else None
        self.penalty_on = False

    def params(self):
        out = []
        for cores, b in zip(self.cores, self.biases):
            out += cores
            out.append(b)
        return out

    def _split(self, flat):
        """Flat param-ordered list -> per-layer core lists."""
        out, i = [], 0
        for cores in self.cores:
            out.append(flat[i : i + len(cores)])
            i += len(cores) + 1
        return out

    def _forward(self, x):
        caches = []
        h = x
        for layer, cores, b in zip(self.cfg.layers, self.cores, self.biases):
            z, c = tt_forward(cores, h)
            z += b
            if layer.relu:
                np.maximum(z, 0, out=z)
            caches.append((c, z if layer.relu else None))
            h = z
        return h, caches

    def _backward(self, dlogits):
        grads_rev = []
        dz = dlogits
        n = len(self.cfg.layers)
        for i in range(n - 1, -1, -1):
            c, act = self._cache[i]
            if act is not None:
                dz = dz * (act > 0)
            db = bias_grad(dz)
            dx, dcores = tt_backward(self.cores[i], c, dz, need_dx=i > 0)
            grads_rev.append(dcores + [db])
            dz = dx
        grads = [g for layer in reversed(grads_rev) for g in layer]
        if self.rank is not None:
            per_layer = self._split(grads)
            if self.penalty_on:
                self.rank.add_penalty_grads(self.cores, per_layer)
            self.rank.zero_pruned(per_layer)
        return grads

    def penalty(self) -> float:
        if self.rank is None or not self.penalty_on:
            return 0.0
        return self.rank.penalty(self.cores)

    def rank_update(self, opt_states: Sequence[Sequence[np.ndarray]] = ()) -> list[tuple[int, int, int]]:
        """Lambda update + pruning; on a prune, zero the slices in the cores and every optimizer state list."""
        if self.rank is None:
            return []
        pruned = self.rank.update(self.cores)
        if pruned:
            self.rank.zero_pruned(self.cores)
            for st in opt_states:
                self.rank.zero_pruned(self._split(st))
        return pruned

    def live_ranks(self) -> list[tuple[int, ...]]:
        if self.rank is not None:
            return self.rank.live_ranks()
        return [tuple(l.ranks) for l in self.cfg.layers]

    def n_core_params(self) -> int:
        """Core parameters counting live ranks only."""
        total = 0
        for layer, live in zip(self.cfg.layers, self.live_ranks()):
            r = (1, *live, 1)
            total += sum(r[k] * layer.out_shape[k] * layer.in_shape[k] * r[k + 1] for k in range(layer.d))
        return total

    def n_params(self) -> int:
        """Live core parameters plus biases."""
        return self.n_core_params() + sum(l.n_out for l in self.cfg.layers)


class FloatDenseNet(_Net):
    """Dense MLP sizes[0] -> ... -> sizes[-1] (He init, zero biases), ReLU after every layer but the last
    (or where ``relu[i]``). Inputs narrower than sizes[0] are zero-padded. ``params()``: W_0, b_0, W_1, ..."""

    def __init__(
        self,
        sizes: Sequence[int],
        seed: int = 0,
        classes: int | None = None,
        relu: Sequence[bool] | None = None,
        dtype=np.float32,
        rng: np.random.Generator | None = None,
    ):
        self.sizes = tuple(int(s) for s in sizes)
        self.dtype = np.dtype(dtype).type
        self.n_in = self.sizes[0]
        self.classes = self.sizes[-1] if classes is None else int(classes)
        n = len(self.sizes) - 1
        self.relu = tuple(relu) if relu is not None else tuple(i < n - 1 for i in range(n))
        rng = np.random.default_rng(seed) if rng is None else rng
        self.W = [
            (rng.standard_normal((o, i)) * math.sqrt(2.0 / i)).astype(dtype)
            for i, o in zip(self.sizes[:-1], self.sizes[1:])
        ]
        self.b = [np.zeros(o, dtype=dtype) for o in self.sizes[1:]]
        self.rank = None

    def params(self):
        return [a for wb in zip(self.W, self.b) for a in wb]

    def _forward(self, x):
        caches = []
        h = x
        for W, b, relu in zip(self.W, self.b, self.relu):
            z = h @ W.T
            z += b
            if relu:
                np.maximum(z, 0, out=z)
            caches.append((h, z if relu else None))
            h = z
        return h, caches

    def _backward(self, dlogits):
        grads = []
        dz = dlogits
        for i in range(len(self.W) - 1, -1, -1):
            h, act = self._cache[i]
            if act is not None:
                dz = dz * (act > 0)
            grads = [dz.T @ h, dz.sum(axis=0)] + grads
            if i > 0:
                dz = dz @ self.W[i]
        return grads

    def live_ranks(self):
        return [() for _ in self.W]

    def n_core_params(self) -> int:
        return sum(W.size for W in self.W)

    def n_params(self) -> int:
        return sum(p.size for p in self.params())


# ================================================================================================
# Optimizers
# ================================================================================================


class SGD:
    """SGD with momentum as SPEC 5.5: v <- mu v + g; w <- w - lr v (plain SGD when mu = 0)."""

    def __init__(self, params: Sequence[np.ndarray], lr: float, momentum: float = 0.9):
        self.lr, self.momentum = float(lr), float(momentum)
        self.v = [np.zeros_like(p) for p in params] if self.momentum else []

    def step(self, params, grads) -> None:
        if not self.momentum:
            for w, g in zip(params, grads):
                w -= self.lr * g
            return
        for w, g, v in zip(params, grads, self.v):
            v *= self.momentum
            v += g
            w -= self.lr * v

    def states(self) -> list[list[np.ndarray]]:
        return [self.v] if self.v else []


class Adam:
    """Adam (Kingma & Ba): m <- b1 m + (1-b1) g; v <- b2 v + (1-b2) g^2;
    w <- w - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)."""

    def __init__(
        self,
        params: Sequence[np.ndarray],
        lr: float = 1e-3,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
    ):
        self.lr, self.beta1, self.beta2, self.eps = float(lr), float(beta1), float(beta2), float(eps)
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, params, grads) -> None:
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        c1 = 1.0 - b1**self.t
        c2 = 1.0 - b2**self.t
        for w, g, m, v in zip(params, grads, self.m, self.v):
            m *= b1
            m += (1.0 - b1) * g
            v *= b2
            v += (1.0 - b2) * (g * g)
            w -= (self.lr / c1) * m / (np.sqrt(v / c2) + self.eps)

    def states(self) -> list[list[np.ndarray]]:
        return [self.m, self.v]


def make_optimizer(train: TrainCfg, params, lr: float | None = None):
    lr = train.lr if lr is None else lr
    if train.optimizer == "sgd":
        return SGD(params, lr, train.momentum)
    if train.optimizer == "adam":
        return Adam(params, lr)
    raise ValueError(f"unknown optimizer {train.optimizer!r}")


# ================================================================================================
# Training
# ================================================================================================


def dense_sizes(cfg: NetConfig) -> tuple[int, ...]:
    """The dense MLP of the same shape: padded input, then every layer's output."""
    return (cfg.layers[0].n_in, *(l.n_out for l in cfg.layers))


def make_net(cfg: NetConfig, seed: int = 0, dense: bool = False, dtype=np.float32, rng=None):
    if dense:
        return FloatDenseNet(
            dense_sizes(cfg), seed, classes=cfg.classes, relu=[l.relu for l in cfg.layers], dtype=dtype, rng=rng
        )
    return FloatTTNet(cfg, seed, dtype=dtype, rng=rng)


def train_float(
    cfg: NetConfig,
    dataset,
    seed: int = 0,
    epochs: int | None = None,
    dense: bool = False,
    progress: bool = True,
    dtype=np.float32,
    eval_every_epoch: bool = True,
) -> dict:
    """Train the float TT net (or the dense MLP when ``dense``) on ``dataset`` with ``cfg.train``.

    One seed drives all randomness (init, then the per-epoch shuffles). Learning rate from
    ``cfg.train.lr_at`` (the schedule), set before each update. The last
    mini-batch of an epoch may be smaller. Rank adaptation (TT only, ``cfg.train.rank.enabled``): from epoch
    ``warmup_epochs`` (0-based) until ``end_epoch`` (if set), the penalty is on and every ``every``-th mini-batch
    runs the lambda update and pruning; after it (or once the live core parameters are down to ``budget`` of the
    full count) the ranks stay and the live slices fine-tune without penalty. Returns a dict of per-epoch lists
    (``train_loss`` = mean CE of the epoch's batches,
    ``train_acc`` of those batches, ``test_acc``, ``live_ranks``, ``core_params``, ``time`` = cumulative wall
    seconds of training, excluding evaluation) plus ``final_test_acc``, ``samples_per_s`` and ``pruned``.
    The phases, the prior's scaling and budget_target follow golden/rank_schedule.py in steps, as the bit-exact
    run does (the penalty here is on the batch-mean loss: the prior per mini-batch over the batch)."""
    tc = cfg.train
    E = tc.epochs if epochs is None else int(epochs)
    rng = np.random.default_rng(seed)
    net = make_net(cfg, dense=dense, dtype=dtype, rng=rng)
    opt = make_optimizer(tc, net.params())
    n_in = net.n_in
    Xtr = pad_inputs(dataset.train_x, n_in, dtype)
    Ytr = np.asarray(dataset.train_y, dtype=np.int64)
    Xte = pad_inputs(dataset.test_x, n_in, dtype)
    Yte = np.asarray(dataset.test_y, dtype=np.int64)
    N, B = len(Xtr), tc.batch
    rank_on = (not dense) and net.rank is not None
    hist: dict[str, Any] = {
        k: [] for k in ("train_loss", "train_acc", "test_acc", "live_ranks", "core_params", "time", "penalty")
    }
    hist["pruned"] = []
    params = net.params()
    updates = 0  # for the learning-rate schedule
    t_train = 0.0
    bar_mod: Any = None
    if progress:
        try:
            import tqdm as bar_mod
        except ImportError:  # pragma: no cover
            bar_mod = None
    budget_met = False  # train.rank.budget reached: the prune phase is over for good
    steps_per_epoch = -(-N // B)  # the last mini-batch of an epoch may be smaller
    schedule = RankSchedule.of(tc.rank, N, B, steps_per_epoch, E * steps_per_epoch)
    budget = RankBudget(cfg)
    if rank_on:
        net.rank.prior = schedule.prior_per_update / B
    penalty_on = False  # warm-up and fine-tuning: off
    for epoch in range(E):
        perm = rng.permutation(N)
        t0 = time.perf_counter()
        ce_sum, correct = 0.0, 0
        starts = range(0, N, B)
        it = (
            bar_mod.tqdm(starts, desc=f"{cfg.name} {'dense' if dense else 'tt'} epoch {epoch + 1}/{E}", leave=False)
            if bar_mod
            else starts
        )
        for i in it:
            step = epoch * steps_per_epoch + i // B
            if rank_on:
                if tc.rank.budget_target and not budget_met and schedule.phase(step) == "finetune":
                    _squeeze_float(net, opt, budget, step, hist, epoch)
                    budget_met = True  # the prune phase is over: what the squeeze left stays
                penalty_on = net.penalty_on = schedule.phase(step) == "prune" and not budget_met
            idx = perm[i : i + B]
            yb = Ytr[idx]
            opt.lr = tc.lr_at(updates, E * len(starts))
            updates += 1
            _, grads = net.loss_and_grads(Xtr[idx], yb)
            ce_sum += net.last_ce * len(idx)
            correct += int(np.sum(net._pred == yb))
            opt.step(params, grads)
            if penalty_on and schedule.update_due(step):
                net.rank.threshold = tc.rank.threshold
                if tc.rank.budget_target:
                    cut = _float_lambda_cut(net, budget, schedule.budget_path(step, budget.full, budget.target))
                    if cut is not None:
                        net.rank.threshold = max(tc.rank.threshold, float(np.nextafter(cut, np.inf)))
                for l, k, r in net.rank_update(opt.states()):
                    hist["pruned"].append((epoch, l, k, r, step))
                budget_met = budget.reached([list(r) for r in net.live_ranks()])
                if budget_met:
                    penalty_on = net.penalty_on = False
        t_train += time.perf_counter() - t0
        hist["train_loss"].append(ce_sum / N)
        hist["train_acc"].append(correct / N)
        hist["penalty"].append(net.penalty())
        hist["test_acc"].append(net.accuracy(Xte, Yte) if (eval_every_epoch or epoch == E - 1) else None)
        hist["live_ranks"].append(net.live_ranks())
        hist["core_params"].append(net.n_core_params())
        hist["time"].append(t_train)
        if progress:
            msg = (
                f"epoch {epoch + 1}/{E}: loss {hist['train_loss'][-1]:.4f} train {hist['train_acc'][-1]:.4f} "
                f"test {hist['test_acc'][-1]} ranks {hist['live_ranks'][-1]} ({t_train:.1f}s)"
            )
            (bar_mod.tqdm.write if bar_mod else print)(msg)
    hist["final_test_acc"] = hist["test_acc"][-1] if E else None
    hist["samples_per_s"] = (N * E / t_train) if t_train > 0 else None
    hist["net"] = net
    return hist


def _float_lambda_cut(net: FloatTTNet, budget: RankBudget, allowed: float) -> float | None:
    """The float twin of golden/train.py Run._lambda_cut: the lambda at or below which the live slices of smallest
    lambda go to bring the budget's cost to at most `allowed`."""
    ranks = [list(r) for r in net.live_ranks()]
    if net.rank is None or budget.cost(ranks) <= allowed:
        return None
    live_lambdas = [
        (float(net.rank.lam[(l, k)][r]), l, k, int(r))
        for l, k in net.rank.bonds
        for r in np.flatnonzero(net.rank.live[(l, k)])
    ]
    return squeeze_cut(budget.cost, ranks, live_lambdas, allowed)


def _squeeze_float(net: FloatTTNet, opt, budget: RankBudget, step: int, hist: dict, epoch: int) -> None:
    """budget_target at the prune end (golden/train.py Run._squeeze): rank updates at a threshold just above the
    lambdas of the slices to go, up to SQUEEZE_ROUNDS."""
    if net.rank is None:
        return
    for _ in range(SQUEEZE_ROUNDS):
        cut = (
            None
            if budget.reached([list(r) for r in net.live_ranks()])
            else _float_lambda_cut(net, budget, budget.target)
        )
        if cut is None:
            break
        net.rank.threshold = float(np.nextafter(cut, np.inf))
        for l, k, r in net.rank_update(opt.states()):
            hist["pruned"].append((epoch, l, k, r, step))


def measure_speed(
    cfg: NetConfig,
    batch: int = 64,
    n: int = 6400,
    dense: bool = False,
    threads: int | None = 1,
    seed: int = 0,
    optimizer: str | None = None,
    dtype=np.float32,
) -> float:
    """Training samples per second (forward, backward, optimizer step) on random data, after one warm-up
    batch. ``threads`` limits the BLAS threads (via threadpoolctl when installed; None leaves them alone)."""
    import contextlib

    ctx = contextlib.nullcontext()
    if threads is not None:
        try:
            from threadpoolctl import threadpool_limits

            ctx = threadpool_limits(limits=threads)
        except ImportError:  # pragma: no cover
            pass
    rng = np.random.default_rng(seed)
    net = make_net(cfg, dense=dense, dtype=dtype, rng=rng)
    tc = TrainCfg(optimizer=optimizer or cfg.train.optimizer, lr=1e-4, momentum=cfg.train.momentum, batch=batch)
    opt = make_optimizer(tc, net.params())  # a small lr: random labels must not blow up (speed is lr-blind)
    X = rng.random((max(batch * 8, batch), cfg.input_size), dtype=np.float32)
    X = pad_inputs(X, net.n_in, dtype)
    Y = rng.integers(0, cfg.classes, len(X))
    params = net.params()
    nb = max(1, n // batch)
    with ctx:
        _, g = net.loss_and_grads(X[:batch], Y[:batch])
        opt.step(params, g)
        t0 = time.perf_counter()
        for j in range(nb):
            s = (j * batch) % (len(X) - batch + 1)
            _, g = net.loss_and_grads(X[s : s + batch], Y[s : s + batch])
            opt.step(params, g)
        dt = time.perf_counter() - t0
    return nb * batch / dt
