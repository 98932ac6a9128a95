# The vendor's CMake target names, for build files written inside the vendor's own projects.
#
# The HIXL examples (hicann/hixl examples/cpp/CMakeLists.txt) and similar files link targets
# such as cann_hixl, acl_rt, acl_rt_headers and ascend_hal, which the vendor's top-level project
# defines before it adds them. Build such a directory unchanged by loading this file at its
# project() call:
#
#   source <prefix>/set_env.sh
#   cmake -S <hixl>/examples/cpp -B build \
#         -DCMAKE_PROJECT_INCLUDE=$ASCEND_TOOLKIT_HOME/lib64/cmake/Ascendless/AscendlessCannTargets.cmake
#
# Every library name is the vendor's library of lib64/ (a filter of the one ascendless library,
# with the vendor's soname, docs/install.md); the *_headers targets carry the include directories. HIXL_CODE_DIR and ASCEND_INSTALL_PATH, which those files read, default to this
# installed tree. A target the project already has is left alone.

get_filename_component(_ascendless_cann_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT DEFINED ASCEND_INSTALL_PATH)
  set(ASCEND_INSTALL_PATH "${_ascendless_cann_prefix}")
endif()
if(NOT DEFINED HIXL_CODE_DIR)
  set(HIXL_CODE_DIR "${_ascendless_cann_prefix}")
endif()

# The engines' targets carry c_sec, as the vendor's do (hicann/hixl src/hixl and
# src/llm_datadist: `PUBLIC c_sec`), so programs using securec.h beside them link as there.
foreach(_ascendless_name @VENDOR_LIBS@)
  if(NOT TARGET ${_ascendless_name})
    add_library(${_ascendless_name} SHARED IMPORTED)
    set_target_properties(${_ascendless_name} PROPERTIES
      IMPORTED_LOCATION "${_ascendless_cann_prefix}/lib64/lib${_ascendless_name}.so"
      IMPORTED_SONAME "lib${_ascendless_name}.so"
      INTERFACE_INCLUDE_DIRECTORIES "${_ascendless_cann_prefix}/include")
    if(_ascendless_name STREQUAL "cann_hixl" OR _ascendless_name STREQUAL "llm_datadist")
      set_property(TARGET ${_ascendless_name} PROPERTY INTERFACE_LINK_LIBRARIES c_sec)
    endif()
  endif()
endforeach()

# Header-only targets of the vendor's build (cmake/find_cann_packages.cmake there).
if(NOT TARGET acl_rt_headers)
  add_library(acl_rt_headers INTERFACE IMPORTED)
  set_target_properties(acl_rt_headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_ascendless_cann_prefix}/include;${_ascendless_cann_prefix}/include/acl")
endif()
if(NOT TARGET metadef_headers)
  add_library(metadef_headers INTERFACE IMPORTED)
  set_target_properties(metadef_headers PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${_ascendless_cann_prefix}/include;${_ascendless_cann_prefix}/include/external")
endif()

unset(_ascendless_name)
unset(_ascendless_cann_prefix)
