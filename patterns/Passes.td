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

def QEffNormalizeKVLayout : Pass<"qeff-normalize-kv-layout", "mlir::ModuleOp"> {
  let summary = "Normalise every KV cache to the device layout [B, H, S, D]";
  let description = [{
    Importers declare their family's native cache layout on `qeff.kv_concat`
    (`#qeff<kv_layout bshd>` [batch, seq, kv_heads, head_dim], `sbhd`
    [seq, batch, kv_heads, head_dim], `bsd` multi-query [batch, seq,
    head_dim]). The AI 100 contract (docs/device.md) has one layout, `bhsd`.
    For each cache input `past_key.{i}` / `past_value.{i}` of a function
    that some `qeff.kv_concat` extends in another layout, this pass

    * concatenates in bhsd: the update is transposed (`qeff.transpose`) or,
      for `bsd`, given a heads dimension of 1 (`qeff.split_heads`
      `num_heads = 1`), and the concat's users see the native layout through
      the inverse change (`qeff.transpose` / `qeff.merge_heads`);
    * makes the cache input bhsd (its `qeff.dims` follow), so its layout
      change meets the one the rewrite added and both fold away;
    * returns the bhsd concat as the `present_*` output (its type and
      `qeff.dims` follow);
    * folds the transpose / split-merge pairs that now meet, so attention
      reads the bhsd cache directly, and records the native layout on the
      module (`qeff.native_kv_layout`).

    Caches already in bhsd, and concats whose past is not a cache input, are
    left alone. Run before `qeff-kv-retained-state`.

    Before (`bshd`):
    ```mlir
    func.func @forward(..., %pk: tensor<?x?x2x8xf32> {qeff.name = "past_key.0"})
        -> (tensor<?x?x2x8xf32> {qeff.name = "present_key.0"}) {
      %k = qeff.transpose %k4 {permutation = array<i64: 0, 2, 1, 3>}
          : (tensor<?x2x?x8xf32>) -> tensor<?x?x2x8xf32>
      %c = qeff.kv_concat %pk, %k {layout = #qeff<kv_layout bshd>}
          : (tensor<?x?x2x8xf32>, tensor<?x?x2x8xf32>) -> tensor<?x?x2x8xf32>
      %ct = qeff.transpose %c {permutation = array<i64: 0, 2, 1, 3>}
          : (tensor<?x?x2x8xf32>) -> tensor<?x2x?x8xf32>
      %a = qeff.attention %q, %ct, %ct {...}
      return %c : tensor<?x?x2x8xf32>
    }
    ```
    After:
    ```mlir
    func.func @forward(..., %pk: tensor<?x2x?x8xf32> {qeff.name = "past_key.0"})
        -> (tensor<?x2x?x8xf32> {qeff.name = "present_key.0"}) {
      %c = qeff.kv_concat %pk, %k4 {layout = #qeff<kv_layout bhsd>}
          : (tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) -> tensor<?x2x?x8xf32>
      %a = qeff.attention %q, %c, %c {...}
      return %c : tensor<?x2x?x8xf32>
    }
    ```
  }];
  let dependentDialects = ["mlir::qeff::QEffDialect"];
}

