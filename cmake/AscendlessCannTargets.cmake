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
# Every library name is the one ascendless library; the *_headers targets carry the include
# directories. HIXL_CODE_DIR and ASCEND_INSTALL_PATH, which those files read, default to this
# installed tree. A target the project already has is left alone.

get_filename_component(_ascendless_cann_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT DEFINED ASCEND_INSTALL_PATH)
  set(ASCEND_INSTALL_PATH "${_ascendless_cann_prefix}")
endif()
if(NOT DEFINED HIXL_CODE_DIR)
  set(HIXL_CODE_DIR "${_ascendless_cann_prefix}")
endif()

foreach(_ascendless_name ascendcl acl_rt acl_rt_impl cann_hixl llm_datadist metadef graph graph_base c_sec ascend_hal)
  if(NOT TARGET ${_ascendless_name})
    add_library(${_ascendless_name} SHARED IMPORTED)
    set_target_properties(${_ascendless_name} PROPERTIES
      IMPORTED_LOCATION "${_ascendless_cann_prefix}/lib64/libascendless.so.0"
      IMPORTED_SONAME "libascendless.so.0"
      INTERFACE_INCLUDE_DIRECTORIES "${_ascendless_cann_prefix}/include")
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
