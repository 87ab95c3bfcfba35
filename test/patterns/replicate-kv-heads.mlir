// RUN: qeff-opt %s -split-input-file -qeff-replicate-kv-heads=num-devices=4 -verify-diagnostics | FileCheck %s
// RUN: qeff-opt %s -split-input-file -qeff-replicate-kv-heads=num-devices=2 -verify-diagnostics | FileCheck %s --check-prefix=NOOP

// Separate K/V projections, 2 KV heads of 16 over 4 devices: r = 2. Each
// head's 16 rows are selected twice from the same checkpoint tensor (and the
// bias likewise); split_heads, rotary, the cache concat, the cache input and
// the present output carry 4 heads; attention groups 4 query heads over 4 KV
// heads. With 2 devices (2 divides 2) nothing changes.
// CHECK: module attributes {qeff.kv_head_replication = 2 : i64}
// CHECK-LABEL: func.func @separate(
// CHECK-SAME: %[[PK:[^:]*]]: tensor<?x4x?x16xf32> {qeff.name = "past_key.0"}
// CHECK-SAME: %[[PV:[^:]*]]: tensor<?x4x?x16xf32> {qeff.name = "past_value.0"}
// CHECK-SAME: -> (tensor<?x4x?x16xf32> {qeff.name = "present_key.0"}, tensor<?x4x?x16xf32> {qeff.name = "present_value.0"}, tensor<?x4x?x16xf32>)
// CHECK-DAG: %[[WK:.*]] = qeff.weight "k_proj.weight" : f32 -> tensor<64x64xf32> {rows = array<i64: 0, 16, 0, 16, 16, 16, 16, 16>}
// CHECK-DAG: %[[BK:.*]] = qeff.weight "k_proj.bias" : f32 -> tensor<64xf32> {rows = array<i64: 0, 16, 0, 16, 16, 16, 16, 16>}
// CHECK-DAG: %[[WV:.*]] = qeff.weight "v_proj.weight" : f32 -> tensor<64x64xf32> {rows = array<i64: 0, 16, 0, 16, 16, 16, 16, 16>}
// CHECK-DAG: qeff.weight "q_proj.weight" : f32 -> tensor<64x64xf32>{{$}}
// CHECK-NOT: tensor<32x64xf32>
// CHECK: %[[K:.*]] = qeff.linear %{{.*}}, %[[WK]], %[[BK]] : (tensor<?x?x64xf32>, tensor<64x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
// CHECK: %[[V:.*]] = qeff.linear %{{.*}}, %[[WV]] : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
// CHECK: %[[K4:.*]] = qeff.split_heads %[[K]] {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
// CHECK: %[[V4:.*]] = qeff.split_heads %[[V]] {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
// CHECK: %[[KR:.*]] = qeff.rotary %[[K4]], %{{.*}} {{.*}} : (tensor<?x4x?x16xf32>, tensor<?x?xi64>) -> tensor<?x4x?x16xf32>
// CHECK: %[[KC:.*]] = qeff.kv_concat %[[PK]], %[[KR]] {{.*}} -> tensor<?x4x?x16xf32>
// CHECK: %[[VC:.*]] = qeff.kv_concat %[[PV]], %[[V4]] {{.*}} -> tensor<?x4x?x16xf32>
// CHECK: qeff.attention %{{.*}}, %[[KC]], %[[VC]] {{{.*}}num_heads = 4 : i64, num_kv_heads = 4 : i64
// CHECK: return %[[KC]], %[[VC]]

