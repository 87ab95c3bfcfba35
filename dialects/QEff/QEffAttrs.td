//===- QEffAttrs.td - qeff enums and attributes ----------------*- tablegen -*-===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_DIALECT_QEFF_ATTRS_TD
#define QEFF_DIALECT_QEFF_ATTRS_TD

include "dialects/QEff/QEffDialect.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def QEff_WeightLayout : I32EnumAttr<"WeightLayout", "layout of a linear weight", [
    I32EnumAttrCase<"out_in", 0>,   // torch.nn.Linear: [out_features, in_features]
    I32EnumAttrCase<"in_out", 1>,   // transformers Conv1D (GPT-2 family): [in, out]
  ]> {
  let cppNamespace = "::mlir::qeff";
  let genSpecializedAttr = 0;
}
def QEff_WeightLayoutAttr : EnumAttr<QEff_Dialect, QEff_WeightLayout, "weight_layout">;

def QEff_RotaryStyle : I32EnumAttr<"RotaryStyle", "pairing of rotary dimensions", [
    I32EnumAttrCase<"half", 0>,         // (x[i], x[i + d/2]): Llama, Mistral, NeoX
    I32EnumAttrCase<"interleaved", 1>,  // (x[2i], x[2i + 1]): GPT-J, CodeGen
  ]> {
  let cppNamespace = "::mlir::qeff";
  let genSpecializedAttr = 0;
}
def QEff_RotaryStyleAttr : EnumAttr<QEff_Dialect, QEff_RotaryStyle, "rotary_style">;

def QEff_Activation : I32EnumAttr<"Activation", "activation function", [
    I32EnumAttrCase<"silu", 0>,
    I32EnumAttrCase<"gelu", 1>,       // exact, erf based
    I32EnumAttrCase<"gelu_tanh", 2>,  // tanh approximation (gelu_new, gelu_pytorch_tanh)
    I32EnumAttrCase<"relu", 3>,
    I32EnumAttrCase<"relu2", 4>,      // relu(x)^2 (Persimmon, Nemotron)
  ]> {
  let cppNamespace = "::mlir::qeff";
  let genSpecializedAttr = 0;
}
def QEff_ActivationAttr : EnumAttr<QEff_Dialect, QEff_Activation, "activation">;

def QEff_KVLayout : I32EnumAttr<"KVLayout", "layout of a KV cache tensor", [
    I32EnumAttrCase<"bhsd", 0>,  // [batch, kv_heads, seq, head_dim]: the device layout
    I32EnumAttrCase<"bshd", 1>,  // [batch, seq, kv_heads, head_dim]
    I32EnumAttrCase<"sbhd", 2>,  // [seq, batch, kv_heads, head_dim]
    I32EnumAttrCase<"bsd", 3>,   // [batch, seq, head_dim]: multi-query, one kv head
  ]> {
  let cppNamespace = "::mlir::qeff";
  let genSpecializedAttr = 0;
}
def QEff_KVLayoutAttr : EnumAttr<QEff_Dialect, QEff_KVLayout, "kv_layout">;

