"""The on-chip clock of a synthesis target: the PLL settings that make the requested clock from the board's
oscillator, from the vendor tools' own calculators (yowasp-ecppll for ECP5's EHXPLLL, icepll for iCE40's SB_PLL40),
passed to rtl/prim/tt_prim_pll.v as the top's parameters.

A requested clock that the PLL cannot make exactly is refused before synthesis, naming the nearest clocks it can
make below and above (`achievable`: every output of the divider ranges within the PLL's frequency limits, the
limits the calculators use).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from fractions import Fraction
from pathlib import Path
from typing import TypedDict

ROOT = Path(__file__).resolve().parent.parent
EXACT = 1e-6  # MHz: a clock the PLL makes "exactly"


class PllError(ValueError):
    """A clock the PLL cannot make, or a calculator that failed."""


class Ecp5Limits(TypedDict):
    """Divider ranges and frequency limits (MHz, low and high) of ECP5's EHXPLLL."""

    ref_div: range
    fb_div: range
    out_div: range
    pfd: tuple[float, float]
    vco: tuple[float, float]
    out: tuple[float, float]


class Ice40Limits(TypedDict):
    """Divider ranges and frequency limits (MHz, low and high) of iCE40's SB_PLL40."""

    divr: range
    divf: range
    divq: range
    pfd: tuple[float, float]
    vco: tuple[float, float]
    out: tuple[float, float]


# ECP5 EHXPLLL (Lattice FPGA-TN-02200 and yowasp-ecppll): CLKOP = CLKI * CLKFB_DIV / CLKI_DIV with feedback from
# CLKOP; VCO = CLKOP * CLKOP_DIV.
ECP5: Ecp5Limits = {
    "ref_div": range(1, 129),
    "fb_div": range(1, 81),
    "out_div": range(1, 129),
    "pfd": (3.125, 400.0),
    "vco": (400.0, 800.0),
    "out": (10.0, 400.0),
}
# iCE40 SB_PLL40 in SIMPLE feedback (Lattice TN1251 and icepll): out = in * (DIVF + 1) / ((DIVR + 1) * 2^DIVQ).
ICE40: Ice40Limits = {
    "divr": range(0, 16),
    "divf": range(0, 128),
    "divq": range(1, 7),
    "pfd": (10.0, 133.0),
    "vco": (533.0, 1066.0),
    "out": (16.0, 275.0),
}


def achievable(family: str, fin: float) -> list[float]:
    """Every clock (MHz) the family's PLL can make from `fin`, sorted."""
    out: set[Fraction] = set()
    fin_q = Fraction(fin).limit_denominator(10**6)
    if family == "ecp5":
        lim5 = ECP5
        for r in lim5["ref_div"]:
            pfd = fin_q / r
            if not lim5["pfd"][0] <= pfd <= lim5["pfd"][1]:
                continue
            for fb in lim5["fb_div"]:
                f = pfd * fb
                if lim5["out"][0] <= f <= lim5["out"][1] and any(
                    lim5["vco"][0] <= f * d <= lim5["vco"][1] for d in lim5["out_div"]
                ):
                    out.add(f)
    elif family == "ice40":
        lim40 = ICE40
        for r in lim40["divr"]:
            pfd = fin_q / (r + 1)
            if not lim40["pfd"][0] <= pfd <= lim40["pfd"][1]:
                continue
            for f_ in lim40["divf"]:
                vco = pfd * (f_ + 1)
                if not lim40["vco"][0] <= vco <= lim40["vco"][1]:
                    continue
                for q in lim40["divq"]:
                    f = vco / (1 << q)
                    if lim40["out"][0] <= f <= lim40["out"][1]:
                        out.add(f)
    else:
        raise PllError(f"no PLL model for family {family!r}")
    return sorted(float(f) for f in out)


def nearest(family: str, fin: float, fout: float) -> tuple[float | None, float | None]:
    """The nearest clocks the PLL can make below and above `fout` (None: none that side)."""
    clocks = achievable(family, fin)
    below = [f for f in clocks if f < fout - EXACT]
    above = [f for f in clocks if f > fout + EXACT]
    return (below[-1] if below else None), (above[0] if above else None)