// NOOP-NOT: qeff.kv_head_replication
// NOOP-NOT: rows =
// NOOP-LABEL: func.func @separate(
// NOOP-SAME: tensor<?x2x?x16xf32> {qeff.name = "past_key.0"}
// NOOP: qeff.split_heads %{{.*}} {num_heads = 2 : i64}
// NOOP: num_kv_heads = 2 : i64
func.func @separate(%x: tensor<?x?x64xf32>, %pos: tensor<?x?xi64>,
                    %pk: tensor<?x2x?x16xf32> {qeff.name = "past_key.0"},
                    %pv: tensor<?x2x?x16xf32> {qeff.name = "past_value.0"})
    -> (tensor<?x2x?x16xf32> {qeff.name = "present_key.0"},
        tensor<?x2x?x16xf32> {qeff.name = "present_value.0"}, tensor<?x4x?x16xf32>) {
  %wq = qeff.weight "q_proj.weight" : f32 -> tensor<64x64xf32>
  %wk = qeff.weight "k_proj.weight" : f32 -> tensor<32x64xf32>
  %bk = qeff.weight "k_proj.bias" : f32 -> tensor<32xf32>
  %wv = qeff.weight "v_proj.weight" : f32 -> tensor<32x64xf32>
  %q = qeff.linear %x, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  %k = qeff.linear %x, %wk, %bk : (tensor<?x?x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<?x?x32xf32>
  %v = qeff.linear %x, %wv : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
  %q4 = qeff.split_heads %q {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
  %k4 = qeff.split_heads %k {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
  %v4 = qeff.split_heads %v {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
  %kr = qeff.rotary %k4, %pos {style = #qeff<rotary_style half>, rotary_dim = 16 : i64,
      theta = 1.0e+04 : f64, max_positions = 64 : i64}
      : (tensor<?x2x?x16xf32>, tensor<?x?xi64>) -> tensor<?x2x?x16xf32>
  %kc = qeff.kv_concat %pk, %kr {layout = #qeff<kv_layout bhsd>}
      : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  %vc = qeff.kv_concat %pv, %v4 {layout = #qeff<kv_layout bhsd>}
      : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
  %a = qeff.attention %q4, %kc, %vc {num_heads = 4 : i64, num_kv_heads = 2 : i64,
      head_dim = 16 : i64, scale = 2.5e-01 : f64, causal = true}
      : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %kc, %vc, %a : tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x4x?x16xf32>
}

// -----

// A fused QKV projection (Phi-3, Falcon, GPT-BigCode) cut by qeff.split,
// multi-query (1 KV head of 16, 4 query heads): r = 4. The query rows stay,
// the K and V rows are each selected 4 times; the split sizes follow.
// CHECK-LABEL: func.func @fused(
// CHECK-SAME: tensor<?x4x?x16xf32> {qeff.name = "past_key.0"}
// CHECK: %[[W:.*]] = qeff.weight "qkv.weight" : f32 -> tensor<192x64xf32> {rows = array<i64: 0, 64, 64, 16, 64, 16, 64, 16, 64, 16, 80, 16, 80, 16, 80, 16, 80, 16>}
// CHECK: %[[B:.*]] = qeff.weight "qkv.bias" : f32 -> tensor<192xf32> {rows = array<i64: 0, 64, 64, 16, 64, 16, 64, 16, 64, 16, 80, 16, 80, 16, 80, 16, 80, 16>}
// CHECK: %[[QKV:.*]] = qeff.linear %{{.*}}, %[[W]], %[[B]] : (tensor<?x?x64xf32>, tensor<192x64xf32>, tensor<192xf32>) -> tensor<?x?x192xf32>
// CHECK: qeff.split %[[QKV]] {sizes = array<i64: 64, 64, 64>} : (tensor<?x?x192xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x64xf32>, tensor<?x?x64xf32>)
// CHECK: qeff.split_heads %{{.*}} {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
// CHECK: qeff.split_heads %{{.*}} {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
// CHECK: num_kv_heads = 4 : i64
func.func @fused(%x: tensor<?x?x64xf32>,
                 %pk: tensor<?x1x?x16xf32> {qeff.name = "past_key.0"},
                 %pv: tensor<?x1x?x16xf32> {qeff.name = "past_value.0"})
    -> (tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x4x?x16xf32>) {
  %w = qeff.weight "qkv.weight" : f32 -> tensor<96x64xf32>
  %b = qeff.weight "qkv.bias" : f32 -> tensor<96xf32>
  %qkv = qeff.linear %x, %w, %b : (tensor<?x?x64xf32>, tensor<96x64xf32>, tensor<96xf32>) -> tensor<?x?x96xf32>
  %q, %k, %v = qeff.split %qkv {sizes = array<i64: 64, 16, 16>}
      : (tensor<?x?x96xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>)
  %q4 = qeff.split_heads %q {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
  %k1 = qeff.split_heads %k {num_heads = 1 : i64} : (tensor<?x?x16xf32>) -> tensor<?x1x?x16xf32>
  %v1 = qeff.split_heads %v {num_heads = 1 : i64} : (tensor<?x?x16xf32>) -> tensor<?x1x?x16xf32>
  %kc = qeff.kv_concat %pk, %k1 {layout = #qeff<kv_layout bhsd>}
      : (tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>) -> tensor<?x1x?x16xf32>
  %vc = qeff.kv_concat %pv, %v1 {layout = #qeff<kv_layout bhsd>}
      : (tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>) -> tensor<?x1x?x16xf32>
  %a = qeff.attention %q4, %kc, %vc {num_heads = 4 : i64, num_kv_heads = 1 : i64,
      head_dim = 16 : i64, scale = 2.5e-01 : f64, causal = true}
      : (tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %kc, %vc, %a : tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x4x?x16xf32>
}

// -----

// clip_qkv on a fused projection (DBRX): the clamp sits between the
// projection and the split; it is elementwise, so it follows the projection's
// new width and the rows are selected as without it.
// CHECK-LABEL: func.func @fused_clamped(
// CHECK: %[[W:.*]] = qeff.weight "qkv.weight" : f32 -> tensor<192x64xf32> {rows = array<i64: 0, 64, 64, 16, 64, 16, 64, 16, 64, 16, 80, 16, 80, 16, 80, 16, 80, 16>}
// CHECK: %[[QKV:.*]] = qeff.linear %{{.*}}, %[[W]] : (tensor<?x?x64xf32>, tensor<192x64xf32>) -> tensor<?x?x192xf32>
// CHECK: %[[C:.*]] = qeff.clamp %[[QKV]] {{.*}} : (tensor<?x?x192xf32>) -> tensor<?x?x192xf32>
// CHECK: qeff.split %[[C]] {sizes = array<i64: 64, 64, 64>}
// CHECK: num_kv_heads = 4 : i64
func.func @fused_clamped(%x: tensor<?x?x64xf32>,
                 %pk: tensor<?x1x?x16xf32> {qeff.name = "past_key.0"},
                 %pv: tensor<?x1x?x16xf32> {qeff.name = "past_value.0"})
    -> (tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x4x?x16xf32>) {
  %w = qeff.weight "qkv.weight" : f32 -> tensor<96x64xf32>
  %qkv = qeff.linear %x, %w : (tensor<?x?x64xf32>, tensor<96x64xf32>) -> tensor<?x?x96xf32>
  %c = qeff.clamp %qkv {min = -1.5 : f64, max = 1.5 : f64} : (tensor<?x?x96xf32>) -> tensor<?x?x96xf32>
  %q, %k, %v = qeff.split %c {sizes = array<i64: 64, 16, 16>}
      : (tensor<?x?x96xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x16xf32>, tensor<?x?x16xf32>)
  %q4 = qeff.split_heads %q {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
  %k1 = qeff.split_heads %k {num_heads = 1 : i64} : (tensor<?x?x16xf32>) -> tensor<?x1x?x16xf32>
  %v1 = qeff.split_heads %v {num_heads = 1 : i64} : (tensor<?x?x16xf32>) -> tensor<?x1x?x16xf32>
  %kc = qeff.kv_concat %pk, %k1 {layout = #qeff<kv_layout bhsd>}
      : (tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>) -> tensor<?x1x?x16xf32>
  %vc = qeff.kv_concat %pv, %v1 {layout = #qeff<kv_layout bhsd>}
      : (tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>) -> tensor<?x1x?x16xf32>
  %a = qeff.attention %q4, %kc, %vc {num_heads = 4 : i64, num_kv_heads = 1 : i64,
      head_dim = 16 : i64, scale = 2.5e-01 : f64, causal = true}
      : (tensor<?x4x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %kc, %vc, %a : tensor<?x1x?x16xf32>, tensor<?x1x?x16xf32>, tensor<?x4x?x16xf32>
}

// -----

// The grouped fused form (Falcon new_decoder_architecture): 2 groups of
// [4 query heads, k, v], head_dim 4. Over 4 devices (r = 2) each group
// becomes 2 groups of [2 query heads, k, v]: the query heads keep their order
// and each new group reads a copy of its KV head.
// CHECK-LABEL: func.func @grouped(
// CHECK: %[[W:.*]] = qeff.weight "qkv.weight" : f32 -> tensor<64x32xf32> {rows = array<i64: 0, 8, 16, 4, 20, 4, 8, 8, 16, 4, 20, 4, 24, 8, 40, 4, 44, 4, 32, 8, 40, 4, 44, 4>}
// CHECK: %[[F:.*]] = qeff.linear %{{.*}}, %[[W]] : (tensor<?x?x32xf32>, tensor<64x32xf32>) -> tensor<?x?x64xf32>
// CHECK: %[[G:.*]] = qeff.split_heads %[[F]] {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
// CHECK: %[[Q:.*]]:3 = qeff.split %[[G]] {sizes = array<i64: 8, 4, 4>} : (tensor<?x4x?x16xf32>) -> (tensor<?x4x?x8xf32>, tensor<?x4x?x4xf32>, tensor<?x4x?x4xf32>)
// CHECK: qeff.merge_heads %[[Q]]#0 : (tensor<?x4x?x8xf32>) -> tensor<?x?x32xf32>
// CHECK: qeff.attention %{{.*}}, %[[Q]]#1, %[[Q]]#2 {{{.*}}num_kv_heads = 4 : i64
// NOOP-LABEL: func.func @grouped(
// NOOP: qeff.weight "qkv.weight" : f32 -> tensor<48x32xf32>{{$}}
func.func @grouped(%x: tensor<?x?x32xf32>) -> tensor<?x8x?x4xf32> {
  %w = qeff.weight "qkv.weight" : f32 -> tensor<48x32xf32>
  %f = qeff.linear %x, %w : (tensor<?x?x32xf32>, tensor<48x32xf32>) -> tensor<?x?x48xf32>
  %g = qeff.split_heads %f {num_heads = 2 : i64} : (tensor<?x?x48xf32>) -> tensor<?x2x?x24xf32>
  %q, %k, %v = qeff.split %g {sizes = array<i64: 16, 4, 4>}
      : (tensor<?x2x?x24xf32>) -> (tensor<?x2x?x16xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>)
  %qm = qeff.merge_heads %q : (tensor<?x2x?x16xf32>) -> tensor<?x?x32xf32>
  %q8 = qeff.split_heads %qm {num_heads = 8 : i64} : (tensor<?x?x32xf32>) -> tensor<?x8x?x4xf32>
  %a = qeff.attention %q8, %k, %v {num_heads = 8 : i64, num_kv_heads = 2 : i64,
      head_dim = 4 : i64, scale = 5.0e-01 : f64, causal = true}
      : (tensor<?x8x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) -> tensor<?x8x?x4xf32>
  return %a : tensor<?x8x?x4xf32>
}

// -----

// Per-head k norms between the projection and the attention: a [kv_heads,
// head_dim] weight (Cohere) selects each row r times, a stack of per-head
// tensors (StableLM) stacks each one r times.
// CHECK-LABEL: func.func @per_head_norms(
// CHECK: %[[KN:.*]] = qeff.weight "k_norm.weight" : f32 -> tensor<4x8xf32> {rows = array<i64: 0, 1, 0, 1, 1, 1, 1, 1>}
// CHECK: qeff.layer_norm %{{.*}}, %[[KN]] {{.*}} : (tensor<?x4x?x8xf32>, tensor<4x8xf32>) -> tensor<?x4x?x8xf32>
// CHECK: %[[S:.*]] = qeff.stack %[[A:.*]], %[[A]], %[[B:.*]], %[[B]] : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: qeff.layer_norm %{{.*}}, %[[S]] {{.*}} : (tensor<?x4x?x8xf32>, tensor<4x8xf32>) -> tensor<?x4x?x8xf32>
// CHECK: qeff.attention {{.*}}num_kv_heads = 4 : i64
// NOOP-LABEL: func.func @per_head_norms(
// NOOP: qeff.weight "k_norm.weight" : f32 -> tensor<2x8xf32>{{$}}
func.func @per_head_norms(%x: tensor<?x?x32xf32>, %q: tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %wk = qeff.weight "k.weight" : f32 -> tensor<16x32xf32>
  %wv = qeff.weight "v.weight" : f32 -> tensor<16x32xf32>
  %kn = qeff.weight "k_norm.weight" : f32 -> tensor<2x8xf32>
  %vn0 = qeff.weight "v_norm.norms.0.weight" : f32 -> tensor<8xf32>
  %vn1 = qeff.weight "v_norm.norms.1.weight" : f32 -> tensor<8xf32>
  %k = qeff.linear %x, %wk : (tensor<?x?x32xf32>, tensor<16x32xf32>) -> tensor<?x?x16xf32>
  %v = qeff.linear %x, %wv : (tensor<?x?x32xf32>, tensor<16x32xf32>) -> tensor<?x?x16xf32>
  %k4 = qeff.split_heads %k {num_heads = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<?x2x?x8xf32>
  %v4 = qeff.split_heads %v {num_heads = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<?x2x?x8xf32>
  %kk = qeff.layer_norm %k4, %kn {epsilon = 1.0e-05 : f64} : (tensor<?x2x?x8xf32>, tensor<2x8xf32>) -> tensor<?x2x?x8xf32>
  %vs = qeff.stack %vn0, %vn1 : (tensor<8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %vv = qeff.layer_norm %v4, %vs {epsilon = 1.0e-05 : f64} : (tensor<?x2x?x8xf32>, tensor<2x8xf32>) -> tensor<?x2x?x8xf32>
  %a = qeff.attention %q, %kk, %vv {num_heads = 4 : i64, num_kv_heads = 2 : i64,
      head_dim = 8 : i64, scale = 5.0e-01 : f64, causal = true}
      : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
  return %a : tensor<?x4x?x8xf32>
}

// -----

// A per-head q/k RMSNorm over head_dim (Qwen3, Gemma 3): its [head_dim]
// weight is shared by the heads, so only the types change.
// CHECK-LABEL: func.func @per_head_rms_norm(
// CHECK: qeff.weight "k.weight" : f32 -> tensor<32x32xf32> {rows = array<i64: 0, 8, 0, 8, 8, 8, 8, 8>}
// CHECK: %[[KN:.*]] = qeff.weight "k_norm.weight" : f32 -> tensor<8xf32>{{$}}
// CHECK: qeff.rms_norm %{{.*}}, %[[KN]] {{.*}} : (tensor<?x4x?x8xf32>, tensor<8xf32>) -> tensor<?x4x?x8xf32>
// CHECK: qeff.attention {{.*}}num_kv_heads = 4 : i64
// NOOP-LABEL: func.func @per_head_rms_norm(
// NOOP: qeff.rms_norm %{{.*}} : (tensor<?x2x?x8xf32>, tensor<8xf32>) -> tensor<?x2x?x8xf32>
func.func @per_head_rms_norm(%x: tensor<?x?x32xf32>, %q: tensor<?x4x?x8xf32>, %v: tensor<?x4x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %wk = qeff.weight "k.weight" : f32 -> tensor<16x32xf32>
  %kn = qeff.weight "k_norm.weight" : f32 -> tensor<8xf32>
  %wv = qeff.weight "v.weight" : f32 -> tensor<16x32xf32>
  %k = qeff.linear %x, %wk : (tensor<?x?x32xf32>, tensor<16x32xf32>) -> tensor<?x?x16xf32>
  %vl = qeff.linear %x, %wv : (tensor<?x?x32xf32>, tensor<16x32xf32>) -> tensor<?x?x16xf32>
  %k4 = qeff.split_heads %k {num_heads = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<?x2x?x8xf32>
  %v4 = qeff.split_heads %vl {num_heads = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<?x2x?x8xf32>
  %kk = qeff.rms_norm %k4, %kn {epsilon = 1.0e-06 : f64} : (tensor<?x2x?x8xf32>, tensor<8xf32>) -> tensor<?x2x?x8xf32>
  %a = qeff.attention %q, %kk, %v4 {num_heads = 4 : i64, num_kv_heads = 2 : i64,
      head_dim = 8 : i64, scale = 5.0e-01 : f64, causal = true}
      : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
  return %a : tensor<?x4x?x8xf32>
}
