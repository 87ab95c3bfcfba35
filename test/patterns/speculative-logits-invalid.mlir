// RUN: qeff-opt %s -qeff-speculative-logits -verify-diagnostics

// Refused: logits that do not come from the last token's LM head (the pass
// runs after qeff-kv-retained-state).
// expected-error @+1 {{@no_select: the logits do not come from the last token's LM head (qeff.last_token_select); run qeff-kv-retained-state first}}
func.func @no_select(%h: tensor<1x4x32xf32>, %pos: tensor<1x4xi64> {qeff.name = "position_ids"})
    -> (tensor<1x4x32xf32> {qeff.name = "logits"}) {
  return %h : tensor<1x4x32xf32>
}
