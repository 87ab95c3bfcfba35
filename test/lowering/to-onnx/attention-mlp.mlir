// RUN: qeff-opt %s -split-input-file -qeff-lower-to-onnx | FileCheck %s

// GQA attention in HF semantics: KV heads repeated by Unsqueeze/Expand/
// Reshape, scores scaled, causal mask from the dynamic lengths (query i at
// absolute T - S + i), masked to -65504 (finite in fp16), softmax, values.
// CHECK-LABEL: func.func @attention_causal
// CHECK: %[[KU:.*]] = onnx.Unsqueeze %arg1, %{{.*}} : (tensor<?x2x?x16xf32>, tensor<1xi64>) -> tensor<?x2x1x?x16xf32>
// CHECK: %[[REP:.*]] = onnx.Constant dense<[1, 1, 2, 1, 1]> : tensor<5xi64>
// CHECK: %[[KE:.*]] = onnx.Expand %[[KU]], %[[REP]] : (tensor<?x2x1x?x16xf32>, tensor<5xi64>) -> tensor<?x2x2x?x16xf32>
// CHECK: %[[KR:.*]] = onnx.Reshape %[[KE]], %{{.*}} : (tensor<?x2x2x?x16xf32>, tensor<4xi64>) -> tensor<?x4x?x16xf32>
// CHECK: %[[KT:.*]] = onnx.Transpose %[[KR]] {perm = array<i64: 0, 1, 3, 2>}
// CHECK: %[[S:.*]] = onnx.MatMul %arg0, %[[KT]] : (tensor<?x4x?x16xf32>, tensor<?x4x16x?xf32>) -> tensor<?x4x?x?xf32>
// CHECK: %[[SC:.*]] = onnx.Mul %[[S]], %{{.*}}
// CHECK: onnx.Shape %[[KR]] {end = 3 : i64, start = 2 : i64}
// CHECK: onnx.Range
// CHECK: onnx.Shape %arg0 {end = 3 : i64, start = 2 : i64}
// CHECK: %[[VIS:.*]] = onnx.LessOrEqual %{{.*}}, %{{.*}} : (tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<?x?xi1>
// CHECK: %[[NEGINF:.*]] = onnx.Constant dense<-6.550400e+04> : tensor<f32>
// CHECK: %[[MASKED:.*]] = onnx.Where %[[VIS]], %[[SC]], %[[NEGINF]]
// CHECK: %[[P:.*]] = onnx.Softmax %[[MASKED]] :
// CHECK: onnx.MatMul %[[P]], %{{.*}} : (tensor<?x4x?x?xf32>, tensor<?x4x?x16xf32>) -> tensor<?x4x?x16xf32>
func.func @attention_causal(%q: tensor<?x4x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %a = qeff.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f64, causal = true} : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %a : tensor<?x4x?x16xf32>
}

// -----

