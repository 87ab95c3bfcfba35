// RUN: qeff-opt %s -qeff-fp16-clamp=fp32-scopes=model.layers.0.mlp | FileCheck %s --check-prefix=ISLAND
// RUN: printf '# fp32 islands\n\n  model.layers.0.mlp   # the MLP of layer 0\n' > %t.scopes
// RUN: qeff-opt %s -qeff-fp16-clamp=fp32-scopes-file=%t.scopes | FileCheck %s --check-prefix=ISLAND
// RUN: qeff-opt %s -qeff-fp16-clamp='fp32-scopes=model.layers.*.mlp.down_proj,model.layers.0.mlp.gate_proj' | FileCheck %s --check-prefix=GLOB
// The device pipeline passes its options through.
// RUN: qeff-opt %s --qeff-device-pipeline='ctx-len=16 prefill-seq-len=8 fp32-scopes=model.layers.0.mlp' | FileCheck %s --check-prefix=PIPELINE

// An fp32 island on the MLP of layer 0 (the fp16_overflow golden's fix: its
// product reaches 177408 in fp32). Every op whose scope is the MLP or inside
// it is marked; the product stays inside the island (producer and user
// fp32) and is not clamped; the MLP output leaves the island through a clamp
// marked fp32 too, so fp16 only ever sees a finite value. The residual add
// (scope model.layers.0) is outside.
// ISLAND: module attributes {qeff.fp32_scopes = ["model.layers.0.mlp"]}
// ISLAND-LABEL: func.func @forward(
// ISLAND: qeff.weight "model.layers.0.mlp.gate_proj.weight" : f32 -> tensor<128x64xf32> {qeff.precision = "fp32"}
// ISLAND: %[[G:.*]] = qeff.linear {{.*}} {qeff.precision = "fp32"}
// ISLAND: %[[U:.*]] = qeff.linear {{.*}} {qeff.precision = "fp32"}
// ISLAND: %[[P:.*]] = qeff.gated_activation %[[G]], %[[U]] {kind = #qeff<activation silu>, qeff.precision = "fp32"}
// ISLAND-NOT: qeff.fp16_clamp %[[P]]
// ISLAND: %[[D:.*]] = qeff.linear %[[P]], %{{.*}} {qeff.precision = "fp32"}
// ISLAND-NEXT: %[[DC:.*]] = qeff.fp16_clamp %[[D]] {qeff.precision = "fp32"}
// ISLAND-NEXT: %[[H:.*]] = qeff.add %{{.*}}, %[[DC]] :
// ISLAND-NEXT: %[[HC:.*]] = qeff.fp16_clamp %[[H]] :
// ISLAND-NEXT: return %[[HC]]

// Globs and several patterns: down_proj of every layer, and gate_proj (with
// it the product, which importers place in gate_proj's scope); up_proj is
// not marked, so the product's inputs cross from fp16 into the island.
// GLOB: module attributes {qeff.fp32_scopes = ["model.layers.*.mlp.down_proj", "model.layers.0.mlp.gate_proj"]}
// GLOB-LABEL: func.func @forward(
// GLOB: %[[G:.*]] = qeff.linear {{.*}} {qeff.precision = "fp32"}
// GLOB: %[[U:.*]] = qeff.linear %{{[^{]*}}
// GLOB: %[[P:.*]] = qeff.gated_activation %[[G]], %[[U]] {kind = #qeff<activation silu>, qeff.precision = "fp32"}
// GLOB-NOT: qeff.fp16_clamp %[[P]]
// GLOB: qeff.linear %[[P]], %{{.*}} {qeff.precision = "fp32"}

// PIPELINE: module attributes {qeff.fp32_scopes = ["model.layers.0.mlp"]
// PIPELINE: qeff.gated_activation {{.*}}qeff.precision = "fp32"
// PIPELINE: qeff.fp16_clamp {{.*}}qeff.precision = "fp32"
func.func @forward(%x: tensor<?x?x64xf32> {qeff.name = "hidden", qeff.dims = ["batch_size", "seq_len", ""]})
    -> (tensor<?x?x64xf32> {qeff.name = "out", qeff.dims = ["batch_size", "seq_len", ""]}) {
  %wg = qeff.weight "model.layers.0.mlp.gate_proj.weight" : f32 -> tensor<128x64xf32> loc("model.layers.0.mlp.gate_proj.weight")
  %wu = qeff.weight "model.layers.0.mlp.up_proj.weight" : f32 -> tensor<128x64xf32> loc("model.layers.0.mlp.up_proj.weight")
  %wd = qeff.weight "model.layers.0.mlp.down_proj.weight" : f32 -> tensor<64x128xf32> loc("model.layers.0.mlp.down_proj.weight")
  %g = qeff.linear %x, %wg : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32> loc("model.layers.0.mlp.gate_proj")
  %u = qeff.linear %x, %wu : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32> loc("model.layers.0.mlp.up_proj")
  %p = qeff.gated_activation %g, %u {kind = #qeff<activation silu>} : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32> loc("model.layers.0.mlp.gate_proj")
  %d = qeff.linear %p, %wd : (tensor<?x?x128xf32>, tensor<64x128xf32>) -> tensor<?x?x64xf32> loc("model.layers.0.mlp.down_proj")
  %h = qeff.add %x, %d : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32> loc("model.layers.0")
  return %h : tensor<?x?x64xf32>
}
