"""The accelerator's cycles per program, op by op, and where they go: the hardware cost of a network config at
once, without a simulation.

The models are the RTL's exact timing: golden/isa/timing.py `contract_cycles`, `ewise_cycles` and `sce_cycles` (each
checked cycle for cycle by its block test) and the sequencer's cycles per record (golden/program.py
`record_cycles` and `program_heads`, the head start of a preloaded op, checked against the top's counters by
verif/top). `python -m verif.top.bench_rtl` measures the
same counters on the simulated RTL; host cycles (writing a sample, polling) are not modelled.

    python -m golden cost --model paper --lanes 16 --buf-depth 512 [--vec 16] [--drain 16]
                          [--ranks '[[11, 9, 15], [15]]'] [--program train_sample] [--json]
    python -m golden cost --model paper --lanes 128 --buf-depth 512 --vec 16 --drain 16 --ranks '[[11, 9, 15], [15]]'
                          --fit-ranks [--fit-for train_sample|infer]
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from typing import Any

from golden import program as P
from golden.arch import KIND_CONTRACT, UNIT_OF_KIND
from golden.compiler import compile_network
from golden.config import ConfigError, NetConfig
from golden.config_file import with_ranks
from golden.ir import OpKind
from golden.isa.contract import ContractDesc
from golden.isa.timing import MEM_LAT, contract_losses
from golden.machine import Machine

LOSSES = ("lanes_short", "load_wait", "drain_bound", "fill")  # contract_losses beside the ideal
FIT_EXHAUSTIVE = 64  # fit_ranks tries every rank set of a space this small, else descends coordinate by coordinate


def cut_to_lanes(lanes: int, vec: int, drain: int) -> tuple[int, int]:
    """The vector load and drain widths an engine of `lanes` lanes is built with when `vec` and `drain` are asked
    for: a power-of-two vec is cut to the largest power of two within the lanes, a power-of-two drain to that vec
    (so the defaults, 8 and 8, suit any lane count); any other value stays, for AccelParams.check to refuse."""

    def power_of_two(v: int) -> bool:
        return v >= 1 and not v & (v - 1)

    if power_of_two(vec):
        vec = min(vec, 1 << (max(lanes, 1).bit_length() - 1))
    if power_of_two(drain) and power_of_two(vec):
        drain = min(drain, vec)
    return vec, drain


def cost_report(
    cfg: NetConfig,
    lanes: int = 1,
    buf_depth: int = 0,
    prog_depth: int = 2048,
    vec: int = 1,
    drain: int = 1,
    preload: bool = True,
) -> dict:
    """Modelled cycles of every program of `cfg` compiled for an accelerator with `lanes` MAC lanes, `buf_depth`
    words per lane buffer, vector loads of `vec` words and a drain of `drain` elements a cycle (golden/program.py
    params_for): per program the busy
    cycles, each unit's,
    the sequencer's, the MACs and their ideal (MACs / lanes), the contractions' cycles over the ideal by cause,
    and one row per op. Raises golden.program.ProgramError when the programs do not fit."""
    comp = compile_network(cfg)
    params = P.params_for(
        comp, prog_depth=prog_depth, lanes=lanes, buf_depth=buf_depth, vec=vec, drain=drain, preload=preload
    )
    frac = {n: t.fmt.frac for n, t in comp.tensors.items()}  # cycles do not depend on the formats
    image = P.assemble(comp, params, frac, host_step=Machine(comp, seed=0).host_step())  # the first update's
    report: dict[str, Any] = {
        "model": cfg.name,
        "ranks": [list(layer.ranks) for layer in cfg.layers],
        "lanes": lanes,
        "buf_depth": buf_depth,
        "vec": vec,
        "drain": drain,
        "preload": preload,
        "mem_lat": MEM_LAT,
        "programs": {},
    }
    for prog in P.PROGRAMS:
        counted = P.program_cycles(image, prog)
        rows, losses = [], dict.fromkeys(LOSSES, 0.0)
        for rec, unit_cycles, seq_cycles, head in counted["records"]:
            row = {
                "index": rec.index,
                "unit": UNIT_OF_KIND[rec.kind],
                "out": rec.op.out,
                "op": _op_text(rec.op) + (f" (preloaded, head start {head:,})" if head else ""),
                "lanes": getattr(rec.desc, "lanes", None),
                "macs": getattr(rec.desc, "macs", 0),
                "form": _form_text(rec.desc) if rec.kind == KIND_CONTRACT else "",
                "cycles": unit_cycles,
                "sequencer": seq_cycles,
            }
            if rec.kind == KIND_CONTRACT:
                split = contract_losses(rec.desc, lanes, head=head)
                row["over_ideal"] = unit_cycles - split["ideal"]
                for k in LOSSES:
                    losses[k] += split[k]
                losses["fill"] += 1  # the counter's start cycle
            rows.append(row)
        macs = sum(r["macs"] for r in rows)
        report["programs"][prog] = {
            "cycles": counted["cycles"],
            "units": counted["units"],
            "sequencer": counted["sequencer"],
            "end": counted["end"],
            "macs": macs,
            "ideal": macs / lanes,
            "contract_over_ideal": losses,
            "ops": rows,
        }
    return report


FIT_FOR = ("train", "train_sample", "infer")  # fit_ranks' objectives; train: train_sample + update / batch


def fit_ranks(
    cfg: NetConfig,
    live,
    lanes: int = 1,
    buf_depth: int = 0,
    vec: int = 1,
    drain: int = 1,
    program: str = "train",
    log=sys.stderr,
    preload: bool = True,
) -> dict:
    """The ranks to recompile a pruned network at on one engine: per bond, between its live rank (`live`, as
    `--ranks` gives them) and the rank `cfg` builds, the rank set whose `program` takes the fewest modelled cycles
    (cost_report; fewer MACs among equals): "train", a training sample with its share of the mini-batch's update
    (train_sample + update / batch, the cycles fine-tuning spends a sample), or one program. The engine's forms favour
    some counts (powers of two fill the rows and
    lane sums at 128 lanes), so a few pruned slices kept beside the live ones can run faster than the live ranks
    alone; the pruned slices stay zero and masked (SPEC 5.6: both adjoining slices are zero, so are their
    gradients), and the program computes the live network. Both ends are candidates, so the fit is never slower
    than the live ranks or the built ones.

    A space of at most FIT_EXHAUSTIVE rank sets is searched whole; a larger one by coordinate descent (every rank of
    one bond, the others fixed, until no bond improves) from the live ranks and from the built ones, which finds a
    good set, not always the best. Progress lines go to `log`. Raises ConfigError where a live rank is outside
    1..the built rank."""
    built = [list(layer.ranks) for layer in cfg.layers]
    with_ranks(cfg, live)  # the shape of `live`, checked like a config
    if [len(r) for r in live] != [len(r) for r in built]:
        raise ConfigError(f"live ranks {live}: expected as many bonds per layer as the built ranks {built}")
    lo, hi = [r for layer in live for r in layer], [r for layer in built for r in layer]
    for i, (a, b) in enumerate(zip(lo, hi)):
        if not 1 <= a <= b:
            raise ConfigError(f"live ranks {live}: bond {i} has {a}, outside 1..{b} (the built rank)")

    def nest(flat) -> list[list[int]]:
        it = iter(flat)
        return [[next(it) for _ in layer] for layer in built]

    seen: dict[tuple[int, ...], tuple[int, int]] = {}
    t0 = time.time()

    if program not in FIT_FOR:
        raise ValueError(f"fit_ranks: program {program!r}, expected one of {FIT_FOR}")

    def cost(flat: tuple[int, ...]) -> tuple[int, int]:
        if flat not in seen:
            net = with_ranks(cfg, nest(flat))
            progs = cost_report(net, lanes, buf_depth, vec=vec, drain=drain, preload=preload)["programs"]
            r = progs["train_sample" if program == "train" else program]
            extra = progs["update"]["cycles"] / cfg.train.batch if program == "train" else 0
            seen[flat] = (r["cycles"] + extra, r["macs"])
            if log is not None and len(seen) % 10 == 0:
                best = min(seen, key=seen.__getitem__)
                print(
                    f"fit_ranks: {len(seen)} rank sets in {time.time() - t0:.0f} s "
                    f"({len(seen) / (time.time() - t0):.1f}/s), best {nest(best)} at {seen[best][0]:,.0f} cycles",
                    file=log,
                    flush=True,
                )
        return seen[flat]

    choices = [range(a, b + 1) for a, b in zip(lo, hi)]
    if math.prod(len(c) for c in choices) <= FIT_EXHAUSTIVE:
        for flat in itertools.product(*choices):
            cost(flat)
    else:
        for start in (tuple(lo), tuple(hi)):
            cur, moved = start, True
            while moved:
                moved = False
                for i, values in enumerate(choices):
                    best = min((cur[:i] + (v,) + cur[i + 1 :] for v in values), key=cost)
                    if cost(best) < cost(cur):
                        cur, moved = best, True
    best = min(seen, key=seen.__getitem__)
    return {
        "program": program,
        "live": nest(lo),
        "built": nest(hi),
        "ranks": nest(best),
        "cycles": seen[best][0],
        "macs": seen[best][1],
        "live_cycles": seen[tuple(lo)][0],
        "built_cycles": seen[tuple(hi)][0],
        "evaluated": len(seen),
    }


def _op_text(op) -> str:
    if op.kind != OpKind.CONTRACT:
        return op.kind
    return op.spec + (f" (in order {op.order})" if op.order else "")


def _form_text(desc: ContractDesc) -> str:
    """How the engine runs a contraction (golden/isa/lanes.py with_lanes): its lane form, vector load and drain."""
    if desc.lanes == 1:
        return "direct"
    if desc.rows:
        form = f"rows: {desc.load_lanes} columns x {desc.row_lanes}" + (
            f", {desc.idle_rows} idle in the last chunk" if desc.idle_rows else ""
        )
    elif desc.lane_sum:
        form = f"lane sum: {desc.out_lanes} x {desc.sum_lanes}"
    else:
        form = "output lanes"
    return form + (f", loads {desc.vec}" if desc.vec > 1 else "") + (f", drains {desc.drain}" if desc.drain > 1 else "")


def format_report(report: dict, programs=P.PROGRAMS) -> str:
    lines = [
        f"{report['model']} (ranks {report['ranks']}) at {report['lanes']} MAC lanes, {report['buf_depth']} "
        f"words per lane buffer{'' if report['preload'] else ' (one set: no preloads)'}, vector loads of "
        f"{report['vec']} words, a drain of {report['drain']} elements a cycle (modelled: golden/cost.py)"
    ]
    for prog in programs:
        r = report["programs"][prog]
        if not r["ops"]:  # rank_update and rank_prune of a network without rank adaptation
            continue
        units = ", ".join(f"{u} {c:,}" for u, c in r["units"].items())
        ratio = f": {r['cycles'] / r['ideal']:.3f}x the ideal of {r['ideal']:,.0f}" if r["macs"] else ""
        lines += [
            "",
            f"{prog}: {r['cycles']:,} cycles ({units}, sequencer {r['sequencer']:,}) for {r['macs']:,} MACs{ratio}",
        ]
        if r["macs"]:
            over = r["contract_over_ideal"]
            lines.append(
                "  contraction cycles over the ideal: "
                + ", ".join(f"{k.replace('_', ' ')} {v:,.0f}" for k, v in over.items())
            )
        lines += [
            "",
            "| # | unit | out | op | lanes | MACs | cycles | over the ideal | sequencer |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for row in r["ops"]:
            over = f"{row['over_ideal']:,.0f}" if "over_ideal" in row else ""
            lanes = f"{row['lanes']} ({row['form']})" if row["lanes"] is not None else ""
            lines.append(
                f"| {row['index']} | {row['unit']} | {row['out']} | {row['op']} | {lanes} | "
                f"{row['macs']:,} | {row['cycles']:,} | {over} | {row['sequencer']} |"
            )
    return "\n".join(lines)
