# The Python wheel's part of the build (pyproject.toml builds it with scikit-build-core, which
# sets SKBUILD and installs the component `wheel` only): the kiln executable as kiln/bin/kiln,
# beside the pure-Python package python/kiln/ that scikit-build-core copies in itself. kiln
# carries its runtime's sources inside itself, so nothing else is needed.
#
# KILN_WHEEL_EXECUTABLE=FILE puts FILE, an already built kiln, in the wheel instead of
# building kiln again: a full build takes half an hour on two cores, so CI and the
# packaging.wheel test make the wheel from the build tree they have tested. The root
# CMakeLists.txt then configures nothing else.
set(KILN_WHEEL_EXECUTABLE "" CACHE FILEPATH "an already built kiln for the Python wheel (skips building kiln)")

if(KILN_WHEEL_EXECUTABLE)
  # pip runs the build in the source tree: a relative path is relative to it.
  file(REAL_PATH "${KILN_WHEEL_EXECUTABLE}" exe BASE_DIRECTORY "${CMAKE_SOURCE_DIR}")
  if(NOT EXISTS "${exe}" OR IS_DIRECTORY "${exe}")
    message(FATAL_ERROR "KILN_WHEEL_EXECUTABLE: no kiln executable at ${exe}")
  endif()
  # pyproject.toml builds the target kiln; here it only checks that the given kiln runs.
  add_custom_target(kiln COMMAND "${exe}" --version VERBATIM)
  install(PROGRAMS "${exe}" DESTINATION kiln/bin RENAME kiln COMPONENT wheel)
  # `cmake --install --strip` strips installed targets only; a build tree's kiln carries its
  # debug information (150 MB of the 160).
  install(CODE "if(CMAKE_INSTALL_DO_STRIP)
                  execute_process(COMMAND \"${CMAKE_STRIP}\" \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/kiln/bin/kiln\"
                                  COMMAND_ERROR_IS_FATAL ANY)
                endif()"
          COMPONENT wheel)
else()
  install(TARGETS kiln RUNTIME DESTINATION kiln/bin COMPONENT wheel)
endif()
