# Runs the demo and checks the trace it reports with tracecheck.py.
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${TRAIN_MLP} --workers 2 --steps 25 --out ${OUT}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "train_mlp failed with ${rc}")
endif()
string(REGEX MATCH "trace: ([^\n]+)" _ "${out}")
set(trace ${CMAKE_MATCH_1})
if(NOT EXISTS "${trace}")
  message(FATAL_ERROR "the demo did not report an existing trace file: '${trace}'")
endif()
execute_process(COMMAND ${PYTHON} -B ${SRC}/tests/trace/tracecheck.py ${trace}
  --min-events 100 --expect-name "ProfilerStep#10" --expect-name "ProfilerStep#19"
  --expect-name forward --expect-name load_batch
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tracecheck rejected ${trace}")
endif()
