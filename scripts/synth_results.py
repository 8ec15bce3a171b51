"""`make qor`'s summary: results/synth.md and results/synth.json from the last run of each synthesis target and of
each other engine or nextpnr option tried on it (build/synth/*/report.json, written by scripts/synth.py).

    python scripts/synth_results.py

A target without a run is listed as such; the committed baselines (scripts/qor_baselines/) hold the figures that the
QoR check compares with.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build" / "synth"
OUT = ROOT / "results"
RESOURCES = ("LUT", "FF", "BRAM", "DSP", "LC", "EBR", "SPRAM")


def load_reports(build: Path = BUILD) -> dict[str, dict]:
    """Every run's report by its directory name (target, or target with its engine and nextpnr options)."""
    out = {}
    for f in sorted(build.glob("*/report.json")):
        try:
            out[f.parent.name] = json.loads(f.read_text())
        except json.JSONDecodeError:
            continue
    return out


def _clock(r: dict) -> tuple[str, dict]:
    ((net, c),) = r["clocks"].items() if len(r.get("clocks", {})) == 1 else (("-", {}),)
    return net, c


def _engine(r: dict) -> str:
    e = r.get("engine") or {}
    p = r.get("params", {})
    lanes, vec, drain = (
        e.get("lanes", p.get("LANES", 1)),
        e.get("vec", p.get("VEC", 1)),
        e.get("drain", p.get("DRAIN", 1)),
    )
    return f"{lanes} lanes, vec {vec}, drain {drain}"


def _res(r: dict, key: str) -> str:
    used = r.get("resources", {}).get(key)
    if used is None:
        return ""
    cap = r.get("capacity", {}).get(key)
    return f"{used:,.0f}" + (f" / {cap:,} ({100 * used / cap:.0f} %)" if cap else "")


def row(name: str, r: dict) -> list[str]:
    net, c = _clock(r)
    fmax = c.get("fmax_mhz")
    slack = c.get("slack_ns")
    tp = r.get("throughput", {})
    at_clock = tp.get("samples_per_s_at_clock")
    status = r.get("status", "?")
    verdict = r.get("timing", "") if status == "ok" else status
    keys = [k for k in RESOURCES if k in r.get("resources", {})]
    return [
        name,
        r.get("part", ""),
        r.get("model") or "",
        _engine(r),
        r.get("params", {}).get("TECH", "generic"),
        f"{c.get('requested_mhz', 0):g}",
        "" if fmax is None else f"{fmax:.2f}",
        "" if slack is None else f"{slack:+.2f}",
        verdict,
        "; ".join(f"{k} {_res(r, k)}" for k in keys),
        _samples_per_s(tp, at_clock, net),
        " ".join(r.get("pnr_options", [])) or "default",
        _duration(r.get("runtime_s", {}).get("pnr")),
    ]


def _duration(s: float | None) -> str:
    if not s:
        return ""
    return f"{s / 60:.0f} min" if s >= 60 else f"{s:.0f} s"


def _samples_per_s(tp: dict, at_clock: float | None, net: str) -> str:
    """At the requested clock when timing is met; else at the Fmax (synth.py's figure), said so: a board would need
    a slower PLL."""
    if at_clock is not None:
        return f"{at_clock:,.0f}"
    at_fmax = tp.get("samples_per_s", {}).get(net)
    return "" if at_fmax is None else f"{at_fmax:,.0f} at the Fmax"


HEADER = [
    "run",
    "part",
    "model",
    "engine",
    "tech",
    "clock MHz (requested, the PLL's)",
    "Fmax MHz",
    "slack ns",
    "timing",
    "resources (used / available)",
    "training samples/s at the clock",
    "nextpnr",
    "place and route",
]


