//===- QEffSamplerOps.td - on-device sampling ops ----------*- tablegen -*-===//
//
// Part of qeff. The sampler the qeff-on-device-sampling pass appends after
// the logits. Included from QEffOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_QEFF_SAMPLEROPS_TD
#define QEFF_DIALECT_QEFF_SAMPLEROPS_TD

def QEff_TokenMaskUpdateOp : QEff_PureOp<"token_mask_update"> {
  let summary = "Record the tokens a run feeds in a per-sequence vocabulary mask";
  let description = [{
    `mask` `[rows, vocab]` (i1) marks, per sequence, the tokens it has seen:
    the retained penalty buffers of on-device sampling. For each row `b` of
    the run (cache row `batch_index[b, 0]` with continuous batching, else
    `b`), a run that feeds position 0 starts a new sequence and clears the
    row first; then every token `ids[b, s]` with `positions[b, s] >= 0` and
    `0 <= ids[b, s] < vocab` is set. With `generated_only` only decode runs
    (a run of one token per row) record their token, so the mask holds the
    generated tokens and not the prompt (the presence penalty's buffer);
    prefill runs still clear. Rows with no valid token and idle lanes
    (`batch_index < 0`) leave the mask unchanged. `result` is the updated
    mask, `rows` `[batch, vocab]` the updated rows of the run's sequences
    (what the sampler reads).

    ```mlir
    %m, %rows = qeff.token_mask_update %mask, %ids, %pos, %batch_index
        : (tensor<?x32xi1>, tensor<?x?xi64>, tensor<?x?xi64>, tensor<?x1xi64>)
        -> (tensor<?x32xi1>, tensor<?x32xi1>)
    ```
  }];
  let arguments = (ins QEff_MaskTensor:$mask, QEff_IndexTensor:$ids,
                   QEff_IndexTensor:$positions,
                   Optional<QEff_IndexTensor>:$batch_index,
                   UnitAttr:$generated_only);
  let results = (outs QEff_MaskTensor:$result, QEff_MaskTensor:$rows);
}

def QEff_SampleOp : QEff_PureOp<"sample"> {
  let summary = "Choose each row's next token from its logits (on-device sampling)";
  let description = [{
    The sampler of QEfficient's on-device sampling
    (`QEfficient/transformers/sampler/sampler.py`), for `logits`
    `[batch, 1, vocab]`, per-row parameters `[batch, 1]` and
    `random_numbers` `[batch, max_top_k_ids]` uniforms in (0, 1):

    1. repetition penalty where `repetition_mask[b, v]`: a positive logit is
       divided by it, a negative one multiplied; presence penalty
       subtracted where `presence_mask[b, v]`;
    2. greedy: the first index of the largest penalized logit;
    3. temperature (`0` means greedy; the logits are divided by it
       otherwise), then the `max_top_k_ids` largest (TopK, lower index
       first on ties), in descending order;
    4. top-k keeps ranks `< top_ks` (`top_ks <= 0` or larger than
       `max_top_k_ids`: all of them); top-p keeps ranks whose preceding
       probability mass (softmax over the kept top-k) is `< top_ps`; min-p
       keeps ranks whose probability is `>= min_ps` times the largest;
       the rest become `-inf`;
    5. Gumbel-max: the rank maximizing `value - log(-log(u))`, `u` the
       row's uniform of that rank; its token.

    `result[b, 0]` is the greedy token where `temperatures[b, 0] == 0`,
    else the sampled one.

    ```mlir
    %t = qeff.sample %logits, %rep, %pres, %rp, %pp, %temp, %k, %p, %minp, %u
        {max_top_k_ids = 4 : i64}
        : (tensor<?x1x32xf32>, tensor<?x32xi1>, tensor<?x32xi1>,
           tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x1xi64>,
           tensor<?x1xf32>, tensor<?x1xf32>, tensor<?x4xf32>) -> tensor<?x1xi64>
    ```
  }];
  let arguments = (ins QEff_FloatTensor:$logits,
                   QEff_MaskTensor:$repetition_mask,
                   QEff_MaskTensor:$presence_mask,
                   QEff_FloatTensor:$repetition_penalties,
                   QEff_FloatTensor:$presence_penalties,
                   QEff_FloatTensor:$temperatures,
                   QEff_IndexTensor:$top_ks,
                   QEff_FloatTensor:$top_ps,
                   QEff_FloatTensor:$min_ps,
                   QEff_FloatTensor:$random_numbers,
                   I64Attr:$max_top_k_ids);
  let results = (outs QEff_IndexTensor:$result);
}

#endif // QEFF_DIALECT_QEFF_SAMPLEROPS_TD
