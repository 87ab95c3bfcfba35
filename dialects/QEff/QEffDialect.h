//===- QEffDialect.h - the qeff dialect -------------------------*- C++ -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECTS_QEFF_QEFFDIALECT_H
#define QEFF_DIALECTS_QEFF_QEFFDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"

#include "dialects/QEff/QEffDialect.h.inc"
#include "dialects/QEff/QEffEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/QEff/QEffAttrs.h.inc"

#endif // QEFF_DIALECTS_QEFF_QEFFDIALECT_H
