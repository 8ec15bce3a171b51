"""The results scripts (scripts/accuracy.py, scripts/bits.py) refuse a model and dataset that do not fit each other
with one line and exit status 2, before any run starts or any results file is written."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("script", ["accuracy.py", "bits.py"])
def test_a_model_the_dataset_does_not_fit_is_one_line(script):
    # tiny takes 16 inputs, the digits images have 64
    res = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / script), "--model", "tiny", "--dataset", "digits"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": ""},
    )
    assert res.returncode == 2, res.stderr
    assert res.stderr == "error: dataset digits has 64 inputs per image but model tiny expects 16\n"
    assert res.stdout == ""
    assert not list((ROOT / "results").glob("*-tiny-digits*"))
