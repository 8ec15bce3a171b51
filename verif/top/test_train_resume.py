"""`make train` on the co-simulated accelerator: a run stopped like Ctrl-C and started again ends with the same
weights, bit for bit, as the golden model's uninterrupted run of the same seed."""
import numpy as np
import pytest

from verif import train
from verif.runner import SIMS


@pytest.mark.skipif("verilator" not in SIMS, reason="the co-simulated run uses Verilator (Icarus is too slow)")
def test_interrupted_cosim_run_resumes_to_the_golden_weights(tmp_path):
    args = ["--model", "tiny", "--dataset", "tiny", "--epochs", "2", "--seed", "3"]
    assert train.main(args + ["--sim", "golden", "--out", str(tmp_path / "golden")]) == 0
    out = str(tmp_path / "rtl")
    assert train.main(args + ["--sim", "verilator", "--out", out, "--interrupt-after", "40"]) == 1
    assert (tmp_path / "rtl" / "checkpoint.npz").exists() and not (tmp_path / "rtl" / "report.json").exists()
    assert train.main(args + ["--sim", "verilator", "--out", out]) == 0
    ref, got = np.load(tmp_path / "golden" / "weights.npz"), np.load(tmp_path / "rtl" / "weights.npz")
    mem = [k for k in ref.files if k.startswith("mem/")]
    assert mem and all(np.array_equal(ref[k], got[k]) for k in mem)


@pytest.mark.skipif("verilator" not in SIMS, reason="the co-simulated run uses Verilator (Icarus is too slow)")
def test_cosim_run_recompiles_when_the_prune_phase_ends(tmp_path):
    """train.rank.recompile on the co-simulated accelerator: the rank budget ends the prune phase in the second epoch,
    the run recompiles at the ranks fit_ranks picks for the build's engine (for tiny, the live ones, as the golden
    run without an engine picks), uploads the compacted state and fine-tunes bit-exactly: the golden model's weights.
    The report keeps the device's counts from before the recompile beside those after it."""
    import json

    from golden.compiler import compile_network
    from golden.config import config_from_dict, config_to_dict, load_config
    cfg = config_to_dict(load_config("tiny"))
    cfg["layers"][0]["ranks"] = [4]
    cfg["train"]["rank"] = {"enabled": True, "prior": 3e-2, "threshold": 0.05, "warmup_epochs": 1, "every": 3,
                            "budget": 0.7, "recompile": True}
    (tmp_path / "tiny.json").write_text(json.dumps(cfg))
    args = ["--model", str(tmp_path / "tiny.json"), "--dataset", "tiny", "--epochs", "3", "--seed", "3"]
    assert train.main(args + ["--sim", "golden", "--out", str(tmp_path / "golden")]) == 0
    assert train.main(args + ["--sim", "verilator", "--out", str(tmp_path / "rtl")]) == 0
    reports = [json.loads((tmp_path / run / "report.json").read_text()) for run in ("golden", "rtl")]
    assert reports[0]["recompiled_ranks"] == reports[1]["recompiled_ranks"] == reports[1]["history"][-1]["ranks"]
    built = compile_network(config_from_dict(cfg)).macs("train_sample")
    assert reports[1]["macs_per_sample"]["train_sample"] < built
    # the device's counters: the programs of the built network, then those of the recompiled one
    after = reports[1]["device"]
    before = after["before_recompile"]
    assert before["ranks"] == [layer["ranks"] for layer in cfg["layers"]]
    assert before["macs_per_sample"]["train_sample"] == built
    assert after["macs_per_sample"] == reports[1]["macs_per_sample"]
    assert before["program_runs"]["train_sample"] > 0 and after["program_runs"]["train_sample"] > 0
    ref, got = np.load(tmp_path / "golden" / "weights.npz"), np.load(tmp_path / "rtl" / "weights.npz")
    mem = [k for k in ref.files if k.startswith("mem/")]
    assert mem and all(np.array_equal(ref[k], got[k]) for k in mem)
