"""Command line of the golden model: `python -m golden train|memory|plan|cost ...` (see --help)."""

from __future__ import annotations

import argparse
import json
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m golden", description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    tr = sub.add_parser("train", help="train a model with the bit-exact golden model")
    tr.add_argument("--model", default="digits", help="tiny|digits|paper or a config JSON file")
    tr.add_argument("--dataset", default="digits", help="digits|fashion-mnist|mnist|tiny")
    tr.add_argument("--data-dir", default=None, help="directory of MNIST-format IDX files")
    tr.add_argument("--epochs", type=int, default=None, help="override the config's epochs (at least 1)")
    tr.add_argument("--seed", type=int, default=1, help="the one seed behind the run (0..2^32-1)")
    tr.add_argument("--out", required=True, help="output directory (resumes if it holds a checkpoint)")
    optimizer_help = "sgd|adam instead of the config's optimizer"
    rank_help = "with rank adaptation (the rank_update and rank_prune programs, the rank state)"
    for name, helptext in (("memory", "memory report of a model"), ("plan", "compiled programs of a model")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("--model", default="digits")
        p.add_argument("--optimizer", choices=("sgd", "adam"), help=optimizer_help)
        p.add_argument("--rank-adaptation", action="store_true", help=rank_help)
    co = sub.add_parser("cost", help="the accelerator's modelled cycles per program and op (golden/cost.py)")
    co.add_argument("--model", default="digits")
    co.add_argument("--optimizer", choices=("sgd", "adam"), help=optimizer_help)
    co.add_argument("--rank-adaptation", action="store_true", help=rank_help)
    co.add_argument("--lanes", type=int, default=1, help="MAC lanes of the contraction engine")
    co.add_argument(
        "--buf-depth",
        type=int,
        default=512,
        help="words per lane buffer (with more than one lane; default 512, as make train builds)",
    )
    co.add_argument(
        "--vec",
        type=int,
        default=1,
        help="words a vector load reads into the lane buffers (1: none; "
        "a power of two is cut to the largest one within the lanes)",
    )
    co.add_argument(
        "--drain",
        type=int,
        default=1,
        help="elements the contraction engine's drain writes a cycle (1: one; cut to --vec)",
    )
    co.add_argument(
        "--preload",
        type=int,
        choices=(0, 1),
        default=1,
        help="1: two sets of lane buffer words, a contraction preloads the next one's b; 0: one set (half the memory)",
    )
    co.add_argument("--ranks", default=None, help="inner TT ranks per layer as JSON, e.g. '[[11, 9, 15], [15]]'")
    co.add_argument(
        "--fit-ranks",
        action="store_true",
        help="take --ranks as a pruned network's live ranks and report the ranks between them and the "
        "built ones that run fastest on this engine (golden/cost.py fit_ranks)",
    )
    co.add_argument(
        "--fit-for",
        choices=("train", "train_sample", "infer"),
        default="train",
        help="what --fit-ranks makes fastest: train (a training sample with its share of the update, "
        "the default), or one program",
    )
    co.add_argument(
        "--program", choices=("train_sample", "update", "infer", "rank_update", "rank_prune", "all"), default="all"
    )
    co.add_argument("--json", action="store_true", help="the whole report as JSON")
    args = ap.parse_args(argv)

    from golden.checkpoint import TrainError
    from golden.compiler import CompileError
    from golden.config import ConfigError
    from golden.datasets import DatasetError
    from golden.program import ProgramError

    try:
        if args.cmd == "train":
            from golden.train import main_train

            return main_train(args)
        from dataclasses import replace

        from golden.config_file import load_config, with_ranks

        cfg = load_config(args.model)
        if args.optimizer:
            cfg = replace(cfg, train=replace(cfg.train, optimizer=args.optimizer))
        if args.rank_adaptation:
            cfg = replace(cfg, train=replace(cfg.train, rank=replace(cfg.train.rank, enabled=True)))
        if args.cmd == "cost":
            from golden.cost import cost_report, cut_to_lanes, fit_ranks, format_report
            from golden.program import PROGRAMS

            vec, drain = cut_to_lanes(args.lanes, args.vec, args.drain)
            engine = dict(lanes=args.lanes, buf_depth=args.buf_depth, vec=vec, drain=drain, preload=bool(args.preload))
            ranks = None
            if args.ranks is not None:
                try:
                    ranks = json.loads(args.ranks)
                except json.JSONDecodeError as e:
                    raise ConfigError(f"--ranks {args.ranks!r}: not JSON ({e})") from None
            if args.fit_ranks:
                if ranks is None:
                    raise ConfigError("--fit-ranks needs --ranks: the live ranks of the pruned network")
                fit = fit_ranks(cfg, ranks, **engine, program=args.fit_for)
                print(
                    f"fitted ranks {fit['ranks']} for {args.fit_for}: {fit['cycles']:,.0f} cycles; the live ranks "
                    f"{fit['live']} {fit['live_cycles']:,.0f}, the built ones {fit['built']} "
                    f"{fit['built_cycles']:,.0f} ({fit['evaluated']} rank sets evaluated)"
                )
                ranks = fit["ranks"]
            if ranks is not None:
                cfg = with_ranks(cfg, ranks)
            report = cost_report(cfg, **engine)
            if args.fit_ranks:
                report["fit"] = fit
            progs = PROGRAMS if args.program == "all" else (args.program,)
            print(json.dumps(report, indent=1, default=str) if args.json else format_report(report, progs))
            return 0
        from golden.compiler import compile_network
        from golden.program import PROGRAMS

        comp = compile_network(cfg)
        if args.cmd == "memory":
            from golden.memory import memory_report

            print(json.dumps(memory_report(comp), indent=1))
        else:
            for prog in PROGRAMS:
                print(f"{prog}: {comp.macs(prog)} MACs")
                for op in getattr(comp, prog):
                    order = f" (in order {op.order})" if op.order else ""
                    print(f"  {op.kind:9s} {op.out:28s} <- {', '.join(op.ins):40s} {op.spec + order:24s} {op.macs}")
        return 0
    except (ConfigError, DatasetError, ProgramError, CompileError, TrainError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
