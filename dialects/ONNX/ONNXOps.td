//===- ONNXOps.td - onnx dialect operations --------------------*- tablegen -*-===//
//
// Part of qeff. Op names and attribute names follow the ONNX operator
// specification (opset 17) exactly, so the exporter maps each op 1:1 to a
// NodeProto: op type = mnemonic, inputs and outputs positionally, attributes
// by name. The ops are split by category:
//
//   ONNXMathOps.td    elementwise arithmetic, comparison, logic, Clip, Min/Max
//   ONNXNNOps.td      MatMul, Gemm, Softmax, reductions, LayerNormalization,
//                     ArgMax, TopK, CumSum
//   ONNXTensorOps.td  indexing, shape manipulation, Cast, constants
//
// Conventions shared by all ops:
//   - ONNX INT attributes are `I64Attr`, INTS `DenseI64ArrayAttr`, FLOAT
//     `F32Attr`, STRING `StrAttr`, TENSOR `ElementsAttr`, each with the ONNX
//     default where the spec gives one. ONNX boolean flags (`transA`,
//     `keepdims`, ...) stay integers 0/1 as in ONNX.
//   - Element types map as: i1 = bool, signless iN = intN, uiN = uintN,
//     f16/bf16/f32/f64 = float16/bfloat16/float/double.
//   - Omitted optional inputs are absent operands; omitted trailing outputs
//     are absent results.
//
// Verifiers check what ONNX's rules make checkable from static types and
// attributes (dynamic sizes and unranked tensors are always accepted); the
// shared checks live in ONNXVerifiers.cpp and every message is exercised in
// test/dialects/ONNX/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_ONNX_OPS_TD
#define QEFF_DIALECT_ONNX_OPS_TD

include "dialects/ONNX/ONNXDialect.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints and op classes
//===----------------------------------------------------------------------===//

def ONNX_Tensor : AnyTypeOf<[AnyRankedTensor, AnyUnrankedTensor]>;
def ONNX_BoolTensor : TensorOf<[I1]>;
def ONNX_I64Tensor : TensorOf<[I64]>;
def ONNX_IndexTensor : TensorOf<[I32, I64]>;
def ONNX_FloatTensor : TensorOf<[AnyFloat]>;

/// A side-effect-free ONNX operator in the uniform assembly form
/// `onnx.Op %a, %b {attrs} : (types) -> types`.
class ONNX_PureOp<string mnemonic, list<Trait> traits = []>
    : ONNX_Op<mnemonic, !listconcat([Pure], traits)> {
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

include "dialects/ONNX/ONNXMathOps.td"
include "dialects/ONNX/ONNXNNOps.td"
include "dialects/ONNX/ONNXTensorOps.td"

//===----------------------------------------------------------------------===//
// Generic
//===----------------------------------------------------------------------===//

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
