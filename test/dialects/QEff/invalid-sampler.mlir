// RUN: qeff-opt %s -split-input-file -verify-diagnostics

// The on-device sampling ops (QEffSamplerOps.td), one case per message.

func.func @mask_rank(%m: tensor<32xi1>, %ids: tensor<2x3xi64>) {
  // expected-error @+1 {{mask must be rank 2 ([rows, vocab]), got rank 1}}
  %r:2 = qeff.token_mask_update %m, %ids, %ids : (tensor<32xi1>, tensor<2x3xi64>, tensor<2x3xi64>) -> (tensor<32xi1>, tensor<2x32xi1>)
  return
}

// -----

func.func @mask_result(%m: tensor<2x32xi1>, %ids: tensor<2x3xi64>) {
  // expected-error @+1 {{result type 'tensor<2x16xi1>' must match the mask type 'tensor<2x32xi1>'}}
  %r:2 = qeff.token_mask_update %m, %ids, %ids : (tensor<2x32xi1>, tensor<2x3xi64>, tensor<2x3xi64>) -> (tensor<2x16xi1>, tensor<2x32xi1>)
  return
}

// -----

func.func @mask_positions(%m: tensor<2x32xi1>, %ids: tensor<2x3xi64>, %pos: tensor<2x4xi64>) {
  // expected-error @+1 {{positions dimension 1 is 4 but [batch, seq] as ids requires 3}}
  %r:2 = qeff.token_mask_update %m, %ids, %pos : (tensor<2x32xi1>, tensor<2x3xi64>, tensor<2x4xi64>) -> (tensor<2x32xi1>, tensor<2x32xi1>)
  return
}

// -----

func.func @mask_vocab(%m: tensor<2x?xi1>, %ids: tensor<2x3xi64>) {
  // expected-error @+1 {{mask vocabulary dimension must be static}}
  %r:2 = qeff.token_mask_update %m, %ids, %ids : (tensor<2x?xi1>, tensor<2x3xi64>, tensor<2x3xi64>) -> (tensor<2x?xi1>, tensor<2x32xi1>)
  return
}

// -----

func.func @mask_rows(%m: tensor<4x32xi1>, %ids: tensor<2x3xi64>, %bi: tensor<2x1xi64>) {
  // expected-error @+1 {{rows dimension 0 is 4 but [batch, vocab] requires 2}}
  %r:2 = qeff.token_mask_update %m, %ids, %ids, %bi : (tensor<4x32xi1>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x1xi64>) -> (tensor<4x32xi1>, tensor<4x32xi1>)
  return
}

// -----

func.func @mask_batch_index(%m: tensor<4x32xi1>, %ids: tensor<2x3xi64>, %bi: tensor<3x1xi64>) {
  // expected-error @+1 {{batch_index dimension 0 is 3 but [batch, 1] requires 2}}
  %r:2 = qeff.token_mask_update %m, %ids, %ids, %bi : (tensor<4x32xi1>, tensor<2x3xi64>, tensor<2x3xi64>, tensor<3x1xi64>) -> (tensor<4x32xi1>, tensor<2x32xi1>)
  return
}

// -----

// Without batch_index the mask has one row per batch row.
func.func @mask_no_batch_index(%m: tensor<4x32xi1>, %ids: tensor<2x3xi64>) {
  // expected-error @+1 {{mask dimension 0 is 4 but [batch, vocab] without batch_index requires 2}}
  %r:2 = qeff.token_mask_update %m, %ids, %ids : (tensor<4x32xi1>, tensor<2x3xi64>, tensor<2x3xi64>) -> (tensor<4x32xi1>, tensor<2x32xi1>)
  return
}

// -----

func.func @sample_logits(%l: tensor<2x3x32xf32>, %m: tensor<2x32xi1>, %f: tensor<2x1xf32>, %k: tensor<2x1xi64>, %u: tensor<2x8xf32>) {
  // expected-error @+1 {{logits dimension 1 is 3 but [batch, 1, vocab] requires 1}}
  %t = qeff.sample %l, %m, %m, %f, %f, %f, %k, %f, %f, %u {max_top_k_ids = 8 : i64} : (tensor<2x3x32xf32>, tensor<2x32xi1>, tensor<2x32xi1>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xi64>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x8xf32>) -> tensor<2x1xi64>
  return
}

