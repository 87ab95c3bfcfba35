// RUN: qeff-opt %s -split-input-file -verify-diagnostics

// Every qeff verifier message, one case each: weights, embedding, linear,
// norms, heads and rotary here; attention, KV cache, masks and the rest in
// invalid-attention.mlir.

func.func @weight_empty_name() {
  // expected-error @+1 {{tensor name must not be empty}}
  %0 = qeff.weight "" : bf16 -> tensor<4xf32>
  return
}

// -----

func.func @weight_storage_type() {
  // expected-error @+1 {{storage type must be an integer or float type, got 'index'}}
  %0 = qeff.weight "w" : index -> tensor<4xf32>
  return
}

// -----

func.func @weight_dynamic() {
  // expected-error @+1 {{weight shape must be static, got 'tensor<?xf32>'}}
  %0 = qeff.weight "w" : bf16 -> tensor<?xf32>
  return
}

// -----

func.func @weight_transpose_rank() {
  // expected-error @+1 {{only a 2-D weight can be transposed, got rank 1}}
  %0 = qeff.weight "w" : bf16 -> tensor<4xf32> {transpose}
  return
}

// -----

func.func @weight_rows_scalar() {
  // expected-error @+1 {{a scalar weight has no rows to select}}
  %0 = qeff.weight "w" : f32 -> tensor<f32> {rows = array<i64: 0, 1>}
  return
}

// -----

func.func @weight_rows_pairs() {
  // expected-error @+1 {{rows must be (start, count) pairs, got 3 values}}
  %0 = qeff.weight "w" : f32 -> tensor<4x2xf32> {rows = array<i64: 0, 2, 2>}
  return
}

// -----

func.func @weight_rows_range() {
  // expected-error @+1 {{row range #1 (start 2, count 0) must have a start >= 0 and a count > 0}}
  %0 = qeff.weight "w" : f32 -> tensor<4x2xf32> {rows = array<i64: 0, 4, 2, 0>}
  return
}

// -----

func.func @weight_rows_total() {
  // expected-error @+1 {{rows select 6 rows, but the result has 2 (its dimension 1, transposed)}}
  %0 = qeff.weight "w" : f32 -> tensor<4x2xf32> {transpose, rows = array<i64: 0, 2, 0, 4>}
  return
}

// -----

func.func @embedding_ids_rank(%ids: tensor<4xi64>, %t: tensor<8x4xf32>) {
  // expected-error @+1 {{ids must be rank 2 ([batch, seq]), got rank 1}}
  %0 = qeff.embedding %ids, %t : (tensor<4xi64>, tensor<8x4xf32>) -> tensor<1x4x4xf32>
  return
}

// -----

func.func @embedding_element_type(%ids: tensor<1x4xi64>, %t: tensor<8x4xf32>) {
  // expected-error @+1 {{result element type must match the table's}}
  %0 = qeff.embedding %ids, %t : (tensor<1x4xi64>, tensor<8x4xf32>) -> tensor<1x4x4xf16>
  return
}

// -----

func.func @embedding_hidden(%ids: tensor<1x4xi64>, %t: tensor<8x4xf32>) {
  // expected-error @+1 {{result dimension 2 is 5 but [batch, seq, hidden] requires 4}}
  %0 = qeff.embedding %ids, %t : (tensor<1x4xi64>, tensor<8x4xf32>) -> tensor<1x4x5xf32>
  return
}

// -----

