// The pass needs ctx-len.
// RUN: not qeff-opt %s -qeff-kv-retained-state 2>&1 | FileCheck %s
// CHECK: error: qeff-kv-retained-state needs a positive ctx-len option
module {}
