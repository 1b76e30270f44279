# kiln_add_model(): compile a model with kiln at build time and link it like a library.
#
#   kiln_add_model(<target> MODEL <file>
#                  [NAME <name>]                 # C API prefix (default: <target>)
#                  [PRECISION <precision>]       # fp32 fp16 bf16 int8 int8-dynamic
#                  [CALIBRATION <dir>]           # sample inputs for int8
#                  [DIMS <symbol>=<value> ...]   # values of symbolic dims
#                  [INPUT_SHAPES <spec> ...]     # [NAME=]D0,D1,...[:DTYPE] (TorchScript)
#                  [OPTIONS <kiln compile argument> ...])
#
# Runs `kiln compile --emit lib` into ${CMAKE_CURRENT_BINARY_DIR}/kiln_models/<target>/ and
# makes <target> an INTERFACE library: linking it gives the model's header (<name>.h) on the
# include path and libNAME.a with what it needs (the C++ standard library, libm, threads),
# from C as well as from C++. kiln re-runs only when the model, the calibration samples, the
# kiln executable or the arguments change: the arguments are kept in a file that is rewritten
# at configure time only when they differ, and the compile depends on that file.
#
# The kiln used is the target kiln::kiln: the imported executable of find_package(kiln), or
# kiln's own target when kiln's source tree is added with add_subdirectory().
# kiln caches its compiled runtime in $KILN_CACHE_DIR (default ~/.cache/kiln), read from the
# environment of the build.
include_guard(GLOBAL)

function(kiln_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "MODEL;NAME;PRECISION;CALIBRATION" "DIMS;INPUT_SHAPES;OPTIONS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "kiln_add_model(${target}): unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_MODEL)
    message(FATAL_ERROR "kiln_add_model(${target}): MODEL <file> is required")
  endif()
  if(NOT TARGET kiln::kiln)
    message(FATAL_ERROR "kiln_add_model(${target}): no kiln::kiln target; use find_package(kiln CONFIG REQUIRED) "
                        "or add_subdirectory() of kiln's source tree first")
  endif()

  get_filename_component(model "${arg_MODEL}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(NOT EXISTS "${model}")
    message(FATAL_ERROR "kiln_add_model(${target}): MODEL ${model} does not exist")
  endif()
  set(name "${target}")
  if(arg_NAME)
    set(name "${arg_NAME}")
  endif()
  # kiln would turn other characters into '_'; the outputs' names must be known here.
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "kiln_add_model(${target}): '${name}' is not a C identifier; give NAME <identifier>")
  endif()

  set(dir "${CMAKE_CURRENT_BINARY_DIR}/kiln_models")
  set(out "${dir}/${target}")  # replaced whole by every compile: nothing else lives there
  set(library "${out}/lib${name}.a")
  set(header "${out}/${name}.h")

  set(args compile "${model}" -o "${out}" --emit lib --name "${name}")
  set(depends "${model}")
  if(arg_PRECISION)
    list(APPEND args --precision "${arg_PRECISION}")
  endif()
  if(arg_CALIBRATION)
    get_filename_component(calibration "${arg_CALIBRATION}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args --calibration "${calibration}")
    file(GLOB_RECURSE samples CONFIGURE_DEPENDS "${calibration}/*")
    list(APPEND depends ${samples})
  endif()
  foreach(dim IN LISTS arg_DIMS)
    list(APPEND args --dim "${dim}")
  endforeach()
  foreach(shape IN LISTS arg_INPUT_SHAPES)
    list(APPEND args --input-shape "${shape}")
  endforeach()
  list(APPEND args ${arg_OPTIONS})

  # The arguments as a file the compile depends on: a changed flag re-runs kiln with any
  # generator (Ninja would notice the changed command; Makefiles would not).
  set(flags_file "${dir}/${target}.args")
  string(REPLACE ";" "\n" flags_text "${args}\n")
  set(old_flags "")
  if(EXISTS "${flags_file}")
    file(READ "${flags_file}" old_flags)
  endif()
  if(NOT old_flags STREQUAL flags_text)
    file(WRITE "${flags_file}" "${flags_text}")
  endif()

  add_custom_command(
    OUTPUT "${library}" "${header}" "${out}/${name}.pc"
    COMMAND kiln::kiln ${args}
    DEPENDS ${depends} "${flags_file}" kiln::kiln "$<TARGET_FILE:kiln::kiln>"
    COMMENT "kiln: compiling ${arg_MODEL} into lib${name}.a"
    VERBATIM)
  add_custom_target(${target}_kiln DEPENDS "${library}" "${header}")

  find_package(Threads REQUIRED)
  add_library(${target} INTERFACE)
  add_dependencies(${target} ${target}_kiln)
  target_include_directories(${target} INTERFACE "${out}")
  # libNAME.a holds kiln's runtime, which is C++: a C program links the C++ library too.
  target_link_libraries(${target} INTERFACE "${library}" stdc++ m Threads::Threads)
  set_target_properties(${target} PROPERTIES KILN_MODEL "${model}" KILN_NAME "${name}" KILN_OUTPUT_DIR "${out}")
endfunction()
