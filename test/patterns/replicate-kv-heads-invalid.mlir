// RUN: qeff-opt %s -split-input-file -qeff-replicate-kv-heads=num-devices=4 -verify-diagnostics
// RUN: not qeff-opt %s -qeff-replicate-kv-heads=num-devices=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: qeff-replicate-kv-heads: num-devices must be at least 1, got 0

// 3 KV heads over 4 devices needs r = 4: 12 KV heads, more than 6 query heads.
func.func @too_many(%q: tensor<?x6x?x16xf32>, %k: tensor<?x3x?x16xf32>, %v: tensor<?x3x?x16xf32>) -> tensor<?x6x?x16xf32> {
  // expected-error @+1 {{qeff-replicate-kv-heads: cannot split 3 KV heads over 4 devices: replicating each 4 times gives 12 KV heads, more than the 6 query heads}}
  %a = qeff.attention %q, %k, %v {num_heads = 6 : i64, num_kv_heads = 3 : i64,
      head_dim = 16 : i64, scale = 2.5e-01 : f64, causal = true}
      : (tensor<?x6x?x16xf32>, tensor<?x3x?x16xf32>, tensor<?x3x?x16xf32>) -> tensor<?x6x?x16xf32>
  return %a : tensor<?x6x?x16xf32>
}

// -----

// 2 KV heads over 4 devices: r = 2 gives 4 KV heads, which do not divide 6
// query heads into groups.
func.func @not_a_divisor(%q: tensor<?x6x?x16xf32>, %k: tensor<?x2x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x6x?x16xf32> {
  // expected-error @+1 {{cannot split 2 KV heads over 4 devices: replicating each 2 times gives 4 KV heads, not a divisor of the 6 query heads}}
  %a = qeff.attention %q, %k, %v {num_heads = 6 : i64, num_kv_heads = 2 : i64,
      head_dim = 16 : i64, scale = 2.5e-01 : f64, causal = true}
      : (tensor<?x6x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x6x?x16xf32>
  return %a : tensor<?x6x?x16xf32>
}

// -----

// A Conv1D (in_out) projection stores heads as columns: not implemented.
func.func @in_out(%x: tensor<?x?x64xf32>, %q: tensor<?x4x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  %w = qeff.weight "c_attn.weight" : f32 -> tensor<64x32xf32>
  // expected-error @+1 {{replicating heads of an in_out (Conv1D) projection is not implemented}}
  %k = qeff.linear %x, %w {weight_layout = #qeff<weight_layout in_out>} : (tensor<?x?x64xf32>, tensor<64x32xf32>) -> tensor<?x?x32xf32>
  %k4 = qeff.split_heads %k {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
  %a = qeff.attention %q, %k4, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64,
      head_dim = 16 : i64, scale = 2.5e-01 : f64, causal = true}
      : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %a : tensor<?x4x?x16xf32>
}

// -----

// Heads that come through an op the pass does not know.
func.func @unknown(%q: tensor<?x4x?x16xf32>, %kt: tensor<?x?x2x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  // expected-error @+1 {{qeff-replicate-kv-heads: cannot replicate KV heads through 'qeff.transpose'}}
  %k = qeff.transpose %kt {permutation = array<i64: 0, 2, 1, 3>} : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
  %a = qeff.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64,
      head_dim = 16 : i64, scale = 2.5e-01 : f64, causal = true}
      : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %a : tensor<?x4x?x16xf32>
}

// -----

// A weight that is not a checkpoint tensor.
func.func @not_weight(%x: tensor<?x?x64xf32>, %w: tensor<32x64xf32>, %q: tensor<?x4x?x16xf32>, %v: tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32> {
  // expected-error @+1 {{the projection's weight and bias must be checkpoint tensors (qeff.weight)}}
  %k = qeff.linear %x, %w : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
  %k4 = qeff.split_heads %k {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
  %a = qeff.attention %q, %k4, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64,
      head_dim = 16 : i64, scale = 2.5e-01 : f64, causal = true}
      : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %a : tensor<?x4x?x16xf32>
}

// -----

// A clamped fused projection whose clamped value is also used elsewhere:
// the clamp cannot be retyped with the projection.
func.func @clamp_other_users(%x: tensor<?x?x64xf32>, %q: tensor<?x4x?x16xf32>) -> (tensor<?x4x?x16xf32>, tensor<?x?x64xf32>) {
  %w = qeff.weight "qkv.weight" : f32 -> tensor<64x64xf32>
  %f = qeff.linear %x, %w : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
  // expected-error @+1 {{qeff-replicate-kv-heads: the clamped K/V projection has other users}}
  %c = qeff.clamp %f {min = -1.0 : f64, max = 1.0 : f64} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
  %k, %v = qeff.split %c {sizes = array<i64: 32, 32>}
      : (tensor<?x?x64xf32>) -> (tensor<?x?x32xf32>, tensor<?x?x32xf32>)
  %k2 = qeff.split_heads %k {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
  %v2 = qeff.split_heads %v {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
  %a = qeff.attention %q, %k2, %v2 {num_heads = 4 : i64, num_kv_heads = 2 : i64,
      head_dim = 16 : i64, scale = 2.5e-01 : f64, causal = true}
      : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32>
  return %a, %c : tensor<?x4x?x16xf32>, tensor<?x?x64xf32>
}

// -----

// An RMSNorm over the whole K projection before the head split (OLMo 2)
// mixes the heads: its rows cannot be replicated per head.
func.func @whole_projection_norm(%x: tensor<?x?x32xf32>, %q: tensor<?x4x?x8xf32>, %v: tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32> {
  %wk = qeff.weight "k.weight" : f32 -> tensor<16x32xf32>
  %kn = qeff.weight "k_norm.weight" : f32 -> tensor<16xf32>
  %k = qeff.linear %x, %wk : (tensor<?x?x32xf32>, tensor<16x32xf32>) -> tensor<?x?x16xf32>
  %kk = qeff.rms_norm %k, %kn {epsilon = 1.0e-06 : f64} : (tensor<?x?x16xf32>, tensor<16xf32>) -> tensor<?x?x16xf32>
  // expected-error @+1 {{qeff-replicate-kv-heads: the KV heads do not come from a qeff.linear projection (qeff.rms_norm)}}
  %k4 = qeff.split_heads %kk {num_heads = 2 : i64} : (tensor<?x?x16xf32>) -> tensor<?x2x?x8xf32>
  %a = qeff.attention %q, %k4, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64,
      head_dim = 8 : i64, scale = 5.0e-01 : f64, causal = true}
      : (tensor<?x4x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x4x?x8xf32>
  return %a : tensor<?x4x?x8xf32>
}