def details(name: str, r: dict) -> list[str]:
    out = [f"### {name}", ""]
    net, c = _clock(r)
    pll = r.get("pll")
    if pll:
        out.append(
            f"- Clock: the PLL makes {pll['achieved_mhz']:g} MHz (VCO {pll['vco_mhz']:g} MHz; "
            + ", ".join(f"{k} {v}" for k, v in pll["params"].items())
            + ")"
            + ("" if c.get("constraint_mhz") is None else f"; nextpnr timed `{net}` at {c['constraint_mhz']} MHz")
            + "."
        )
    sweep = r.get("seed_sweep", {})
    for clk, sw in sweep.get("clocks", {}).items():
        out.append(
            f"- nextpnr seeds {', '.join(map(str, sweep['seeds']))}: `{clk}` Fmax "
            + ", ".join("-" if f is None else f"{f:g}" for f in sw["fmax_mhz"])
            + (
                " MHz (no seed routed)"
                if sw.get("median") is None
                else f" MHz (median {sw['median']:g}, which the QoR baseline compares)"
            )
            + "; the table gives seed 1's."
        )
    crit = r.get("critical_paths", {}).get(c.get("net") or "")
    if crit:
        out.append(
            f"- Critical path: {crit['delay_ns']:.2f} ns ({crit['logic_ns']:.2f} logic, {crit['routing_ns']:.2f} "
            f"routing), `{crit['from']}` -> `{crit['to']}`."
        )
    for res, kinds in r.get("resource_kinds", {}).items():
        out.append(f"- {res} by use: " + ", ".join(f"{k} {n}" for k, n in kinds.items()) + ".")
    if r.get("high_fanout"):
        out.append(
            "- Largest fan-out (cell inputs a net drives): "
            + ", ".join(f"`{f['net']}` {f['sinks']:,}" for f in r["high_fanout"][:5])
            + "."
        )
    if r.get("deepest_paths"):
        out.append(
            "- Deepest paths (LUT levels of the mapped netlist, scripts/logic_depth.py): "
            + ", ".join(f"{p['levels']:g} `{p['start']}` -> `{p['end']}`" for p in r["deepest_paths"][:3])
            + "."
        )
    units = r.get("unit_resources", {})
    if units:
        out.append(
            "- Area by unit (yosys cells by the instance they are named in, scripts/netlist_units.py): "
            + "; ".join(f"`{u}` " + ", ".join(f"{res} {n:,}" for res, n in c.items()) for u, c in units.items())
            + "."
        )
    use = r.get("dsp_use")
    if use:
        at = "" if use.get("at", "clock") == "clock" else " (the Fmax: timing fails at the requested clock)"
        out.append(
            f"- Multipliers: {use['macs_per_s'] / 1e9:.2f} G MAC/s of training at {use['clock_mhz']:g} MHz{at}, "
            f"{100 * use['fraction']:.1f} % of {use['multipliers']} multipliers x the clock."
        )
    tp = r.get("throughput")
    if tp:
        out.append(
            f"- Cycles per training sample (golden/cost.py, the RTL's exact timing): {tp['cycles_per_sample']:,.0f}"
            f" (train_sample {tp['train_sample_cycles']:,} + update {tp['update_cycles']:,} / "
            f"{tp['batch']}); {tp['macs_per_sample']:,} MACs."
        )
    for p in r.get("problems", []):
        out.append(f"- Problem: {p}")
    for o in r.get("does_not_fit", []):
        out.append(f"- Does not fit: {o.get('resource')} needs {o.get('used')}, the part has {o.get('available')}.")
    rt = r.get("runtime_s", {})
    out.append(
        f"- Run: {r.get('date', '?')} at {r.get('git_commit', '?')}; "
        + ", ".join(f"{k} {v:,.0f} s" for k, v in rt.items())
        + "."
    )
    return out + [""]


def markdown(reports: dict[str, dict]) -> str:
    lines = [
        "# Synthesis of the accelerator top",
        "",
        "Written by `make qor` (`python scripts/synth_results.py`) from the last run of each synthesis target "
        "(`make synth TARGET=...`) and of each other engine or nextpnr option tried on it (`make synth "
        "TARGET=ecp5-85k LANES=64 VEC=16 DRAIN=4`, `python scripts/synth.py --target ecp5-85k --router router2`). "
        "The baselines in scripts/qor_baselines/ hold the target runs' figures with their tolerances.",
        "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "---|" * len(HEADER),
    ]
    for name, r in reports.items():
        lines.append("| " + " | ".join(row(name, r)) + " |")
    lines.append("")
    for name, r in reports.items():
        lines += details(name, r)
    return "\n".join(lines)


def main() -> int:
    reports = load_reports()
    if not reports:
        print("synth_results: no run in build/synth: run `make synth TARGET=...` or `make qor` first", file=sys.stderr)
        return 2
    OUT.mkdir(exist_ok=True)
    (OUT / "synth.md").write_text(markdown(reports))
    (OUT / "synth.json").write_text(json.dumps(reports, indent=1) + "\n")
    print(f"synth_results: {len(reports)} runs -> results/synth.md, results/synth.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
