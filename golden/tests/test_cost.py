"""golden/cost.py and the cycle models under it (golden/isa/timing.py contract_losses, golden/program.py
program_cycles). That the models equal the RTL's counters is checked by the top-level tests (verif/rtl_device.py, every
whole program run) and by the benchmark (verif/top/tb_bench.py)."""

import json
from dataclasses import replace
from typing import Any

import pytest

from golden import program as P
from golden.__main__ import main
from golden.arch import KIND_CONTRACT, KIND_EWISE, KIND_SCE
from golden.compiler import compile_network
from golden.config import ConfigError
from golden.config_file import load_config, with_ranks
from golden.cost import LOSSES, cost_report, cut_to_lanes, fit_ranks
from golden.ir import OpKind
from golden.isa.contract import PAD, ContractDesc, Loop, check_desc
from golden.isa.lanes import with_lanes
from golden.isa.timing import (
    SEQ_FETCH_CYCLES,
    SEQ_OP_CYCLES,
    contract_cycles,
    contract_losses,
    ewise_cycles,
    group_starts,
    load_beats,
    preload_start,
    sce_cycles,
)
from golden.lowering import lower_contract

ENGINES = {"tiny": (4, 64), "digits": (8, 512), "paper": (16, 512)}


@pytest.mark.parametrize("model", ["tiny", "digits", "paper"])
def test_contract_losses_add_up_to_the_cycles(model):
    comp = compile_network(load_config(model))
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    lanes, depth = ENGINES[model]
    forms = set()
    for op in comp.train_sample + comp.infer:
        if op.kind != OpKind.CONTRACT:
            continue
        for d in (lower_contract(comp, op, frac), with_lanes(lower_contract(comp, op, frac), lanes, depth)):
            split = contract_losses(d, lanes)
            assert sum(split.values()) == pytest.approx(contract_cycles(d)), (op.spec, split)
            assert all(v >= 0 for v in split.values()), (op.spec, split)
            assert split["ideal"] == d.macs / lanes
            if d.lanes == 1:
                assert split["load_wait"] == 0 and split["drain_bound"] == 0
            forms.add(d.lanes > 1)
    assert forms == {False, True}


def test_contract_losses_by_hand():
    """A lane-form op by hand: 2 groups of 4 lanes, K = 2, on an 8-lane engine, MEM_LAT 5, MAC_REG 2.
    Buffer loops: k (sbuf 1) and i (sbuf 2); a slice is 4 lanes x 2 words = 8 loads. Group 0 waits for slice 0
    (ready at 8 + 5 = 13), group 1 for slice 1 (16 + 5 = 21; 4 cycles after group 0 it would start at 17). The
    tail after the last group's first beat is K + L + 2 MEM_LAT + MAC_REG + 8 = 26: 1 + 21 + 26 = 48 cycles.
    Without the waits group 0 would issue in cycle 1 (the register slice's cycle): 1 + 1 + 4 + 26 = 32. Each group
    takes max(K, L) = 4 cycles for its 2 beats (drain-bound). The latencies are passed, not the build's defaults."""
    lat = {"mem_lat": 5, "mac_reg": 2}
    lane = Loop(4, 0, 1, 1, "j", sbuf=0)  # the lane loop: b and out step by 1
    outer = Loop(2, 2, 8, 4, "i", sbuf=2)
    red = Loop(2, 1, 4, 0, "k", sbuf=1)
    d = check_desc(
        ContractDesc(
            a_base=0,
            b_base=0,
            o_base=0,
            out_count=8,
            out_loops=(PAD,) * 4 + (outer, lane),
            red_loops=(PAD,) * 3 + (red,),
            shift=0,
            mode=0,
            accumulate=False,
            out_w=16,
            lanes=4,
        )
    )
    assert d.macs == 16 and contract_cycles(d, **lat) == 48
    assert contract_losses(d, 8, **lat) == {
        "ideal": 2,
        "lanes_short": 2,
        "load_wait": 48 - 32,
        "drain_bound": 4,
        "fill": 32 - 4 - 4,
    }
    # Preloaded with a head start of 10: slice 0 ready at 3, slice 1 at 11: groups at 3 and 11 (1 + 11 + 26 = 38).
    # With a head start of 16 or more nothing waits: 32 cycles, group 0 in cycle 1 (the slice's), not earlier.
    assert group_starts(d, 5, head=10).tolist() == [3, 11] and contract_cycles(d, **lat, head=10) == 38
    assert group_starts(d, 5, head=40).tolist() == [1, 5] and contract_cycles(d, **lat, head=40) == 32
    assert contract_losses(d, 8, **lat, head=10)["load_wait"] == 38 - 32
    # Its own walk is 4 lanes x 4 words = 16 beats (cycles 0..15): a preload walk it carries begins in cycle 17,
    # 2 after its last beat; preloaded with a head start of 10 (last own beat in cycle 5): in cycle 7; with one of
    # 40 (the walk long done): in cycle 1, the earliest.
    assert load_beats(d) == 16
    assert [preload_start(d, h) for h in (0, 10, 40)] == [17, 7, 1]
    # only lane-form ops preload or are preloaded
    with pytest.raises(ValueError, match="only an op in the lane form"):
        check_desc(replace(d, lanes=1, preloaded=True))
    with pytest.raises(ValueError, match="must be in the lane form"):
        check_desc(replace(d, preload=replace(d, lanes=1)))
    assert check_desc(replace(d, preload=d, preloaded=True)).preload == d


