#!/bin/bash
# The vendor's TDT samples' run.sh, in our own words: ASCEND_INSTALL_PATH read under set -e,
# its bin/setenv.bash sourced, the toolkit passed to CMake unquoted, a fresh build, then run.
set -e

_ASCEND_INSTALL_PATH=$ASCEND_INSTALL_PATH
source $_ASCEND_INSTALL_PATH/bin/setenv.bash

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "${SCRIPT_DIR}"
rm -rf build
mkdir -p build
cd build
cmake .. -DASCEND_CANN_PACKAGE_PATH=${_ASCEND_INSTALL_PATH}
make -j2
cd "${SCRIPT_DIR}"
./build/tdt_channel
./build/tdt_queue
