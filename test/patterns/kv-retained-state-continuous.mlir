// RUN: qeff-opt %s -split-input-file -qeff-kv-retained-state="ctx-len=16 full-batch-size=4" -verify-diagnostics | FileCheck %s

// Continuous batching: @forward gains batch_index [batch_size, 1] after
// position_ids, the cache keeps full_batch_size rows, each row's K/V is
// scattered into cache row batch_index[b] and attention reads those rows
// through qeff.ctx_rows; the retained outputs are the whole cache.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<?x?xi64> {qeff.dims = ["batch_size", "seq_len"], qeff.name = "input_ids"},
// CHECK-SAME: %[[POS:[^:]*]]: tensor<?x?xi64> {qeff.dims = ["batch_size", "seq_len"], qeff.name = "position_ids"},
// CHECK-SAME: %[[BI:[^:]*]]: tensor<?x1xi64> {qeff.dims = ["batch_size", ""], qeff.name = "batch_index"},
// CHECK-SAME: %[[PK:[^:]*]]: tensor<?x2x16x8xf32> {qeff.dims = ["full_batch_size", "", "ctx_len", ""], qeff.name = "past_key.0"},
// CHECK-SAME: %[[PV:[^:]*]]: tensor<?x2x16x8xf32> {qeff.dims = ["full_batch_size", "", "ctx_len", ""], qeff.name = "past_value.0"})
// CHECK-SAME: tensor<?x2x16x8xf32> {qeff.dims = ["full_batch_size", "", "ctx_len", ""], qeff.name = "past_key.0_RetainedState"},
// CHECK: %[[K:.*]] = qeff.ctx_scatter %[[PK]], %[[POS]], %{{.*}}, %[[BI]] : (tensor<?x2x16x8xf32>, tensor<?x?xi64>, tensor<?x2x?x8xf32>, tensor<?x1xi64>) -> tensor<?x2x16x8xf32>
// CHECK: %[[V:.*]] = qeff.ctx_scatter %[[PV]], %[[POS]], %{{.*}}, %[[BI]]
// CHECK: %[[KR:.*]] = qeff.ctx_rows %[[K]], %[[BI]] : (tensor<?x2x16x8xf32>, tensor<?x1xi64>) -> tensor<?x2x16x8xf32>
// CHECK: %[[VR:.*]] = qeff.ctx_rows %[[V]], %[[BI]]
// CHECK: %[[M:.*]] = qeff.causal_mask %[[POS]] {ctx_len = 16 : i64}
// CHECK: qeff.attention %{{.*}}, %[[KR]], %[[VR]], %[[M]]
// CHECK: return %{{.*}}, %[[K]], %[[V]]
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
  %a = qeff.attention %q, %kc, %vc {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
  %m = qeff.merge_heads %a : (tensor<?x4x?x8xf32>) -> tensor<?x?x32xf32>
  %w = qeff.weight "lm_head" : f32 -> tensor<32x32xf32>
  %logits = qeff.linear %m, %w : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  return %logits, %kc, %vc : tensor<?x?x32xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
}

// -----

// Negative: a non-causal attention over the cache is not rewritten to read
// the rows in use, so it would read every row of the cache: refused.
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"},
                   %q: tensor<?x2x?x8xf32> {qeff.name = "q"})
    -> (tensor<?x2x?x8xf32> {qeff.name = "out"}, tensor<?x2x?x8xf32> {qeff.name = "present_key.0"}) {
  %kc = qeff.kv_concat %pk, %q {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  // expected-error @+1 {{reads the whole retained cache of 4 rows; with continuous batching only attention over the rows in use (qeff.ctx_rows) is supported here}}
  %a = qeff.attention %q, %kc, %kc {num_heads = 2 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = false} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  return %a, %kc : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
}

// -----

// Negative: a model that already has a batch_index input.
// expected-error @+1 {{@forward already has a batch_index input}}
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %bi: tensor<?x1xi64> {qeff.name = "batch_index"},
                   %pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"})
    -> (tensor<?x2x?x8xf32> {qeff.name = "present_key.0"}) {
  return %pk : tensor<?x2x?x8xf32>
}
