// RUN: qeff-opt %s -qeff-on-device-sampling=max-top-k-ids=8 | FileCheck %s
// RUN: qeff-opt %s -qeff-on-device-sampling=max-top-k-ids=8 -qeff-lower-to-onnx | FileCheck %s --check-prefix=ONNX

// Continuous batching: the buffers have a row per cache row
// (full_batch_size) and are read and written at batch_index.
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[BI:[^:]*]]: tensor<?x1xi64> {{.*}}qeff.name = "batch_index"
// CHECK-SAME: tensor<?x16xi1> {qeff.dims = ["full_batch_size", ""], qeff.name = "past_repetition_penalty_buffer"}
// CHECK-SAME: tensor<?x16xi1> {qeff.dims = ["full_batch_size", ""], qeff.name = "past_presence_penalty_buffer"}
// CHECK-SAME: -> (tensor<?x1xi64> {qeff.dims = ["batch_size", ""], qeff.name = "next_tokens"},
// CHECK-SAME: {qeff.dims = ["full_batch_size", ""], qeff.name = "past_repetition_penalty_buffer_RetainedState"}
// CHECK: qeff.token_mask_update %{{.*}}, %{{.*}}, %{{.*}}, %[[BI]] :
// CHECK: qeff.token_mask_update %{{.*}}, %{{.*}}, %{{.*}}, %[[BI]] {generated_only} :
// The rows are gathered and scattered back by batch_index, idle lanes
// redirected to a live lane's write.
// ONNX-LABEL: func.func @forward(
// ONNX-NOT: onnx.Shape
// ONNX: onnx.Gather
// ONNX: onnx.ScatterElements
// ONNX: onnx.ArgMax
// ONNX: onnx.ScatterND
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pos: tensor<?x?xi64> {qeff.name = "position_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %bi: tensor<?x1xi64> {qeff.name = "batch_index", qeff.dims = ["batch_size", ""]},
                   %logits: tensor<?x1x16xf32> {qeff.name = "logits_in", qeff.dims = ["batch_size", "", ""]})
    -> (tensor<?x1x16xf32> {qeff.name = "logits", qeff.dims = ["batch_size", "", ""]}) {
  return %logits : tensor<?x1x16xf32>
}
