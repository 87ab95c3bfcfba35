// RUN: qeff-opt %s -qeff-speculative-logits | FileCheck %s

// Rotaries whose frequencies follow the sequence length (dynamic NTK,
// longrope) get num_logits_to_keep as their keep operand, so that a decode
// step of K + 1 tokens rotates each token at its own position; rotaries with
// static frequencies (none, linear) are left as they are.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[POS:[^:]*]]: tensor<?x?xi64> {qeff.dims = ["batch_size", "seq_len"], qeff.name = "position_ids"}
// CHECK-SAME: %[[KEEP:[^:]*]]: tensor<?x1xi64> {qeff.dims = ["num_logits_to_keep", ""], qeff.name = "num_logits_to_keep"}
// CHECK: qeff.rotary %{{.*}}, %[[POS]], %[[KEEP]] {{.*}}kind = dynamic{{.*}} : (tensor<?x2x?x4xf32>, tensor<?x?xi64>, tensor<?x1xi64>)
// CHECK: qeff.rotary %{{.*}}, %[[POS]], %[[KEEP]] {{.*}}kind = longrope{{.*}} : (tensor<?x2x?x4xf32>, tensor<?x?xi64>, tensor<?x1xi64>)
// CHECK: qeff.rotary %{{.*}}, %[[POS]] {{.*}}kind = linear{{.*}} : (tensor<?x2x?x4xf32>, tensor<?x?xi64>) -> tensor<?x2x?x4xf32>
// CHECK: qeff.rotary %{{.*}}, %[[POS]] {max_positions = {{.*}} : (tensor<?x2x?x4xf32>, tensor<?x?xi64>) -> tensor<?x2x?x4xf32>
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %x: tensor<?x2x?x4xf32>)
    -> (tensor<?x1x32xf32> {qeff.name = "logits", qeff.dims = ["batch_size", "", ""]},
        tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>) {
  %d = qeff.rotary %x, %pos {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 32 : i64, scaling = #qeff.rope_scaling<kind = dynamic, factor = 2.0 : f64, original_max_position = 16>} : (tensor<?x2x?x4xf32>, tensor<?x?xi64>) -> tensor<?x2x?x4xf32>
  %l = qeff.rotary %x, %pos {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 64 : i64, scaling = #qeff.rope_scaling<kind = longrope, factor = 4.0 : f64, original_max_position = 16, attention_factor = 1.5 : f64, short_factor = [1.0, 2.0], long_factor = [4.0, 8.0]>} : (tensor<?x2x?x4xf32>, tensor<?x?xi64>) -> tensor<?x2x?x4xf32>
  %s = qeff.rotary %x, %pos {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 32 : i64, scaling = #qeff.rope_scaling<kind = linear, factor = 2.0 : f64>} : (tensor<?x2x?x4xf32>, tensor<?x?xi64>) -> tensor<?x2x?x4xf32>
  %n = qeff.rotary %x, %pos {style = #qeff<rotary_style half>, rotary_dim = 4 : i64, theta = 1.0e4 : f64, max_positions = 32 : i64} : (tensor<?x2x?x4xf32>, tensor<?x?xi64>) -> tensor<?x2x?x4xf32>
  %t = qeff.weight "embed" : f32 -> tensor<32x32xf32>
  %h = qeff.embedding %ids, %t : (tensor<?x?xi64>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %last = qeff.last_token_select %h, %pos : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<?x1x32xf32>
  %w = qeff.weight "lm_head" : f32 -> tensor<32x32xf32>
  %logits = qeff.linear %last, %w : (tensor<?x1x32xf32>, tensor<32x32xf32>) -> tensor<?x1x32xf32>
  return %logits, %d, %l, %s, %n : tensor<?x1x32xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>, tensor<?x2x?x4xf32>
}
