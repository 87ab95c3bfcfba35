#===- QEffQaicSdk.cmake - the Cloud AI 100 Platform SDK, when installed ----===#
#
# The qaic device (runtime/qaic) is built only when the Platform SDK's runtime
# is found: its C++ API header QAicApi.hpp in <sdk>/dev/inc and libQAic.so in
# <sdk>/dev/lib/<arch> (the layout the SDK's own examples compile against).
# Sets QEFF_HAVE_QAIC, QEFF_QAIC_INCLUDE_DIR, QEFF_QAIC_LIBRARY, and
# QEFF_QAIC_PROBE: one sentence saying what was probed and found (or not),
# which the tools repeat when --device=qaic is asked for.
#
#===----------------------------------------------------------------------===#

set(QEFF_QAIC_SDK_DIR "/opt/qti-aic" CACHE PATH
    "Cloud AI 100 Platform SDK root (dev/inc/QAicApi.hpp, dev/lib/<arch>/libQAic.so)")
option(QEFF_QAIC "Build the qaic device when the Platform SDK is found" ON)

set(_qeff_qaic_header "${QEFF_QAIC_SDK_DIR}/dev/inc/QAicApi.hpp")
set(_qeff_qaic_libdir "${QEFF_QAIC_SDK_DIR}/dev/lib/${CMAKE_SYSTEM_PROCESSOR}")
unset(QEFF_QAIC_LIBRARY CACHE)
find_library(QEFF_QAIC_LIBRARY NAMES QAic PATHS "${_qeff_qaic_libdir}" NO_DEFAULT_PATH)
mark_as_advanced(QEFF_QAIC_LIBRARY)

set(QEFF_HAVE_QAIC OFF)
if(NOT QEFF_QAIC)
  set(QEFF_QAIC_PROBE "the qaic device was disabled at configure time (-DQEFF_QAIC=OFF)")
elseif(NOT EXISTS "${_qeff_qaic_header}")
  set(QEFF_QAIC_PROBE "no Cloud AI 100 Platform SDK was found at configure time: "
      "${_qeff_qaic_header} does not exist (set QEFF_QAIC_SDK_DIR to the SDK root)")
elseif(NOT QEFF_QAIC_LIBRARY)
  set(QEFF_QAIC_PROBE "the Cloud AI 100 Platform SDK at ${QEFF_QAIC_SDK_DIR} has "
      "QAicApi.hpp but no libQAic.so in ${_qeff_qaic_libdir}")
else()
  set(QEFF_HAVE_QAIC ON)
  set(QEFF_QAIC_INCLUDE_DIR "${QEFF_QAIC_SDK_DIR}/dev/inc")
  set(QEFF_QAIC_PROBE "built with the Cloud AI 100 Platform SDK at ${QEFF_QAIC_SDK_DIR}")
endif()
string(CONCAT QEFF_QAIC_PROBE ${QEFF_QAIC_PROBE})

# Names newer SDK headers declare and older ones may not (runtime/qaic uses
# each only where the header has it): the buffer types BFLOAT16, UINT8 and
# FLOAT64C, and InferenceSetProperties with the program's devMapping and
# dataPathTimeoutMs (without them, multi-device QPCs are refused and the
# data-path timeout stays the kernel's).
set(QEFF_QAIC_HAS_BFLOAT16 0)
set(QEFF_QAIC_HAS_UINT8 0)
set(QEFF_QAIC_HAS_FLOAT64C 0)
set(QEFF_QAIC_HAS_INFERENCE_SET_PROPERTIES 0)
if(QEFF_HAVE_QAIC)
  file(GLOB_RECURSE _qeff_qaic_headers "${QEFF_QAIC_INCLUDE_DIR}/*.h" "${QEFF_QAIC_INCLUDE_DIR}/*.hpp")
  set(_qeff_qaic_text "")
  foreach(_header IN LISTS _qeff_qaic_headers)
    file(STRINGS "${_header}" _lines REGEX "BUFFER_DATA_TYPE_|InferenceSetProperties|devMapping|dataPathTimeoutMs")
    string(APPEND _qeff_qaic_text "${_lines}\n")
  endforeach()
  foreach(_type BFLOAT16 UINT8 FLOAT64C)
    if(_qeff_qaic_text MATCHES "BUFFER_DATA_TYPE_${_type}[^A-Z0-9_]")
      set(QEFF_QAIC_HAS_${_type} 1)
    endif()
  endforeach()
  if(_qeff_qaic_text MATCHES "InferenceSetProperties" AND _qeff_qaic_text MATCHES "devMapping"
     AND _qeff_qaic_text MATCHES "dataPathTimeoutMs")
    set(QEFF_QAIC_HAS_INFERENCE_SET_PROPERTIES 1)
  endif()
endif()
if(QEFF_HAVE_QAIC)
  message(STATUS "qeff: qaic device ON: ${QEFF_QAIC_LIBRARY}, ${QEFF_QAIC_INCLUDE_DIR}")
else()
  message(STATUS "qeff: qaic device OFF: ${QEFF_QAIC_PROBE}")
endif()
