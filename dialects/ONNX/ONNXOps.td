//===- ONNXOps.td - onnx dialect operations --------------------*- tablegen -*-===//
//
// Part of qeff. Op names and attribute names follow the ONNX operator
// specification (opset 17) exactly.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_ONNX_OPS_TD
#define QEFF_DIALECT_ONNX_OPS_TD

include "dialects/ONNX/ONNXDialect.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def ONNX_Tensor : AnyTypeOf<[AnyRankedTensor, AnyUnrankedTensor]>;

def ONNX_MatMulOp : ONNX_Op<"MatMul", [Pure]> {
  let summary = "Matrix product with numpy-style broadcasting (ONNX MatMul)";
  let description = [{
    [ONNX MatMul](https://onnx.ai/onnx/operators/onnx__MatMul.html).

    ```mlir
    %y = onnx.MatMul %a, %b : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$A, ONNX_Tensor:$B);
  let results = (outs ONNX_Tensor:$Y);
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

def ONNX_GenericOp : ONNX_Op<"Generic"> {
  let summary = "Any ONNX operator, by op type, domain and attributes";
  let description = [{
    Carries an operator that has no dedicated op here: `op_type` and `domain`
    (empty for the default `ai.onnx` domain) name it, the remaining
    attributes are its ONNX attributes. The exporter writes it unchanged.

    ```mlir
    %y = onnx.Generic "Relu" (%x) {domain = ""} : (tensor<4xf32>) -> tensor<4xf32>
    ```
  }];
  let arguments = (ins StrAttr:$op_type, DefaultValuedStrAttr<StrAttr, "">:$domain,
                   DefaultValuedAttr<DictionaryAttr, "{}">:$onnx_attributes,
                   Variadic<ONNX_Tensor>:$inputs);
  let results = (outs Variadic<ONNX_Tensor>:$outputs);
  let assemblyFormat = [{
    $op_type `(` $inputs `)` attr-dict `:` functional-type($inputs, results)
  }];
  let hasVerifier = 1;
}

#endif // QEFF_DIALECT_ONNX_OPS_TD