def QEffReplicateKVHeads : Pass<"qeff-replicate-kv-heads", "mlir::ModuleOp"> {
  let summary = "Replicate KV heads so that num-devices divides them";
  let description = [{
    With tensor parallelism over `num-devices` N AI 100 SoCs
    (`qeff compile --num-devices N`), qaic-compile splits every attention by
    heads, so its KV heads must be a multiple of N. For each `qeff.attention`
    whose `num_kv_heads` is not, this pass replicates each KV head `r` times,
    `r` the smallest factor that makes `num_kv_heads * r` a multiple of N;
    `num_kv_heads * r` must not exceed `num_heads` and must divide it, else
    the pass fails naming the attention. Heads are repeated in place (head j
    becomes heads j*r .. j*r+r-1, PyTorch's `repeat_interleave`), so the
    query heads of each group read copies of the KV head they read before:
    the function computes the same values.

    The rewrite runs on the HF-semantics form after
    `qeff-normalize-kv-layout` (bhsd caches):

    * the K/V projection (`qeff.linear` with an `out_in` weight, alone or
      fused and cut by `qeff.split`) selects each head's rows r times from
      the one checkpoint tensor: `qeff.weight {rows = ...}` (and the bias
      likewise); the exporter writes the selected rows, nothing is copied in
      the IR;
    * `qeff.split_heads` gets `num_kv_heads * r` heads, and `qeff.rotary`,
      `qeff.layer_norm` (q/k norms: a per-head `[kv_heads, head_dim]` weight
      and bias select each row r times, a `qeff.stack` of per-head tensors
      stacks each r times), `qeff.rms_norm` over head_dim (a shared
      `[head_dim]` weight, kept as it is), `qeff.kv_concat`, the cache
      inputs `past_*` and
      outputs `present_*` carry them;
    * `qeff.attention` gets `num_kv_heads = num_kv_heads * r`;
    * the module records `qeff.kv_head_replication = r`.

    With N dividing every attention's KV heads (N = 1 included), nothing
    changes.

    Before (`num-devices=4`, 2 KV heads of 16):
    ```mlir
    %wk = qeff.weight "k_proj.weight" : f32 -> tensor<32x64xf32>
    %k = qeff.linear %x, %wk : (tensor<?x?x64xf32>, tensor<32x64xf32>) -> tensor<?x?x32xf32>
    %k4 = qeff.split_heads %k {num_heads = 2 : i64} : (tensor<?x?x32xf32>) -> tensor<?x2x?x16xf32>
    %a = qeff.attention %q, %k4, %v4 {num_heads = 4 : i64, num_kv_heads = 2 : i64, ...}
    ```
    After:
    ```mlir
    %wk = qeff.weight "k_proj.weight" : f32 -> tensor<64x64xf32>
        {rows = array<i64: 0, 16, 0, 16, 16, 16, 16, 16>}
    %k = qeff.linear %x, %wk : (tensor<?x?x64xf32>, tensor<64x64xf32>) -> tensor<?x?x64xf32>
    %k4 = qeff.split_heads %k {num_heads = 4 : i64} : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
    %a = qeff.attention %q, %k4, %v4 {num_heads = 4 : i64, num_kv_heads = 4 : i64, ...}
    ```
  }];
  let options = [
    Option<"numDevices", "num-devices", "int64_t", /*default=*/"1",
           "AI 100 SoCs the attention heads are split across">,
  ];
  let dependentDialects = ["mlir::qeff::QEffDialect"];
}

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

    **Continuous batching** (`full-batch-size=N`): the cache keeps its own
    rows (dimension `full_batch_size`), `@forward` gains the input
    `batch_index` `[batch_size, 1]` (after `position_ids`), each row's new
    K/V goes to cache row `batch_index[b, 0]` (`qeff.ctx_scatter` with
    `batch_index`) and attention reads those rows (`qeff.ctx_rows`).
  }];
  let options = [
    Option<"ctxLen", "ctx-len", "int64_t", /*default=*/"0",
           "Number of cache slots per sequence (required, > 0)">,
    Option<"fullBatchSize", "full-batch-size", "int64_t", /*default=*/"0",
           "Continuous batching: the cache rows, addressed by a batch_index "
           "input (0: off)">,
  ];
  let dependentDialects = ["mlir::qeff::QEffDialect"];
}

