// RUN: qeff-opt %s -split-input-file -verify-diagnostics

// Every qeff verifier message, one case each (continued from invalid.mlir):
// attention, KV cache, masks, activations, MoE and the shape ops.

func.func @attention_groups(%q: tensor<1x3x2x8xf32>, %k: tensor<1x2x2x8xf32>) {
  // expected-error @+1 {{num_heads (3) is not a multiple of num_kv_heads (2)}}
  %0 = qeff.attention %q, %k, %k {num_heads = 3 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<1x3x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>) -> tensor<1x3x2x8xf32>
  return
}

// -----

func.func @attention_query_heads(%q: tensor<1x2x2x8xf32>, %k: tensor<1x2x2x8xf32>) {
  // expected-error @+1 {{query dimension 1 is 2 but [batch, num_heads, seq, head_dim] requires 4}}
  %0 = qeff.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>) -> tensor<1x2x2x8xf32>
  return
}

// -----

func.func @attention_key_rank(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x8xf32>) {
  // expected-error @+1 {{key must be rank 4 ([batch, num_kv_heads, kv_seq, head_dim]), got rank 3}}
  %0 = qeff.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<1x4x2x8xf32>, tensor<1x2x8xf32>, tensor<1x2x8xf32>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @attention_key_head_dim(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x2x4xf32>) {
  // expected-error @+1 {{key dimension 3 is 4 but [batch, num_kv_heads, kv_seq, head_dim] requires 8}}
  %0 = qeff.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<1x4x2x8xf32>, tensor<1x2x2x4xf32>, tensor<1x2x2x4xf32>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @attention_value(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x5x8xf32>, %v: tensor<1x2x6x8xf32>) {
  // expected-error @+1 {{value dimension 2 is 6 but [batch, num_kv_heads, kv_seq, head_dim] requires 5}}
  %0 = qeff.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<1x4x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x6x8xf32>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @attention_result(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{result type 'tensor<1x4x2x8xf16>' must match the query type 'tensor<1x4x2x8xf32>'}}
  %0 = qeff.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<1x4x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x2x8xf16>
  return
}

// -----

func.func @attention_mask_and_causal(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x5x8xf32>, %m: tensor<1x1x2x5xi1>) {
  // expected-error @+1 {{an explicit mask and causal masking are exclusive}}
  %0 = qeff.attention %q, %k, %k, %m {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<1x4x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x1x2x5xi1>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @attention_mask_rank(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x5x8xf32>, %m: tensor<2x5xi1>) {
  // expected-error @+1 {{mask must be rank 4 ([batch, 1, seq, kv_seq]), got rank 2}}
  %0 = qeff.attention %q, %k, %k, %m {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64} : (tensor<1x4x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<2x5xi1>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @attention_mask_kv(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x5x8xf32>, %m: tensor<1x1x2x6xi1>) {
  // expected-error @+1 {{mask dimension 3 is 6 but [batch, 1, seq, kv_seq] requires 5}}
  %0 = qeff.attention %q, %k, %k, %m {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64} : (tensor<1x4x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>, tensor<1x1x2x6xi1>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @attention_scale(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{scale must be positive}}
  %0 = qeff.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.0 : f64, causal = true} : (tensor<1x4x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @attention_window_unmasked(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{sliding_window needs causal masking or a mask}}
  %0 = qeff.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, sliding_window = 4 : i64} : (tensor<1x4x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @attention_alibi(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{alibi_slopes has 2 entries but num_heads is 4}}
  %0 = qeff.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true, alibi_slopes = array<f64: 0.5, 0.25>} : (tensor<1x4x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @attention_softcap(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x5x8xf32>) {
  // expected-error @+1 {{softcap must be positive}}
  %0 = qeff.attention %q, %k, %k {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true, softcap = -1.0 : f64} : (tensor<1x4x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @kv_concat_rank(%p: tensor<1x2x3x8xf32>, %u: tensor<1x3x8xf32>) {
  // expected-error @+1 {{update must be rank 4 (kv_layout bhsd), got rank 3}}
  %0 = qeff.kv_concat %p, %u {layout = #qeff<kv_layout bhsd>} : (tensor<1x2x3x8xf32>, tensor<1x3x8xf32>) -> tensor<1x2x6x8xf32>
  return
}

// -----

func.func @kv_concat_bsd_rank(%p: tensor<1x2x3x8xf32>, %u: tensor<1x2x3x8xf32>) {
  // expected-error @+1 {{past must be rank 3 (kv_layout bsd), got rank 4}}
  %0 = qeff.kv_concat %p, %u {layout = #qeff<kv_layout bsd>} : (tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>) -> tensor<1x2x6x8xf32>
  return
}

// -----

func.func @kv_concat_heads(%p: tensor<1x2x3x8xf32>, %u: tensor<1x4x1x8xf32>) {
  // expected-error @+1 {{past and update differ in dimension 1 (2 vs 4); only the sequence axis 2 may differ}}
  %0 = qeff.kv_concat %p, %u {layout = #qeff<kv_layout bhsd>} : (tensor<1x2x3x8xf32>, tensor<1x4x1x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @kv_concat_length(%p: tensor<1x3x2x8xf32>, %u: tensor<1x1x2x8xf32>) {
  // expected-error @+1 {{result dimension 1 is 5 but past + update along the sequence axis requires 4}}
  %0 = qeff.kv_concat %p, %u {layout = #qeff<kv_layout bshd>} : (tensor<1x3x2x8xf32>, tensor<1x1x2x8xf32>) -> tensor<1x5x2x8xf32>
  return
}

// -----

func.func @kv_concat_element(%p: tensor<3x1x2x8xf32>, %u: tensor<1x1x2x8xf16>) {
  // expected-error @+1 {{past, update and result must share an element type}}
  %0 = qeff.kv_concat %p, %u {layout = #qeff<kv_layout sbhd>} : (tensor<3x1x2x8xf32>, tensor<1x1x2x8xf16>) -> tensor<4x1x2x8xf32>
  return
}

// -----

func.func @ctx_scatter_cache_rank(%c: tensor<2x16x8xf32>, %p: tensor<1x4xi64>, %u: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{cache must be rank 4 ([batch, kv_heads, ctx_len, head_dim]), got rank 3}}
  %0 = qeff.ctx_scatter %c, %p, %u : (tensor<2x16x8xf32>, tensor<1x4xi64>, tensor<1x2x4x8xf32>) -> tensor<2x16x8xf32>
  return
}

// -----

func.func @ctx_scatter_heads(%c: tensor<1x2x16x8xf32>, %p: tensor<1x4xi64>, %u: tensor<1x4x4x8xf32>) {
  // expected-error @+1 {{update dimension 1 is 4 but [batch, kv_heads, seq, head_dim] of the cache requires 2}}
  %0 = qeff.ctx_scatter %c, %p, %u : (tensor<1x2x16x8xf32>, tensor<1x4xi64>, tensor<1x4x4x8xf32>) -> tensor<1x2x16x8xf32>
  return
}

// -----

func.func @ctx_scatter_positions(%c: tensor<1x2x16x8xf32>, %p: tensor<1x3xi64>, %u: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{positions dimension 1 is 3 but [batch, seq] requires 4}}
  %0 = qeff.ctx_scatter %c, %p, %u : (tensor<1x2x16x8xf32>, tensor<1x3xi64>, tensor<1x2x4x8xf32>) -> tensor<1x2x16x8xf32>
  return
}

// -----

func.func @ctx_scatter_overflow(%c: tensor<1x2x4x8xf32>, %p: tensor<1x8xi64>, %u: tensor<1x2x8x8xf32>) {
  // expected-error @+1 {{update holds 8 tokens but the cache only 4 slots}}
  %0 = qeff.ctx_scatter %c, %p, %u : (tensor<1x2x4x8xf32>, tensor<1x8xi64>, tensor<1x2x8x8xf32>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @ctx_scatter_ring_slots(%c: tensor<1x2x16x8xf32>, %p: tensor<1x4xi64>, %u: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{a rolling buffer of ring 8 needs ring + 1 cache slots, got 16}}
  %0 = qeff.ctx_scatter %c, %p, %u {ring = 8 : i64} : (tensor<1x2x16x8xf32>, tensor<1x4xi64>, tensor<1x2x4x8xf32>) -> tensor<1x2x16x8xf32>
  return
}

// -----

func.func @ctx_scatter_element(%c: tensor<1x2x16x8xf32>, %p: tensor<1x4xi64>, %u: tensor<1x2x4x8xf16>) {
  // expected-error @+1 {{update element type must match the cache's}}
  %0 = qeff.ctx_scatter %c, %p, %u : (tensor<1x2x16x8xf32>, tensor<1x4xi64>, tensor<1x2x4x8xf16>) -> tensor<1x2x16x8xf32>
  return
}

// -----

func.func @ctx_scatter_result(%c: tensor<1x2x16x8xf32>, %p: tensor<1x4xi64>, %u: tensor<1x2x4x8xf32>) {
  // expected-error @+1 {{result type 'tensor<1x2x8x8xf32>' must match the cache type 'tensor<1x2x16x8xf32>'}}
  %0 = qeff.ctx_scatter %c, %p, %u : (tensor<1x2x16x8xf32>, tensor<1x4xi64>, tensor<1x2x4x8xf32>) -> tensor<1x2x8x8xf32>
  return
}

// -----

func.func @ctx_scatter_batch_index_rank(%c: tensor<4x2x16x8xf32>, %p: tensor<1x4xi64>, %u: tensor<1x2x4x8xf32>, %i: tensor<1xi64>) {
  // expected-error @+1 {{batch_index must be rank 2 ([batch, 1]), got rank 1}}
  %0 = qeff.ctx_scatter %c, %p, %u, %i : (tensor<4x2x16x8xf32>, tensor<1x4xi64>, tensor<1x2x4x8xf32>, tensor<1xi64>) -> tensor<4x2x16x8xf32>
  return
}

// -----

func.func @ctx_scatter_batch_index_rows(%c: tensor<4x2x16x8xf32>, %p: tensor<1x4xi64>, %u: tensor<1x2x4x8xf32>, %i: tensor<2x1xi64>) {
  // expected-error @+1 {{batch_index dimension 0 is 2 but [batch, 1] requires 1}}
  %0 = qeff.ctx_scatter %c, %p, %u, %i : (tensor<4x2x16x8xf32>, tensor<1x4xi64>, tensor<1x2x4x8xf32>, tensor<2x1xi64>) -> tensor<4x2x16x8xf32>
  return
}

// -----

func.func @ctx_rows_cache_rank(%c: tensor<4x16x8xf32>, %i: tensor<1x1xi64>) {
  // expected-error @+1 {{cache must be rank 4 ([full_batch_size, kv_heads, ctx_len, head_dim]), got rank 3}}
  %0 = qeff.ctx_rows %c, %i : (tensor<4x16x8xf32>, tensor<1x1xi64>) -> tensor<1x16x8xf32>
  return
}

// -----

func.func @ctx_rows_index_shape(%c: tensor<4x2x16x8xf32>, %i: tensor<1x2xi64>) {
  // expected-error @+1 {{batch_index dimension 1 is 2 but [batch, 1] requires 1}}
  %0 = qeff.ctx_rows %c, %i : (tensor<4x2x16x8xf32>, tensor<1x2xi64>) -> tensor<1x2x16x8xf32>
  return
}

// -----

func.func @ctx_rows_result(%c: tensor<4x2x16x8xf32>, %i: tensor<2x1xi64>) {
  // expected-error @+1 {{result dimension 0 is 4 but [batch, kv_heads, ctx_len, head_dim] requires 2}}
  %0 = qeff.ctx_rows %c, %i : (tensor<4x2x16x8xf32>, tensor<2x1xi64>) -> tensor<4x2x16x8xf32>
  return
}

// -----

func.func @ctx_rows_element(%c: tensor<4x2x16x8xf32>, %i: tensor<1x1xi64>) {
  // expected-error @+1 {{result element type must match the cache's}}
  %0 = qeff.ctx_rows %c, %i : (tensor<4x2x16x8xf32>, tensor<1x1xi64>) -> tensor<1x2x16x8xf16>
  return
}

// -----

func.func @ctx_gather_slots(%c: tensor<1x2x16x8xf32>, %s: tensor<4xi64>) {
  // expected-error @+1 {{slots must be rank 2 ([batch, n]), got rank 1}}
  %0 = qeff.ctx_gather %c, %s : (tensor<1x2x16x8xf32>, tensor<4xi64>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @ctx_gather_batch(%c: tensor<1x2x16x8xf32>, %s: tensor<2x4xi64>) {
  // expected-error @+1 {{slots dimension 0 is 2 but [batch, n] requires 1}}
  %0 = qeff.ctx_gather %c, %s : (tensor<1x2x16x8xf32>, tensor<2x4xi64>) -> tensor<1x2x4x8xf32>
  return
}

// -----

func.func @ctx_gather_result(%c: tensor<1x2x16x8xf32>, %s: tensor<1x4xi64>) {
  // expected-error @+1 {{result dimension 2 is 16 but [batch, kv_heads, n, head_dim] requires 4}}
  %0 = qeff.ctx_gather %c, %s : (tensor<1x2x16x8xf32>, tensor<1x4xi64>) -> tensor<1x2x16x8xf32>
  return
}

// -----

func.func @ctx_gather_element(%c: tensor<1x2x16x8xf32>, %s: tensor<1x4xi64>) {
  // expected-error @+1 {{result element type must match the cache's}}
  %0 = qeff.ctx_gather %c, %s : (tensor<1x2x16x8xf32>, tensor<1x4xi64>) -> tensor<1x2x4x8xf16>
  return
}

// -----

func.func @causal_mask_ctx(%p: tensor<1x4xi64>) {
  // expected-error @+1 {{result dimension 3 is 8 but [batch, 1, seq, ctx_len] requires 16}}
  %0 = qeff.causal_mask %p {ctx_len = 16 : i64} : (tensor<1x4xi64>) -> tensor<1x1x4x8xi1>
  return
}

// -----

func.func @causal_mask_ring_no_window(%p: tensor<1x4xi64>) {
  // expected-error @+1 {{a rolling buffer (ring) needs a sliding_window}}
  %0 = qeff.causal_mask %p {ctx_len = 9 : i64, ring = 8 : i64} : (tensor<1x4xi64>) -> tensor<1x1x4x9xi1>
  return
}

// -----

func.func @causal_mask_ring_small(%p: tensor<1x4xi64>) {
  // expected-error @+1 {{ring 2 is smaller than the sliding_window 4}}
  %0 = qeff.causal_mask %p {ctx_len = 3 : i64, ring = 2 : i64, sliding_window = 4 : i64} : (tensor<1x4xi64>) -> tensor<1x1x4x3xi1>
  return
}

// -----

func.func @causal_mask_ring_slots(%p: tensor<1x4xi64>) {
  // expected-error @+1 {{a rolling buffer of ring 8 has ring + 1 slots, but ctx_len is 16}}
  %0 = qeff.causal_mask %p {ctx_len = 16 : i64, ring = 8 : i64, sliding_window = 4 : i64} : (tensor<1x4xi64>) -> tensor<1x1x4x16xi1>
  return
}

// -----

func.func @causal_mask_positions(%p: tensor<4xi64>) {
  // expected-error @+1 {{positions must be rank 2 ([batch, seq]), got rank 1}}
  %0 = qeff.causal_mask %p {ctx_len = 16 : i64} : (tensor<4xi64>) -> tensor<1x1x4x16xi1>
  return
}

// -----

func.func @causal_mask_window(%p: tensor<1x4xi64>) {
  // expected-error @+1 {{attribute 'sliding_window' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = qeff.causal_mask %p {ctx_len = 16 : i64, sliding_window = -1 : i64} : (tensor<1x4xi64>) -> tensor<1x1x4x16xi1>
  return
}

// -----

func.func @last_token_result(%h: tensor<1x4x8xf32>, %p: tensor<1x4xi64>) {
  // expected-error @+1 {{result dimension 1 is 4 but [batch, 1, n] requires 1}}
  %0 = qeff.last_token_select %h, %p : (tensor<1x4x8xf32>, tensor<1x4xi64>) -> tensor<1x4x8xf32>
  return
}

// -----

func.func @last_token_positions(%h: tensor<1x4x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{positions dimension 1 is 3 but [batch, seq] requires 4}}
  %0 = qeff.last_token_select %h, %p : (tensor<1x4x8xf32>, tensor<1x3xi64>) -> tensor<1x1x8xf32>
  return
}

// -----

func.func @last_token_element(%h: tensor<1x4x8xf32>, %p: tensor<1x4xi64>) {
  // expected-error @+1 {{result element type must match the input's}}
  %0 = qeff.last_token_select %h, %p : (tensor<1x4x8xf32>, tensor<1x4xi64>) -> tensor<1x1x8xf16>
  return
}

// -----

func.func @last_token_rank(%h: tensor<4x8xf32>, %p: tensor<1x4xi64>) {
  // expected-error @+1 {{input must be rank 3 ([batch, seq, n]), got rank 2}}
  %0 = qeff.last_token_select %h, %p : (tensor<4x8xf32>, tensor<1x4xi64>) -> tensor<1x1x8xf32>
  return
}

// -----

func.func @fp16_clamp_limit(%x: tensor<4xf32>) {
  // expected-error @+1 {{limit must be in (0, 65504], got 7.000000e+04}}
  %0 = qeff.fp16_clamp %x {limit = 70000.0 : f64} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @fp16_clamp_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = qeff.fp16_clamp %x : (tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @gated_activation_up(%g: tensor<2x8xf32>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{up type 'tensor<2x4xf32>' must match the gate type 'tensor<2x8xf32>'}}
  %0 = qeff.gated_activation %g, %u {kind = #qeff<activation silu>} : (tensor<2x8xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @gated_activation_result(%g: tensor<2x8xf32>) {
  // expected-error @+1 {{result type 'tensor<2x4xf32>' must match the gate type 'tensor<2x8xf32>'}}
  %0 = qeff.gated_activation %g, %g {kind = #qeff<activation silu>} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @activation_kind(%x: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::qeff::Activation to be one of: silu, gelu, gelu_tanh, relu}}
  // expected-error @+1 {{failed to parse QEff_ActivationAttr parameter 'value'}}
  %0 = qeff.activation %x {kind = #qeff<activation swish>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @moe_count(%x: tensor<1x2x8xf32>, %r: tensor<2x8xf32>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{expects 3 weights (w1, w3, w2) per expert: 6 for 2 experts, got 2}}
  %0 = qeff.moe %x, %r, %w, %w {num_experts = 2 : i64, top_k = 1 : i64, kind = #qeff<activation silu>} : (tensor<1x2x8xf32>, tensor<2x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @moe_top_k(%x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %w1: tensor<16x8xf32>, %w2: tensor<8x16xf32>) {
  // expected-error @+1 {{top_k (2) exceeds num_experts (1)}}
  %0 = qeff.moe %x, %r, %w1, %w1, %w2 {num_experts = 1 : i64, top_k = 2 : i64, kind = #qeff<activation silu>} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @moe_router(%x: tensor<1x2x8xf32>, %r: tensor<2x8xf32>, %w1: tensor<16x8xf32>, %w2: tensor<8x16xf32>) {
  // expected-error @+1 {{router_weight dimension 0 is 2 but [num_experts, hidden] requires 1}}
  %0 = qeff.moe %x, %r, %w1, %w1, %w2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>} : (tensor<1x2x8xf32>, tensor<2x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @moe_expert_w2(%x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %w1: tensor<16x8xf32>, %w2: tensor<8x12xf32>) {
  // expected-error @+1 {{expert w2 dimension 1 is 12 but [hidden, intermediate] requires 16}}
  %0 = qeff.moe %x, %r, %w1, %w1, %w2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x12xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @moe_expert_w1_rank(%x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %w1: tensor<16xf32>, %w2: tensor<8x16xf32>) {
  // expected-error @+1 {{expert w1 must be rank 2 ([intermediate, hidden]), got rank 1}}
  %0 = qeff.moe %x, %r, %w1, %w1, %w2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<8x16xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @split_sizes(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{sizes add up to 6 but the last dimension is 8}}
  %0:2 = qeff.split %x {sizes = array<i64: 4, 2>} : (tensor<2x8xf32>) -> (tensor<2x4xf32>, tensor<2x2xf32>)
  return
}

// -----

func.func @split_count(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{has 2 sizes but 1 results}}
  %0 = qeff.split %x {sizes = array<i64: 4, 4>} : (tensor<2x8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @split_positive(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{sizes must be positive}}
  %0:2 = qeff.split %x {sizes = array<i64: 8, 0>} : (tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x0xf32>)
  return
}

// -----

func.func @split_result_shape(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{result dimension 1 is 3 but the input with the last dimension split requires 4}}
  %0:2 = qeff.split %x {sizes = array<i64: 4, 4>} : (tensor<2x8xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>)
  return
}

// -----

func.func @split_element(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{results must have the input's element type}}
  %0:2 = qeff.split %x {sizes = array<i64: 4, 4>} : (tensor<2x8xf32>) -> (tensor<2x4xf16>, tensor<2x4xf32>)
  return
}

// -----

func.func @split_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{input must have at least one dimension}}
  %0 = qeff.split %x {sizes = array<i64: 1>} : (tensor<f32>) -> tensor<1xf32>
  return
}

// -----

func.func @transpose_length(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{permutation has 3 entries for a rank 2 input}}
  %0 = qeff.transpose %x {permutation = array<i64: 0, 1, 2>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @transpose_repeat(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{permutation must be a permutation of the dimensions}}
  %0 = qeff.transpose %x {permutation = array<i64: 1, 1>} : (tensor<2x8xf32>) -> tensor<8x8xf32>
  return
}

// -----

func.func @transpose_result(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{result dimension 0 is 2 but the permuted input requires 8}}
  %0 = qeff.transpose %x {permutation = array<i64: 1, 0>} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @transpose_element(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{result element type must match the input's}}
  %0 = qeff.transpose %x {permutation = array<i64: 1, 0>} : (tensor<2x8xf32>) -> tensor<8x2xf16>
  return
}

// -----

// expected-error @+1 {{model architecture must not be empty}}
module attributes {qeff.model = #qeff.model<architecture = "", family = "llama", config = {}, checkpoint = []>} {}

// -----

// expected-error @+1 {{model family must not be empty}}
module attributes {qeff.model = #qeff.model<architecture = "LlamaForCausalLM", family = "", config = {}, checkpoint = []>} {}

// -----

// expected-error @+1 {{model checkpoint entries must be file names}}
module attributes {qeff.model = #qeff.model<architecture = "LlamaForCausalLM", family = "llama", config = {}, checkpoint = [1 : i64]>} {}

// -----

func.func @clamp_range(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{needs finite min <= max, got [2.000000e+00, 1.000000e+00]}}
  %0 = qeff.clamp %x {min = 2.0 : f64, max = 1.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @softcap_cap(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{cap must be positive and finite, got 0}}
  %0 = qeff.softcap %x {cap = 0.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @sigmoid_gate_rank(%g: tensor<1xf32>, %x: tensor<f32>) {
  // expected-error @+1 {{input must have at least one dimension}}
  %0 = qeff.sigmoid_gate %g, %x : (tensor<1xf32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @sigmoid_gate_shape(%g: tensor<2x4xf32>, %x: tensor<2x8xf32>) {
  // expected-error @+1 {{gate dimension 1 is 4 but [..., 1] requires 1}}
  %0 = qeff.sigmoid_gate %g, %x : (tensor<2x4xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @sigmoid_gate_element(%g: tensor<2x1xf16>, %x: tensor<2x8xf32>) {
  // expected-error @+1 {{gate element type must match the input's}}
  %0 = qeff.sigmoid_gate %g, %x : (tensor<2x1xf16>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @sigmoid_gate_result(%g: tensor<2x1xf32>, %x: tensor<2x8xf32>) {
  // expected-error @+1 {{result type 'tensor<2x4xf32>' must match the input type 'tensor<2x8xf32>'}}
  %0 = qeff.sigmoid_gate %g, %x : (tensor<2x1xf32>, tensor<2x8xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @stack_empty() {
  // expected-error @+1 {{needs at least one input}}
  %0 = qeff.stack : () -> tensor<0x8xf32>
  return
}

// -----

func.func @stack_types(%a: tensor<8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{input type 'tensor<4xf32>' must match the first input type 'tensor<8xf32>'}}
  %0 = qeff.stack %a, %b : (tensor<8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @stack_element(%a: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{result element type must match the inputs'}}
  %0 = qeff.stack %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf16>
  return
}

// -----

func.func @stack_shape(%a: tensor<8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{result dimension 0 is 3 but [N, input...] requires 2}}
  %0 = qeff.stack %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<3x8xf32>
  return
}

// -----

func.func @attention_sinks(%q: tensor<1x4x2x8xf32>, %k: tensor<1x2x2x8xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{sinks dimension 0 is 2 but [num_heads] requires 4}}
  %0 = qeff.attention %q, %k, %k sinks %s {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<1x4x2x8xf32>, tensor<1x2x2x8xf32>, tensor<1x2x2x8xf32>, tensor<2xf32>) -> tensor<1x4x2x8xf32>
  return
}

// -----

func.func @moe_router_bias(%x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %b: tensor<2xf32>, %w1: tensor<16x8xf32>, %w2: tensor<8x16xf32>) {
  // expected-error @+1 {{router_bias dimension 0 is 2 but [num_experts] requires 1}}
  %0 = qeff.moe %x, %r router_bias %b, %w1, %w1, %w2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<2xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x16xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @moe_swiglu_pair(%x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %w13: tensor<16x8xf32>, %b13: tensor<1x16xf32>, %w2: tensor<8x8xf32>, %b2: tensor<1x8xf32>) {
  // expected-error @+1 {{swiglu_limit and swiglu_alpha go together}}
  %0 = qeff.moe %x, %r, %w13, %b13, %w2, %b2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>, swiglu_limit = 7.0 : f64} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<16x8xf32>, tensor<1x16xf32>, tensor<8x8xf32>, tensor<1x8xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @moe_swiglu_count(%x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %w13: tensor<16x8xf32>, %w2: tensor<8x8xf32>) {
  // expected-error @+1 {{expects 4 weights (w13, b13, w2, b2) per expert: 4 for 1 experts, got 3}}
  %0 = qeff.moe %x, %r, %w13, %w13, %w2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>, swiglu_limit = 7.0 : f64, swiglu_alpha = 1.702 : f64} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<8x8xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @moe_swiglu_down(%x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %w13: tensor<16x8xf32>, %b13: tensor<1x16xf32>, %w2: tensor<8x16xf32>, %b2: tensor<1x8xf32>) {
  // expected-error @+1 {{expert w2 dimension 1 is 16 but [hidden, intermediate] requires 8}}
  %0 = qeff.moe %x, %r, %w13, %b13, %w2, %b2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>, swiglu_limit = 7.0 : f64, swiglu_alpha = 1.702 : f64} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<16x8xf32>, tensor<1x16xf32>, tensor<8x16xf32>, tensor<1x8xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @moe_swiglu_kind(%x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %w13: tensor<16x8xf32>, %b13: tensor<1x16xf32>, %w2: tensor<8x8xf32>, %b2: tensor<1x8xf32>) {
  // expected-error @+1 {{the clamped SwiGLU form needs kind silu}}
  %0 = qeff.moe %x, %r, %w13, %b13, %w2, %b2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation gelu>, swiglu_limit = 7.0 : f64, swiglu_alpha = 1.702 : f64} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<16x8xf32>, tensor<1x16xf32>, tensor<8x8xf32>, tensor<1x8xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @moe_swiglu_limit(%x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %w13: tensor<16x8xf32>, %b13: tensor<1x16xf32>, %w2: tensor<8x8xf32>, %b2: tensor<1x8xf32>) {
  // expected-error @+1 {{swiglu_limit must be positive}}
  %0 = qeff.moe %x, %r, %w13, %b13, %w2, %b2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>, swiglu_limit = 0.0 : f64, swiglu_alpha = 1.702 : f64} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<16x8xf32>, tensor<1x16xf32>, tensor<8x8xf32>, tensor<1x8xf32>) -> tensor<1x2x8xf32>
  return
}

// -----

func.func @moe_swiglu_odd(%x: tensor<1x2x8xf32>, %r: tensor<1x8xf32>, %w13: tensor<15x8xf32>, %b13: tensor<1x15xf32>, %w2: tensor<8x7xf32>, %b2: tensor<1x8xf32>) {
  // expected-error @+1 {{expert w13 has 15 rows; gate and up need an even count}}
  %0 = qeff.moe %x, %r, %w13, %b13, %w2, %b2 {num_experts = 1 : i64, top_k = 1 : i64, kind = #qeff<activation silu>, swiglu_limit = 7.0 : f64, swiglu_alpha = 1.702 : f64} : (tensor<1x2x8xf32>, tensor<1x8xf32>, tensor<15x8xf32>, tensor<1x15xf32>, tensor<8x7xf32>, tensor<1x8xf32>) -> tensor<1x2x8xf32>
  return
}
