"""Tests of the compiler (golden/compiler.py): the compiled programs of the built-in networks (SPEC 5.1, 6): operands,
gradients, sizes, MACs, the memory layout and the refusals."""

from __future__ import annotations

import functools
import math

import pytest

from golden.compiler import CompileError, compile_network, core_name
from golden.config_file import config_from_dict, config_to_dict, load_config
from golden.ir import OpKind
from golden.tests.test_planner import brute_force_min

# ---------------------------------------------------------------------------------------------------------
# compiled programs of the built-in networks

MODELS = ("tiny", "digits", "paper")


@functools.cache
def _compiled(name: str):
    return compile_network(load_config(name))


def _spec_terms(spec: str) -> tuple[str, str, str]:
    lhs, out = spec.split("->")
    a, b = lhs.split(",")
    return a, b, out


def _inputs_of(comp, prog) -> set[str]:
    """Per-sample tensors a program reads but never writes: the network input, loaded by the host."""
    written = {op.out for op in prog}
    return {n for op in prog for n in op.ins if n and comp.tensors[n].per_sample and n not in written}


@pytest.mark.parametrize("model", MODELS)
def test_operands_defined_before_use(model):
    comp = _compiled(model)
    persistent = {n for n, t in comp.tensors.items() if not t.per_sample}
    for prog_name in ("train_sample", "infer", "update", "rank_update"):
        prog = getattr(comp, prog_name)
        inputs = _inputs_of(comp, prog)
        if prog_name in ("train_sample", "infer"):
            assert len(inputs) == 1, f"{prog_name}: reads per-sample tensors nobody writes: {inputs}"
            (x,) = inputs
            assert comp.tensors[x].size == comp.cfg.padded_input
            assert x in prog[0].ins
        else:
            assert not inputs, f"{prog_name} reads per-sample tensors {inputs}"
        defined = persistent | inputs
        for i, op in enumerate(prog):
            for name in op.ins:
                if not name:
                    continue  # an absent optional operand (e.g. the missing tau of an outer bond)
                assert name in comp.tensors, f"{prog_name}[{i}] {op.kind}: unknown tensor {name}"
                assert name in defined, f"{prog_name}[{i}] {op.kind} reads {name} before it is written"
            assert op.out in comp.tensors, f"{prog_name}[{i}]: unknown output {op.out}"
            defined.add(op.out)


@pytest.mark.parametrize("model", MODELS)
def test_train_sample_writes_every_gradient_by_accumulation(model):
    """Persistent outputs of train_sample are gradient buffers, accumulated over the batch, one per parameter."""
    comp = _compiled(model)
    written = {}
    for op in comp.train_sample:
        t = comp.tensors[op.out]
        if not t.per_sample:
            assert op.kind == OpKind.ACC or (op.kind == OpKind.CONTRACT and op.accumulate), (
                f"{op.kind} overwrites persistent {op.out} once per sample"
            )
            written[op.out] = written.get(op.out, 0) + 1
    n_params = sum(layer.d + 1 for layer in comp.cfg.layers)  # cores and a bias per layer
    assert len(written) == n_params and set(written.values()) == {1}
    for l, layer in enumerate(comp.cfg.layers):
        for k in range(layer.d):
            g = core_name(l, k)
            assert comp.tensors[g].shape == layer.core_shape(k)
            grads = [n for n in written if comp.tensors[n].shape == layer.core_shape(k)]
            assert grads, f"no gradient buffer shaped like {g}"