def QEffSpeculativeLogits : Pass<"qeff-speculative-logits", "mlir::ModuleOp"> {
  let summary = "The speculative-decoding target: logits of the last num_logits_to_keep tokens";
  let description = [{
    After `qeff-kv-retained-state`, the LM head runs on each row's last
    valid token only. A speculative-decoding target verifies `K` proposed
    tokens in one decode step of `K + 1` tokens and needs the logits of all
    of them. This pass gives `@forward` the input `num_logits_to_keep`
    `[num_logits_to_keep, 1]` (int64; QEfficient's TLM input: only its
    length matters, its values are ignored) and makes the selection keep
    that many tokens: `logits` becomes `[batch_size, num_logits_to_keep,
    vocab]`, the tokens ending at each row's last valid one. The Prefill
    specialization binds `num_logits_to_keep` to 1 (the last token, as
    before), each Decode specialization to its `seq_len`
    (`qeff-fixed-shapes num-speculative-tokens=...`).

    Rotaries with sequence-length dependent scaling (`dynamic`, `longrope`)
    get `num_logits_to_keep` as their `keep` operand: in a step of as many
    tokens as logits kept (a decode step) each token takes the frequencies
    of its own position, as the one-token steps of plain decoding do, so
    speculative decoding yields exactly plain decoding's tokens. Other
    rotaries are unchanged.

    Before:
    ```mlir
    %last = qeff.last_token_select %h, %position_ids
        : (tensor<?x?x32xf32>, tensor<?x?xi64>) -> tensor<?x1x32xf32>
    ```
    After:
    ```mlir
    %last = qeff.last_token_select %h, %position_ids, %num_logits_to_keep
        : (tensor<?x?x32xf32>, tensor<?x?xi64>, tensor<?x1xi64>) -> tensor<?x?x32xf32>
    ```
  }];
  let dependentDialects = ["mlir::qeff::QEffDialect"];
}

def QEffOnDeviceSampling : Pass<"qeff-on-device-sampling", "mlir::ModuleOp"> {
  let summary = "Sample the next token on the device: next_tokens instead of logits";
  let description = [{
    QEfficient's on-device sampling (`qaic_config={"include_sampler": True}`,
    `QEfficient/transformers/sampler/sampler.py`): instead of shipping
    `[batch, 1, vocab]` fp32 logits to the host every step, the device
    chooses the token. After `qeff-kv-retained-state`, `@forward` gains
    QEfficient's inputs, in its order:

    | input | shape | dtype |
    |---|---|---|
    | `past_repetition_penalty_buffer` | `[rows, vocab]` | i1, retained |
    | `repetition_penalties` | `[batch_size, 1]` | f32 |
    | `past_presence_penalty_buffer` | `[rows, vocab]` | i1, retained |
    | `presence_penalties` | `[batch_size, 1]` | f32 |
    | `temperatures` | `[batch_size, 1]` | f32 (0: greedy) |
    | `top_ks` | `[batch_size, 1]` | i64 |
    | `top_ps`, `min_ps` | `[batch_size, 1]` | f32 |
    | `random_numbers` | `[batch_size, max-top-k-ids]` | f32 uniforms in (0, 1) |

    `rows` is `batch_size`, or `full_batch_size` with continuous batching
    (the buffers are indexed by `batch_index` as the KV cache is). The
    `logits` result becomes `next_tokens` `[batch_size, 1]` (i64), and the
    two buffers get their `_RetainedState` outputs. The repetition buffer
    records every token the runs feed (the prompt at prefill, each fed
    token at decode); the presence buffer only tokens fed by decode runs
    (one token per row), i.e. the generated ones; a run feeding position 0
    clears the row first (`qeff.token_mask_update`). `qeff.sample` applies
    the penalties, temperature, top-k over the `max-top-k-ids` largest,
    top-p and min-p on that set, and Gumbel-max with the host's uniforms.

    Before:
    ```mlir
    func.func @forward(%input_ids: ..., %position_ids: ..., ...)
        -> (tensor<?x1x32xf32> {qeff.name = "logits"}, ...)
    ```
    After (`max-top-k-ids=4`):
    ```mlir
    %rep, %rep_rows = qeff.token_mask_update %past_rep, %input_ids, %position_ids : ...
    %pres, %pres_rows = qeff.token_mask_update %past_pres, %input_ids, %position_ids {generated_only} : ...
    %next = qeff.sample %logits, %rep_rows, %pres_rows, %rp, %pp, %t, %k, %p, %minp, %u
        {max_top_k_ids = 4 : i64} : ... -> tensor<?x1xi64>
    return %next, ..., %rep, %pres
    ```
    A speculative-decoding target (`num_logits_to_keep`) is refused.
  }];
  let options = [
    Option<"maxTopKIds", "max-top-k-ids", "int64_t", /*default=*/"0",
           "The candidates top-k, top-p, min-p and sampling choose from "
           "(QEfficient's max_top_k_ids; 0: its default 512, or the "
           "vocabulary when smaller)">,
  ];
  let dependentDialects = ["mlir::qeff::QEffDialect"];
}

