// RUN: qeff-opt %s -split-input-file -qeff-on-device-sampling=max-top-k-ids=4 -verify-diagnostics

// A speculative-decoding target keeps K + 1 rows of logits: refused.
// expected-error @+1 {{@target: on-device sampling of a speculative-decoding target (num_logits_to_keep) is not supported}}
func.func @target(%ids: tensor<?x?xi64> {qeff.name = "input_ids"}, %pos: tensor<?x?xi64> {qeff.name = "position_ids"},
                  %keep: tensor<?x1xi64> {qeff.name = "num_logits_to_keep"}, %l: tensor<?x?x32xf32>)
    -> (tensor<?x?x32xf32> {qeff.name = "logits"}) {
  return %l : tensor<?x?x32xf32>
}

// -----

// expected-error @+1 {{@nologits: has no logits result}}
func.func @nologits(%ids: tensor<?x?xi64> {qeff.name = "input_ids"}, %pos: tensor<?x?xi64> {qeff.name = "position_ids"},
                    %l: tensor<?x1x32xf32>) -> (tensor<?x1x32xf32> {qeff.name = "hidden"}) {
  return %l : tensor<?x1x32xf32>
}

// -----

// The HF-semantics logits of every token: run qeff-kv-retained-state first.
// expected-error @+1 {{@allpositions: the logits must be [batch, 1, vocab] with a static vocabulary}}
func.func @allpositions(%ids: tensor<?x?xi64> {qeff.name = "input_ids"}, %pos: tensor<?x?xi64> {qeff.name = "position_ids"},
                        %l: tensor<?x?x32xf32>) -> (tensor<?x?x32xf32> {qeff.name = "logits"}) {
  return %l : tensor<?x?x32xf32>
}

// -----

// expected-error @+1 {{@noids: on-device sampling needs the input_ids and position_ids inputs}}
func.func @noids(%pos: tensor<?x?xi64> {qeff.name = "position_ids"}, %l: tensor<?x1x32xf32>)
    -> (tensor<?x1x32xf32> {qeff.name = "logits"}) {
  return %l : tensor<?x1x32xf32>
}

// -----

// expected-error @+1 {{@twice: already has a past_repetition_penalty_buffer input}}
func.func @twice(%ids: tensor<?x?xi64> {qeff.name = "input_ids"}, %pos: tensor<?x?xi64> {qeff.name = "position_ids"},
                 %b: tensor<?x32xi1> {qeff.name = "past_repetition_penalty_buffer"}, %l: tensor<?x1x32xf32>)
    -> (tensor<?x1x32xf32> {qeff.name = "logits"}) {
  return %l : tensor<?x1x32xf32>
}