func.func @embedding_result_rank(%ids: tensor<1x4xi64>, %t: tensor<8x4xf32>) {
  // expected-error @+1 {{result must be rank 3 ([batch, seq, hidden]), got rank 2}}
  %0 = qeff.embedding %ids, %t : (tensor<1x4xi64>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @linear_in_features(%x: tensor<2x8xf32>, %w: tensor<16x4xf32>) {
  // expected-error @+1 {{input features (8) do not match the weight's in features (4, weight_layout out_in: [out, in])}}
  %0 = qeff.linear %x, %w : (tensor<2x8xf32>, tensor<16x4xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @linear_in_out_layout(%x: tensor<2x8xf32>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{input features (8) do not match the weight's in features (16, weight_layout in_out: [in, out])}}
  %0 = qeff.linear %x, %w {weight_layout = #qeff<weight_layout in_out>} : (tensor<2x8xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @linear_weight_rank(%x: tensor<2x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{weight must be rank 2 (weight_layout out_in: [out, in]), got rank 1}}
  %0 = qeff.linear %x, %w : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @linear_scalar_input(%x: tensor<f32>, %w: tensor<8x8xf32>) {
  // expected-error @+1 {{input must have at least one dimension}}
  %0 = qeff.linear %x, %w : (tensor<f32>, tensor<8x8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @linear_result(%x: tensor<2x8xf32>, %w: tensor<16x8xf32>) {
  // expected-error @+1 {{result dimension 1 is 8 but [..., out_features] requires 16}}
  %0 = qeff.linear %x, %w : (tensor<2x8xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<2x8xf32>, %w: tensor<16x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+1 {{bias dimension 0 is 8 but [out_features] requires 16}}
  %0 = qeff.linear %x, %w, %b : (tensor<2x8xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<2x16xf32>
  return
}

// -----

func.func @rms_norm_weight(%x: tensor<2x8xf32>, %w: tensor<4xf32>) {
  // expected-error @+1 {{weight dimension 0 is 4 but [hidden] requires 8}}
  %0 = qeff.rms_norm %x, %w {epsilon = 1.0e-6 : f64} : (tensor<2x8xf32>, tensor<4xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @rms_norm_epsilon(%x: tensor<2x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{epsilon must not be negative}}
  %0 = qeff.rms_norm %x, %w {epsilon = -1.0e-6 : f64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @rms_norm_result(%x: tensor<2x8xf32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{result type 'tensor<2x8xf16>' must match the input type 'tensor<2x8xf32>'}}
  %0 = qeff.rms_norm %x, %w {epsilon = 1.0e-6 : f64} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf16>
  return
}

// -----

func.func @rms_norm_scalar(%x: tensor<f32>, %w: tensor<8xf32>) {
  // expected-error @+1 {{input must have at least one dimension}}
  %0 = qeff.rms_norm %x, %w {epsilon = 1.0e-6 : f64} : (tensor<f32>, tensor<8xf32>) -> tensor<f32>
  return
}

// -----

func.func @layer_norm_bias(%x: tensor<2x8xf32>, %w: tensor<8xf32>, %b: tensor<2xf32>) {
  // expected-error @+1 {{bias dimension 0 is 2 but [hidden] requires 8}}
  %0 = qeff.layer_norm %x, %w, %b {epsilon = 1.0e-5 : f64} : (tensor<2x8xf32>, tensor<8xf32>, tensor<2xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_weight_rank(%x: tensor<2x8xf32>, %w: tensor<1x1x8xf32>) {
  // expected-error @+1 {{weight must be rank 1 ([hidden]), got rank 3}}
  %0 = qeff.layer_norm %x, %w {epsilon = 1.0e-5 : f64} : (tensor<2x8xf32>, tensor<1x1x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_per_head_input(%x: tensor<2x8xf32>, %w: tensor<1x8xf32>) {
  // expected-error @+1 {{input with a per-head weight must be rank 4 ([batch, heads, seq, head_dim]), got rank 2}}
  %0 = qeff.layer_norm %x, %w {epsilon = 1.0e-5 : f64} : (tensor<2x8xf32>, tensor<1x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @layer_norm_per_head_weight(%x: tensor<?x4x?x16xf32>, %w: tensor<3x16xf32>) {
  // expected-error @+1 {{weight dimension 0 is 3 but [heads, head_dim] requires 4}}
  %0 = qeff.layer_norm %x, %w {epsilon = 1.0e-5 : f64} : (tensor<?x4x?x16xf32>, tensor<3x16xf32>) -> tensor<?x4x?x16xf32>
  return
}

// -----

func.func @layer_norm_per_head_bias(%x: tensor<?x4x?x16xf32>, %w: tensor<4x16xf32>, %b: tensor<4x8xf32>) {
  // expected-error @+1 {{bias dimension 1 is 8 but [heads, head_dim] requires 16}}
  %0 = qeff.layer_norm %x, %w, %b {epsilon = 1.0e-5 : f64} : (tensor<?x4x?x16xf32>, tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<?x4x?x16xf32>
  return
}

// -----

func.func @layer_norm_per_head_static(%x: tensor<?x?x?x16xf32>, %w: tensor<4x16xf32>) {
  // expected-error @+1 {{a per-head norm needs static heads and head_dim}}
  %0 = qeff.layer_norm %x, %w {epsilon = 1.0e-5 : f64} : (tensor<?x?x?x16xf32>, tensor<4x16xf32>) -> tensor<?x?x?x16xf32>
  return
}

// -----

func.func @standardize_static(%x: tensor<2x?xf32>) {
  // expected-error @+1 {{the normalised (last) dimension must be static}}
  %0 = qeff.standardize %x {epsilon = 1.0e-5 : f64} : (tensor<2x?xf32>) -> tensor<2x?xf32>
  return
}

// -----

func.func @standardize_epsilon(%x: tensor<2x8xf32>) {
  // expected-error @+1 {{epsilon must not be negative}}
  %0 = qeff.standardize %x {epsilon = -1.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return
}

// -----

func.func @split_heads_divisible(%x: tensor<1x3x10xf32>) {
  // expected-error @+1 {{hidden dimension 10 is not divisible by num_heads 4}}
  %0 = qeff.split_heads %x {num_heads = 4 : i64} : (tensor<1x3x10xf32>) -> tensor<1x4x3x2xf32>
  return
}

// -----

func.func @split_heads_dynamic(%x: tensor<1x3x?xf32>) {
  // expected-error @+1 {{hidden dimension must be static}}
  %0 = qeff.split_heads %x {num_heads = 4 : i64} : (tensor<1x3x?xf32>) -> tensor<1x4x3x2xf32>
  return
}

// -----

func.func @split_heads_result(%x: tensor<1x3x8xf32>) {
  // expected-error @+1 {{result dimension 3 is 4 but [batch, num_heads, seq, head_dim] requires 2}}
  %0 = qeff.split_heads %x {num_heads = 4 : i64} : (tensor<1x3x8xf32>) -> tensor<1x4x3x4xf32>
  return
}

// -----

func.func @split_heads_positive(%x: tensor<1x3x8xf32>) {
  // expected-error @+1 {{attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = qeff.split_heads %x {num_heads = 0 : i64} : (tensor<1x3x8xf32>) -> tensor<1x4x3x4xf32>
  return
}

// -----

func.func @merge_heads_rank(%x: tensor<1x3x8xf32>) {
  // expected-error @+1 {{input must be rank 4 ([batch, heads, seq, head_dim]), got rank 3}}
  %0 = qeff.merge_heads %x : (tensor<1x3x8xf32>) -> tensor<1x3x8xf32>
  return
}

// -----

func.func @merge_heads_result(%x: tensor<1x4x3x2xf32>) {
  // expected-error @+1 {{result dimension 2 is 6 but [batch, seq, heads * head_dim] requires 8}}
  %0 = qeff.merge_heads %x : (tensor<1x4x3x2xf32>) -> tensor<1x3x6xf32>
  return
}

// -----

func.func @rotary_odd(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{rotary_dim must be even, got 5}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 5 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rotary_too_wide(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{rotary_dim (16) exceeds head_dim (8)}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 16 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rotary_theta(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{theta must be greater than 1}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 0.5 : f64, max_positions = 8 : i64} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rotary_positions(%x: tensor<1x4x3x8xf32>, %p: tensor<1x5xi64>) {
  // expected-error @+1 {{positions dimension 1 is 5 but [batch, seq] requires 3}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64} : (tensor<1x4x3x8xf32>, tensor<1x5xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rotary_keep_static_scaling(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>, %k: tensor<3x1xi64>) {
  // expected-error @+1 {{keep (num_logits_to_keep) only applies to sequence-length dependent rope scaling (dynamic, longrope)}}
  %0 = qeff.rotary %x, %p, %k {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = linear, factor = 2.0 : f64>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>, tensor<3x1xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rotary_keep_shape(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>, %k: tensor<3xi64>) {
  // expected-error @+1 {{keep must be rank 2 ([k, 1]), got rank 1}}
  %0 = qeff.rotary %x, %p, %k {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = dynamic, factor = 2.0 : f64, original_max_position = 4>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>, tensor<3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_factor(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{rope scaling factor must be positive}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = linear, factor = 0.0 : f64>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_llama3_context(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{llama3 rope scaling needs a positive original_max_position}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = llama3, factor = 8.0 : f64>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_llama3_band(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{llama3 rope scaling needs 0 < low_freq_factor < high_freq_factor}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = llama3, factor = 8.0 : f64, low_freq_factor = 4.0 : f64, high_freq_factor = 1.0 : f64, original_max_position = 8192>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_llama3_params_on_linear(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{low_freq_factor and high_freq_factor are llama3 parameters, not linear ones}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = linear, factor = 2.0 : f64, low_freq_factor = 1.0 : f64>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_beta_on_dynamic(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{beta_fast and beta_slow are yarn parameters, not dynamic ones}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = dynamic, factor = 2.0 : f64, original_max_position = 8, beta_fast = 32.0 : f64>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_lists_on_yarn(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{short_factor and long_factor are longrope parameters, not yarn ones}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = yarn, factor = 2.0 : f64, original_max_position = 8, short_factor = [1.0, 1.0]>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_attention_on_llama3(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{attention_factor is a yarn or longrope parameter, not a llama3 one}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = llama3, factor = 8.0 : f64, original_max_position = 64, attention_factor = 1.5 : f64>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_attention_positive(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{rope scaling attention_factor must be positive}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = yarn, factor = 2.0 : f64, original_max_position = 8, attention_factor = 0.0 : f64>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_yarn_context(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{yarn rope scaling needs a positive original_max_position}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = yarn, factor = 2.0 : f64>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_truncate_not_yarn(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{truncate is a yarn parameter, not a linear one}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = linear, factor = 2.0 : f64, truncate = false>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_yarn_beta(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{yarn rope scaling needs positive beta_fast and beta_slow}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = yarn, factor = 2.0 : f64, original_max_position = 8, beta_slow = -1.0 : f64>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_dynamic_factor(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{dynamic rope scaling needs a factor of at least 1}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = dynamic, factor = 0.5 : f64, original_max_position = 8>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_longrope_lists(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{longrope rope scaling needs short_factor and long_factor lists of one length}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = longrope, factor = 4.0 : f64, original_max_position = 8, short_factor = [1.0, 1.0], long_factor = [2.0]>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rope_scaling_longrope_positive(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{longrope factors must be positive, got -2}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = longrope, factor = 4.0 : f64, original_max_position = 8, short_factor = [1.0, 1.0], long_factor = [2.0, -2.0]>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}

// -----

func.func @rotary_longrope_length(%x: tensor<1x4x3x8xf32>, %p: tensor<1x3xi64>) {
  // expected-error @+1 {{longrope needs rotary_dim / 2 = 4 factors per list, got 2}}
  %0 = qeff.rotary %x, %p {style = #qeff<rotary_style half>, rotary_dim = 8 : i64, theta = 1.0e4 : f64, max_positions = 8 : i64, scaling = #qeff.rope_scaling<kind = longrope, factor = 4.0 : f64, original_max_position = 8, short_factor = [1.0, 1.0], long_factor = [2.0, 3.0]>} : (tensor<1x4x3x8xf32>, tensor<1x3xi64>) -> tensor<1x4x3x8xf32>
  return
}
