// One Llama decoder layer in the qeff dialect, HF semantics: what the importer
// produces per layer (hidden 64, 4 query heads, 2 KV heads, head_dim 16).
// Try: qeff-opt --canonicalize docs/examples/llama-layer.mlir
module attributes {qeff.model = #qeff.model<architecture = "LlamaForCausalLM",
    family = "llama", config = {hidden_size = 64 : i64, num_attention_heads = 4 : i64,
    num_key_value_heads = 2 : i64, rms_norm_eps = 1.0e-06 : f64},
    checkpoint = ["model.safetensors"]>} {
  func.func @layer0(%h: tensor<?x?x64xf32>, %pos: tensor<?x?xi64>,
                    %past_k: tensor<?x2x?x16xf32>, %past_v: tensor<?x2x?x16xf32>)
      -> (tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) {
    %ln1 = qeff.weight "model.layers.0.input_layernorm.weight" : f32 -> tensor<64xf32>
    %wq = qeff.weight "model.layers.0.self_attn.q_proj.weight" : f32 -> tensor<64x64xf32>
    %wk = qeff.weight "model.layers.0.self_attn.k_proj.weight" : f32 -> tensor<32x64xf32>
    %wv = qeff.weight "model.layers.0.self_attn.v_proj.weight" : f32 -> tensor<32x64xf32>
    %wo = qeff.weight "model.layers.0.self_attn.o_proj.weight" : f32 -> tensor<64x64xf32>
    %ln2 = qeff.weight "model.layers.0.post_attention_layernorm.weight" : f32 -> tensor<64xf32>
    %wg = qeff.weight "model.layers.0.mlp.gate_proj.weight" : f32 -> tensor<160x64xf32>
    %wu = qeff.weight "model.layers.0.mlp.up_proj.weight" : f32 -> tensor<160x64xf32>
    %wd = qeff.weight "model.layers.0.mlp.down_proj.weight" : f32 -> tensor<64x160xf32>

    %x = qeff.rms_norm %h, %ln1 {epsilon = 1.0e-06 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %q = qeff.linear %x, %wq : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %k = qeff.linear %x, %wk : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
    %v = qeff.linear %x, %wv : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
    %q4 = qeff.split_heads %q {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
    %k4 = qeff.split_heads %k {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
    %v4 = qeff.split_heads %v {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
    %qr = qeff.rotary %q4, %pos {style = #qeff<rotary_style half>, rotary_dim = 16 : i64,
        theta = 1.0e+04 : f64, max_positions = 64 : i64}
        : (tensor<?x4x?x16xf32>, tensor<?x?xi64>) -> tensor<?x4x?x16xf32>
    %kr = qeff.rotary %k4, %pos {style = #qeff<rotary_style half>, rotary_dim = 16 : i64,
        theta = 1.0e+04 : f64, max_positions = 64 : i64}
        : (tensor<?x2x?x16xf32>, tensor<?x?xi64>) -> tensor<?x2x?x16xf32>
    %kc = qeff.kv_concat %past_k, %kr {layout = #qeff<kv_layout bhsd>}
        : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
    %vc = qeff.kv_concat %past_v, %v4 {layout = #qeff<kv_layout bhsd>}
        : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
    %a = qeff.attention %qr, %kc, %vc {num_heads = 4 : i64, num_kv_heads = 2 : i64,
        head_dim = 16 : i64, scale = 2.5e-01 : f64, causal = true}
        : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x4x?x16xf32>
    %am = qeff.merge_heads %a : (tensor<?x4x?x16xf32>) -> tensor<?x?x64xf32>
    %o = qeff.linear %am, %wo : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %h1 = qeff.add %h, %o : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>

    %y = qeff.rms_norm %h1, %ln2 {epsilon = 1.0e-06 : f64} : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    %g = qeff.linear %y, %wg : (tensor<?x?x64xf32>, tensor<160x64xf32>) -> tensor<?x?x160xf32>
    %u = qeff.linear %y, %wu : (tensor<?x?x64xf32>, tensor<160x64xf32>) -> tensor<?x?x160xf32>
    %gu = qeff.gated_activation %g, %u {kind = #qeff<activation silu>} : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
    %d = qeff.linear %gu, %wd : (tensor<?x?x160xf32>, tensor<64x160xf32>) -> tensor<?x?x64xf32>
    %h2 = qeff.add %h1, %d : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    return %h2, %kc, %vc : tensor<?x?x64xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>
  }
}
