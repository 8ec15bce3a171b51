"""pyproject.toml's direct dependencies are pinned to the same versions as requirements.lock."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_direct_dependencies_match_the_lock():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    lock = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", (ROOT / "requirements.lock").read_text(), re.M))
    lock = {k.lower(): v for k, v in lock.items()}
    for dep in deps:
        name, version = dep.split("==")
        assert lock.get(name.lower()) == version, f"{name}: pyproject {version}, lock {lock.get(name.lower())}"
