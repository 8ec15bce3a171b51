"""The lane cycle model (scripts/lane_model.py): bounds any model of a MAC array must respect."""

import pytest

from scripts import lane_model


def test_split_reads_the_einsum():
    sizes = {"i": 8, "k": 64, "j": 16, "b": 3}
    assert lane_model.split("ik,kj->ij", sizes) == (64, 8, 16)
    assert lane_model.split("bik,kj->bij", sizes) == (64, 24, 16)  # b indexes only the first operand here


def test_one_lane_is_one_mac_a_cycle_plus_the_first_load():
    plan = lane_model.plan_op("ik,kj->ij", 8 * 64 * 16, {"i": 8, "k": 64, "j": 16}, lanes=1, width=1, requant=1)
    assert (plan.la, plan.lb) == (1, 1)
    assert plan.cycles == 8 * 64 * 16 + 64


@pytest.mark.parametrize("model", ["tiny", "digits", "paper"])
def test_no_contraction_beats_the_ideal_and_wider_reads_never_cost(model):
    narrow = lane_model.plan_program(model, lanes=128, width=4, requant=16)
    wide = lane_model.plan_program(model, lanes=128, width=16, requant=16)
    for n, w in zip(narrow, wide):
        assert w.cycles >= w.macs / 128 and n.cycles >= n.macs / 128
        assert w.cycles <= n.cycles
        assert w.la * w.lb == 128


def test_a_one_dimensional_array_never_beats_the_two_dimensional_one():
    flat = lane_model.plan_program("paper", lanes=128, width=16, requant=16, max_la=1)
    square = lane_model.plan_program("paper", lanes=128, width=16, requant=16)
    assert all(f.la == 1 and f.cycles >= s.cycles for f, s in zip(flat, square))


@pytest.mark.parametrize("rows", [False, True])
@pytest.mark.parametrize("model", ["digits", "paper"])
def test_second_dimensions_never_beat_their_ideal(model, rows):
    """--reduction-lanes (and --rows): an op that takes a second dimension uses lanes x R lanes and takes no fewer
    cycles than its MACs over them; one that does not keeps its compiled cycles. On paper two input-gradient steps
    split their reduction, and the rows take the first forward step (K = 7); rows never slow the model."""
    r, lanes = (8, 128) if model == "paper" else (2, 16)
    plans = lane_model.plan_split(model, lanes, r, width=16, rows=rows)
    alone = lane_model.plan_split(model, lanes // r, 1, width=16)  # R = 1: the compiled engine's own cycles
    assert len(plans) == len(alone)
    for s, a in zip(plans, alone):
        assert (s.kind, s.lanes) in (("lanes", a.lanes), ("reduction", a.lanes * r), ("rows", a.lanes * r))
        assert s.cycles >= s.macs / s.lanes
        assert s.kind != "lanes" or s.cycles == a.cycles
    if model == "paper":
        kinds = {s.spec: s.kind for s in plans}
        assert kinds["abcd,cefdj->efabj"] == kinds["efgh,khd->kefgd"] == "reduction"
        assert kinds["eai,abcd->bceid"] == ("rows" if rows else "lanes")
    if rows:
        split = lane_model.plan_split(model, lanes, r, width=16)
        assert sum(p.cycles for p in plans) <= sum(p.cycles for p in split)


def test_two_indices_worked_example():
    """11 x 9 outputs, K = 4 at 128 lanes: i 11 x j 9 = 99 lanes take the four k steps; with powers of two the best
    is 8 x 8 over i and j: ceil(11 / 8) ceil(9 / 8) 4 = 16 steps (every other pair, worked by hand, takes 18 or 22)."""
    sizes = {"i": 11, "j": 9, "k": 4}
    assert lane_model.two_index_steps(sizes, 128) == (4, ("i", 11, "j", 9))
    steps, (_, l1, _, l2) = lane_model.two_index_steps(sizes, 128, pow2=True)
    assert steps == 16 and (l1, l2) == (8, 8)


@pytest.mark.parametrize("ranks", [None, [[11, 9, 15], [15]]])
def test_two_indices_never_beat_the_ideal_and_powers_of_two_never_win(ranks):
    any_count, other = lane_model.plan_two_indices("paper", 128, ranks)
    pow2, _ = lane_model.plan_two_indices("paper", 128, ranks, pow2=True)
    assert other > 0 and len(any_count) == len(pow2)
    for (_spec, macs, steps, (_, l1, _, l2)), p in zip(any_count, pow2):
        assert l1 * l2 <= 128 and steps >= macs / 128 and p[2] >= steps
    if ranks is None:  # every op of the full paper model has two indices whose counts fill 128 lanes: the ideal
        assert all(steps == macs / 128 for _, macs, steps, _ in any_count)
