# The HTML reports inline Apache ECharts (pinned in package.json / package-lock.json) so that a
# report opens offline. This finds echarts.min.js at configure time:
#   1. MOESIM_ECHARTS_JS, if set;
#   2. node_modules/ of the source tree (after `npm ci` at the repository root), if its version is the pinned one;
#   3. otherwise `npm ci` into <build>/npm/ (npm from Debian's `npm` package; .ci/setup installs it).
# Without npm or the package the build still succeeds: the binary then refuses to write HTML with a
# message saying how to get ECharts (report/report_assets.cpp). Sets MOESIM_ECHARTS_FILE ("" if none)
# and MOESIM_ECHARTS_VERSION.
option(MOESIM_USE_NPM "Run npm ci at configure time when ECharts is not found (OFF: offline builds)" ON)
set(MOESIM_ECHARTS_JS "" CACHE FILEPATH "echarts.min.js to inline into HTML reports (empty: found or installed with npm ci)")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${PROJECT_SOURCE_DIR}/package.json ${PROJECT_SOURCE_DIR}/package-lock.json)

file(READ ${PROJECT_SOURCE_DIR}/package-lock.json _lock)
string(JSON MOESIM_ECHARTS_VERSION GET "${_lock}" packages node_modules/echarts version)

# The version of the echarts package installed under `root`, or "" when absent.
function(_moesim_installed_echarts root out)
  set(version "")
  if(EXISTS ${root}/node_modules/echarts/package.json AND EXISTS ${root}/node_modules/echarts/dist/echarts.min.js)
    file(READ ${root}/node_modules/echarts/package.json pkg)
    string(JSON version ERROR_VARIABLE err GET "${pkg}" version)
  endif()
  set(${out} "${version}" PARENT_SCOPE)
endfunction()

set(MOESIM_ECHARTS_FILE "")
if(MOESIM_ECHARTS_JS)
  if(NOT EXISTS ${MOESIM_ECHARTS_JS})
    message(FATAL_ERROR "MOESIM_ECHARTS_JS=${MOESIM_ECHARTS_JS} does not exist")
  endif()
  set(MOESIM_ECHARTS_FILE ${MOESIM_ECHARTS_JS})
else()
  _moesim_installed_echarts(${PROJECT_SOURCE_DIR} _v)
  if(_v STREQUAL MOESIM_ECHARTS_VERSION)
    set(MOESIM_ECHARTS_FILE ${PROJECT_SOURCE_DIR}/node_modules/echarts/dist/echarts.min.js)
  else()
    set(_npm_dir ${PROJECT_BINARY_DIR}/npm)
    _moesim_installed_echarts(${_npm_dir} _v)
    if(MOESIM_USE_NPM AND NOT _v STREQUAL MOESIM_ECHARTS_VERSION)
      find_program(MOESIM_NPM npm)
      if(MOESIM_NPM)
        file(MAKE_DIRECTORY ${_npm_dir})
        file(COPY ${PROJECT_SOURCE_DIR}/package.json ${PROJECT_SOURCE_DIR}/package-lock.json DESTINATION ${_npm_dir})
        message(STATUS "Installing echarts ${MOESIM_ECHARTS_VERSION} with npm ci into ${_npm_dir}")
        execute_process(COMMAND ${MOESIM_NPM} ci --ignore-scripts --no-audit --no-fund
                        WORKING_DIRECTORY ${_npm_dir} RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_VARIABLE _err)
        if(NOT _rc EQUAL 0)
          message(WARNING "npm ci failed (${_rc}); HTML reports will be unavailable:\n${_err}")
        endif()
        _moesim_installed_echarts(${_npm_dir} _v)
      endif()
    endif()
    if(_v STREQUAL MOESIM_ECHARTS_VERSION)
      set(MOESIM_ECHARTS_FILE ${_npm_dir}/node_modules/echarts/dist/echarts.min.js)
    endif()
  endif()
endif()
if(MOESIM_ECHARTS_FILE)
  message(STATUS "HTML reports inline ${MOESIM_ECHARTS_FILE}")
else()
  message(WARNING "echarts ${MOESIM_ECHARTS_VERSION} not found and npm unavailable: moesim will build, but writing "
                  "HTML reports will fail. Install npm (Debian package `npm`) and re-run cmake, or set MOESIM_ECHARTS_JS.")
endif()

# Two generated sources: editing the report's own script does not recompile the 1 MB of ECharts.
file(GLOB MOESIM_REPORT_ASSET_FILES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/reports/assets/*)
moesim_embed_files(OUTPUT ${PROJECT_BINARY_DIR}/generated/report_assets.cpp BASE ${PROJECT_SOURCE_DIR}
                   FUNCTION report_assets FILES ${MOESIM_REPORT_ASSET_FILES})
moesim_embed_files(OUTPUT ${PROJECT_BINARY_DIR}/generated/report_vendor_assets.cpp BASE ${PROJECT_SOURCE_DIR}
                   FUNCTION report_vendor_assets FILES ${MOESIM_ECHARTS_FILE})
add_library(moesim_report_assets STATIC ${PROJECT_BINARY_DIR}/generated/report_assets.cpp
                                        ${PROJECT_BINARY_DIR}/generated/report_vendor_assets.cpp)
target_link_libraries(moesim_report_assets PUBLIC moesim_core)
