# `stepprof diagnose` on the demo: with the batch made on the training
# thread it is dataloader-bound; with 48 workers it is not. Each batch waits
# 50 ms without using CPU (--read-ms) and decodes nothing, so data loading
# costs the same however busy the machine is. Inline, it stays over 20% of a
# step unless compute slows past 200 ms a step (it takes ~3 ms on an idle
# 2-core machine, and ~75 ms beside three CPU hogs, where the share was 30%
# with --read-ms 50). 48 workers make batches 0-47 in the first ~50 ms, in
# parallel, and the run needs 21: after the first step, no step waits
# however fast the machine; beside three hogs the share was under 0.01%.
foreach(workers 0 48)
  set(dir ${OUT}/workers${workers})
  file(REMOVE_RECURSE ${dir})
  execute_process(COMMAND ${TRAIN_MLP} --workers ${workers} --steps 21 --read-ms 50
                          --decode-passes 0 --out ${dir}
    OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "train_mlp --workers ${workers} failed with ${rc}: ${out}${err}")
  endif()
  string(REGEX MATCH "trace: ([^\n]+)" _ "${out}")
  set(trace ${CMAKE_MATCH_1})
  if(NOT EXISTS "${trace}")
    message(FATAL_ERROR "the demo did not report an existing trace file: '${trace}'")
  endif()
  execute_process(COMMAND ${CLI} diagnose ${trace}
    OUTPUT_VARIABLE text ERROR_VARIABLE err RESULT_VARIABLE rc)
  message("== workers ${workers}\n${text}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "stepprof diagnose exited with ${rc}")
  endif()
  execute_process(COMMAND ${CLI} diagnose --json ${trace}
    OUTPUT_VARIABLE json RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "stepprof diagnose --json exited with ${rc}")
  endif()
  string(FIND "${text}" "\ndataloader-bound\n" at_text)
  string(FIND "${json}" "\"id\": \"dataloader_bound\"" at_json)
  if(workers EQUAL 0 AND (at_text EQUAL -1 OR at_json EQUAL -1))
    message(FATAL_ERROR "--workers 0 was not called dataloader-bound")
  endif()
  if(workers EQUAL 48 AND NOT (at_text EQUAL -1 AND at_json EQUAL -1))
    message(FATAL_ERROR "--workers 48 was called dataloader-bound")
  endif()
endforeach()
