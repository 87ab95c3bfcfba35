// RUN: qeff-opt %s -canonicalize -split-input-file | FileCheck %s

// The canonicalization patterns of the qeff dialect (QEffCanonicalize.td).

// A clamp of a clamp: one clamp to the intersection.
// CHECK-LABEL: func.func @nested_clamps
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[C:.*]] = qeff.clamp %[[X]] {max = 8.000000e+00 : f64, min = -2.000000e+00 : f64}
// CHECK-NEXT: return %[[C]]
func.func @nested_clamps(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %a = qeff.clamp %x {min = -8.0 : f64, max = 8.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = qeff.clamp %a {min = -2.0 : f64, max = 16.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}

// -----

// Disjoint ranges (the result would be a constant): left alone.
// CHECK-LABEL: func.func @disjoint_clamps
// CHECK: %[[A:.*]] = qeff.clamp %{{.*}} {max = 1.000000e+00 : f64, min = -1.000000e+00 : f64}
// CHECK: qeff.clamp %[[A]] {max = 3.000000e+00 : f64, min = 2.000000e+00 : f64}
func.func @disjoint_clamps(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %a = qeff.clamp %x {min = -1.0 : f64, max = 1.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = qeff.clamp %a {min = 2.0 : f64, max = 3.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}

// -----

// A clamp inside an fp32 island (precision mark) is not merged with its
// neighbour: the merge would drop or spread the mark.
// CHECK-LABEL: func.func @marked_clamp
// CHECK: %[[A:.*]] = qeff.clamp %{{.*}} {max = 8.000000e+00 : f64, min = -8.000000e+00 : f64, qeff.precision = "fp32"}
// CHECK: qeff.clamp %[[A]] {max = 1.600000e+01 : f64, min = -2.000000e+00 : f64}
func.func @marked_clamp(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %a = qeff.clamp %x {min = -8.0 : f64, max = 8.0 : f64, qeff.precision = "fp32"} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = qeff.clamp %a {min = -2.0 : f64, max = 16.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}

// -----

// fp16 clamps: the narrower limit wins.
// CHECK-LABEL: func.func @nested_fp16_clamps
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[C:.*]] = qeff.fp16_clamp %[[X]] {limit = 1.000000e+03 : f64}
// CHECK-NEXT: return %[[C]]
func.func @nested_fp16_clamps(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %a = qeff.fp16_clamp %x : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = qeff.fp16_clamp %a {limit = 1000.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}

// -----

// An fp16 clamp after a clamp within its limit does nothing.
// CHECK-LABEL: func.func @fp16_clamp_of_clamp
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK-NEXT: %[[C:.*]] = qeff.clamp %[[X]]
// CHECK-NEXT: return %[[C]]
func.func @fp16_clamp_of_clamp(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %a = qeff.clamp %x {min = -8.0 : f64, max = 8.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = qeff.fp16_clamp %a : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}

// -----

// A clamp wider than the fp16 limit: the fp16 clamp stays.
// CHECK-LABEL: func.func @fp16_clamp_of_wide_clamp
// CHECK: %[[A:.*]] = qeff.clamp
// CHECK: qeff.fp16_clamp %[[A]] {limit = 1.000000e+02 : f64}
func.func @fp16_clamp_of_wide_clamp(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %a = qeff.clamp %x {min = -8.0 : f64, max = 200.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %b = qeff.fp16_clamp %a {limit = 100.0 : f64} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %b : tensor<2x8xf32>
}
