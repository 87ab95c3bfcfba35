#===- run-consumer.cmake - the package acceptance steps (cmake -P) ---------===#
#
# -DSTEP=install   install the build into PREFIX.staging, then move it to
#                  PREFIX (the package is relocatable); the installed tools
#                  start without LD_LIBRARY_PATH
# -DSTEP=build     configure and build consumer/ against PREFIX with Ninja
#                  (checkpoints B and C copied into the build, built by
#                  qeff_add_model); the program compiles golden A and
#                  generates its greedy tokens; the artifact of B gives B's
# -DSTEP=rebuild   a second build does nothing; touching B's config.json or
#                  C's weights reruns exactly that model's compile; touching
#                  an unrelated file reruns nothing
#
#===----------------------------------------------------------------------===#
cmake_minimum_required(VERSION 3.20)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out
    ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " cmd "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${cmd}\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# The greedy tokens of row 0 of a golden, space-separated; its prompt ids.
function(golden dir)
  file(READ "${dir}/golden.json" json)
  foreach(key greedy_tokens prompt_ids)
    string(JSON n LENGTH "${json}" ${key} 0)
    math(EXPR last "${n} - 1")
    set(ids "")
    foreach(i RANGE ${last})
      string(JSON id GET "${json}" ${key} 0 ${i})
      list(APPEND ids ${id})
    endforeach()
    set(${key} "${ids}" PARENT_SCOPE)
  endforeach()
endfunction()

function(check_tokens checkpoint artifact golden_dir)
  golden(${golden_dir})
  list(LENGTH greedy_tokens n)
  run(${BINARY}/consumer ${checkpoint} ${artifact} ${n} ${prompt_ids})
  string(STRIP "${out}" out)
  string(REPLACE ";" " " want "${greedy_tokens}")
  if(NOT out STREQUAL want)
    message(FATAL_ERROR "${golden_dir}: generated '${out}', golden '${want}'")
  endif()
  message(STATUS "${golden_dir}: ${out} (equal to the golden)")
endfunction()

# Builds the consumer; `expected` lists the models whose compile must run
# ("none": nothing at all must run).
function(build_expect expected)
  run(${NINJA} -C ${BINARY})
  if(expected STREQUAL "none")
    if(NOT out MATCHES "ninja: no work to do")
      message(FATAL_ERROR "expected a no-op build, ninja ran:\n${out}")
    endif()
    return()
  endif()
  foreach(model b c)
    string(REGEX MATCHALL "qeff: compiling [^\n]*/checkpoints/${model} " hits "${out}")
    list(LENGTH hits count)
    if(model IN_LIST expected)
      set(want 1)
    else()
      set(want 0)
    endif()
    if(NOT count EQUAL want)
      message(FATAL_ERROR "expected ${want} compile(s) of model ${model}, ninja ran:\n${out}")
    endif()
  endforeach()
  string(REGEX MATCHALL "\n\\[[0-9]+/[0-9]+\\]" steps "\n${out}")
  list(LENGTH steps nsteps)
  list(LENGTH expected nexpected)
  if(NOT nsteps EQUAL nexpected)
    message(FATAL_ERROR "expected ${nexpected} build step(s), ninja ran:\n${out}")
  endif()
endfunction()

