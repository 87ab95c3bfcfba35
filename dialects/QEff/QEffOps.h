//===- QEffOps.h - qeff dialect operations ----------------------*- C++ -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECTS_QEFF_QEFFOPS_H
#define QEFF_DIALECTS_QEFF_QEFFOPS_H

#include "dialects/QEff/QEffDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/QEff/QEffOps.h.inc"

#endif // QEFF_DIALECTS_QEFF_QEFFOPS_H
