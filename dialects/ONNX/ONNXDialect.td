//===- ONNXDialect.td - the onnx dialect definition ------------*- tablegen -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_ONNX_DIALECT_TD
#define QEFF_DIALECT_ONNX_DIALECT_TD

include "mlir/IR/OpBase.td"

def ONNX_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::mlir::onnx";
  let summary = "ONNX operators as the qeff lowering emits them";
  let description = [{
    One op per ONNX operator type, spelled exactly as the ONNX op type
    (`onnx.MatMul`, `onnx.ScatterND`, ...), with the operator's attributes as
    the ONNX specification (opset 17) names them, so that the exporter maps
    each op 1:1 to a `NodeProto`. `onnx.Generic` carries any other operator
    (op type, domain, attributes) so that nothing is ever lost.
  }];
  let usePropertiesForAttributes = 1;
}

class ONNX_Op<string mnemonic, list<Trait> traits = []>
    : Op<ONNX_Dialect, mnemonic, traits>;

#endif // QEFF_DIALECT_ONNX_DIALECT_TD
