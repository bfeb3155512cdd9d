# Installs stepprof as `make install PREFIX=... DESTDIR=...` does (through
# the Makefile's install-files, which installs $(BUILD) without building),
# then builds programs against it the ways the README shows, and runs each
# with no LD_LIBRARY_PATH (or LD_RUN_PATH, PKG_CONFIG_PATH, ...) set:
#   - pkg-config, shared library (the .pc file's rpath finds it);
#   - pkg-config, static library (the .a named through the .pc's libdir);
#   - find_package(stepprof): stepprof::stepprof, run from the build tree and
#     once installed, and stepprof::stepprof_static;
#   - a DESTDIR install: its files land under DESTDIR/PREFIX and nothing at
#     PREFIX; the staged tree, used where it lies, works through pkg-config
#     and find_package (the install does not depend on its prefix), and
#     under /usr the .pc file has no rpath.
# Run by ctest: cmake -DBUILD=... -DSRC=... -DOUT=... -DCC=... -P install_test.cmake
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT}/consumer)
foreach(var LD_LIBRARY_PATH LD_RUN_PATH LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH
            MAKEFLAGS MAKELEVEL MFLAGS DESTDIR)
  unset(ENV{${var}})
endforeach()

function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGV}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}${err}")
  endif()
endfunction()

function(expect_file path)
  if(NOT EXISTS ${path})
    message(FATAL_ERROR "not installed: ${path}")
  endif()
endfunction()

