# cmake -DSRC=<src dir> -DDEPS=<module_deps.cmake> [-DSTAMP=<file>] -P check_module_includes.cmake
#
# The module borders of src/README.md, enforced: a file of src/M may include "N/..." only when N is M
# or a module M depends on, directly or through others (the DEPS of moesim_add_module in
# CMakeLists.txt, which the configure step writes to DEPS). Also: nothing includes cli; nlohmann/json
# only in config and report; no CUDA or NCCL header anywhere in src/. Every breach is listed, then
# the script fails, so the build fails (the moesim_module_includes target runs it on every build
# whose sources changed). tests/build/wrong_way_include.cmake shows it failing on a planted include.
cmake_minimum_required(VERSION 3.25)
if(NOT SRC OR NOT DEPS)
  message(FATAL_ERROR "usage: cmake -DSRC=src -DDEPS=module_deps.cmake [-DSTAMP=file] -P check_module_includes.cmake")
endif()
include(${DEPS})  # sets MOESIM_MODULES and MOESIM_DEPS_<module>

# Everything a module may reach: its DEPS, their DEPS, and so on.
function(reachable module out)
  set(seen "")
  set(todo ${MOESIM_DEPS_${module}})
  while(todo)
    list(POP_FRONT todo next)
    if(NOT next IN_LIST seen)
      list(APPEND seen ${next})
      list(APPEND todo ${MOESIM_DEPS_${next}})
    endif()
  endwhile()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

set(breaches "")
foreach(module IN LISTS MOESIM_MODULES)
  reachable(${module} allowed)
  set(used "")
  file(GLOB files ${SRC}/${module}/*.cpp ${SRC}/${module}/*.hpp)
  foreach(file IN LISTS files)
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
    file(RELATIVE_PATH shown ${SRC}/.. ${file})
    foreach(line IN LISTS lines)
      if(line MATCHES "#[ \t]*include[ \t]*\"([a-z_]+)/([^\"]+)\"")
        set(target ${CMAKE_MATCH_1})
        list(APPEND used ${target})
        if(target STREQUAL "cli" AND NOT module STREQUAL "cli")
          list(APPEND breaches "${shown}: includes ${target}/${CMAKE_MATCH_2}: nothing includes cli (the composition root)")
        elseif(target IN_LIST MOESIM_MODULES AND NOT target STREQUAL module AND NOT target IN_LIST allowed)
          string(REPLACE ";" ", " allowed_text "${allowed}")
          if(NOT allowed_text)
            set(allowed_text "none")
          endif()
          list(APPEND breaches "${shown}: includes ${target}/${CMAKE_MATCH_2}: ${module} may use only these modules: ${allowed_text}")
        endif()
      elseif(line MATCHES "#[ \t]*include[ \t]*<([^>]+)>")
        set(header ${CMAKE_MATCH_1})
        if(header MATCHES "^nlohmann/" AND NOT module STREQUAL "config" AND NOT module STREQUAL "report")
          list(APPEND breaches "${shown}: includes <${header}>: nlohmann/json only in config and report")
        elseif(header MATCHES "^(cuda|cublas|nccl|curand)")
          list(APPEND breaches "${shown}: includes <${header}>: no CUDA header in src/ (kernels/ and calibrate/ hold them)")
        endif()
      endif()
    endforeach()
  endforeach()
  # A declared edge no file of the module uses is a wrong picture of the house: drop it.
  foreach(dep IN LISTS MOESIM_DEPS_${module})
    if(files AND dep IN_LIST MOESIM_MODULES AND NOT dep IN_LIST used)
      list(APPEND breaches "CMakeLists.txt: ${module} declares DEPS ${dep} but includes nothing of it")
    endif()
  endforeach()
endforeach()

if(breaches)
  list(LENGTH breaches count)
  string(REPLACE ";" "\n  " text "${breaches}")
  message(FATAL_ERROR "module borders (src/README.md): ${count} wrong-way include(s):\n  ${text}\n"
                      "Move the code to a module both may use, or change the DEPS in CMakeLists.txt and the map.")
endif()
if(STAMP)
  file(TOUCH ${STAMP})
endif()
