// RUN: qeff-opt %s -split-input-file -qeff-normalize-kv-layout -verify-diagnostics | FileCheck %s
// RUN: qeff-opt %s -split-input-file -qeff-normalize-kv-layout -qeff-kv-retained-state=ctx-len=16 -verify-diagnostics | FileCheck %s --check-prefix=RETAINED

// [B, S, H, D] (bshd): the cache inputs and present outputs become
// [B, H, S, D], the concat runs in bhsd on the update as it was before the
// importer transposed it, and attention reads the concat directly: every
// transpose pair folds away.
// CHECK: module attributes {qeff.native_kv_layout = #qeff<kv_layout bshd>}
// CHECK-LABEL: func.func @bshd(
// CHECK-SAME: %[[PK:[^:]*]]: tensor<?x2x?x8xf32> {qeff.dims = ["batch_size", "", "past_seq_len", ""], qeff.name = "past_key.0"},
// CHECK-SAME: %[[PV:[^:]*]]: tensor<?x2x?x8xf32> {qeff.dims = ["batch_size", "", "past_seq_len", ""], qeff.name = "past_value.0"})
// CHECK-SAME: tensor<?x2x?x8xf32> {qeff.dims = ["batch_size", "", "present_seq_len", ""], qeff.name = "present_key.0"},
// CHECK-SAME: tensor<?x2x?x8xf32> {qeff.dims = ["batch_size", "", "present_seq_len", ""], qeff.name = "present_value.0"})
// CHECK-NOT: qeff.transpose
// CHECK: %[[K4:.*]] = qeff.split_heads %{{.*}} {num_heads = 2 : i64}
// CHECK-NOT: qeff.transpose
// CHECK: %[[K:.*]] = qeff.kv_concat %[[PK]], %[[K4]] {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
// CHECK: %[[V:.*]] = qeff.kv_concat %[[PV]], %[[K4]] {layout = #qeff<kv_layout bhsd>}
// CHECK-NOT: qeff.transpose
// CHECK: qeff.attention %{{.*}}, %[[K]], %[[V]]
// CHECK: return %{{.*}}, %[[K]], %[[V]] : tensor<?x?x32xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>

