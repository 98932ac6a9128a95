#!/bin/bash
# A kernel sample's run.sh, in the vendor's samples' style.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "${SCRIPT_DIR}"

_ASCEND_CANN_PATH="${ASCEND_HOME_PATH:-}"
source "${_ASCEND_CANN_PATH}/bin/setenv.bash"
echo "[INFO]: Current compile soc version is ${SOC_VERSION}"

rm -rf build
mkdir -p build
cmake -B build -DASCEND_CANN_PACKAGE_PATH="${_ASCEND_CANN_PATH}"
cmake --build build -j2
./build/main
