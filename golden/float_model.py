"""Float reference model: the accuracy the low-precision model is judged against.

Pure numpy (float32 by default for speed, float64 for gradient checks), on the TT layers of golden/float_tt.py:

* ``FloatTTNet(cfg, seed)``: the network of a ``NetConfig`` (ReLU where ``layer.relu``, input zero-padded to
  ``layers[0].n_in``, softmax cross-entropy over the first ``cfg.classes`` logits; padded logits are ignored).
* ``FloatDenseNet(sizes, seed)``: the dense MLP of the same shape (He init), for the comparison row.
* ``SGD`` (with momentum, ``v <- mu v + g; w <- w - lr v`` as SPEC 5.5) and ``Adam`` (beta1 for the first
  moment, beta2 for the second, both bias-corrected).
* ``RankAdapter``: Bayesian rank adaptation (PAPER.md, SPEC 5.6), see its docstring for the exact penalty.

golden/float_train.py trains them (``train_float``) and measures their speed (``measure_speed``).

Loss and gradient scaling: the data term is the mean cross-entropy over the mini-batch, so every gradient is the
batch mean. The rank penalty is added to that mean loss as is (not divided by the batch size).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from golden.config import NetConfig, RankCfg, TrainCfg
from golden.float_tt import bias_grad, init_tt_cores, tt_backward, tt_forward


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