if(STEP STREQUAL "install")
  file(REMOVE_RECURSE ${PREFIX} ${PREFIX}.staging)
  run(${CMAKE_COMMAND} --install ${QEFF_BINARY_DIR} --prefix ${PREFIX}.staging)
  file(RENAME ${PREFIX}.staging ${PREFIX})
  foreach(tool qeff qeff-opt qeff-translate)
    run(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH ${PREFIX}/bin/${tool} --version)
    message(STATUS "${tool}: ${out}")
  endforeach()
  foreach(file include/qeff/runtime/Session.h include/qeff/runtime/Generator.h
          include/qeff/runtime/TokenConstraint.h
          include/qeff/compile/Compile.h lib/cmake/qeff/qeffConfig.cmake
          lib/cmake/qeff/qeffConfigVersion.cmake lib/cmake/qeff/QEffAddModel.cmake
          share/doc/qeff/LICENSE)
    if(NOT EXISTS ${PREFIX}/${file})
      message(FATAL_ERROR "not installed: ${file}")
    endif()
  endforeach()
  # The Python package (QEFF_PYTHON builds): importable from the moved
  # prefix by Debian's interpreter, from a directory of its own; it compiles
  # golden A and generates its greedy tokens, and finds the installed qeff.
  if(PYTHON_SITE)
    golden(${GOLDEN_a})
    string(REPLACE ";" "," prompt "${prompt_ids}")
    string(REPLACE ";" "," want "${greedy_tokens}")
    list(LENGTH greedy_tokens n)
    set(elsewhere ${PREFIX}-python-cwd)
    file(REMOVE_RECURSE ${elsewhere})
    file(MAKE_DIRECTORY ${elsewhere})
    execute_process(
      COMMAND ${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH --unset=QEFF_EXECUTABLE
              PYTHONPATH=${PREFIX}/${PYTHON_SITE} ${PYTHON} -c
              "import os, qeff, qeff.auto, qeff._cards as c
assert qeff.__file__.startswith('${PREFIX}/'), qeff.__file__
assert c.qeff_executable() == os.path.normpath('${PREFIX}/bin/qeff'), c.qeff_executable()
a = qeff.compile('${GOLDEN_a}', 'a.qeff', ctx_len=32, prefill_seq_len=4)
ids = qeff.Session(a).generate([${prompt}], max_new_tokens=${n}).ids
assert ids == [${want}], ids
print(qeff.__version__)"
      WORKING_DIRECTORY ${elsewhere} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "the installed Python package failed:\n${out}")
    endif()
    message(STATUS "python: qeff ${out}")
  endif()
  # Relocatable: nothing installed names the build tree or the prefix.
  file(GLOB_RECURSE cmake_files ${PREFIX}/lib/cmake/qeff/*.cmake)
  foreach(file ${cmake_files})
    file(READ ${file} text)
    foreach(path ${QEFF_BINARY_DIR} ${QEFF_SOURCE_DIR} ${PREFIX})
      string(FIND "${text}" "${path}" at)
      if(NOT at EQUAL -1)
        message(FATAL_ERROR "${file} names ${path}")
      endif()
    endforeach()
  endforeach()
elseif(STEP STREQUAL "build")
  file(REMOVE_RECURSE ${BINARY})
  foreach(model b c)
    file(COPY ${GOLDEN_${model}}/config.json ${GOLDEN_${model}}/generation_config.json
         ${GOLDEN_${model}}/model.safetensors DESTINATION ${BINARY}/checkpoints/${model})
    file(WRITE ${BINARY}/checkpoints/${model}/README.txt "not read by the compile\n")
  endforeach()
  run(${CMAKE_COMMAND} -G Ninja -S ${SOURCE} -B ${BINARY}
      -DCMAKE_MAKE_PROGRAM=${NINJA} -DCMAKE_CXX_COMPILER=${CXX}
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}
      -Dqeff_DIR=${PREFIX}/lib/cmake/qeff
      -DQEFF_MODEL_B=${BINARY}/checkpoints/b -DQEFF_MODEL_C=${BINARY}/checkpoints/c)
  run(${NINJA} -C ${BINARY})
  foreach(model b c)
    if(NOT out MATCHES "qeff: compiling [^\n]*/checkpoints/${model} ")
      message(FATAL_ERROR "the build did not compile model ${model}:\n${out}")
    endif()
  endforeach()
  check_tokens(${GOLDEN_a} ${BINARY}/a.qeff ${GOLDEN_a})
  check_tokens(- ${BINARY}/models/b ${GOLDEN_b})
  check_tokens(- ${BINARY}/models/c ${GOLDEN_c})
elseif(STEP STREQUAL "rebuild")
  build_expect(none)
  file(TOUCH ${BINARY}/checkpoints/b/config.json)
  build_expect(b)
  build_expect(none)
  file(TOUCH ${BINARY}/checkpoints/c/model.safetensors)
  build_expect(c)
  file(TOUCH ${BINARY}/checkpoints/b/README.txt ${BINARY}/unrelated.txt)
  build_expect(none)
else()
  message(FATAL_ERROR "STEP must be install, build or rebuild")
endif()
