"""`make mutate`: plant known bugs (mutants) in a copy of rtl/ and check that the block tests kill each one.

The catalogue is scripts/mutants.json plus scripts/mutants.d/*.json (one file per newer block): per mutant an id, the
RTL file, the exact `original` text (it must
occur exactly once in the file: the tool refuses a stale mutant rather than testing nothing), its
`replacement`, a category, and the block whose tests must kill it.

For each selected mutant:
  1. copy rtl/ to build/mutate/<id>/rtl and replace `original` by `replacement` there (rtl/ is never touched);
  2. elaborate the mutated block with iverilog (and `verilator --lint-only` without -Wall with --sim
     verilator). A mutant that does not elaborate is "stillborn": a catalogue error, not a kill -- it would
     be killed trivially by any test and says nothing about the tests -- so it fails the run;
  3. run that block's pytest tests (verif/blocks/<block>) on one simulator (SIM=<sim>, default icarus) with
     RTL_DIR=build/mutate/<id>/rtl and BUILD_TAG=mutate-<id> (verif/runner.py: builds go to
     build/sim-mutate-<id>/, never into the normal build/sim/), `-x` (stop at the first failing test) and a
     per-mutant timeout (--timeout, or twice the block's baseline time plus two minutes when that is longer).
Results: killed (a test failed), survived (every test passed), timeout (the tests did not finish within
--timeout: counted as killed, since `make regress` would not pass either, but listed so a slow machine is
not mistaken for a kill), stillborn and error (pytest could not run the tests: collection error, no test
selected) -- both fail the run.

Mutants marked `"equivalent": true` (with a `reason`) are proven to behave like the RTL: they are run and
reported separately and do not fail the run when they survive; if one is killed, the equivalence claim is
wrong and the run fails.

Before the mutants, each selected block's tests are run once on an unmutated copy (the baseline; skip with
--no-baseline): if they fail there, every mutant would look killed, so the run stops.

Writes build/mutate/report.json and build/mutate/report.md (id, category, block, result, time), and on a run
over the whole catalogue results/mutation.md (the figures block by block, survivors and equivalents); exits
non-zero if a mutant survived (listed at the end) or on a stillborn / error / refuted-equivalent mutant.
Run under `nice -n 19` on a shared machine; it runs one simulation at a time, or --jobs N mutants at once.

  python scripts/mutate.py [--block NAME] [--mutant ID ...] [--sim icarus|verilator] [--list]
  make mutate [BLOCK=name] [SIM=verilator] [SEED=n]

--random N draws N mutants at random from the RTL source instead (scripts/mutate_random.py: the generator, the
equivalence check of survivors and results/mutation-random.md); the same machinery plants and tests them:
  python scripts/mutate.py --random N [--seed S] [--block MODULE ...] [--per-block] [--list] [--resume]
  make mutate RANDOM=N [SEED=s] [BLOCK="tt_seq tt_skid"] [PER_BLOCK=1]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import TypedDict

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
from scripts.synth import git_commit  # noqa: E402  (the repository root on the path first)
from verif.filelist import module_files, sources  # noqa: E402

CATALOGUE = ROOT / "scripts" / "mutants.json"
OUT = ROOT / "build" / "mutate"
RESULTS = ROOT / "results" / "mutation.md"
SIMS = ("icarus", "verilator")
CATEGORIES = (
    "flipped operator",
    "off-by-one",
    "off-by-one loop bound",
    "dropped rounding bit",
    "wrong saturation bound",
    "stuck control bit",
    "wrong reset value",
    "swapped operands",
    "dropped sign extension",
    "wrong bit select",
    "wrong priority",
    "dropped condition",
    "dropped corner case",
)
MUTANT_KEYS = {"id", "block", "file", "category", "original", "replacement", "description"}
OPTIONAL_KEYS = {"equivalent", "reason"}
ID_RE = re.compile(r"^[a-z][a-z0-9_]*$")
# results that make the run fail / count as a kill
KILLED = ("killed", "timeout")


class MutantError(Exception):
    pass


class MutantRow(TypedDict):
    """A mutant's row of the reports (run_mutant)."""

    id: str
    category: str
    block: str
    file: str
    result: str  # "killed" | "survived" | "timeout" | "error" | "stillborn"
    equivalent: bool
    reason: str  # why it is equivalent ("" when it is not marked so)
    seconds: float
    failed_tests: list[str]
    first_failure: str
    log: str  # relative to the repository root