// The result is what qeff-kv-retained-state expects: a bhsd concat of a
// cache input, which becomes a scatter into the fixed cache.
// RETAINED-LABEL: func.func @bshd(
// RETAINED-SAME: %[[POS:[^:]*]]: tensor<?x?xi64> {qeff.dims = ["batch_size", "seq_len"], qeff.name = "position_ids"},
// RETAINED-SAME: %[[PK:[^:]*]]: tensor<?x2x16x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_key.0"},
// RETAINED-SAME: tensor<?x2x16x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_key.0_RetainedState"},
// RETAINED-SAME: tensor<?x2x16x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_value.0_RetainedState"})
// RETAINED-NOT: qeff.kv_concat
// RETAINED: %[[K:.*]] = qeff.ctx_scatter %[[PK]], %[[POS]], %{{.*}} : (tensor<?x2x16x8xf32>, tensor<?x?xi64>, tensor<?x2x?x8xf32>) -> tensor<?x2x16x8xf32>
// RETAINED: %[[V:.*]] = qeff.ctx_scatter
// RETAINED: %[[M:.*]] = qeff.causal_mask %[[POS]] {ctx_len = 16 : i64}
// RETAINED: qeff.attention %{{.*}}, %[[K]], %[[V]], %[[M]]
// RETAINED: qeff.last_token_select
// RETAINED: return %{{.*}}, %[[K]], %[[V]]
func.func @bshd(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                %pk: tensor<?x?x2x8xf32> {qeff.name = "past_key.0", qeff.dims = ["batch_size", "past_seq_len", "", ""]},
                %pv: tensor<?x?x2x8xf32> {qeff.name = "past_value.0", qeff.dims = ["batch_size", "past_seq_len", "", ""]})
    -> (tensor<?x?x32xf32> {qeff.name = "logits", qeff.dims = ["batch_size", "seq_len", ""]},
        tensor<?x?x2x8xf32> {qeff.name = "present_key.0", qeff.dims = ["batch_size", "present_seq_len", "", ""]},
        tensor<?x?x2x8xf32> {qeff.name = "present_value.0", qeff.dims = ["batch_size", "present_seq_len", "", ""]}) {
  %t = qeff.weight "embed" : f32 -> tensor<32x32xf32>
  %h = qeff.embedding %ids, %t : (tensor<?x?xi64>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %q = qeff.split_heads %h {num_heads = 4 : i64} : (tensor<?x?x32xf32>) -> tensor<?x4x?x8xf32>
  %kv, %unused = qeff.split %h {sizes = array<i64: 16, 16>} : (tensor<?x?x32xf32>) -> (tensor<?x?x16xf32>, tensor<?x?x16xf32>)
  %k4 = qeff.split_heads %kv {num_heads = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<?x2x?x8xf32>
  %k = qeff.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x8xf32>) -> tensor<?x?x2x8xf32>
  %kc = qeff.kv_concat %pk, %k {layout = #qeff<kv_layout bshd>} : (tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>) -> tensor<?x?x2x8xf32>
  %vc = qeff.kv_concat %pv, %k {layout = #qeff<kv_layout bshd>} : (tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>) -> tensor<?x?x2x8xf32>
  %kt = qeff.transpose %kc {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x8xf32>) -> tensor<?x2x?x8xf32>
  %vt = qeff.transpose %vc {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x8xf32>) -> tensor<?x2x?x8xf32>
  %a = qeff.attention %q, %kt, %vt {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
  %m = qeff.merge_heads %a : (tensor<?x4x?x8xf32>) -> tensor<?x?x32xf32>
  %w = qeff.weight "lm_head" : f32 -> tensor<32x32xf32>
  %logits = qeff.linear %m, %w : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  return %logits, %kc, %vc : tensor<?x?x32xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>
}

// -----

// [S, B, H, D] (sbhd): into bhsd with [1, 2, 0, 3], back with [2, 0, 1, 3].
// The update's transpose and the attention's transpose fold away; another
// use of the cache input (here returned as is) keeps the native layout
// through the inverse transpose.
// CHECK: module attributes {qeff.native_kv_layout = #qeff<kv_layout sbhd>}
// CHECK-LABEL: func.func @sbhd(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<?x4x?x8xf32>, %[[K4:[^:]*]]: tensor<?x2x?x8xf32>,
// CHECK-SAME: %[[PK:[^:]*]]: tensor<?x2x?x8xf32> {qeff.dims = ["batch_size", "", "past_seq_len", ""], qeff.name = "past_key.0"})
// CHECK-SAME: -> (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32> {qeff.dims = ["batch_size", "", "present_seq_len", ""], qeff.name = "present_key.0"}, tensor<?x?x2x8xf32>)
// CHECK: %[[NATIVE:.*]] = qeff.transpose %[[PK]] {permutation = array<i64: 2, 0, 1, 3>} : (tensor<?x2x?x8xf32>) -> tensor<?x?x2x8xf32>
// CHECK: %[[K:.*]] = qeff.kv_concat %[[PK]], %[[K4]] {layout = #qeff<kv_layout bhsd>}
// CHECK-NOT: qeff.transpose
// CHECK: %[[A:.*]] = qeff.attention %[[Q]], %[[K]], %[[K]]
// CHECK: return %[[A]], %[[K]], %[[NATIVE]]
// RETAINED-LABEL: func.func @sbhd(
// RETAINED: qeff.ctx_scatter
func.func @sbhd(%pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                %q: tensor<?x4x?x8xf32>, %k4: tensor<?x2x?x8xf32>,
                %pk: tensor<?x?x2x8xf32> {qeff.name = "past_key.0", qeff.dims = ["past_seq_len", "batch_size", "", ""]})
    -> (tensor<?x4x?x8xf32>,
        tensor<?x?x2x8xf32> {qeff.name = "present_key.0", qeff.dims = ["present_seq_len", "batch_size", "", ""]},
        tensor<?x?x2x8xf32>) {
  %k = qeff.transpose %k4 {permutation = array<i64: 2, 0, 1, 3>} : (tensor<?x2x?x8xf32>) -> tensor<?x?x2x8xf32>
  %kc = qeff.kv_concat %pk, %k {layout = #qeff<kv_layout sbhd>} : (tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>) -> tensor<?x?x2x8xf32>
  %kt = qeff.transpose %kc {permutation = array<i64: 1, 2, 0, 3>} : (tensor<?x?x2x8xf32>) -> tensor<?x2x?x8xf32>
  %a = qeff.attention %q, %kt, %kt {num_heads = 4 : i64, num_kv_heads = 2 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
  return %a, %kc, %pk : tensor<?x4x?x8xf32>, tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>
}

// -----

// Multi-query [B, S, D] (bsd): the one KV head becomes a heads dimension of
// 1 (qeff.split_heads num_heads = 1 on the update); the importer's split for
// attention folds with the inverse merge.
// CHECK: module attributes {qeff.native_kv_layout = #qeff<kv_layout bsd>}
// CHECK-LABEL: func.func @bsd(
// CHECK-SAME: %[[Q:[^:]*]]: tensor<?x4x?x8xf32>, %[[KNEW:[^:]*]]: tensor<?x?x8xf32>,
// CHECK-SAME: %[[PK:[^:]*]]: tensor<?x1x?x8xf32> {qeff.dims = ["batch_size", "", "past_seq_len", ""], qeff.name = "past_key.0"})
// CHECK-SAME: -> (tensor<?x4x?x8xf32>, tensor<?x1x?x8xf32> {qeff.dims = ["batch_size", "", "present_seq_len", ""], qeff.name = "present_key.0"})
// CHECK: %[[K1:.*]] = qeff.split_heads %[[KNEW]] {num_heads = 1 : i64} : (tensor<?x?x8xf32>) -> tensor<?x1x?x8xf32>
// CHECK: %[[K:.*]] = qeff.kv_concat %[[PK]], %[[K1]] {layout = #qeff<kv_layout bhsd>} : (tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>) -> tensor<?x1x?x8xf32>
// CHECK-NOT: qeff.merge_heads
// CHECK-NOT: qeff.split_heads
// CHECK: %[[A:.*]] = qeff.attention %[[Q]], %[[K]], %[[K]]
// CHECK: return %[[A]], %[[K]]
// RETAINED-LABEL: func.func @bsd(
// RETAINED-SAME: tensor<?x1x16x8xf32> {qeff.dims = ["batch_size", "", "ctx_len", ""], qeff.name = "past_key.0"}
// RETAINED: qeff.ctx_scatter
func.func @bsd(%pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
               %q: tensor<?x4x?x8xf32>, %k: tensor<?x?x8xf32>,
               %pk: tensor<?x?x8xf32> {qeff.name = "past_key.0", qeff.dims = ["batch_size", "past_seq_len", ""]})
    -> (tensor<?x4x?x8xf32>,
        tensor<?x?x8xf32> {qeff.name = "present_key.0", qeff.dims = ["batch_size", "present_seq_len", ""]}) {
  %kc = qeff.kv_concat %pk, %k {layout = #qeff<kv_layout bsd>} : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %kh = qeff.split_heads %kc {num_heads = 1 : i64} : (tensor<?x?x8xf32>) -> tensor<?x1x?x8xf32>
  %a = qeff.attention %q, %kh, %kh {num_heads = 4 : i64, num_kv_heads = 1 : i64, head_dim = 8 : i64, scale = 0.35 : f64, causal = true} : (tensor<?x4x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>) -> tensor<?x4x?x8xf32>
  return %a, %kc : tensor<?x4x?x8xf32>, tensor<?x?x8xf32>
}

// -----

// Negative: a concat whose past is not a cache input keeps its layout, and
// so do the transposes around it; nothing is recorded on the module.
// CHECK-NOT: qeff.native_kv_layout
// CHECK-LABEL: func.func @not_a_cache(
// CHECK-SAME: %[[X:[^:]*]]: tensor<1x3x2x8xf32>, %[[Y:[^:]*]]: tensor<1x3x2x8xf32>)
// CHECK: %[[C:.*]] = qeff.kv_concat %[[X]], %[[Y]] {layout = #qeff<kv_layout bshd>}
// CHECK: qeff.transpose %[[C]] {permutation = array<i64: 0, 2, 1, 3>}
func.func @not_a_cache(%x: tensor<1x3x2x8xf32>, %y: tensor<1x3x2x8xf32>) -> tensor<1x2x6x8xf32> {
  %c = qeff.kv_concat %x, %y {layout = #qeff<kv_layout bshd>} : (tensor<1x3x2x8xf32>, tensor<1x3x2x8xf32>) -> tensor<1x6x2x8xf32>
  %t = qeff.transpose %c {permutation = array<i64: 0, 2, 1, 3>} : (tensor<1x6x2x8xf32>) -> tensor<1x2x6x8xf32>
  return %t : tensor<1x2x6x8xf32>
}

// -----

// Negative: a cache already in bhsd is left exactly as it is (the importer's
// own transposes too: the pass only folds in functions it normalises).
// CHECK-NOT: qeff.native_kv_layout
// CHECK-LABEL: func.func @already_bhsd(
// CHECK-SAME: %[[PK:[^:]*]]: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"}
// CHECK: %[[K:.*]] = qeff.kv_concat %[[PK]], %{{.*}} {layout = #qeff<kv_layout bhsd>}
// CHECK: %[[T:.*]] = qeff.transpose %[[K]]
// CHECK: qeff.transpose %[[T]]
// RETAINED-LABEL: func.func @already_bhsd(
// RETAINED: qeff.ctx_scatter
func.func @already_bhsd(%pos: tensor<?x?xi64> {qeff.name = "position_ids"},
                        %k: tensor<?x2x?x8xf32>,
                        %pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"})
    -> (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> {qeff.name = "present_key.0"}) {
  %kc = qeff.kv_concat %pk, %k {layout = #qeff<kv_layout bhsd>} : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
  %t = qeff.transpose %kc {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x2x?x8xf32>) -> tensor<?x?x2x8xf32>
  %u = qeff.transpose %t {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x8xf32>) -> tensor<?x2x?x8xf32>
  return %u, %kc : tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
}

// -----

// One cache input cannot have two layouts.
func.func @two_layouts(%pos: tensor<?x?xi64> {qeff.name = "position_ids"},
                       // expected-error @+1 {{cache input 'past_key.0' is extended in two layouts (bshd and sbhd)}}
                       %pk: tensor<2x2x2x8xf32> {qeff.name = "past_key.0"},
                       %k: tensor<2x1x2x8xf32>, %k2: tensor<1x2x2x8xf32>)
    -> (tensor<2x3x2x8xf32>, tensor<3x2x2x8xf32>) {
  %a = qeff.kv_concat %pk, %k {layout = #qeff<kv_layout bshd>} : (tensor<2x2x2x8xf32>, tensor<2x1x2x8xf32>) -> tensor<2x3x2x8xf32>
  %b = qeff.kv_concat %pk, %k2 {layout = #qeff<kv_layout sbhd>} : (tensor<2x2x2x8xf32>, tensor<1x2x2x8xf32>) -> tensor<3x2x2x8xf32>
  return %a, %b : tensor<2x3x2x8xf32>, tensor<3x2x2x8xf32>
}
