//===- Passes.td - qeff -> onnx lowering pass --------------*- tablegen -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_TOONNX_PASSES_TD
#define QEFF_LOWERING_TOONNX_PASSES_TD

include "mlir/Pass/PassBase.td"

def QEffLowerToONNX : Pass<"qeff-lower-to-onnx", "mlir::ModuleOp"> {
  let summary = "Lower qeff ops to onnx dialect ops";
  let description = [{
    Converts every qeff op except `qeff.weight` (which the exporter turns
    into an external-data initializer) into onnx dialect ops, then merges
    identical subgraphs (CSE): the rotary cos/sin tables and their gathers,
    the causal mask and the index grids are built once per model, not once
    per layer.

    Before:
    ```mlir
    %y = qeff.linear %x, %w : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    ```
    After:
    ```mlir
    %wt = qeff.weight "w" : f32 -> tensor<64x128xf32> {transpose}
    %y = onnx.MatMul %x, %wt : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
    ```
    A qeff op with no lowering, or one whose lowering preconditions fail
    (e.g. a dynamic head dimension), is an error at that op.
  }];
  let dependentDialects = ["mlir::onnx::ONNXDialect"];
}

#endif // QEFF_LOWERING_TOONNX_PASSES_TD
