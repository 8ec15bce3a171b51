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
