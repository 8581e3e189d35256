# Issue 27 must-show 2: an installed moesim needs nothing of the checkout. Installs the build into a
# scratch prefix, checks that the binary holds no path of the source tree, and runs `accuracy` (whose
# default data file used to be a compiled-in checkout path) from another folder.
#   cmake -DBUILD=build -DSOURCE=. -DWORK=scratch -P install.cmake
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/elsewhere)
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix RESULT_VARIABLE result
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "cmake --install failed:\n${out}${err}")
endif()
set(binary ${WORK}/prefix/bin/moesim)
if(NOT EXISTS ${binary})
  message(FATAL_ERROR "cmake --install put no bin/moesim under ${WORK}/prefix")
endif()

# What `strings` would show: every printable run of the binary, searched for the checkout's path. A
# sanitizer or fuzzing build (CI's) is exempt: its instrumentation keeps each global's and check's
# source file for its reports, which is what that build is for; users run the README's build.
if(INSTRUMENTED)
  message(STATUS "skipped the checkout-path scan: this build is instrumented (${INSTRUMENTED}), and sanitizers "
                 "keep source paths for their reports")
else()
string(REGEX REPLACE "([][+.*()^$?|\\])" "\\\\\\1" source_regex "${SOURCE}/")
file(STRINGS ${binary} hits REGEX "${source_regex}")
if(hits)
  list(LENGTH hits count)
  list(GET hits 0 first)
  message(FATAL_ERROR "the installed binary holds ${count} string(s) with the checkout path ${SOURCE}/, e.g. ${first}")
endif()
endif()

execute_process(COMMAND ${binary} accuracy --group narayanan2021 --fidelity estimate
                WORKING_DIRECTORY ${WORK}/elsewhere RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT result EQUAL 0 OR NOT out MATCHES "overall MAPE")
  message(FATAL_ERROR "the installed moesim accuracy failed (exit ${result}) in ${WORK}/elsewhere:\n${out}${err}")
endif()
message(STATUS "installed moesim: no checkout path inside; accuracy from another folder:\n${out}")
file(REMOVE_RECURSE ${WORK})