// -----

func.func @sample_vocab(%l: tensor<2x1x?xf32>, %m: tensor<2x32xi1>, %f: tensor<2x1xf32>, %k: tensor<2x1xi64>, %u: tensor<2x8xf32>) {
  // expected-error @+1 {{logits vocabulary dimension must be static}}
  %t = qeff.sample %l, %m, %m, %f, %f, %f, %k, %f, %f, %u {max_top_k_ids = 8 : i64} : (tensor<2x1x?xf32>, tensor<2x32xi1>, tensor<2x32xi1>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xi64>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x8xf32>) -> tensor<2x1xi64>
  return
}

// -----

func.func @sample_top_k_ids(%l: tensor<2x1x32xf32>, %m: tensor<2x32xi1>, %f: tensor<2x1xf32>, %k: tensor<2x1xi64>, %u: tensor<2x33xf32>) {
  // expected-error @+1 {{max_top_k_ids must be in [1, vocab = 32], got 33}}
  %t = qeff.sample %l, %m, %m, %f, %f, %f, %k, %f, %f, %u {max_top_k_ids = 33 : i64} : (tensor<2x1x32xf32>, tensor<2x32xi1>, tensor<2x32xi1>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xi64>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x33xf32>) -> tensor<2x1xi64>
  return
}

// -----

func.func @sample_mask(%l: tensor<2x1x32xf32>, %m: tensor<2x16xi1>, %f: tensor<2x1xf32>, %k: tensor<2x1xi64>, %u: tensor<2x8xf32>) {
  // expected-error @+1 {{repetition_mask dimension 1 is 16 but [batch, vocab] requires 32}}
  %t = qeff.sample %l, %m, %m, %f, %f, %f, %k, %f, %f, %u {max_top_k_ids = 8 : i64} : (tensor<2x1x32xf32>, tensor<2x16xi1>, tensor<2x16xi1>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xi64>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x8xf32>) -> tensor<2x1xi64>
  return
}

// -----

func.func @sample_param(%l: tensor<2x1x32xf32>, %m: tensor<2x32xi1>, %f: tensor<2x1xf32>, %t3: tensor<3x1xf32>, %k: tensor<2x1xi64>, %u: tensor<2x8xf32>) {
  // expected-error @+1 {{temperatures dimension 0 is 3 but [batch, 1] requires 2}}
  %t = qeff.sample %l, %m, %m, %f, %f, %t3, %k, %f, %f, %u {max_top_k_ids = 8 : i64} : (tensor<2x1x32xf32>, tensor<2x32xi1>, tensor<2x32xi1>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<3x1xf32>, tensor<2x1xi64>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x8xf32>) -> tensor<2x1xi64>
  return
}

// -----

func.func @sample_uniforms(%l: tensor<2x1x32xf32>, %m: tensor<2x32xi1>, %f: tensor<2x1xf32>, %k: tensor<2x1xi64>, %u: tensor<2x4xf32>) {
  // expected-error @+1 {{random_numbers dimension 1 is 4 but [batch, max_top_k_ids] requires 8}}
  %t = qeff.sample %l, %m, %m, %f, %f, %f, %k, %f, %f, %u {max_top_k_ids = 8 : i64} : (tensor<2x1x32xf32>, tensor<2x32xi1>, tensor<2x32xi1>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xi64>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x1xi64>
  return
}

// -----

func.func @sample_result(%l: tensor<2x1x32xf32>, %m: tensor<2x32xi1>, %f: tensor<2x1xf32>, %k: tensor<2x1xi64>, %u: tensor<2x8xf32>) {
  // expected-error @+1 {{result dimension 1 is 2 but [batch, 1] requires 1}}
  %t = qeff.sample %l, %m, %m, %f, %f, %f, %k, %f, %f, %u {max_top_k_ids = 8 : i64} : (tensor<2x1x32xf32>, tensor<2x32xi1>, tensor<2x32xi1>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xi64>, tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x8xf32>) -> tensor<2x2xi64>
  return
}
