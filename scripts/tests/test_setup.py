"""scripts/setup.sh: a missing Debian tool is named with the command that installs it, and nothing is changed."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_missing_tool_is_named_with_its_install_command(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in (
        "bash",
        "sha256sum",
        "cut",
        "cat",
        "id",
        "rm",
        "dirname",
        "yosys",
        "nextpnr-ice40",
        "icepack",
        "g++",
        "make",
        "ccache",
        "z3",
    ):  # everything but iverilog
        path = shutil.which(tool)
        if path:
            (bindir / tool).symlink_to(path)
    (bindir / "python3").symlink_to(os.path.realpath(sys.executable))
    stamp = ROOT / ".venv" / ".setup-ok"
    before = stamp.read_text() if stamp.exists() else None
    res = subprocess.run(
        ["bash", str(ROOT / "scripts" / "setup.sh")],
        capture_output=True,
        text=True,
        env={"PATH": str(bindir), "NO_APT": "1", "HOME": os.environ.get("HOME", "/root")},
    )
    assert res.returncode == 1
    assert "missing Debian packages: iverilog\n" in res.stderr
    assert "apt-get install -y iverilog" in res.stderr
    assert (stamp.read_text() if stamp.exists() else None) == before
