// RUN: qeff-opt %s -split-input-file -qeff-lower-to-onnx | FileCheck %s

// RMS norm: fp32 chain x / sqrt(mean(x^2) + eps) * w.
// CHECK-LABEL: func.func @rms_norm
// CHECK: %[[SQ:.*]] = onnx.Mul %arg0, %arg0
// CHECK: %[[MS:.*]] = onnx.ReduceMean %[[SQ]] {axes = array<i64: -1>} : (tensor<?x?x64xf32>) -> tensor<?x?x1xf32>
// CHECK: %[[EPS:.*]] = onnx.Constant dense<9.99999997E-7> : tensor<f32>
// CHECK: %[[V:.*]] = onnx.Add %[[MS]], %[[EPS]]
// CHECK: %[[R:.*]] = onnx.Sqrt %[[V]]
// CHECK: %[[N:.*]] = onnx.Div %arg0, %[[R]]
// CHECK: onnx.Mul %[[N]], %arg1
func.func @rms_norm(%x: tensor<?x?x64xf32>, %w: tensor<64xf32>) -> tensor<?x?x64xf32> {
  %n = qeff.rms_norm %x, %w {epsilon = 1.0e-06 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  return %n : tensor<?x?x64xf32>
}

// -----

// Gemma's (1 + w) variant adds the offset to the weight.
// CHECK-LABEL: func.func @rms_norm_offset
// CHECK: %[[ONE:.*]] = onnx.Constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[W:.*]] = onnx.Add %arg1, %[[ONE]]
// CHECK: onnx.Mul %{{.*}}, %[[W]]
func.func @rms_norm_offset(%x: tensor<2x8xf32>, %w: tensor<8xf32>) -> tensor<2x8xf32> {
  %n = qeff.rms_norm %x, %w {epsilon = 1.0e-06 : f64, weight_offset = 1.0 : f64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %n : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @layer_norm
// CHECK: onnx.LayerNormalization %arg0, %arg1, %arg2 {epsilon = 9.99999997E-7 : f32} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
func.func @layer_norm(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %n = qeff.layer_norm %x, %w, %b {epsilon = 1.0e-06 : f64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %n : tensor<2x8xf32>
}

// -----

// Half-split rotary: cos/sin tables gathered by position, rotate_half as
// Split/Neg/Concat. Two rotaries share one pair of tables and gathers.
// CHECK-LABEL: func.func @rotary_half
// CHECK: %[[COS:.*]] = onnx.Constant dense<{{.*}}> : tensor<4x4xf32>
// CHECK: %[[GC:.*]] = onnx.Gather %[[COS]], %arg2 : (tensor<4x4xf32>, tensor<1x3xi64>) -> tensor<1x3x4xf32>
// CHECK: %[[SIN:.*]] = onnx.Constant dense<{{.*}}> : tensor<4x4xf32>
// CHECK: %[[GS:.*]] = onnx.Gather %[[SIN]], %arg2
// CHECK: %[[H:.*]]:2 = onnx.Split %arg0
// CHECK: %[[NEG:.*]] = onnx.Neg %[[H]]#1
// CHECK: onnx.Concat %[[NEG]], %[[H]]#0 {axis = 3 : i64}
// CHECK-NOT: onnx.Constant dense<{{.*}}> : tensor<4x4xf32>
// CHECK-NOT: onnx.Gather
// CHECK: return
func.func @rotary_half(%q: tensor<1x2x3x4xf32>, %k: tensor<1x1x3x4xf32>, %p: tensor<1x3xi64>) -> (tensor<1x2x3x4xf32>, tensor<1x1x3x4xf32>) {
  %a = qeff.rotary %q, %p {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 4 : i64} : (tensor<1x2x3x4xf32>, tensor<1x3xi64>) -> tensor<1x2x3x4xf32>
  %b = qeff.rotary %k, %p {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 4 : i64} : (tensor<1x1x3x4xf32>, tensor<1x3xi64>) -> tensor<1x1x3x4xf32>
  return %a, %b : tensor<1x2x3x4xf32>, tensor<1x1x3x4xf32>
}

// -----

// Table values: position 1, dims 4 with theta 100: inv_freq = [1, 0.1];
// half layout [cos 1, cos 0.1, cos 1, cos 0.1].
// CHECK-LABEL: func.func @rotary_table
// CHECK: onnx.Constant dense<{{\[}}[1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], [0.540302277, 0.995004177, 0.540302277, 0.995004177]]> : tensor<2x4xf32>
func.func @rotary_table(%q: tensor<1x1x1x4xf32>, %p: tensor<1x1xi64>) -> tensor<1x1x1x4xf32> {
  %a = qeff.rotary %q, %p {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 100.0 : f64, max_positions = 2 : i64} : (tensor<1x1x1x4xf32>, tensor<1x1xi64>) -> tensor<1x1x1x4xf32>
  return %a : tensor<1x1x1x4xf32>
}

// -----

// Interleaved (GPT-J) pairs with a partial rotary dimension: only the first
// 4 of 8 features rotate; pairs are swapped through a [.., 2, 2] view.
// CHECK-LABEL: func.func @rotary_interleaved_partial
// CHECK: %[[PARTS:.*]]:2 = onnx.Split %arg0, %{{.*}} {axis = 3 : i64} : (tensor<1x2x3x8xf32>, tensor<2xi64>) -> (tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>)
// CHECK: %[[PAIRS:.*]] = onnx.Reshape %[[PARTS]]#0, %{{.*}} : (tensor<1x2x3x4xf32>, tensor<5xi64>) -> tensor<1x2x3x2x2xf32>
// CHECK: %[[EO:.*]]:2 = onnx.Split %[[PAIRS]], %{{.*}} {axis = 4 : i64}
// CHECK: %[[NEG:.*]] = onnx.Neg %[[EO]]#1
// CHECK: onnx.Concat %[[NEG]], %[[EO]]#0 {axis = 4 : i64}
// CHECK: %[[OUT:.*]] = onnx.Add
// CHECK: onnx.Concat %[[OUT]], %[[PARTS]]#1 {axis = 3 : i64}
func.func @rotary_interleaved_partial(%q: tensor<1x2x3x8xf32>, %p: tensor<1x3xi64>) -> tensor<1x2x3x8xf32> {
  %a = qeff.rotary %q, %p {style = #qeff<rotary_style interleaved>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 16 : i64} : (tensor<1x2x3x8xf32>, tensor<1x3xi64>) -> tensor<1x2x3x8xf32>
  return %a : tensor<1x2x3x8xf32>
}

// -----

// Per-head LayerNorm: normalised with a scale of ones, then weight and bias
// broadcast as [heads, 1, head_dim].
// CHECK-LABEL: func.func @layer_norm_per_head
// CHECK: %[[ONES:.*]] = onnx.Constant dense<1.000000e+00> : tensor<16xf32>
// CHECK: %[[N:.*]] = onnx.LayerNormalization %arg0, %[[ONES]] :
// CHECK: %[[W:.*]] = onnx.Reshape %arg1, %{{.*}} : (tensor<4x16xf32>, tensor<3xi64>) -> tensor<4x1x16xf32>
// CHECK: %[[Y:.*]] = onnx.Mul %[[N]], %[[W]] : (tensor<1x4x3x16xf32>, tensor<4x1x16xf32>) -> tensor<1x4x3x16xf32>
// CHECK: %[[B:.*]] = onnx.Reshape %arg2
// CHECK: onnx.Add %[[Y]], %[[B]]
func.func @layer_norm_per_head(%x: tensor<1x4x3x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4x16xf32>) -> tensor<1x4x3x16xf32> {
  %n = qeff.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64} : (tensor<1x4x3x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<1x4x3x16xf32>
  return %n : tensor<1x4x3x16xf32>
}

// -----

// LayerNorm1P: (1 + w) as the scale.
// CHECK-LABEL: func.func @layer_norm_offset
// CHECK: %[[ONE:.*]] = onnx.Constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[W:.*]] = onnx.Add %arg1, %[[ONE]]
// CHECK: onnx.LayerNormalization %arg0, %[[W]], %arg2
func.func @layer_norm_offset(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %n = qeff.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64, weight_offset = 1.0 : f64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %n : tensor<2x8xf32>
}

// -----

// Non-parametric LayerNorm (OLMo): a scale of ones and no bias.
// CHECK-LABEL: func.func @standardize
// CHECK: %[[ONES:.*]] = onnx.Constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: onnx.LayerNormalization %arg0, %[[ONES]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
// CHECK-NOT: onnx.Mul
func.func @standardize(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %n = qeff.standardize %x {epsilon = 1.0e-05 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %n : tensor<2x8xf32>
}

// -----

// yarn: a static table, cos and sin multiplied by the attention factor
// (1.5 here: position 0's cos is 1.5, its sin 0).
// CHECK-LABEL: func.func @rotary_yarn_table
// CHECK: onnx.Constant dense<{{\[}}[1.500000e+00, 1.500000e+00, 1.500000e+00, 1.500000e+00], [{{.*}}]]> : tensor<2x4xf32>
// CHECK: onnx.Constant dense<{{\[}}[0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [{{.*}}]]> : tensor<2x4xf32>
// CHECK-NOT: onnx.Cos
// CHECK-NOT: onnx.ReduceMax
func.func @rotary_yarn_table(%q: tensor<1x1x1x4xf32>, %p: tensor<1x1xi64>) -> tensor<1x1x1x4xf32> {
  %a = qeff.rotary %q, %p {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 100.0 : f64, max_positions = 2 : i64, scaling = #qeff.rope_scaling<kind = yarn, factor = 4.0 : f64, original_max_position = 2, attention_factor = 1.5 : f64>} : (tensor<1x1x1x4xf32>, tensor<1x1xi64>) -> tensor<1x1x1x4xf32>
  return %a : tensor<1x1x1x4xf32>
}

// -----

// longrope: each row's L = max(position) + 1 picks the long or the short
// inverse frequencies (Where between two constants); cos and sin computed
// in the graph and multiplied by the attention factor. No table.
// CHECK-LABEL: func.func @rotary_longrope
// CHECK-NOT: tensor<64x4xf32>
// CHECK: %[[MAX:.*]] = onnx.ReduceMax %arg1 {axes = array<i64: 1>} : (tensor<2x3xi64>) -> tensor<2x1xi64>
// CHECK: %[[L:.*]] = onnx.Add %[[MAX]], %{{.*}} : (tensor<2x1xi64>, tensor<i64>) -> tensor<2x1xi64>
// CHECK: %[[T:.*]] = onnx.Constant dense<16> : tensor<i64>
// CHECK: %[[LONG:.*]] = onnx.Greater %[[L]], %[[T]]
// CHECK: %[[SHORT:.*]] = onnx.Constant dense<[1.000000e+00, 5.000000e-03]> : tensor<2xf32>
// CHECK: %[[LONGF:.*]] = onnx.Constant dense<[2.500000e-01, 1.250000e-03]> : tensor<2xf32>
// CHECK: %[[INV:.*]] = onnx.Where %[[LONG]], %[[LONGF]], %[[SHORT]] : (tensor<2x1xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
// CHECK: onnx.Cos
// CHECK: onnx.Concat
// CHECK: onnx.Constant dense<1.500000e+00> : tensor<f32>
// CHECK: onnx.Sin
func.func @rotary_longrope(%q: tensor<2x2x3x4xf32>, %p: tensor<2x3xi64>) -> tensor<2x2x3x4xf32> {
  %a = qeff.rotary %q, %p {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 64 : i64, scaling = #qeff.rope_scaling<kind = longrope, factor = 4.0 : f64, original_max_position = 16, attention_factor = 1.5 : f64, short_factor = [1.0, 2.0], long_factor = [4.0, 8.0]>} : (tensor<2x2x3x4xf32>, tensor<2x3xi64>) -> tensor<2x2x3x4xf32>
  return %a : tensor<2x2x3x4xf32>
}

// -----

// dynamic NTK: past the threshold the base is theta * (factor * L / M -
// (factor - 1)) ^ (d / (d - 2)), computed from each row's L with Pow; the
// unscaled frequencies below. Interleaved pairs repeat each cos/sin twice.
// CHECK-LABEL: func.func @rotary_dynamic_interleaved
// CHECK: %[[MAX:.*]] = onnx.ReduceMax %arg1
// CHECK: %[[L:.*]] = onnx.Add %[[MAX]]
// CHECK: %[[M:.*]] = onnx.Constant dense<16> : tensor<i64>
// CHECK: %[[ABOVE:.*]] = onnx.Greater %[[L]], %[[M]]
// CHECK: %[[PLAIN:.*]] = onnx.Constant dense<[1.000000e+00, 0.00999999977]> : tensor<2xf32>
// CHECK: %[[LC:.*]] = onnx.Max %[[L]], %[[M]]
// CHECK: %[[LF:.*]] = onnx.Cast %[[LC]] {to = f32} : (tensor<1x1xi64>) -> tensor<1x1xf32>
// CHECK: onnx.Mul %[[LF]]
// CHECK: onnx.Div
// CHECK: onnx.Sub
// CHECK: onnx.Pow
// CHECK: onnx.Pow {{.*}} : (tensor<1x1xf32>, tensor<2xf32>) -> tensor<1x2xf32>
// CHECK: %[[SCALED:.*]] = onnx.Div
// CHECK: onnx.Where %[[ABOVE]], %[[SCALED]], %[[PLAIN]]
// CHECK: onnx.Cos
// CHECK: onnx.Reshape {{.*}} -> tensor<1x3x4xf32>
// CHECK-NOT: onnx.Constant dense<1.500000e+00>
func.func @rotary_dynamic_interleaved(%q: tensor<1x2x3x4xf32>, %p: tensor<1x3xi64>) -> tensor<1x2x3x4xf32> {
  %a = qeff.rotary %q, %p {style = #qeff<rotary_style interleaved>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 32 : i64, scaling = #qeff.rope_scaling<kind = dynamic, factor = 2.0 : f64, original_max_position = 16>} : (tensor<1x2x3x4xf32>, tensor<1x3xi64>) -> tensor<1x2x3x4xf32>
  return %a : tensor<1x2x3x4xf32>
}

// -----

// With keep (a speculative target's num_logits_to_keep): a call of as many
// tokens as keep's length (a decode step) takes each token's own position
// + 1, others the row's largest; so the frequencies are per token,
// [B, S, d/2]. The lengths come from sums of ones, never from Shape.
// CHECK-LABEL: func.func @rotary_dynamic_keep
// CHECK-NOT: onnx.Shape
// CHECK: %[[K:.*]] = onnx.ReduceSum %{{.*}}, %{{.*}} : (tensor<?x1xi64>, tensor<1xi64>) -> tensor<1x1xi64>
// CHECK: %[[S:.*]] = onnx.ReduceSum %{{.*}}, %{{.*}} : (tensor<2x3xi64>, tensor<1xi64>) -> tensor<2x1xi64>
// CHECK: %[[DECODE:.*]] = onnx.Equal %[[S]], %[[K]] : (tensor<2x1xi64>, tensor<1x1xi64>) -> tensor<2x1xi1>
// CHECK: %[[OWN:.*]] = onnx.Add %arg1, %{{.*}} : (tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
// CHECK: %[[MAX:.*]] = onnx.ReduceMax %arg1
// CHECK: %[[ROW:.*]] = onnx.Add %[[MAX]]
// CHECK: %[[L:.*]] = onnx.Where %[[DECODE]], %[[OWN]], %[[ROW]] : (tensor<2x1xi1>, tensor<2x3xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
// CHECK: %[[LU:.*]] = onnx.Unsqueeze %[[L]], %{{.*}} : (tensor<2x3xi64>, tensor<1xi64>) -> tensor<2x3x1xi64>
// CHECK: onnx.Greater %[[LU]], %{{.*}} : (tensor<2x3x1xi64>, tensor<i64>) -> tensor<2x3x1xi1>
// CHECK: onnx.Pow {{.*}} : (tensor<2x3x1xf32>, tensor<2xf32>) -> tensor<2x3x2xf32>
// CHECK: %[[INV:.*]] = onnx.Where {{.*}} -> tensor<2x3x2xf32>
// CHECK: onnx.Mul %{{.*}}, %[[INV]] : (tensor<2x3x1xf32>, tensor<2x3x2xf32>) -> tensor<2x3x2xf32>
// CHECK: onnx.Cos
func.func @rotary_dynamic_keep(%q: tensor<2x2x3x4xf32>, %p: tensor<2x3xi64>, %keep: tensor<?x1xi64>) -> tensor<2x2x3x4xf32> {
  %a = qeff.rotary %q, %p, %keep {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 32 : i64, scaling = #qeff.rope_scaling<kind = dynamic, factor = 2.0 : f64, original_max_position = 16>} : (tensor<2x2x3x4xf32>, tensor<2x3xi64>, tensor<?x1xi64>) -> tensor<2x2x3x4xf32>
  return %a : tensor<2x2x3x4xf32>
}

// -----

// longrope with keep: the per-token L picks each token's factor list.
// CHECK-LABEL: func.func @rotary_longrope_keep
// CHECK: onnx.Equal
// CHECK: %[[L:.*]] = onnx.Where {{.*}} -> tensor<1x3xi64>
// CHECK: %[[LU:.*]] = onnx.Unsqueeze %[[L]]
// CHECK: %[[LONG:.*]] = onnx.Greater %[[LU]]
// CHECK: onnx.Where %[[LONG]], {{.*}} : (tensor<1x3x1xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x3x2xf32>
func.func @rotary_longrope_keep(%q: tensor<1x2x3x4xf32>, %p: tensor<1x3xi64>, %keep: tensor<3x1xi64>) -> tensor<1x2x3x4xf32> {
  %a = qeff.rotary %q, %p, %keep {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 64 : i64, scaling = #qeff.rope_scaling<kind = longrope, factor = 4.0 : f64, original_max_position = 16, attention_factor = 1.5 : f64, short_factor = [1.0, 2.0], long_factor = [4.0, 8.0]>} : (tensor<1x2x3x4xf32>, tensor<1x3xi64>, tensor<3x1xi64>) -> tensor<1x2x3x4xf32>
  return %a : tensor<1x2x3x4xf32>
}
