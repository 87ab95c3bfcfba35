// RUN: qeff-opt %s -split-input-file -qeff-lower-to-onnx | FileCheck %s

// ctx_scatter: ScatterND at (b, h, position) index grids, built without
// Shape ops: b from CumSum down the batch axis, h from a constant grid.
// CHECK-LABEL: func.func @ctx_scatter
// CHECK-NOT: onnx.Shape
// CHECK: onnx.CumSum
// CHECK: onnx.Constant dense<{{\[}}[{{\[}}[0]], {{\[}}[1]]]]> : tensor<1x2x1x1xi64>
// CHECK: %[[IDX:.*]] = onnx.Concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 3 : i64} : (tensor<?x2x?x1xi64>, tensor<?x2x?x1xi64>, tensor<?x2x?x1xi64>) -> tensor<?x2x?x3xi64>
// CHECK: onnx.ScatterND %arg0, %[[IDX]], %arg2 : (tensor<?x2x128x16xf32>, tensor<?x2x?x3xi64>, tensor<?x2x?x16xf32>) -> tensor<?x2x128x16xf32>
// Without batch_index every row is live: no idle-lane redirection.
// CHECK-NOT: onnx.ArgMax
// CHECK-NOT: onnx.GreaterOrEqual
func.func @ctx_scatter(%cache: tensor<?x2x128x16xf32>, %pos: tensor<?x?xi64>, %k: tensor<?x2x?x16xf32>) -> tensor<?x2x128x16xf32> {
  %c = qeff.ctx_scatter %cache, %pos, %k : (tensor<?x2x128x16xf32>, tensor<?x?xi64>, tensor<?x2x?x16xf32>) -> tensor<?x2x128x16xf32>
  return %c : tensor<?x2x128x16xf32>
}

// -----

// Continuous batching: the scatter's row index is batch_index[b] (added to
// the zero grid, no CumSum); ctx_rows is a Gather of those rows. Idle lanes
// (batch_index < 0, vLLM-qaic's) take the row, position and update of the
// first token of the largest row, so that they write nothing of their own.
// CHECK-LABEL: func.func @ctx_scatter_rows
// CHECK-NOT: onnx.CumSum
// CHECK: %[[ROW:.*]] = onnx.Add %{{.*}}, %arg3 : (tensor<?x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi64>
// CHECK: %[[LIVE:.*]] = onnx.GreaterOrEqual %[[ROW]], %{{.*}} : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
// CHECK: %[[LPOS:.*]] = onnx.Where %[[LIVE]], %arg1, %{{.*}} : (tensor<?x?xi1>, tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
// CHECK: %[[FLAT:.*]] = onnx.Reshape %[[ROW]]
// CHECK: %[[FIRST:.*]] = onnx.ArgMax %[[FLAT]] : (tensor<?xi64>) -> tensor<1xi64>
// CHECK: %[[SROW:.*]] = onnx.Gather %[[FLAT]], %[[FIRST]] : (tensor<?xi64>, tensor<1xi64>) -> tensor<1xi64>
// CHECK: %[[FPOS:.*]] = onnx.Reshape %[[LPOS]]
// CHECK: %[[SPOS:.*]] = onnx.Gather %[[FPOS]], %[[FIRST]]
// CHECK: %[[NROW:.*]] = onnx.Where %[[LIVE]], %[[ROW]], %[[SROW]] : (tensor<?x?xi1>, tensor<?x?xi64>, tensor<1xi64>) -> tensor<?x?xi64>
// CHECK: %[[NPOS:.*]] = onnx.Where %[[LIVE]], %[[LPOS]], %[[SPOS]]
// CHECK: %[[TOK:.*]] = onnx.Reshape %{{.*}}, %{{.*}} : (tensor<?x?x2x16xf32>, tensor<3xi64>) -> tensor<?x2x16xf32>
// CHECK: %[[SUPD:.*]] = onnx.Gather %[[TOK]], %[[FIRST]] : (tensor<?x2x16xf32>, tensor<1xi64>) -> tensor<1x2x16xf32>
// CHECK: %[[UPD:.*]] = onnx.Where %{{.*}}, %arg2, %{{.*}} : (tensor<?x1x?x1xi1>, tensor<?x2x?x16xf32>, tensor<1x2x1x16xf32>) -> tensor<?x2x?x16xf32>
// CHECK-DAG: onnx.Unsqueeze %[[NPOS]]
// CHECK-DAG: onnx.Unsqueeze %[[NROW]]
// CHECK: %[[C:.*]] = onnx.ScatterND %arg0, %{{.*}}, %[[UPD]] : (tensor<?x2x128x16xf32>, tensor<?x2x?x3xi64>, tensor<?x2x?x16xf32>) -> tensor<?x2x128x16xf32>
// CHECK: %[[FLAT:.*]] = onnx.Reshape %arg3, %{{.*}} : (tensor<?x1xi64>, tensor<1xi64>) -> tensor<?xi64>
// CHECK: onnx.Gather %[[C]], %[[FLAT]] : (tensor<?x2x128x16xf32>, tensor<?xi64>) -> tensor<?x2x128x16xf32>
func.func @ctx_scatter_rows(%cache: tensor<?x2x128x16xf32>, %pos: tensor<?x?xi64>, %k: tensor<?x2x?x16xf32>, %index: tensor<?x1xi64>) -> (tensor<?x2x128x16xf32>, tensor<?x2x128x16xf32>) {
  %c = qeff.ctx_scatter %cache, %pos, %k, %index : (tensor<?x2x128x16xf32>, tensor<?x?xi64>, tensor<?x2x?x16xf32>, tensor<?x1xi64>) -> tensor<?x2x128x16xf32>
  %r = qeff.ctx_rows %c, %index : (tensor<?x2x128x16xf32>, tensor<?x1xi64>) -> tensor<?x2x128x16xf32>
  return %c, %r : tensor<?x2x128x16xf32>, tensor<?x2x128x16xf32>
}

