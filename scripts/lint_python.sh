#!/usr/bin/env bash
# ruff (lint, then format check) and mypy over the project's Python, with the settings in pyproject.toml.
# Each tool's findings name the file and line; the verdict line names the tool.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
PATHS=(golden verif scripts conftest.py)
fail=0
check() {
  local name=$1; shift
  local out
  if out=$("$@" 2>&1); then
    echo "lint: $name clean"
  else
    echo "lint: $name FAILED"; sed 's/^/  /' <<< "$out"; fail=1
  fi
}
check "ruff check" "$PY" -m ruff check --output-format concise "${PATHS[@]}"
check "ruff format" "$PY" -m ruff format --check "${PATHS[@]}"
check "mypy" "$PY" -m mypy  # the files and settings are pyproject.toml's [tool.mypy]
exit $fail
