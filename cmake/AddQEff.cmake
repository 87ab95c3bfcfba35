#===- AddQEff.cmake - the project's thin CMake wrappers --------------------===#
#
# The conventions live here, once:
#   add_qeff_dialect(<Dialect> <mnemonic> [REWRITES <td name>...])
#                                            ODS (+ DRR) -> .inc files + <Dialect>IncGen
#   add_qeff_doc(<td> <out> <tblgen flags>)  generated Markdown under build/docs
#   add_qeff_library(<name> SRCS... [MLIR] [DEPENDS ...] [LINK_LIBS ...])
#   add_qeff_tool(<name> SRCS... [LINK_LIBS ...])
#   add_qeff_unittest(<name> SRCS... [LINK_LIBS ...])
#   qeff_watch_directories(<dir> [EXCLUDE <regex>])  re-run CMake when a file
#                                            is added to or removed from <dir>
#
# MLIR-linked code links the single libMLIR.so (never the static libMLIR*.a) and is
# built without exceptions like MLIR itself. Plain C++ libraries (ONNX, protobuf,
# runtime) keep exceptions and must not link MLIR.
#
#===----------------------------------------------------------------------===#

set(QEFF_DOCS_DIR "${PROJECT_BINARY_DIR}/docs" CACHE INTERNAL "")
add_custom_target(qeff-doc ALL)

# ODS of a dialect: <Dialect>Ops.td holding the dialect and its ops. REWRITES
# names more TableGen files of declarative rewrite patterns (DRR), <name>.td
# each generated into <name>.inc in the same <Dialect>IncGen target: the
# dialect's canonicalization patterns (<Dialect>Canonicalize.td, included by
# the .cpp defining getCanonicalizationPatterns).
function(add_qeff_dialect dialect dialect_namespace)
  cmake_parse_arguments(ARG "" "" "REWRITES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "add_qeff_dialect(${dialect}): unknown arguments "
      "'${ARG_UNPARSED_ARGUMENTS}'")
  endif()
  foreach(rewrites IN LISTS ARG_REWRITES)
    set(LLVM_TARGET_DEFINITIONS ${rewrites}.td)
    mlir_tablegen(${rewrites}.inc -gen-rewriters)
  endforeach()
  set(LLVM_TARGET_DEFINITIONS ${dialect}Ops.td)
  mlir_tablegen(${dialect}Ops.h.inc -gen-op-decls)
  mlir_tablegen(${dialect}Ops.cpp.inc -gen-op-defs)
  mlir_tablegen(${dialect}Dialect.h.inc -gen-dialect-decls -dialect=${dialect_namespace})
  mlir_tablegen(${dialect}Dialect.cpp.inc -gen-dialect-defs -dialect=${dialect_namespace})
  mlir_tablegen(${dialect}Attrs.h.inc -gen-attrdef-decls -attrdefs-dialect=${dialect_namespace})
  mlir_tablegen(${dialect}Attrs.cpp.inc -gen-attrdef-defs -attrdefs-dialect=${dialect_namespace})
  mlir_tablegen(${dialect}Enums.h.inc -gen-enum-decls)
  mlir_tablegen(${dialect}Enums.cpp.inc -gen-enum-defs)
  add_public_tablegen_target(${dialect}IncGen)
  add_qeff_doc(${dialect}Ops ${dialect} -gen-dialect-doc -dialect=${dialect_namespace})
endfunction()

# Markdown reference generated from ODS into ${QEFF_DOCS_DIR}/dialects/<out>.md.
function(add_qeff_doc td_file out_name)
  set(LLVM_TARGET_DEFINITIONS ${td_file}.td)
  tablegen(MLIR ${out_name}.md ${ARGN})
  set(doc_file ${QEFF_DOCS_DIR}/dialects/${out_name}.md)
  add_custom_command(OUTPUT ${doc_file}
    COMMAND ${CMAKE_COMMAND} -E copy ${CMAKE_CURRENT_BINARY_DIR}/${out_name}.md ${doc_file}
    DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/${out_name}.md)
  add_custom_target(${out_name}DocGen DEPENDS ${doc_file})
  add_dependencies(qeff-doc ${out_name}DocGen)
endfunction()

