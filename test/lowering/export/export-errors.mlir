// Export errors are diagnostics at the offending op (or the module), and an
// export that fails leaves nothing behind: not in an existing output
// directory, and a directory the export created is removed again. The
// checkpoint (whose lm_head.weight is dropped) is not touched.
// RUN: rm -rf %t && mkdir -p %t/out
// RUN: %python %S/../../tools/make-checkpoint.py %t/ckpt --dtype bf16 --hidden 8 --heads 2 --kv-heads 1 --layers 1 --intermediate 16 --vocab 12 --drop lm_head.weight
// RUN: cp %t/ckpt/model.safetensors %t/before.safetensors
// RUN: qeff-translate --export-onnx %s -split-input-file -verify-diagnostics --onnx-output-dir=%t/out --onnx-checkpoint-dir=%t/ckpt
// RUN: ls -A %t/out | count 0
// RUN: not qeff-translate --export-onnx %s -split-input-file --onnx-output-dir=%t/new --onnx-checkpoint-dir=%t/ckpt 2>/dev/null
// RUN: not ls %t/new
// RUN: cmp %t/ckpt/model.safetensors %t/before.safetensors
// RUN: not qeff-translate --export-onnx %s -split-input-file --onnx-checkpoint-dir=%t/ckpt 2>&1 | FileCheck %s --check-prefix=NODIR
// NODIR: error: --export-onnx needs --onnx-output-dir=<dir>

// An op the lowering should have rewritten.
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]})
    -> (tensor<?x?x8xf32> {qeff.name = "hidden", qeff.dims = ["batch_size", "seq_len", ""]}) {
  %emb = qeff.weight "model.embed_tokens.weight" : bf16 -> tensor<12x8xf32>
  // expected-error @+1 {{op 'qeff.embedding' has no ONNX form: run the lowering first}}
  %h = qeff.embedding %ids, %emb : (tensor<?x?xi64>, tensor<12x8xf32>) -> tensor<?x?x8xf32>
  return %h : tensor<?x?x8xf32>
}

// -----

// A tensor the checkpoint does not have.
func.func @forward(%x: tensor<2x8xf32> {qeff.name = "x", qeff.dims = ["", ""]})
    -> (tensor<2x12xf32> {qeff.name = "y", qeff.dims = ["", ""]}) {
  // expected-error @+1 {{has no tensor 'lm_head.weight'}}
  %w = qeff.weight "lm_head.weight" : bf16 -> tensor<8x12xf32> {transpose}
  %y = onnx.MatMul %x, %w : (tensor<2x8xf32>, tensor<8x12xf32>) -> tensor<2x12xf32>
  return %y : tensor<2x12xf32>
}

// -----

// Storage dtype and shape must match the checkpoint.
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["b", "s"]})
    -> (tensor<?x?x8xf32> {qeff.name = "h", qeff.dims = ["b", "s", ""]}) {
  // expected-error @+1 {{checkpoint tensor 'model.embed_tokens.weight' is stored as BF16, the IR says 'f16'}}
  %emb = qeff.weight "model.embed_tokens.weight" : f16 -> tensor<12x8xf32>
  %h = onnx.Gather %emb, %ids : (tensor<12x8xf32>, tensor<?x?xi64>) -> tensor<?x?x8xf32>
  return %h : tensor<?x?x8xf32>
}

// -----

func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["b", "s"]})
    -> (tensor<?x?x12xf32> {qeff.name = "h", qeff.dims = ["b", "s", ""]}) {
  // expected-error @+1 {{checkpoint tensor 'model.embed_tokens.weight' has shape [12x8], the IR expects [8x12]}}
  %emb = qeff.weight "model.embed_tokens.weight" : bf16 -> tensor<8x12xf32>
  %h = onnx.Gather %emb, %ids : (tensor<8x12xf32>, tensor<?x?xi64>) -> tensor<?x?x12xf32>
  return %h : tensor<?x?x12xf32>
}

// -----

// qeff.dims must have one entry per dimension.
// expected-error @+1 {{qeff.dims of 'x' has 1 entries for a rank-2 tensor}}
func.func @forward(%x: tensor<?x8xf32> {qeff.name = "x", qeff.dims = ["b"]})
    -> (tensor<?x8xf32> {qeff.name = "y", qeff.dims = ["b", ""]}) {
  %y = onnx.Relu %x : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// The exporter's own onnx::checker run rejects the model: nothing is written.
// expected-error @+1 {{not valid ONNX: onnx checker: No Op registered for NoSuchOp}}
module {
  func.func @forward(%x: tensor<2xf32> {qeff.name = "x", qeff.dims = [""]})
      -> (tensor<2xf32> {qeff.name = "y", qeff.dims = [""]}) {
    %y = onnx.Generic "NoSuchOp" (%x) : (tensor<2xf32>) -> tensor<2xf32>
    return %y : tensor<2xf32>
  }
}

// -----

// No public function.
// expected-error @+1 {{expected one public function with a body (normally @forward), found 0}}
module {
  func.func private @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
    return %x : tensor<2xf32>
  }
}
