"""A pruned network recompiled at smaller ranks, its training state carried over (SPEC 5.6, rank adaptation).

After rank_prune, a pruned slice is zero in every tensor of the cores beside its bond (master, compute core, momentum,
Adam moments; its gradient is zero too, since the other core's slice is), and its mask stays 0. `compact` drops such
slices: it recompiles the network at `ranks` (per bond at least the live rank, at most the current one) and builds a
Machine whose state is the old one without them. Each bond keeps its live slices and, up to its new rank, the first of
its pruned ones (zero, mask 0, so they stay zero): golden/cost.py fit_ranks picks such ranks where the engine runs them
faster than the live ranks alone. The order of the kept slices is theirs in the old state.

The compacted machine computes the same network: its inference (NEAREST rounding) gives the old one's logits bit for
bit, since the dropped products were zero. Training goes on from the same LFSR state, but the programs draw per
element, and the compacted ones have fewer elements, so the draws after the first requantisation differ from the old
machine's: a different stochastic rounding of the same training, not a bit-exact continuation of the old one.

    from golden.compact import compact
    small = compact(machine, [[11, 9, 15], [15]])   # or the ranks `python -m golden cost --fit-ranks` prints
"""

from __future__ import annotations

import re

import numpy as np

from golden.compiler import compile_network
from golden.config_file import with_ranks
from golden.machine import Machine

_BOND_TENSOR = re.compile(r"(\d+)\.(\d+)$")  # G0.1, W0.1, dG0.1, V0.1, M0.1, LAM0.1, TAU0.1, MASK0.1: layer 0, 1


def kept_slices(m: Machine, ranks) -> list[list[list[int]]]:
    """Per layer and bond, the old slice indices `compact` keeps, in order: the live ones (mask not 0) and the first
    pruned ones up to the bond's new rank. Raises ValueError where a rank is below the live rank or above the
    current."""
    if len(ranks) != len(m.cfg.layers):
        raise ValueError(f"ranks {ranks}: expected one list of inner ranks per layer ({len(m.cfg.layers)})")
    out = []
    for l, layer in enumerate(m.cfg.layers):
        if len(ranks[l]) != layer.d - 1:
            raise ValueError(f"ranks {ranks}: layer {l} has {layer.d - 1} bonds")
        bonds = []
        for k, (old, new) in enumerate(zip(layer.ranks, ranks[l])):
            mask = m.mem.get(f"MASK{l}.{k}")
            live = [r for r in range(old) if mask is None or mask[r] != 0]
            if not len(live) <= new <= old:
                raise ValueError(
                    f"ranks {ranks}: bond {k} of layer {l} at {new}, outside {len(live)} (its live "
                    f"slices) .. {old} (its rank now)"
                )
            pruned = [r for r in range(old) if r not in live]
            bonds.append(sorted(live + pruned[: new - len(live)]))
        out.append(bonds)
    return out


def compact(m: Machine, ranks, calibration=None, rounds: int = 48) -> Machine:
    """A Machine for the network recompiled at `ranks` whose state is `m`'s without the dropped slices (module
    docstring): every persistent tensor of a core or a bond sliced along its rank axes, the rest as it is; the
    formats, max and saturation registers, LFSR and counters copied. Call it between mini-batches (the gradient
    buffers zero).

    At other ranks the planner may pick another contraction order, whose intermediates `m` has no format for. Those
    formats alone are then calibrated like Machine.calibrate, on `calibration` = (quantised inputs, labels), after
    which the rest of the state is put back as it was. Raises ValueError where a rank is out of range, or where such
    formats are needed and no calibration batch is given."""
    keep = kept_slices(m, ranks)
    comp = compile_network(with_ranks(m.cfg, ranks))
    new_formats = sorted(n for n, t in comp.tensors.items() if t.adaptive and n not in m.frac)
    if new_formats and calibration is None:
        raise ValueError(
            f"the programs at ranks {ranks} form tensors the old ones do not ({', '.join(new_formats)}): "
            "their formats need a calibration batch"
        )
    out = Machine(comp, 0)
    for name in out.mem:
        old = m.mem[name].reshape(m.comp.tensors[name].shape)
        hit = _BOND_TENSOR.search(name)
        if hit:
            l, k = int(hit[1]), int(hit[2])
            bonds = keep[l]
            if old.ndim == 4:  # a core (r_prev, m, n, r_next): bond k - 1 on the left, bond k on the right
                if k > 0:
                    old = old[bonds[k - 1]]
                if k < len(bonds):
                    old = old[..., bonds[k]]
            else:  # a bond's table (LAM, TAU, MASK): one row per slice
                old = old[bonds[k]]
        if old.size != out.mem[name].size:
            raise AssertionError(f"{name}: {old.size} words kept for {out.mem[name].size}")
        out.mem[name] = np.ascontiguousarray(old).ravel().copy()
    state = m.state_dict()
    del state["mem"]
    for key in ("frac", "maxabs", "sat_by_tensor"):
        state[key] = {n: v for n, v in state[key].items() if n in comp.tensors}
    out.load_state_dict({"mem": out.mem, **state})
    if new_formats:
        xq, labels = calibration
        _calibrate_new(out, new_formats, xq, labels, rounds)
    return out


def _calibrate_new(m: Machine, names: list[str], xq, labels, rounds: int) -> None:
    """Settle the formats of the tensors `names` alone (SPEC 4.2's rule, a batch a round), then restore the rest of
    the state: memories, registers, LFSR and the other formats."""
    saved = m.state_dict()
    for _ in range(rounds):
        m.accumulate_batch(xq, labels)
        if m.adapt(names) == 0:
            break
    frac = {**saved["frac"], **{n: m.frac[n] for n in names}}
    m.load_state_dict({**saved, "frac": frac})
