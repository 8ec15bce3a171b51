"""`make regress`: lint, then every pytest suite (golden model, RTL blocks on both simulators) in parallel.

Writes build/regress/junit.xml and build/regress/summary.json, prints a summary table, and fails when a
test fails or when no test ran. The seed is passed to every test through the SEED environment variable. Without
--seed each run draws a fresh one, printed first, so that the regression covers other stimulus and reset values every
time and a failure is replayed with `make regress SEED=n` (or --seed n).
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import Literal, TypedDict

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "regress"
SUITES = ["golden/tests", "scripts/tests", "verif"]
# A drawn seed stays short enough to retype; the tests derive others from it (SEED + k, within 32 bits)
DRAWN_SEEDS = 1_000_000


def run_lint() -> bool:
    print("regress: lint", flush=True)
    return subprocess.run(["bash", str(ROOT / "scripts" / "lint.sh")], cwd=ROOT).returncode == 0


def run_pytest(jobs: int, seed: int, extra: list[str]) -> int:
    junit = OUT / "junit.xml"
    suites = [s for s in SUITES if (ROOT / s).exists()]
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        *suites,
        "-n",
        str(jobs),
        "--timeout=900",
        f"--junitxml={junit}",
        "-o",
        "junit_family=xunit2",
        "-q",
        "-p",
        "no:cacheprovider",
        *extra,
    ]
    print("regress:", " ".join(cmd), flush=True)
    return subprocess.run(cmd, cwd=ROOT, env={**os.environ, "SEED": str(seed)}).returncode


class SuiteRow(TypedDict):
    """One suite's line of the summary: test counts by outcome and the summed test time."""

    tests: int
    passed: int
    failed: int
    skipped: int
    time_s: float


COUNTS: tuple[Literal["tests", "passed", "failed", "skipped"], ...] = ("tests", "passed", "failed", "skipped")


def summarise(seed: int, wall: float) -> dict[str, object]:
    junit = OUT / "junit.xml"
    if not junit.exists():
        return {"tests": 0}
    rows: defaultdict[str, SuiteRow] = defaultdict(lambda: SuiteRow(tests=0, passed=0, failed=0, skipped=0, time_s=0.0))
    for case in ET.parse(junit).getroot().iter("testcase"):
        group = case.get("classname", "?").rsplit(".", 1)[0]
        r = rows[group]
        r["tests"] += 1
        r["time_s"] += float(case.get("time", 0))
        if case.find("failure") is not None or case.find("error") is not None:
            r["failed"] += 1
        elif case.find("skipped") is not None:
            r["skipped"] += 1
        else:
            r["passed"] += 1
    total: dict[str, int] = {k: sum(r[k] for r in rows.values()) for k in COUNTS}
    print(f"\n{'suite':48s} {'tests':>6s} {'pass':>6s} {'fail':>6s} {'skip':>6s} {'time s':>8s}")
    for name in sorted(rows):
        r = rows[name]
        print(f"{name:48s} {r['tests']:6d} {r['passed']:6d} {r['failed']:6d} {r['skipped']:6d} {r['time_s']:8.1f}")
    print(
        f"{'total':48s} {total['tests']:6d} {total['passed']:6d} {total['failed']:6d} {total['skipped']:6d}"
        f"   wall {wall:.0f} s, SEED={seed}"
    )
    summary: dict[str, object] = {"seed": seed, "wall_s": round(wall, 1), **total, "suites": rows}
    (OUT / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument(
        "--seed",
        type=int,
        default=None,
        help="the seed of every test (0..2^32-1; default: a fresh one per run, printed first)",
    )
    ap.add_argument("pytest_args", nargs="*", help="extra pytest arguments (e.g. -k name)")
    args = ap.parse_args()
    if args.seed is None:
        args.seed = 1 + secrets.randbelow(DRAWN_SEEDS - 1)
        print(f"regress: SEED={args.seed} (drawn for this run; replay with make regress SEED={args.seed})", flush=True)
    elif not 0 <= args.seed <= 2**32 - 1:
        ap.error(f"--seed {args.seed} (SEED): must be in 0..{2**32 - 1}")
    else:
        print(f"regress: SEED={args.seed}", flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "junit.xml").unlink(missing_ok=True)
    t0 = time.time()
    lint_ok = run_lint()
    rc = run_pytest(args.jobs, args.seed, args.pytest_args)
    summary = summarise(args.seed, time.time() - t0)
    if summary["tests"] == 0:
        print("regress: FAILED: no test ran")
        return 1
    ok = lint_ok and rc == 0 and summary["failed"] == 0
    print(f"{summary['passed']} passed, {summary['failed']} failed, {summary['skipped']} skipped")
    print(
        "regress:",
        "PASSED" if ok else "FAILED" + ("" if lint_ok else " (lint)") + f"; replay with make regress SEED={args.seed}",
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