def QEff_RopeScalingKind : I32EnumAttr<"RopeScalingKind", "rotary frequency scaling", [
    I32EnumAttrCase<"linear", 0>,    // inv_freq / factor
    I32EnumAttrCase<"llama3", 1>,    // Llama 3.1 band-wise scaling
    I32EnumAttrCase<"yarn", 2>,      // YaRN ramp + attention factor on cos/sin
    I32EnumAttrCase<"dynamic", 3>,   // dynamic NTK: base grows with the sequence
    I32EnumAttrCase<"longrope", 4>,  // Phi-3 short/long factor lists
  ]> {
  let cppNamespace = "::mlir::qeff";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def QEff_RopeScalingAttr : QEff_Attr<"RopeScaling", "rope_scaling"> {
  let summary = "Scaling of the rotary inverse frequencies (config `rope_scaling`)";
  let description = [{
    Mirrors the `rope_scaling` object of a Hugging Face config, resolved by
    the importer (defaults filled in, the attention factor computed), as
    `transformers` computes it (`modeling_rope_utils.py`):

    * `linear` divides every inverse frequency by `factor`.
    * `llama3` keeps high frequencies, divides low frequencies by `factor`
      and interpolates between, using `low_freq_factor`, `high_freq_factor`
      and `original_max_position`.
    * `yarn` mixes the unscaled and the `1 / factor` frequencies along a
      ramp between the dimensions `beta_fast` and `beta_slow` rotate
      through at `original_max_position` positions (defaults 32 and 1); cos
      and sin are multiplied by `attention_factor`. Static. The ramp's ends
      are rounded to whole dimensions (floor, ceil) unless `truncate` is
      false (transformers >= 4.55, GPT-OSS).
    * `dynamic` (NTK) depends on the sequence length `L` of each forward
      call: for `L > original_max_position` (the config's
      `max_position_embeddings`) the base becomes
      `theta * (factor * L / original_max_position - (factor - 1)) ^
      (d / (d - 2))`; otherwise the frequencies are the unscaled ones.
    * `longrope` divides frequency `i` by `short_factor[i]` when the call's
      `L <= original_max_position`, by `long_factor[i]` when it is larger;
      cos and sin are multiplied by `attention_factor` either way.

    For `dynamic` and `longrope`, `L` is the largest position of the call
    plus one, taken per batch row (`qeff.rotary`).

    ```mlir
    #qeff.rope_scaling<kind = linear, factor = 2.0 : f64>
    #qeff.rope_scaling<kind = llama3, factor = 8.0 : f64,
                       low_freq_factor = 1.0 : f64, high_freq_factor = 4.0 : f64,
                       original_max_position = 8192>
    #qeff.rope_scaling<kind = yarn, factor = 4.0 : f64, original_max_position = 32768,
                       attention_factor = 1.1386 : f64>
    #qeff.rope_scaling<kind = longrope, factor = 1.0 : f64, original_max_position = 4096,
                       attention_factor = 1.19 : f64,
                       short_factor = [1.0, 1.0], long_factor = [1.5, 4.0]>
    ```
  }];
  let parameters = (ins
    EnumParameter<QEff_RopeScalingKind>:$kind,
    "::mlir::FloatAttr":$factor,
    OptionalParameter<"::mlir::FloatAttr">:$low_freq_factor,
    OptionalParameter<"::mlir::FloatAttr">:$high_freq_factor,
    DefaultValuedParameter<"int64_t", "0">:$original_max_position,
    OptionalParameter<"::mlir::FloatAttr">:$beta_fast,
    OptionalParameter<"::mlir::FloatAttr">:$beta_slow,
    OptionalParameter<"::mlir::FloatAttr">:$attention_factor,
    OptionalParameter<"::mlir::DenseF64ArrayAttr">:$short_factor,
    OptionalParameter<"::mlir::DenseF64ArrayAttr">:$long_factor,
    OptionalParameter<"::mlir::BoolAttr">:$truncate);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    double getFactorValue() const { return getFactor().getValueAsDouble(); }
    /// llama3 band limits, with the transformers defaults (1 and 4).
    double getLowFreqFactorValue() const {
      return getLowFreqFactor() ? getLowFreqFactor().getValueAsDouble() : 1.0;
    }
    double getHighFreqFactorValue() const {
      return getHighFreqFactor() ? getHighFreqFactor().getValueAsDouble() : 4.0;
    }
    /// yarn correction range, with the transformers defaults (32 and 1).
    double getBetaFastValue() const {
      return getBetaFast() ? getBetaFast().getValueAsDouble() : 32.0;
    }
    double getBetaSlowValue() const {
      return getBetaSlow() ? getBetaSlow().getValueAsDouble() : 1.0;
    }
    /// The factor on cos and sin (1 when absent).
    double getAttentionFactorValue() const {
      return getAttentionFactor() ? getAttentionFactor().getValueAsDouble()
                                  : 1.0;
    }
    /// Whether the frequencies depend on the call's sequence length.
    bool isSeqLenDependent() const {
      return getKind() == RopeScalingKind::dynamic ||
             getKind() == RopeScalingKind::longrope;
    }
  }];
}

def QEff_ModelAttr : QEff_Attr<"Model", "model"> {
  let summary = "The imported model: architecture class, family and config";
  let description = [{
    Attached to the module as `qeff.model`. `architecture` is the Hugging Face
    class named by `config.json` (`architectures[0]`), `family` the qeff
    importer that serves it, `config` the config values the ops were built
    from (the subset the family reads, with defaults filled in, under
    transformers' canonical names; the norm epsilon as `rms_norm_eps` or
    `layer_norm_eps`, rotary settings only when the model rotates, and
    `attention_bias` / `qkv_bias` / `mlp_bias` as the projections have
    them), and
    `checkpoint` the safetensors files that `qeff.weight` names resolve in,
    relative to the checkpoint directory.

    ```mlir
    module attributes {qeff.model = #qeff.model<
        architecture = "MistralForCausalLM", family = "mistral",
        config = {hidden_size = 64 : i64, num_hidden_layers = 2 : i64},
        checkpoint = ["model.safetensors"]>} {
    }
    ```
  }];
  let parameters = (ins
    "::mlir::StringAttr":$architecture,
    "::mlir::StringAttr":$family,
    "::mlir::DictionaryAttr":$config,
    "::mlir::ArrayAttr":$checkpoint);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The name of the module attribute that carries this.
    static constexpr ::llvm::StringLiteral getAttrName() { return "qeff.model"; }
  }];
}

#endif // QEFF_DIALECT_QEFF_ATTRS_TD