def _refuse(family: str, fin: float, fout: float) -> PllError:
    lo, hi = nearest(family, fin, fout)
    near = " or ".join(f"{f:.4g} MHz" for f in (lo, hi) if f is not None)
    return PllError(
        f"the {family} PLL cannot make {fout:g} MHz from the {fin:g} MHz oscillator; the nearest clocks it "
        f"can make are {near}: request one of them"
    )


def _tool(name: str) -> str:
    for cand in (Path(sys.prefix) / "bin" / name, shutil.which(name)):
        if cand and Path(cand).exists():
            return str(cand)
    raise PllError(f"{name} not found: run `make setup` (it installs the pinned toolchain)")


def ecp5_settings(fin: float, fout: float) -> dict:
    """yowasp-ecppll's EHXPLLL dividers for `fout` from `fin`: {"params": tt_prim_pll's ECP5_* parameters,
    "achieved_mhz", "vco_mhz"}; refuses a clock it cannot make exactly."""
    # the WebAssembly tool writes files only under its working directory, and cannot reach /tmp
    (ROOT / "build").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=ROOT / "build") as tmp:
        run = subprocess.run(
            [_tool("yowasp-ecppll"), "-i", f"{fin:g}", "-o", f"{fout:g}", "-f", "pll.v"],
            capture_output=True,
            text=True,
            cwd=tmp,
        )
        if run.returncode != 0:
            raise PllError(f"yowasp-ecppll failed: {run.stderr.strip() or run.stdout.strip()}")
        text = run.stdout + (Path(tmp) / "pll.v").read_text()

    def num(pattern: str) -> float:
        m = re.search(pattern, text)
        if not m:
            raise PllError(f"yowasp-ecppll printed no {pattern!r}")
        return float(m.group(1))

    achieved = num(r"clkout0 frequency: ([\d.]+) MHz")
    if abs(achieved - fout) > EXACT * max(1.0, fout) and abs(achieved - fout) > 5e-4:
        raise _refuse("ecp5", fin, fout)
    params = {
        f"ECP5_{k}": int(num(rf"\.{k}\((\d+)\)"))
        for k in ("CLKI_DIV", "CLKFB_DIV", "CLKOP_DIV", "CLKOP_CPHASE", "CLKOP_FPHASE")
    }
    exact = fin * params["ECP5_CLKFB_DIV"] / params["ECP5_CLKI_DIV"]
    if abs(exact - fout) > 5e-4:
        raise _refuse("ecp5", fin, fout)
    return {"params": params, "achieved_mhz": exact, "vco_mhz": num(r"VCO frequency: ([\d.]+)")}


def ice40_settings(fin: float, fout: float) -> dict:
    """icepll's SB_PLL40 dividers for `fout` from `fin` (SIMPLE feedback): {"params": tt_prim_pll's ICE40_*
    parameters, "achieved_mhz", "vco_mhz"}; refuses a clock it cannot make exactly."""
    run = subprocess.run([_tool("icepll"), "-i", f"{fin:g}", "-o", f"{fout:g}"], capture_output=True, text=True)
    if run.returncode != 0:
        raise PllError(f"icepll failed: {run.stderr.strip() or run.stdout.strip()}")
    text = run.stdout

    def num(pattern: str) -> float:
        m = re.search(pattern, text)
        if not m:
            raise PllError(f"icepll printed no {pattern!r}")
        return float(m.group(1))

    params = {
        "ICE40_DIVR": int(num(r"DIVR:\s+(\d+)")),
        "ICE40_DIVF": int(num(r"DIVF:\s+(\d+)")),
        "ICE40_DIVQ": int(num(r"DIVQ:\s+(\d+)")),
        "ICE40_FILTER_RANGE": int(num(r"FILTER_RANGE:\s+(\d+)")),
    }
    exact = fin * (params["ICE40_DIVF"] + 1) / ((params["ICE40_DIVR"] + 1) * (1 << params["ICE40_DIVQ"]))
    if abs(exact - fout) > 5e-4:
        raise _refuse("ice40", fin, fout)
    return {"params": params, "achieved_mhz": exact, "vco_mhz": num(r"F_VCO:\s+([\d.]+)")}


def settings(family: str, fin: float, fout: float) -> dict:
    """The PLL settings of a target's family (see ecp5_settings, ice40_settings)."""
    if family == "ecp5":
        return ecp5_settings(fin, fout)
    if family == "ice40":
        return ice40_settings(fin, fout)
    raise PllError(f"no PLL for family {family!r}")
