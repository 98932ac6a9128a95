# ascendc.cmake, as ascendless installs it at <toolkit>/tools/tikcpp/ascendc_kernel_cmake (the
# directory ASCENDC_CMAKE_DIR names after set_env.sh; also reachable as compiler/tikcpp and
# <arch>-linux/tikcpp, where the vendor's toolkit keeps it).
#
# The vendor's file compiles Ascend C device kernels with its own compiler (bisheng/ccec), which
# ascendless does not have and cannot stand in for. This stand-in lets a project that includes
# the file but builds only host code configure and build; every function that would compile a
# kernel stops the configure with an error that says so, rather than producing a library that
# has no kernel in it.

if(DEFINED _ASCENDLESS_ASCENDC_CMAKE_INCLUDED)
  return()
endif()
set(_ASCENDLESS_ASCENDC_CMAKE_INCLUDED TRUE)

function(_ascendless_no_kernel_compiler what target)
  message(FATAL_ERROR
    "${what}(${target} ...) compiles Ascend C device kernels, which needs the vendor's Ascend C "
    "compiler (the CANN toolkit's ascendc.cmake and bisheng). ascendless provides the runtime "
    "(libascendcl) only: build the kernels with the vendor's toolkit, or replace them with host "
    "code (see docs/consumers.md, \"The vendor's runtime samples\").")
endfunction()

function(ascendc_library target)
  _ascendless_no_kernel_compiler(ascendc_library "${target}")
endfunction()

function(ascendc_fatbin_library target)
  _ascendless_no_kernel_compiler(ascendc_fatbin_library "${target}")
endfunction()

function(ascendc_compile_definitions target)
  _ascendless_no_kernel_compiler(ascendc_compile_definitions "${target}")
endfunction()

function(ascendc_compile_options target)
  _ascendless_no_kernel_compiler(ascendc_compile_options "${target}")
endfunction()

function(ascendc_include_directories target)
  _ascendless_no_kernel_compiler(ascendc_include_directories "${target}")
endfunction()