// -----

// causal_mask: slot j visible iff j <= p (and j > p - w).
// CHECK-LABEL: func.func @causal_mask
// CHECK-NOT: onnx.Shape
// CHECK: %[[SLOTS:.*]] = onnx.Constant dense<{{\[}}[{{\[}}[0, 1, 2, 3, 4, 5, 6, 7]]]]> : tensor<1x1x1x8xi64>
// CHECK: %[[P4:.*]] = onnx.Unsqueeze %arg0
// CHECK: onnx.LessOrEqual %[[SLOTS]], %[[P4]] : (tensor<1x1x1x8xi64>, tensor<?x1x?x1xi64>) -> tensor<?x1x?x8xi1>
// CHECK: onnx.Greater %[[SLOTS]]
// CHECK: onnx.And
func.func @causal_mask(%pos: tensor<?x?xi64>) -> tensor<?x1x?x8xi1> {
  %m = qeff.causal_mask %pos {ctx_len = 8 : i64, sliding_window = 4 : i64} : (tensor<?x?xi64>) -> tensor<?x1x?x8xi1>
  return %m : tensor<?x1x?x8xi1>
}

// -----

// CHECK-LABEL: func.func @last_token
// CHECK: %[[AM:.*]] = onnx.ArgMax %arg1 {axis = 1 : i64} : (tensor<?x?xi64>) -> tensor<?x1xi64>
// CHECK: onnx.Expand
// CHECK: onnx.GatherElements %arg0, %{{.*}} {axis = 1 : i64} : (tensor<?x?x64xf32>, tensor<?x1x64xi64>) -> tensor<?x1x64xf32>
func.func @last_token(%h: tensor<?x?x64xf32>, %pos: tensor<?x?xi64>) -> tensor<?x1x64xf32> {
  %l = qeff.last_token_select %h, %pos : (tensor<?x?x64xf32>, tensor<?x?xi64>) -> tensor<?x1x64xf32>
  return %l : tensor<?x1x64xf32>
}

