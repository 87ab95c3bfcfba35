// RUN: qeff-opt %s | qeff-opt | FileCheck %s
// RUN: qeff-opt %s --mlir-print-op-generic | qeff-opt | FileCheck %s
// RUN: qeff-opt %s --emit-bytecode | qeff-opt | FileCheck %s

// Every onnx op, parsed, printed and parsed again: through the pretty form,
// the generic form and bytecode. Attributes equal to their ONNX default are
// elided when printed.

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<2x64xf32>, %m: tensor<1x8xi1>) -> (tensor<2x64xf32>, tensor<1x8xi1>) {
  // CHECK: onnx.Sqrt %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %0 = onnx.Sqrt %x : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Reciprocal %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %1 = onnx.Reciprocal %0 : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Neg %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %2 = onnx.Neg %1 : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Exp %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %3 = onnx.Exp %2 : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Log %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %log = onnx.Log %3 : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Tanh %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %4 = onnx.Tanh %log : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Erf %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %5 = onnx.Erf %4 : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Sigmoid %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %6 = onnx.Sigmoid %5 : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Sin %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %7 = onnx.Sin %6 : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Cos %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %8 = onnx.Cos %7 : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Relu %{{.*}} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %9 = onnx.Relu %8 : (tensor<2x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.Not %{{.*}} : (tensor<1x8xi1>) -> tensor<1x8xi1>
  %10 = onnx.Not %m : (tensor<1x8xi1>) -> tensor<1x8xi1>
  return %9, %10 : tensor<2x64xf32>, tensor<1x8xi1>
}