@pytest.mark.parametrize("model", ["tiny", "digits"])
def test_report_adds_up(model):
    lanes, depth = ENGINES[model]
    rep = cost_report(load_config(model), lanes, depth)
    comp = compile_network(load_config(model))
    for prog, r in rep["programs"].items():
        rows = r["ops"]
        assert len(rows) == len(getattr(comp, prog))
        assert r["cycles"] == sum(x["cycles"] + x["sequencer"] for x in rows) + r["end"]
        assert r["sequencer"] == sum(x["sequencer"] for x in rows) + r["end"]
        assert r["end"] == (0 if rows else SEQ_FETCH_CYCLES)  # the END record arrives during the last op
        for unit, cycles in r["units"].items():
            assert cycles == sum(x["cycles"] for x in rows if x["unit"] == unit)
        assert r["macs"] == comp.macs(prog) and r["ideal"] == r["macs"] / lanes
        contract = [x for x in rows if x["unit"] == "contract"]
        over = sum(r["contract_over_ideal"][k] for k in LOSSES)
        assert over == pytest.approx(sum(x["over_ideal"] for x in contract))
        assert over == pytest.approx(r["units"]["contract"] - r["ideal"])


def test_record_cycles_are_the_unit_model_plus_the_sequencer():
    comp = compile_network(load_config("tiny"))
    p = P.params_for(comp)
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}
    image = P.assemble(comp, p, frac, host_step=(-1, 8))
    kinds, prev = set(), {}
    for rec in image.records:
        unit, seq = P.record_cycles(rec, prev_unit=prev.get(rec.program))
        want = {KIND_CONTRACT: contract_cycles, KIND_EWISE: ewise_cycles, KIND_SCE: sce_cycles}[rec.kind](rec.desc)
        assert unit == want + 1  # the unit counter holds the op from its start cycle
        nwords = P.header_nwords(image.words[rec.pc])
        assert nwords == rec.nwords
        if rec.program not in prev:  # the first record: the front end reads it while the back end waits
            assert seq == SEQ_OP_CYCLES + SEQ_FETCH_CYCLES + nwords
        else:  # read while the op before runs: a wait only when that op is shorter than the record's load
            assert seq == SEQ_OP_CYCLES + max(0, SEQ_FETCH_CYCLES + nwords - prev[rec.program] - SEQ_OP_CYCLES)
        prev[rec.program] = unit
        kinds.add(rec.kind)
    assert kinds == {KIND_CONTRACT, KIND_EWISE, KIND_SCE}