# ---- catalogue ---------------------------------------------------------------------------------------------
def load_catalogue(path: Path = CATALOGUE) -> dict:
    """The catalogue file plus every scripts/mutants.d/*.json beside it (one per newer block, same keys),
    merged: their blocks and mutants are appended."""
    cat = json.loads(Path(path).read_text())
    for extra in sorted((Path(path).parent / "mutants.d").glob("*.json")):
        part = json.loads(extra.read_text())
        for name, block in part.get("blocks", {}).items():
            if name in cat["blocks"]:
                raise MutantError(f"{extra}: block {name} is already in the catalogue")
            cat["blocks"][name] = block
        cat["mutants"] += part.get("mutants", [])
    return cat


def validate(cat: dict, root: Path = ROOT) -> list[str]:
    """Every problem with the catalogue, as messages (empty: well-formed and up to date with the RTL)."""
    errors: list[str] = []
    blocks = cat.get("blocks")
    mutants = cat.get("mutants")
    if not isinstance(blocks, dict) or not isinstance(mutants, list):
        return ["catalogue needs a 'blocks' object and a 'mutants' list"]
    for name, b in blocks.items():
        for key in ("tests", "toplevel"):
            if key not in b:
                errors.append(f"block {name}: missing '{key}'")
        if "tests" in b and not (root / b["tests"]).is_dir():
            errors.append(f"block {name}: no test directory {b['tests']}")
        if "toplevel" in b and b["toplevel"] not in module_files(root / "rtl"):
            errors.append(f"block {name}: no module {b['toplevel']} under rtl/")
    seen: set[str] = set()
    for i, m in enumerate(mutants):
        mid = m.get("id", f"#{i}")
        missing = MUTANT_KEYS - m.keys()
        extra = m.keys() - MUTANT_KEYS - OPTIONAL_KEYS
        if missing:
            errors.append(f"mutant {mid}: missing {sorted(missing)}")
            continue
        if extra:
            errors.append(f"mutant {mid}: unknown keys {sorted(extra)}")
        if not ID_RE.match(mid):
            errors.append(f"mutant {mid}: id must match {ID_RE.pattern}")
        if mid in seen:
            errors.append(f"mutant {mid}: duplicate id")
        seen.add(mid)
        if m["block"] not in blocks:
            errors.append(f"mutant {mid}: unknown block {m['block']}")
        if m["category"] not in CATEGORIES:
            errors.append(f"mutant {mid}: unknown category {m['category']!r} (scripts/mutate.py CATEGORIES)")
        if not m["original"] or m["original"] == m["replacement"]:
            errors.append(f"mutant {mid}: empty original or replacement == original")
        if m.get("equivalent") and not m.get("reason"):
            errors.append(f"mutant {mid}: equivalent without a reason")
        if "equivalent" in m and not isinstance(m["equivalent"], bool):
            errors.append(f"mutant {mid}: equivalent must be true or false")
        f = root / m["file"]
        if not m["file"].startswith("rtl/") or not f.is_file():
            errors.append(f"mutant {mid}: no RTL file {m['file']}")
            continue
        n = f.read_text().count(m["original"])
        if n != 1:
            errors.append(
                f"mutant {mid}: original occurs {n} times in {m['file']} (must be exactly once: stale catalogue?)"
            )
    return errors