// CHECK-LABEL: func.func @arith
func.func @arith(%a: tensor<2x1x64xf32>, %b: tensor<8x64xf32>, %s: tensor<f32>, %u: tensor<*xf32>) -> (tensor<2x8x64xf32>, tensor<*xf32>) {
  // CHECK: onnx.Add %{{.*}}, %{{.*}} : (tensor<2x1x64xf32>, tensor<8x64xf32>) -> tensor<2x8x64xf32>
  %0 = onnx.Add %a, %b : (tensor<2x1x64xf32>, tensor<8x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: onnx.Sub %{{.*}}, %{{.*}} : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  %1 = onnx.Sub %0, %s : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  // CHECK: onnx.Mul %{{.*}}, %{{.*}} : (tensor<2x8x64xf32>, tensor<8x64xf32>) -> tensor<2x8x64xf32>
  %2 = onnx.Mul %1, %b : (tensor<2x8x64xf32>, tensor<8x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: onnx.Div %{{.*}}, %{{.*}} : (tensor<2x8x64xf32>, tensor<2x1x64xf32>) -> tensor<2x8x64xf32>
  %3 = onnx.Div %2, %a : (tensor<2x8x64xf32>, tensor<2x1x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: onnx.Mod %{{.*}}, %{{.*}} : (tensor<2x8x64xf32>, tensor<2x1x64xf32>) -> tensor<2x8x64xf32>
  %mod = onnx.Mod %2, %a : (tensor<2x8x64xf32>, tensor<2x1x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: onnx.Mod %{{.*}}, %{{.*}} {fmod = 1 : i64}
  %fmod = onnx.Mod %mod, %a {fmod = 1 : i64} : (tensor<2x8x64xf32>, tensor<2x1x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: onnx.Pow %{{.*}}, %{{.*}} : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  %4 = onnx.Pow %3, %s : (tensor<2x8x64xf32>, tensor<f32>) -> tensor<2x8x64xf32>
  // CHECK: onnx.Add %{{.*}}, %{{.*}} : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
  %5 = onnx.Add %u, %s : (tensor<*xf32>, tensor<f32>) -> tensor<*xf32>
  return %4, %5 : tensor<2x8x64xf32>, tensor<*xf32>
}

// CHECK-LABEL: func.func @compare_logic
func.func @compare_logic(%a: tensor<8x1xi64>, %b: tensor<1x8xi64>, %s: tensor<i64>) -> tensor<8x8xi1> {
  // CHECK: onnx.Equal %{{.*}}, %{{.*}} : (tensor<8x1xi64>, tensor<i64>) -> tensor<8x1xi1>
  %0 = onnx.Equal %a, %s : (tensor<8x1xi64>, tensor<i64>) -> tensor<8x1xi1>
  // CHECK: onnx.Less %{{.*}}, %{{.*}} : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8x8xi1>
  %1 = onnx.Less %a, %b : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8x8xi1>
  // CHECK: onnx.Greater %{{.*}}, %{{.*}} : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8x8xi1>
  %2 = onnx.Greater %a, %b : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8x8xi1>
  // CHECK: onnx.LessOrEqual %{{.*}}, %{{.*}} : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8x8xi1>
  %3 = onnx.LessOrEqual %a, %b : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8x8xi1>
  // CHECK: onnx.GreaterOrEqual %{{.*}}, %{{.*}} : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<?x8xi1>
  %4 = onnx.GreaterOrEqual %a, %b : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<?x8xi1>
  // CHECK: onnx.And %{{.*}}, %{{.*}} : (tensor<8x8xi1>, tensor<8x1xi1>) -> tensor<8x8xi1>
  %5 = onnx.And %1, %0 : (tensor<8x8xi1>, tensor<8x1xi1>) -> tensor<8x8xi1>
  // CHECK: onnx.And %{{.*}}, %{{.*}} : (tensor<8x8xi1>, tensor<8x8xi1>) -> tensor<8x8xi1>
  %6 = onnx.And %5, %2 : (tensor<8x8xi1>, tensor<8x8xi1>) -> tensor<8x8xi1>
  // CHECK: onnx.And %{{.*}}, %{{.*}} : (tensor<8x8xi1>, tensor<8x8xi1>) -> tensor<8x8xi1>
  %7 = onnx.And %6, %3 : (tensor<8x8xi1>, tensor<8x8xi1>) -> tensor<8x8xi1>
  // CHECK: onnx.And %{{.*}}, %{{.*}} : (tensor<8x8xi1>, tensor<?x8xi1>) -> tensor<8x8xi1>
  %8 = onnx.And %7, %4 : (tensor<8x8xi1>, tensor<?x8xi1>) -> tensor<8x8xi1>
  return %8 : tensor<8x8xi1>
}

// CHECK-LABEL: func.func @select_clip_minmax
func.func @select_clip_minmax(%m: tensor<1x1x8x8xi1>, %x: tensor<f16>, %y: tensor<2x4x8x8xf16>, %lo: tensor<f16>, %hi: tensor<f16>) -> tensor<2x4x8x8xf16> {
  // CHECK: onnx.Where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x1x8x8xi1>, tensor<f16>, tensor<2x4x8x8xf16>) -> tensor<2x4x8x8xf16>
  %0 = onnx.Where %m, %x, %y : (tensor<1x1x8x8xi1>, tensor<f16>, tensor<2x4x8x8xf16>) -> tensor<2x4x8x8xf16>
  // CHECK: onnx.Clip %{{.*}} min %{{.*}} max %{{.*}} : (tensor<2x4x8x8xf16>, tensor<f16>, tensor<f16>) -> tensor<2x4x8x8xf16>
  %1 = onnx.Clip %0 min %lo max %hi : (tensor<2x4x8x8xf16>, tensor<f16>, tensor<f16>) -> tensor<2x4x8x8xf16>
  // CHECK: onnx.Clip %{{.*}} max %{{.*}} : (tensor<2x4x8x8xf16>, tensor<f16>) -> tensor<2x4x8x8xf16>
  %2 = onnx.Clip %1 max %hi : (tensor<2x4x8x8xf16>, tensor<f16>) -> tensor<2x4x8x8xf16>
  // CHECK: onnx.Clip %{{.*}} min %{{.*}} : (tensor<2x4x8x8xf16>, tensor<f16>) -> tensor<2x4x8x8xf16>
  %3 = onnx.Clip %2 min %lo : (tensor<2x4x8x8xf16>, tensor<f16>) -> tensor<2x4x8x8xf16>
  // CHECK: onnx.Clip %{{.*}} : (tensor<2x4x8x8xf16>) -> tensor<2x4x8x8xf16>
  %4 = onnx.Clip %3 : (tensor<2x4x8x8xf16>) -> tensor<2x4x8x8xf16>
  // CHECK: onnx.Min %{{.*}}, %{{.*}} : (tensor<2x4x8x8xf16>, tensor<f16>) -> tensor<2x4x8x8xf16>
  %5 = onnx.Min %4, %lo : (tensor<2x4x8x8xf16>, tensor<f16>) -> tensor<2x4x8x8xf16>
  // CHECK: onnx.Max %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x4x8x8xf16>, tensor<f16>, tensor<f16>) -> tensor<2x4x8x8xf16>
  %6 = onnx.Max %5, %hi, %x : (tensor<2x4x8x8xf16>, tensor<f16>, tensor<f16>) -> tensor<2x4x8x8xf16>
  return %6 : tensor<2x4x8x8xf16>
}

// CHECK-LABEL: func.func @matmul_gemm
func.func @matmul_gemm(%a: tensor<?x?x64xf32>, %b: tensor<64x128xf32>, %v: tensor<64xf32>, %g: tensor<4x64xf32>, %w: tensor<128x64xf32>, %c: tensor<128xf32>) -> (tensor<?x?x128xf32>, tensor<?x?xf32>, tensor<4x128xf32>, tensor<4x128xf32>) {
  // CHECK: onnx.MatMul %{{.*}}, %{{.*}} : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
  %0 = onnx.MatMul %a, %b : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
  // CHECK: onnx.MatMul %{{.*}}, %{{.*}} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?xf32>
  %1 = onnx.MatMul %a, %v : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?xf32>
  // CHECK: onnx.Gemm %{{.*}}, %{{.*}}, %{{.*}} {transB = 1 : i64} : (tensor<4x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<4x128xf32>
  %2 = onnx.Gemm %g, %w, %c {transB = 1 : i64} : (tensor<4x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<4x128xf32>
  // CHECK: onnx.Gemm %{{.*}}, %{{.*}} {alpha = 5.000000e-01 : f32, beta = 0.000000e+00 : f32} : (tensor<4x64xf32>, tensor<64x128xf32>) -> tensor<4x128xf32>
  %3 = onnx.Gemm %g, %b {alpha = 5.000000e-01 : f32, beta = 0.000000e+00 : f32, transA = 0 : i64} : (tensor<4x64xf32>, tensor<64x128xf32>) -> tensor<4x128xf32>
  return %0, %1, %2, %3 : tensor<?x?x128xf32>, tensor<?x?xf32>, tensor<4x128xf32>, tensor<4x128xf32>
}

// CHECK-LABEL: func.func @softmax_reduce
func.func @softmax_reduce(%x: tensor<2x8x64xf32>, %axes: tensor<1xi64>) -> (tensor<2x8x64xf32>, tensor<2x8x1xf32>, tensor<2x64xf32>, tensor<2x8xf32>, tensor<1x1x1xf32>) {
  // CHECK: onnx.Softmax %{{.*}} : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %0 = onnx.Softmax %x {axis = -1 : i64} : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  // CHECK: onnx.ReduceMean %{{.*}} {axes = array<i64: -1>} : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
  %1 = onnx.ReduceMean %0 {axes = array<i64: -1>} : (tensor<2x8x64xf32>) -> tensor<2x8x1xf32>
  // CHECK: onnx.ReduceMax %{{.*}} {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x8x64xf32>) -> tensor<2x64xf32>
  %2 = onnx.ReduceMax %0 {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x8x64xf32>) -> tensor<2x64xf32>
  // CHECK: onnx.ReduceSum %{{.*}}, %{{.*}} {keepdims = 0 : i64} : (tensor<2x8x64xf32>, tensor<1xi64>) -> tensor<2x8xf32>
  %3 = onnx.ReduceSum %0, %axes {keepdims = 0 : i64} : (tensor<2x8x64xf32>, tensor<1xi64>) -> tensor<2x8xf32>
  // CHECK: onnx.ReduceSum %{{.*}} : (tensor<2x8x64xf32>) -> tensor<1x1x1xf32>
  %4 = onnx.ReduceSum %0 : (tensor<2x8x64xf32>) -> tensor<1x1x1xf32>
  // CHECK: onnx.ReduceMean %{{.*}} : (tensor<2x8x64xf32>) -> tensor<1x1x1xf32>
  %5 = onnx.ReduceMean %0 : (tensor<2x8x64xf32>) -> tensor<1x1x1xf32>
  // CHECK: onnx.ReduceSum %{{.*}} {keepdims = 0 : i64, noop_with_empty_axes = 1 : i64} : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  %6 = onnx.ReduceSum %0 {noop_with_empty_axes = 1 : i64, keepdims = 0 : i64} : (tensor<2x8x64xf32>) -> tensor<2x8x64xf32>
  return %6, %1, %2, %3, %4 : tensor<2x8x64xf32>, tensor<2x8x1xf32>, tensor<2x64xf32>, tensor<2x8xf32>, tensor<1x1x1xf32>
}

// CHECK-LABEL: func.func @argmax_topk_cumsum
func.func @argmax_topk_cumsum(%l: tensor<1x1x384xf32>, %x: tensor<4x8xf32>, %k: tensor<1xi64>, %p: tensor<1x8xi64>, %ax: tensor<i64>) -> (tensor<1x1xi64>, tensor<4x2xf32>, tensor<4x2xi64>, tensor<1x8xi64>) {
  // CHECK: onnx.ArgMax %{{.*}} {axis = -1 : i64, keepdims = 0 : i64} : (tensor<1x1x384xf32>) -> tensor<1x1xi64>
  %0 = onnx.ArgMax %l {axis = -1 : i64, keepdims = 0 : i64} : (tensor<1x1x384xf32>) -> tensor<1x1xi64>
  // CHECK: onnx.ArgMax %{{.*}} {axis = 2 : i64, select_last_index = 1 : i64} : (tensor<1x1x384xf32>) -> tensor<1x1x1xi64>
  %1 = onnx.ArgMax %l {axis = 2 : i64, select_last_index = 1 : i64} : (tensor<1x1x384xf32>) -> tensor<1x1x1xi64>
  // CHECK: onnx.TopK %{{.*}}, %{{.*}} : (tensor<4x8xf32>, tensor<1xi64>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  %v, %i = onnx.TopK %x, %k {axis = -1 : i64, largest = 1 : i64, sorted = 1 : i64} : (tensor<4x8xf32>, tensor<1xi64>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  // CHECK: onnx.CumSum %{{.*}}, %{{.*}} {exclusive = 1 : i64} : (tensor<1x8xi64>, tensor<i64>) -> tensor<1x8xi64>
  %2 = onnx.CumSum %p, %ax {exclusive = 1 : i64, reverse = 0 : i64} : (tensor<1x8xi64>, tensor<i64>) -> tensor<1x8xi64>
  return %0, %v, %i, %2 : tensor<1x1xi64>, tensor<4x2xf32>, tensor<4x2xi64>, tensor<1x8xi64>
}

// CHECK-LABEL: func.func @layer_norm
func.func @layer_norm(%x: tensor<2x8x64xf32>, %g: tensor<64xf32>, %b: tensor<64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>) {
  // CHECK: onnx.LayerNormalization %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  %0 = onnx.LayerNormalization %x, %g, %b {epsilon = 9.99999974E-6 : f32} : (tensor<2x8x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<2x8x64xf32>
  // CHECK: onnx.LayerNormalization %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  %1:3 = onnx.LayerNormalization %0, %g {axis = 2 : i64, stash_type = 1 : i64} : (tensor<2x8x64xf32>, tensor<64xf32>) -> (tensor<2x8x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>)
  return %1#0, %1#1, %1#2 : tensor<2x8x64xf32>, tensor<2x8x1xf32>, tensor<2x8x1xf32>
}

// CHECK-LABEL: func.func @gather_scatter
func.func @gather_scatter(%t: tensor<384x64xf32>, %ids: tensor<1x8xi64>, %d: tensor<2x8x64xf32>, %i3: tensor<2x1x1xi64>, %e: tensor<2x8xf32>, %ie: tensor<2x1xi64>, %ue: tensor<2x1xf32>, %cache: tensor<1x4x32x16xf32>, %ci: tensor<1x4x8x3xi64>, %kv: tensor<1x4x8x16xf32>) -> (tensor<1x8x64xf32>, tensor<2x1x64xf32>, tensor<2x1xf32>, tensor<1x4x32x16xf32>, tensor<2x8xf32>) {
  // CHECK: onnx.Gather %{{.*}}, %{{.*}} : (tensor<384x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
  %0 = onnx.Gather %t, %ids {axis = 0 : i64} : (tensor<384x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
  // CHECK: onnx.GatherND %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<2x8x64xf32>, tensor<2x1x1xi64>) -> tensor<2x1x64xf32>
  %1 = onnx.GatherND %d, %i3 {batch_dims = 1 : i64} : (tensor<2x8x64xf32>, tensor<2x1x1xi64>) -> tensor<2x1x64xf32>
  // CHECK: onnx.GatherElements %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2x1xi64>) -> tensor<2x1xf32>
  %2 = onnx.GatherElements %e, %ie {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2x1xi64>) -> tensor<2x1xf32>
  // CHECK: onnx.ScatterND %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x4x32x16xf32>, tensor<1x4x8x3xi64>, tensor<1x4x8x16xf32>) -> tensor<1x4x32x16xf32>
  %3 = onnx.ScatterND %cache, %ci, %kv : (tensor<1x4x32x16xf32>, tensor<1x4x8x3xi64>, tensor<1x4x8x16xf32>) -> tensor<1x4x32x16xf32>
  // CHECK: onnx.ScatterND %{{.*}}, %{{.*}}, %{{.*}} {reduction = "add"} : (tensor<1x4x32x16xf32>, tensor<1x4x8x3xi64>, tensor<1x4x8x16xf32>) -> tensor<1x4x32x16xf32>
  %4 = onnx.ScatterND %3, %ci, %kv {reduction = "add"} : (tensor<1x4x32x16xf32>, tensor<1x4x8x3xi64>, tensor<1x4x8x16xf32>) -> tensor<1x4x32x16xf32>
  // CHECK: onnx.ScatterElements %{{.*}}, %{{.*}}, %{{.*}} {axis = 1 : i64, reduction = "mul"} : (tensor<2x8xf32>, tensor<2x1xi64>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %5 = onnx.ScatterElements %e, %ie, %ue {axis = 1 : i64, reduction = "mul"} : (tensor<2x8xf32>, tensor<2x1xi64>, tensor<2x1xf32>) -> tensor<2x8xf32>
  return %0, %1, %2, %4, %5 : tensor<1x8x64xf32>, tensor<2x1x64xf32>, tensor<2x1xf32>, tensor<1x4x32x16xf32>, tensor<2x8xf32>
}

// CHECK-LABEL: func.func @reshape_transpose_concat
func.func @reshape_transpose_concat(%x: tensor<1x8x64xf32>, %s: tensor<4xi64>, %past: tensor<1x4x8x16xf32>) -> (tensor<1x4x8x16xf32>, tensor<?x?x?x?xf32>) {
  // CHECK: onnx.Reshape %{{.*}}, %{{.*}} : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<1x8x4x16xf32>
  %0 = onnx.Reshape %x, %s : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<1x8x4x16xf32>
  // CHECK: onnx.Reshape %{{.*}}, %{{.*}} {allowzero = 1 : i64} : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  %1 = onnx.Reshape %x, %s {allowzero = 1 : i64} : (tensor<1x8x64xf32>, tensor<4xi64>) -> tensor<?x?x?x?xf32>
  // CHECK: onnx.Transpose %{{.*}} {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x4x16xf32>) -> tensor<1x4x8x16xf32>
  %2 = onnx.Transpose %0 {perm = array<i64: 0, 2, 1, 3>} : (tensor<1x8x4x16xf32>) -> tensor<1x4x8x16xf32>
  // CHECK: onnx.Transpose %{{.*}} : (tensor<1x4x8x16xf32>) -> tensor<16x8x4x1xf32>
  %3 = onnx.Transpose %2 : (tensor<1x4x8x16xf32>) -> tensor<16x8x4x1xf32>
  // CHECK: onnx.Concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x24x16xf32>
  %4 = onnx.Concat %past, %2, %past {axis = 2 : i64} : (tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<1x4x24x16xf32>
  // CHECK: onnx.Concat %{{.*}}, %{{.*}} {axis = -2 : i64} : (tensor<1x4x8x16xf32>, tensor<1x4x24x16xf32>) -> tensor<1x4x?x16xf32>
  %5 = onnx.Concat %past, %4 {axis = -2 : i64} : (tensor<1x4x8x16xf32>, tensor<1x4x24x16xf32>) -> tensor<1x4x?x16xf32>
  // CHECK: onnx.Concat %{{.*}} {axis = 2 : i64} : (tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  %6 = onnx.Concat %past {axis = 2 : i64} : (tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32>
  return %6, %1 : tensor<1x4x8x16xf32>, tensor<?x?x?x?xf32>
}

// CHECK-LABEL: func.func @split_slice
func.func @split_slice(%x: tensor<2x128xf32>, %sizes: tensor<2xi64>, %st: tensor<1xi64>, %en: tensor<1xi64>, %ax: tensor<1xi64>, %sp: tensor<1xi32>) -> (tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x32xf32>, tensor<2x?xf32>) {
  // CHECK: onnx.Split %{{.*}}, %{{.*}} {axis = -1 : i64} : (tensor<2x128xf32>, tensor<2xi64>) -> (tensor<2x64xf32>, tensor<2x64xf32>)
  %0:2 = onnx.Split %x, %sizes {axis = -1 : i64} : (tensor<2x128xf32>, tensor<2xi64>) -> (tensor<2x64xf32>, tensor<2x64xf32>)
  // CHECK: onnx.Split %{{.*}} {axis = 1 : i64} : (tensor<2x128xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>)
  %1:4 = onnx.Split %x {axis = 1 : i64} : (tensor<2x128xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>)
  // CHECK: onnx.Slice %{{.*}}, %{{.*}}, %{{.*}} axes %{{.*}} : (tensor<2x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xf32>
  %2 = onnx.Slice %x, %st, %en axes %ax : (tensor<2x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xf32>
  // CHECK: onnx.Slice %{{.*}}, %{{.*}}, %{{.*}} steps %{{.*}} : (tensor<2x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xf32>
  %3 = onnx.Slice %x, %st, %en steps %ax : (tensor<2x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xf32>
  // CHECK: onnx.Slice %{{.*}}, %{{.*}}, %{{.*}} axes %{{.*}} steps %{{.*}} : (tensor<2x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xf32>
  %4 = onnx.Slice %x, %st, %en axes %ax steps %ax : (tensor<2x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2x?xf32>
  // CHECK: onnx.Slice %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x128xf32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?x128xf32>
  %5 = onnx.Slice %x, %sp, %sp : (tensor<2x128xf32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?x128xf32>
  return %0#0, %0#1, %1#3, %4 : tensor<2x64xf32>, tensor<2x64xf32>, tensor<2x32xf32>, tensor<2x?xf32>
}

// CHECK-LABEL: func.func @squeeze_unsqueeze_expand
func.func @squeeze_unsqueeze_expand(%x: tensor<1x8x1xf32>, %a1: tensor<1xi64>, %m: tensor<1x8xi1>, %a2: tensor<2xi64>, %kv: tensor<1x2x1x8x16xf32>, %s5: tensor<5xi64>) -> (tensor<1x8xf32>, tensor<8xf32>, tensor<1x1x1x8xi1>, tensor<1x2x2x8x16xf32>) {
  // CHECK: onnx.Squeeze %{{.*}}, %{{.*}} : (tensor<1x8x1xf32>, tensor<1xi64>) -> tensor<1x8xf32>
  %0 = onnx.Squeeze %x, %a1 : (tensor<1x8x1xf32>, tensor<1xi64>) -> tensor<1x8xf32>
  // CHECK: onnx.Squeeze %{{.*}} : (tensor<1x8x1xf32>) -> tensor<8xf32>
  %1 = onnx.Squeeze %x : (tensor<1x8x1xf32>) -> tensor<8xf32>
  // CHECK: onnx.Unsqueeze %{{.*}}, %{{.*}} : (tensor<1x8xi1>, tensor<2xi64>) -> tensor<1x1x1x8xi1>
  %2 = onnx.Unsqueeze %m, %a2 : (tensor<1x8xi1>, tensor<2xi64>) -> tensor<1x1x1x8xi1>
  // CHECK: onnx.Expand %{{.*}}, %{{.*}} : (tensor<1x2x1x8x16xf32>, tensor<5xi64>) -> tensor<1x2x2x8x16xf32>
  %3 = onnx.Expand %kv, %s5 : (tensor<1x2x1x8x16xf32>, tensor<5xi64>) -> tensor<1x2x2x8x16xf32>
  return %0, %1, %2, %3 : tensor<1x8xf32>, tensor<8xf32>, tensor<1x1x1x8xi1>, tensor<1x2x2x8x16xf32>
}

// CHECK-LABEL: func.func @trilu_cast
func.func @trilu_cast(%x: tensor<8x8xf32>, %k: tensor<i64>, %y: tensor<2x64xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x64xf16>, tensor<2x64xi1>) {
  // CHECK: onnx.Trilu %{{.*}}, %{{.*}} {upper = 0 : i64} : (tensor<8x8xf32>, tensor<i64>) -> tensor<8x8xf32>
  %0 = onnx.Trilu %x, %k {upper = 0 : i64} : (tensor<8x8xf32>, tensor<i64>) -> tensor<8x8xf32>
  // CHECK: onnx.Trilu %{{.*}} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  %1 = onnx.Trilu %x : (tensor<8x8xf32>) -> tensor<8x8xf32>
  // CHECK: onnx.Cast %{{.*}} {to = f16} : (tensor<2x64xf32>) -> tensor<2x64xf16>
  %2 = onnx.Cast %y {to = f16} : (tensor<2x64xf32>) -> tensor<2x64xf16>
  // CHECK: onnx.Cast %{{.*}} {to = i1} : (tensor<2x64xf32>) -> tensor<2x64xi1>
  %3 = onnx.Cast %y {to = i1} : (tensor<2x64xf32>) -> tensor<2x64xi1>
  return %0, %1, %2, %3 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<2x64xf16>, tensor<2x64xi1>
}

// CHECK-LABEL: func.func @range_shape_constants
func.func @range_shape_constants(%s: tensor<i64>, %l: tensor<i64>, %d: tensor<i64>, %x: tensor<1x8x64xf32>) -> (tensor<?xi64>, tensor<3xi64>, tensor<2xi64>, tensor<1xi64>, tensor<1x8xi64>, tensor<?x?xf32>, tensor<3xi64>) {
  // CHECK: onnx.Range %{{.*}}, %{{.*}}, %{{.*}} : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %0 = onnx.Range %s, %l, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  // CHECK: onnx.Shape %{{.*}} : (tensor<1x8x64xf32>) -> tensor<3xi64>
  %1 = onnx.Shape %x : (tensor<1x8x64xf32>) -> tensor<3xi64>
  // CHECK: onnx.Shape %{{.*}} {start = 1 : i64} : (tensor<1x8x64xf32>) -> tensor<2xi64>
  %2 = onnx.Shape %x {start = 1 : i64} : (tensor<1x8x64xf32>) -> tensor<2xi64>
  // CHECK: onnx.Shape %{{.*}} {end = -2 : i64} : (tensor<1x8x64xf32>) -> tensor<1xi64>
  %3 = onnx.Shape %x {end = -2 : i64, start = 0 : i64} : (tensor<1x8x64xf32>) -> tensor<1xi64>
  // CHECK: onnx.Constant dense<[1, 8]> : tensor<2xi64>
  %c = onnx.Constant dense<[1, 8]> : tensor<2xi64>
  // CHECK: onnx.ConstantOfShape %{{.*}} {value = dense<0> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<1x8xi64>
  %4 = onnx.ConstantOfShape %c {value = dense<0> : tensor<1xi64>} : (tensor<2xi64>) -> tensor<1x8xi64>
  // CHECK: onnx.ConstantOfShape %{{.*}} : (tensor<2xi64>) -> tensor<?x?xf32>
  %5 = onnx.ConstantOfShape %c : (tensor<2xi64>) -> tensor<?x?xf32>
  // CHECK: onnx.Constant dense_resource<onnx_perm> : tensor<3xi64>
  %6 = onnx.Constant dense_resource<onnx_perm> : tensor<3xi64>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<?xi64>, tensor<3xi64>, tensor<2xi64>, tensor<1xi64>, tensor<1x8xi64>, tensor<?x?xf32>, tensor<3xi64>
}

// CHECK-LABEL: func.func @generic
func.func @generic(%x: tensor<4xf32>) -> tensor<4xf32> {
  // CHECK: onnx.Generic "Gelu"(%{{.*}}) {domain = "com.microsoft", onnx_attributes = {approximate = "tanh"}} : (tensor<4xf32>) -> tensor<4xf32>
  %0 = onnx.Generic "Gelu" (%x) {domain = "com.microsoft", onnx_attributes = {approximate = "tanh"}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      onnx_perm: "0x08000000000000000000000002000000000000000100000000000000"
    }
  }
#-}

// Unranked and dynamic operands: the verifiers accept whatever could be valid
// at run time.
// CHECK-LABEL: func.func @unranked
func.func @unranked(%u: tensor<*xf32>, %i: tensor<*xi64>, %d: tensor<?x?xf32>, %s: tensor<?xi64>) -> tensor<*xf32> {
  // CHECK: onnx.MatMul %{{.*}}, %{{.*}} : (tensor<*xf32>, tensor<?x?xf32>) -> tensor<*xf32>
  %0 = onnx.MatMul %u, %d : (tensor<*xf32>, tensor<?x?xf32>) -> tensor<*xf32>
  // CHECK: onnx.Gemm %{{.*}}, %{{.*}}, %{{.*}} : (tensor<*xf32>, tensor<?x?xf32>, tensor<*xf32>) -> tensor<?x?xf32>
  %1 = onnx.Gemm %0, %d, %u : (tensor<*xf32>, tensor<?x?xf32>, tensor<*xf32>) -> tensor<?x?xf32>
  // CHECK: onnx.Gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<?x?xf32>, tensor<*xi64>) -> tensor<*xf32>
  %2 = onnx.Gather %1, %i {axis = 1 : i64} : (tensor<?x?xf32>, tensor<*xi64>) -> tensor<*xf32>
  // CHECK: onnx.Transpose %{{.*}} {perm = array<i64: 1, 0>} : (tensor<*xf32>) -> tensor<*xf32>
  %3 = onnx.Transpose %2 {perm = array<i64: 1, 0>} : (tensor<*xf32>) -> tensor<*xf32>
  // CHECK: onnx.Concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<*xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %4 = onnx.Concat %3, %d {axis = 0 : i64} : (tensor<*xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  // CHECK: onnx.Split %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?xi64>) -> (tensor<?x?xf32>, tensor<*xf32>)
  %5:2 = onnx.Split %4, %s {axis = 1 : i64} : (tensor<?x?xf32>, tensor<?xi64>) -> (tensor<?x?xf32>, tensor<*xf32>)
  // CHECK: onnx.Reshape %{{.*}}, %{{.*}} : (tensor<*xf32>, tensor<?xi64>) -> tensor<*xf32>
  %6 = onnx.Reshape %5#1, %s : (tensor<*xf32>, tensor<?xi64>) -> tensor<*xf32>
  // CHECK: onnx.Where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<*xi1>, tensor<*xf32>, tensor<?x?xf32>) -> tensor<*xf32>
  %m = onnx.Cast %i {to = i1} : (tensor<*xi64>) -> tensor<*xi1>
  %7 = onnx.Where %m, %6, %d : (tensor<*xi1>, tensor<*xf32>, tensor<?x?xf32>) -> tensor<*xf32>
  // CHECK: onnx.LayerNormalization %{{.*}}, %{{.*}} : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  %8 = onnx.LayerNormalization %7, %u : (tensor<*xf32>, tensor<*xf32>) -> tensor<*xf32>
  return %8 : tensor<*xf32>
}
