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
                        int64_t originalMaxPosition, FloatAttr betaFast,
                        FloatAttr betaSlow, FloatAttr attentionFactor,
                        DenseF64ArrayAttr shortFactor,
                        DenseF64ArrayAttr longFactor, BoolAttr truncate) {
  StringRef name = stringifyRopeScalingKind(kind);
  if (!(factor.getValueAsDouble() > 0.0))
    return emitError() << "rope scaling factor must be positive";
  if (kind != RopeScalingKind::linear && originalMaxPosition <= 0)
    return emitError() << name
                       << " rope scaling needs a positive original_max_position";
  if ((lowFreqFactor || highFreqFactor) && kind != RopeScalingKind::llama3)
    return emitError() << "low_freq_factor and high_freq_factor are llama3 "
                          "parameters, not "
                       << name << " ones";
  if ((betaFast || betaSlow) && kind != RopeScalingKind::yarn)
    return emitError() << "beta_fast and beta_slow are yarn parameters, not "
                       << name << " ones";
  if (truncate && kind != RopeScalingKind::yarn)
    return emitError() << "truncate is a yarn parameter, not a " << name
                       << " one";
  if ((shortFactor || longFactor) && kind != RopeScalingKind::longrope)
    return emitError() << "short_factor and long_factor are longrope "
                          "parameters, not "
                       << name << " ones";
  if (attentionFactor && kind != RopeScalingKind::yarn &&
      kind != RopeScalingKind::longrope)
    return emitError() << "attention_factor is a yarn or longrope parameter, "
                          "not a "
                       << name << " one";
  if (attentionFactor && !(attentionFactor.getValueAsDouble() > 0.0))
    return emitError() << "rope scaling attention_factor must be positive";
  switch (kind) {
  case RopeScalingKind::linear:
    return success();
  case RopeScalingKind::llama3: {
    double low = lowFreqFactor ? lowFreqFactor.getValueAsDouble() : 1.0;
    double high = highFreqFactor ? highFreqFactor.getValueAsDouble() : 4.0;
    if (!(low > 0.0) || !(high > low))
      return emitError() << "llama3 rope scaling needs 0 < low_freq_factor < "
                            "high_freq_factor";
    return success();
  }
  case RopeScalingKind::yarn:
    if ((betaFast && !(betaFast.getValueAsDouble() > 0.0)) ||
        (betaSlow && !(betaSlow.getValueAsDouble() > 0.0)))
      return emitError() << "yarn rope scaling needs positive beta_fast and "
                            "beta_slow";
    return success();
  case RopeScalingKind::dynamic:
    if (!(factor.getValueAsDouble() >= 1.0))
      return emitError() << "dynamic rope scaling needs a factor of at least 1";
    return success();
  case RopeScalingKind::longrope:
    if (!shortFactor || !longFactor || shortFactor.empty() ||
        shortFactor.size() != longFactor.size())
      return emitError() << "longrope rope scaling needs short_factor and "
                            "long_factor lists of one length";
    for (double f : llvm::concat<const double>(shortFactor.asArrayRef(),
                                               longFactor.asArrayRef()))
      if (!(f > 0.0))
        return emitError() << "longrope factors must be positive, got " << f;
    return success();
  }
  llvm_unreachable("unknown rope scaling kind");
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
