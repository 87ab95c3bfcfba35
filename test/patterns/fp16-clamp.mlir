// RUN: qeff-opt %s -split-input-file -qeff-fp16-clamp -mlir-print-debuginfo | FileCheck %s

// A Llama-style MLP and residual add. Default: the MLP output and the
// residual sum are clamped, each clamp with its producer's location; the
// gated product (the input of down_proj, where fp16 overflows first) is not:
// an fp32 island is the fix there, and a clamp would hide the overflow.
// CHECK-NOT: qeff.fp32_scopes
// CHECK-LABEL: func.func @mlp(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x64xf32>
// CHECK-NOT: qeff.precision
// CHECK: %[[G:.*]] = qeff.linear %[[X]]
// CHECK-NOT: qeff.fp16_clamp
// CHECK: %[[U:.*]] = qeff.linear %[[X]]
// CHECK-NOT: qeff.fp16_clamp
// CHECK: %[[P:.*]] = qeff.gated_activation %[[G]], %[[U]] {kind = #qeff<activation silu>}
// CHECK-NOT: qeff.fp16_clamp %[[P]]
// CHECK: %[[D:.*]] = qeff.linear %[[P]]
// CHECK: %[[DC:.*]] = qeff.fp16_clamp %[[D]] : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32> loc(#[[DOWN:loc[0-9]*]])
// CHECK: %[[H:.*]] = qeff.add %[[X]], %[[DC]]
// CHECK: %[[HC:.*]] = qeff.fp16_clamp %[[H]]
// CHECK: return %[[HC]]
// CHECK-DAG: #[[DOWN]] = loc("model.layers.0.mlp.down_proj")
func.func @mlp(%x: tensor<?x?x64xf32>) -> tensor<?x?x64xf32> {
  %wg = qeff.weight "model.layers.0.mlp.gate_proj.weight" : f32 -> tensor<128x64xf32> loc("model.layers.0.mlp.gate_proj.weight")
  %wu = qeff.weight "model.layers.0.mlp.up_proj.weight" : f32 -> tensor<128x64xf32> loc("model.layers.0.mlp.up_proj.weight")
  %wd = qeff.weight "model.layers.0.mlp.down_proj.weight" : f32 -> tensor<64x128xf32> loc("model.layers.0.mlp.down_proj.weight")
  %g = qeff.linear %x, %wg : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32> loc("model.layers.0.mlp.gate_proj")
  %u = qeff.linear %x, %wu : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32> loc("model.layers.0.mlp.up_proj")
  %p = qeff.gated_activation %g, %u {kind = #qeff<activation silu>} : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32> loc("model.layers.0.mlp.gate_proj")
  %d = qeff.linear %p, %wd : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32> loc("model.layers.0.mlp.down_proj")
  %h = qeff.add %x, %d : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32> loc("model.layers.0")
  return %h : tensor<?x?x64xf32>
}

// -----

// A plain (GPT-2 style) MLP: the projection after the activation is the MLP
// output; a linear fed by anything else (attention's o_proj, here) is not.
// CHECK-LABEL: func.func @plain_mlp(
// CHECK: %[[O:.*]] = qeff.linear %{{.*}}, %{{.*}} : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
// CHECK-NOT: qeff.fp16_clamp %[[O]]
// CHECK: %[[A:.*]] = qeff.activation %[[O]]
// CHECK-NOT: qeff.fp16_clamp %[[A]]
// CHECK: %[[D:.*]] = qeff.linear %[[A]]
// CHECK: qeff.fp16_clamp %[[D]]
func.func @plain_mlp(%x: tensor<?x?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x?x64xf32> {
  %o = qeff.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32> loc("model.layers.0.mlp.down_proj")
  %a = qeff.activation %o {kind = #qeff<activation gelu_tanh>} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %d = qeff.linear %a, %w : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  return %d : tensor<?x?x64xf32>
}

// -----

// Constants: a scale factor beyond fp16 is clipped to 65504 (and to -65504);
// one in range is kept. A value already clamped is not clamped twice.
// CHECK-LABEL: func.func @constants(
// CHECK: qeff.scale %{{.*}} {factor = 6.550400e+04 : f64}
// CHECK: qeff.scale %{{.*}} {factor = -6.550400e+04 : f64}
// CHECK: qeff.scale %{{.*}} {factor = 8.000000e+00 : f64}
// CHECK: %[[S:.*]] = qeff.add
// CHECK-NEXT: %[[C:.*]] = qeff.fp16_clamp %[[S]] {limit = 1.000000e+03 : f64}
// CHECK-NEXT: return %[[C]]
func.func @constants(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = qeff.scale %x {factor = 1.0e5 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %b = qeff.scale %a {factor = -3.0e38 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %c = qeff.scale %b {factor = 8.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  %s = qeff.add %c, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %sc = qeff.fp16_clamp %s {limit = 1000.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return %sc : tensor<4xf32>
}

// -----

// A rotary whose frequencies depend on the sequence length (dynamic NTK,
// longrope) computes its base and angles in the graph: always an fp32
// island, without any fp32 scope. A static one (linear) stays unmarked.
// CHECK-LABEL: func.func @rotary_seq_len_dependent(
// CHECK: qeff.rotary %{{.*}}, %{{.*}} {max_positions = 32 : i64, qeff.precision = "fp32", rotary_dim = 8 : i64, scaling = #qeff.rope_scaling<kind = dynamic
// CHECK: qeff.rotary %{{.*}}, %{{.*}} {max_positions = 64 : i64, qeff.precision = "fp32", rotary_dim = 8 : i64, scaling = #qeff.rope_scaling<kind = longrope
// CHECK: qeff.rotary %{{.*}}, %{{.*}} {max_positions = 64 : i64, rotary_dim = 8 : i64, scaling = #qeff.rope_scaling<kind = linear
func.func @rotary_seq_len_dependent(%q: tensor<?x4x?x8xf32>, %p: tensor<?x?xi64>) -> (tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>) {
  %d = qeff.rotary %q, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e+04 : f64, max_positions = 32 : i64, scaling = #qeff.rope_scaling<kind = dynamic, factor = 2.0 : f64, original_max_position = 16>} : (tensor<?x4x?x8xf32>, tensor<?x?xi64>) -> tensor<?x4x?x8xf32> loc("model.layers.0.self_attn.rotary_emb")
  %l = qeff.rotary %q, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e+04 : f64, max_positions = 64 : i64, scaling = #qeff.rope_scaling<kind = longrope, factor = 4.0 : f64, original_max_position = 16, short_factor = [1.0, 1.0, 1.0, 1.0], long_factor = [2.0, 2.0, 2.0, 2.0]>} : (tensor<?x4x?x8xf32>, tensor<?x?xi64>) -> tensor<?x4x?x8xf32> loc("model.layers.1.self_attn.rotary_emb")
  %s = qeff.rotary %q, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e+04 : f64, max_positions = 64 : i64, scaling = #qeff.rope_scaling<kind = linear, factor = 2.0 : f64>} : (tensor<?x4x?x8xf32>, tensor<?x?xi64>) -> tensor<?x4x?x8xf32> loc("model.layers.2.self_attn.rotary_emb")
  return %d, %l, %s : tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>, tensor<?x4x?x8xf32>
}