def test_cli(capsys):
    assert main(["cost", "--model", "tiny", "--lanes", "4", "--buf-depth", "64", "--program", "train_sample"]) == 0
    out = capsys.readouterr().out
    assert "train_sample:" in out and "| # | unit |" in out and "update:" not in out
    assert main(["cost", "--model", "tiny", "--lanes", "300", "--buf-depth", "64"]) == 2
    assert "lanes 300 outside" in capsys.readouterr().err
    # a pruned network: fewer MACs, fewer cycles
    assert main(["cost", "--model", "digits", "--lanes", "8", "--buf-depth", "512", "--json"]) == 0
    full = json.loads(capsys.readouterr().out)["programs"]["train_sample"]
    assert (
        main(["cost", "--model", "digits", "--lanes", "8", "--buf-depth", "512", "--ranks", "[[5, 7], []]", "--json"])
        == 0
    )
    pruned = json.loads(capsys.readouterr().out)["programs"]["train_sample"]
    assert pruned["macs"] < full["macs"] and pruned["cycles"] < full["cycles"]
    for bad, why in (
        ("[[5, 7]]", "one list of inner ranks per layer"),
        ("[[5, 0], []]", "ranks"),
        ("[[5, 7], [", "not JSON"),
    ):
        assert main(["cost", "--model", "digits", "--ranks", bad]) == 2
        assert why in capsys.readouterr().err, bad


@pytest.mark.parametrize(
    "lanes, asked, built",
    [
        (3, (8, 8), (2, 2)),
        (1, (8, 8), (1, 1)),
        (5, (4, 8), (4, 4)),
        (16, (8, 8), (8, 8)),
        (16, (8, 2), (8, 2)),
        (8, (3, 8), (3, 8)),
        (8, (8, 6), (8, 6)),
    ],
)
def test_cut_to_lanes(lanes, asked, built):
    """A power-of-two vec is cut to the largest power of two within the lanes and a power-of-two drain to that vec;
    other values stay as asked, for AccelParams.check to name them."""
    assert cut_to_lanes(lanes, *asked) == built


