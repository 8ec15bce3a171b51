"""Measured cycles per training sample, update and inference of the accelerator top, and the simulators'
speed on it: builds tt_accel for a model (optionally at other TT ranks) and runs verif/top/tb_bench.py. Used by
scripts/bench.py.

    python -m verif.top.bench_rtl <model> [verilator|icarus] ['[[5, 7], []]']"""
from __future__ import annotations

import json
from pathlib import Path

from golden import program as P
from golden.compiler import compile_network
from verif.runner import BUILD, environ, run_block
from verif.top.accel_env import hdl_parameters, long_run_build_args, model_config
from verif.top.test_tt_accel import SOURCES

DATASETS = {"tiny": "tiny", "digits": "digits", "paper": "fashion-mnist"}


def measure(model: str, sim: str, ranks=None) -> dict:
    """`ranks`: inner TT ranks per layer (e.g. a pruned network's live ranks), else the config's."""
    comp = compile_network(model_config(model, ranks=ranks))
    tag = model if ranks is None else f"{model}-ranks-" + "-".join("_".join(map(str, r)) or "dense" for r in ranks)
    out = BUILD / "bench" / tag / sim / "bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {"MODEL": model, "DATASET": DATASETS[model], "BENCH_OUT": str(out),
           "BENCH_RANKS": "" if ranks is None else json.dumps(ranks)}
    with environ(env):
        run_block(toplevel="tt_accel", sources=SOURCES, parameters=hdl_parameters(P.params_for(comp)), sim=sim,
                  test_module="verif.top.tb_bench", testcase="bench", build_dir=BUILD / "bench" / tag / sim,
                  build_args=long_run_build_args(sim))
    return json.loads(Path(out).read_text())


if __name__ == "__main__":
    import sys
    print(json.dumps(measure(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "verilator",
                             json.loads(sys.argv[3]) if len(sys.argv) > 3 else None), indent=1))
