# moesim_embed_files(OUTPUT file.cpp BASE dir [FUNCTION name] FILES f1 f2 ...)
# Writes a C++ source defining moesim::embedded_files() (or moesim::<FUNCTION>()): every file's
# path relative to BASE and its bytes, so preset data and report assets ship inside the binary.
# Re-generated whenever a file changes.
function(moesim_embed_files)
  cmake_parse_arguments(ARG "" "OUTPUT;BASE;FUNCTION" "FILES" ${ARGN})
  if(NOT ARG_FUNCTION)
    set(ARG_FUNCTION embedded_files)
  endif()
  set(script ${PROJECT_SOURCE_DIR}/cmake/embed_files_run.cmake)
  list(JOIN ARG_FILES "|" joined)
  add_custom_command(
    OUTPUT ${ARG_OUTPUT}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${ARG_OUTPUT} -DBASE=${ARG_BASE} -DFUNCTION=${ARG_FUNCTION} "-DFILES=${joined}" -P ${script}
    DEPENDS ${ARG_FILES} ${script}
    COMMENT "Embedding data files into ${ARG_OUTPUT}"
    VERBATIM)
endfunction()
