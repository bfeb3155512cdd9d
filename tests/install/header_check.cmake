# Compiles header_check.c, which includes the public header, with warnings a
# user's project may turn on: as C11 with the C compiler (LANG=C), or as C++17
# with the first of c++, g++ or clang++ found (LANG=CXX; without one the test
# says so and is skipped). Run by ctest: cmake -DCC=... -DLANG=... -DSRC=...
# -DOUT=... -P header_check.cmake
set(flags -Wall -Wextra -Wconversion -Wsign-conversion -pedantic -Werror -O2)
if(LANG STREQUAL "CXX")
  find_program(cxx NAMES c++ g++ clang++)
  if(NOT cxx)
    message("header_check: skipped: no C++ compiler (c++, g++ or clang++) on PATH")
    return()
  endif()
  set(cmd ${cxx} -x c++ -std=c++17)
else()
  set(cmd ${CC} -std=c11)
endif()
string(REPLACE ";" " " line "${cmd} ${flags}")
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${cmd} ${flags} -I${SRC}/include -c ${SRC}/tests/install/header_check.c
                        -o ${OUT}/header_check_${LANG}.o
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "stepprof.h does not compile clean: ${line}\n${out}${err}")
endif()
message("header_check: stepprof.h compiles clean with ${line}")
