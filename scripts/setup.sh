#!/usr/bin/env bash
# One-time, idempotent set-up: Debian tools (apt-get when root, unless NO_APT=1) and the pinned Python venv.
# A second run with nothing to do returns in well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=.venv
LOCK=requirements.lock
STAMP="$VENV/.setup-ok"
PYTHON=${PYTHON:-python3}

# Debian package -> a file or command that proves it is installed.
declare -A DEB_PROBE=(
  [iverilog]="cmd:iverilog"
  [yosys]="cmd:yosys"
  [nextpnr-ice40]="cmd:nextpnr-ice40"
  [fpga-icestorm]="cmd:icepack"
  [dataset-fashion-mnist]="file:/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"
  [g++]="cmd:g++"
  [make]="cmd:make"
  [python3-venv]="py:ensurepip"
  [ccache]="cmd:ccache"                    # Verilator builds reuse the compiled runtime (about 30 s each)
  [liblz4-dev]="file:/usr/include/lz4.h"   # Verilator's FST writer (WAVES=1)
  [z3]="cmd:z3"                            # the SMT solver of the formal proofs (make formal)
)

missing=()
for pkg in "${!DEB_PROBE[@]}"; do
  probe=${DEB_PROBE[$pkg]}
  case $probe in
    cmd:*) command -v "${probe#cmd:}" >/dev/null 2>&1 || missing+=("$pkg") ;;
    file:*) [ -e "${probe#file:}" ] || missing+=("$pkg") ;;
    py:*) "$PYTHON" -c "import ${probe#py:}" >/dev/null 2>&1 || missing+=("$pkg") ;;
  esac
done

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && [ "${NO_APT:-0}" != 1 ] && command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing Debian packages: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  else
    echo "setup: missing Debian packages: ${missing[*]}" >&2
    echo "setup: install them with:  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
fi

want=$(sha256sum "$LOCK" | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && [ -x "$VENV/bin/python" ]; then
  exit 0
fi

echo "setup: creating $VENV and installing pinned Python packages from $LOCK"
rm -f "$STAMP"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$LOCK"
# The stamp is written last: an interrupted install is redone on the next run.
echo "$want" > "$STAMP"
echo "setup: done ($("$VENV/bin/python" -c 'import cocotb, pyuvm; print("cocotb", cocotb.__version__, "pyuvm", pyuvm.__version__)'))"
