//===- Passes.td - qeff device rewrites --------------------*- tablegen -*-===//
//
// Part of qeff. The passes that turn the imported model (HF semantics) into
// the form the AI 100 runs (device semantics). The rewrites themselves are
// DRR patterns in the topic .td files; the passes add what patterns cannot
// express: function signatures and the types that follow from them.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_PATTERNS_PASSES_TD
#define QEFF_PATTERNS_PASSES_TD

include "mlir/Pass/PassBase.td"

def QEffKVRetainedState : Pass<"qeff-kv-retained-state", "mlir::ModuleOp"> {
  let summary = "Replace the HF concat cache by a fixed ctx_len retained cache";
  let description = [{
    Rewrites `@forward` from HF cache semantics (`present = concat(past,
    new)`, dynamic length) to the AI 100 retained-state contract:

    * inputs `past_key.{i}` / `past_value.{i}` become
      `[batch, kv_heads, ctx_len, head_dim]`;
    * each `qeff.kv_concat` of a cache input becomes `qeff.ctx_scatter` of the
      new keys/values at `position_ids` (padding, position -1, follows the
      rule in the `qeff.ctx_scatter` docs);
    * causal attention over the cache takes its mask from
      `qeff.causal_mask(position_ids)` (slot j visible to position p iff
      j <= p, and j > p - w with a sliding window);
    * the LM head runs on the last valid token of each row only
      (`qeff.last_token_select`): `logits` is `[batch, 1, vocab]`;
    * outputs `present_key.{i}` become `past_key.{i}_RetainedState`, of the
      cache's type.

    Before:
    ```mlir
    %k = qeff.kv_concat %past_key0, %new_k {layout = #qeff<kv_layout bhsd>}
        : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
    %a = qeff.attention %q, %k, %v {causal = true, ...}
    ```
    After (`ctx-len=128`):
    ```mlir
    %k = qeff.ctx_scatter %past_key0, %position_ids, %new_k
        : (tensor<?x2x128x16xf32>, tensor<?x?xi64>, tensor<?x2x?x16xf32>)
        -> tensor<?x2x128x16xf32>
    %m = qeff.causal_mask %position_ids {ctx_len = 128 : i64}
    %a = qeff.attention %q, %k, %v, %m {...}
    ```
    Cache operands that are not `@forward` arguments in the bhsd layout are
    left alone (run `qeff-normalize-kv-layout` first for other layouts).
  }];
  let options = [
    Option<"ctxLen", "ctx-len", "int64_t", /*default=*/"0",
           "Number of cache slots per sequence (required, > 0)">,
  ];
  let dependentDialects = ["mlir::qeff::QEffDialect"];
}

def QEffFixedShapes : Pass<"qeff-fixed-shapes", "mlir::ModuleOp"> {
  let summary = "Bind every dynamic dimension to a specialization symbol";
  let description = [{
    The AI 100 compiles one graph for a set of named specializations: every
    dimension that is not a literal is a symbol (`batch_size`, `seq_len`,
    `ctx_len`) bound by each specialization. This pass checks that every
    dynamic dimension of every `@forward` input and output is named by one
    of those symbols (`qeff.dims`), that the cache inputs hold `ctx-len`
    slots and that `ctx-len >= prefill-seq-len`, and records the
    specializations on the module (`qeff.specializations`):

    ```mlir
    module attributes {qeff.specializations = [
      {name = "Prefill", symbols = {batch_size = "1", ctx_len = "128", seq_len = "32"}},
      {name = "Decode", symbols = {batch_size = "1", ctx_len = "128", seq_len = "1"}}]}
    ```
    The graph itself computes no shapes: nothing in the device form reads a
    tensor's shape at run time (the lowering builds index grids from
    constants and positions; the driver rejects an `onnx.Shape` in the
    device graph).
  }];
  let options = [
    Option<"batchSize", "batch-size", "int64_t", /*default=*/"1",
           "batch_size of every specialization">,
    Option<"prefillSeqLen", "prefill-seq-len", "int64_t", /*default=*/"32",
           "seq_len of the Prefill specialization">,
    Option<"ctxLen", "ctx-len", "int64_t", /*default=*/"0",
           "ctx_len of every specialization (required)">,
  ];
}

def QEffVerifyDevice : Pass<"qeff-verify-device", "mlir::ModuleOp"> {
  let summary = "Check the device contract before compiling";
  let description = [{
    Run by `qeff compile` on the device IR (qeff or onnx dialect) before any
    file is written. It rejects, naming the offending input or output:

    * a retained-state input (`past_*`) without exactly one
      `<name>_RetainedState` output, or one of another shape or type;
    * an output `*_RetainedState` without its input;
    * a specialization that does not bind every symbol the I/O uses, or that
      binds a symbol to something other than a positive integer;
    * two specializations the runtime could not tell apart by input shapes;
    * a specialization with `seq_len` larger than `ctx_len`;
    * a shape computation (`onnx.Shape`) left in the device graph.
  }];
}

#endif // QEFF_PATTERNS_PASSES_TD