// -----

// CHECK-LABEL: func.func @gather_clamp
// CHECK: onnx.GatherND %{{.*}}, %{{.*}} {batch_dims = 1 : i64} : (tensor<1x128x2x16xf32>, tensor<1x64x1xi64>) -> tensor<1x64x2x16xf32>
// CHECK: onnx.Clip %{{.*}} min %{{.*}} max %{{.*}} : (tensor<1x2x64x16xf32>, tensor<f32>, tensor<f32>) -> tensor<1x2x64x16xf32>
func.func @gather_clamp(%cache: tensor<1x2x128x16xf32>, %slots: tensor<1x64xi64>) -> tensor<1x2x64x16xf32> {
  %g = qeff.ctx_gather %cache, %slots : (tensor<1x2x128x16xf32>, tensor<1x64xi64>) -> tensor<1x2x64x16xf32>
  %c = qeff.fp16_clamp %g : (tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32>
  return %c : tensor<1x2x64x16xf32>
}

// -----

// Rolling buffer (ring 7): position p >= 0 is written at p mod 7, padding
// (-1) stays -1, the last slot; slot j < 7 holds q = P - ((P - j) mod 7),
// P = max positions of the row, visible iff 0 <= q <= p and q > p - w; the
// padding slot 7 is masked by a constant.
// CHECK-LABEL: func.func @rolling
// CHECK: %[[NEG:.*]] = onnx.Less %arg1, %{{.*}} : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi1>
// CHECK: %[[MOD:.*]] = onnx.Mod %arg1, %{{.*}} : (tensor<?x?xi64>, tensor<i64>) -> tensor<?x?xi64>
// CHECK: %[[SLOT:.*]] = onnx.Where %[[NEG]], %arg1, %[[MOD]]
// CHECK: onnx.ScatterND %arg0, %{{.*}}, %arg2 : (tensor<?x2x8x16xf32>, tensor<?x2x?x3xi64>, tensor<?x2x?x16xf32>) -> tensor<?x2x8x16xf32>
// CHECK: %[[P:.*]] = onnx.ReduceMax %arg1 {axes = array<i64: 1>} : (tensor<?x?xi64>) -> tensor<?x1xi64>
// CHECK: %[[P4:.*]] = onnx.Unsqueeze %[[P]]
// CHECK: %[[D:.*]] = onnx.Sub %[[P4]], %{{.*}} : (tensor<?x1x1x1xi64>, tensor<1x1x1x8xi64>) -> tensor<?x1x1x8xi64>
// CHECK: %[[R:.*]] = onnx.Mod %[[D]], %{{.*}} : (tensor<?x1x1x8xi64>, tensor<i64>) -> tensor<?x1x1x8xi64>
// CHECK: %[[Q:.*]] = onnx.Sub %[[P4]], %[[R]]
// CHECK: onnx.GreaterOrEqual %[[Q]]
// CHECK: onnx.Constant dense<[{{\[}}[{{\[}}true, true, true, true, true, true, true, false]]]]> : tensor<1x1x1x8xi1>
// CHECK: onnx.LessOrEqual %[[Q]]
// CHECK: onnx.Greater %[[Q]]
func.func @rolling(%cache: tensor<?x2x8x16xf32>, %pos: tensor<?x?xi64>, %k: tensor<?x2x?x16xf32>) -> (tensor<?x2x8x16xf32>, tensor<?x1x?x8xi1>) {
  %c = qeff.ctx_scatter %cache, %pos, %k {ring = 7 : i64} : (tensor<?x2x8x16xf32>, tensor<?x?xi64>, tensor<?x2x?x16xf32>) -> tensor<?x2x8x16xf32>
  %m = qeff.causal_mask %pos {ctx_len = 8 : i64, ring = 7 : i64, sliding_window = 4 : i64} : (tensor<?x?xi64>) -> tensor<?x1x?x8xi1>
  return %c, %m : tensor<?x2x8x16xf32>, tensor<?x1x?x8xi1>
}
