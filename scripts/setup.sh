#!/usr/bin/env bash
# Create .venv (if needed) and install eqsat-test with everything to generate, run and test.
# torch is installed first at the pinned CPU build so that the package's `torch>=2.5` range
# installs nothing more (a bare `torch` requirement would pull several GB of CUDA packages).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$PY" -m venv .venv
fi
. .venv/bin/activate
stamp=.venv/.eqsat-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ scripts/setup.sh -nt "$stamp" ]; then
    python -m pip install -q --upgrade pip
    python -m pip install -q "torch==${EQSAT_TORCH_VERSION:-2.13.0}"
    python -m pip install -q -e ".[generate,test,ray,zoo]"  # ray: the campaign test runs a real local Ray cluster; zoo: transformers models
    touch "$stamp"
fi
