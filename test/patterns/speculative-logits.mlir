// RUN: qeff-opt %s -qeff-speculative-logits | FileCheck %s
// RUN: qeff-opt %s -qeff-speculative-logits -qeff-lower-to-onnx | FileCheck %s --check-prefix=ONNX

// The speculative-decoding target: a num_logits_to_keep [n, 1] input (after
// position_ids), the selection keeps that many tokens, and the LM head and
// the logit transforms after it follow to [batch, n, vocab].
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: qeff.name = "position_ids"
// CHECK-SAME: %[[KEEP:[^:]*]]: tensor<?x1xi64> {qeff.dims = ["num_logits_to_keep", ""], qeff.name = "num_logits_to_keep"}
// CHECK-SAME: -> (tensor<?x?x32xf32> {qeff.dims = ["batch_size", "num_logits_to_keep", ""], qeff.name = "logits"})
// CHECK: %[[SEL:.*]] = qeff.last_token_select %{{.*}}, %{{.*}}, %[[KEEP]] : (tensor<?x?x32xf32>, tensor<?x?xi64>, tensor<?x1xi64>) -> tensor<?x?x32xf32>
// CHECK: %[[L:.*]] = qeff.linear %[[SEL]], %{{.*}} : (tensor<?x?x32xf32>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
// CHECK: %[[S:.*]] = qeff.softcap %[[L]] {{.*}} -> tensor<?x?x32xf32>
// CHECK: return %[[S]]
// The lowering reads no shape: k comes from the values of keep * 0 + 1.
// ONNX-LABEL: func.func @forward(
// ONNX-NOT: onnx.Shape
// ONNX: onnx.ArgMax
// ONNX: onnx.Mul
// ONNX: onnx.CumSum
// ONNX: onnx.ReduceSum
// ONNX: onnx.Max
// ONNX: onnx.GatherElements
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]})
    -> (tensor<?x1x32xf32> {qeff.name = "logits", qeff.dims = ["batch_size", "", ""]}) {
  %t = qeff.weight "embed" : f32 -> tensor<32x32xf32>
  %h = qeff.embedding %ids, %t : (tensor<?x?xi64>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %last = qeff.last_token_select %h, %pos : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<?x1x32xf32>
  %w = qeff.weight "lm_head" : f32 -> tensor<32x32xf32>
  %logits = qeff.linear %last, %w : (tensor<?x1x32xf32>, tensor<32x32xf32>) -> tensor<?x1x32xf32>
  %capped = qeff.softcap %logits {cap = 30.0 : f64} : (tensor<?x1x32xf32>) -> tensor<?x1x32xf32>
  return %capped : tensor<?x1x32xf32>
}