def apply_mutant(text: str, m: dict) -> str:
    """`text` with the mutant's original replaced by its replacement; refuses unless it occurs exactly once (a
    drawn mutant, with an `offset`: unless it is at that offset)."""
    if "offset" in m:
        i, orig = m["offset"], m["original"]
        if text[i : i + len(orig)] != orig:
            raise MutantError(f"mutant {m['id']}: {m['file']} has no {orig!r} at offset {i} (the RTL changed)")
        return text[:i] + m["replacement"] + text[i + len(orig) :]
    n = text.count(m["original"])
    if n != 1:
        raise MutantError(f"mutant {m['id']}: original occurs {n} times in {m['file']} (must be exactly once)")
    return text.replace(m["original"], m["replacement"], 1)


def plant(m: dict | None, dest: Path, root: Path = ROOT) -> Path:
    """Copy <root>/rtl to <dest>/rtl and apply mutant `m` (None: the unmutated baseline). Returns the copy."""
    rtl = dest / "rtl"
    if rtl.exists():
        shutil.rmtree(rtl)
    shutil.copytree(root / "rtl", rtl)
    if m is not None:
        f = rtl / Path(m["file"]).relative_to("rtl")
        f.write_text(apply_mutant(f.read_text(), m))
    return rtl


# ---- running -----------------------------------------------------------------------------------------------
def elaborates(block: dict, rtl: Path, sim: str, timeout: float | None = None) -> tuple[bool, str]:
    """Elaborate the block's sources in `rtl` with default parameters: iverilog, plus verilator --lint-only
    (default warnings, like the build, not -Wall) when the tests run on Verilator. A tool that runs longer than
    `timeout` seconds (a constant function looping forever) fails it."""
    srcs = [str(s) for s in sources(block["toplevel"], rtl=rtl)]
    cmds = [["iverilog", "-g2012", "-o", os.devnull, "-s", block["toplevel"], f"-I{rtl}", *srcs]]
    if sim == "verilator":
        cmds.append(["verilator", "--lint-only", f"-I{rtl}", "--top-module", block["toplevel"], *srcs])
    log = ""
    for cmd in cmds:
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=sim_env(), timeout=timeout)
        except subprocess.TimeoutExpired:
            return False, log + " ".join(cmd) + f"\ntimed out after {timeout} s\n"
        log += " ".join(cmd) + "\n" + res.stdout + res.stderr
        if res.returncode != 0:
            return False, log
    return True, log


def sim_env(extra: dict | None = None) -> dict:
    """The Makefile's tool environment (pinned Verilator first on PATH), plus `extra`."""
    env = dict(os.environ)
    venv = Path(sys.prefix)
    vroot = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages" / "verilator"
    if (vroot / "bin" / "verilator").exists():
        env.setdefault("VERILATOR_ROOT", str(vroot))
        env["PATH"] = os.pathsep.join([str(vroot / "bin"), str(venv / "bin"), env.get("PATH", "")])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env


def first_failure(log_text: str) -> str:
    """The first error the cocotb tests logged (e.g. 'AssertionError: cycle 8 lane 0: ...'), or ''.

    cocotb's messages are indented in the pytest log; the runner's own summary line starts with 'E '."""
    m = re.search(r"^\s+(\w+(?:Error|Exception|Timeout)\w*: .+)$", log_text, re.M)
    return m.group(1).strip() if m else ""


