//===- QEffDialect.cpp - qeff dialect registration and attributes ---------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "dialects/QEff/QEffDialect.h"
#include "dialects/QEff/QEffOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::qeff;

#include "dialects/QEff/QEffDialect.cpp.inc"
#include "dialects/QEff/QEffEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/QEff/QEffAttrs.cpp.inc"

void QEffDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/QEff/QEffOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/QEff/QEffAttrs.cpp.inc"
      >();
}

LogicalResult
RopeScalingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        RopeScalingKind kind, FloatAttr factor,
                        FloatAttr lowFreqFactor, FloatAttr highFreqFactor,
                        int64_t originalMaxPosition) {
  if (!(factor.getValueAsDouble() > 0.0))
    return emitError() << "rope scaling factor must be positive";
  if (kind == RopeScalingKind::llama3) {
    if (originalMaxPosition <= 0)
      return emitError() << "llama3 rope scaling needs a positive "
                            "original_max_position";
    double low = lowFreqFactor ? lowFreqFactor.getValueAsDouble() : 1.0;
    double high = highFreqFactor ? highFreqFactor.getValueAsDouble() : 4.0;
    if (!(low > 0.0) || !(high > low))
      return emitError() << "llama3 rope scaling needs 0 < low_freq_factor < "
                            "high_freq_factor";
  }
  return success();
}

LogicalResult ModelAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                StringAttr architecture, StringAttr family,
                                DictionaryAttr config, ArrayAttr checkpoint) {
  if (architecture.getValue().empty())
    return emitError() << "model architecture must not be empty";
  if (family.getValue().empty())
    return emitError() << "model family must not be empty";
  for (Attribute file : checkpoint)
    if (!llvm::isa<StringAttr>(file))
      return emitError() << "model checkpoint entries must be file names";
  return success();
}
