"""verif/runner.py's build settings that need no simulator: the class-by-class compile of wide Verilator models."""

import os
import subprocess

import pytest

from verif.runner import _classes_apart


@pytest.mark.parametrize("outer", [None, "s -- J=2"])  # alone, and under `make -s regress J=2`
def test_classes_apart_reaches_make_and_is_undone(outer, monkeypatch, tmp_path):
    if outer is None:
        monkeypatch.delenv("MAKEFLAGS", raising=False)
    else:
        monkeypatch.setenv("MAKEFLAGS", outer)
    monkeypatch.setenv("MAKELEVEL", "1")  # under `make regress`, where a nested make names its directory
    (tmp_path / "m.mk").write_text("all:\n\t@echo $(VM_PARALLEL_BUILDS) $(CFG_CXXFLAGS_PCH_I)\n")
    with _classes_apart(True):
        seen = subprocess.run(
            ["make", "--no-print-directory", "-f", "m.mk"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
    assert seen == ["1", "-include"]
    assert os.environ.get("MAKEFLAGS") == outer


def test_classes_apart_off_leaves_makeflags_alone(monkeypatch):
    monkeypatch.setenv("MAKEFLAGS", "-j2")
    with _classes_apart(False):
        assert os.environ["MAKEFLAGS"] == "-j2"
    assert os.environ["MAKEFLAGS"] == "-j2"
