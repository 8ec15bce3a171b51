"""scripts/synth_results.py: results/synth.md from the runs' reports."""

import json

from scripts import synth_results


def _report(status="ok", timing="pass", fmax=104.2):
    return {
        "target": "ecp5-85k",
        "part": "LFE5U-85F-6BG381C",
        "model": "paper",
        "status": status,
        "timing": timing,
        "params": {"LANES": 64, "VEC": 8, "DRAIN": 8, "TECH": "ecp5"},
        "engine": {"lanes": 64, "vec": 8, "drain": 8, "buf_depth": 512},
        "clocks": {
            "clk": {
                "requested_mhz": 100.0,
                "fmax_mhz": fmax,
                "constraint_mhz": 100.0,
                "slack_ns": 0.403,
                "net": "$glbnet$clk",
                "pass": True,
            }
        },
        "pll": {"achieved_mhz": 100.0, "vco_mhz": 600.0, "params": {"ECP5_CLKI_DIV": 1}},
        "resources": {"LUT": 41000, "BRAM": 197},
        "capacity": {"LUT": 83640, "BRAM": 208},
        "resource_kinds": {"BRAM": {"lane buffers": 64, "bank state": 64}},
        "throughput": {
            "cycles_per_sample": 42474.0,
            "train_sample_cycles": 41547,
            "update_cycles": 59311,
            "batch": 64,
            "macs_per_sample": 2256896,
            "samples_per_s_at_clock": 2354.4,
        },
        "dsp_use": {"clock_mhz": 100.0, "macs_per_s": 5.3e9, "multipliers": 156, "fraction": 0.34},
        "runtime_s": {"yosys": 300.0, "pnr": 1700.0},
        "problems": [],
        "pnr_options": [],
    }


def test_markdown_has_a_row_and_the_details_of_each_run(tmp_path):
    for name in ("ecp5-85k", "ecp5-85k-router2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.json").write_text(json.dumps(_report()))
    reports = synth_results.load_reports(tmp_path)
    md = synth_results.markdown(reports)
    assert md.count("| ecp5-85k") == 2 and "| 104.20 | +0.40 | pass |" in md
    assert "LUT 41,000 / 83,640 (49 %)" in md and "BRAM 197 / 208 (95 %)" in md and "| 2,354 |" in md
    assert "- BRAM by use: lane buffers 64, bank state 64." in md and "34.0 % of 156 multipliers" in md
    assert "64 lanes, vec 8, drain 8" in md and "28 min" in md


def test_a_run_that_does_not_fit_says_so(tmp_path):
    r = _report(status="does-not-fit", timing="not measured", fmax=None)
    r["does_not_fit"] = [{"resource": "BRAM", "used": 221, "available": 208}]
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "report.json").write_text(json.dumps(r))
    md = synth_results.markdown(synth_results.load_reports(tmp_path))
    assert "| does-not-fit |" in md and "Does not fit: BRAM needs 221, the part has 208." in md


def test_a_run_that_fails_timing_gives_its_samples_per_s_at_the_fmax():
    tp = {"samples_per_s": {"clk": 457.7}}
    assert synth_results._samples_per_s(tp, None, "clk") == "458 at the Fmax"
    assert synth_results._samples_per_s({**tp, "samples_per_s_at_clock": 433.6}, 433.6, "clk") == "434"
    assert synth_results._samples_per_s({}, None, "clk") == ""


def test_details_give_the_seed_sweep_and_the_area_by_unit():
    r = _report()
    r["seed_sweep"] = {"seeds": [1, 2, 3], "clocks": {"clk": {"fmax_mhz": [78.9, 88.04, None], "median": 83.47}}}
    r["unit_resources"] = {"u_accel": {"LUT": 12583, "BRAM": 131}, "u_accel.u_contract": {"LUT": 6553}}
    text = "\n".join(synth_results.details("ecp5-85k", r))
    assert "- nextpnr seeds 1, 2, 3: `clk` Fmax 78.9, 88.04, - MHz (median 83.47, which the QoR baseline" in text
    assert "`u_accel` LUT 12,583, BRAM 131; `u_accel.u_contract` LUT 6,553." in text
    r["seed_sweep"]["clocks"]["clk"] = {"fmax_mhz": [None, None], "median": None}
    assert "MHz (no seed routed); the table gives seed 1's." in "\n".join(synth_results.details("ecp5-85k", r))