def run_tests(
    block: dict, rtl: Path, tag: str, sim: str, seed: int, timeout: float, log: Path
) -> tuple[str, list[str]]:
    """Run the block's pytest tests on `rtl`: ("passed" | "failed" | "timeout" | "error", failing test ids)."""
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        str(ROOT / block["tests"]),
        "-x",
        "-q",
        "-rf",
        "-p",
        "no:cacheprovider",
        f"--timeout={int(timeout) + 60}",
    ]
    if block.get("deselect"):
        cmd += ["-k", " and ".join(f"not {name}" for name in block["deselect"])]
    env = sim_env({"SIM": sim, "SEED": str(seed), "RTL_DIR": str(rtl), "BUILD_TAG": tag})
    env.pop("PYTEST_XDIST_WORKER_COUNT", None)
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "w") as fh:
        fh.write(" ".join(cmd) + f"\n# SIM={sim} SEED={seed} RTL_DIR={rtl} BUILD_TAG={tag}\n")
        fh.flush()
        # Own session: on a timeout the whole process group (pytest, the simulator) is stopped by its id.
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                try:
                    proc.wait(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    continue
            return "timeout", []
    failed = re.findall(r"^FAILED (\S+)", log.read_text(), re.M)
    if rc == 0:
        return "passed", []
    if rc == 1:
        return "failed", failed
    return "error", failed


def fmt_s(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 120 else f"{s:.0f} s"


def block_timeout(timeout: float, baseline_s: dict[str, float], block: str) -> float:
    """Seconds a block's tests may run on a mutant: `timeout`, or twice their time on the unmutated RTL plus two
    minutes if that is longer (a timeout the unmutated tests would hit too must not count as a kill)."""
    return max(timeout, 2 * baseline_s.get(block, 0.0) + 120)


def run_baselines(
    cat: dict, blocks: list[str], sim: str, seed: int, timeout: float, out: Path
) -> dict[str, float] | None:
    """Run each block's tests once on an unmutated copy of rtl/: their times, or None (with the reason printed)
    if one does not pass there: every mutant would look killed. Each may take four times `timeout`: it runs every
    test (a killed mutant stops at its first failure), maybe on a loaded machine."""
    rtl = plant(None, out / "_baseline")
    secs: dict[str, float] = {}
    for b in blocks:
        t0 = time.time()
        log = out / "_baseline" / f"{b}.log"
        status, failed = run_tests(cat["blocks"][b], rtl, "mutate-baseline", sim, seed, 4 * timeout, log)
        secs[b] = time.time() - t0
        print(f"mutate: baseline {b} on {sim}: {status} in {secs[b]:.0f} s", flush=True)
        if status != "passed":
            print(
                f"mutate: the {b} tests do not pass on the unmutated RTL ({status}: {failed}); see {log}. "
                "Every mutant would look killed: stopping.",
                file=sys.stderr,
            )
            return None
    return secs


def run_mutant_tests(
    cat: dict, blocks: list[str], rtl: Path, tag: str, sim: str, seed: int, timeouts: dict[str, float], mdir: Path
) -> tuple[str, list[str], Path]:
    """Run the tests of `blocks` on the mutated copy `rtl`, one block after the other until one fails:
    ("killed" | "survived" | "timeout" | "error", the failing tests, the last log)."""
    status = "passed"
    failed: list[str] = []
    log = mdir / "pytest.log"
    for b in blocks:
        log = mdir / ("pytest.log" if len(blocks) == 1 else f"pytest-{b}.log")
        status, failed = run_tests(cat["blocks"][b], rtl, tag, sim, seed, timeouts[b], log)
        if status != "passed":
            break
    return {"failed": "killed", "passed": "survived"}.get(status, status), failed, log


def run_mutant(cat: dict, m: dict, sim: str, seed: int, timeouts: dict[str, float], keep_builds: bool) -> MutantRow:
    """Plant one mutant, elaborate it and run its block's tests: its report row."""
    block = cat["blocks"][m["block"]]
    mdir = OUT / m["id"]
    tag = f"mutate-{m['id']}"
    t0 = time.time()
    rtl = plant(m, mdir)
    ok, elab_log = elaborates(block, rtl, sim)
    failed: list[str] = []
    if not ok:
        result = "stillborn"
        (mdir / "elaborate.log").write_text(elab_log)
    else:
        result, failed, _ = run_mutant_tests(cat, [m["block"]], rtl, tag, sim, seed, timeouts, mdir)
    if result in KILLED and not keep_builds:
        shutil.rmtree(ROOT / "build" / f"sim-{tag}", ignore_errors=True)
    return {
        "id": m["id"],
        "category": m["category"],
        "block": m["block"],
        "file": m["file"],
        "result": result,
        "equivalent": bool(m.get("equivalent")),
        "reason": m.get("reason", ""),
        "seconds": round(time.time() - t0, 1),
        "failed_tests": failed,
        "first_failure": first_failure((mdir / "pytest.log").read_text()) if ok else "",
        "log": str((mdir / ("pytest.log" if ok else "elaborate.log")).relative_to(ROOT)),
    }


def progress(i: int, n: int, t0: float, what: str) -> None:
    """One line per mutant: what happened, mutants per minute since t0 and the ETA of the n."""
    el = max(time.time() - t0, 1e-9)
    print(f"mutant {i}/{n} {what}; {i / el * 60:.1f} mutants/min, ETA {fmt_s(el / i * (n - i))}", flush=True)


def select(cat: dict, blocks: list[str] | None, ids: list[str] | None) -> list[dict]:
    muts = cat["mutants"]
    if blocks:
        unknown = set(blocks) - set(cat["blocks"])
        if unknown:
            raise MutantError(f"unknown block(s) {sorted(unknown)}; catalogue blocks: {sorted(cat['blocks'])}")
        muts = [m for m in muts if m["block"] in blocks]
    if ids:
        by_id = {m["id"]: m for m in cat["mutants"]}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise MutantError(f"unknown mutant(s) {missing} (--list shows them)")
        muts = [m for m in muts if m["id"] in ids]
    return muts


def list_mutants(muts: list[dict]) -> None:
    print(f"{'id':34s} {'block':13s} {'category':24s} change")
    for m in muts:
        change = f"{' '.join(m['original'].split())!r} -> {' '.join(m['replacement'].split())!r}"
        eq = " [equivalent]" if m.get("equivalent") else ""
        print(f"{m['id']:34s} {m['block']:13s} {m['category']:24s} {change}{eq}")
    print(f"{len(muts)} mutants")


def write_reports(rows: list[MutantRow], meta: dict) -> None:
    counts: dict[str, int] = {}
    for r in rows:
        key = r["result"] + (" (equivalent)" if r.get("equivalent") else "")
        counts[key] = counts.get(key, 0) + 1
    (OUT / "report.json").write_text(json.dumps({**meta, "counts": counts, "mutants": rows}, indent=1) + "\n")
    lines = [
        f"# Mutation run ({meta['sim']}, SEED={meta['seed']}, {len(rows)} mutants, wall {fmt_s(meta['wall_s'])})",
        "",
        "| id | category | block | result | time (s) | killed by | first failure |",
        "|---|---|---|---|---:|---|---|",
    ]
    for r in rows:
        by = ", ".join(t.split("::", 1)[-1] for t in r.get("failed_tests", [])[:2])
        why = r.get("first_failure", "")
        why = (why[:117] + "...") if len(why) > 120 else why
        result = r["result"] + (" (equivalent)" if r.get("equivalent") else "")
        lines.append(
            f"| {r['id']} | {r['category']} | {r['block']} | {result} | {r['seconds']:.1f} | {by} | "
            f"{why.replace('|', '/')} |"
        )
    lines += ["", "Results: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    (OUT / "report.md").write_text("\n".join(lines) + "\n")
    if meta.get("whole_catalogue"):
        RESULTS.write_text(catalogue_summary(rows, meta))


def catalogue_summary(rows: list[MutantRow], meta: dict) -> str:
    """results/mutation.md: a run over the whole catalogue, block by block, then its survivors, equivalent and
    unusable mutants. Written after every mutant of such a run, so an interrupted run says how far it got."""
    per_block: dict[str, dict[str, int]] = {}
    for r in rows:
        b = per_block.setdefault(r["block"], {"mutants": 0, "killed": 0, "survived": 0, "equivalent": 0, "other": 0})
        b["mutants"] += 1
        if r.get("equivalent"):
            b["equivalent"] += 1
        elif r["result"] in KILLED:
            b["killed"] += 1
        elif r["result"] == "survived":
            b["survived"] += 1
        else:
            b["other"] += 1
    total = {k: sum(b[k] for b in per_block.values()) for k in ("mutants", "killed", "survived", "equivalent", "other")}
    done = "" if total["mutants"] == meta["catalogue_size"] else f" (interrupted: {total['mutants']} run)"
    lines = [
        "# Mutation testing: the catalogue",
        "",
        "Written by `make mutate` (scripts/mutate.py) on each run over the whole catalogue (scripts/mutants.json and "
        "scripts/mutants.d/): every mutant is a known bug planted in a copy of rtl/, and its block's tests must fail "
        "on it. Runs of one block or of single mutants write build/mutate/ only.",
        "",
        f"Run: {meta['date']} at {meta['commit']}, {meta['sim']}, SEED={meta['seed']}, "
        f"{meta['catalogue_size']} mutants{done}, wall {fmt_s(meta['wall_s'])}: **{total['killed']} killed, "
        f"{total['survived']} survived, {total['equivalent']} equivalent, {total['other']} stillborn, error or "
        "timeout**.",
        "",
        "| block | mutants | killed | survived | equivalent | other |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, b in per_block.items():
        lines.append(f"| {name} | {' | '.join(str(v) for v in b.values())} |")
    lines.append(f"| all | {' | '.join(str(v) for v in total.values())} |")
    notable = [r for r in rows if r.get("equivalent") or r["result"] not in KILLED]
    if notable:
        lines += ["", "| mutant | block | result | why equivalent, or the log |", "|---|---|---|---|"]
        for r in notable:
            result = r["result"] + (" (marked equivalent)" if r.get("equivalent") else "")
            why = r["reason"] if r.get("equivalent") and r["result"] == "survived" else r["log"]
            lines.append(f"| {r['id']} | {r['block']} | {result} | {why.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--block", action="append", help="only this block's mutants (repeatable; with --random: an RTL module)"
    )
    ap.add_argument("--mutant", nargs="+", metavar="ID", help="only these mutants")
    ap.add_argument(
        "--sim",
        choices=SIMS,
        default=os.environ.get("SIM") or "icarus",
        help="simulator (default: $SIM, else icarus, the faster build)",
    )
    ap.add_argument(
        "--seed",
        type=int,
        default=int(os.environ.get("SEED") or 1),
        help="SEED for the tests and, with --random, for the draw (default: $SEED, else 1 as make regress)",
    )
    ap.add_argument("--timeout", type=float, default=900, help="seconds per mutant before it is stopped (default 900)")
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="catalogue mutants tested at once (default 1; make mutate: J); each runs one simulation",
    )
    ap.add_argument("--no-baseline", action="store_true", help="skip the tests on the unmutated RTL")
    ap.add_argument("--keep-builds", action="store_true", help="keep build/sim-mutate-<id> of killed mutants too")
    ap.add_argument("--list", action="store_true", help="list the selected mutants and exit")
    ap.add_argument("--catalogue", type=Path, default=CATALOGUE)
    ap.add_argument(
        "--random",
        type=int,
        metavar="N",
        help="instead of the catalogue, N mutants drawn at random from rtl/*.v by a generator seeded with --seed "
        "(scripts/mutate_random.py); --block names RTL modules then",
    )
    ap.add_argument("--per-block", action="store_true", help="with --random: N mutants of each block, not N in all")
    ap.add_argument(
        "--report", type=Path, help="with --random: the report to write (default results/mutation-random.md)"
    )
    ap.add_argument(
        "--resume",
        action="store_true",
        help="with --random: take the tests' results of the mutants an interrupted run of the same command at the "
        "same commit finished (build/mutate-random/report.json)",
    )
    args = ap.parse_args(argv)

    cat = load_catalogue(args.catalogue)
    if args.random is not None:  # the catalogue gives the blocks and which tests meet which file, not the mutants
        from scripts import mutate_random

        return mutate_random.run(args, cat)
    errors = validate(cat)
    if errors:
        print("mutate: the catalogue is not usable:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 2
    try:
        muts = select(cat, args.block, args.mutant)
    except MutantError as exc:
        print(f"mutate: {exc}", file=sys.stderr)
        return 2
    if args.list:
        list_mutants(muts)
        return 0
    if not muts:
        print("mutate: no mutant selected", file=sys.stderr)
        return 2

    OUT.mkdir(parents=True, exist_ok=True)
    t_start = time.time()
    blocks = sorted({m["block"] for m in muts}, key=list(cat["blocks"]).index)
    baseline_s: dict[str, float] = {}
    if not args.no_baseline:
        got = run_baselines(cat, blocks, args.sim, args.seed, args.timeout, OUT)
        if got is None:
            return 2
        baseline_s = got

    rows: list[MutantRow] = []
    n = len(muts)
    whole = n == len(cat["mutants"])
    commit = git_commit(("rtl", "verif", "scripts")) or "an unknown commit"
    date = time.strftime("%Y-%m-%d", time.gmtime())
    t_run = time.time()
    timeouts = {b: block_timeout(args.timeout, baseline_s, b) for b in blocks}

    def one(m: dict) -> MutantRow:
        return run_mutant(cat, m, args.sim, args.seed, timeouts, args.keep_builds)

    # Each mutant has its own copy of rtl/ and its own build directory, so mutants run side by side; the
    # reports keep the catalogue's order whatever order they finish in.
    order = {m["id"]: k for k, m in enumerate(muts)}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for i, row in enumerate((f.result() for f in as_completed([pool.submit(one, m) for m in muts])), 1):
            rows.append(row)
            rows.sort(key=lambda r: order[r["id"]])
            label = row["result"] + (" [equivalent]" if row["equivalent"] else "")
            by = f" by {row['failed_tests'][0].split('::', 1)[-1]}" if row["failed_tests"] else ""
            what = f"{row['id']} ({row['block']}, {row['category']}): {label}{by} in {row['seconds']:.0f} s"
            progress(i, n, t_run, what)
            write_reports(
                rows,
                {
                    "sim": args.sim,
                    "seed": args.seed,
                    "wall_s": round(time.time() - t_start, 1),
                    "baseline_s": {k: round(v, 1) for k, v in baseline_s.items()},
                    "whole_catalogue": whole,
                    "catalogue_size": len(cat["mutants"]),
                    "commit": commit,
                    "date": date,
                },
            )

    survived = [r for r in rows if r["result"] == "survived" and not r["equivalent"]]
    equiv = [r for r in rows if r["equivalent"]]
    refuted = [r for r in equiv if r["result"] in KILLED]
    broken = [r for r in rows if r["result"] in ("stillborn", "error")]
    killed = [r for r in rows if r["result"] in KILLED and not r["equivalent"]]
    print(
        f"\nmutate: {len(killed)} killed, {len(survived)} survived, {len(equiv)} equivalent, "
        f"{len(broken)} stillborn/error of {n} in {fmt_s(time.time() - t_start)}; "
        f"report {(OUT / 'report.md').relative_to(ROOT)}"
    )
    for r in equiv:
        print(f"  equivalent {r['id']}: {r['result']}")
    for title, group in (
        ("SURVIVED (the tests miss these bugs)", survived),
        ("equivalence REFUTED (marked equivalent, but a test fails)", refuted),
        ("stillborn or error (fix the catalogue or the tests)", broken),
    ):
        if group:
            print(f"mutate: {title}:")
            for r in group:
                print(f"  {r['id']} ({r['block']}, {r['category']}): {r['result']}, log {r['log']}")
    return 1 if (survived or refuted or broken) else 0


if __name__ == "__main__":
    sys.exit(main())
