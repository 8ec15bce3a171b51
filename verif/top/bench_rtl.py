"""Measured cycles per training sample, update and inference of the accelerator top, and the simulators'
speed on it: builds tt_accel for a model and runs verif/top/tb_bench.py. Used by scripts/bench.py."""
from __future__ import annotations

import json
import os
from pathlib import Path

from golden import program as P
from golden.compiler import compile_network
from verif.runner import BUILD, run_block
from verif.top.accel_env import hdl_parameters, long_run_build_args, model_config
from verif.top.test_tt_accel import SOURCES

DATASETS = {"tiny": "tiny", "digits": "digits", "paper": "fashion-mnist"}


def measure(model: str, sim: str) -> dict:
    comp = compile_network(model_config(model))
    out = BUILD / "bench" / model / sim / "bench.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    env = {"MODEL": model, "DATASET": DATASETS[model], "BENCH_OUT": str(out)}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        run_block(toplevel="tt_accel", sources=SOURCES, parameters=hdl_parameters(P.params_for(comp)), sim=sim,
                  test_module="verif.top.tb_bench", testcase="bench", build_dir=BUILD / "bench" / model / sim,
                  build_args=long_run_build_args(sim))
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return json.loads(Path(out).read_text())


if __name__ == "__main__":
    import sys
    print(json.dumps(measure(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "verilator"), indent=1))
