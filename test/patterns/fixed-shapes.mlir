// RUN: qeff-opt %s -split-input-file -qeff-fixed-shapes="ctx-len=16 prefill-seq-len=4 batch-size=2" -verify-diagnostics | FileCheck %s

// Every dynamic I/O dimension is named; the specializations are recorded.
// CHECK: module attributes {qeff.specializations = [{name = "Prefill", symbols = {batch_size = "2", ctx_len = "16", seq_len = "4"}}, {name = "Decode", symbols = {batch_size = "2", ctx_len = "16", seq_len = "1"}}]}
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                   %pk: tensor<?x2x16x8xf32> {qeff.name = "past_key.0", qeff.dims = ["batch_size", "", "ctx_len", ""]})
    -> (tensor<?x2x16x8xf32> {qeff.name = "past_key.0_RetainedState", qeff.dims = ["batch_size", "", "ctx_len", ""]}) {
  return %pk : tensor<?x2x16x8xf32>
}

// -----

// A dynamic dimension without a symbol cannot be specialized.
// CHECK-NOT: qeff.specializations
func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", ""]}) {
  // expected-error @-1 {{input 'input_ids' dimension 1 is dynamic but has no specialization symbol}}
  return
}

// -----

// A symbol no specialization binds.
func.func @forward(%pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0", qeff.dims = ["batch_size", "", "past_seq_len", ""]}) {
  // expected-error @-1 {{input 'past_key.0' dimension 2 is named 'past_seq_len', which no specialization binds (batch_size, seq_len, ctx_len)}}
  return
}

// -----

// The cache must hold ctx-len slots.
func.func @forward(%pk: tensor<?x2x8x8xf32> {qeff.name = "past_key.0", qeff.dims = ["batch_size", "", "ctx_len", ""]}) {
  // expected-error @-1 {{input 'past_key.0' holds 8 cache slots but ctx-len is 16}}
  return
}

// -----

// Outputs are checked too.
// expected-error @+1 {{output 'logits' dimension 1 is dynamic but has no specialization symbol}}
func.func @forward(%x: tensor<1x?x4xf32> {qeff.name = "x", qeff.dims = ["", "seq_len", ""]}) -> (tensor<1x?x4xf32> {qeff.name = "logits"}) {
  return %x : tensor<1x?x4xf32>
}