def QEffRollingKVWindow : Pass<"qeff-rolling-kv-window", "mlir::ModuleOp"> {
  let summary = "Give sliding-window layers a rolling KV buffer of window slots";
  let description = [{
    After `qeff-kv-retained-state` every layer keeps `ctx_len` cache slots,
    and a sliding window is only a mask: a layer with window `w` can never
    read more than `w` of them. This pass gives each such layer a rolling
    buffer instead: `n = w + prefill_seq_len - 1` slots written at
    `position mod n`, plus one slot that takes the padding writes
    (`qeff.ctx_scatter {ring = n}`), and a mask derived from positions
    (`qeff.causal_mask {ring = n}`: slot `j` holds the newest position
    `q = P - ((P - j) mod n)` of the row, `P` its largest position). `n`
    exceeds `w` by `prefill_seq_len - 1` so that the last token of a prefill
    chunk does not overwrite a slot the chunk's first token still reads.
    Layers without a window (the global layers of mixed models) keep
    `ctx_len` slots, and so does a window layer when `n + 1 >= ctx_len`
    (nothing to save). The cache input, its `_RetainedState` output and
    their `qeff.dims` (the slot dimension is now a constant) follow.

    The buffer relies on the positions of a row being written in order from
    0 (chunked prefill, then decode), which is how the device contract runs.

    Before (`ctx_len` 128, window 4, `prefill-seq-len=2`):
    ```mlir
    %k = qeff.ctx_scatter %past_key0, %pos, %new_k
        : (tensor<1x2x128x16xf32>, tensor<1x?xi64>, tensor<1x2x?x16xf32>)
        -> tensor<1x2x128x16xf32>
    %m = qeff.causal_mask %pos {ctx_len = 128 : i64, sliding_window = 4 : i64}
    %a = qeff.attention %q, %k, %v, %m {sliding_window = 4 : i64, ...}
    ```
    After:
    ```mlir
    %k = qeff.ctx_scatter %past_key0, %pos, %new_k {ring = 5 : i64}
        : (tensor<1x2x6x16xf32>, tensor<1x?xi64>, tensor<1x2x?x16xf32>)
        -> tensor<1x2x6x16xf32>
    %m = qeff.causal_mask %pos {ctx_len = 6 : i64, ring = 5 : i64,
                                sliding_window = 4 : i64}
    %a = qeff.attention %q, %k, %v, %m {sliding_window = 4 : i64, ...}
    ```
  }];
  let options = [
    Option<"prefillSeqLen", "prefill-seq-len", "int64_t", /*default=*/"0",
           "The largest chunk the graph runs (required, > 0)">,
  ];
  let dependentDialects = ["mlir::qeff::QEffDialect"];
}

