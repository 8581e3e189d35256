# Issue 27 must-show 3: a deliberate wrong-way include fails the module-border check that every build
# runs (cmake/check_module_includes.cmake). Plants src/core/planted.cpp including planner/ — core may
# use nothing but fmt — in a scratch tree, runs the check with the build's real module graph, and
# requires it to fail naming the file, the include and the rule. Then the real tree must pass.
#   cmake -DCHECKER=... -DDEPS=build/module_deps.cmake -DSRC=src -DWORK=scratch -P wrong_way_include.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/src/core)
file(WRITE ${WORK}/src/core/planted.cpp "#include \"planner/planner.hpp\"\n")
execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${WORK}/src -DDEPS=${DEPS} -P ${CHECKER}
                RESULT_VARIABLE result ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(result EQUAL 0)
  message(FATAL_ERROR "the planted wrong-way include passed the check")
endif()
string(FIND "${err}" "src/core/planted.cpp: includes planner/planner.hpp: core may use only these modules: none" at)
if(at EQUAL -1)
  message(FATAL_ERROR "the check failed without naming the planted include:\n${err}")
endif()
message(STATUS "planted include refused as it must be:\n${err}")

execute_process(COMMAND ${CMAKE_COMMAND} -DSRC=${SRC} -DDEPS=${DEPS} -P ${CHECKER} RESULT_VARIABLE result ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "the real tree breaks the module borders:\n${err}")
endif()
file(REMOVE_RECURSE ${WORK})
