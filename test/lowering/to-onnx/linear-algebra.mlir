// RUN: qeff-opt %s -split-input-file -qeff-lower-to-onnx -verify-diagnostics | FileCheck %s

// Linear: MatMul against a transposed weight reference, then the bias; the
// untransposed reference is gone.
// CHECK-LABEL: func.func @linear
// CHECK-NOT: qeff.weight "w" : bf16 -> tensor<128x64xf32>
// CHECK-DAG: %[[WT:.*]] = qeff.weight "w" : bf16 -> tensor<64x128xf32> {transpose}
// CHECK-DAG: %[[B:.*]] = qeff.weight "b" : bf16 -> tensor<128xf32>
// CHECK: %[[Y:.*]] = onnx.MatMul %arg0, %[[WT]] : (tensor<?x?x64xf32>, tensor<64x128xf32>) -> tensor<?x?x128xf32>
// CHECK: %[[R:.*]] = onnx.Add %[[Y]], %[[B]]
// CHECK: return %[[R]]
func.func @linear(%x: tensor<?x?x64xf32>) -> tensor<?x?x128xf32> {
  %w = qeff.weight "w" : bf16 -> tensor<128x64xf32>
  %b = qeff.weight "b" : bf16 -> tensor<128xf32>
  %y = qeff.linear %x, %w, %b : (tensor<?x?x64xf32>, tensor<128x64xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
  return %y : tensor<?x?x128xf32>
}

// -----

// A transposed reference (rows of an [in, out] tensor, DBRX's expert w2):
// MatMul reads the checkpoint rows as they are, without a Transpose.
// CHECK-LABEL: func.func @linear_transposed_rows
// CHECK: %[[W:.*]] = qeff.weight "w2" : f32 -> tensor<16x64xf32> {rows = array<i64: 16, 16>}
// CHECK-NOT: onnx.Transpose
// CHECK: onnx.MatMul %arg0, %[[W]] : (tensor<?x?x16xf32>, tensor<16x64xf32>) -> tensor<?x?x64xf32>
func.func @linear_transposed_rows(%x: tensor<?x?x16xf32>) -> tensor<?x?x64xf32> {
  %w = qeff.weight "w2" : f32 -> tensor<64x16xf32> {transpose, rows = array<i64: 16, 16>}
  %y = qeff.linear %x, %w : (tensor<?x?x16xf32>, tensor<64x16xf32>) -> tensor<?x?x64xf32>
  return %y : tensor<?x?x64xf32>
}

// -----

// Conv1D layout: the weight is already [in, out]; a non-weight operand in the
// out_in layout gets a runtime Transpose.
// CHECK-LABEL: func.func @linear_layouts
// CHECK: onnx.MatMul %arg0, %arg1 : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
// CHECK: %[[T:.*]] = onnx.Transpose %arg2 {perm = array<i64: 1, 0>} : (tensor<16x8xf32>) -> tensor<8x16xf32>
// CHECK: onnx.MatMul %arg0, %[[T]]
func.func @linear_layouts(%x: tensor<2x8xf32>, %w: tensor<8x16xf32>, %v: tensor<16x8xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>) {
  %a = qeff.linear %x, %w {weight_layout = #qeff<weight_layout in_out>} : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
  %b = qeff.linear %x, %v : (tensor<2x8xf32>, tensor<16x8xf32>) -> tensor<2x16xf32>
  return %a, %b : tensor<2x16xf32>, tensor<2x16xf32>
}

// -----

// CHECK-LABEL: func.func @embedding_heads
// CHECK: %[[E:.*]] = onnx.Gather %{{.*}}, %arg0 : (tensor<384x64xf32>, tensor<?x?xi64>) -> tensor<?x?x64xf32>
// CHECK: %[[SHAPE:.*]] = onnx.Constant dense<[0, 0, 4, 16]> : tensor<4xi64>
// CHECK: %[[R:.*]] = onnx.Reshape %[[E]], %[[SHAPE]] : (tensor<?x?x64xf32>, tensor<4xi64>) -> tensor<?x?x4x16xf32>
// CHECK: %[[H:.*]] = onnx.Transpose %[[R]] {perm = array<i64: 0, 2, 1, 3>} : (tensor<?x?x4x16xf32>) -> tensor<?x4x?x16xf32>
// CHECK: %[[M:.*]] = onnx.Transpose %[[H]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: onnx.Constant dense<[0, 0, 64]> : tensor<3xi64>
// CHECK: onnx.Reshape %[[M]]
func.func @embedding_heads(%ids: tensor<?x?xi64>) -> tensor<?x?x64xf32> {
  %t = qeff.weight "embed" : f32 -> tensor<384x64xf32>
  %e = qeff.embedding %ids, %t : (tensor<?x?xi64>, tensor<384x64xf32>) -> tensor<?x?x64xf32>
  %h = qeff.split_heads %e {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
  %m = qeff.merge_heads %h : (tensor<?x4x?x16xf32>) -> tensor<?x?x64xf32>
  return %m : tensor<?x?x64xf32>
}

// -----

// CHECK-LABEL: func.func @glue
// CHECK: %[[S:.*]]:2 = onnx.Split %arg0, %{{.*}} {axis = -1 : i64} : (tensor<2x96xf32>, tensor<2xi64>) -> (tensor<2x64xf32>, tensor<2x32xf32>)
// CHECK: onnx.Transpose %[[S]]#1 {perm = array<i64: 1, 0>}
// CHECK: %[[C:.*]] = onnx.Constant dense<8.000000e+00> : tensor<f32>
// CHECK: onnx.Mul %[[S]]#0, %[[C]]
// CHECK: onnx.Add
// CHECK: onnx.Mul
// CHECK-NOT: qeff.
func.func @glue(%x: tensor<2x96xf32>) -> (tensor<2x64xf32>, tensor<32x2xf32>) {
  %q, %kv = qeff.split %x {sizes = array<i64: 64, 32>} : (tensor<2x96xf32>) -> (tensor<2x64xf32>, tensor<2x32xf32>)
  %t = qeff.transpose %kv {permutation = array<i64: 1, 0>} : (tensor<2x32xf32>) -> tensor<32x2xf32>
  %s = qeff.scale %q {factor = 8.0 : f64} : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %a = qeff.add %s, %q : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  %m = qeff.mul %a, %q : (tensor<2x64xf32>, tensor<2x64xf32>) -> tensor<2x64xf32>
  return %m, %t : tensor<2x64xf32>, tensor<32x2xf32>
}

// -----

// A merge of heads whose head dimension is unknown cannot be lowered.
func.func @dynamic_heads(%x: tensor<?x?x?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error @+1 {{failed to legalize operation 'qeff.merge_heads' that was explicitly marked illegal}}
  %m = qeff.merge_heads %x : (tensor<?x?x?x?xf32>) -> tensor<?x?x?xf32>
  return %m : tensor<?x?x?xf32>
}

// -----

// OPT's position offset: the ids are shifted before the Gather.
// CHECK-LABEL: func.func @embedding_offset
// CHECK: %[[TWO:.*]] = onnx.Constant dense<2> : tensor<i64>
// CHECK: %[[IDS:.*]] = onnx.Add %arg0, %[[TWO]]
// CHECK: onnx.Gather %{{.*}}, %[[IDS]]
func.func @embedding_offset(%ids: tensor<?x?xi64>) -> tensor<?x?x64xf32> {
  %t = qeff.weight "embed_positions" : f32 -> tensor<66x64xf32>
  %e = qeff.embedding %ids, %t {index_offset = 2 : i64} : (tensor<?x?xi64>, tensor<66x64xf32>) -> tensor<?x?x64xf32>
  return %e : tensor<?x?x64xf32>
}
