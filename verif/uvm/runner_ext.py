"""run_block with a build dir and extra build arguments of the caller's choosing.

verif/runner.py's run_block derives the build dir from (toplevel, parameters, simulator) and passes fixed build
arguments. Two users need more: RTL coverage (scripts/rtl_coverage.py: Verilator `--coverage-line
--coverage-toggle`, in build dirs of its own so coverage builds never replace the normal ones) and mutation
runs (a modified private copy of an RTL file, which must not share a build dir with the real one). This keeps
run_block's simulator setup (pinned Verilator on PATH, ccache, random register init and seed plusargs, SEED)
and only adds `build_dir`, `test_dir` and `build_args`.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Mapping

from verif import runner


def run_cocotb(toplevel: str, sources: Iterable[os.PathLike | str], parameters: Mapping[str, object] | None,
               sim: str, test_module: str, build_dir: os.PathLike | str, test_dir: os.PathLike | str | None = None,
               build_args: Iterable[str] = (), testcase: str | list[str] | None = None,
               always: bool | None = None) -> Path:
    """Build and run like verif.runner.run_block, in `build_dir`, with `build_args` added. Returns the
    results xml; raises AssertionError when a cocotb test fails."""
    import cocotb_tools.runner as cocotb_runner

    runner._use_venv_verilator()
    parameters = dict(parameters or {})
    seed = os.environ.get("SEED")
    seed = int(seed) if seed not in (None, "") else None
    build_dir = Path(build_dir)
    test_dir = Path(test_dir) if test_dir is not None else build_dir
    test_dir.mkdir(parents=True, exist_ok=True)
    results_xml = test_dir / "results.xml"
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    cocotb_runner.MAX_PARALLEL_BUILD_JOBS = max(1, (os.cpu_count() or 1) // max(1, workers))
    args: list[str] = []
    plusargs: list[str] = []
    if sim == "verilator":
        runner._use_ccache()
        args += ["--x-assign", "unique", "--x-initial", "unique"]
        plusargs += ["+verilator+rand+reset+2", f"+verilator+seed+{(seed or 0) + 1}"]
    args += list(build_args)
    r = cocotb_runner.get_runner(sim)
    r.build(sources=[str(s) for s in sources], hdl_toplevel=toplevel, parameters=parameters, build_dir=build_dir,
            build_args=args, always=(sim == "icarus") if always is None else always, timescale=("1ns", "1ps"))
    try:
        return r.test(hdl_toplevel=toplevel, test_module=test_module, testcase=testcase, build_dir=build_dir,
                      test_dir=test_dir, seed=seed, plusargs=plusargs, timescale=("1ns", "1ps"),
                      results_xml=str(results_xml))
    except SystemExit as exc:
        raise AssertionError(f"{toplevel} {runner.param_tag(parameters)} on {sim} in {build_dir}: cocotb tests "
                             f"failed (exit {exc.code}); results {results_xml}") from None
