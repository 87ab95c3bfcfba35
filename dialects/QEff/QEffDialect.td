//===- QEffDialect.td - the qeff dialect definition ------------*- tablegen -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_QEFF_DIALECT_TD
#define QEFF_DIALECT_QEFF_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def QEff_Dialect : Dialect {
  let name = "qeff";
  let cppNamespace = "::mlir::qeff";
  let summary = "Decoder-only transformer ops at Hugging Face module granularity";
  let description = [{
    The `qeff` dialect models a Hugging Face causal language model at the
    granularity of its `torch.nn.Module` classes: embedding, linear, norms,
    rotary embedding, attention, MLP activations, mixture of experts and the KV
    cache. It has two forms that share the ops:

    * **HF semantics**, produced by the importers in `frontend/HF`: dynamic batch
      and sequence dimensions, a `qeff.kv_concat` cache op that appends the new
      keys/values to `past` exactly as `transformers` does.
    * **Device semantics**, produced by the rewrites in `patterns/`: a fixed
      `ctx_len` cache written with `qeff.ctx_scatter`, read with
      `qeff.ctx_gather`, masked with `qeff.causal_mask`, logits of the last valid
      token selected with `qeff.last_token_select`, and fp16 overflow guarded
      with `qeff.fp16_clamp`.

    Weights are never stored in the IR: `qeff.weight` names a checkpoint tensor
    and the exporter streams its bytes. The module attribute `qeff.model`
    (`#qeff.model<...>`) carries the architecture class and the config values.
  }];
  let useDefaultAttributePrinterParser = 1;
  let usePropertiesForAttributes = 1;
}

class QEff_Op<string mnemonic, list<Trait> traits = []>
    : Op<QEff_Dialect, mnemonic, traits>;

class QEff_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<QEff_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

#endif // QEFF_DIALECT_QEFF_DIALECT_TD