# Every file a user needs, at its place under root.
function(expect_layout root)
  file(GLOB pcs ${root}/lib*/pkgconfig/stepprof.pc ${root}/lib/*/pkgconfig/stepprof.pc)
  list(LENGTH pcs n)
  if(NOT n EQUAL 1)
    message(FATAL_ERROR "expected one stepprof.pc under ${root}, found: ${pcs}")
  endif()
  get_filename_component(pcdir ${pcs} DIRECTORY)
  get_filename_component(libdir ${pcdir} DIRECTORY)
  foreach(f ${libdir}/libstepprof.so.0 ${libdir}/libstepprof.a ${libdir}/cmake/stepprof/stepprofConfig.cmake
            ${libdir}/cmake/stepprof/stepprofProtobufC.cmake ${root}/include/stepprof/stepprof.h
            ${root}/bin/stepprof ${root}/share/man/man1/stepprof.1)
    expect_file(${f})
  endforeach()
  # The exported targets name their dependencies; no path of this machine.
  file(GLOB targets ${libdir}/cmake/stepprof/stepprofTargets*.cmake)
  foreach(f ${targets})
    file(READ ${f} text)
    foreach(bad "libprotobuf-c.so" "libz.so" "${BUILD}" "${SRC}")
      string(FIND "${text}" "${bad}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "${f} holds '${bad}': the install cannot move")
      endif()
    endforeach()
  endforeach()
  set(pcdir ${pcdir} PARENT_SCOPE)
  set(libdir ${libdir} PARENT_SCOPE)
endfunction()

# pkg-config finds the .pc file through PKG_CONFIG_PATH, for this call only.
function(pkg_config out pcdir)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pcdir} pkg-config ${ARGN} stepprof
    OUTPUT_VARIABLE flags RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config ${ARGN} stepprof (PKG_CONFIG_PATH=${pcdir}) failed: ${err}")
  endif()
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()

# cc consumer.c $(pkg-config --cflags --libs stepprof), and the static line
# of the README; each program then runs.
function(pkg_config_consumers pcdir tag)
  pkg_config(flags ${pcdir} --cflags --libs)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run(${CC} ${SRC}/tests/install/consumer.c ${flags} -o ${OUT}/consumer_pc_${tag})
  run(${OUT}/consumer_pc_${tag} ${OUT}/pc_${tag}.json.gz)
  pkg_config(cflags ${pcdir} --cflags)
  pkg_config(libdir ${pcdir} --variable=libdir)
  separate_arguments(cflags UNIX_COMMAND "${cflags}")
  # -lisal where stepprof was built with ISA-L (README: the optional part of the line)
  pkg_config(private ${pcdir} --static --libs-only-l)
  set(isal "")
  if(private MATCHES "-lisal")
    set(isal -lisal)
  endif()
  run(${CC} ${SRC}/tests/install/consumer.c ${cflags} ${libdir}/libstepprof.a -lprotobuf-c -lz ${isal} -lm -lpthread
      -o ${OUT}/consumer_pc_static_${tag})
  run(${OUT}/consumer_pc_static_${tag} ${OUT}/pc_static_${tag}.json)
endfunction()

# The CMake project of CMakeLists.txt.in against prefix: both programs run
# from the build tree, and the shared one also once installed.
function(cmake_consumers prefix tag)
  set(dir ${OUT}/consumer_${tag})
  configure_file(${SRC}/tests/install/CMakeLists.txt.in ${dir}/CMakeLists.txt COPYONLY)
  configure_file(${SRC}/tests/install/consumer.c ${dir}/consumer.c COPYONLY)
  run(${CMAKE_COMMAND} -S ${dir} -B ${dir}/build -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${CC}
      -DCMAKE_INSTALL_PREFIX=${dir}/installed)
  file(STRINGS ${dir}/build/CMakeCache.txt found REGEX "^stepprof_DIR:")
  string(FIND "${found}" "${prefix}/" at)
  if(NOT at GREATER -1)
    message(FATAL_ERROR "find_package found another stepprof: ${found} (expected under ${prefix})")
  endif()
  run(${CMAKE_COMMAND} --build ${dir}/build)
  run(${dir}/build/consumer_shared ${OUT}/cmake_shared_${tag}.json)
  run(${dir}/build/consumer_static ${OUT}/cmake_static_${tag}.json)
  run(${CMAKE_COMMAND} --install ${dir}/build)
  run(${dir}/installed/bin/consumer_shared ${OUT}/cmake_installed_${tag}.json)
endfunction()

find_program(MAKE_PROGRAM NAMES make gmake)
if(NOT MAKE_PROGRAM)
  message(FATAL_ERROR "make not found: the install goes through the Makefile")
endif()
set(install_files ${MAKE_PROGRAM} --no-print-directory -C ${SRC} install-files BUILD=${BUILD})
# A Makefile that ignored PREFIX or DESTDIR would install into this machine's
# /usr/local: its command is read first (make -n) and run only if it names both.
execute_process(COMMAND ${install_files} -n PREFIX=${OUT}/probe-prefix DESTDIR=${OUT}/probe-destdir
  OUTPUT_VARIABLE dry ERROR_VARIABLE dry RESULT_VARIABLE rc)
string(FIND "${dry}" "${OUT}/probe-prefix" has_prefix)
string(FIND "${dry}" "${OUT}/probe-destdir" has_destdir)
if(NOT rc EQUAL 0 OR has_prefix EQUAL -1 OR has_destdir EQUAL -1)
  message(FATAL_ERROR "make install-files ignores PREFIX or DESTDIR (not run):\n${dry}")
endif()

# 1. make install PREFIX=...
set(prefix ${OUT}/prefix)
run(${install_files} PREFIX=${prefix})
expect_layout(${prefix})
set(prefix_pc ${pcdir}/stepprof.pc)
pkg_config_consumers(${pcdir} prefix)
cmake_consumers(${prefix} prefix)

# 2. make install PREFIX=/opt/... DESTDIR=...: staged, then used where it lies.
string(RANDOM LENGTH 8 ALPHABET abcdefghijklmnopqrstuvwxyz tag)
set(staged_prefix /opt/stepprof-install-test-${tag})
run(${install_files} PREFIX=${staged_prefix} DESTDIR=${OUT}/stage)
if(EXISTS ${staged_prefix})
  message(FATAL_ERROR "DESTDIR install wrote to ${staged_prefix} itself")
endif()
expect_layout(${OUT}/stage${staged_prefix})
pkg_config_consumers(${pcdir} stage)
cmake_consumers(${OUT}/stage${staged_prefix} stage)

# 3. Under /usr the loader finds the library anyway: no rpath in the .pc file.
run(${install_files} PREFIX=/usr DESTDIR=${OUT}/stage-usr)
expect_layout(${OUT}/stage-usr/usr)
file(READ ${pcdir}/stepprof.pc pc)
string(FIND "${pc}" "rpath" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "${pcdir}/stepprof.pc carries an rpath under /usr:\n${pc}")
endif()
file(READ ${prefix_pc} pc)
string(FIND "${pc}" "-Wl,-rpath,\${libdir}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "${prefix_pc} has no rpath:\n${pc}")
endif()

message("installed stepprof works, with no LD_LIBRARY_PATH: pkg-config (shared and static) and "
        "find_package (shared, also installed, and static), from a prefix and from a DESTDIR stage")
