// RUN: qeff-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of the onnx dialect (ONNXOps.cpp and
// ONNXVerifiers.cpp), plus a few of the ODS type constraints.

//===----------------------------------------------------------------------===//
// Broadcasting and element types
//===----------------------------------------------------------------------===//

func.func @add_not_broadcastable(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'onnx.Add' op operands #0 and #1 are not broadcastable: shapes [2, 3] and [4]}}
  %0 = onnx.Add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @mul_result_shape(%a: tensor<2x1xf32>, %b: tensor<4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'onnx.Mul' op result shape [2, 5] does not match the broadcast operand shape [2, 4]}}
  %0 = onnx.Mul %a, %b : (tensor<2x1xf32>, tensor<4xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @less_result_rank(%a: tensor<8x1xi64>, %b: tensor<1x8xi64>) -> tensor<8xi1> {
  // expected-error @+1 {{'onnx.Less' op result shape [8] does not match the broadcast operand shape [8, 8]}}
  %0 = onnx.Less %a, %b : (tensor<8x1xi64>, tensor<1x8xi64>) -> tensor<8xi1>
  return %0 : tensor<8xi1>
}

// -----

func.func @equal_result_not_bool(%a: tensor<8xi64>, %b: tensor<8xi64>) -> tensor<8xi64> {
  // expected-error @+1 {{'onnx.Equal' op result #0 must be tensor of 1-bit signless integer values}}
  %0 = onnx.Equal %a, %b : (tensor<8xi64>, tensor<8xi64>) -> tensor<8xi64>
  return %0 : tensor<8xi64>
}

// -----

func.func @sub_element_types(%a: tensor<8xf32>, %b: tensor<8xf16>) -> tensor<8xf32> {
  // expected-error @+1 {{'onnx.Sub' op requires the same element type for all operands and results}}
  %0 = onnx.Sub %a, %b : (tensor<8xf32>, tensor<8xf16>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @pow_result_element_type(%x: tensor<8xf32>, %y: tensor<f32>) -> tensor<8xf16> {
  // expected-error @+1 {{'onnx.Pow' op 'Z' element type 'f16' does not match 'X' element type 'f32'}}
  %0 = onnx.Pow %x, %y : (tensor<8xf32>, tensor<f32>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

func.func @where_branch_types(%c: tensor<8xi1>, %x: tensor<8xf32>, %y: tensor<8xf16>) -> tensor<8xf32> {
  // expected-error @+1 {{'onnx.Where' op 'Y' element type 'f16' does not match 'X' element type 'f32'}}
  %0 = onnx.Where %c, %x, %y : (tensor<8xi1>, tensor<8xf32>, tensor<8xf16>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @where_not_broadcastable(%c: tensor<3xi1>, %x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'onnx.Where' op operands #0 and #1 are not broadcastable: shapes [3] and [8]}}
  %0 = onnx.Where %c, %x, %y : (tensor<3xi1>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @where_condition_not_bool(%c: tensor<8xi8>, %x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'onnx.Where' op operand #0 must be tensor of 1-bit signless integer values}}
  %0 = onnx.Where %c, %x, %x : (tensor<8xi8>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @clip_bounds_not_scalar(%x: tensor<8xf16>, %lo: tensor<1xf16>) -> tensor<8xf16> {
  // expected-error @+1 {{'onnx.Clip' op operand 'min' must have rank 0, got rank 1}}
  %0 = onnx.Clip %x min %lo : (tensor<8xf16>, tensor<1xf16>) -> tensor<8xf16>
  return %0 : tensor<8xf16>
}

// -----

func.func @clip_result_shape(%x: tensor<8xf16>) -> tensor<4xf16> {
  // expected-error @+1 {{'onnx.Clip' op result shape [4] is incompatible with the expected [8]}}
  %0 = onnx.Clip %x : (tensor<8xf16>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

func.func @max_no_inputs() -> tensor<8xf32> {
  // expected-error @+1 {{'onnx.Max' op expected 1 or more operands, but found 0}}
  %0 = onnx.Max : () -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @min_not_broadcastable(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'onnx.Min' op operands #0 and #1 are not broadcastable: shapes [2] and [3]}}
  %0 = onnx.Min %a, %b : (tensor<2xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// MatMul, Gemm
//===----------------------------------------------------------------------===//

func.func @matmul_inner_dims(%a: tensor<4x64xf32>, %b: tensor<32x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'onnx.MatMul' op inner dimensions disagree: K is 64 for 'A' and 32 for 'B'}}
  %0 = onnx.MatMul %a, %b : (tensor<4x64xf32>, tensor<32x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @matmul_scalar(%a: tensor<f32>, %b: tensor<4xf32>) -> tensor<f32> {
  // expected-error @+1 {{'onnx.MatMul' op operand 'A' must have rank >= 1, got rank 0}}
  %0 = onnx.MatMul %a, %b : (tensor<f32>, tensor<4xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @matmul_batch(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) -> tensor<2x4x4xf32> {
  // expected-error @+1 {{'onnx.MatMul' op batch dimensions of 'A' [2] and 'B' [3] do not broadcast}}
  %0 = onnx.MatMul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x4xf32>) -> tensor<2x4x4xf32>
  return %0 : tensor<2x4x4xf32>
}

// -----

func.func @matmul_result(%a: tensor<2x4x8xf32>, %b: tensor<8xf32>) -> tensor<2x4x1xf32> {
  // expected-error @+1 {{'onnx.MatMul' op result shape [2, 4, 1] is incompatible with the expected [2, 4]}}
  %0 = onnx.MatMul %a, %b : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x1xf32>
  return %0 : tensor<2x4x1xf32>
}

// -----

func.func @gemm_flag(%a: tensor<4x64xf32>, %b: tensor<64x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'onnx.Gemm' op 'transA' must be 0 or 1, got 2}}
  %0 = onnx.Gemm %a, %b {transA = 2 : i64} : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x4x64xf32>, %b: tensor<64x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'onnx.Gemm' op operand 'A' must have rank 2, got rank 3}}
  %0 = onnx.Gemm %a, %b : (tensor<2x4x64xf32>, tensor<64x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @gemm_trans_inner(%a: tensor<4x64xf32>, %b: tensor<64x8xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{'onnx.Gemm' op inner dimensions disagree: K is 64 for 'A' and 8 for 'B'}}
  %0 = onnx.Gemm %a, %b {transB = 1 : i64} : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

func.func @gemm_bias(%a: tensor<4x64xf32>, %b: tensor<64x8xf32>, %c: tensor<3xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'onnx.Gemm' op operand 'C' of shape [3] does not broadcast to [4, 8]}}
  %0 = onnx.Gemm %a, %b, %c : (tensor<4x64xf32>, tensor<64x8xf32>, tensor<3xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @gemm_result(%a: tensor<4x64xf32>, %b: tensor<64x8xf32>) -> tensor<4x9xf32> {
  // expected-error @+1 {{'onnx.Gemm' op result shape [4, 9] is incompatible with the expected [4, 8]}}
  %0 = onnx.Gemm %a, %b : (tensor<4x64xf32>, tensor<64x8xf32>) -> tensor<4x9xf32>
  return %0 : tensor<4x9xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Softmax, reductions, ArgMax, TopK, CumSum, LayerNormalization
//===----------------------------------------------------------------------===//

func.func @softmax_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'onnx.Softmax' op 'axis' = 2 is out of range [-2, 1] for rank 2}}
  %0 = onnx.Softmax %x {axis = 2 : i64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @reduce_mean_axes_range(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'onnx.ReduceMean' op 'axes' = -3 is out of range [-2, 1] for rank 2}}
  %0 = onnx.ReduceMean %x {axes = array<i64: -3>} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_max_axes_twice(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'onnx.ReduceMax' op 'axes' names axis 1 twice}}
  %0 = onnx.ReduceMax %x {axes = array<i64: 1, -1>} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_mean_result(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'onnx.ReduceMean' op result shape [2, 1] is incompatible with the expected [2]}}
  %0 = onnx.ReduceMean %x {axes = array<i64: 1>, keepdims = 0 : i64} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_mean_keepdims(%x: tensor<2x8xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'onnx.ReduceMean' op 'keepdims' must be 0 or 1, got -1}}
  %0 = onnx.ReduceMean %x {axes = array<i64: 1>, keepdims = -1 : i64} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @reduce_sum_keepdims_rank(%x: tensor<2x8xf32>, %axes: tensor<1xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.ReduceSum' op result rank 1 does not match the expected rank 2 (keepdims = 1)}}
  %0 = onnx.ReduceSum %x, %axes : (tensor<2x8xf32>, tensor<1xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_sum_axes_rank(%x: tensor<2x8xf32>, %axes: tensor<1x1xi64>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'onnx.ReduceSum' op operand 'axes' must have rank 1, got rank 2}}
  %0 = onnx.ReduceSum %x, %axes : (tensor<2x8xf32>, tensor<1x1xi64>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @argmax_axis(%x: tensor<2x8xf32>) -> tensor<2x1xi64> {
  // expected-error @+1 {{'onnx.ArgMax' op 'axis' = 5 is out of range [-2, 1] for rank 2}}
  %0 = onnx.ArgMax %x {axis = 5 : i64} : (tensor<2x8xf32>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// -----

func.func @argmax_result(%x: tensor<2x8xf32>) -> tensor<2x1xi64> {
  // expected-error @+1 {{'onnx.ArgMax' op result shape [2, 1] is incompatible with the expected [2]}}
  %0 = onnx.ArgMax %x {axis = 1 : i64, keepdims = 0 : i64} : (tensor<2x8xf32>) -> tensor<2x1xi64>
  return %0 : tensor<2x1xi64>
}

// -----

func.func @argmax_result_type(%x: tensor<2x8xf32>) -> tensor<2x1xi32> {
  // expected-error @+1 {{'onnx.ArgMax' op result #0 must be tensor of 64-bit signless integer values}}
  %0 = onnx.ArgMax %x {axis = 1 : i64} : (tensor<2x8xf32>) -> tensor<2x1xi32>
  return %0 : tensor<2x1xi32>
}

// -----

func.func @topk_k_length(%x: tensor<4x8xf32>, %k: tensor<2xi64>) -> (tensor<4x2xf32>, tensor<4x2xi64>) {
  // expected-error @+1 {{'onnx.TopK' op operand 'K' must hold exactly one element, got 2}}
  %v, %i = onnx.TopK %x, %k : (tensor<4x8xf32>, tensor<2xi64>) -> (tensor<4x2xf32>, tensor<4x2xi64>)
  return %v, %i : tensor<4x2xf32>, tensor<4x2xi64>
}

// -----

func.func @topk_indices_shape(%x: tensor<4x8xf32>, %k: tensor<1xi64>) -> (tensor<4x2xf32>, tensor<5x2xi64>) {
  // expected-error @+1 {{'onnx.TopK' op result 'Indices' shape [5, 2] is incompatible with the expected [4, ?]}}
  %v, %i = onnx.TopK %x, %k : (tensor<4x8xf32>, tensor<1xi64>) -> (tensor<4x2xf32>, tensor<5x2xi64>)
  return %v, %i : tensor<4x2xf32>, tensor<5x2xi64>
}

// -----

func.func @cumsum_axis_rank(%x: tensor<1x8xi64>, %axis: tensor<1xi64>) -> tensor<1x8xi64> {
  // expected-error @+1 {{'onnx.CumSum' op operand 'axis' must have rank 0, got rank 1}}
  %0 = onnx.CumSum %x, %axis : (tensor<1x8xi64>, tensor<1xi64>) -> tensor<1x8xi64>
  return %0 : tensor<1x8xi64>
}

// -----

func.func @cumsum_reverse(%x: tensor<1x8xi64>, %axis: tensor<i64>) -> tensor<1x8xi64> {
  // expected-error @+1 {{'onnx.CumSum' op 'reverse' must be 0 or 1, got 3}}
  %0 = onnx.CumSum %x, %axis {reverse = 3 : i64} : (tensor<1x8xi64>, tensor<i64>) -> tensor<1x8xi64>
  return %0 : tensor<1x8xi64>
}

// -----

func.func @layer_norm_outputs(%x: tensor<2x64xf32>, %g: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'onnx.LayerNormalization' op expects at most 2 optional results (Mean, InvStdDev), got 3}}
  %0:4 = onnx.LayerNormalization %x, %g : (tensor<2x64xf32>, tensor<64xf32>) -> (tensor<2x64xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %0#0 : tensor<2x64xf32>
}

// -----

func.func @layer_norm_stash_type(%x: tensor<2x64xf32>, %g: tensor<64xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'onnx.LayerNormalization' op 'stash_type' must be a float TensorProto data type (1, 10, 11 or 16), got 7}}
  %0 = onnx.LayerNormalization %x, %g {stash_type = 7 : i64} : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

// -----

func.func @layer_norm_scale(%x: tensor<2x64xf32>, %g: tensor<32xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'onnx.LayerNormalization' op operand 'Scale' of shape [32] does not broadcast to [64]}}
  %0 = onnx.LayerNormalization %x, %g : (tensor<2x64xf32>, tensor<32xf32>) -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

// -----

func.func @layer_norm_result(%x: tensor<2x64xf32>, %g: tensor<64xf32>) -> tensor<2x32xf32> {
  // expected-error @+1 {{'onnx.LayerNormalization' op result 'Y' shape [2, 32] is incompatible with the expected [2, 64]}}
  %0 = onnx.LayerNormalization %x, %g : (tensor<2x64xf32>, tensor<64xf32>) -> tensor<2x32xf32>
  return %0 : tensor<2x32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

func.func @gather_axis(%t: tensor<384x64xf32>, %ids: tensor<1x8xi64>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{'onnx.Gather' op 'axis' = 2 is out of range [-2, 1] for rank 2}}
  %0 = onnx.Gather %t, %ids {axis = 2 : i64} : (tensor<384x64xf32>, tensor<1x8xi64>) -> tensor<1x8x64xf32>
  return %0 : tensor<1x8x64xf32>
}

// -----

func.func @gather_scalar_data(%t: tensor<f32>, %ids: tensor<1x8xi64>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'onnx.Gather' op operand 'data' must have rank >= 1, got rank 0}}
  %0 = onnx.Gather %t, %ids : (tensor<f32>, tensor<1x8xi64>) -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

func.func @gather_result(%t: tensor<384x64xf32>, %ids: tensor<1x8xi64>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'onnx.Gather' op result shape [8, 64] is incompatible with the expected [1, 8, 64]}}
  %0 = onnx.Gather %t, %ids : (tensor<384x64xf32>, tensor<1x8xi64>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @gather_float_indices(%t: tensor<384x64xf32>, %ids: tensor<1x8xf32>) -> tensor<1x8x64xf32> {
  // expected-error @+1 {{'onnx.Gather' op operand #1 must be tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = onnx.Gather %t, %ids : (tensor<384x64xf32>, tensor<1x8xf32>) -> tensor<1x8x64xf32>
  return %0 : tensor<1x8x64xf32>
}

// -----

func.func @gather_nd_batch_dims(%d: tensor<2x8xf32>, %i: tensor<2x1xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.GatherND' op 'batch_dims' = 2 must be in [0, min(rank of 'data', rank of 'indices')) = [0, 2)}}
  %0 = onnx.GatherND %d, %i {batch_dims = 2 : i64} : (tensor<2x8xf32>, tensor<2x1xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @gather_nd_tuple(%d: tensor<2x8xf32>, %i: tensor<4x3xi64>) -> tensor<4xf32> {
  // expected-error @+1 {{'onnx.GatherND' op last dimension of 'indices' is 3, must be in [1, 2]}}
  %0 = onnx.GatherND %d, %i : (tensor<2x8xf32>, tensor<4x3xi64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_nd_result(%d: tensor<2x8x64xf32>, %i: tensor<2x1x1xi64>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'onnx.GatherND' op result shape [2, 64] is incompatible with the expected [2, 1, 64]}}
  %0 = onnx.GatherND %d, %i {batch_dims = 1 : i64} : (tensor<2x8x64xf32>, tensor<2x1x1xi64>) -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

// -----

func.func @gather_elements_rank(%d: tensor<2x8xf32>, %i: tensor<2xi64>) -> tensor<2xf32> {
  // expected-error @+1 {{'onnx.GatherElements' op 'indices' has rank 1 but 'data' has rank 2}}
  %0 = onnx.GatherElements %d, %i : (tensor<2x8xf32>, tensor<2xi64>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @gather_elements_axis(%d: tensor<2x8xf32>, %i: tensor<2x1xi64>) -> tensor<2x1xf32> {
  // expected-error @+1 {{'onnx.GatherElements' op 'axis' = -3 is out of range [-2, 1] for rank 2}}
  %0 = onnx.GatherElements %d, %i {axis = -3 : i64} : (tensor<2x8xf32>, tensor<2x1xi64>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @scatter_nd_reduction(%c: tensor<4x16xf32>, %i: tensor<2x1xi64>, %u: tensor<2x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'onnx.ScatterND' op 'reduction' must be 'none', 'add' or 'mul', got 'max'}}
  %0 = onnx.ScatterND %c, %i, %u {reduction = "max"} : (tensor<4x16xf32>, tensor<2x1xi64>, tensor<2x16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @scatter_nd_updates(%c: tensor<4x16xf32>, %i: tensor<2x1xi64>, %u: tensor<2x8xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'onnx.ScatterND' op operand 'updates' shape [2, 8] is incompatible with the expected [2, 16]}}
  %0 = onnx.ScatterND %c, %i, %u : (tensor<4x16xf32>, tensor<2x1xi64>, tensor<2x8xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @scatter_nd_tuple(%c: tensor<4x16xf32>, %i: tensor<2x3xi64>, %u: tensor<2xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'onnx.ScatterND' op last dimension of 'indices' is 3, must be in [1, 2]}}
  %0 = onnx.ScatterND %c, %i, %u : (tensor<4x16xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @scatter_nd_scalar_indices(%c: tensor<4x16xf32>, %i: tensor<i64>, %u: tensor<16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{'onnx.ScatterND' op operand 'indices' must have rank >= 1, got rank 0}}
  %0 = onnx.ScatterND %c, %i, %u : (tensor<4x16xf32>, tensor<i64>, tensor<16xf32>) -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}

// -----

func.func @scatter_nd_result_type(%c: tensor<4x16xf32>, %i: tensor<2x1xi64>, %u: tensor<2x16xf32>) -> tensor<4x16xf16> {
  // expected-error @+1 {{'onnx.ScatterND' op failed to verify that all of {data, output} have same type}}
  %0 = onnx.ScatterND %c, %i, %u : (tensor<4x16xf32>, tensor<2x1xi64>, tensor<2x16xf32>) -> tensor<4x16xf16>
  return %0 : tensor<4x16xf16>
}

// -----

func.func @scatter_elements_updates(%d: tensor<2x8xf32>, %i: tensor<2x1xi64>, %u: tensor<2x2xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'onnx.ScatterElements' op operand 'updates' shape [2, 2] is incompatible with the expected [2, 1]}}
  %0 = onnx.ScatterElements %d, %i, %u {axis = 1 : i64} : (tensor<2x8xf32>, tensor<2x1xi64>, tensor<2x2xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @scatter_elements_reduction(%d: tensor<2x8xf32>, %i: tensor<2x1xi64>, %u: tensor<2x1xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'onnx.ScatterElements' op 'reduction' must be 'none', 'add' or 'mul', got 'min'}}
  %0 = onnx.ScatterElements %d, %i, %u {reduction = "min"} : (tensor<2x8xf32>, tensor<2x1xi64>, tensor<2x1xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

func.func @reshape_count(%x: tensor<1x8x64xf32>, %s: tensor<2xi64>) -> tensor<8x32xf32> {
  // expected-error @+1 {{'onnx.Reshape' op result has 256 elements but 'data' has 512}}
  %0 = onnx.Reshape %x, %s : (tensor<1x8x64xf32>, tensor<2xi64>) -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @reshape_rank(%x: tensor<1x8x64xf32>, %s: tensor<3xi64>) -> tensor<8x64xf32> {
  // expected-error @+1 {{'onnx.Reshape' op result rank 2 does not match the expected rank 3 (the length of 'shape')}}
  %0 = onnx.Reshape %x, %s : (tensor<1x8x64xf32>, tensor<3xi64>) -> tensor<8x64xf32>
  return %0 : tensor<8x64xf32>
}

// -----

func.func @transpose_perm_size(%x: tensor<1x8x4xf32>) -> tensor<8x1x4xf32> {
  // expected-error @+1 {{'onnx.Transpose' op 'perm' has 2 entries but 'data' has rank 3}}
  %0 = onnx.Transpose %x {perm = array<i64: 1, 0>} : (tensor<1x8x4xf32>) -> tensor<8x1x4xf32>
  return %0 : tensor<8x1x4xf32>
}

// -----

func.func @transpose_not_permutation(%x: tensor<1x8x4xf32>) -> tensor<8x1x4xf32> {
  // expected-error @+1 {{'onnx.Transpose' op 'perm' [1, 1, 2] is not a permutation of [0, 3)}}
  %0 = onnx.Transpose %x {perm = array<i64: 1, 1, 2>} : (tensor<1x8x4xf32>) -> tensor<8x1x4xf32>
  return %0 : tensor<8x1x4xf32>
}

// -----

func.func @transpose_result(%x: tensor<1x8x4xf32>) -> tensor<1x8x4xf32> {
  // expected-error @+1 {{'onnx.Transpose' op result shape [1, 8, 4] is incompatible with the expected [8, 1, 4]}}
  %0 = onnx.Transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<1x8x4xf32>) -> tensor<1x8x4xf32>
  return %0 : tensor<1x8x4xf32>
}

// -----

func.func @concat_rank(%a: tensor<1x4x8x16xf32>, %b: tensor<4x1x16xf32>) -> tensor<1x4x9x16xf32> {
  // expected-error @+1 {{'onnx.Concat' op input #1 has rank 3 but input #0 has rank 4}}
  %0 = onnx.Concat %a, %b {axis = 2 : i64} : (tensor<1x4x8x16xf32>, tensor<4x1x16xf32>) -> tensor<1x4x9x16xf32>
  return %0 : tensor<1x4x9x16xf32>
}

// -----

func.func @concat_other_dim(%a: tensor<1x4x8x16xf32>, %b: tensor<1x2x1x16xf32>) -> tensor<1x4x9x16xf32> {
  // expected-error @+1 {{'onnx.Concat' op input #1 has size 2 in dimension 1 but 4 was expected (only 'axis' = 2 may differ)}}
  %0 = onnx.Concat %a, %b {axis = 2 : i64} : (tensor<1x4x8x16xf32>, tensor<1x2x1x16xf32>) -> tensor<1x4x9x16xf32>
  return %0 : tensor<1x4x9x16xf32>
}

// -----

func.func @concat_axis(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'onnx.Concat' op 'axis' = 2 is out of range [-2, 1] for rank 2}}
  %0 = onnx.Concat %a, %b {axis = 2 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @concat_result(%a: tensor<1x4xf32>, %b: tensor<1x4xf32>) -> tensor<1x9xf32> {
  // expected-error @+1 {{'onnx.Concat' op result shape [1, 9] is incompatible with the expected [1, 8]}}
  %0 = onnx.Concat %a, %b {axis = 1 : i64} : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x9xf32>
  return %0 : tensor<1x9xf32>
}

// -----

func.func @concat_empty() -> tensor<1x4xf32> {
  // expected-error @+1 {{'onnx.Concat' op expected 1 or more operands, but found 0}}
  %0 = onnx.Concat {axis = 0 : i64} : () -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @split_count(%x: tensor<2x128xf32>, %s: tensor<2xi64>) -> tensor<2x32xf32> {
  // expected-error @+1 {{'onnx.Split' op number of results (3) does not match the length of 'split' (2)}}
  %0:3 = onnx.Split %x, %s {axis = 1 : i64} : (tensor<2x128xf32>, tensor<2xi64>) -> (tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x64xf32>)
  return %0#0 : tensor<2x32xf32>
}

// -----

func.func @split_sum(%x: tensor<2x128xf32>) -> tensor<2x32xf32> {
  // expected-error @+1 {{'onnx.Split' op result sizes along axis 1 sum to 96 but 'input' has 128}}
  %0:3 = onnx.Split %x {axis = 1 : i64} : (tensor<2x128xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>)
  return %0#0 : tensor<2x32xf32>
}

// -----

func.func @split_no_results(%x: tensor<2x128xf32>) {
  // expected-error @+1 {{'onnx.Split' op expects at least one result}}
  onnx.Split %x : (tensor<2x128xf32>) -> ()
  return
}

// -----

func.func @split_element_type(%x: tensor<2x128xf32>) -> tensor<2x128xf16> {
  // expected-error @+1 {{'onnx.Split' op 'outputs' element type 'f16' does not match 'input' element type 'f32'}}
  %0 = onnx.Split %x : (tensor<2x128xf32>) -> tensor<2x128xf16>
  return %0 : tensor<2x128xf16>
}

// -----

func.func @split_result_shape(%x: tensor<2x128xf32>) -> tensor<2x64xf32> {
  // expected-error @+1 {{'onnx.Split' op result shape [2, 64] is incompatible with the expected [?, 128]}}
  %0 = onnx.Split %x : (tensor<2x128xf32>) -> tensor<2x64xf32>
  return %0 : tensor<2x64xf32>
}

// -----

func.func @slice_lengths(%x: tensor<2x128xf32>, %s: tensor<1xi64>, %e: tensor<2xi64>) -> tensor<2x?xf32> {
  // expected-error @+1 {{'onnx.Slice' op 'ends' has length 2 but 'starts' has length 1}}
  %0 = onnx.Slice %x, %s, %e : (tensor<2x128xf32>, tensor<1xi64>, tensor<2xi64>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

func.func @slice_steps_rank(%x: tensor<2x128xf32>, %s: tensor<1xi64>, %st: tensor<i64>) -> tensor<2x?xf32> {
  // expected-error @+1 {{'onnx.Slice' op operand 'steps' must have rank 1, got rank 0}}
  %0 = onnx.Slice %x, %s, %s steps %st : (tensor<2x128xf32>, tensor<1xi64>, tensor<1xi64>, tensor<i64>) -> tensor<2x?xf32>
  return %0 : tensor<2x?xf32>
}

// -----

func.func @slice_result_rank(%x: tensor<2x128xf32>, %s: tensor<1xi64>) -> tensor<?xf32> {
  // expected-error @+1 {{'onnx.Slice' op result rank 1 does not match the expected rank 2 (the rank of 'data')}}
  %0 = onnx.Slice %x, %s, %s : (tensor<2x128xf32>, tensor<1xi64>, tensor<1xi64>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @squeeze_rank(%x: tensor<1x8x1xf32>, %a: tensor<2xi64>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'onnx.Squeeze' op result rank 2 does not match the expected rank 1 (input rank minus the length of 'axes')}}
  %0 = onnx.Squeeze %x, %a : (tensor<1x8x1xf32>, tensor<2xi64>) -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

func.func @squeeze_all(%x: tensor<1x8x1xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'onnx.Squeeze' op result shape [1, 8] is incompatible with the expected [8]}}
  %0 = onnx.Squeeze %x : (tensor<1x8x1xf32>) -> tensor<1x8xf32>
  return %0 : tensor<1x8xf32>
}

// -----

func.func @unsqueeze_rank(%x: tensor<1x8xi1>, %a: tensor<2xi64>) -> tensor<1x1x8xi1> {
  // expected-error @+1 {{'onnx.Unsqueeze' op result rank 3 does not match the expected rank 4 (input rank plus the length of 'axes')}}
  %0 = onnx.Unsqueeze %x, %a : (tensor<1x8xi1>, tensor<2xi64>) -> tensor<1x1x8xi1>
  return %0 : tensor<1x1x8xi1>
}

// -----

func.func @expand_rank(%x: tensor<1x8xf32>, %s: tensor<3xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'onnx.Expand' op result rank 2 does not match the expected rank 3 (the larger of the input rank and the length of 'shape')}}
  %0 = onnx.Expand %x, %s : (tensor<1x8xf32>, tensor<3xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @expand_broadcast(%x: tensor<3x8xf32>, %s: tensor<2xi64>) -> tensor<4x8xf32> {
  // expected-error @+1 {{'onnx.Expand' op operand 'input' of shape [3, 8] does not broadcast to [4, 8]}}
  %0 = onnx.Expand %x, %s : (tensor<3x8xf32>, tensor<2xi64>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @trilu_rank(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'onnx.Trilu' op operand 'input' must have rank >= 2, got rank 1}}
  %0 = onnx.Trilu %x : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @trilu_upper(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{'onnx.Trilu' op 'upper' must be 0 or 1, got 2}}
  %0 = onnx.Trilu %x {upper = 2 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Cast, Range, Shape, constants, Generic
//===----------------------------------------------------------------------===//

func.func @cast_mismatch(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'onnx.Cast' op result element type 'f32' does not match 'to' = 'f16'}}
  %0 = onnx.Cast %x {to = f16} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @cast_to_index(%x: tensor<8xf32>) -> tensor<8xindex> {
  // expected-error @+1 {{'onnx.Cast' op 'to' must be an integer or float type, got 'index'}}
  %0 = onnx.Cast %x {to = index} : (tensor<8xf32>) -> tensor<8xindex>
  return %0 : tensor<8xindex>
}

// -----

func.func @range_not_scalar(%s: tensor<1xi64>, %l: tensor<i64>) -> tensor<?xi64> {
  // expected-error @+1 {{'onnx.Range' op operand 'start' must have rank 0, got rank 1}}
  %0 = onnx.Range %s, %l, %l : (tensor<1xi64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  return %0 : tensor<?xi64>
}

// -----

func.func @shape_length(%x: tensor<1x8x64xf32>) -> tensor<3xi64> {
  // expected-error @+1 {{'onnx.Shape' op result shape [3] is incompatible with the expected [2]}}
  %0 = onnx.Shape %x {start = -2 : i64} : (tensor<1x8x64xf32>) -> tensor<3xi64>
  return %0 : tensor<3xi64>
}

// -----

func.func @shape_rank(%x: tensor<1x8x64xf32>) -> tensor<1x3xi64> {
  // expected-error @+1 {{'onnx.Shape' op result 'shape' must have rank 1, got rank 2}}
  %0 = onnx.Shape %x : (tensor<1x8x64xf32>) -> tensor<1x3xi64>
  return %0 : tensor<1x3xi64>
}

// -----

func.func @constant_of_shape_value(%s: tensor<2xi64>) -> tensor<1x8xi64> {
  // expected-error @+1 {{'onnx.ConstantOfShape' op 'value' must hold exactly one element, got 2}}
  %0 = onnx.ConstantOfShape %s {value = dense<0> : tensor<2xi64>} : (tensor<2xi64>) -> tensor<1x8xi64>
  return %0 : tensor<1x8xi64>
}

// -----

func.func @constant_of_shape_default_type(%s: tensor<2xi64>) -> tensor<1x8xi64> {
  // expected-error @+1 {{'onnx.ConstantOfShape' op result element type 'i64' does not match the element type of 'value' ('f32')}}
  %0 = onnx.ConstantOfShape %s : (tensor<2xi64>) -> tensor<1x8xi64>
  return %0 : tensor<1x8xi64>
}

// -----

func.func @constant_of_shape_rank(%s: tensor<2xi64>) -> tensor<8xf32> {
  // expected-error @+1 {{'onnx.ConstantOfShape' op result rank 1 does not match the expected rank 2 (the length of the shape input)}}
  %0 = onnx.ConstantOfShape %s : (tensor<2xi64>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @constant_vector() {
  // expected-error @+1 {{'onnx.Constant' op 'value' must be a tensor attribute}}
  %0 = onnx.Constant dense<1> : vector<2xi64>
  return
}

// -----

func.func @generic_empty(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'onnx.Generic' op op_type must not be empty}}
  %0 = onnx.Generic "" (%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
