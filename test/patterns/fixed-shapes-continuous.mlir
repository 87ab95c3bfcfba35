// RUN: qeff-opt %s -qeff-fixed-shapes="ctx-len=16 prefill-seq-len=4 full-batch-size=3" | FileCheck %s
// RUN: not qeff-opt %s -qeff-fixed-shapes="ctx-len=16 prefill-seq-len=4" 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: qeff-opt %s -qeff-fixed-shapes="ctx-len=16 prefill-seq-len=1 full-batch-size=1" | FileCheck %s --check-prefix=ONE

// Continuous batching: the cache rows are full_batch_size; Prefill runs one
// sequence, Decode all full_batch_size of them.
// CHECK: module attributes {qeff.specializations = [{name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", full_batch_size = "3", seq_len = "4"}}, {name = "Decode", symbols = {batch_size = "3", ctx_len = "16", full_batch_size = "3", seq_len = "1"}}]}

// One cache row and one-token prefill: Decode would equal Prefill, so only
// Prefill is recorded.
// ONE: module attributes {qeff.specializations = [{name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", full_batch_size = "1", seq_len = "1"}}]}

// Without the option, no specialization binds full_batch_size.
// OFF: error: input 'past_key.0' dimension 0 is named 'full_batch_size', which no specialization binds (batch_size, seq_len, ctx_len)
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %bi: tensor<?x1xi64> {qeff.name = "batch_index", qeff.dims = ["batch_size", ""]},
                   %pk: tensor<?x2x16x8xf32> {qeff.name = "past_key.0", qeff.dims = ["full_batch_size", "", "ctx_len", ""]})
    -> (tensor<?x2x16x8xf32> {qeff.name = "past_key.0_RetainedState", qeff.dims = ["full_batch_size", "", "ctx_len", ""]}) {
  return %pk : tensor<?x2x16x8xf32>
}
