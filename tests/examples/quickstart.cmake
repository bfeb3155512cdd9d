# Runs the README's C example (examples/quickstart) as the README says, in a
# fresh working directory: it must exit 0, print its summary tables and the
# trace it wrote under ./log, and that trace must pass tracecheck.py. (The
# trace names the DataLoader range as torch does; the Model Summary is checked
# for it instead.)
file(REMOVE_RECURSE ${OUT})
file(MAKE_DIRECTORY ${OUT})
execute_process(COMMAND ${QUICKSTART} WORKING_DIRECTORY ${OUT}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "quickstart failed with ${rc}")
endif()
if(NOT out MATCHES "Overview Summary" OR NOT out MATCHES "\n  Dataloader +10 ")
  message(FATAL_ERROR "quickstart printed no summary tables with its 10 recorded DataLoader ranges")
endif()
string(REGEX MATCH "trace: ([^\n]+)" _ "${out}")
set(trace ${CMAKE_MATCH_1})
if(NOT trace MATCHES "^\\./log/" OR NOT EXISTS "${OUT}/${trace}")
  message(FATAL_ERROR "quickstart did not report a trace file under ./log: '${trace}'")
endif()
execute_process(COMMAND ${PYTHON} -B ${SRC}/tests/trace/tracecheck.py ${OUT}/${trace}
  --expect-name "ProfilerStep#10" --expect-name "ProfilerStep#19"
  --expect-name forward --expect-name backward
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tracecheck rejected ${trace}")
endif()