def test_cli_defaults_suit_any_lanes(capsys):
    """`make cost LANES=3` passes the default VEC=8 DRAIN=8: an engine with 2-word loads and drain, not an error
    about a vec of 3 the user never set; without --buf-depth, 512 words (a valid depth at any lane count)."""
    assert main(["cost", "--model", "tiny", "--lanes", "3", "--vec", "8", "--drain", "8", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["lanes"], report["buf_depth"], report["vec"], report["drain"]) == (3, 512, 2, 2)
    assert report == cost_report(load_config("tiny"), lanes=3, buf_depth=512, vec=2, drain=2)
    assert main(["cost", "--model", "tiny", "--lanes", "8", "--vec", "3"]) == 2
    assert "vec 3: must be a power of two" in capsys.readouterr().err


def test_cli_optimizer(capsys):
    """--optimizer adam: the same training sample, an update with Adam's ops (each 5 pipeline cycles longer)."""
    runs = {}
    for opt in ("sgd", "adam"):
        assert main(["cost", "--model", "tiny", "--optimizer", opt, "--json"]) == 0
        runs[opt] = json.loads(capsys.readouterr().out)["programs"]
    assert runs["adam"]["train_sample"]["cycles"] == runs["sgd"]["train_sample"]["cycles"]
    kinds = [row["op"] for row in runs["adam"]["update"]["ops"]]
    assert "adam_v" in " ".join(kinds) and runs["adam"]["update"]["cycles"] > runs["sgd"]["update"]["cycles"]


def test_op_rows_name_the_contraction_form():
    """The op table's lanes column says how the engine runs each contraction: direct, output lanes, a lane sum (output
    lanes x sum lanes) or rows (columns x rows, with the idle rows of the last chunk), and its vector load and drain."""
    from golden.cost import _form_text
    from golden.tests.test_isa_lane_sums import matmul_ijk_rows, matvec

    rows = with_lanes(replace(matmul_ijk_rows(5, 3, 4), a_base=1), 8, 4096, vec=4, drain=2)
    assert _form_text(rows) == "rows: 4 columns x 2, 1 idle in the last chunk, loads 4, drains 2"
    assert (
        _form_text(with_lanes(matmul_ijk_rows(8, 3, 4), 8, 4096, vec=4, drain=2, rows=False))
        == "output lanes, loads 4, drains 2"
    )
    summed = with_lanes(matvec(4, 32), 8, 4096, vec=8)
    assert summed.lane_sum and (summed.out_lanes, summed.sum_lanes, summed.vec) == (1, 8, 8)
    assert _form_text(summed) == "lane sum: 1 x 8, loads 8"
    assert _form_text(matvec(4, 32)) == "direct"


DIGITS_ENGINE: dict[str, Any] = dict(lanes=8, buf_depth=512, vec=8, drain=8)  # the digits target's build


def _train_costs(cfg, box) -> dict:
    """(cycles, MACs) of a training sample with its share of the update (train_sample + update / batch) at every rank
    set of `box` (per layer, per bond: the ranks), by cost_report."""
    import itertools

    flat = [r for layer in box for r in layer]
    out = {}
    for combo in itertools.product(*flat):
        it = iter(combo)
        ranks = [[next(it) for _ in layer] for layer in box]
        p = cost_report(with_ranks(cfg, ranks), **DIGITS_ENGINE)["programs"]
        out[json.dumps(ranks)] = (
            p["train_sample"]["cycles"] + p["update"]["cycles"] / cfg.train.batch,
            p["train_sample"]["macs"],
        )
    return out


@pytest.mark.parametrize("exhaustive", [True, False])
def test_fit_ranks_keeps_pruned_slices_where_they_pay(monkeypatch, exhaustive):
    """digits pruned to [[5, 7]] on its 8-lane build: every rank set between the live and the built ranks, costed one
    by one, against fit_ranks, by its whole search and (FIT_EXHAUSTIVE 0) by coordinate descent. Rank 8 at the
    second bond fills the vector loads and drains, so keeping one pruned slice there is faster than the live ranks."""
    from golden import cost

    if not exhaustive:
        monkeypatch.setattr(cost, "FIT_EXHAUSTIVE", 0)
    cfg = load_config("digits")
    costs = _train_costs(cfg, [[range(5, 9), range(7, 9)], []])
    fit = cost.fit_ranks(cfg, [[5, 7], []], **DIGITS_ENGINE, log=None)
    best = min(costs, key=costs.get)
    assert json.dumps(fit["ranks"]) == best and (fit["cycles"], fit["macs"]) == costs[best]
    assert fit["live_cycles"] == costs[json.dumps([[5, 7], []])][0]
    assert fit["built_cycles"] == costs[json.dumps([[8, 8], []])][0]
    assert fit["cycles"] < fit["live_cycles"] and fit["cycles"] < fit["built_cycles"]
    assert fit["ranks"] != [[5, 7], []]
    assert fit["evaluated"] <= len(costs)


def test_fit_ranks_rejects_ranks_outside_the_built_ones():
    cfg = load_config("digits")
    for bad, why in (
        ([[9, 7], []], "bond 0 has 9, outside 1..8"),
        ([[5, 0], []], "ranks"),
        ([[5, 7]], "one list of inner ranks per layer"),
    ):
        with pytest.raises(ConfigError, match=why):
            fit_ranks(cfg, bad, **DIGITS_ENGINE, log=None)
    with pytest.raises(ValueError, match="program 'update', expected one of"):
        fit_ranks(cfg, [[5, 7], []], **DIGITS_ENGINE, program="update", log=None)


def test_cli_fit_ranks(capsys):
    args = ["cost", "--model", "digits", "--lanes", "8", "--buf-depth", "512", "--vec", "8", "--drain", "8"]
    assert main(args + ["--ranks", "[[5, 7], []]", "--fit-ranks", "--json"]) == 0
    out = capsys.readouterr().out
    fit = json.loads(out[out.index("{") :])
    progs = fit["programs"]
    assert fit["ranks"] == fit["fit"]["ranks"]
    batch = load_config("digits").train.batch
    assert progs["train_sample"]["cycles"] + progs["update"]["cycles"] / batch == fit["fit"]["cycles"]
    assert out.startswith(f"fitted ranks {fit['ranks']} for train:")
    assert main(args + ["--ranks", "[[5, 7], []]", "--fit-ranks", "--fit-for", "train_sample", "--json"]) == 0
    out = capsys.readouterr().out
    fit = json.loads(out[out.index("{") :])
    assert fit["programs"]["train_sample"]["cycles"] == fit["fit"]["cycles"]
    assert main(args + ["--fit-ranks"]) == 2
    assert "--fit-ranks needs --ranks" in capsys.readouterr().err
