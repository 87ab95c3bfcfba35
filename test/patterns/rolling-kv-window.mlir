// RUN: qeff-opt %s -split-input-file -qeff-kv-retained-state=ctx-len=64 -qeff-rolling-kv-window=prefill-seq-len=4 -verify-diagnostics | FileCheck %s
// RUN: not qeff-opt %s -split-input-file -qeff-kv-retained-state=ctx-len=64 -qeff-rolling-kv-window 2>&1 | FileCheck %s --check-prefix=NOPREFILL

// NOPREFILL: qeff-rolling-kv-window needs a positive prefill-seq-len option

// A window layer (window 4) and a global layer: the window layer's cache
// becomes a rolling buffer of 4 + 4 - 1 = 7 slots plus the padding slot, its
// scatter and mask take ring = 7, its input and output name no ctx_len any
// more; the global layer keeps 64 slots and its plain mask.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[POS:[^:]*]]: tensor<?x?xi64> {qeff.dims = ["batch_size", "seq_len"], qeff.name = "position_ids"},
// CHECK-SAME: %[[PK0:[^:]*]]: tensor<?x2x8x8xf32> {qeff.dims = ["batch_size", "", "", ""], qeff.name = "past_key.0"},
// CHECK-SAME: %[[PV0:[^:]*]]: tensor<?x2x8x8xf32> {qeff.dims = ["batch_size", "", "", ""], qeff.name = "past_value.0"},
// CHECK-SAME: %[[PK1:[^:]*]]: tensor<?x2x64x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_key.1"},
// CHECK-SAME: %[[PV1:[^:]*]]: tensor<?x2x64x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_value.1"})
// CHECK-SAME: tensor<?x2x8x8xf32> {qeff.dims = ["batch_size", "", "", ""], qeff.name = "past_key.0_RetainedState"}
// CHECK-SAME: tensor<?x2x8x8xf32> {qeff.dims = ["batch_size", "", "", ""], qeff.name = "past_value.0_RetainedState"}
// CHECK-SAME: tensor<?x2x64x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_key.1_RetainedState"}
// CHECK: %[[K0:.*]] = qeff.ctx_scatter %[[PK0]], %[[POS]], %{{.*}} {ring = 7 : i64} : (tensor<?x2x8x8xf32>, tensor<?x?xi64>, tensor<?x2x?x8xf32>) -> tensor<?x2x8x8xf32>
// CHECK: %[[V0:.*]] = qeff.ctx_scatter %[[PV0]], %[[POS]], %{{.*}} {ring = 7 : i64}
// CHECK: %[[M0:.*]] = qeff.causal_mask %[[POS]] {ctx_len = 8 : i64, ring = 7 : i64, sliding_window = 4 : i64} : (tensor<?x?xi64>) -> tensor<?x1x?x8xi1>
// CHECK: qeff.attention %{{.*}}, %[[K0]], %[[V0]], %[[M0]]
// CHECK: %[[K1:.*]] = qeff.ctx_scatter %[[PK1]], %[[POS]], %{{.*}} : (tensor<?x2x64x8xf32>
// CHECK: %[[M1:.*]] = qeff.causal_mask %[[POS]] {ctx_len = 64 : i64} : (tensor<?x?xi64>) -> tensor<?x1x?x64xi1>
// CHECK: qeff.attention %{{.*}}, %[[K1]], %{{.*}}, %[[M1]]
// CHECK-NOT: ring
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pk0: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"},
                   %pv0: tensor<?x2x?x8xf32> {qeff.name = "past_value.0"},
                   %pk1: tensor<?x2x?x8xf32> {qeff.name = "past_key.1"},
                   %pv1: tensor<?x2x?x8xf32> {qeff.name = "past_value.1"})
    -> (tensor<?x?x16xf32> {qeff.name = "logits"},
        tensor<?x2x?x8xf32> {qeff.name = "present_key.0"}, tensor<?x2x?x8xf32> {qeff.name = "present_value.0"},
        tensor<?x2x?x8xf32> {qeff.name = "present_key.1"}, tensor<?x2x?x8xf32> {qeff.name = "present_value.1"}) {
  %t = qeff.weight "embed" : f32 -> tensor<32x16xf32>
  %h = qeff.embedding %ids, %t : (tensor<?x?xi64>, tensor<32x16xf32>) -> tensor<?x?x16xf32>
  %q = qeff.split_heads %h {num_heads = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<?x2x?x8xf32>
  %k0 = qeff.kv_concat %pk0, %q {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %v0 = qeff.kv_concat %pv0, %q {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %a0 = qeff.attention %q, %k0, %v0 {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true, sliding_window = 4 : i64} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %k1 = qeff.kv_concat %pk1, %a0 {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %v1 = qeff.kv_concat %pv1, %a0 {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %a1 = qeff.attention %a0, %k1, %v1 {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %m = qeff.merge_heads %a1 : (tensor<?x2x?x8xf32>) -> tensor<?x?x16xf32>
  %w = qeff.weight "lm_head" : f32 -> tensor<16x16xf32>
  %logits = qeff.linear %m, %w : (tensor<?x?x16xf32>, tensor<16x16xf32>) -> tensor<?x?x16xf32>
  return %logits, %k0, %v0, %k1, %v1 : tensor<?x?x16xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
}

// -----

// No-op: a window of 61 would need 61 + 4 - 1 + 1 = 65 slots, more than
// ctx_len 64: the layer keeps its full cache and plain window mask.
// CHECK-LABEL: func.func @wide_window(
// CHECK-SAME: tensor<?x2x64x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_key.0"}
// CHECK-NOT: ring
// CHECK: qeff.causal_mask %{{.*}} {ctx_len = 64 : i64, sliding_window = 61 : i64}
// CHECK-NOT: ring
func.func @wide_window(%pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                       %q: tensor<?x2x?x8xf32> {qeff.name = "q"},
                       %pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"},
                       %pv: tensor<?x2x?x8xf32> {qeff.name = "past_value.0"})
    -> (tensor<?x2x?x8xf32> {qeff.name = "out"}, tensor<?x2x?x8xf32> {qeff.name = "present_key.0"},
        tensor<?x2x?x8xf32> {qeff.name = "present_value.0"}) {
  %k = qeff.kv_concat %pk, %q {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %v = qeff.kv_concat %pv, %q {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %a = qeff.attention %q, %k, %v {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true, sliding_window = 61 : i64} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  return %a, %k, %v : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
}

// -----

// Refused: the window layer's cache is also read by attention without that
// window, which would see the slots out of position order.
func.func @other_reader(%pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                        %q: tensor<?x2x?x8xf32> {qeff.name = "q"},
                        %pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"},
                        %pv: tensor<?x2x?x8xf32> {qeff.name = "past_value.0"})
    -> (tensor<?x2x?x8xf32> {qeff.name = "out"}, tensor<?x2x?x8xf32> {qeff.name = "present_key.0"},
        tensor<?x2x?x8xf32> {qeff.name = "present_value.0"}, tensor<?x2x?x8xf32> {qeff.name = "sum"}) {
  %k = qeff.kv_concat %pk, %q {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %v = qeff.kv_concat %pv, %q {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %a = qeff.attention %q, %k, %v {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true, sliding_window = 4 : i64} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  // expected-error @+1 {{reads the cache of a sliding-window layer (window 4) other than through attention with that window}}
  %s = qeff.attention %a, %k, %v {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  return %a, %k, %v, %s : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
}
