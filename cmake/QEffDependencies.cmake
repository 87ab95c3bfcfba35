#===- QEffDependencies.cmake - external packages ---------------------------===#
#
# Every dependency is a Debian 12 package (scripts/install-deps.sh installs them).
#
#===----------------------------------------------------------------------===#

# MLIR/LLVM 19 from Debian keep their CMake configs outside CMake's default path.
if(NOT MLIR_DIR AND EXISTS /usr/lib/llvm-19/lib/cmake/mlir)
  set(MLIR_DIR /usr/lib/llvm-19/lib/cmake/mlir)
endif()
find_package(MLIR REQUIRED CONFIG)
if(NOT LLVM_VERSION_MAJOR EQUAL 19)
  message(FATAL_ERROR "qeff needs MLIR 19, found ${LLVM_PACKAGE_VERSION} at ${MLIR_DIR}")
endif()
message(STATUS "qeff: MLIR ${LLVM_PACKAGE_VERSION} from ${MLIR_DIR}")

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
# LLVM's tablegen() writes its depfiles with paths relative to the top build
# directory, as Ninja reads them untransformed (CMP0116 OLD, which LLVM's own
# build sets). With NEW, CMake re-roots them at the current binary directory
# (build/dialects/QEff/dialects/QEff/...), every tablegen step looks out of
# date and a no-op build re-runs them all. Functions keep the policies of
# their definition, so the modules are included under OLD.
cmake_policy(PUSH)
cmake_policy(SET CMP0116 OLD)
include(TableGen)
include(AddLLVM)
include(AddMLIR)
cmake_policy(POP)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
separate_arguments(QEFF_LLVM_DEFINITIONS NATIVE_COMMAND ${LLVM_DEFINITIONS})
add_definitions(${QEFF_LLVM_DEFINITIONS})

# FileCheck, not, count and lit as Debian ships them.
set(QEFF_LLVM_TOOLS_DIR "${LLVM_TOOLS_BINARY_DIR}" CACHE PATH
    "Directory holding FileCheck, not and count")
if(NOT LLVM_EXTERNAL_LIT)
  set(LLVM_EXTERNAL_LIT "${LLVM_TOOLS_BINARY_DIR}/../build/utils/lit/lit.py")
endif()
# Debian's interpreter, not a PATH-first one without Debian's packages.
if(NOT Python3_EXECUTABLE AND EXISTS /usr/bin/python3)
  set(Python3_EXECUTABLE /usr/bin/python3)
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter)

find_package(nlohmann_json 3 REQUIRED)
find_package(absl REQUIRED CONFIG)
find_package(GTest REQUIRED)
find_package(Threads REQUIRED)

# Fast linker and compiler cache when the machine has them.
find_program(QEFF_LLD NAMES ld.lld-19 ld.lld)
if(QEFF_LLD AND CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  add_link_options(-fuse-ld=lld)
endif()
find_program(QEFF_CCACHE ccache)
if(QEFF_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_C_COMPILER_LAUNCHER ${QEFF_CCACHE})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${QEFF_CCACHE})
endif()

# ONNX 1.12 and protobuf: used by the exporter and the host runtime. These targets
# need exceptions; keep them out of MLIR-linked (-fno-exceptions) libraries.
find_package(Protobuf REQUIRED)
find_package(ONNX REQUIRED CONFIG)
find_package(BLAS REQUIRED)

# Node.js runs the ONNX Runtime oracle of the tests (scripts/setup-oracle.sh
# installs it and onnxruntime-node); found here so every test directory sees it.
find_program(QEFF_NODE_EXECUTABLE node)
set(QEFF_ORACLE_RUN ${PROJECT_SOURCE_DIR}/test/oracle/run-onnx.js CACHE INTERNAL
    "ONNX Runtime oracle script")

# The Cloud AI 100 Platform SDK (optional): the qaic device is built only with it.
include(QEffQaicSdk)
