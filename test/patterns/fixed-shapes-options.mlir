// RUN: not qeff-opt %s -qeff-fixed-shapes="ctx-len=8 prefill-seq-len=32" 2>&1 | FileCheck %s --check-prefix=SHORT
// RUN: not qeff-opt %s -qeff-fixed-shapes 2>&1 | FileCheck %s --check-prefix=MISSING
// SHORT: error: ctx-len (8) must be at least prefill-seq-len (32)
// MISSING: error: qeff-fixed-shapes needs positive ctx-len, prefill-seq-len and batch-size
module {}
