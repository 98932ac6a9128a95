# What the outside benchmarks' CMake projects (benches/c/*, benches/cxx/*) share: a release
# build with every warning an error, against the installed package found with find_package
# (source <prefix>/set_env.sh first, or pass -DCMAKE_PREFIX_PATH=<prefix>), as a user builds.
# outside_benchmark(NAME SOURCE TARGET) builds NAME from SOURCE linked to Ascendless::TARGET.
set(OUTSIDE_DIR ${CMAKE_CURRENT_LIST_DIR})
set(CMAKE_C_STANDARD 11)
set(CMAKE_C_STANDARD_REQUIRED ON)
set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_BUILD_TYPE)
  set(CMAKE_BUILD_TYPE Release)
endif()
add_compile_options(-Wall -Wextra -Werror)

find_package(Ascendless 0.1 REQUIRED)

function(outside_benchmark name source target)
  add_executable(${name} ${source})
  target_include_directories(${name} PRIVATE ${OUTSIDE_DIR}/cxx)
  target_link_libraries(${name} PRIVATE Ascendless::${target})
endfunction()
