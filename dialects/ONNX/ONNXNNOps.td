//===- ONNXNNOps.td - onnx matrix, reduction and norm ops ------*- tablegen -*-===//
//
// Part of qeff. MatMul, Gemm, Softmax, the reductions, LayerNormalization,
// ArgMax, TopK and CumSum. Included from ONNXOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_ONNX_NNOPS_TD
#define QEFF_DIALECT_ONNX_NNOPS_TD

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

def ONNX_MatMulOp : ONNX_PureOp<"MatMul", [SameOperandsAndResultElementType]> {
  let summary = "Matrix product with numpy-style broadcasting";
  let description = [{
    [ONNX MatMul](https://onnx.ai/onnx/operators/onnx__MatMul.html): as
    `numpy.matmul`. `A` is `[..., M, K]`, `B` is `[..., K, N]` and `Y` is
    `[..., M, N]` with the batch dimensions broadcast; a rank-1 operand is
    promoted by a unit dimension that is removed from the result again.

    ```mlir
    %y = onnx.MatMul %a, %b : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$A, ONNX_Tensor:$B);
  let results = (outs ONNX_Tensor:$Y);
  let hasVerifier = 1;
}

def ONNX_GemmOp : ONNX_PureOp<"Gemm", [SameOperandsAndResultElementType]> {
  let summary = "General matrix multiply: alpha * A' * B' + beta * C";
  let description = [{
    [ONNX Gemm](https://onnx.ai/onnx/operators/onnx__Gemm.html) (opset 13):
    `Y = alpha * A' * B' + beta * C` where `A'` is `A` transposed when
    `transA = 1` and likewise `B'`. `A'` is `[M, K]`, `B'` is `[K, N]`, the
    optional `C` broadcasts unidirectionally to `[M, N]`.

    ```mlir
    %y = onnx.Gemm %a, %w, %b {transB = 1 : i64} : (tensor<4x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<4x128xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$A, ONNX_Tensor:$B, Optional<ONNX_Tensor>:$C,
                   DefaultValuedAttr<F32Attr, "1.0f">:$alpha,
                   DefaultValuedAttr<F32Attr, "1.0f">:$beta,
                   DefaultValuedAttr<I64Attr, "0">:$transA,
                   DefaultValuedAttr<I64Attr, "0">:$transB);
  let results = (outs ONNX_Tensor:$Y);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Softmax and reductions
//===----------------------------------------------------------------------===//

def ONNX_SoftmaxOp : ONNX_PureOp<"Softmax", [SameOperandsAndResultType]> {
  let summary = "Softmax along one axis";
  let description = [{
    [ONNX Softmax](https://onnx.ai/onnx/operators/onnx__Softmax.html)
    (opset 13): `output = exp(input) / sum(exp(input), axis, keepdims)`;
    `axis` in `[-r, r-1]`, default `-1`.

    ```mlir
    %p = onnx.Softmax %s {axis = -1 : i64} : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$input,
                   DefaultValuedAttr<I64Attr, "-1">:$axis);
  let results = (outs ONNX_FloatTensor:$output);
  let hasVerifier = 1;
}

/// Opset-13 reductions with `axes` as an attribute (ReduceMean and ReduceMax
/// at opset 17). An absent `axes` reduces over all dimensions.
class ONNX_ReduceAttrOp<string mnemonic>
    : ONNX_PureOp<mnemonic, [SameOperandsAndResultElementType]> {
  let arguments = (ins ONNX_Tensor:$data,
                   OptionalAttr<DenseI64ArrayAttr>:$axes,
                   DefaultValuedAttr<I64Attr, "1">:$keepdims);
  let results = (outs ONNX_Tensor:$reduced);
  let hasVerifier = 1;
}

def ONNX_ReduceMeanOp : ONNX_ReduceAttrOp<"ReduceMean"> {
  let summary = "Mean over the given axes";
  let description = [{
    [ONNX ReduceMean](https://onnx.ai/onnx/operators/onnx__ReduceMean.html)
    (opset 13, current at opset 17): the mean of `data` over `axes` (all
    dimensions when absent); reduced dimensions are kept as 1 when
    `keepdims = 1` (the default) and removed otherwise. Each axis is in
    `[-r, r-1]` and appears once.

    ```mlir
    %m = onnx.ReduceMean %x {axes = array<i64: -1>} : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
    ```
  }];
}

def ONNX_ReduceMaxOp : ONNX_ReduceAttrOp<"ReduceMax"> {
  let summary = "Maximum over the given axes";
  let description = [{
    [ONNX ReduceMax](https://onnx.ai/onnx/operators/onnx__ReduceMax.html)
    (opset 13, current at opset 17): the maximum of `data` over `axes` (all
    dimensions when absent), `keepdims` as for `ReduceMean`.

    ```mlir
    %m = onnx.ReduceMax %x {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x8x64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_ReduceSumOp
    : ONNX_PureOp<"ReduceSum", [AllElementTypesMatch<["data", "reduced"]>]> {
  let summary = "Sum over the axes given as an input";
  let description = [{
    [ONNX ReduceSum](https://onnx.ai/onnx/operators/onnx__ReduceSum.html)
    (opset 13): the sum of `data` over the optional 1-D int64 input `axes`.
    Without `axes` (or with an empty one) all dimensions are reduced, unless
    `noop_with_empty_axes = 1`, which makes the op an identity.
    `keepdims` (default 1) keeps the reduced dimensions as 1.

    ```mlir
    %s = onnx.ReduceSum %x, %axes {keepdims = 0 : i64} : (tensor<2x8x64xf32>, tensor<1xi64>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, Optional<ONNX_I64Tensor>:$axes,
                   DefaultValuedAttr<I64Attr, "1">:$keepdims,
                   DefaultValuedAttr<I64Attr, "0">:$noop_with_empty_axes);
  let results = (outs ONNX_Tensor:$reduced);
  let hasVerifier = 1;
}

def ONNX_ArgMaxOp : ONNX_PureOp<"ArgMax"> {
  let summary = "Index of the maximum along one axis";
  let description = [{
    [ONNX ArgMax](https://onnx.ai/onnx/operators/onnx__ArgMax.html)
    (opset 13): int64 indices of the maxima of `data` along `axis`
    (default 0); the axis is kept as 1 when `keepdims = 1` (the default). With
    `select_last_index = 1` ties resolve to the last occurrence. Greedy
    decoding selects the next token with it.

    ```mlir
    %i = onnx.ArgMax %logits {axis = -1 : i64, keepdims = 0 : i64} : (tensor<1x1x384xf32>) -> tensor<1x1xi64>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data,
                   DefaultValuedAttr<I64Attr, "0">:$axis,
                   DefaultValuedAttr<I64Attr, "1">:$keepdims,
                   DefaultValuedAttr<I64Attr, "0">:$select_last_index);
  let results = (outs ONNX_I64Tensor:$reduced);
  let hasVerifier = 1;
}

def ONNX_TopKOp : ONNX_PureOp<"TopK"> {
  let summary = "The K largest (or smallest) elements along one axis";
  let description = [{
    [ONNX TopK](https://onnx.ai/onnx/operators/onnx__TopK.html) (opset 11):
    `K` is a 1-D int64 tensor of one element. `Values` holds the `K` largest
    (`largest = 1`, the default) or smallest elements of `X` along `axis`
    (default -1), `Indices` their int64 positions; both have `X`'s shape with
    `K` on `axis`. `sorted = 1` (the default) returns them in order. Used for
    the mixture-of-experts router.

    ```mlir
    %v, %i = onnx.TopK %x, %k {axis = -1 : i64} : (tensor<4x8xf32>, tensor<1xi64>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
    ```
  }];
  let arguments = (ins ONNX_Tensor:$X, ONNX_I64Tensor:$K,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<I64Attr, "1">:$largest,
                   DefaultValuedAttr<I64Attr, "1">:$sorted);
  let results = (outs ONNX_Tensor:$Values, ONNX_I64Tensor:$Indices);
  let hasVerifier = 1;
}

def ONNX_CumSumOp : ONNX_PureOp<"CumSum", [AllTypesMatch<["x", "y"]>]> {
  let summary = "Cumulative sum along an axis given as an input";
  let description = [{
    [ONNX CumSum](https://onnx.ai/onnx/operators/onnx__CumSum.html)
    (opset 14): the running sum of `x` along `axis`, a rank-0 int32 or int64
    tensor. `exclusive = 1` excludes the element itself (shifting the sums by
    one), `reverse = 1` sums from the end. Position ids from an attention mask
    are computed with it.

    ```mlir
    %y = onnx.CumSum %x, %axis {exclusive = 0 : i64, reverse = 0 : i64} : (tensor<1x8xi64>, tensor<i64>) -> tensor<1x8xi64>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$x, ONNX_IndexTensor:$axis,
                   DefaultValuedAttr<I64Attr, "0">:$exclusive,
                   DefaultValuedAttr<I64Attr, "0">:$reverse);
  let results = (outs ONNX_Tensor:$y);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

def ONNX_LayerNormalizationOp : ONNX_PureOp<"LayerNormalization"> {
  let summary = "Layer normalisation over the trailing dimensions from axis";
  let description = [{
    [ONNX LayerNormalization](https://onnx.ai/onnx/operators/onnx__LayerNormalization.html)
    (opset 17): normalises `X` over the dimensions `[axis, r)` (default
    `axis = -1`), `Y = (X - mean) / sqrt(var + epsilon) * Scale + B` with the
    optional bias `B`; `epsilon` defaults to 1e-5. `stash_type` is the ONNX
    TensorProto data type of the statistics (1 = float, the default;
    10 = float16; 11 = double; 16 = bfloat16). The optional outputs `Mean`
    and `InvStdDev` are the trailing results `stats` (zero, one or two of
    them, in that order).

    ```mlir
    %y = onnx.LayerNormalization %x, %g, %b {epsilon = 9.99999974E-6 : f32} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins ONNX_FloatTensor:$X, ONNX_FloatTensor:$Scale,
                   Optional<ONNX_FloatTensor>:$B,
                   DefaultValuedAttr<I64Attr, "-1">:$axis,
                   DefaultValuedAttr<F32Attr, "1.0e-5f">:$epsilon,
                   DefaultValuedAttr<I64Attr, "1">:$stash_type);
  let results = (outs ONNX_FloatTensor:$Y, Variadic<ONNX_FloatTensor>:$stats);
  let hasVerifier = 1;
}

#endif // QEFF_DIALECT_ONNX_NNOPS_TD
