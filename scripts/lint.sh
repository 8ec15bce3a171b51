#!/usr/bin/env bash
# verilator --lint-only -Wall over every module in rtl/ (each as its own top); waivers in rtl/lint_waivers.vlt.
set -uo pipefail
cd "$(dirname "$0")/.."
shopt -s nullglob
files=(rtl/*.v)
if [ ${#files[@]} -eq 0 ]; then echo "lint: no RTL yet"; exit 0; fi
mkdir -p build/lint
waivers=()
[ -f rtl/lint_waivers.vlt ] && waivers=(rtl/lint_waivers.vlt)
fail=0
for f in "${files[@]}"; do
  top=$(basename "$f" .v)
  if verilator --lint-only -Wall -Irtl "${waivers[@]}" --top-module "$top" "$f" >"build/lint/$top.log" 2>&1; then
    echo "lint: $top clean"
  else
    echo "lint: $top FAILED"; sed 's/^/  /' "build/lint/$top.log"; fail=1
  fi
done
exit $fail
