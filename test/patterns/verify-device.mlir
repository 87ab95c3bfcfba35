// RUN: qeff-opt %s -split-input-file -qeff-verify-device -verify-diagnostics

// A valid device signature passes.
module attributes {qeff.specializations = [
    {name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", seq_len = "4"}},
    {name = "Decode", symbols = {batch_size = "1", ctx_len = "16", seq_len = "1"}}]} {
  func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                     %pk: tensor<?x2x16x8xf32> {qeff.name = "past_key.0", qeff.dims = ["batch_size", "", "ctx_len", ""]})
      -> (tensor<?x2x16x8xf32> {qeff.name = "past_key.0_RetainedState", qeff.dims = ["batch_size", "", "ctx_len", ""]}) {
    return %pk : tensor<?x2x16x8xf32>
  }
}

// -----

// A retained-state input without its output.
module attributes {qeff.specializations = [{name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", seq_len = "4"}}]} {
  func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]},
                     // expected-error @+1 {{retained-state input 'past_value.0' has no output 'past_value.0_RetainedState'}}
                     %pv: tensor<?x2x16x8xf32> {qeff.name = "past_value.0", qeff.dims = ["batch_size", "", "ctx_len", ""]})
      -> (tensor<?x?xi64> {qeff.name = "logits", qeff.dims = ["batch_size", "seq_len"]}) {
    return %ids : tensor<?x?xi64>
  }
}

// -----

// Input and output of a retained state differ in shape.
module attributes {qeff.specializations = [{name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", seq_len = "4"}}]} {
  // expected-error @+1 {{retained-state input 'past_key.0' is 'tensor<?x2x16x8xf32>' but its output 'past_key.0_RetainedState' is 'tensor<?x2x16x4xf32>'}}
  func.func @forward(%pk: tensor<?x2x16x8xf32> {qeff.name = "past_key.0", qeff.dims = ["batch_size", "", "ctx_len", ""]},
                     %x: tensor<?x2x16x4xf32>)
      -> (tensor<?x2x16x4xf32> {qeff.name = "past_key.0_RetainedState", qeff.dims = ["batch_size", "", "ctx_len", ""]}) {
    return %x : tensor<?x2x16x4xf32>
  }
}

// -----

// A retained-state output without its input.
module attributes {qeff.specializations = [{name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", seq_len = "4"}}]} {
  // expected-error @+1 {{output 'past_key.3_RetainedState' has no retained-state input 'past_key.3'}}
  func.func @forward(%x: tensor<1x2x16x8xf32> {qeff.name = "x"})
      -> (tensor<1x2x16x8xf32> {qeff.name = "past_key.3_RetainedState"}) {
    return %x : tensor<1x2x16x8xf32>
  }
}

// -----

// A specialization that leaves a symbol unbound.
// expected-error @+1 {{specialization 'Decode' does not bind symbol 'ctx_len'}}
module attributes {qeff.specializations = [
    {name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", seq_len = "4"}},
    {name = "Decode", symbols = {batch_size = "1", seq_len = "1"}}]} {
  func.func @forward(%pk: tensor<?x2x16x8xf32> {qeff.name = "past_key.0", qeff.dims = ["batch_size", "", "ctx_len", ""]},
                     %ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]})
      -> (tensor<?x2x16x8xf32> {qeff.name = "past_key.0_RetainedState", qeff.dims = ["batch_size", "", "ctx_len", ""]}) {
    return %pk : tensor<?x2x16x8xf32>
  }
}

// -----

// Two specializations the runtime cannot tell apart.
// expected-error @+1 {{specializations 'Prefill' and 'Decode' give every input the same shape; the runtime could not tell them apart}}
module attributes {qeff.specializations = [
    {name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", seq_len = "1"}},
    {name = "Decode", symbols = {batch_size = "1", ctx_len = "16", seq_len = "1"}}]} {
  func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]}) {
    return
  }
}

// -----

// A binding that is not a positive integer; seq_len beyond the cache.
// expected-error @+1 {{specialization 'Prefill' binds 'seq_len' to something other than a positive integer}}
module attributes {qeff.specializations = [{name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", seq_len = "many"}}]} {
  func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]}) {
    return
  }
}

// -----

// expected-error @+1 {{specialization 'Prefill' has seq_len 32 > ctx_len 16}}
module attributes {qeff.specializations = [{name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", seq_len = "32"}}]} {
  func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]}) {
    return
  }
}

// -----

// expected-error @+1 {{the module has no qeff.specializations (run qeff-fixed-shapes)}}
module {
  func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]}) {
    return
  }
}

// -----

// A shape computation left in the device graph.
module attributes {qeff.specializations = [{name = "Prefill", symbols = {batch_size = "1", ctx_len = "16", seq_len = "4"}}]} {
  func.func @forward(%ids: tensor<?x?xi64> {qeff.name = "input_ids", qeff.dims = ["batch_size", "seq_len"]}) {
    // expected-error @+1 {{the device graph computes a shape at run time; every shape must be fixed by the specializations}}
    %s = onnx.Shape %ids : (tensor<?x?xi64>) -> tensor<2xi64>
    return
  }
}
