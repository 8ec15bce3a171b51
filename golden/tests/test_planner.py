"""Tests of the planner (golden/planner.py): the contraction order against an independent brute force and
numpy.einsum_path, the index layouts and element orders against the exact cycles they are chosen by (SPEC 5.1, 6)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from golden import compiler, planner, program as P
from golden.compiler import compile_network
from golden.config_file import load_config, with_ranks
from golden.ir import OpKind
from golden.planner import PLAN_ENGINES, lane_order, plan_contraction

MODELS = ("tiny", "digits", "paper")


# ---------------------------------------------------------------------------------------------------------
# An independent brute force: every full binary contraction tree, costed from first principles.


def _trees(leaves: tuple[str, ...]):
    """All full binary trees over `leaves` (unordered children): leaf = name, node = (left, right)."""
    if len(leaves) == 1:
        yield leaves[0]
        return
    first, rest = leaves[0], leaves[1:]
    n = len(rest)
    for mask in range(2**n):  # the left part always holds `first`; the right part must be non-empty
        left = (first,) + tuple(rest[i] for i in range(n) if mask >> i & 1)
        right = tuple(rest[i] for i in range(n) if not mask >> i & 1)
        if not right:
            continue
        for tl in _trees(left):
            for tr in _trees(right):
                yield (tl, tr)


def _leafset(tree) -> frozenset:
    return frozenset([tree]) if isinstance(tree, str) else _leafset(tree[0]) | _leafset(tree[1])


def _open_indices(subset: frozenset, operands: dict[str, str], out: str) -> set:
    """Indices of the tensor a subset contracts to: those it holds that the output or another operand needs."""
    inside = set("".join(operands[n] for n in subset))
    outside = set(out).union(*(set(operands[n]) for n in operands if n not in subset))
    return inside & outside


def _pair_macs(a: frozenset, b: frozenset, operands, sizes, out) -> int:
    """MACs of contracting two tensors: one multiply-accumulate per point of the union of their indices."""
    idx = _open_indices(a, operands, out) | _open_indices(b, operands, out)
    return math.prod(sizes[c] for c in idx)


def brute_force_min(operands: dict[str, str], sizes: dict[str, int], out: str, cached=(), weights=frozenset()):
    """Minimum MACs over all binary trees. A cached subset costs 0 (its subtree is never computed); a computed
    node made only of >= 2 weights is forbidden. Returns (cost, tree) or (inf, None)."""
    cached = set(cached)

    def cost(tree) -> float:
        s = _leafset(tree)
        if len(s) == 1 or s in cached:
            return 0
        if len(s) >= 2 and s <= weights:
            return math.inf
        return cost(tree[0]) + cost(tree[1]) + _pair_macs(_leafset(tree[0]), _leafset(tree[1]), operands, sizes, out)

    best, best_tree = math.inf, None
    for tree in _trees(tuple(sorted(operands))):
        c = cost(tree)
        if c < best:
            best, best_tree = c, tree
    return best, best_tree


def _check_steps(steps, cost, operands, sizes, out, cached, weights):
    """The returned steps form one valid binary tree whose MACs are reported correctly."""
    available = {frozenset([n]) for n in operands} | set(cached)
    total = 0
    for st in steps:
        assert st.left in available and st.right in available, f"step uses an undefined operand: {st}"
        assert not st.left & st.right
        assert st.result == st.left | st.right
        assert not (len(st.result) >= 2 and st.result <= weights), f"weights-only subset {set(st.result)}"
        assert st.macs == _pair_macs(st.left, st.right, operands, sizes, out)
        total += st.macs
        available.add(st.result)
    full = frozenset(operands)
    if full not in cached:
        assert steps and steps[-1].result == full
        assert steps[-1].indices == out
        for st in steps[:-1]:
            assert set(st.indices) == _open_indices(st.result, operands, out)
    assert total == cost


# ---------------------------------------------------------------------------------------------------------
# random TT-layer contraction problems, as the compiler poses them


def _tt_problem(rng, d: int):
    """Letters and sizes of a random TT layer: x (n1..nd), cores (r_{k-1} m_k n_k r_k), y (m1..md)."""
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    n = [next(letters) for _ in range(d)]
    m = [next(letters) for _ in range(d)]
    r = [next(letters) for _ in range(d - 1)]
    sizes = {c: int(rng.integers(1, 6)) for c in n + m}
    sizes.update({c: int(rng.integers(1, 7)) for c in r})
    cores = {f"G{k}": (r[k - 1] if k else "") + m[k] + n[k] + (r[k] if k < d - 1 else "") for k in range(d)}
    return "".join(n), "".join(m), cores, sizes


def _problem(rng, d: int, kind: str):
    """(operands, sizes, out, weights) of a forward, input-error or core-gradient contraction."""
    n, m, cores, sizes = _tt_problem(rng, d)
    weights = frozenset(cores)
    if kind == "forward":
        return {"X": n, **cores}, sizes, m, weights
    if kind == "error":
        return {"E": m, **cores}, sizes, n, weights
    k = int(rng.integers(0, d))
    others = {g: idx for g, idx in cores.items() if g != f"G{k}"}
    return {"X": n, "E": m, **others}, sizes, cores[f"G{k}"], frozenset(others)


def _random_cache(rng, names: list[str], count: int) -> dict[frozenset, str]:
    cache = {}
    full = frozenset(names)
    for _ in range(count):
        size = int(rng.integers(2, len(names))) if len(names) > 2 else 0
        if size < 2:
            break
        s = frozenset(rng.choice(names, size=size, replace=False).tolist())
        if s != full:
            cache[s] = "cached" + "+".join(sorted(s))
    return cache


CASES = [
    (seed, d, kind)
    for d in (1, 2, 3, 4)
    for kind in ("forward", "error", "gradient")
    for seed in range(6 if d < 4 else 3)
]


@pytest.mark.parametrize("seed,d,kind", CASES)
def test_plan_is_minimum_over_all_trees(seed, d, kind):
    rng = np.random.default_rng(1000 * d + 10 * ("forward", "error", "gradient").index(kind) + seed)
    operands, sizes, out, weights = _problem(rng, d, kind)
    names = sorted(operands)
    for cache in ({}, _random_cache(rng, names, 1), _random_cache(rng, names, 3)):
        for w in (weights, frozenset()):
            steps, cost = plan_contraction(dict(operands), dict(sizes), out, dict(cache), w)
            best, tree = brute_force_min(operands, sizes, out, cache, w)
            assert cost == best, f"planner {cost} MACs, brute force {best} via {tree} (cache {cache}, weights {w})"
            _check_steps(steps, cost, operands, sizes, out, cache, w)


def test_weights_restriction_binds():
    """With a big rank and unit modes, merging the two cores first is cheapest (9 MACs against 16). Without the
    restriction the planner does it; with it, it never forms the weights-only subset and pays 16."""
    operands = {"X": "ab", "G0": "cap", "G1": "pdb"}  # n = (a, b), m = (c, d), rank p
    sizes = {"a": 1, "b": 1, "c": 1, "d": 1, "p": 8}
    weights = frozenset({"G0", "G1"})
    free, free_cost = plan_contraction(operands, sizes, "cd", {}, frozenset())
    restricted, cost = plan_contraction(operands, sizes, "cd", {}, weights)
    assert (free_cost, cost) == (9, 16)
    assert free_cost == brute_force_min(operands, sizes, "cd")[0]
    assert cost == brute_force_min(operands, sizes, "cd", (), weights)[0]
    assert any(st.result == weights for st in free)
    assert not any(st.result == weights for st in restricted)
    # a cached weights-only product is free: nothing is recomputed, so the restriction does not apply
    _, cached_cost = plan_contraction(operands, sizes, "cd", {weights: "G0G1"}, weights)
    assert cached_cost == 1


def _numpy_path_cost(path, operands: list[str], sizes, out) -> tuple[int, int]:
    """(MACs, numpy-style FLOPs) of a pairwise einsum path; numpy counts 2 per MAC when an index is summed."""
    terms = [set(t) for t in operands]
    macs = flops = 0
    for pair in path[1:]:
        assert len(pair) == 2
        i, j = sorted(pair)
        a, b = terms[i], terms[j]
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        keep = (a | b) & (set(out).union(*rest))
        pm = math.prod(sizes[c] for c in a | b)
        macs += pm
        flops += pm * (2 if (a | b) - keep else 1)
        terms = rest + [keep]
    return macs, flops


@pytest.mark.parametrize("seed", range(10))
def test_plan_against_numpy_einsum_path(seed):
    """Without restriction or cache, the planner's MACs are <= those of numpy's 'optimal' path, and numpy's path
    is <= the planner's in numpy's own FLOP metric: the two optima agree up to the metric."""
    rng = np.random.default_rng(seed)
    d = 1 + seed % 4
    operands, sizes, out, _ = _problem(rng, d, ("forward", "error", "gradient")[seed % 3])
    names = sorted(operands)
    steps, cost = plan_contraction(operands, sizes, out, {}, frozenset())
    arrays = [np.empty([sizes[c] for c in operands[n]]) for n in names]
    spec = ",".join(operands[n] for n in names) + "->" + out
    path, text = np.einsum_path(spec, *arrays, optimize=("optimal", 1e18))
    np_macs, np_flops = _numpy_path_cost(path, [operands[n] for n in names], sizes, out)
    reported = float(text.split("Optimized FLOP count:")[1].split()[0])  # numpy prints its cost + 1
    assert reported == pytest.approx(np_flops + 1, rel=1e-3), "the FLOP metric is not the one modelled here"
    plan_flops = 0
    for st in steps:
        summed = (_open_indices(st.left, operands, out) | _open_indices(st.right, operands, out)) - _open_indices(
            st.result, operands, out
        )
        plan_flops += st.macs * (2 if summed else 1)
    assert cost == brute_force_min(operands, sizes, out)[0]
    assert cost <= np_macs
    assert np_flops <= plan_flops


def test_lane_order_puts_the_cheapest_one_sided_index_innermost():
    sizes = {"a": 7, "b": 4, "e": 4, "f": 4, "i": 16, "j": 16, "c": 2, "d": 16}
    # efajb of abcd x efjcd (K = cd = 32): j costs |efjcd| + 7168 / 16 * 32 = 22,528; a (7 lanes) 33,664; b 58,240;
    # efjcd's other one-sided indices (e, f) go outermost
    assert lane_order("efajb", "abcd", "efjcd", sizes) == "efabj"
    assert lane_order("abefj", "abcd", "efjcd", sizes) == "efabj"
    # efjcd of ifbj x eibcd (K = ib = 64): j and d both give 16 lanes; j's operand is half the size to load; ifbj's f
    # goes outermost
    assert lane_order("efjcd", "ifbj", "eibcd", sizes) == "fecdj"
    # equal costs: the last one goes innermost
    assert lane_order("xy", "x", "y", {"x": 4, "y": 4}) == "xy"
    assert lane_order("yx", "x", "y", {"x": 4, "y": 4}) == "yx"
    # an index of both operands (a batch index) is never the lane index
    assert lane_order("ebd", "abd", "ebd", {"a": 2, "b": 8, "d": 8, "e": 4}) == "bde"
    assert lane_order("cd", "cd", "cd", sizes) == "cd"


@pytest.mark.parametrize("model", ["tiny", "digits", "paper"])
def test_intermediates_end_in_a_one_sided_index(model):
    """Every intermediate a contraction produces ends in an index of exactly one of its operands (lane_order), the
    output loop that golden/isa/lanes.py with_lanes spreads over the MAC lanes."""
    comp = compile_network(load_config(model))
    checked = 0
    for op in comp.train_sample + comp.infer:
        if op.kind != OpKind.CONTRACT or "[" not in op.out:  # intermediates are named label[operands] (emit_chain)
            continue
        (ia, ib), out = op.spec.split("->")[0].split(","), op.spec.split("->")[1]
        if set(out) - (set(ia) & set(ib)):  # some index is one-sided
            inner = out[-1]
            assert (inner in ia) != (inner in ib), f"{op.out} ({op.spec}): innermost {inner} is in both operands"
            checked += 1
    assert checked, f"{model}: no intermediate with a one-sided index was checked"


@pytest.mark.parametrize("model", ["tiny", "digits", "paper"])
def test_element_order_of_outputs_with_a_given_layout(monkeypatch, model):
    """A chain's last step writes a tensor whose layout is given: its op keeps that layout in the spec and takes
    lane_order's order as its element order (SPEC 5.1, 6); an intermediate's element order is its layout. This is
    the order before refine_orders (switched off here; test_refine_orders checks what it changes)."""
    monkeypatch.setattr(compiler, "refine_orders", lambda comp: None)
    comp = compile_network(load_config(model))
    reordered = 0
    for op in comp.train_sample + comp.infer:
        if op.kind != OpKind.CONTRACT:
            continue
        (ia, ib), out = op.spec.split("->")[0].split(","), op.spec.split("->")[1]
        t = comp.tensors[op.out]
        if "[" in op.out:
            assert op.order == "" and op.element_order() == out == t.indices, op.out
            continue
        assert out == t.indices, f"{op.out}: spec output {out!r}, layout {t.indices!r}"
        want = lane_order(out, ia, ib, comp.letter_sizes)
        assert op.element_order() == want and op.order in ("", want), (op.out, op.order, want)
        reordered += op.order != ""
    # Z0 (in train_sample and infer) and two gradients (tiny), four (digits); four core gradients (paper)
    assert reordered == {"tiny": 4, "digits": 6, "paper": 4}[model], reordered


PRUNED_PAPER = [[11, 9, 15], [15]]


def _compiled(model: str, ranks=None):
    cfg = load_config(model)
    return compile_network(with_ranks(cfg, ranks) if ranks else cfg)


def _contract_cycles_total(comp) -> int:
    """Every contraction's lane-cycles on the compiler's PLAN_ENGINES (refine_layouts' measure)."""
    return sum(
        planner.plan_lane_cycles(op.spec, op.element_order(), comp.letter_sizes)
        for op in comp.train_sample + comp.infer
        if op.kind == OpKind.CONTRACT
    )


@pytest.mark.parametrize("model,ranks", [("tiny", None), ("digits", None), ("paper", None), ("paper", PRUNED_PAPER)])
def test_refined_layouts_are_locally_fastest(monkeypatch, model, ranks):
    """After refine_layouts' passes (a later intermediate's choice changes ops an earlier one was chosen for), no
    candidate layout of any intermediate makes the contractions that write and read it faster (judged before
    refine_orders re-chooses the element orders, as refine_layouts judges them)."""
    monkeypatch.setattr(compiler, "refine_orders", lambda comp: None)
    comp = _compiled(model, ranks)
    contracts = [op for op in comp.train_sample + comp.infer if op.kind == OpKind.CONTRACT]
    checked = 0
    for name, t in comp.tensors.items():
        if "[" not in name:  # intermediates are named label[operands]
            continue
        touching = [op for op in contracts if op.out == name or name in op.ins]
        ia, ib = next(op for op in touching if op.out == name).spec.split("->")[0].split(",")
        here = planner.layout_cycles(touching, name, t.indices, comp.letter_sizes)
        for other in planner.layout_candidates(t.indices, ia, ib):
            assert here <= planner.layout_cycles(touching, name, other, comp.letter_sizes), (model, name, other)
        assert t.shape == tuple(comp.letter_sizes[c] for c in t.indices)
        checked += 1
    assert checked


@pytest.mark.parametrize(
    "model,ranks,faster",
    [("tiny", None, False), ("digits", None, True), ("paper", None, True), ("paper", PRUNED_PAPER, True)],
)
def test_refine_layouts_against_lane_order_alone(monkeypatch, model, ranks, faster):
    """refine_layouts never makes the modelled contractions slower than lane_order's layouts; on digits and paper
    (lane sums and rows: runs at stride 1 that lane_order's guess does not look for; the pruned paper model's short
    rank lane indices) it makes them faster."""
    monkeypatch.setattr(compiler, "refine_orders", lambda comp: None)
    refined = _contract_cycles_total(_compiled(model, ranks))
    monkeypatch.setattr(compiler, "refine_layouts", lambda *args: None)
    plain = _contract_cycles_total(_compiled(model, ranks))
    assert refined < plain if faster else refined <= plain, (refined, plain)


def _program_contract_cycles(comp, program: str) -> int:
    """The contraction unit's lane-cycles of one program on the compiler's PLAN_ENGINES, with preloading."""
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    total = 0
    for e in PLAN_ENGINES:
        p = planner.plan_params(comp, e)
        total += e.lanes * P.linked_cycles(
            [
                P.contract_desc(comp, p, op, frac) if op.kind == OpKind.CONTRACT else None
                for op in getattr(comp, program)
            ],
            p.bank_shift,
        )
    return total


@pytest.mark.parametrize("model,ranks", [("tiny", None), ("digits", None), ("paper", None), ("paper", PRUNED_PAPER)])
def test_refine_orders(monkeypatch, model, ranks):
    """refine_orders changes element orders only (every spec, layout and MAC count stays; an order is a permutation
    of the output indices) and never makes a program's contractions slower (linked_cycles at the compiler's
    hints); on these models it makes train_sample faster (paper: dG0.2's lane operand becomes F0, which the op before
    may preload, where it was that op's output D0.2)."""
    refined = _compiled(model, ranks)
    monkeypatch.setattr(compiler, "refine_orders", lambda comp: None)
    plain = _compiled(model, ranks)
    for prog in ("train_sample", "infer"):
        for a, b in zip(getattr(refined, prog), getattr(plain, prog)):
            assert (a.kind, a.out, a.ins, a.spec, a.macs) == (b.kind, b.out, b.ins, b.spec, b.macs)
            if a.kind != OpKind.CONTRACT:
                continue
            assert sorted(a.element_order()) == sorted(a.spec.split("->")[1])
            assert a.order != a.spec.split("->")[1]  # an order equal to the layout is written ""
        assert _program_contract_cycles(refined, prog) <= _program_contract_cycles(plain, prog), prog
    assert refined.layout == plain.layout
    won = _program_contract_cycles(plain, "train_sample") - _program_contract_cycles(refined, "train_sample")
    assert won > 0, won
