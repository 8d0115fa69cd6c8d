#!/usr/bin/env bash
# Set up (first time only) and run eqsat-test on a bundled example model.
# Usage: scripts/try.sh [MODEL.py] [eqsat-test options...]   (default: examples/elementwise.py)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
model=${1:-examples/elementwise.py}
shift || true
exec .venv/bin/eqsat-test "$model" "$@"
