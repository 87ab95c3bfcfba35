// RUN: qeff-opt %s -split-input-file -qeff-kv-retained-state=ctx-len=16 -verify-diagnostics | FileCheck %s

// One layer with a cache: inputs become [B, H, 16, D], the concat becomes a
// scatter at position_ids, the causal attention takes a position mask, the
// LM head sees only the last valid token, outputs are renamed.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<?x?xi64> {qeff.dims = ["batch_size", "seq_len"], qeff.name = "input_ids"},
// CHECK-SAME: %[[POS:[^:]*]]: tensor<?x?xi64> {qeff.dims = ["batch_size", "seq_len"], qeff.name = "position_ids"},
// CHECK-SAME: %[[PK:[^:]*]]: tensor<?x2x16x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_key.0"},
// CHECK-SAME: %[[PV:[^:]*]]: tensor<?x2x16x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_value.0"})
// CHECK-SAME: -> (tensor<?x1x32xf32> {qeff.dims = ["batch_size", "", ""], qeff.name = "logits"},
// CHECK-SAME: tensor<?x2x16x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_key.0_RetainedState"},
// CHECK-SAME: tensor<?x2x16x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_value.0_RetainedState"})
// CHECK-NOT: qeff.kv_concat
// CHECK: %[[K:.*]] = qeff.ctx_scatter %[[PK]], %[[POS]], %{{.*}} : (tensor<?x2x16x8xf32>, tensor<?x?xi64>, tensor<?x2x?x8xf32>) -> tensor<?x2x16x8xf32>
// CHECK: %[[V:.*]] = qeff.ctx_scatter %[[PV]], %[[POS]], %{{.*}}
// CHECK: %[[M:.*]] = qeff.causal_mask %[[POS]] {ctx_len = 16 : i64, sliding_window = 4 : i64} : (tensor<?x?xi64>) -> tensor<?x1x?x16xi1>
// CHECK: qeff.attention %{{.*}}, %[[K]], %[[V]], %[[M]] {head_dim = 8 : i64, num_heads = 4 : i64, num_kv_heads = 2 : i64, scale = 3.500000e-01 : f64, sliding_window = 4 : i64}
// CHECK: %[[LAST:.*]] = qeff.last_token_select %{{.*}}, %[[POS]] : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<?x1x32xf32>
// CHECK: %[[LOGITS:.*]] = qeff.linear %[[LAST]], %{{.*}} : (tensor<?x1x32xf32>, tensor<32x32xf32>) -> tensor<?x1x32xf32>
// CHECK: return %[[LOGITS]], %[[K]], %[[V]]
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"},
                   %pv: tensor<?x2x?x8xf32> {qeff.name = "past_value.0"})
    -> (tensor<?x?x32xf32> {qeff.name = "logits"}, tensor<?x2x?x8xf32> {qeff.name = "present_key.0"},
        tensor<?x2x?x8xf32> {qeff.name = "present_value.0"}) {
  %t = qeff.weight "embed" : f32 -> tensor<32x32xf32>
  %h = qeff.embedding %ids, %t : (tensor<?x?xi64>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %q = qeff.split_heads %h {num_heads = 4 : i64} : (tensor<?x?x32xf32>) -> tensor<?x4x?x8xf32>
  %kv, %unused = qeff.split %h {sizes = array<i64: 16, 16>} : (tensor<?x?x32xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>)
  %k = qeff.split_heads %kv {num_heads = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<?x2x?x8xf32>
  %kc = qeff.kv_concat %pk, %k {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %vc = qeff.kv_concat %pv, %k {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %a = qeff.attention %q, %kc, %vc {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true, sliding_window = 4 : i64} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
  %m = qeff.merge_heads %a : (tensor<?x4x?x8xf32>) -> tensor<?x?x32xf32>
  %w = qeff.weight "lm_head" : f32 -> tensor<32x32xf32>
  %logits = qeff.linear %m, %w : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  return %logits, %kc, %vc : tensor<?x?x32xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
}

// -----

// Negative: a concat whose past is not a cache input, a non-causal attention
// and a linear that is not the logits stay as they are; a function without
// cache inputs is not touched at all.
// CHECK-LABEL: func.func @no_cache
// CHECK: qeff.kv_concat
// CHECK: qeff.attention {{.*}} {causal = true
// CHECK-NOT: qeff.causal_mask
// CHECK-NOT: qeff.last_token_select
func.func @no_cache(%x: tensor<1x2x3x8xf32>, %y: tensor<1x2x3x8xf32>, %pos: tensor<1x3xi64> {qeff.name = "position_ids"})
    -> (tensor<1x2x3x8xf32> {qeff.name = "logits"}) {
  %c = qeff.kv_concat %x, %y {layout = #qeff<kv_layout bhsd>} : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x6x8xf32>
  %a = qeff.attention %x, %c, %c {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<1x2x3x8xf32>, tensor<1x2x6x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x2x3x8xf32>
  return %a : tensor<1x2x3x8xf32>
}

// -----

// A cache input in another layout must be normalised first.
func.func @wrong_layout(%pos: tensor<?x?xi64> {qeff.name = "position_ids"},
                        // expected-error @+1 {{cache input 'past_key.0' must be [batch, kv_heads, seq, head_dim] (bhsd), got 'tensor<?x?x8xf32>'; run qeff-normalize-kv-layout first}}
                        %pk: tensor<?x?x8xf32> {qeff.name = "past_key.0"}) -> tensor<?x?x8xf32> {
  return %pk : tensor<?x?x8xf32>
}

// -----

// Cache inputs need position_ids to scatter at.
// expected-error @+1 {{@forward has cache inputs but no position_ids argument}}
func.func @forward(%pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"}) -> tensor<?x2x?x8xf32> {
  return %pk : tensor<?x2x?x8xf32>
}

// -----

// A present output whose cache could not be rewritten (here: the input is
// returned as is) is not a retained state.
func.func @forward(%pos: tensor<?x?xi64> {qeff.name = "position_ids"},
                   // expected-error @+1 {{output 'present_key.0' is not a retained cache: its cache input was not rewritten to a fixed ctx_len cache}}
                   %pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"})
    -> (tensor<?x2x?x8xf32> {qeff.name = "present_key.0"}) {
  return %pk : tensor<?x2x?x8xf32>
}

// -----

// Logit transforms after the LM head (Cohere's logit scale, Gemma 2's final
// soft-cap): the head still sees only the last token, and the transforms
// take its [B, 1, vocab] type. A softcap that is used twice is not part of
// the head's chain (negative case below).
// CHECK-LABEL: func.func @logit_transforms(
// CHECK-SAME: -> (tensor<?x1x32xf32> {qeff.dims = ["batch_size", "", ""], qeff.name = "logits"}
// CHECK: %[[LAST:.*]] = qeff.last_token_select %{{.*}}, %{{.*}} : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<?x1x32xf32>
// CHECK: %[[L:.*]] = qeff.linear %[[LAST]], %{{.*}} : (tensor<?x1x32xf32>, tensor<32x32xf32>) -> tensor<?x1x32xf32>
// CHECK: %[[S:.*]] = qeff.scale %[[L]] {factor = 2.500000e-01 : f64} : (tensor<?x1x32xf32>) -> tensor<?x1x32xf32>
// CHECK: %[[C:.*]] = qeff.softcap %[[S]] {cap = 3.000000e+01 : f64} : (tensor<?x1x32xf32>) -> tensor<?x1x32xf32>
// CHECK: return %[[C]]
func.func @logit_transforms(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"})
    -> (tensor<?x?x32xf32> {qeff.name = "logits"}, tensor<?x2x?x8xf32> {qeff.name = "present_key.0"}) {
  %t = qeff.weight "embed" : f32 -> tensor<32x32xf32>
  %h = qeff.embedding %ids, %t : (tensor<?x?xi64>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %kv, %unused = qeff.split %h {sizes = array<i64: 16, 16>} : (tensor<?x?x32xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>)
  %k = qeff.split_heads %kv {num_heads = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<?x2x?x8xf32>
  %kc = qeff.kv_concat %pk, %k {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %w = qeff.weight "lm_head" : f32 -> tensor<32x32xf32>
  %logits = qeff.linear %h, %w : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %scaled = qeff.scale %logits {factor = 0.25 : f64} : (tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  %capped = qeff.softcap %scaled {cap = 30.0 : f64} : (tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %capped, %kc : tensor<?x?x32xf32>, tensor<?x2x?x8xf32>
}

// -----

// Negative: the scaled logits also feed another result, so the scale is not
// a transform of the head alone and the head keeps every token.
// CHECK-LABEL: func.func @logit_transform_shared(
// CHECK-NOT: qeff.last_token_select
// CHECK: return
func.func @logit_transform_shared(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"})
    -> (tensor<?x?x32xf32> {qeff.name = "logits"}, tensor<?x?x32xf32> {qeff.name = "raw"}, tensor<?x2x?x8xf32> {qeff.name = "present_key.0"}) {
  %t = qeff.weight "embed" : f32 -> tensor<32x32xf32>
  %h = qeff.embedding %ids, %t : (tensor<?x?xi64>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %kv, %unused = qeff.split %h {sizes = array<i64: 16, 16>} : (tensor<?x?x32xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>)
  %k = qeff.split_heads %kv {num_heads = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<?x2x?x8xf32>
  %kc = qeff.kv_concat %pk, %k {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %w = qeff.weight "lm_head" : f32 -> tensor<32x32xf32>
  %logits = qeff.linear %h, %w : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %scaled = qeff.scale %logits {factor = 0.25 : f64} : (tensor<?x?x32xf32>) -> tensor<?x?x32xf32>
  return %scaled, %logits, %kc : tensor<?x?x32xf32>, tensor<?x?x32xf32>, tensor<?x2x?x8xf32>
}
