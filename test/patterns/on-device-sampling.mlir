// RUN: qeff-opt %s -qeff-on-device-sampling=max-top-k-ids=4 | FileCheck %s
// RUN: qeff-opt %s -qeff-on-device-sampling=max-top-k-ids=4 -qeff-lower-to-onnx | FileCheck %s --check-prefix=ONNX
// The default max-top-k-ids is QEfficient's 512, or the vocabulary when
// smaller.
// RUN: qeff-opt %s -qeff-on-device-sampling | FileCheck %s --check-prefix=DEFAULT
// DEFAULT: tensor<?x32xf32> {qeff.dims = ["batch_size", ""], qeff.name = "random_numbers"}
// DEFAULT: max_top_k_ids = 32 : i64
// RUN: not qeff-opt %s -qeff-on-device-sampling=max-top-k-ids=64 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not qeff-opt %s -qeff-on-device-sampling=max-top-k-ids=-1 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// LARGE: error: @forward: max-top-k-ids 64 exceeds the vocabulary (32)
// NEGATIVE: error: @forward: max-top-k-ids must not be negative, got -1

// The sampler after the last token's logits: QEfficient's inputs appended in
// its order, next_tokens [batch, 1] in place of the logits, the two penalty
// buffers retained (one row per batch row without continuous batching).
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[IDS:[^:]*]]: tensor<?x?xi64> {{.*}}qeff.name = "input_ids"
// CHECK-SAME: %[[POS:[^:]*]]: tensor<?x?xi64> {{.*}}qeff.name = "position_ids"
// CHECK-SAME: %[[REP:[^:]*]]: tensor<?x32xi1> {qeff.dims = ["batch_size", ""], qeff.name = "past_repetition_penalty_buffer"}
// CHECK-SAME: tensor<?x1xf32> {qeff.dims = ["batch_size", ""], qeff.name = "repetition_penalties"}
// CHECK-SAME: %[[PRES:[^:]*]]: tensor<?x32xi1> {qeff.dims = ["batch_size", ""], qeff.name = "past_presence_penalty_buffer"}
// CHECK-SAME: tensor<?x1xf32> {qeff.dims = ["batch_size", ""], qeff.name = "presence_penalties"}
// CHECK-SAME: tensor<?x1xf32> {qeff.dims = ["batch_size", ""], qeff.name = "temperatures"}
// CHECK-SAME: tensor<?x1xi64> {qeff.dims = ["batch_size", ""], qeff.name = "top_ks"}
// CHECK-SAME: tensor<?x1xf32> {qeff.dims = ["batch_size", ""], qeff.name = "top_ps"}
// CHECK-SAME: tensor<?x1xf32> {qeff.dims = ["batch_size", ""], qeff.name = "min_ps"}
// CHECK-SAME: tensor<?x4xf32> {qeff.dims = ["batch_size", ""], qeff.name = "random_numbers"}
// CHECK-SAME: -> (tensor<?x1xi64> {qeff.dims = ["batch_size", ""], qeff.name = "next_tokens"},
// CHECK-SAME: tensor<?x32xi1> {qeff.dims = ["batch_size", ""], qeff.name = "past_repetition_penalty_buffer_RetainedState"},
// CHECK-SAME: tensor<?x32xi1> {qeff.dims = ["batch_size", ""], qeff.name = "past_presence_penalty_buffer_RetainedState"})
// CHECK: %[[LOGITS:.*]] = qeff.linear
// CHECK: %[[R:[^,]*]], %[[RROWS:[^ ]*]] = qeff.token_mask_update %[[REP]], %[[IDS]], %[[POS]] :
// CHECK: %[[P:[^,]*]], %[[PROWS:[^ ]*]] = qeff.token_mask_update %[[PRES]], %[[IDS]], %[[POS]] {generated_only} :
// CHECK: %[[T:.*]] = qeff.sample %[[LOGITS]], %[[RROWS]], %[[PROWS]], {{.*}} {max_top_k_ids = 4 : i64}
// CHECK: return %[[T]], %[[R]], %[[P]]

// Standard ONNX ops only, and no shape read at run time.
// ONNX-LABEL: func.func @forward(
// ONNX-NOT: onnx.Shape
// ONNX-DAG: onnx.ScatterElements
// ONNX-DAG: onnx.TopK
// ONNX-DAG: onnx.Softmax
// ONNX-DAG: onnx.CumSum {{.*}}exclusive = 1
// ONNX-DAG: onnx.Log
// ONNX-DAG: onnx.GatherElements
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]})
    -> (tensor<?x1x32xf32> {qeff.name = "logits", qeff.dims = ["batch_size", "", ""]}) {
  %t = qeff.weight "embed" : f32 -> tensor<32x32xf32>
  %h = qeff.embedding %ids, %t : (tensor<?x?xi64>, tensor<32x32xf32>) -> tensor<?x?x32xf32>
  %last = qeff.last_token_select %h, %pos : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<?x1x32xf32>
  %w = qeff.weight "lm_head" : f32 -> tensor<32x32xf32>
  %logits = qeff.linear %last, %w : (tensor<?x1x32xf32>, tensor<32x32xf32>) -> tensor<?x1x32xf32>
  return %logits : tensor<?x1x32xf32>
}