@pytest.mark.parametrize("model", MODELS)
def test_contract_specs_match_tensor_sizes(model):
    comp = _compiled(model)
    sizes = comp.letter_sizes
    producer_letters = {}
    for prog_name in ("train_sample", "infer"):
        for op in getattr(comp, prog_name):
            if op.kind != OpKind.CONTRACT:
                continue
            ia, ib, io = _spec_terms(op.spec)
            (a, b), out = op.ins, op.out
            for letters, name in ((ia, a), (ib, b), (io, op.out)):
                assert len(set(letters)) == len(letters), f"repeated index in {op.spec}"
                assert math.prod(sizes[c] for c in letters) == comp.tensors[name].size, (
                    f"{op.spec}: {letters} sizes do not multiply to {name}'s {comp.tensors[name].size}"
                )
                if not comp.tensors[name].per_sample:  # stored cores: (r_{k-1}, m, n, r_k) row-major (SPEC 4.1);
                    # the outer ranks (1) have no letter, so compare the shapes without their unit dimensions
                    assert [sizes[c] for c in letters if sizes[c] > 1] == [
                        s for s in comp.tensors[name].shape if s > 1
                    ], (op.spec, name)
            assert set(io) <= set(ia) | set(ib)
            assert op.macs == math.prod(sizes[c] for c in set(ia) | set(ib))
            # a per-sample intermediate is read with the index order it was written in (same layer's letters)
            for letters, name in ((ia, a), (ib, b)):
                if name in producer_letters and set(producer_letters[name]) & set(letters):
                    assert producer_letters[name] == letters, (
                        f"{name} written as {producer_letters[name]} but read as {letters}"
                    )
            if comp.tensors[out].per_sample:
                producer_letters[out] = io


def _layer_of_op(comp, op) -> int:
    letters = set(op.spec.replace(",", "").replace("->", ""))
    owners = set()
    for l, layer in enumerate(comp.cfg.layers):
        mine = set()
        for k in range(layer.d):
            for prog in (comp.infer,):
                for o in prog:
                    if o.kind == OpKind.CONTRACT and core_name(l, k) in o.ins:
                        ia, ib, _ = _spec_terms(o.spec)
                        mine |= set(ia if o.ins[0] == core_name(l, k) else ib)
        if letters & mine:
            owners.add(l)
    assert len(owners) == 1, f"{op.spec} touches layers {owners}"
    return owners.pop()


def _layer_problem(layer):
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    n = [next(letters) for _ in range(layer.d)]
    m = [next(letters) for _ in range(layer.d)]
    r = [next(letters) for _ in range(layer.d - 1)]
    sizes = dict(zip(n, layer.in_shape)) | dict(zip(m, layer.out_shape)) | dict(zip(r, layer.ranks))
    cores = {f"G{k}": (r[k - 1] if k else "") + m[k] + n[k] + (r[k] if k < layer.d - 1 else "") for k in range(layer.d)}
    return {"X": "".join(n), **cores}, sizes, "".join(m), frozenset(cores)


def _sweep_macs(layer) -> int:
    """MACs of the left-to-right sweep x -> G1 -> G2 -> ... (the baseline order)."""
    r = layer.full_ranks
    total = 0
    for k in range(layer.d):
        total += (
            math.prod(layer.out_shape[: k + 1])
            * r[k]
            * layer.in_shape[k]
            * r[k + 1]
            * math.prod(layer.in_shape[k + 1 :])
        )
    return total


@pytest.mark.parametrize("model", MODELS)
def test_forward_macs_per_layer_are_optimal(model):
    comp = _compiled(model)
    per_layer = {}
    for op in comp.infer:
        if op.kind == OpKind.CONTRACT:
            l = _layer_of_op(comp, op)
            per_layer[l] = per_layer.get(l, 0) + op.macs
    assert sum(per_layer.values()) == comp.macs("infer")
    for l, layer in enumerate(comp.cfg.layers):
        operands, sizes, out, weights = _layer_problem(layer)
        best, _ = brute_force_min(operands, sizes, out, (), weights)
        assert per_layer[l] == best, f"layer {l}: {per_layer[l]} MACs, optimum {best}"
        assert per_layer[l] <= _sweep_macs(layer)
    # the training program holds the forward pass (stochastic rounding) with the same MACs
    fwd = [op for op in comp.train_sample if op.kind == OpKind.CONTRACT and comp.tensors[op.out].per_sample]
    assert sum(op.macs for op in comp.infer if op.kind == OpKind.CONTRACT) <= sum(op.macs for op in fwd)


