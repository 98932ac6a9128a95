#!/bin/bash
# Written the way most of the vendor's runtime samples' run.sh are: strict mode, the toolkit
# from ASCEND_HOME_PATH, its bin/setenv.bash sourced, SOC_VERSION read, the toolkit passed to
# CMake as ASCEND_CANN_PACKAGE_PATH, then build, install and run.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "${SCRIPT_DIR}"

_ASCEND_CANN_PATH="${ASCEND_HOME_PATH:-}"
if [[ -z "${_ASCEND_CANN_PATH}" ]]; then
    echo "[ERROR]: ASCEND_HOME_PATH is not set: source <toolkit>/set_env.sh first."
    exit 1
fi
if [[ ! -f "${_ASCEND_CANN_PATH}/bin/setenv.bash" ]]; then
    echo "[ERROR]: ${_ASCEND_CANN_PATH}/bin/setenv.bash does not exist."
    exit 1
fi
source "${_ASCEND_CANN_PATH}/bin/setenv.bash"
echo "[INFO]: Current compile soc version is ${SOC_VERSION}"

rm -rf build out
mkdir -p build
cmake -B build \
    -DASCEND_CANN_PACKAGE_PATH="${_ASCEND_CANN_PATH}"
cmake --build build -j2
cmake --install build

./build/main | tee output_msg.txt
grep -q "^\[SUCCESS\]" output_msg.txt
