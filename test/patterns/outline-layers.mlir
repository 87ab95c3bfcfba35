// RUN: qeff-opt %s -split-input-file -qeff-outline-layers -verify-diagnostics | FileCheck %s
// RUN: qeff-opt %s -split-input-file -qeff-outline-layers=strict=false | FileCheck %s --check-prefix=LAX

// Three layers of the same structure (their weights and caches differ) and
// a layer-invariant value (the mask, from positions, scoped in layer 0 as
// CSE leaves it): one function; each layer a call named after it, where its
// last op stood; the mask stays in the caller and is passed in; constants
// are cloned into the function.
// CHECK: module attributes {qeff.outlined_layers = 1 : i64}
// CHECK-LABEL: func.func private @model_layers_kind0(
// CHECK-SAME: %[[H:[^:]*]]: tensor<2x8xf32>, %[[W:[^:]*]]: tensor<8x8xf32>, %[[PK:[^:]*]]: tensor<2x8xf32>, %[[M:[^:]*]]: tensor<2x8xf32>)
// CHECK-SAME: -> (tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK: %[[A:.*]] = onnx.MatMul %[[H]], %[[W]]
// CHECK: %[[C:.*]] = onnx.Constant dense<5.000000e-01> : tensor<f32>
// CHECK: %[[S:.*]] = onnx.Mul %[[A]], %[[C]]
// CHECK: %[[K:.*]] = onnx.Add %[[PK]], %[[S]]
// CHECK: %[[R:.*]] = onnx.Add %[[H]], %[[K]]
// CHECK: %[[O:.*]] = onnx.Add %[[R]], %[[M]]
// CHECK: return %[[K]], %[[O]]
// CHECK-LABEL: func.func @forward(
// CHECK: %[[MASK:.*]] = onnx.Add %arg1, %arg1
// CHECK: %[[L0:.*]]:2 = call @model_layers_kind0(%{{.*}}, %{{.*}}, %arg2, %[[MASK]])
// CHECK: %[[L1:.*]]:2 = call @model_layers_kind0(%[[L0]]#1, %{{.*}}, %arg3, %[[MASK]])
// CHECK: %[[L2:.*]]:2 = call @model_layers_kind0(%[[L1]]#1, %{{.*}}, %arg4, %[[MASK]])
// CHECK-NOT: onnx.MatMul
// CHECK: return %[[L2]]#1, %[[L0]]#0, %[[L1]]#0, %[[L2]]#0
module {
  func.func @forward(%x: tensor<2x8xf32>, %pos: tensor<2x8xf32>,
                     %pk0: tensor<2x8xf32> {qeff.name = "past_key.0"},
                     %pk1: tensor<2x8xf32> {qeff.name = "past_key.1"},
                     %pk2: tensor<2x8xf32> {qeff.name = "past_key.2"})
      -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
    %we = qeff.weight "embed" : f32 -> tensor<8x8xf32>
    %h0 = onnx.MatMul %x, %we : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("model.embed_tokens")
    %c = onnx.Constant dense<5.000000e-01> : tensor<f32>
    %mask = onnx.Add %pos, %pos : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("model.layers.0.self_attn")
    %w0 = qeff.weight "model.layers.0.w" : f32 -> tensor<8x8xf32>
    %a0 = onnx.MatMul %h0, %w0 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("model.layers.0.mlp")
    %s0 = onnx.Mul %a0, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> loc("model.layers.0.mlp")
    %k0 = onnx.Add %pk0, %s0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("model.layers.0.self_attn")
    %r0 = onnx.Add %h0, %k0 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("model.layers.0")
    %h1 = onnx.Add %r0, %mask : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("model.layers.0")
    %w1 = qeff.weight "model.layers.1.w" : f32 -> tensor<8x8xf32>
    %a1 = onnx.MatMul %h1, %w1 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("model.layers.1.mlp")
    %s1 = onnx.Mul %a1, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> loc("model.layers.1.mlp")
    %k1 = onnx.Add %pk1, %s1 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("model.layers.1.self_attn")
    %r1 = onnx.Add %h1, %k1 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("model.layers.1")
    %h2 = onnx.Add %r1, %mask : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("model.layers.1")
    %w2 = qeff.weight "model.layers.2.w" : f32 -> tensor<8x8xf32>
    %a2 = onnx.MatMul %h2, %w2 : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32> loc("model.layers.2.mlp")
    %s2 = onnx.Mul %a2, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32> loc("model.layers.2.mlp")
    %k2 = onnx.Add %pk2, %s2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("model.layers.2.self_attn")
    %r2 = onnx.Add %h2, %k2 : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("model.layers.2")
    %h3 = onnx.Add %r2, %mask : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32> loc("model.layers.2")
    return %h3, %k0, %k1, %k2 : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
  }
}

// -----

// Two kinds: layer 1 multiplies where layers 0 and 2 add. Each kind is one
// function; layer 2 calls the first.
// CHECK: module attributes {qeff.outlined_layers = 2 : i64}
// CHECK: func.func private @transformer_h_kind0(
// CHECK: onnx.Add
// CHECK: func.func private @transformer_h_kind1(
// CHECK: onnx.Mul
// CHECK-LABEL: func.func @forward(
// CHECK: call @transformer_h_kind0(
// CHECK: call @transformer_h_kind1(
// CHECK: call @transformer_h_kind0(
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    %w0 = qeff.weight "w0" : f32 -> tensor<4xf32>
    %w1 = qeff.weight "w1" : f32 -> tensor<4xf32>
    %w2 = qeff.weight "w2" : f32 -> tensor<4xf32>
    %h1 = onnx.Add %x, %w0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("transformer.h.0.mlp")
    %h2 = onnx.Mul %h1, %w1 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("transformer.h.1.mlp")
    %h3 = onnx.Add %h2, %w2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("transformer.h.2.mlp")
    return %h3 : tensor<4xf32>
  }
}

// -----

// No decoder layer: strict refuses, otherwise unchanged.
// expected-error @+1 {{qeff-outline-layers: no decoder layers found (no op scope of the form <prefix>.<index>.<...>)}}
func.func @no_layers(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = qeff.weight "w" : f32 -> tensor<4xf32>
  %y = onnx.Add %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("lm_head")
  return %y : tensor<4xf32>
}
// LAX-LABEL: func.func @no_layers(
// LAX-NEXT: qeff.weight "w"
// LAX-NEXT: onnx.Add
// LAX-NOT: call

// -----

// A layer's output used before the layer ends (by an op of no layer):
// it cannot be cut out.
// expected-error @+1 {{qeff-outline-layers: layer 0 is interleaved with the ops that use its outputs}}
func.func @forward(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %w0 = qeff.weight "w0" : f32 -> tensor<4xf32>
  %a = onnx.Add %x, %w0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("model.layers.0.a")
  // expected-note @+1 {{'onnx.Neg' uses an output of layer 0 before the layer ends}}
  %out = onnx.Neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %b = onnx.Mul %a, %w0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("model.layers.0.b")
  return %b, %out : tensor<4xf32>, tensor<4xf32>
}
