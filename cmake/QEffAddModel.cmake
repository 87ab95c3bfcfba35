#===- QEffAddModel.cmake - qeff_add_model() ---------------------------------===#
#
#   qeff_add_model(<target> CHECKPOINT <dir> OUTPUT <dir>
#                  [CTX_LEN n] [PREFILL_SEQ_LEN n] [FULL_BATCH_SIZE n]
#                  [OPTIONS <qeff compile flag>...])
#
# Adds a custom target <target> (built by default) compiling the Hugging Face
# checkpoint CHECKPOINT into the artifact directory OUTPUT (relative paths:
# to the current source and binary directory) with `qeff compile`. The
# compile writes a depfile of every file it read (`qeff compile --depfile`),
# so Ninja and Makefiles rerun it exactly when one of them (config, weights,
# index, tokenizer, generation config, chat template, fp32-scopes file) or
# the qeff tool changes. The target's property QEFF_ARTIFACT_DIR holds the
# absolute OUTPUT; the artifact's stamp is OUTPUT/qeff-manifest.json.
#
#===----------------------------------------------------------------------===#

# Functions record the policies in force where they are defined: depfiles
# are transformed for the generator (CMP0116) whatever the caller's version.
cmake_policy(PUSH)
cmake_policy(VERSION 3.20...3.28)

function(qeff_add_model target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG ""
    "CHECKPOINT;OUTPUT;CTX_LEN;PREFILL_SEQ_LEN;FULL_BATCH_SIZE" "OPTIONS")
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "qeff_add_model(${target}): unknown arguments "
      "'${ARG_UNPARSED_ARGUMENTS}'")
  endif()
  foreach(required CHECKPOINT OUTPUT)
    if(NOT ARG_${required})
      message(FATAL_ERROR "qeff_add_model(${target}): ${required} <dir> is required")
    endif()
  endforeach()
  foreach(option IN LISTS ARG_OPTIONS)
    if(option MATCHES "^(-o|--?emit|--?depfile)(=|$)")
      message(FATAL_ERROR "qeff_add_model(${target}): OPTIONS must not set "
        "'${option}' (the function sets the output, the emit kind and the depfile)")
    endif()
  endforeach()
  if(NOT TARGET qeff::qeff)
    message(FATAL_ERROR "qeff_add_model(${target}): the imported target "
      "qeff::qeff is missing (use find_package(qeff CONFIG REQUIRED))")
  endif()

  get_filename_component(checkpoint "${ARG_CHECKPOINT}" ABSOLUTE
    BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  get_filename_component(output "${ARG_OUTPUT}" ABSOLUTE
    BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  if(NOT EXISTS "${checkpoint}/config.json")
    message(FATAL_ERROR "qeff_add_model(${target}): CHECKPOINT '${checkpoint}' "
      "has no config.json")
  endif()

  set(args compile "${checkpoint}" -o "${output}")
  foreach(pair CTX_LEN:--ctx-len PREFILL_SEQ_LEN:--prefill-seq-len
               FULL_BATCH_SIZE:--full-batch-size)
    string(REPLACE ":" ";" pair "${pair}")
    list(GET pair 0 key)
    list(GET pair 1 flag)
    if(DEFINED ARG_${key})
      if(NOT ARG_${key} MATCHES "^[1-9][0-9]*$")
        message(FATAL_ERROR "qeff_add_model(${target}): ${key} must be a "
          "positive integer, got '${ARG_${key}}'")
      endif()
      list(APPEND args "${flag}=${ARG_${key}}")
    endif()
  endforeach()

  set(stamp "${output}/qeff-manifest.json")
  set(depfile "${CMAKE_CURRENT_BINARY_DIR}/CMakeFiles/${target}.qeff.d")
  add_custom_command(OUTPUT "${stamp}"
    COMMAND qeff::qeff ${args} ${ARG_OPTIONS} --depfile "${depfile}"
    DEPENDS qeff::qeff "${checkpoint}/config.json"
    DEPFILE "${depfile}"
    COMMENT "qeff: compiling ${ARG_CHECKPOINT} -> ${output}"
    VERBATIM)
  add_custom_target(${target} ALL DEPENDS "${stamp}")
  set_target_properties(${target} PROPERTIES QEFF_ARTIFACT_DIR "${output}")
endfunction()

cmake_policy(POP)
