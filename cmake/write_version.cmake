# Writes peerlink/version.hpp with the project version and the current git commit (script mode:
# cmake -DSOURCE_DIR=... -DOUTPUT=... -DVERSION=... -P write_version.cmake). Leaves the file untouched
# when nothing changed, so builds stay incremental.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
execute_process(COMMAND git status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE_DIR}
                OUTPUT_VARIABLE dirty OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT commit)
  set(commit "unknown")
elseif(dirty)
  string(APPEND commit "-dirty")
endif()
set(PROJECT_VERSION ${VERSION})
set(PEERLINK_GIT_COMMIT ${commit})
configure_file(${CMAKE_CURRENT_LIST_DIR}/version.hpp.in ${OUTPUT}.tmp @ONLY)
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
