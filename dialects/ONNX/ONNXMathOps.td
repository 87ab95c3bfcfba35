//===- ONNXMathOps.td - onnx elementwise operations ------------*- tablegen -*-===//
//
// Part of qeff. Elementwise ONNX operators: unary math, binary arithmetic with
// numpy broadcasting, comparisons, logic, Where, Clip, Min and Max. Included
// from ONNXOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_ONNX_MATHOPS_TD
#define QEFF_DIALECT_ONNX_MATHOPS_TD

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// `Y = f(X)` elementwise; shape and element type are preserved.
class ONNX_UnaryOp<string mnemonic, Type type = ONNX_Tensor>
    : ONNX_PureOp<mnemonic, [SameOperandsAndResultElementType,
                             SameOperandsAndResultShape]> {
  let arguments = (ins type:$X);
  let results = (outs type:$Y);
}

def ONNX_SqrtOp : ONNX_UnaryOp<"Sqrt", ONNX_FloatTensor> {
  let summary = "Elementwise square root";
  let description = [{
    [ONNX Sqrt](https://onnx.ai/onnx/operators/onnx__Sqrt.html):
    `Y = sqrt(X)`; NaN for negative inputs.

    ```mlir
    %y = onnx.Sqrt %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_ReciprocalOp : ONNX_UnaryOp<"Reciprocal", ONNX_FloatTensor> {
  let summary = "Elementwise reciprocal";
  let description = [{
    [ONNX Reciprocal](https://onnx.ai/onnx/operators/onnx__Reciprocal.html):
    `Y = 1 / X`.

    ```mlir
    %y = onnx.Reciprocal %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_NegOp : ONNX_UnaryOp<"Neg"> {
  let summary = "Elementwise negation";
  let description = [{
    [ONNX Neg](https://onnx.ai/onnx/operators/onnx__Neg.html): `Y = -X`, for
    floats and signed integers.

    ```mlir
    %y = onnx.Neg %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_ExpOp : ONNX_UnaryOp<"Exp", ONNX_FloatTensor> {
  let summary = "Elementwise natural exponential";
  let description = [{
    [ONNX Exp](https://onnx.ai/onnx/operators/onnx__Exp.html): `Y = e^X`.
    (ONNX names the input `input` and the output `output`.)

    ```mlir
    %y = onnx.Exp %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_LogOp : ONNX_UnaryOp<"Log", ONNX_FloatTensor> {
  let summary = "Elementwise natural logarithm";
  let description = [{
    [ONNX Log](https://onnx.ai/onnx/operators/onnx__Log.html): `Y = ln(X)`.
    The Gumbel noise `-log(-log(u))` of on-device sampling is built from it.
    (ONNX names the input `input` and the output `output`.)

    ```mlir
    %y = onnx.Log %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_TanhOp : ONNX_UnaryOp<"Tanh", ONNX_FloatTensor> {
  let summary = "Elementwise hyperbolic tangent";
  let description = [{
    [ONNX Tanh](https://onnx.ai/onnx/operators/onnx__Tanh.html):
    `Y = tanh(X)`. The tanh approximation of GELU is built from it.

    ```mlir
    %y = onnx.Tanh %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_ErfOp : ONNX_UnaryOp<"Erf"> {
  let summary = "Elementwise Gauss error function";
  let description = [{
    [ONNX Erf](https://onnx.ai/onnx/operators/onnx__Erf.html): `Y = erf(X)`.
    The exact GELU is `0.5 * x * (1 + erf(x / sqrt(2)))`.

    ```mlir
    %y = onnx.Erf %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_SigmoidOp : ONNX_UnaryOp<"Sigmoid", ONNX_FloatTensor> {
  let summary = "Elementwise logistic sigmoid";
  let description = [{
    [ONNX Sigmoid](https://onnx.ai/onnx/operators/onnx__Sigmoid.html):
    `Y = 1 / (1 + e^-X)`. SiLU is `X * Sigmoid(X)`.

    ```mlir
    %y = onnx.Sigmoid %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_SinOp : ONNX_UnaryOp<"Sin", ONNX_FloatTensor> {
  let summary = "Elementwise sine";
  let description = [{
    [ONNX Sin](https://onnx.ai/onnx/operators/onnx__Sin.html): `Y = sin(X)`,
    radians. Used for rotary embedding tables.

    ```mlir
    %y = onnx.Sin %x : (tensor<8x32xf32>) -> tensor<8x32xf32>
    ```
  }];
}

def ONNX_CosOp : ONNX_UnaryOp<"Cos", ONNX_FloatTensor> {
  let summary = "Elementwise cosine";
  let description = [{
    [ONNX Cos](https://onnx.ai/onnx/operators/onnx__Cos.html): `Y = cos(X)`,
    radians. Used for rotary embedding tables.

    ```mlir
    %y = onnx.Cos %x : (tensor<8x32xf32>) -> tensor<8x32xf32>
    ```
  }];
}

def ONNX_ReluOp : ONNX_UnaryOp<"Relu"> {
  let summary = "Elementwise rectified linear unit";
  let description = [{
    [ONNX Relu](https://onnx.ai/onnx/operators/onnx__Relu.html):
    `Y = max(0, X)`.

    ```mlir
    %y = onnx.Relu %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_NotOp : ONNX_UnaryOp<"Not", ONNX_BoolTensor> {
  let summary = "Elementwise logical negation";
  let description = [{
    [ONNX Not](https://onnx.ai/onnx/operators/onnx__Not.html): `Y = !X` on
    `i1` (bool) tensors.

    ```mlir
    %y = onnx.Not %m : (tensor<1x8xi1>) -> tensor<1x8xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Binary with numpy broadcasting
//===----------------------------------------------------------------------===//

/// `C = A op B` elementwise after numpy-style (multidirectional) broadcasting.
/// The verifier checks that the operand shapes broadcast to the result's.
class ONNX_BinaryOp<string mnemonic, list<Trait> traits = [],
                    Type operandType = ONNX_Tensor, Type resultType = ONNX_Tensor>
    : ONNX_PureOp<mnemonic, traits> {
  let arguments = (ins operandType:$A, operandType:$B);
  let results = (outs resultType:$C);
  let hasVerifier = 1;
}

class ONNX_ArithOp<string mnemonic>
    : ONNX_BinaryOp<mnemonic, [SameOperandsAndResultElementType]>;

def ONNX_AddOp : ONNX_ArithOp<"Add"> {
  let summary = "Elementwise addition with broadcasting";
  let description = [{
    [ONNX Add](https://onnx.ai/onnx/operators/onnx__Add.html): `C = A + B`;
    `A` and `B` broadcast numpy-style and share the element type of `C`.

    ```mlir
    %c = onnx.Add %a, %b : (tensor<2x1x64xf32>, tensor<8x64xf32>) -> tensor<2x8x64xf32>
    ```
  }];
}

def ONNX_SubOp : ONNX_ArithOp<"Sub"> {
  let summary = "Elementwise subtraction with broadcasting";
  let description = [{
    [ONNX Sub](https://onnx.ai/onnx/operators/onnx__Sub.html): `C = A - B`
    with numpy broadcasting.

    ```mlir
    %c = onnx.Sub %a, %b : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_MulOp : ONNX_ArithOp<"Mul"> {
  let summary = "Elementwise multiplication with broadcasting";
  let description = [{
    [ONNX Mul](https://onnx.ai/onnx/operators/onnx__Mul.html): `C = A * B`
    with numpy broadcasting.

    ```mlir
    %c = onnx.Mul %a, %b : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_DivOp : ONNX_ArithOp<"Div"> {
  let summary = "Elementwise division with broadcasting";
  let description = [{
    [ONNX Div](https://onnx.ai/onnx/operators/onnx__Div.html): `C = A / B`
    with numpy broadcasting; integer division truncates.

    ```mlir
    %c = onnx.Div %a, %b : (tensor<2x64xf32>, tensor<2x1xf32>) -> tensor<2x64xf32>
    ```
  }];
}

def ONNX_ModOp : ONNX_ArithOp<"Mod"> {
  let summary = "Elementwise remainder with broadcasting";
  let description = [{
    [ONNX Mod](https://onnx.ai/onnx/operators/onnx__Mod.html): `C = A mod B`
    with numpy broadcasting. With `fmod = 0` (the default, and the only form
    the lowering emits, on integers) the remainder has the sign of the
    divisor, as Python's `%`; `fmod = 1` is C's `fmod`.

    ```mlir
    %c = onnx.Mod %a, %b : (tensor<1x32xi64>, tensor<i64>) -> tensor<1x32xi64>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$A, ONNX_Tensor:$B,
                   DefaultValuedAttr<I64Attr, "0">:$fmod);
}

def ONNX_PowOp : ONNX_PureOp<"Pow"> {
  let summary = "Elementwise power with broadcasting";
  let description = [{
    [ONNX Pow](https://onnx.ai/onnx/operators/onnx__Pow.html): `Z = X ^ Y`
    with numpy broadcasting. The exponent `Y` may have a different numeric
    element type than the base `X`; `Z` has the base's element type.

    ```mlir
    %z = onnx.Pow %x, %e : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$X, ONNX_Tensor:$Y);
  let results = (outs ONNX_Tensor:$Z);
  let hasVerifier = 1;
}

class ONNX_CompareOp<string mnemonic>
    : ONNX_BinaryOp<mnemonic, [SameOperandsElementType], ONNX_Tensor,
                    ONNX_BoolTensor>;

def ONNX_EqualOp : ONNX_CompareOp<"Equal"> {
  let summary = "Elementwise equality with broadcasting";
  let description = [{
    [ONNX Equal](https://onnx.ai/onnx/operators/onnx__Equal.html):
    `C = (A == B)` as `i1` (bool), with numpy broadcasting.

    ```mlir
    %c = onnx.Equal %a, %b : (tensor<1x8xi64>, tensor<i64>) -> tensor<1x8xi1>
    ```
  }];
}

def ONNX_LessOp : ONNX_CompareOp<"Less"> {
  let summary = "Elementwise less-than with broadcasting";
  let description = [{
    [ONNX Less](https://onnx.ai/onnx/operators/onnx__Less.html):
    `C = (A < B)` as `i1` (bool), with numpy broadcasting.

    ```mlir
    %c = onnx.Less %a, %b : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8x8xi1>
    ```
  }];
}

def ONNX_GreaterOp : ONNX_CompareOp<"Greater"> {
  let summary = "Elementwise greater-than with broadcasting";
  let description = [{
    [ONNX Greater](https://onnx.ai/onnx/operators/onnx__Greater.html):
    `C = (A > B)` as `i1` (bool), with numpy broadcasting.

    ```mlir
    %c = onnx.Greater %a, %b : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8x8xi1>
    ```
  }];
}

def ONNX_LessOrEqualOp : ONNX_CompareOp<"LessOrEqual"> {
  let summary = "Elementwise less-or-equal with broadcasting";
  let description = [{
    [ONNX LessOrEqual](https://onnx.ai/onnx/operators/onnx__LessOrEqual.html):
    `C = (A <= B)` as `i1` (bool), with numpy broadcasting.

    ```mlir
    %c = onnx.LessOrEqual %a, %b : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8x8xi1>
    ```
  }];
}

def ONNX_GreaterOrEqualOp : ONNX_CompareOp<"GreaterOrEqual"> {
  let summary = "Elementwise greater-or-equal with broadcasting";
  let description = [{
    [ONNX GreaterOrEqual](https://onnx.ai/onnx/operators/onnx__GreaterOrEqual.html):
    `C = (A >= B)` as `i1` (bool), with numpy broadcasting.

    ```mlir
    %c = onnx.GreaterOrEqual %a, %b : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8x8xi1>
    ```
  }];
}

def ONNX_AndOp : ONNX_BinaryOp<"And", [], ONNX_BoolTensor, ONNX_BoolTensor> {
  let summary = "Elementwise logical and with broadcasting";
  let description = [{
    [ONNX And](https://onnx.ai/onnx/operators/onnx__And.html): `C = A && B`
    on `i1` (bool) tensors, with numpy broadcasting.

    ```mlir
    %c = onnx.And %a, %b : (tensor<8x8xi1>, tensor<1x8xi1>) -> tensor<8x8xi1>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Where, Clip, Min, Max
//===----------------------------------------------------------------------===//

def ONNX_WhereOp : ONNX_PureOp<"Where"> {
  let summary = "Elementwise select with broadcasting";
  let description = [{
    [ONNX Where](https://onnx.ai/onnx/operators/onnx__Where.html):
    `output = condition ? X : Y`. `condition` is `i1` (bool); the three
    operands broadcast numpy-style to the output; `X`, `Y` and `output` share
    the element type. Attention masks are built with it.

    ```mlir
    %o = onnx.Where %m, %x, %y : (tensor<1x1x8x8xi1>, tensor<f32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins ONNX_BoolTensor:$condition, ONNX_Tensor:$X, ONNX_Tensor:$Y);
  let results = (outs ONNX_Tensor:$output);
  let hasVerifier = 1;
}

def ONNX_ClipOp : ONNX_Op<"Clip", [Pure, AttrSizedOperandSegments,
                                   SameOperandsAndResultElementType]> {
  let summary = "Elementwise clamp to [min, max]";
  let description = [{
    [ONNX Clip](https://onnx.ai/onnx/operators/onnx__Clip.html) (opset 13):
    `output = min(max(input, min), max)`. `min` and `max` are optional scalar
    (rank-0) inputs; either may be omitted independently, so the pretty form
    names them. Used for the fp16 clamp.

    ```mlir
    %o = onnx.Clip %x min %lo max %hi : (tensor<2x64xf16>, tensor<f16>, tensor<f16>) -> tensor<2x64xf16>
    %p = onnx.Clip %x max %hi : (tensor<2x64xf16>, tensor<f16>) -> tensor<2x64xf16>
    ```
  }];
  let arguments = (ins ONNX_Tensor:$input, Optional<ONNX_Tensor>:$min,
                   Optional<ONNX_Tensor>:$max);
  let results = (outs ONNX_Tensor:$output);
  let assemblyFormat = [{
    $input (`min` $min^)? (`max` $max^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def ONNX_MinOp : ONNX_PureOp<"Min", [SameOperandsAndResultElementType]> {
  let summary = "Elementwise minimum of its inputs, with broadcasting";
  let description = [{
    [ONNX Min](https://onnx.ai/onnx/operators/onnx__Min.html): the elementwise
    minimum of one or more inputs (`data_0`, ...), broadcast numpy-style.

    ```mlir
    %m = onnx.Min %a, %b : (tensor<2x64xf32>, tensor<f32>) -> tensor<2x64xf32>
    ```
  }];
  let arguments = (ins Variadic<ONNX_Tensor>:$data_0);
  let results = (outs ONNX_Tensor:$min);
  let hasVerifier = 1;
}

def ONNX_MaxOp : ONNX_PureOp<"Max", [SameOperandsAndResultElementType]> {
  let summary = "Elementwise maximum of its inputs, with broadcasting";
  let description = [{
    [ONNX Max](https://onnx.ai/onnx/operators/onnx__Max.html): the elementwise
    maximum of one or more inputs (`data_0`, ...), broadcast numpy-style.

    ```mlir
    %m = onnx.Max %a, %b, %c : (tensor<2x64xf32>, tensor<64xf32>, tensor<f32>) -> tensor<2x64xf32>
    ```
  }];
  let arguments = (ins Variadic<ONNX_Tensor>:$data_0);
  let results = (outs ONNX_Tensor:$max);
  let hasVerifier = 1;
}

#endif // QEFF_DIALECT_ONNX_MATHOPS_TD
