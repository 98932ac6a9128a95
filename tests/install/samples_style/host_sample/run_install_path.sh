#!/bin/bash
# The other way the vendor's samples find the toolkit: ASCEND_INSTALL_PATH, read under
# `set -u` (so it must be set), its bin/setenv.bash sourced, and passed to CMake unquoted.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "${SCRIPT_DIR}"

_ASCEND_INSTALL_PATH=$ASCEND_INSTALL_PATH
source $_ASCEND_INSTALL_PATH/bin/setenv.bash
echo "[INFO]: Current compile soc version is ${SOC_VERSION}"

rm -rf build out
mkdir -p build
cmake -B build -DASCEND_CANN_PACKAGE_PATH=${_ASCEND_INSTALL_PATH}
cmake --build build -j2
cmake --install build
./out/bin/main
