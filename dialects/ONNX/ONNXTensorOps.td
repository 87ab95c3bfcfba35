//===- ONNXTensorOps.td - onnx indexing and shape ops ----------*- tablegen -*-===//
//
// Part of qeff. Gather/Scatter, shape manipulation, Cast, Trilu, Range, Shape
// and the constants. Included from ONNXOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_ONNX_TENSOROPS_TD
#define QEFF_DIALECT_ONNX_TENSOROPS_TD

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

def ONNX_GatherOp : ONNX_PureOp<"Gather", [AllElementTypesMatch<["data", "output"]>]> {
  let summary = "Gather slices along one axis";
  let description = [{
    [ONNX Gather](https://onnx.ai/onnx/operators/onnx__Gather.html)
    (opset 13): takes the slices of `data` (rank r) along `axis` (default 0)
    selected by `indices` (rank q, int32/int64, negative counts from the end);
    the output has rank `q + r - 1`: `data`'s shape with the `axis` dimension
    replaced by `indices`' shape. The embedding lookup.

    ```mlir
    %e = onnx.Gather %table, %ids {axis = 0 : i64} : (tensor<384x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, ONNX_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_GatherNDOp : ONNX_PureOp<"GatherND", [AllElementTypesMatch<["data", "output"]>]> {
  let summary = "Gather slices addressed by index tuples";
  let description = [{
    [ONNX GatherND](https://onnx.ai/onnx/operators/onnx__GatherND.html)
    (opset 13): `indices` (int64, rank q) holds tuples of length
    `k = indices.shape[-1]` addressing slices of `data` (rank r) after the
    first `batch_dims` dimensions (default 0), which both share. The output
    has rank `q + r - k - 1 - batch_dims`.

    ```mlir
    %o = onnx.GatherND %data, %idx {batch_dims = 1 : i64} : (tensor<2x8x64xf32>, tensor<2x1x1xi64>) -> tensor<2x1x64xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, ONNX_I64Tensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_GatherElementsOp
    : ONNX_PureOp<"GatherElements", [AllElementTypesMatch<["data", "output"]>]> {
  let summary = "Gather single elements along one axis";
  let description = [{
    [ONNX GatherElements](https://onnx.ai/onnx/operators/onnx__GatherElements.html)
    (opset 13): `output[i][j][k] = data[indices[i][j][k]][j][k]` for
    `axis = 0` (default), likewise for other axes. `indices` has `data`'s
    rank and the output has `indices`' shape.

    ```mlir
    %o = onnx.GatherElements %data, %idx {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2x1xi64>) -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, ONNX_IndexTensor:$indices,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_ScatterNDOp : ONNX_PureOp<"ScatterND", [AllTypesMatch<["data", "output"]>]> {
  let summary = "Write slices addressed by index tuples";
  let description = [{
    [ONNX ScatterND](https://onnx.ai/onnx/operators/onnx__ScatterND.html)
    (opset 16): a copy of `data` with the slices addressed by the int64 index
    tuples in `indices` replaced by `updates` (`reduction = "none"`, the
    default) or combined with them (`"add"`, `"mul"`). `updates` has shape
    `indices.shape[:-1] + data.shape[indices.shape[-1]:]`. The KV-cache
    write-back.

    ```mlir
    %c = onnx.ScatterND %cache, %idx, %kv : (tensor<1x4x32x16xf32>, tensor<1x4x8x3xi64>, tensor<1x4x8x16xf32>) -> tensor<1x4x32x16xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, ONNX_I64Tensor:$indices,
                   ONNX_Tensor:$updates,
                   DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_ScatterElementsOp
    : ONNX_PureOp<"ScatterElements", [AllTypesMatch<["data", "output"]>]> {
  let summary = "Write single elements along one axis";
  let description = [{
    [ONNX ScatterElements](https://onnx.ai/onnx/operators/onnx__ScatterElements.html)
    (opset 16): the inverse of GatherElements: a copy of `data` with
    `output[indices[i][j]][j] = updates[i][j]` for `axis = 0` (default),
    likewise for other axes. `indices` and `updates` have the same shape and
    `data`'s rank; `reduction` is `"none"` (default), `"add"` or `"mul"`.

    ```mlir
    %o = onnx.ScatterElements %data, %idx, %upd {axis = 1 : i64, reduction = "add"} : (tensor<2x8xf32>, tensor<2x1xi64>, tensor<2x1xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, ONNX_IndexTensor:$indices,
                   ONNX_Tensor:$updates,
                   DefaultValuedAttr<I64Attr, "0">:$axis,
                   DefaultValuedStrAttr<StrAttr, "none">:$reduction);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def ONNX_ReshapeOp : ONNX_PureOp<"Reshape", [AllElementTypesMatch<["data", "reshaped"]>]> {
  let summary = "Reshape to the shape given as an input";
  let description = [{
    [ONNX Reshape](https://onnx.ai/onnx/operators/onnx__Reshape.html)
    (opset 14): `shape` is a 1-D int64 tensor; an entry of -1 is inferred,
    an entry of 0 copies the input dimension unless `allowzero = 1`. The
    element count is preserved.

    ```mlir
    %r = onnx.Reshape %x, %shape : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<1x8x4x16xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, ONNX_I64Tensor:$shape,
                   DefaultValuedAttr<I64Attr, "0">:$allowzero);
  let results = (outs ONNX_Tensor:$reshaped);
  let hasVerifier = 1;
}

def ONNX_TransposeOp : ONNX_PureOp<"Transpose", [SameOperandsAndResultElementType]> {
  let summary = "Permute the dimensions";
  let description = [{
    [ONNX Transpose](https://onnx.ai/onnx/operators/onnx__Transpose.html)
    (opset 13): `transposed.shape[i] = data.shape[perm[i]]`; without `perm`
    the dimensions are reversed.

    ```mlir
    %t = onnx.Transpose %x {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x4x16xf32>) -> tensor<1x4x8x16xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, OptionalAttr<DenseI64ArrayAttr>:$perm);
  let results = (outs ONNX_Tensor:$transposed);
  let hasVerifier = 1;
}

def ONNX_ConcatOp : ONNX_PureOp<"Concat", [SameOperandsAndResultElementType]> {
  let summary = "Concatenate along one axis";
  let description = [{
    [ONNX Concat](https://onnx.ai/onnx/operators/onnx__Concat.html)
    (opset 13): joins the inputs along `axis` (required, in `[-r, r-1]`); all
    inputs have the same rank and agree on every other dimension.

    ```mlir
    %c = onnx.Concat %past, %new {axis = 2 : i64} : (tensor<1x4x8x16xf32>, tensor<1x4x1x16xf32>) -> tensor<1x4x9x16xf32>
    ```
  }];
  let arguments = (ins Variadic<ONNX_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs ONNX_Tensor:$concat_result);
  let hasVerifier = 1;
}

def ONNX_SplitOp : ONNX_PureOp<"Split"> {
  let summary = "Split into several tensors along one axis";
  let description = [{
    [ONNX Split](https://onnx.ai/onnx/operators/onnx__Split.html) (opset 13):
    splits `input` along `axis` (default 0) into the results. The optional
    1-D int64 input `split` gives each part's length (one entry per result);
    without it the parts are equal. Every result has `input`'s element
    type.

    ```mlir
    %a, %b = onnx.Split %x, %sizes {axis = -1 : i64} : (tensor<2x128xf32>, tensor<2xi64>) -> (tensor<2x64xf32>, tensor<2x64xf32>)
    ```
  }];
  let arguments = (ins ONNX_Tensor:$input, Optional<ONNX_I64Tensor>:$split,
                   DefaultValuedAttr<I64Attr, "0">:$axis);
  let results = (outs Variadic<ONNX_Tensor>:$outputs);
  let hasVerifier = 1;
}

def ONNX_SliceOp : ONNX_Op<"Slice", [Pure, AttrSizedOperandSegments,
                                     AllElementTypesMatch<["data", "output"]>]> {
  let summary = "Strided slice with bounds given as inputs";
  let description = [{
    [ONNX Slice](https://onnx.ai/onnx/operators/onnx__Slice.html) (opset 13):
    `starts`, `ends` and the optional `axes` and `steps` are 1-D int32/int64
    tensors of one common length; `axes` defaults to `[0, ..., n-1]`, `steps`
    to ones. Out-of-range bounds clamp. Either optional input may be omitted
    independently, so the pretty form names them. The output has `data`'s
    rank.

    ```mlir
    %s = onnx.Slice %x, %starts, %ends axes %axes : (tensor<2x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x64xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, ONNX_IndexTensor:$starts,
                   ONNX_IndexTensor:$ends, Optional<ONNX_IndexTensor>:$axes,
                   Optional<ONNX_IndexTensor>:$steps);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $starts `,` $ends (`axes` $axes^)? (`steps` $steps^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def ONNX_SqueezeOp : ONNX_PureOp<"Squeeze", [AllElementTypesMatch<["data", "squeezed"]>]> {
  let summary = "Remove unit dimensions";
  let description = [{
    [ONNX Squeeze](https://onnx.ai/onnx/operators/onnx__Squeeze.html)
    (opset 13): removes the dimensions listed in the optional 1-D int64 input
    `axes` (each of size 1), or every size-1 dimension when it is absent.

    ```mlir
    %s = onnx.Squeeze %x, %axes : (tensor<1x8x1xf32>, tensor<1xi64>) -> tensor<1x8xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, Optional<ONNX_I64Tensor>:$axes);
  let results = (outs ONNX_Tensor:$squeezed);
  let hasVerifier = 1;
}

def ONNX_UnsqueezeOp
    : ONNX_PureOp<"Unsqueeze", [AllElementTypesMatch<["data", "expanded"]>]> {
  let summary = "Insert unit dimensions";
  let description = [{
    [ONNX Unsqueeze](https://onnx.ai/onnx/operators/onnx__Unsqueeze.html)
    (opset 13): inserts a size-1 dimension at each position of the 1-D int64
    input `axes` (positions in the output). The output rank is the input rank
    plus the length of `axes`.

    ```mlir
    %u = onnx.Unsqueeze %x, %axes : (tensor<1x8xi1>, tensor<2xi64>) -> tensor<1x1x1x8xi1>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data, ONNX_I64Tensor:$axes);
  let results = (outs ONNX_Tensor:$expanded);
  let hasVerifier = 1;
}

def ONNX_ExpandOp : ONNX_PureOp<"Expand", [AllElementTypesMatch<["input", "output"]>]> {
  let summary = "Broadcast to a shape given as an input";
  let description = [{
    [ONNX Expand](https://onnx.ai/onnx/operators/onnx__Expand.html)
    (opset 13): broadcasts `input` numpy-style with the 1-D int64 `shape`;
    the output rank is the larger of the two ranks.

    ```mlir
    %e = onnx.Expand %kv, %shape : (tensor<1x2x1x8x16xf32>, tensor<5xi64>) -> tensor<1x2x2x8x16xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$input, ONNX_I64Tensor:$shape);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_TriluOp : ONNX_PureOp<"Trilu", [AllTypesMatch<["input", "output"]>]> {
  let summary = "Upper or lower triangle of the last two dimensions";
  let description = [{
    [ONNX Trilu](https://onnx.ai/onnx/operators/onnx__Trilu.html)
    (opset 14): keeps the upper (`upper = 1`, the default) or lower triangle
    of the innermost matrices of `input` (rank >= 2), zeroing the rest. The
    optional rank-0 int64 input `k` offsets the diagonal.

    ```mlir
    %t = onnx.Trilu %x, %k {upper = 0 : i64} : (tensor<8x8xf32>, tensor<i64>) -> tensor<8x8xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$input, Optional<ONNX_I64Tensor>:$k,
                   DefaultValuedAttr<I64Attr, "1">:$upper);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Cast, Range, Shape, constants
//===----------------------------------------------------------------------===//

def ONNX_CastOp : ONNX_PureOp<"Cast", [SameOperandsAndResultShape]> {
  let summary = "Convert the element type";
  let description = [{
    [ONNX Cast](https://onnx.ai/onnx/operators/onnx__Cast.html) (opset 13):
    converts `input` to the element type `to`. `to` is stored as the MLIR
    element type (the result's), not as the ONNX TensorProto code, so it
    cannot disagree with the result type; the exporter maps it with the same
    table it uses for every tensor type: `i1` -> BOOL (9), `i8` -> INT8 (3),
    `ui8` -> UINT8 (2), `i16` -> INT16 (5), `i32` -> INT32 (6), `i64` ->
    INT64 (7), `f16` -> FLOAT16 (10), `bf16` -> BFLOAT16 (16), `f32` ->
    FLOAT (1), `f64` -> DOUBLE (11).

    ```mlir
    %h = onnx.Cast %x {to = f16} : (tensor<2x64xf32>) -> tensor<2x64xf16>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$input, TypeAttr:$to);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_RangeOp : ONNX_PureOp<"Range", [AllElementTypesMatch<["start", "limit", "delta", "output"]>]> {
  let summary = "Arithmetic progression from scalar inputs";
  let description = [{
    [ONNX Range](https://onnx.ai/onnx/operators/onnx__Range.html) (opset 11):
    the 1-D tensor `start, start + delta, ...` up to but excluding `limit`;
    the three inputs are scalars (rank 0) of the output's element type.

    ```mlir
    %r = onnx.Range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$start, ONNX_Tensor:$limit, ONNX_Tensor:$delta);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_ShapeOp : ONNX_PureOp<"Shape"> {
  let summary = "The shape of a tensor as a 1-D int64 tensor";
  let description = [{
    [ONNX Shape](https://onnx.ai/onnx/operators/onnx__Shape.html) (opset 15):
    the dimensions of `data` from `start` (default 0) up to `end` (default:
    the rank), both clamped to `[-r, r]`, as a 1-D int64 tensor.

    ```mlir
    %s = onnx.Shape %x {start = 1 : i64} : (tensor<1x8x64xf32>) -> tensor<2xi64>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$data,
                   DefaultValuedAttr<I64Attr, "0">:$start,
                   OptionalAttr<I64Attr>:$end);
  let results = (outs ONNX_I64Tensor:$shape);
  let hasVerifier = 1;
}

def ONNX_ConstantOfShapeOp : ONNX_PureOp<"ConstantOfShape"> {
  let summary = "A tensor of the given shape filled with one value";
  let description = [{
    [ONNX ConstantOfShape](https://onnx.ai/onnx/operators/onnx__ConstantOfShape.html)
    (opset 9): `input` is the 1-D int64 shape; every element of the output is
    the single element of `value` (default: a float 0), whose element type is
    the output's.

    ```mlir
    %z = onnx.ConstantOfShape %shape {value = dense<0> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<1x8xi64>
    ```
  }];
  let arguments = (ins ONNX_I64Tensor:$input, OptionalAttr<ElementsAttr>:$value);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_ConstantOp : ONNX_Op<"Constant", [Pure, ConstantLike,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "A constant tensor";
  let description = [{
    [ONNX Constant](https://onnx.ai/onnx/operators/onnx__Constant.html)
    (opset 13): `output` is the tensor `value`, a `DenseElementsAttr` or a
    `DenseResourceElementsAttr` (for large data); the result type is the
    attribute's type. Only the `value` form of the ONNX attributes is
    modelled (`value_float`, `value_ints`, ... are written as `value`).

    ```mlir
    %c = onnx.Constant dense<[0, 2, 1]> : tensor<3xi64>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

#endif // QEFF_DIALECT_ONNX_TENSOROPS_TD