function(_qeff_mlir_settings target)
  target_compile_options(${target} PRIVATE -fno-exceptions -fno-strict-aliasing)
  target_link_libraries(${target} PRIVATE MLIR LLVM)
  if(QEFF_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    target_precompile_headers(${target} REUSE_FROM qeff_mlir_pch)
  endif()
endfunction()

# A library of this project. MLIR marks it as MLIR-linked.
function(add_qeff_library name)
  cmake_parse_arguments(ARG "MLIR" "" "SRCS;DEPENDS;LINK_LIBS;PUBLIC_LINK_LIBS" ${ARGN})
  add_library(${name} STATIC ${ARG_SRCS} ${ARG_UNPARSED_ARGUMENTS})
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(ARG_MLIR)
    _qeff_mlir_settings(${name})
    target_link_libraries(${name} PUBLIC MLIR LLVM)
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_LINK_LIBS} PUBLIC ${ARG_PUBLIC_LINK_LIBS})
endfunction()

# A command-line tool, installed into bin/ and exported as qeff::<name>.
function(add_qeff_tool name)
  cmake_parse_arguments(ARG "MLIR" "" "SRCS;DEPENDS;LINK_LIBS" ${ARGN})
  add_executable(${name} ${ARG_SRCS} ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(ARG_MLIR)
    _qeff_mlir_settings(${name})
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_LINK_LIBS})
  install(TARGETS ${name} EXPORT qeffTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()

# A GoogleTest binary, registered with ctest test by test.
function(add_qeff_unittest name)
  cmake_parse_arguments(ARG "MLIR" "" "SRCS;LINK_LIBS" ${ARGN})
  add_executable(${name} ${ARG_SRCS} ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/unittests)
  if(ARG_MLIR)
    _qeff_mlir_settings(${name})
  endif()
  target_link_libraries(${name} PRIVATE ${ARG_LINK_LIBS} GTest::gtest GTest::gtest_main)
  add_dependencies(qeff-unittests ${name})
  gtest_discover_tests(${name} DISCOVERY_MODE PRE_TEST
    PROPERTIES LABELS unit
    EXTRA_ARGS --gtest_brief=1)
endfunction()

# Globs of test files are re-read when CMake re-runs; this makes CMake re-run
# when a file or directory is added to or removed from <dir> or a directory
# below it (that changes the directory's modification time, which the build
# system checks like any configure dependency). Unlike file(GLOB
# CONFIGURE_DEPENDS), which re-checks its glob on every build, a no-op build
# then runs no command at all. EXCLUDE: a regex of paths relative to <dir>
# whose directories are not watched.
function(qeff_watch_directories dir)
  cmake_parse_arguments(ARG "" "EXCLUDE" "" ${ARGN})
  file(GLOB_RECURSE entries LIST_DIRECTORIES true RELATIVE ${dir} ${dir}/*)
  set(watched ${dir})
  foreach(entry IN LISTS entries)
    if(IS_DIRECTORY ${dir}/${entry} AND
       NOT (ARG_EXCLUDE AND entry MATCHES "${ARG_EXCLUDE}"))
      list(APPEND watched ${dir}/${entry})
    endif()
  endforeach()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${watched})
endfunction()

add_custom_target(qeff-unittests)
include(GoogleTest)

# One precompiled header of the MLIR headers nearly every MLIR-linked file includes
# (clang only: g++ PCH barely helps).
option(QEFF_PCH "Precompile the common MLIR headers (clang)" ON)
if(QEFF_PCH AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  add_library(qeff_mlir_pch OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch.cpp)
  # No timestamps in the .pch: a rebuilt header is then byte-identical and
  # ccache (which hashes it) hits for every file using it.
  target_compile_options(qeff_mlir_pch PRIVATE -fno-exceptions -fno-strict-aliasing
                         -Xclang -fno-pch-timestamp)
  target_precompile_headers(qeff_mlir_pch PRIVATE
    <mlir/IR/Builders.h>
    <mlir/IR/BuiltinAttributes.h>
    <mlir/IR/BuiltinTypes.h>
    <mlir/IR/Dialect.h>
    <mlir/IR/DialectImplementation.h>
    <mlir/IR/OpDefinition.h>
    <mlir/IR/OpImplementation.h>
    <mlir/IR/PatternMatch.h>
    <mlir/Interfaces/InferTypeOpInterface.h>
    <mlir/Interfaces/SideEffectInterfaces.h>
    <mlir/Pass/Pass.h>
    <mlir/Support/LogicalResult.h>
    <llvm/ADT/STLExtras.h>
    <llvm/ADT/SmallVector.h>
    <llvm/ADT/StringRef.h>)
endif()
