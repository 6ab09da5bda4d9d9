# find_package(flakeid CONFIG) for the flakeid C SDK. Relocatable: paths are found
# from this file's place (lib/cmake/flakeid/ under the SDK's root).
#   flakeid::flakeid         the shared library (libflakeid.so, soname libflakeid.so.0)
#   flakeid::flakeid_static  the static library (libflakeid.a and what it needs)
get_filename_component(_flakeid_root "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET flakeid::flakeid)
  add_library(flakeid::flakeid SHARED IMPORTED)
  set_target_properties(flakeid::flakeid PROPERTIES
    IMPORTED_LOCATION "${_flakeid_root}/lib/libflakeid.so"
    IMPORTED_SONAME "libflakeid.so.0"
    INTERFACE_INCLUDE_DIRECTORIES "${_flakeid_root}/include")
endif()
if(NOT TARGET flakeid::flakeid_static)
  add_library(flakeid::flakeid_static STATIC IMPORTED)
  set_target_properties(flakeid::flakeid_static PROPERTIES
    IMPORTED_LOCATION "${_flakeid_root}/lib/libflakeid.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_flakeid_root}/include"
    INTERFACE_LINK_LIBRARIES "gcc_s;util;rt;pthread;m;dl;c")
endif()
unset(_flakeid_root)
set(flakeid_FOUND TRUE)