def QEffFixedShapes : Pass<"qeff-fixed-shapes", "mlir::ModuleOp"> {
  let summary = "Bind every dynamic dimension to a specialization symbol";
  let description = [{
    The AI 100 compiles one graph for a set of named specializations: every
    dimension that is not a literal is a symbol (`batch_size`, `seq_len`,
    `ctx_len`, and `full_batch_size` with continuous batching) bound by each
    specialization. This pass checks that every
    dynamic dimension of every `@forward` input and output is named by one
    of those symbols (`qeff.dims`), that the cache inputs hold `ctx-len`
    slots and that `ctx-len >= prefill-seq-len`, and records the
    specializations on the module (`qeff.specializations`). A speculative-
    decoding target (`num_logits_to_keep` input, `num-speculative-tokens`
    K1,K2,...) also gets a Decode specialization `DecodeK<K>` of `seq_len`
    `K + 1` per K; every specialization then binds `num_logits_to_keep`
    (1 for Prefill and Decode, `K + 1` for `DecodeK<K>`), and each K must
    satisfy `1 <= K` and `K + 1 <= prefill-seq-len` (QEfficient's rule: a
    decode step is never longer than a prefill chunk, which keeps the
    rolling KV buffers of `qeff-rolling-kv-window` large enough):

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
    Option<"fullBatchSize", "full-batch-size", "int64_t", /*default=*/"0",
           "Continuous batching: full_batch_size of every specialization; "
           "Prefill runs batch_size 1, Decode batch_size full_batch_size">,
    ListOption<"numSpeculativeTokens", "num-speculative-tokens", "int64_t",
               "Speculative-decoding target (after qeff-speculative-logits): "
               "a Decode specialization of seq_len K + 1 for each K, next to "
               "the one of seq_len 1; every specialization binds "
               "num_logits_to_keep">,
  ];
}

def QEffOutlineLayers : Pass<"qeff-outline-layers", "mlir::ModuleOp"> {
  let summary = "Decoder layers as functions, one per distinct layer";
  let description = [{
    Big models compile slowly because the compiler sees every decoder layer
    anew. This pass groups the ops of the public function by decoder layer,
    from their location scope (`<prefix>.<index>.<...>`: the HF module path
    the importers set, e.g. `model.layers.3.mlp.down_proj`; ops are grouped
    by the index, the most common prefix names the functions), and replaces each layer by a `func.call` of a
    private function holding its ops. Layers of the same structure (same
    ops, attributes, types and dataflow; only their weights and cache
    inputs differ) call the same function, so the module holds one function
    per distinct layer kind. The exporter writes the functions as ONNX
    model-local functions (`FunctionProto`) and the calls as nodes of them;
    qaic-compile compiles them once with `-sub-functions`.

    * A layer's inputs are the values it uses from outside (the hidden
      state, weights as `qeff.weight` values, cache inputs, the layer-
      invariant values the caller computes once: rotary tables, masks);
      its outputs are its values used outside (the hidden state, the
      updated cache), in op order. Constants are cloned into the function.
    * Ops that depend on no weight and no `past_*` input (positions, masks,
      index grids) are layer-invariant: CSE shares them between layers, so
      they stay in the caller whatever their scope.
    * The call stands where the layer's last op stood; it is named after
      the layer (`model.layers.3`).

    Run it on the lowered module (after `qeff-lower-to-onnx`), where weights
    are in their final, transposed form: `qeff compile --outline-layers`
    does. With `strict` (the default), a function without decoder layers or
    whose layers cannot be cut out (a layer's output used before the
    layer ends) is an error; otherwise it is left unchanged. The module
    records the number of functions made (`qeff.outlined_layers`).

    Before:
    ```mlir
    %a0 = onnx.MatMul %h, %w0 : ... loc("model.layers.0.mlp")
    %h1 = onnx.Add %h, %a0 : ... loc("model.layers.0")
    %a1 = onnx.MatMul %h1, %w1 : ... loc("model.layers.1.mlp")
    %h2 = onnx.Add %h1, %a1 : ... loc("model.layers.1")
    ```
    After:
    ```mlir
    func.func private @model_layers_kind0(%h: ..., %w: ...) -> ... {
      %a = onnx.MatMul %h, %w : ...
      %r = onnx.Add %h, %a : ...
      return %r : ...
    }
    %h1 = call @model_layers_kind0(%h, %w0) : ... loc("model.layers.0")
    %h2 = call @model_layers_kind0(%h1, %w1) : ... loc("model.layers.1")
    ```
  }];
  let options = [
    Option<"strict", "strict", "bool", /*default=*/"true",
           "Fail when there is nothing to outline (else leave it unchanged)">,
  ];
  let dependentDialects = ["mlir::func::FuncDialect"];
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

def QEffFP16Clamp : Pass<"qeff-fp16-clamp", "mlir::ModuleOp"> {
  let summary = "Keep fp16 device execution finite: clipped constants, clamps, fp32 islands";
  let description = [{
    The AI 100 runs the graph in fp16 (`qaic-compile -convert-to-fp16`), whose
    largest finite value is 65504. This pass prepares the device IR for it:

    1. **fp32 islands.** Ops whose scope (the innermost name of their
       location, which importers set to the Hugging Face module path, and
       which the exporter uses to name ONNX nodes `/<scope>/<OpType>_<n>`)
       matches `fp32-scopes` or a line of `fp32-scopes-file` are marked
       `qeff.precision = "fp32"`. A pattern is a module path or a glob
       (`model.layers.*.mlp`) and matches that module and everything inside
       it. The module records the patterns (`qeff.fp32_scopes`); `qeff
       compile` lists the ONNX nodes of marked scopes in
       `node_precision.yaml` (`-node-precision-info`). A pattern that matches
       no op is an error (a typo would otherwise silently run in fp16).
       `qeff.rotary` with sequence-length dependent scaling (dynamic NTK,
       longrope) is always marked: it computes the NTK base and the
       `position * frequency` angles in the graph, which fp16 cannot hold.
    2. **Constants.** Constant attributes that become fp32 graph constants
       are clipped to +-65504 (`qeff.scale` factors); the lowering's own
       constants (masked scores -65504, rotary tables, activation constants)
       are within range by construction.
    3. **Clamps.** `qeff.fp16_clamp` after the values where an inf would
       meet a -inf and become NaN: the MLP output (`down_proj`) and the
       residual stream (`qeff.add`). A clamp takes its producer's location
       and precision mark, so a clamp at the edge of an fp32 island runs in
       fp32 and hands fp16 a finite value; a value that stays inside an
       island is not clamped. The gated MLP product `act(gate) * up` (the
       input of `down_proj`, the first non-finite value in fp16 runs of
       Llama-style models) is *not* clamped: clamping it gives wrong tokens
       (the `LlamaForCausalLM-fp16_overflow` golden), and an unclamped
       overflow is what the host device's fp16 emulation reports, naming the
       node. The fix there is an fp32 island on the MLP, given with
       `fp32-scopes` or found by `qeff compile --calibrate`.

    Before:
    ```mlir
    %p = qeff.gated_activation %g, %u {kind = #qeff<activation silu>}
        : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x128xf32>
    %d = qeff.linear %p, %w : (...) -> tensor<?x?x64xf32>
    %h = qeff.add %x, %d : (...) -> tensor<?x?x64xf32>
    ```
    After:
    ```mlir
    %p = qeff.gated_activation %g, %u {kind = #qeff<activation silu>} : ...
    %d = qeff.linear %p, %w : ...
    %dc = qeff.fp16_clamp %d : ...
    %h = qeff.add %x, %dc : ...
    %hc = qeff.fp16_clamp %h : ...
    ```
    With `fp32-scopes=model.layers.0.mlp` the MLP's ops carry
    `qeff.precision = "fp32"` and the clamp of `%d` is marked fp32 too: the
    product and `down_proj` run in fp32, and fp16 gets the clamped output.

    `qeff-device-pipeline` runs `--canonicalize` after this pass: the
    dialect's canonicalization patterns (dialects/QEff/QEffCanonicalize.td)
    keep clamps as narrow and marks as they are.
  }];
  let options = [
    ListOption<"fp32Scopes", "fp32-scopes", "std::string",
               "Module paths or glob patterns whose ops stay in fp32 "
               "(comma-separated)">,
    Option<"fp32ScopesFile", "fp32-scopes-file", "std::string",
           /*default=*/"\"\"",
           "File of fp32 scope patterns, one per line ('#' comments)">,
  ];
  let dependentDialects = ["mlir::qeff::QEffDialect"];
}

#endif // QEFF_PATTERNS_PASSES_TD
