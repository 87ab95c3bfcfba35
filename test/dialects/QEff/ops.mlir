// RUN: qeff-opt %s | qeff-opt | FileCheck %s
// RUN: qeff-opt %s --mlir-print-op-generic | qeff-opt | FileCheck %s
// RUN: qeff-opt %s --emit-bytecode | qeff-opt | FileCheck %s

// Every qeff op and attribute, parsed, printed and parsed again: through the
// pretty form, the generic form and bytecode.

// CHECK: module attributes {qeff.model = #qeff.model<architecture = "MistralForCausalLM", family = "mistral", config = {hidden_size = 64 : i64, sliding_window = 4 : i64}, checkpoint = ["model.safetensors"]>}
module attributes {qeff.model = #qeff.model<architecture = "MistralForCausalLM",
    family = "mistral", config = {hidden_size = 64 : i64, sliding_window = 4 : i64},
    checkpoint = ["model.safetensors"]>} {

// CHECK-LABEL: func.func @weights
func.func @weights() -> (tensor<384x64xf32>, tensor<64xf16>) {
  // CHECK: qeff.weight "model.embed_tokens.weight" : bf16 -> tensor<384x64xf32>
  %0 = qeff.weight "model.embed_tokens.weight" : bf16 -> tensor<384x64xf32>
  // CHECK: qeff.weight "model.norm.weight" : f32 -> tensor<64xf16>
  %1 = qeff.weight "model.norm.weight" : f32 -> tensor<64xf16>
  // CHECK: qeff.weight "lm_head.weight" : bf16 -> tensor<64x384xf32> {transpose}
  %2 = qeff.weight "lm_head.weight" : bf16 -> tensor<64x384xf32> {transpose}
  // CHECK: qeff.weight "k_proj.weight" : f32 -> tensor<32x64xf32> {rows = array<i64: 0, 16, 0, 16, 16, 16, 16, 16>, transpose}
  %3 = qeff.weight "k_proj.weight" : f32 -> tensor<32x64xf32> {rows = array<i64: 0, 16, 0, 16, 16, 16, 16, 16>, transpose}
  return %0, %1 : tensor<384x64xf32>, tensor<64xf16>
}

// CHECK-LABEL: func.func @embedding_linear_norms
func.func @embedding_linear_norms(%ids: tensor<?x?xi64>, %table: tensor<384x64xf32>,
    %w: tensor<128x64xf32>, %wt: tensor<64x128xf32>, %b: tensor<128xf32>,
    %g: tensor<64xf32>) -> tensor<?x?x128xf32> {
  // CHECK: %[[E:.*]] = qeff.embedding %{{.*}}, %{{.*}} : (tensor<?x?xi64>, tensor<384x64xf32>) -> tensor<?x?x64xf32>
  %e = qeff.embedding %ids, %table : (tensor<?x?xi64>, tensor<384x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: %[[N:.*]] = qeff.rms_norm %[[E]], %{{.*}} {epsilon = 9.9999999999999995E-7 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %n = qeff.rms_norm %e, %g {epsilon = 1.0e-06 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  // CHECK: qeff.rms_norm %[[N]], %{{.*}} {accumulate_f32 = false, epsilon = 9.9999999999999995E-7 : f64, weight_offset = 1.000000e+00 : f64}
  %gn = qeff.rms_norm %n, %g {epsilon = 1.0e-06 : f64, weight_offset = 1.0 : f64, accumulate_f32 = false} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  // CHECK: qeff.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %ln = qeff.layer_norm %gn, %g, %g {epsilon = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  // CHECK: qeff.layer_norm %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  %ln2 = qeff.layer_norm %ln, %g {epsilon = 1.0e-05 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  // CHECK: %[[L:.*]] = qeff.linear %{{.*}}, %{{.*}} : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
  %l = qeff.linear %ln2, %w : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
  // CHECK: qeff.linear %{{.*}}, %{{.*}}, %{{.*}} {weight_layout = #qeff<weight_layout in_out>} : (tensor<?x?x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
  %c = qeff.linear %ln2, %wt, %b {weight_layout = #qeff<weight_layout in_out>} : (tensor<?x?x64xf32>, tensor<64x128xf32>, tensor<128xf32>) -> tensor<?x?x128xf32>
  // CHECK: qeff.add %[[L]], %{{.*}} : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  %s = qeff.add %l, %c : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  return %s : tensor<?x?x128xf32>
}

// CHECK-LABEL: func.func @attention_block
func.func @attention_block(%x: tensor<?x?x128xf32>, %pos: tensor<?x?xi64>,
    %pk: tensor<?x2x?x16xf32>, %pv: tensor<?x2x?x16xf32>)
    -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>) {
  %q, %k, %v = qeff.split %x {sizes = array<i64: 64, 32, 32>} : (tensor<?x?x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>)
  // CHECK: %[[Q:.*]]:3 = qeff.split %{{.*}} {sizes = array<i64: 64, 32, 32>} : (tensor<?x?x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>, tensor<?x?x32xf32>)
  // CHECK: qeff.split_heads %[[Q]]#0 {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
  %q4 = qeff.split_heads %q {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
  %k4 = qeff.split_heads %k {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
  %v4 = qeff.split_heads %v {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
  // CHECK: qeff.rotary %{{.*}}, %{{.*}} {max_positions = 64 : i64, rotary_dim = 16 : i64, style = #qeff<rotary_style half>, theta = 1.000000e+04 : f64}
  %qr = qeff.rotary %q4, %pos {style = #qeff<rotary_style half>, rotary_dim = 16 : i64, theta = 1.0e+04 : f64, max_positions = 64 : i64} : (tensor<?x4x?x16xf32>, tensor<?x?xi64>) -> tensor<?x4x?x16xf32>
  // CHECK: qeff.rotary %{{.*}}, %{{.*}} {max_positions = 64 : i64, rotary_dim = 8 : i64, scaling = #qeff.rope_scaling<kind = llama3, factor = 8.000000e+00 : f64, low_freq_factor = 1.000000e+00 : f64, high_freq_factor = 4.000000e+00 : f64, original_max_position = 8192>, style = #qeff<rotary_style interleaved>, theta = 5.000000e+05 : f64}
  %kr = qeff.rotary %k4, %pos {style = #qeff<rotary_style interleaved>, rotary_dim = 8 : i64, theta = 5.0e+05 : f64, max_positions = 64 : i64, scaling = #qeff.rope_scaling<kind = llama3, factor = 8.0 : f64, low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64, original_max_position = 8192>} : (tensor<?x2x?x16xf32>, tensor<?x?xi64>) -> tensor<?x2x?x16xf32>
  // CHECK: qeff.rotary %{{.*}}, %{{.*}} {max_positions = 64 : i64, rotary_dim = 16 : i64, scaling = #qeff.rope_scaling<kind = linear, factor = 2.000000e+00 : f64>
  %kr2 = qeff.rotary %kr, %pos {style = #qeff<rotary_style half>, rotary_dim = 16 : i64, theta = 1.0e+04 : f64, max_positions = 64 : i64, scaling = #qeff.rope_scaling<kind = linear, factor = 2.0 : f64>} : (tensor<?x2x?x16xf32>, tensor<?x?xi64>) -> tensor<?x2x?x16xf32>
  // CHECK: %[[K:.*]] = qeff.kv_concat %{{.*}}, %{{.*}} {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  %kc = qeff.kv_concat %pk, %kr2 {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  %vc = qeff.kv_concat %pv, %v4 {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  // CHECK: qeff.attention %{{.*}}, %[[K]], %{{.*}} {causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f64, sliding_window = 4 : i64}
  %a = qeff.attention %qr, %kc, %vc {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f64, causal = true, sliding_window = 4 : i64} : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32>
  // CHECK: qeff.attention %{{.*}}, %{{.*}}, %{{.*}} {alibi_slopes = array<f64: 2.500000e-01, 6.250000e-02, 1.562500e-02, 3.906250e-03>, causal = true, head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f64, softcap = 5.000000e+01 : f64}
  %a2 = qeff.attention %a, %kc, %vc {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f64, causal = true, alibi_slopes = array<f64: 0.25, 0.0625, 0.015625, 0.00390625>, softcap = 50.0 : f64} : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32>
  // CHECK: qeff.merge_heads %{{.*}} : (tensor<?x4x?x16xf32>) -> tensor<?x?x64xf32>
  %o = qeff.merge_heads %a2 : (tensor<?x4x?x16xf32>) -> tensor<?x?x64xf32>
  return %o, %kc : tensor<?x?x64xf32>, tensor<?x2x?x16xf32>
}

// CHECK-LABEL: func.func @kv_layouts
func.func @kv_layouts(%a: tensor<?x?x2x16xf32>, %b: tensor<?x?x2x16xf32>,
    %c: tensor<?x1x2x16xf32>, %d: tensor<?x?x16xf32>, %e: tensor<?x1x16xf32>)
    -> (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x16xf32>, tensor<?x2x?x16xf32>) {
  // CHECK: qeff.kv_concat %{{.*}}, %{{.*}} {layout = #qeff<kv_layout bshd>} : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>) -> tensor<?x?x2x16xf32>
  %0 = qeff.kv_concat %a, %b {layout = #qeff<kv_layout bshd>} : (tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>) -> tensor<?x?x2x16xf32>
  // CHECK: qeff.kv_concat %{{.*}}, %{{.*}} {layout = #qeff<kv_layout sbhd>} : (tensor<?x?x2x16xf32>, tensor<?x1x2x16xf32>) -> tensor<?x?x2x16xf32>
  %1 = qeff.kv_concat %a, %c {layout = #qeff<kv_layout sbhd>} : (tensor<?x?x2x16xf32>, tensor<?x1x2x16xf32>) -> tensor<?x?x2x16xf32>
  // CHECK: qeff.kv_concat %{{.*}}, %{{.*}} {layout = #qeff<kv_layout bsd>} : (tensor<?x?x16xf32>, tensor<?x1x16xf32>) -> tensor<?x?x16xf32>
  %2 = qeff.kv_concat %d, %e {layout = #qeff<kv_layout bsd>} : (tensor<?x?x16xf32>, tensor<?x1x16xf32>) -> tensor<?x?x16xf32>
  // CHECK: qeff.transpose %{{.*}} {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
  %3 = qeff.transpose %0 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
  return %0, %1, %2, %3 : tensor<?x?x2x16xf32>, tensor<?x?x2x16xf32>, tensor<?x?x16xf32>, tensor<?x2x?x16xf32>
}

// Continuous batching: the cache has its own rows, addressed by batch_index.
// CHECK-LABEL: func.func @continuous_batching
func.func @continuous_batching(%cache: tensor<4x2x128x16xf32>, %pos: tensor<1x32xi64>,
    %k: tensor<1x2x32x16xf32>, %index: tensor<1x1xi64>) -> tensor<1x2x128x16xf32> {
  // CHECK: %[[C:.*]] = qeff.ctx_scatter %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x2x128x16xf32>, tensor<1x32xi64>, tensor<1x2x32x16xf32>, tensor<1x1xi64>) -> tensor<4x2x128x16xf32>
  %c = qeff.ctx_scatter %cache, %pos, %k, %index : (tensor<4x2x128x16xf32>, tensor<1x32xi64>, tensor<1x2x32x16xf32>, tensor<1x1xi64>) -> tensor<4x2x128x16xf32>
  // CHECK: qeff.ctx_rows %[[C]], %{{.*}} : (tensor<4x2x128x16xf32>, tensor<1x1xi64>) -> tensor<1x2x128x16xf32>
  %r = qeff.ctx_rows %c, %index : (tensor<4x2x128x16xf32>, tensor<1x1xi64>) -> tensor<1x2x128x16xf32>
  return %r : tensor<1x2x128x16xf32>
}

// CHECK-LABEL: func.func @device_cache
func.func @device_cache(%cache: tensor<1x2x128x16xf32>, %pos: tensor<1x32xi64>,
    %k: tensor<1x2x32x16xf32>, %q: tensor<1x4x32x16xf32>, %slots: tensor<1x64xi64>,
    %h: tensor<1x32x64xf32>, %ring: tensor<1x2x36x16xf32>)
    -> (tensor<1x2x128x16xf32>, tensor<1x4x32x16xf32>, tensor<1x2x64x16xf32>, tensor<1x1x64xf32>, tensor<1x2x36x16xf32>, tensor<1x1x32x36xi1>) {
  // CHECK: %[[C:.*]] = qeff.ctx_scatter %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x2x128x16xf32>, tensor<1x32xi64>, tensor<1x2x32x16xf32>) -> tensor<1x2x128x16xf32>
  %c = qeff.ctx_scatter %cache, %pos, %k : (tensor<1x2x128x16xf32>, tensor<1x32xi64>, tensor<1x2x32x16xf32>) -> tensor<1x2x128x16xf32>
  // CHECK: qeff.ctx_scatter %{{.*}}, %{{.*}}, %{{.*}} {ring = 35 : i64} : (tensor<1x2x36x16xf32>, tensor<1x32xi64>, tensor<1x2x32x16xf32>) -> tensor<1x2x36x16xf32>
  %rc = qeff.ctx_scatter %ring, %pos, %k {ring = 35 : i64} : (tensor<1x2x36x16xf32>, tensor<1x32xi64>, tensor<1x2x32x16xf32>) -> tensor<1x2x36x16xf32>
  // CHECK: qeff.causal_mask %{{.*}} {ctx_len = 36 : i64, ring = 35 : i64, sliding_window = 4 : i64} : (tensor<1x32xi64>) -> tensor<1x1x32x36xi1>
  %rm = qeff.causal_mask %pos {ctx_len = 36 : i64, ring = 35 : i64, sliding_window = 4 : i64} : (tensor<1x32xi64>) -> tensor<1x1x32x36xi1>
  // CHECK: %[[M:.*]] = qeff.causal_mask %{{.*}} {ctx_len = 128 : i64} : (tensor<1x32xi64>) -> tensor<1x1x32x128xi1>
  %m = qeff.causal_mask %pos {ctx_len = 128 : i64} : (tensor<1x32xi64>) -> tensor<1x1x32x128xi1>
  // CHECK: qeff.causal_mask %{{.*}} {ctx_len = 128 : i64, sliding_window = 16 : i64}
  %mw = qeff.causal_mask %pos {ctx_len = 128 : i64, sliding_window = 16 : i64} : (tensor<1x32xi64>) -> tensor<1x1x32x128xi1>
  // CHECK: qeff.attention %{{.*}}, %[[C]], %[[C]], %[[M]] {head_dim = 16 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 2.500000e-01 : f64}
  %a = qeff.attention %q, %c, %c, %m {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f64} : (tensor<1x4x32x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x1x32x128xi1>) -> tensor<1x4x32x16xf32>
  // CHECK: qeff.attention {{.*}} sliding_window = 16 : i64
  %aw = qeff.attention %a, %c, %c, %mw {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 16 : i64, scale = 0.25 : f64, sliding_window = 16 : i64} : (tensor<1x4x32x16xf32>, tensor<1x2x128x16xf32>, tensor<1x2x128x16xf32>, tensor<1x1x32x128xi1>) -> tensor<1x4x32x16xf32>
  // CHECK: qeff.ctx_gather %[[C]], %{{.*}} : (tensor<1x2x128x16xf32>, tensor<1x64xi64>) -> tensor<1x2x64x16xf32>
  %g = qeff.ctx_gather %c, %slots : (tensor<1x2x128x16xf32>, tensor<1x64xi64>) -> tensor<1x2x64x16xf32>
  // CHECK: qeff.last_token_select %{{.*}}, %{{.*}} : (tensor<1x32x64xf32>, tensor<1x32xi64>) -> tensor<1x1x64xf32>
  %l = qeff.last_token_select %h, %pos : (tensor<1x32x64xf32>, tensor<1x32xi64>) -> tensor<1x1x64xf32>
  // CHECK: qeff.fp16_clamp %{{.*}} : (tensor<1x1x64xf32>) -> tensor<1x1x64xf32>
  %f = qeff.fp16_clamp %l : (tensor<1x1x64xf32>) -> tensor<1x1x64xf32>
  // CHECK: qeff.fp16_clamp %{{.*}} {limit = 3.200000e+04 : f64}
  %f2 = qeff.fp16_clamp %f {limit = 32000.0 : f64} : (tensor<1x1x64xf32>) -> tensor<1x1x64xf32>
  return %c, %aw, %g, %f2, %rc, %rm : tensor<1x2x128x16xf32>, tensor<1x4x32x16xf32>, tensor<1x2x64x16xf32>, tensor<1x1x64xf32>, tensor<1x2x36x16xf32>, tensor<1x1x32x36xi1>
}

// CHECK-LABEL: func.func @sampler
func.func @sampler(%mask: tensor<4x32xi1>, %ids: tensor<2x3xi64>, %pos: tensor<2x3xi64>,
    %bi: tensor<2x1xi64>, %logits: tensor<2x1x32xf32>, %f: tensor<2x1xf32>,
    %k: tensor<2x1xi64>, %u: tensor<2x8xf32>) -> (tensor<4x32xi1>, tensor<2x1xi64>) {
  // CHECK: qeff.token_mask_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x32xi1>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x1xi64>) -> (tensor<4x32xi1>, tensor<2x32xi1>)
  %m:2 = qeff.token_mask_update %mask, %ids, %pos, %bi : (tensor<4x32xi1>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x1xi64>) -> (tensor<4x32xi1>, tensor<2x32xi1>)
  // CHECK: qeff.token_mask_update {{.*}} {generated_only}
  %p:2 = qeff.token_mask_update %m#0, %ids, %pos, %bi {generated_only} : (tensor<4x32xi1>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x1xi64>) -> (tensor<4x32xi1>, tensor<2x32xi1>)
  // CHECK: qeff.sample {{.*}} {max_top_k_ids = 8 : i64} : {{.*}} -> tensor<2x1xi64>
  %t = qeff.sample %logits, %m#1, %p#1, %f, %f, %f, %k, %f, %f, %u {max_top_k_ids = 8 : i64} : (tensor<2x1x32xf32>, tensor<2x32xi1>, tensor<2x32xi1>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xi64>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x8xf32>) -> tensor<2x1xi64>
  return %p#0, %t : tensor<4x32xi1>, tensor<2x1xi64>
}

// CHECK-LABEL: func.func @mlp
func.func @mlp(%x: tensor<?x?x64xf32>, %r: tensor<2x64xf32>, %w1: tensor<128x64xf32>,
    %w2: tensor<64x128xf32>, %u: tensor<?x?x128xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x128xf32>) {
  // CHECK: qeff.activation %{{.*}} {kind = #qeff<activation gelu_tanh>} : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  %0 = qeff.activation %u {kind = #qeff<activation gelu_tanh>} : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  // CHECK: qeff.activation %{{.*}} {kind = #qeff<activation gelu>}
  %1 = qeff.activation %0 {kind = #qeff<activation gelu>} : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  // CHECK: qeff.activation %{{.*}} {kind = #qeff<activation relu>}
  %2 = qeff.activation %1 {kind = #qeff<activation relu>} : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  // CHECK: qeff.gated_activation %{{.*}}, %{{.*}} {kind = #qeff<activation silu>} : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  %3 = qeff.gated_activation %2, %u {kind = #qeff<activation silu>} : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  // CHECK: qeff.mul %{{.*}}, %{{.*}} : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  %4 = qeff.mul %3, %u : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  // CHECK: qeff.scale %{{.*}} {factor = 8.000000e+00 : f64} : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  %5 = qeff.scale %4 {factor = 8.0 : f64} : (tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
  // CHECK: qeff.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {kind = #qeff<activation silu>, num_experts = 2 : i64, top_k = 1 : i64}
  %6 = qeff.moe %x, %r, %w1, %w1, %w2, %w1, %w1, %w2 {num_experts = 2 : i64, top_k = 1 : i64, kind = #qeff<activation silu>} : (tensor<?x?x64xf32>, tensor<2x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
  // CHECK: qeff.moe {{.*}} normalize_top_k = false
  %7 = qeff.moe %6, %r, %w1, %w1, %w2, %w1, %w1, %w2 {num_experts = 2 : i64, top_k = 2 : i64, normalize_top_k = false, kind = #qeff<activation silu>} : (tensor<?x?x64xf32>, tensor<2x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32>
  return %7, %5 : tensor<?x?x64xf32>, tensor<?x?x128xf32>
}

}

// Per-head and offset layer norms, non-parametric norm, clamp, softcap,
// sigmoid gate, stack, embedding offset, relu2.
// CHECK-LABEL: func.func @new_family_ops
func.func @new_family_ops(%ids: tensor<?x?xi64>, %table: tensor<66x64xf32>,
    %q: tensor<?x4x?x16xf32>, %w0: tensor<16xf32>, %w: tensor<4x16xf32>,
    %g: tensor<?x?x1xf32>, %x: tensor<?x?x64xf32>, %h: tensor<64xf32>) -> tensor<?x4x?x16xf32> {
  // CHECK: qeff.embedding %{{.*}}, %{{.*}} {index_offset = 2 : i64}
  %e = qeff.embedding %ids, %table {index_offset = 2 : i64} : (tensor<?x?xi64>, tensor<66x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: qeff.stack %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %s = qeff.stack %w0, %w0, %w0, %w0 : (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  // CHECK: qeff.layer_norm %{{.*}}, %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64} : (tensor<?x4x?x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<?x4x?x16xf32>
  %n = qeff.layer_norm %q, %s, %w {epsilon = 1.0e-05 : f64} : (tensor<?x4x?x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<?x4x?x16xf32>
  // CHECK: qeff.layer_norm %{{.*}}, %{{.*}} {epsilon = 1.000000e-05 : f64, weight_offset = 1.000000e+00 : f64}
  %n1 = qeff.layer_norm %e, %h {epsilon = 1.0e-05 : f64, weight_offset = 1.0 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
  // CHECK: qeff.standardize %{{.*}} {epsilon = 1.000000e-05 : f64} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %n2 = qeff.standardize %n1 {epsilon = 1.0e-05 : f64} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: qeff.clamp %{{.*}} {max = 1.500000e+00 : f64, min = -1.500000e+00 : f64}
  %c = qeff.clamp %n2 {min = -1.5 : f64, max = 1.5 : f64} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: qeff.softcap %{{.*}} {cap = 3.000000e+01 : f64}
  %sc = qeff.softcap %c {cap = 30.0 : f64} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: qeff.sigmoid_gate %{{.*}}, %{{.*}} : (tensor<?x?x1xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %sg = qeff.sigmoid_gate %g, %sc : (tensor<?x?x1xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  // CHECK: qeff.activation %{{.*}} {kind = #qeff<activation relu2>}
  %r = qeff.activation %sg {kind = #qeff<activation relu2>} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  return %n : tensor<?x4x?x16xf32>
}

// The rope scaling kinds that need more than a factor: yarn's correction
// range and attention factor, dynamic NTK's threshold, longrope's lists.
// CHECK-LABEL: func.func @rope_scaling_kinds
func.func @rope_scaling_kinds(%q: tensor<?x4x?x8xf32>, %pos: tensor<?x?xi64>) -> tensor<?x4x?x8xf32> {
  // CHECK: scaling = #qeff.rope_scaling<kind = yarn, factor = 4.000000e+00 : f64, original_max_position = 32, beta_fast = 3.200000e+01 : f64, beta_slow = 1.000000e+00 : f64, attention_factor = 1.138600e+00 : f64>
  %a = qeff.rotary %q, %pos {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e+04 : f64, max_positions = 128 : i64, scaling = #qeff.rope_scaling<kind = yarn, factor = 4.0 : f64, original_max_position = 32, beta_fast = 32.0 : f64, beta_slow = 1.0 : f64, attention_factor = 1.1386 : f64>} : (tensor<?x4x?x8xf32>, tensor<?x?xi64>) -> tensor<?x4x?x8xf32>
  // CHECK: scaling = #qeff.rope_scaling<kind = dynamic, factor = 2.000000e+00 : f64, original_max_position = 16>
  %b = qeff.rotary %a, %pos {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e+04 : f64, max_positions = 32 : i64, scaling = #qeff.rope_scaling<kind = dynamic, factor = 2.0 : f64, original_max_position = 16>} : (tensor<?x4x?x8xf32>, tensor<?x?xi64>) -> tensor<?x4x?x8xf32>
  // CHECK: scaling = #qeff.rope_scaling<kind = longrope, factor = 4.000000e+00 : f64, original_max_position = 16, attention_factor = 1.224700e+00 : f64, short_factor = [1.000000e+00, 1.010000e+00, 1.030000e+00, 1.080000e+00], long_factor = [1.050000e+00, 1.210000e+00, 1.780000e+00, 3.300000e+00]>
  %c = qeff.rotary %b, %pos {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e+04 : f64, max_positions = 64 : i64, scaling = #qeff.rope_scaling<kind = longrope, factor = 4.0 : f64, original_max_position = 16, attention_factor = 1.2247 : f64, short_factor = [1.0, 1.01, 1.03, 1.08], long_factor = [1.05, 1.21, 1.78, 3.3]>} : (tensor<?x4x?x8xf32>, tensor<?x?xi64>) -> tensor<?x4x?x8xf32>
  return %c : tensor<?x4x?x8xf32>
}

// GPT-OSS: attention sinks (a per-head logit operand, after the mask), the
// MoE's router bias and clamped SwiGLU experts (w13, b13, w2, b2 each).
// CHECK-LABEL: func.func @sinks_and_clamped_moe
func.func @sinks_and_clamped_moe(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x2x8xf32>, %m: tensor<1x1x2x2xi1>, %s: tensor<4xf32>, %x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %rb: tensor<1xf32>, %w13: tensor<16x8xf32>, %b13: tensor<1x16xf32>, %w2: tensor<8x8xf32>, %b2: tensor<1x8xf32>) -> (tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x2x8xf32>) {
  // CHECK: qeff.attention %arg0, %arg1, %arg1 sinks %arg3 {causal = true,
  %a = qeff.attention %q, %k, %k sinks %s {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<1x4x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<4xf32>) -> tensor<1x4x2x8xf32>
  // CHECK: qeff.attention %arg0, %arg1, %arg1, %arg2 sinks %arg3 {head_dim
  %b = qeff.attention %q, %k, %k, %m sinks %s {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64} : (tensor<1x4x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x1x2x2xi1>, tensor<4xf32>) -> tensor<1x4x2x8xf32>
  // CHECK: qeff.moe %arg4, %arg5 router_bias %arg6, %arg7, %arg8, %arg9, %arg10 {kind = #qeff<activation silu>, num_experts = 1 : i64, swiglu_alpha = 1.702000e+00 : f64, swiglu_limit = 7.000000e+00 : f64, top_k = 1 : i64}
  %y = qeff.moe %x, %r router_bias %rb, %w13, %b13, %w2, %b2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>, swiglu_limit = 7.0 : f64, swiglu_alpha = 1.702 : f64} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<1xf32>, tensor<16x8xf32>, tensor<1x16xf32>, tensor<8x8xf32>, tensor<1x8xf32>) -> tensor<1x2x8xf32>
  return %a, %b, %y : tensor<1x4x2x8xf32>, tensor<1x4x2x8xf32>, tensor<1x2x8xf32>
}
