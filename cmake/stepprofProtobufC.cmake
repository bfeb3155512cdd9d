# Defines the imported target protobuf-c::protobuf-c, which the static
# library stepprof_static links. Used by stepprof's own build and, installed
# beside stepprofConfig.cmake, by find_package(stepprof), so that the
# installed targets name protobuf-c rather than the path it had on the
# machine that built stepprof.
#
# protobuf-c built with CMake installs a package that defines this target;
# Debian's (libprotobuf-c-dev) installs none, so the library and its header
# are looked up on their own. The header is optional: users of stepprof do
# not include it. Sets stepprof_ProtobufC_FOUND.
if(NOT TARGET protobuf-c::protobuf-c)
  find_package(protobuf-c CONFIG QUIET)
endif()
if(NOT TARGET protobuf-c::protobuf-c)
  find_library(STEPPROF_PROTOBUF_C_LIBRARY NAMES protobuf-c)
  find_path(STEPPROF_PROTOBUF_C_INCLUDE_DIR protobuf-c/protobuf-c.h)
  mark_as_advanced(STEPPROF_PROTOBUF_C_LIBRARY STEPPROF_PROTOBUF_C_INCLUDE_DIR)
  if(STEPPROF_PROTOBUF_C_LIBRARY)
    add_library(protobuf-c::protobuf-c UNKNOWN IMPORTED)
    set_target_properties(protobuf-c::protobuf-c PROPERTIES
      IMPORTED_LOCATION "${STEPPROF_PROTOBUF_C_LIBRARY}")
    if(STEPPROF_PROTOBUF_C_INCLUDE_DIR)
      set_target_properties(protobuf-c::protobuf-c PROPERTIES
        INTERFACE_INCLUDE_DIRECTORIES "${STEPPROF_PROTOBUF_C_INCLUDE_DIR}")
    endif()
  endif()
endif()
if(TARGET protobuf-c::protobuf-c)
  set(stepprof_ProtobufC_FOUND TRUE)
else()
  set(stepprof_ProtobufC_FOUND FALSE)
endif()