// Sliding window adds j > p - w; static lengths give constant index vectors.
// CHECK-LABEL: func.func @attention_window
// CHECK-NOT: onnx.Shape
// CHECK: onnx.LessOrEqual
// CHECK: %[[W:.*]] = onnx.Constant dense<3> : tensor<i64>
// CHECK: %[[LOW:.*]] = onnx.Sub %{{.*}}, %[[W]]
// CHECK: %[[GT:.*]] = onnx.Greater %{{.*}}, %[[LOW]]
// CHECK: onnx.And %{{.*}}, %[[GT]] : (tensor<4x6xi1>, tensor<4x6xi1>) -> tensor<4x6xi1>
func.func @attention_window(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32> {
  %a = qeff.attention %q, %k, %k {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true, sliding_window = 3 : i64} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x4x8xf32>
  return %a : tensor<1x2x4x8xf32>
}

// -----

// Device form: an explicit mask, ALiBi bias slope[h] * j and a softcap.
// CHECK-LABEL: func.func @attention_mask_alibi_softcap
// CHECK-NOT: onnx.Expand
// CHECK: onnx.Tanh
// CHECK: onnx.Constant dense<[{{\[}}[{{\[}}5.000000e-01]], {{\[}}[2.500000e-01]]]]> : tensor<1x2x1x1xf32>
// CHECK: onnx.Cast %{{.*}} {to = f32} : (tensor<6xi64>) -> tensor<6xf32>
// CHECK: onnx.Where %arg2
func.func @attention_mask_alibi_softcap(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %m: tensor<1x1x4x6xi1>) -> tensor<1x2x4x8xf32> {
  %a = qeff.attention %q, %k, %k, %m {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, alibi_slopes = array<f64: 0.5, 0.25>, softcap = 30.0 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x1x4x6xi1>) -> tensor<1x2x4x8xf32>
  return %a : tensor<1x2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @kv_concat
// CHECK: onnx.Concat %arg0, %arg1 {axis = 2 : i64} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
// CHECK: onnx.Concat %arg2, %arg3 {axis = 1 : i64}
func.func @kv_concat(%a: tensor<?x2x?x16xf32>, %b: tensor<?x2x?x16xf32>, %c: tensor<?x?x16xf32>, %d: tensor<?x?x16xf32>) -> (tensor<?x2x?x16xf32>, tensor<?x?x16xf32>) {
  %0 = qeff.kv_concat %a, %b {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  %1 = qeff.kv_concat %c, %d {layout = #qeff<kv_layout bsd>} : (tensor<?x?x16xf32>, tensor<?x?x16xf32>) -> tensor<?x?x16xf32>
  return %0, %1 : tensor<?x2x?x16xf32>, tensor<?x?x16xf32>
}

// -----

// CHECK-LABEL: func.func @activations
// CHECK: %[[SIG:.*]] = onnx.Sigmoid %arg0
// CHECK: %[[SILU:.*]] = onnx.Mul %arg0, %[[SIG]]
// CHECK: onnx.Mul %[[SILU]], %arg1
// CHECK: onnx.Erf
// CHECK: onnx.Tanh
// CHECK: onnx.Relu
func.func @activations(%g: tensor<2x8xf32>, %u: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
  %0 = qeff.gated_activation %g, %u {kind = #qeff<activation silu>} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = qeff.activation %g {kind = #qeff<activation gelu>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %2 = qeff.activation %g {kind = #qeff<activation gelu_tanh>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = qeff.activation %g {kind = #qeff<activation relu>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0, %1, %2, %3 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Mixtral MoE, dense: router softmax, top-k, renormalised, scattered to all
// experts, every expert evaluated and weighted by its slice.
// CHECK-LABEL: func.func @moe
// CHECK: %[[PROBS:.*]] = onnx.Softmax
// CHECK: %[[TV:.*]], %[[TI:.*]] = onnx.TopK %[[PROBS]], %{{.*}} : (tensor<1x3x2xf32>, tensor<1xi64>) -> (tensor<1x3x1xf32>, tensor<1x3x1xi64>)
// CHECK: %[[SUM:.*]] = onnx.ReduceSum %[[TV]]
// CHECK: %[[NORM:.*]] = onnx.Div %[[TV]], %[[SUM]]
// CHECK: %[[DENSE:.*]] = onnx.ScatterElements %{{.*}}, %[[TI]], %[[NORM]] {axis = -1 : i64}
// CHECK: onnx.Slice %[[DENSE]]
// CHECK: onnx.Slice %[[DENSE]]
// CHECK: onnx.Add
func.func @moe(%x: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %r = qeff.weight "router" : f32 -> tensor<2x8xf32>
  %w1 = qeff.weight "w1" : f32 -> tensor<16x8xf32>
  %w3 = qeff.weight "w3" : f32 -> tensor<16x8xf32>
  %w2 = qeff.weight "w2" : f32 -> tensor<8x16xf32>
  %y = qeff.moe %x, %r, %w1, %w3, %w2, %w1, %w3, %w2 {num_experts = 2 : i64, top_k = 1 : i64, kind = #qeff<activation silu>} : (tensor<1x3x8xf32>, tensor<2x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}

// -----

// relu2 squares the Relu.
// CHECK-LABEL: func.func @relu2
// CHECK: %[[R:.*]] = onnx.Relu %arg0
// CHECK: onnx.Mul %[[R]], %[[R]]
func.func @relu2(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = qeff.activation %x {kind = #qeff<activation relu2>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// clip_qkv: Clip with scalar bounds.
// CHECK-LABEL: func.func @clamp
// CHECK: %[[LO:.*]] = onnx.Constant dense<-1.500000e+00> : tensor<f32>
// CHECK: %[[HI:.*]] = onnx.Constant dense<1.500000e+00> : tensor<f32>
// CHECK: onnx.Clip %arg0 min %[[LO]] max %[[HI]]
func.func @clamp(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = qeff.clamp %x {min = -1.5 : f64, max = 1.5 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Soft-capping: cap * tanh(x / cap).
// CHECK-LABEL: func.func @softcap
// CHECK: %[[C:.*]] = onnx.Constant dense<3.000000e+01> : tensor<f32>
// CHECK: %[[D:.*]] = onnx.Div %arg0, %[[C]]
// CHECK: %[[T:.*]] = onnx.Tanh %[[D]]
// CHECK: onnx.Mul %[[T]], %[[C]]
func.func @softcap(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = qeff.softcap %x {cap = 30.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Shared-expert gate: Sigmoid of the [.., 1] gate broadcast over the input.
// CHECK-LABEL: func.func @sigmoid_gate
// CHECK: %[[S:.*]] = onnx.Sigmoid %arg0
// CHECK: onnx.Mul %[[S]], %arg1 : (tensor<2x1xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
func.func @sigmoid_gate(%g: tensor<2x1xf32>, %x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %0 = qeff.sigmoid_gate %g, %x : (tensor<2x1xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Stack: Unsqueeze each input, Concat on axis 0.
// CHECK-LABEL: func.func @stack
// CHECK: %[[A:.*]] = onnx.Unsqueeze %arg0
// CHECK: %[[B:.*]] = onnx.Unsqueeze %arg1
// CHECK: onnx.Concat %[[A]], %[[B]] {axis = 0 : i64} : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
func.func @stack(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x8xf32> {
  %0 = qeff.stack %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Attention sinks: a column [B, H, S, 1] of each head's sink joins the masked
// scores, the softmax runs over T + 1 keys and the sink column is dropped
// (Slice to -1) before the values.
// CHECK-LABEL: func.func @attention_sinks
// CHECK: %[[MASKED:.*]] = onnx.Where %arg3
// CHECK: %[[FIRST:.*]] = onnx.Slice %[[MASKED]], {{.*}} -> tensor<1x2x4x1xf32>
// CHECK: %[[SINK:.*]] = onnx.Reshape %arg2, {{.*}} -> tensor<1x2x1x1xf32>
// CHECK: %[[ZERO:.*]] = onnx.Mul %[[FIRST]]
// CHECK: %[[COL:.*]] = onnx.Add %[[ZERO]], %[[SINK]]
// CHECK: %[[ALL:.*]] = onnx.Concat %[[MASKED]], %[[COL]] {axis = -1 : i64} : (tensor<1x2x4x6xf32>, tensor<1x2x4x1xf32>) -> tensor<1x2x4x7xf32>
// CHECK: %[[P:.*]] = onnx.Softmax %[[ALL]] : (tensor<1x2x4x7xf32>)
// CHECK: %[[PS:.*]] = onnx.Slice %[[P]], {{.*}} -> tensor<1x2x4x6xf32>
// CHECK: onnx.MatMul %[[PS]], %arg1
func.func @attention_sinks(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x6x8xf32>, %s: tensor<2xf32>, %m: tensor<1x1x4x6xi1>) -> tensor<1x2x4x8xf32> {
  %a = qeff.attention %q, %k, %k, %m sinks %s {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64} : (tensor<1x2x4x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>, tensor<1x1x4x6xi1>, tensor<2xf32>) -> tensor<1x2x4x8xf32>
  return %a : tensor<1x2x4x8xf32>
}

// -----

// GPT-OSS's MoE: the router bias added to the logits; per expert x @ w13^T +
// b13 read as [B, S, I, 2] (gate even, up odd), gate = Min(gate, 7), up =
// Clip(up, -7, 7), (up + 1) * gate * sigmoid(1.702 gate), then w2 and b2.
// CHECK-LABEL: func.func @moe_clamped_swiglu
// CHECK: %[[RB:.*]] = qeff.weight "router.bias"
// CHECK: %[[L:.*]] = onnx.MatMul %arg0
// CHECK: %[[LB:.*]] = onnx.Add %[[L]], %[[RB]]
// CHECK: onnx.Softmax %[[LB]]
// CHECK: onnx.TopK
// CHECK: %[[H:.*]] = onnx.Add %{{.*}}, %{{.*}} : (tensor<1x3x8xf32>, tensor<1x8xf32>) -> tensor<1x3x8xf32>
// CHECK: %[[H4:.*]] = onnx.Reshape %[[H]], {{.*}} -> tensor<1x3x4x2xf32>
// CHECK: onnx.Slice %[[H4]], {{.*}} -> tensor<1x3x4x1xf32>
// CHECK: %[[G:.*]] = onnx.Reshape {{.*}} -> tensor<1x3x4xf32>
// CHECK: onnx.Slice %[[H4]], {{.*}} -> tensor<1x3x4x1xf32>
// CHECK: %[[U:.*]] = onnx.Reshape {{.*}} -> tensor<1x3x4xf32>
// CHECK: %[[LIM:.*]] = onnx.Constant dense<7.000000e+00> : tensor<f32>
// CHECK: %[[GM:.*]] = onnx.Min %[[G]], %[[LIM]]
// CHECK: %[[NLIM:.*]] = onnx.Constant dense<-7.000000e+00> : tensor<f32>
// CHECK: %[[UC:.*]] = onnx.Clip %[[U]] min %[[NLIM]] max %[[LIM]]
// CHECK: %[[ALPHA:.*]] = onnx.Constant dense<1.702000e+00> : tensor<f32>
// CHECK: %[[GA:.*]] = onnx.Mul %[[GM]], %[[ALPHA]]
// CHECK: %[[SIG:.*]] = onnx.Sigmoid %[[GA]]
// CHECK: %[[GLU:.*]] = onnx.Mul %[[GM]], %[[SIG]]
// CHECK: %[[U1:.*]] = onnx.Add %[[UC]]
// CHECK: %[[Y:.*]] = onnx.Mul %[[U1]], %[[GLU]]
// CHECK: %[[D:.*]] = onnx.MatMul %[[Y]]
// CHECK: onnx.Add %[[D]], %{{.*}} : (tensor<1x3x8xf32>, tensor<1x8xf32>) -> tensor<1x3x8xf32>
func.func @moe_clamped_swiglu(%x: tensor<1x3x8xf32>) -> tensor<1x3x8xf32> {
  %r = qeff.weight "router" : f32 -> tensor<1x8xf32>
  %rb = qeff.weight "router.bias" : f32 -> tensor<1xf32>
  %w13 = qeff.weight "gate_up" : f32 -> tensor<8x8xf32>
  %b13 = qeff.weight "gate_up_bias" : f32 -> tensor<1x8xf32>
  %w2 = qeff.weight "down" : f32 -> tensor<8x4xf32>
  %b2 = qeff.weight "down_bias" : f32 -> tensor<1x8xf32>
  %y = qeff.moe %x, %r router_bias %rb, %w13, %b13, %w2, %b2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>, swiglu_limit = 7.0 : f64, swiglu_alpha = 1.702 : f64} : (tensor<1x3x8xf32>, tensor<1x8xf32>, tensor<1xf32>, tensor<8x8xf32>, tensor<1x8xf32>, tensor<8x4xf32>, tensor<1x8xf32>) -> tensor<1x3x8xf32>
  return %y : tensor<1x3x8xf32>
}