def test_paper_macs_within_budget():
    comp = _compiled("paper")
    cfg = comp.cfg
    sweep = [_sweep_macs(layer) for layer in cfg.layers]
    assert sweep == [974_848, 12_288]  # 0.97M: the left-to-right sweep of the TT layer (0.99M with layer 2)
    first = sum(op.macs for op in comp.infer if op.kind == OpKind.CONTRACT and _layer_of_op(comp, op) == 0)
    assert first <= sweep[0]
    assert comp.macs("infer") <= sum(sweep)
    assert comp.macs("train_sample") <= 2.90e6


def test_reusing_forward_products_saves_macs():
    d = config_to_dict(load_config("paper"))
    d["train"]["reuse_forward"] = False
    no_reuse = compile_network(config_from_dict(d))
    assert _compiled("paper").macs("train_sample") < no_reuse.macs("train_sample")
    assert _compiled("paper").macs("infer") == no_reuse.macs("infer")


@pytest.mark.parametrize("model", MODELS)
def test_layout_never_overlaps_live_tensors(model):
    """Persistent tensors own disjoint words of their bank; per-sample tensors may share words only when their
    live ranges in train_sample (first to last reference; the input is live from the start) are disjoint."""
    comp = _compiled(model)
    prog = comp.train_sample
    live = {}
    for i, op in enumerate(prog):
        for n in (*op.ins, op.out):
            if n and comp.tensors[n].per_sample:
                lo, hi = live.get(n, (i, i))
                live[n] = (min(lo, i), max(hi, i))
    for x in _inputs_of(comp, prog):
        live[x] = (-1, live[x][1])
    names = sorted(comp.tensors)
    for n in names:
        bank, base = comp.layout[n]
        assert bank == comp.tensors[n].bank
        assert 0 <= base and base + comp.tensors[n].size <= comp.bank_words[bank]
    for i, a in enumerate(names):
        ta, (bank_a, base_a) = comp.tensors[a], comp.layout[a]
        for b in names[i + 1 :]:
            tb, (bank_b, base_b) = comp.tensors[b], comp.layout[b]
            if bank_a != bank_b or base_a + ta.size <= base_b or base_b + tb.size <= base_a:
                continue
            assert ta.per_sample and tb.per_sample, f"{a} and {b} overlap in bank {bank_a}"
            assert a in live and b in live, f"{a} or {b} unused but placed over another tensor"
            (fa, la), (fb, lb) = live[a], live[b]
            assert la < fb or lb < fa, f"{a} {live[a]} and {b} {live[b]} are live together but share words"


def test_compiler_rejects_a_program_that_could_overflow_the_accumulator():
    cfg = config_from_dict(
        {
            "name": "wide",
            "input_size": 1024,
            "classes": 4,
            "layers": [{"in_shape": [1024], "out_shape": [4], "ranks": [], "relu": False}],
            "formats": {"input": [32, 20], "core": [8, 7], "master": [8, 7]},
        }
    )
    with pytest.raises((ValueError, OverflowError)):
        compile_network(cfg)


def test_compiler_rejects_a_network_wider_than_the_descriptor_fields():
    """A stride of 64^3 * 4^2 words does not fit a contraction descriptor's 20-bit stride field: a CompileError
    naming the op and the field, as for any other network the accelerator cannot run."""
    cfg = config_from_dict(
        {
            "name": "huge",
            "input_size": 16,
            "classes": 4,
            "layers": [
                {"in_shape": [64, 64, 64, 4], "out_shape": [64, 64, 64, 1], "ranks": [64, 64, 64], "relu": True},
                {"in_shape": [64**3], "out_shape": [4], "ranks": [], "relu": False},
            ],
        }
    )
    with pytest.raises(
        CompileError,
        match=r"^the network does not fit the accelerator's op descriptors: contract "
        r"descriptor for .*\(20-bit stride field\); use smaller factors or ranks$",
    ):
        compile_network(cfg)


def test_quant_const_of_a_vanishing_step_is_zero():
    """The last updates of a cosine schedule have a step below half an LSB of the finest format: zero, not an
    error (a run crashed on it once)."""
    from golden.semantics import quant_const

    assert quant_const(-4.3e-10) == (0, 0)
    assert quant_const(0.9) == (29491, 15)
    with pytest.raises(ValueError):
        quant_const(1e12)
