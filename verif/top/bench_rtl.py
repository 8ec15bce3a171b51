"""Measured cycles per training sample, update and inference of the accelerator top, and the simulators'
speed on it: builds tt_accel for a model (optionally at other TT ranks) and runs verif/top/tb_bench.py. Used by
scripts/bench.py.

    python -m verif.top.bench_rtl <model> [verilator|icarus] ['[[5, 7], []]']
                                  [--lanes 16 --buf-depth 512 --vec 16 --drain 16]"""

from __future__ import annotations

import json
from pathlib import Path

from golden import program as P
from golden.compiler import compile_network
from verif.runner import BUILD, environ, run_block
from verif.top.accel_env import hdl_parameters, long_run_build_args, model_config
from verif.top.test_tt_accel import SOURCES

DATASETS = {"tiny": "tiny", "digits": "digits", "paper": "fashion-mnist"}


def measure(model: str, sim: str, ranks=None, lanes: int = 1, buf_depth: int = 0, vec: int = 1, drain: int = 1) -> dict:
    """`ranks`: inner TT ranks per layer (e.g. a pruned network's live ranks), else the config's; `lanes`,
    `buf_depth`, `vec` and `drain`: the contraction engine's MAC lanes, words per lane buffer, vector load words and
    elements its drain writes a cycle."""
    comp = compile_network(model_config(model, ranks=ranks))
    tag = model if ranks is None else f"{model}-ranks-" + "-".join("_".join(map(str, r)) or "dense" for r in ranks)
    if lanes > 1:
        tag += (
            f"-lanes{lanes}x{buf_depth}" + (f"-vec{vec}" if vec > 1 else "") + (f"-drain{drain}" if drain > 1 else "")
        )
    out = BUILD / "bench" / tag / sim / "bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {
        "MODEL": model,
        "DATASET": DATASETS[model],
        "BENCH_OUT": str(out),
        "BENCH_RANKS": "" if ranks is None else json.dumps(ranks),
    }
    with environ(env):
        run_block(
            toplevel="tt_accel",
            sources=SOURCES,
            parameters=hdl_parameters(P.params_for(comp, lanes=lanes, buf_depth=buf_depth, vec=vec, drain=drain)),
            sim=sim,
            test_module="verif.top.tb_bench",
            testcase="bench",
            build_dir=BUILD / "bench" / tag / sim,
            build_args=long_run_build_args(sim),
        )
    return json.loads(Path(out).read_text())


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("sim", nargs="?", default="verilator", choices=("verilator", "icarus"))
    ap.add_argument("ranks", nargs="?", type=json.loads, default=None, help="inner TT ranks per layer (JSON)")
    ap.add_argument("--lanes", type=int, default=1)
    ap.add_argument("--buf-depth", type=int, default=0)
    ap.add_argument("--vec", type=int, default=1)
    ap.add_argument("--drain", type=int, default=1)
    args = ap.parse_args()
    print(
        json.dumps(
            measure(args.model, args.sim, args.ranks, args.lanes, args.buf_depth, args.vec, args.drain), indent=1
        )
    )
