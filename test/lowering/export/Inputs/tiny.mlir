// A hand-written onnx-dialect module of the shape the lowering produces:
// embedding Gather, MatMul against a transposed checkpoint weight, a scalar
// constant, Softmax, a Slice with an omitted optional input (axes), a Cast,
// a large (external) constant and an onnx.Generic with attributes. The
// checkpoint is made by make-checkpoint.py (--hidden 8 --vocab 12) into
// ckpt/ next to this file.
module attributes {qeff.model = #qeff.model<architecture = "LlamaForCausalLM", family = "llama", config = {}, checkpoint = ["model.safetensors"]>, qeff.checkpoint_dir = "ckpt"} {
  func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]})
      -> (tensor<?x?x12xf32> {qeff.name = "probs", qeff.dims = ["batch_size", "seq_len", ""]},
          tensor<?x?x12xf16> {qeff.name = "logits_f16", qeff.dims = ["batch_size", "seq_len", ""]},
          tensor<?x?x40xf32> {qeff.name = "proj", qeff.dims = ["batch_size", "seq_len", ""]}) {
    %emb = qeff.weight "model.embed_tokens.weight" : bf16 -> tensor<12x8xf32> loc("model.embed_tokens.weight")
    %h = onnx.Gather %emb, %ids {axis = 0 : i64} : (tensor<12x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32> loc("model.embed_tokens")
    %w = qeff.weight "lm_head.weight" : bf16 -> tensor<8x12xf32> {transpose} loc("lm_head.weight")
    %logits = onnx.MatMul %h, %w : (tensor<?x?x8xf32>, tensor<8x12xf32>) -> tensor<?x?x12xf32> loc("lm_head")
    %scale = onnx.Constant dense<0.5> : tensor<f32> loc("lm_head")
    %scaled = onnx.Mul %logits, %scale : (tensor<?x?x12xf32>, tensor<f32>) -> tensor<?x?x12xf32> loc("lm_head")
    %p = onnx.Softmax %scaled {axis = -1 : i64} : (tensor<?x?x12xf32>) -> tensor<?x?x12xf32> loc("lm_head")
    %starts = onnx.Constant dense<0> : tensor<1xi64> loc("select")
    %ends = onnx.Constant dense<1> : tensor<1xi64> loc("select")
    %steps = onnx.Constant dense<1> : tensor<1xi64> loc("select")
    %ps = onnx.Slice %p, %starts, %ends steps %steps : (tensor<?x?x12xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x?x12xf32> loc("select")
    %l16 = onnx.Cast %logits {to = f16} : (tensor<?x?x12xf32>) -> tensor<?x?x12xf16> loc("lm_head")
    %big = onnx.Constant dense<0.25> : tensor<8x40xf32> loc("proj")
    %mm = onnx.MatMul %h, %big : (tensor<?x?x8xf32>, tensor<8x40xf32>) -> tensor<?x?x40xf32> loc("proj")
    %proj = onnx.Generic "LeakyRelu" (%mm) {onnx_attributes = {alpha = 0.125 : f32}} : (tensor<?x?x40xf32>) -> tensor<?x?x40xf32> loc("proj")
    return %ps, %l16, %proj : tensor<?x?x12xf32>, tensor<?x?x12xf16>, tensor<?x?x40xf32>
  }
}
