# find_package(rntuple): the C ABI of rntuple (librntuple_c) and its headers rntuple.h and rntuple.hpp.
# Targets: rntuple::rntuple (shared library) and rntuple::rntuple_static (static library with the system
# libraries it needs). The package is relocatable: paths are found from this file's place
# (<prefix>/lib/cmake/rntuple).
get_filename_component(_rntuple_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET rntuple::rntuple)
  add_library(rntuple::rntuple SHARED IMPORTED)
  set_target_properties(rntuple::rntuple PROPERTIES
    IMPORTED_LOCATION "${_rntuple_prefix}/lib/librntuple_c.so"
    IMPORTED_NO_SONAME TRUE
    INTERFACE_INCLUDE_DIRECTORIES "${_rntuple_prefix}/include")
endif()

if(NOT TARGET rntuple::rntuple_static)
  find_package(Threads REQUIRED)
  add_library(rntuple::rntuple_static STATIC IMPORTED)
  set_target_properties(rntuple::rntuple_static PROPERTIES
    IMPORTED_LOCATION "${_rntuple_prefix}/lib/librntuple_c.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_rntuple_prefix}/include"
    INTERFACE_LINK_LIBRARIES "Threads::Threads;gcc_s;util;rt;m;dl")
endif()

set(rntuple_INCLUDE_DIRS "${_rntuple_prefix}/include")
set(rntuple_LIBRARIES rntuple::rntuple)
set(rntuple_FOUND TRUE)
unset(_rntuple_prefix)
