//===- QEffOps.td - qeff dialect operations --------------------*- tablegen -*-===//
//
// Part of qeff. Ops mirror Hugging Face module classes; see QEffDialect.td for
// the two forms (HF semantics and device semantics) and docs/ for the rationale.
// Every shape, rank and attribute relation an op states is checked by its
// verifier; the messages are tested in test/dialects/QEff/invalid.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_QEFF_OPS_TD
#define QEFF_DIALECT_QEFF_OPS_TD

include "dialects/QEff/QEffAttrs.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def QEff_FloatTensor : RankedTensorOf<[AnyFloat]>;
def QEff_IndexTensor : RankedTensorOf<[I64]>;
def QEff_MaskTensor : RankedTensorOf<[I1]>;

class QEff_PureOp<string mnemonic, list<Trait> traits = []>
    : QEff_Op<mnemonic, !listconcat([Pure], traits)> {
  let hasVerifier = 1;
  let assemblyFormat = "operands attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

def QEff_WeightOp : QEff_Op<"weight", [Pure]> {
  let summary = "A reference to a checkpoint tensor";
  let description = [{
    Names a tensor of the checkpoint (`qeff.model` lists its files) without
    copying its data into the IR. `storage_type` is the element type on disk
    (`bf16`, `f16`, `f32`, ...); the result type gives the shape and the
    element type the model computes in. The exporter streams the bytes from an
    mmap of the safetensors file into the ONNX external data, converting
    `storage_type` to the result element type on the way.

    Lowers to an ONNX initializer with external data named after the tensor.

    With `transpose`, the value is the transpose of the 2-D checkpoint tensor
    (the lowering asks for `[in, out]` copies of `[out, in]` Linear weights so
    that `MatMul` needs no runtime `Transpose`); the exporter transposes while
    streaming.

    With `rows = array<i64: start0, count0, start1, count1, ...>`, the value
    is the concatenation of those row ranges of the checkpoint tensor (its
    first dimension, before `transpose`): a range may repeat or overlap
    another. `qeff-replicate-kv-heads` uses it to repeat KV heads of K/V
    projections, the importer to read one expert's rows of DBRX's fused
    expert tensors; the exporter writes the selected rows from the one
    checkpoint tensor, so nothing is copied in the IR. A checkpoint tensor
    of one rank more than the value (stacked expert matrices `[n, rows,
    cols]`, GraniteMoe's `input_linear`) is read as `[n * rows, cols]`: the
    ranges select rows of its leading two dimensions.

    ```mlir
    %w = qeff.weight "model.layers.0.self_attn.q_proj.weight" : bf16 -> tensor<64x64xf32>
    %wt = qeff.weight "lm_head.weight" : bf16 -> tensor<64x384xf32> {transpose}
    // Each of the 2 heads (16 rows) of a [32, 64] k_proj twice.
    %wk = qeff.weight "model.layers.0.self_attn.k_proj.weight" : f32
        -> tensor<64x64xf32> {rows = array<i64: 0, 16, 0, 16, 16, 16, 16, 16>}
    ```
  }];
  let arguments = (ins StrAttr:$tensor_name, TypeAttr:$storage_type,
                   UnitAttr:$transpose,
                   OptionalAttr<DenseI64ArrayAttr>:$rows);
  let results = (outs AnyRankedTensor:$result);
  let builders = [
    // The whole tensor (no row selection).
    OpBuilder<(ins "Type":$result, "StringAttr":$tensor_name,
                   "TypeAttr":$storage_type, "UnitAttr":$transpose), [{
      build($_builder, $_state, result, tensor_name, storage_type, transpose,
            DenseI64ArrayAttr());
    }]>,
  ];
  let assemblyFormat = "$tensor_name `:` $storage_type `->` type($result) attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Embedding, linear, norms
//===----------------------------------------------------------------------===//

def QEff_EmbeddingOp : QEff_PureOp<"embedding"> {
  let summary = "Token embedding lookup (torch.nn.Embedding)";
  let description = [{
    `result[b, s, :] = table[ids[b, s] + index_offset, :]`. `ids` is
    `[batch, seq]` int64, `table` is `[vocab, hidden]`, the result
    `[batch, seq, hidden]`. `index_offset` (default 0) shifts every index:
    OPT's learned positions read row `position + 2`. Lowers to ONNX
    `Gather(table, ids, axis = 0)` (after an `Add` for a non-zero offset).

    ```mlir
    %h = qeff.embedding %ids, %table
        : (tensor<?x?xi64>, tensor<384x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_IndexTensor:$ids, QEff_FloatTensor:$table,
                   DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$index_offset);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_LinearOp : QEff_PureOp<"linear"> {
  let summary = "Affine map over the last dimension (torch.nn.Linear / Conv1D)";
  let description = [{
    `result = input @ W^T + bias` for `weight_layout = out_in` (the default;
    `torch.nn.Linear` stores `[out_features, in_features]`) and
    `result = input @ W + bias` for `weight_layout = in_out` (the `Conv1D` of
    the GPT-2 family stores `[in, out]`). `input` is `[..., in]`, the result
    `[..., out]`, `bias` optional `[out]`. Lowers to ONNX `MatMul` against an
    `[in, out]` initializer (the exporter transposes `out_in` weights while
    streaming) followed by `Add` for the bias.

    ```mlir
    %q = qeff.linear %x, %wq : (tensor<?x?x64xf32>, tensor<128x64xf32>) -> tensor<?x?x128xf32>
    %y = qeff.linear %x, %w, %b {weight_layout = #qeff<weight_layout in_out>}
        : (tensor<?x?x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> tensor<?x?x256xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, QEff_FloatTensor:$weight,
                   Optional<QEff_FloatTensor>:$bias,
                   DefaultValuedAttr<QEff_WeightLayoutAttr,
                                     "::mlir::qeff::WeightLayout::out_in">:$weight_layout);
  let results = (outs QEff_FloatTensor:$result);
  let extraClassDeclaration = [{
    int64_t getInFeatures();
    int64_t getOutFeatures();
  }];
}

def QEff_RMSNormOp : QEff_PureOp<"rms_norm"> {
  let summary = "Root-mean-square normalisation (LlamaRMSNorm and variants)";
  let description = [{
    `result = x / sqrt(mean(x^2, -1) + epsilon) * (weight_offset + weight)`
    over the last dimension. `weight_offset = 1.0` is Gemma's `(1 + w)`
    variant. With `accumulate_f32` (the Hugging Face default) the mean is taken
    in fp32 whatever the element type, and the result cast back. Lowers to a
    `Mul`/`ReduceMean`/`Add`/`Sqrt`/`Div` chain in fp32.

    ```mlir
    %n = qeff.rms_norm %x, %w {epsilon = 1.0e-06 : f64}
        : (tensor<?x?x64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, QEff_FloatTensor:$weight,
                   F64Attr:$epsilon,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_offset,
                   DefaultValuedAttr<BoolAttr, "true">:$accumulate_f32);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_LayerNormOp : QEff_PureOp<"layer_norm"> {
  let summary = "Layer normalisation over the last dimension (torch.nn.LayerNorm)";
  let description = [{
    `result = (x - mean) / sqrt(var + epsilon) * (weight_offset + weight) +
    bias` over the last dimension, `bias` optional. `weight` and `bias` are
    `[hidden]`, or, for a rank-4 input `[batch, heads, seq, head_dim]`,
    `[heads, head_dim]`: one norm per head (StableLM's and Cohere's q/k
    norms). `weight_offset = 1.0` is Nemotron's `LayerNorm1P` (`1 + w`).
    Statistics in fp32 when `accumulate_f32`. Lowers to ONNX
    `LayerNormalization(axis = -1)`; per-head weights are applied after it
    with `Mul`/`Add` broadcast over `[heads, 1, head_dim]`.

    ```mlir
    %n = qeff.layer_norm %x, %w, %b {epsilon = 1.0e-05 : f64}
        : (tensor<?x?x64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, QEff_FloatTensor:$weight,
                   Optional<QEff_FloatTensor>:$bias, F64Attr:$epsilon,
                   DefaultValuedAttr<BoolAttr, "true">:$accumulate_f32,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_offset);
  let results = (outs QEff_FloatTensor:$result);
  let extraClassDeclaration = [{
    /// Whether weight (and bias) hold one row per head.
    bool isPerHead();
  }];
}

def QEff_StandardizeOp : QEff_PureOp<"standardize", [SameOperandsAndResultType]> {
  let summary = "Non-parametric layer normalisation (OLMo's LayerNorm)";
  let description = [{
    `result = (x - mean) / sqrt(var + epsilon)` over the last dimension, with
    no weight and no bias (`F.layer_norm(x, normalized_shape)` as OLMo's
    `OlmoLayerNorm` computes it); statistics in fp32. The last dimension must
    be static. Lowers to ONNX `LayerNormalization(axis = -1)` with a scale of
    ones.

    ```mlir
    %n = qeff.standardize %x {epsilon = 1.0e-05 : f64}
        : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, F64Attr:$epsilon);
  let results = (outs QEff_FloatTensor:$result);
}

//===----------------------------------------------------------------------===//
// Heads and positions
//===----------------------------------------------------------------------===//

def QEff_SplitHeadsOp : QEff_PureOp<"split_heads"> {
  let summary = "[batch, seq, heads * head_dim] -> [batch, heads, seq, head_dim]";
  let description = [{
    The `view(b, s, h, d).transpose(1, 2)` every attention module performs.
    Lowers to `Reshape` + `Transpose(perm = [0, 2, 1, 3])`.

    ```mlir
    %q4 = qeff.split_heads %q {num_heads = 4 : i64}
        : (tensor<?x?x64xf32>) -> tensor<?x4x?x16xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, ConfinedAttr<I64Attr, [IntPositive]>:$num_heads);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_MergeHeadsOp : QEff_PureOp<"merge_heads"> {
  let summary = "[batch, heads, seq, head_dim] -> [batch, seq, heads * head_dim]";
  let description = [{
    The inverse of `qeff.split_heads`: `transpose(1, 2).reshape(b, s, h * d)`.

    ```mlir
    %o = qeff.merge_heads %a : (tensor<?x4x?x16xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_RotaryOp : QEff_PureOp<"rotary"> {
  let summary = "Rotary position embedding (RoPE)";
  let description = [{
    Rotates the first `rotary_dim` features of each head of `input`
    (`[batch, heads, seq, head_dim]`) by angles `position * inv_freq[i]`,
    with `inv_freq[i] = theta ^ (-2i / rotary_dim)` adjusted by `scaling`
    (`#qeff.rope_scaling`), and multiplies cos and sin by the scaling's
    attention factor (yarn, longrope). `style = half` pairs `x[i]` with
    `x[i + rotary_dim/2]` (`rotate_half`: Llama, Mistral, GPT-NeoX);
    `interleaved` pairs `x[2i]` with `x[2i + 1]` (GPT-J, CodeGen). Features
    past `rotary_dim` (partial rotary, e.g. Phi) pass through unchanged.
    `positions` is `[batch, seq]` int64.

    **Sequence-length dependent scaling** (`dynamic`, `longrope`): the
    frequencies of batch row `b` are those for `L = max_s positions[b, s] +
    1`, the largest position of the call plus one, as transformers chooses
    them in each forward call. Keys are rotated before they enter the cache,
    so a cached key keeps the rotation of the call that wrote it, which is
    transformers' cached decode. Taking `L` per row (transformers takes it
    over the batch of a call) makes each sequence independent of the others
    it is batched with (continuous batching).

    With `keep` (`[k, 1]`, the speculative-decoding target's
    `num_logits_to_keep` input, set by `qeff-speculative-logits` on
    sequence-length dependent rotaries only: only its length `k` matters), a
    call of exactly `k` tokens is a verification step of `k` decode tokens,
    and each token takes the frequencies for `L = positions[b, s] + 1`, its
    own position plus one: what a one-token decode step computes for it, so
    speculative decoding rotates queries and cached keys as plain decoding
    does. Calls of another length (the prefill, `k = 1`) keep the row rule.
    A padding slot (position -1) gets `L = 0`, the unscaled frequencies.

    Lowers, for static scaling, to a `Gather` of cos/sin tables (computed
    once per model by the exporter, `[max_positions, rotary_dim]`) indexed
    by `positions`; for sequence-length dependent scaling, to `ReduceMax` of
    the positions, the row's inverse frequencies (`Where` between the two
    longrope lists, or the NTK base computed with `Pow`), and `Cos`/`Sin` of
    `position * inv_freq`; then `Mul`/`Add` with the rotated halves.

    ```mlir
    %qr = qeff.rotary %q, %pos {style = #qeff<rotary_style half>,
                                rotary_dim = 16 : i64, theta = 1.0e+04 : f64,
                                max_positions = 64 : i64}
        : (tensor<?x4x?x16xf32>, tensor<?x?xi64>) -> tensor<?x4x?x16xf32>
    %kr = qeff.rotary %k, %pos {style = #qeff<rotary_style half>,
                                rotary_dim = 16 : i64, theta = 1.0e+04 : f64,
                                max_positions = 64 : i64,
                                scaling = #qeff.rope_scaling<kind = dynamic,
                                  factor = 2.0 : f64, original_max_position = 16>}
        : (tensor<?x2x?x16xf32>, tensor<?x?xi64>) -> tensor<?x2x?x16xf32>
    %ks = qeff.rotary %k, %pos, %keep {style = #qeff<rotary_style half>,
                                       rotary_dim = 16 : i64, theta = 1.0e+04 : f64,
                                       max_positions = 64 : i64,
                                       scaling = #qeff.rope_scaling<kind = dynamic,
                                         factor = 2.0 : f64, original_max_position = 16>}
        : (tensor<?x2x?x16xf32>, tensor<?x?xi64>, tensor<?x1xi64>) -> tensor<?x2x?x16xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, QEff_IndexTensor:$positions,
                   Optional<QEff_IndexTensor>:$keep,
                   QEff_RotaryStyleAttr:$style,
                   ConfinedAttr<I64Attr, [IntPositive]>:$rotary_dim,
                   F64Attr:$theta,
                   ConfinedAttr<I64Attr, [IntPositive]>:$max_positions,
                   OptionalAttr<QEff_RopeScalingAttr>:$scaling);
  let results = (outs QEff_FloatTensor:$result);
  let extraClassDeclaration = [{
    /// The inverse frequencies, `rotary_dim / 2` of them, with `scaling`
    /// applied, computed in fp32 as transformers does (exact as doubles).
    /// For sequence-length dependent scaling, those of a call whose largest
    /// position is `seqLen - 1` (0: the frequencies below the threshold).
    ::llvm::SmallVector<double> computeInvFreq(int64_t seqLen = 0);
    /// The factor cos and sin are multiplied by (1 without scaling).
    double getAttentionFactorValue();
  }];
}

//===----------------------------------------------------------------------===//
// Attention and the KV cache
//===----------------------------------------------------------------------===//

def QEff_AttentionOp : QEff_PureOp<"attention", [AttrSizedOperandSegments]> {
  let summary = "Scaled dot-product attention with grouped KV heads";
  let description = [{
    `softmax(q @ k^T * scale + bias + mask) @ v` per head. `query` is
    `[batch, num_heads, seq, head_dim]`; `key` and `value` are
    `[batch, num_kv_heads, kv_seq, head_dim]`, each KV head serving
    `num_heads / num_kv_heads` query heads (grouped-query attention; MQA when
    `num_kv_heads = 1`). The result is `[batch, num_heads, seq, head_dim]`.

    Masking, by form:
    * HF semantics (no `mask` operand): with `causal`, query `i` sits at
      absolute index `kv_seq - seq + i` and sees key `j` iff
      `j <= kv_seq - seq + i`, and with `sliding_window = w > 0` also
      `j > kv_seq - seq + i - w` (Mistral).
    * Device semantics: `mask` (`[batch, 1, seq, kv_seq]` i1, true = visible,
      from `qeff.causal_mask`) decides alone; `causal` is false.

    `alibi_slopes` (one per query head) adds `slope[h] * j` to the scores of
    key `j` (MPT, Falcon-alibi, BLOOM; equivalent to `slope * (j - i)` after
    softmax). `softcap` applies `softcap * tanh(scores / softcap)` before the
    mask (Gemma 2). Masked scores are a finite large negative (fp16-safe), not
    `-inf`. Lowers to `MatMul`/`Mul`/`Where`/`Softmax`/`MatMul`, repeating KV
    heads with `Expand`/`Reshape`.

    `sinks` (`[num_heads]`, GPT-OSS's attention sinks) is one more logit per
    head that joins each query's softmax and has no value:
    `p_j = exp(s_j) / (sum_j' exp(s_j') + exp(sinks[h]))`. It is an operand
    (a checkpoint weight), not an attribute, so that layers differing only in
    their sink values stay structurally identical (`--outline-layers`).

    ```mlir
    %a = qeff.attention %q, %k, %v {num_heads = 4 : i64, num_kv_heads = 2 : i64,
                                    head_dim = 16 : i64, scale = 2.5e-01 : f64,
                                    causal = true}
        : (tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>)
        -> tensor<?x4x?x16xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$query, QEff_FloatTensor:$key,
                   QEff_FloatTensor:$value, Optional<QEff_MaskTensor>:$mask,
                   Optional<QEff_FloatTensor>:$sinks,
                   ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
                   ConfinedAttr<I64Attr, [IntPositive]>:$num_kv_heads,
                   ConfinedAttr<I64Attr, [IntPositive]>:$head_dim,
                   F64Attr:$scale,
                   DefaultValuedAttr<BoolAttr, "false">:$causal,
                   DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$sliding_window,
                   OptionalAttr<DenseF64ArrayAttr>:$alibi_slopes,
                   OptionalAttr<F64Attr>:$softcap);
  let results = (outs QEff_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`,` $mask^)? (`sinks` $sinks^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def QEff_KVConcatOp : QEff_PureOp<"kv_concat"> {
  let summary = "HF-semantics cache update: `present = concat(past, new)`";
  let description = [{
    Appends this step's keys or values to the cache along the sequence axis of
    `layout` (`#qeff<kv_layout bhsd>` is `[batch, kv_heads, seq, head_dim]`,
    `bshd`, `sbhd`, and `bsd` for multi-query `[batch, seq, head_dim]`). The
    result, of length `past + new`, is both the attention's key/value and the
    `present` output of the model: exactly `DynamicCache.update` in
    `transformers`. `qeff-kv-retained-state` replaces it by
    `qeff.ctx_scatter` on a fixed `ctx_len` cache.

    ```mlir
    %k = qeff.kv_concat %past_k, %new_k {layout = #qeff<kv_layout bhsd>}
        : (tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32>) -> tensor<?x2x?x16xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$past, QEff_FloatTensor:$update,
                   QEff_KVLayoutAttr:$layout);
  let results = (outs QEff_FloatTensor:$result);
  let extraClassDeclaration = [{
    /// The sequence axis of `layout`.
    int64_t getSeqAxis();
  }];
}

def QEff_CtxScatterOp : QEff_PureOp<"ctx_scatter"> {
  let summary = "Device cache write-back: scatter new K/V at their positions";
  let description = [{
    `cache` is the fixed-shape retained cache `[batch, kv_heads, ctx_len,
    head_dim]`, `update` this step's `[batch, kv_heads, seq, head_dim]`,
    `positions` `[batch, seq]` int64. The result is `cache` with
    `result[b, h, positions[b, s], :] = update[b, h, s, :]`.

    **Padding rule.** A padded token has position `-1`. Its write lands in the
    last slot, `ctx_len - 1` (ONNX `ScatterND` counts negative indices from
    the end, as the AI 100 does). A query at position `p` sees only slots
    `j <= p` (`qeff.causal_mask`), so that slot is visible only to a query at
    position `ctx_len - 1`, which writes the slot itself in the same step
    before attention reads it. A padded token therefore never changes what a
    valid query sees, provided a chunk never holds both a valid token at
    position `ctx_len - 1` and padding: the runtime guarantees it by refusing
    sequences longer than `ctx_len - 1` tokens before generation. Lowers to
    `ScatterND` with indices `[b, h, positions[b, s]]`.

    **Continuous batching.** With `batch_index` (`[batch, 1]` int64) the cache
    has its own number of rows (`full_batch_size`) and row `b` of the update
    goes to cache row `batch_index[b, 0]`:
    `result[batch_index[b, 0], h, positions[b, s], :] = update[b, h, s, :]`.
    A row with `batch_index[b, 0] < 0` is an idle lane (vLLM's qaic plugin
    feeds them with ids and positions -1): it writes no slot of its own. The
    lowering gives its tokens the index and the update of the first token of
    the largest row, so that they only repeat a write of this step (and, in
    a step of idle lanes only, the padding slot of the last row).

    **Rolling buffer.** With `ring = n > 0` (a sliding-window layer's cache
    under `qeff-rolling-kv-window`) the cache has `n + 1` slots: position
    `p >= 0` is written at slot `p mod n` and padding (`-1`) at the last slot
    `n`, which no query ever sees (`qeff.causal_mask` with the same `ring`).
    Lowers to `Mod` + `Where` in front of the `ScatterND`.

    ```mlir
    %c = qeff.ctx_scatter %cache, %pos, %k
        : (tensor<1x2x128x16xf32>, tensor<1x32xi64>, tensor<1x2x32x16xf32>)
        -> tensor<1x2x128x16xf32>
    %r = qeff.ctx_scatter %window_cache, %pos, %k {ring = 35 : i64}
        : (tensor<1x2x36x16xf32>, tensor<1x32xi64>, tensor<1x2x32x16xf32>)
        -> tensor<1x2x36x16xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$cache, QEff_IndexTensor:$positions,
                   QEff_FloatTensor:$update,
                   Optional<QEff_IndexTensor>:$batch_index,
                   DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$ring);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_CtxRowsOp : QEff_PureOp<"ctx_rows"> {
  let summary = "Device cache read for continuous batching: the rows in use";
  let description = [{
    `result[b] = cache[batch_index[b, 0]]` for `cache`
    `[full_batch_size, kv_heads, ctx_len, head_dim]` and `batch_index`
    `[batch, 1]` int64: the cache rows of this step's sequences, which
    attention reads. Lowers to `Gather` on axis 0.

    ```mlir
    %k = qeff.ctx_rows %cache, %batch_index
        : (tensor<4x2x128x16xf32>, tensor<1x1xi64>) -> tensor<1x2x128x16xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$cache, QEff_IndexTensor:$batch_index);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_CtxGatherOp : QEff_PureOp<"ctx_gather"> {
  let summary = "Device cache read: gather cache slots";
  let description = [{
    `result[b, h, n, :] = cache[b, h, slots[b, n], :]` for `cache`
    `[batch, kv_heads, ctx_len, head_dim]` and `slots` `[batch, n]` int64:
    reads a window of the cache (sliding-window attention) or the whole cache
    in slot order. Lowers to `GatherND` (batch_dims = 1) or, when the slots are
    `0 .. ctx_len - 1`, to nothing.

    ```mlir
    %k = qeff.ctx_gather %cache, %slots
        : (tensor<1x2x128x16xf32>, tensor<1x64xi64>) -> tensor<1x2x64x16xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$cache, QEff_IndexTensor:$slots);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_CausalMaskOp : QEff_PureOp<"causal_mask"> {
  let summary = "Visibility of cache slots, computed from positions";
  let description = [{
    For `positions` `[batch, seq]` int64 and a cache of `ctx_len` slots,
    `result[b, 0, s, j]` (i1, `[batch, 1, seq, ctx_len]`) is true iff slot `j`
    is visible to the query at position `p = positions[b, s]`:
    `j <= p`, and with `sliding_window = w > 0` also `j > p - w`. A padded
    query (`p = -1`) sees nothing; its output is don't-care. No
    `attention_mask` input is needed. Lowers to `Range`/`Unsqueeze`/
    `LessOrEqual` (+ `Greater` and `And` for a window).

    **Rolling buffer.** With `ring = n > 0` the cache is the rolling buffer
    `qeff.ctx_scatter {ring = n}` writes: `ctx_len = n + 1` slots, position
    `q` at slot `q mod n`, the last slot for padding. The positions of a row
    are consecutive from 0 up to `P = max_s positions[b, s]` (chunked prefill
    and decode write every position in order), so slot `j < n` holds position
    `q_j = P - ((P - j) mod n)`, and it is visible to the query at `p` iff
    `0 <= q_j <= p` and `q_j > p - w`; slot `n` is never visible. This needs
    `n >= w + seq - 1` for every chunk of `seq` tokens (the window of the
    chunk's first query must not be overwritten by the chunk's last tokens):
    `qeff-rolling-kv-window` sizes `n = w + prefill_seq_len - 1`. Lowers to
    `ReduceMax` + `Mod` + comparisons.

    ```mlir
    %m = qeff.causal_mask %pos {ctx_len = 128 : i64}
        : (tensor<1x32xi64>) -> tensor<1x1x32x128xi1>
    %r = qeff.causal_mask %pos {ctx_len = 36 : i64, ring = 35 : i64,
                                sliding_window = 4 : i64}
        : (tensor<1x32xi64>) -> tensor<1x1x32x36xi1>
    ```
  }];
  let arguments = (ins QEff_IndexTensor:$positions,
                   ConfinedAttr<I64Attr, [IntPositive]>:$ctx_len,
                   DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$sliding_window,
                   DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$ring);
  let results = (outs QEff_MaskTensor:$result);
}

def QEff_LastTokenSelectOp : QEff_PureOp<"last_token_select"> {
  let summary = "Select each row's last valid token (largest position id)";
  let description = [{
    `result[b, 0, :] = input[b, argmax_s(positions[b, s]), :]` for `input`
    `[batch, seq, n]` and `positions` `[batch, seq]`: the hidden state (or
    logits) of the token with the largest position in each row, i.e. the last
    valid token of a right-padded chunk. The result is `[batch, 1, n]`, so the
    device computes the LM head for one token per row. Lowers to `ArgMax`
    (keepdims) + `GatherElements`/`GatherND`.

    With `keep` (`[k, 1]`, the speculative-decoding target's
    `num_logits_to_keep` input: only its length `k` matters, as in
    QEfficient), the result is `[batch, k, n]`: the `k` tokens ending at the
    row's last valid token (`lower = max(0, last + 1 - k)`, tokens
    `lower .. lower + k - 1`), so a decode step of `K + 1` tokens yields the
    logits of all of them and a prefill chunk (`k = 1`) the last token's.

    ```mlir
    %last = qeff.last_token_select %h, %pos
        : (tensor<1x32x64xf32>, tensor<1x32xi64>) -> tensor<1x1x64xf32>
    %spec = qeff.last_token_select %h, %pos, %keep
        : (tensor<1x?x64xf32>, tensor<1x?xi64>, tensor<?x1xi64>) -> tensor<1x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, QEff_IndexTensor:$positions,
                   Optional<QEff_IndexTensor>:$keep);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_FP16ClampOp : QEff_PureOp<"fp16_clamp", [SameOperandsAndResultType]> {
  let summary = "Clamp values to the finite fp16 range";
  let description = [{
    `result = min(max(input, -limit), limit)` with `limit` at most 65504 (the
    largest finite fp16), inserted by `qeff-fp16-clamp` where fp16 execution
    could overflow. Lowers to ONNX `Clip`.

    ```mlir
    %c = qeff.fp16_clamp %x : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "65504.0">:$limit);
  let results = (outs QEff_FloatTensor:$result);
  // QEffCanonicalize.td: nested fp16 clamps, fp16 clamp of a narrow clamp.
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// MLP and elementwise
//===----------------------------------------------------------------------===//

def QEff_ActivationOp : QEff_PureOp<"activation", [SameOperandsAndResultType]> {
  let summary = "Elementwise activation (plain MLP)";
  let description = [{
    `result = act(input)` for `kind` in `silu`, `gelu` (exact, erf),
    `gelu_tanh` (tanh approximation: `gelu_new`, `gelu_pytorch_tanh`),
    `relu`, `relu2` (`relu(x)^2`, Persimmon and Nemotron). Lowers to
    `Sigmoid`+`Mul`, `Erf` chain, `Tanh` chain, `Relu` (+ `Mul` for `relu2`).

    ```mlir
    %a = qeff.activation %x {kind = #qeff<activation gelu_tanh>}
        : (tensor<?x?x256xf32>) -> tensor<?x?x256xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, QEff_ActivationAttr:$kind);
  let results = (outs QEff_FloatTensor:$result);
  let hasVerifier = 0;
}

def QEff_GatedActivationOp : QEff_PureOp<"gated_activation"> {
  let summary = "Gated MLP activation: act(gate) * up";
  let description = [{
    `result = act(gate) * up` elementwise, the core of `LlamaMLP`
    (`down_proj(act(gate_proj(x)) * up_proj(x))`) and its relatives (GeGLU
    with `gelu_tanh` for Gemma). `gate`, `up` and the result share one type.

    ```mlir
    %g = qeff.gated_activation %gate, %up {kind = #qeff<activation silu>}
        : (tensor<?x?x160xf32>, tensor<?x?x160xf32>) -> tensor<?x?x160xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$gate, QEff_FloatTensor:$up,
                   QEff_ActivationAttr:$kind);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_MoEOp : QEff_PureOp<"moe", [AttrSizedOperandSegments]> {
  let summary = "Sparse mixture of gated-MLP experts (Mixtral block)";
  let description = [{
    `router_weight` (`[num_experts, hidden]`) scores each token; the top
    `top_k` experts by softmax probability are chosen, their probabilities
    renormalised to sum to 1 when `normalize_top_k` (Mixtral), and the token's
    output is the weighted sum of the chosen experts'
    `w2(act(w1(x)) * w3(x))`. `experts` holds, per expert `e`, the three
    weights `w1` (`[intermediate, hidden]`), `w3` (same) and `w2`
    (`[hidden, intermediate]`) in that order: `3 * num_experts` operands.
    `input` is `[batch, seq, hidden]`, as is the result.

    `router_bias` (`[num_experts]`) is added to the router's logits (GPT-OSS).
    With `swiglu_limit` and `swiglu_alpha` the experts have GPT-OSS's form:
    per expert `w13` (`[2 * intermediate, hidden]`, rows alternating gate and
    up: the transpose of the checkpoint's interleaved `gate_up_proj[e]`),
    `b13` (`[1, 2 * intermediate]`), `w2` (`[hidden, intermediate]`) and `b2`
    (`[1, hidden]`), `4 * num_experts` operands; with `g = min(gate, limit)`,
    `u = clamp(up, -limit, limit)` the expert computes
    `w2((u + 1) * g * sigmoid(alpha * g)) + b2` (`kind` must be silu).

    The lowering keeps every shape fixed: all experts run on all tokens and
    are combined with the routing weights, which are zero for unchosen
    experts (dense evaluation; no data-dependent shapes on the device).

    ```mlir
    %y = qeff.moe %x, %router, %e0w1, %e0w3, %e0w2, %e1w1, %e1w3, %e1w2
        {num_experts = 2 : i64, top_k = 1 : i64, kind = #qeff<activation silu>}
        : (tensor<?x?x64xf32>, tensor<2x64xf32>, tensor<128x64xf32>, tensor<128x64xf32>,
           tensor<64x128xf32>, tensor<128x64xf32>, tensor<128x64xf32>, tensor<64x128xf32>)
        -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, QEff_FloatTensor:$router_weight,
                   Optional<QEff_FloatTensor>:$router_bias,
                   Variadic<QEff_FloatTensor>:$experts,
                   ConfinedAttr<I64Attr, [IntPositive]>:$num_experts,
                   ConfinedAttr<I64Attr, [IntPositive]>:$top_k,
                   DefaultValuedAttr<BoolAttr, "true">:$normalize_top_k,
                   QEff_ActivationAttr:$kind,
                   OptionalAttr<F64Attr>:$swiglu_limit,
                   OptionalAttr<F64Attr>:$swiglu_alpha);
  let results = (outs QEff_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $router_weight (`router_bias` $router_bias^)? `,` $experts
    attr-dict `:` functional-type(operands, results)
  }];
}

class QEff_BinaryOp<string mnemonic, string what>
    : QEff_PureOp<mnemonic, [SameOperandsAndResultType, Commutative]> {
  let summary = "Elementwise " # what;
  let arguments = (ins QEff_FloatTensor:$lhs, QEff_FloatTensor:$rhs);
  let results = (outs QEff_FloatTensor:$result);
  let hasVerifier = 0;
}

def QEff_AddOp : QEff_BinaryOp<"add", "sum (residual connections)"> {
  let description = [{
    `result = lhs + rhs`, both of one type. Lowers to ONNX `Add`.

    ```mlir
    %r = qeff.add %x, %y : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
}

def QEff_MulOp : QEff_BinaryOp<"mul", "product"> {
  let description = [{
    `result = lhs * rhs`, both of one type. Lowers to ONNX `Mul`.

    ```mlir
    %r = qeff.mul %x, %y : (tensor<?x?x64xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
}

def QEff_ScaleOp : QEff_PureOp<"scale", [SameOperandsAndResultType]> {
  let summary = "Multiply by a constant";
  let description = [{
    `result = input * factor`, e.g. Gemma's embedding scaling by
    `sqrt(hidden_size)` or a logit scale. Lowers to `Mul` by a scalar
    initializer.

    ```mlir
    %s = qeff.scale %x {factor = 8.0 : f64} : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, F64Attr:$factor);
  let results = (outs QEff_FloatTensor:$result);
  let hasVerifier = 0;
}

def QEff_SplitOp : QEff_PureOp<"split"> {
  let summary = "Split the last dimension into parts (fused QKV, fused gate/up)";
  let description = [{
    Cuts the last dimension of `input` into consecutive parts of the given
    `sizes`, which must add up to it: Phi-3's fused `gate_up_proj`, Falcon's
    and GPT-BigCode's fused `query_key_value` / `c_attn`. Lowers to ONNX
    `Split`.

    ```mlir
    %q, %kv = qeff.split %x {sizes = array<i64: 64, 32>}
        : (tensor<?x?x96xf32>) -> (tensor<?x?x64xf32>, tensor<?x?x32xf32>)
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<QEff_FloatTensor>:$results);
}

def QEff_TransposeOp : QEff_PureOp<"transpose"> {
  let summary = "Permute dimensions (KV layout changes)";
  let description = [{
    `result.shape[i] = input.shape[permutation[i]]`, as ONNX `Transpose`. Used
    by importers whose cache layout is not `[batch, heads, seq, head_dim]`.

    ```mlir
    %t = qeff.transpose %x {permutation = array<i64: 0, 2, 1, 3>}
        : (tensor<?x?x2x16xf32>) -> tensor<?x2x?x16xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
}

def QEff_ClampOp : QEff_PureOp<"clamp", [SameOperandsAndResultType]> {
  let summary = "Clamp values to [min, max] (clip_qkv)";
  let description = [{
    `result = min(max(input, min), max)`, `min <= max`: OLMo's and DBRX's
    `clip_qkv`, which clamps the query/key/value projections. Lowers to ONNX
    `Clip`.

    ```mlir
    %c = qeff.clamp %q {min = -1.5 : f64, max = 1.5 : f64}
        : (tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, F64Attr:$min, F64Attr:$max);
  let results = (outs QEff_FloatTensor:$result);
  // QEffCanonicalize.td: nested clamps.
  let hasCanonicalizer = 1;
}

def QEff_SoftcapOp : QEff_PureOp<"softcap", [SameOperandsAndResultType]> {
  let summary = "Soft-capping: cap * tanh(input / cap)";
  let description = [{
    `result = cap * tanh(input / cap)` with `cap > 0`: Gemma 2's
    `final_logit_softcapping` on the logits (the attention scores' cap is the
    `softcap` attribute of `qeff.attention`). Lowers to `Div`/`Tanh`/`Mul`.

    ```mlir
    %l = qeff.softcap %logits {cap = 3.0e+01 : f64}
        : (tensor<?x?x384xf32>) -> tensor<?x?x384xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$input, F64Attr:$cap);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_SigmoidGateOp : QEff_PureOp<"sigmoid_gate"> {
  let summary = "sigmoid(gate) * input, gate broadcast over the last axis";
  let description = [{
    `result = sigmoid(gate) * input` for `gate` `[..., 1]` and `input`
    `[..., hidden]` (same leading dimensions): Qwen2-MoE's shared expert,
    weighted per token by `sigmoid(shared_expert_gate(x))`. The result has
    the input's type. Lowers to `Sigmoid` + `Mul`.

    ```mlir
    %s = qeff.sigmoid_gate %g, %y
        : (tensor<?x?x1xf32>, tensor<?x?x64xf32>) -> tensor<?x?x64xf32>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$gate, QEff_FloatTensor:$input);
  let results = (outs QEff_FloatTensor:$result);
}

def QEff_StackOp : QEff_PureOp<"stack"> {
  let summary = "Stack tensors of one type along a new leading axis";
  let description = [{
    `result[i] = inputs[i]`: `N` operands of one type `[d...]` give
    `[N, d...]`. Joins weights a checkpoint stores one per head (StableLM's
    `q_layernorm.norms.<h>.weight`) into the `[heads, head_dim]` weight of a
    per-head `qeff.layer_norm`. Lowers to `Unsqueeze` + `Concat(axis = 0)`.

    ```mlir
    %w = qeff.stack %w0, %w1 : (tensor<16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
    ```
  }];
  let arguments = (ins Variadic<QEff_FloatTensor>:$inputs);
  let results = (outs QEff_FloatTensor:$result);
}

include "dialects/QEff/QEffSamplerOps.td"

#endif // QEFF_DIALECT_QEFF_OPS_TD
