"""Memory of the whole on-chip training state, by kind, against FP32 dense training of the same MLP."""

from __future__ import annotations

import math

from golden.ir import BANK_ACT, BANK_CORE, BANK_MASTER, Compiled

KIND_OF_PREFIX = {
    "G": "compute cores",
    "W": "master cores",
    "dG": "core gradients",
    "V": "momentum",
    "B": "biases",
    "dB": "bias gradients",
    "VB": "momentum",
    "M": "adam first moments",
    "S": "adam second moments",
    "LAM": "rank adaptation",
    "TAU": "rank adaptation",
    "MASK": "rank adaptation",
}


def _kind(name: str, bank: str) -> str:
    if bank == BANK_ACT:
        return "activations and scratch (one sample)"
    for prefix in sorted(KIND_OF_PREFIX, key=len, reverse=True):
        if name.startswith(prefix):
            return KIND_OF_PREFIX[prefix]
    return "other"


def dense_sizes(comp: Compiled) -> list[int]:
    cfg = comp.cfg
    return [cfg.input_size] + [l.n_out for l in cfg.layers[:-1]] + [cfg.classes]


def memory_report(comp: Compiled, live_core_params: int | None = None) -> dict:
    """Bytes of every part of the accelerator's training state, and the FP32 dense baselines."""
    by_kind: dict[str, int] = {}
    for name, t in comp.tensors.items():
        if not t.per_sample:
            by_kind[_kind(name, t.bank)] = by_kind.get(_kind(name, t.bank), 0) + t.size * t.fmt.width
    act_width = max(t.fmt.width for t in comp.tensors.values() if t.per_sample)
    by_kind[_kind("", BANK_ACT)] = comp.bank_words[BANK_ACT] * act_width  # shared by live range
    total_bits = sum(by_kind.values())
    sizes = dense_sizes(comp)
    weights = sum(a * b for a, b in zip(sizes, sizes[1:]))
    biases = sum(sizes[1:])
    acts = sum(sizes) * 2  # pre- and post-activation of one sample, and the errors of the same size
    fp32 = 4
    dense_sgd = (weights + biases) * 3 * fp32 + acts * fp32  # weights, gradients, momentum
    dense_adam = (weights + biases) * 4 * fp32 + acts * fp32  # weights, gradients, two moments
    core_params = sum(t.size for t in comp.tensors.values() if t.bank == BANK_CORE)
    live = core_params if live_core_params is None else live_core_params
    core_bits = comp.cfg.formats.core.width
    return {
        "accelerator_bytes": {k: math.ceil(v / 8) for k, v in sorted(by_kind.items())},
        "accelerator_total_bytes": math.ceil(total_bits / 8),
        "dense_mlp": "-".join(map(str, sizes)),
        "dense_fp32_sgd_momentum_bytes": dense_sgd,
        "dense_fp32_adam_bytes": dense_adam,
        "ratio_vs_dense_sgd_momentum": dense_sgd / (total_bits / 8),
        "ratio_vs_dense_adam": dense_adam / (total_bits / 8),
        "core_params": core_params,
        "live_core_params": live,
        "parameter_only_ratio": weights * 32 / (live * core_bits),
        "parameter_only_note": f"FP32 dense {'-'.join(map(str, sizes))} weights vs {core_bits}-bit live TT cores",
        "master_bytes": math.ceil(
            sum(t.size * t.fmt.width for t in comp.tensors.values() if t.bank == BANK_MASTER) / 8
        ),
    }
