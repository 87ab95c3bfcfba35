#===- QEffInstall.cmake - `cmake --install` and the qeff CMake package -----===#
#
# Installs, relative to the prefix (nothing in the installed files names the
# build tree or the prefix itself, so the tree can be moved):
#   bin/                    qeff, qeff-opt, qeff-translate (run path to the
#                           MLIR/LLVM libraries they link, kept at install)
#   include/qeff/runtime/   Session.h, Tensor.h, Result.h, Generator.h,
#                           DeviceSampler.h, Speculative.h, TokenConstraint.h
#   include/qeff/compile/   Compile.h: checkpoint + options -> artifact dir
#   lib/                    the static libraries behind qeff::runtime and
#                           qeff::compile
#   lib/cmake/qeff/         qeffConfig.cmake, qeffConfigVersion.cmake,
#                           qeffTargets.cmake, QEffAddModel.cmake
#   share/doc/qeff/         LICENSE
# Imported targets: qeff::runtime, qeff::compile (static libraries carrying
# their dependencies: MLIR, ONNX, protobuf, Abseil, ... found again by
# find_dependency in qeffConfig.cmake), qeff::qeff, qeff::qeff-opt,
# qeff::qeff-translate; and the function qeff_add_model().
#
#===----------------------------------------------------------------------===#

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(QEFF_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/qeff")

# qeff::runtime: the Session and the generation loop over it.
add_library(QEffRuntimeAPI INTERFACE)
target_link_libraries(QEffRuntimeAPI INTERFACE QEffRuntime QEffGeneration)
set_target_properties(QEffRuntimeAPI PROPERTIES EXPORT_NAME runtime)
add_library(qeff::runtime ALIAS QEffRuntimeAPI)
set_target_properties(QEffCompile PROPERTIES EXPORT_NAME compile)
add_library(qeff::compile ALIAS QEffCompile)
# A sanitizer build's libraries call into the ASan/UBSan runtime: a program
# linking them must link that runtime too (test/package in build-sanitize).
if(QEFF_SANITIZE OR QEFF_FUZZ)
  target_link_options(QEffRuntimeAPI INTERFACE
    $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
  target_link_options(QEffCompile INTERFACE
    $<INSTALL_INTERFACE:-fsanitize=address,undefined>)
endif()

# Every library in the link closure of the two (CMake refuses to export a
# target whose dependency is not exported).
set(QEFF_INSTALLED_LIBRARIES
  QEffRuntimeAPI QEffCompile
  QEffSupport QEffRuntimeCore QEffHostDevice QEffRuntime QEffGeneration
  QEffTokenizer QEffHFCheckpoint QEffQuant QEffGGUF QEffHFImporters QEffDialect
  QEffONNXDialect
  QEffPatterns QEffToONNX QEffExportConversion QEffONNXCheck QEffONNXExport
  QEffCompileDriver QEffDiagnosticPrinter)
if(QEFF_HAVE_QAIC)
  list(APPEND QEFF_INSTALLED_LIBRARIES QEffQaicDevice)
endif()
install(TARGETS ${QEFF_INSTALLED_LIBRARIES} EXPORT qeffTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

install(FILES
    ${PROJECT_SOURCE_DIR}/runtime/include/qeff/runtime/Result.h
    ${PROJECT_SOURCE_DIR}/runtime/include/qeff/runtime/Session.h
    ${PROJECT_SOURCE_DIR}/runtime/include/qeff/runtime/Tensor.h
    ${PROJECT_SOURCE_DIR}/runtime/generation/Generator.h
    ${PROJECT_SOURCE_DIR}/runtime/generation/DeviceSampler.h
    ${PROJECT_SOURCE_DIR}/runtime/generation/Speculative.h
    ${PROJECT_SOURCE_DIR}/runtime/generation/TokenConstraint.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/qeff/runtime)
install(FILES ${PROJECT_SOURCE_DIR}/lowering/API/include/qeff/compile/Compile.h
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/qeff/compile)

install(EXPORT qeffTargets NAMESPACE qeff:: DESTINATION ${QEFF_INSTALL_CMAKEDIR})

# The dependencies qeffConfig.cmake finds again: MLIR by the directory this
# build used (Debian keeps it off CMake's default path).
set(QEFF_PACKAGE_MLIR_DIR "${MLIR_DIR}")
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/qeffConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/qeffConfig.cmake
  INSTALL_DESTINATION ${QEFF_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
# 0.x: a minor version may break the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/qeffConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES
    ${PROJECT_BINARY_DIR}/package/qeffConfig.cmake
    ${PROJECT_BINARY_DIR}/package/qeffConfigVersion.cmake
    ${CMAKE_CURRENT_LIST_DIR}/QEffAddModel.cmake
  DESTINATION ${QEFF_INSTALL_CMAKEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR})
