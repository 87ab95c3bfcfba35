// RUN: qeff-opt %s -qeff-fixed-shapes="ctx-len=16 prefill-seq-len=4 num-speculative-tokens=3,1" | FileCheck %s
// RUN: qeff-opt %s -qeff-fixed-shapes="ctx-len=16 prefill-seq-len=4 num-speculative-tokens=3" -qeff-verify-device | FileCheck %s --check-prefix=VERIFIED
// RUN: not qeff-opt %s -qeff-fixed-shapes="ctx-len=16 prefill-seq-len=4 num-speculative-tokens=4" 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not qeff-opt %s -qeff-fixed-shapes="ctx-len=16 prefill-seq-len=4 num-speculative-tokens=2,2" 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not qeff-opt %s -qeff-fixed-shapes="ctx-len=16 prefill-seq-len=4" 2>&1 | FileCheck %s --check-prefix=NOK
// RUN: not qeff-opt %S/fixed-shapes.mlir -split-input-file -qeff-fixed-shapes="ctx-len=16 prefill-seq-len=4 num-speculative-tokens=3" 2>&1 | FileCheck %s --check-prefix=NOINPUT

// A speculative-decoding target (the num_logits_to_keep input of
// qeff-speculative-logits): every specialization binds num_logits_to_keep,
// 1 for Prefill and Decode, K + 1 for DecodeK<K> (seq_len K + 1).
// CHECK: module attributes {qeff.specializations = [
// CHECK-SAME: {name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", num_logits_to_keep = "1", seq_len = "4"}},
// CHECK-SAME: {name = "Decode", symbols = {batch_size = "1", ctx_len = "16", num_logits_to_keep = "1", seq_len = "1"}},
// CHECK-SAME: {name = "DecodeK3", symbols = {batch_size = "1", ctx_len = "16", num_logits_to_keep = "4", seq_len = "4"}},
// CHECK-SAME: {name = "DecodeK1", symbols = {batch_size = "1", ctx_len = "16", num_logits_to_keep = "2", seq_len = "2"}}]}
// DecodeK3 and Prefill differ in num_logits_to_keep alone: still
// distinguishable for qeff-verify-device.
// VERIFIED: name = "DecodeK3"
// LONG: error: num-speculative-tokens 4: K must be at least 1 and K + 1 at most prefill-seq-len (4)
// TWICE: error: num-speculative-tokens lists 2 twice
// NOK: error: @forward has a num_logits_to_keep input (a speculative-decoding target) but num-speculative-tokens gives no K
// NOINPUT: error: num-speculative-tokens needs the num_logits_to_keep input (run qeff-speculative-logits first)
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %keep: tensor<?x1xi64> {qeff.name = "num_logits_to_keep", qeff.dims = ["num_logits_to_keep", ""]},
                   %pk: tensor<?x2x16x8xf32> {qeff.name = "past_key.0", qeff.dims = ["batch_size", "", "ctx_len", ""]})
    -> (tensor<?x2x16x8xf32> {qeff.name = "past_key.0_RetainedState", qeff.dims = ["batch_size", "", "ctx_len", ""]}) {
  return %pk : tensor<?x2x16x8xf32>
}
