//===- DecoderBuilder.h - building blocks of HF decoder importers -*- C++ -*-===//
//
// Part of qeff. The mechanism every family importer is written in: a builder
// that creates `func.func @forward` with the HF-semantics signature and offers
// one call per Hugging Face module (embedding, linear, norms, attention with
// its KV cache, MLPs, LM head). A family file states only what is particular
// to it: weight names, norm and activation variants, rotary style, biases.
//
// Weight shapes are derived from the config and checked against the
// checkpoint. A missing or mis-shaped tensor is reported at once (naming the
// tensor and both shapes) and the builder carries on with the expected shape,
// so one import lists every problem; finish() then fails.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_IMPORTERS_DECODERBUILDER_H
#define QEFF_FRONTEND_HF_IMPORTERS_DECODERBUILDER_H

#include "dialects/QEff/QEffOps.h"
#include "frontend/HF/Checkpoint.h"
#include "frontend/HF/ModelConfig.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringSet.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace qeff::hf {

struct Family;

/// A fused Q/K/V projection: one Linear whose output holds `groups` equal
/// chunks, each chunk holding the heads of Q, K and V that belong to it in
/// the order `order` ("qkv", or "qvk" for CodeGen). Every layout in the HF
/// families is one of these:
///   [Q | K | V] (Phi-3, GPT-2, GPT-BigCode MQA, Falcon MQA, MPT): groups 1;
///   per KV head [q_0..q_{g-1}, k, v] (Falcon new decoder): groups = kv heads;
///   per head (q, k, v) (Falcon-RW, GPT-BigCode MHA): groups = heads;
///   CodeGen's mp_num chunks of (Q, V, K): groups = mp_num, order "qvk".
/// Within a chunk Q has heads / groups heads, K and V kv_heads / groups.
struct FusedQKV {
  /// Linear module prefix ("transformer.h.0.attn.c_attn").
  std::string prefix;
  int64_t groups = 1;
  std::string order = "qkv";
};

/// Norms on the queries and keys, applied before rotary: after the head
/// split, or (WholeRMS) on the whole projection before it.
struct QKNorm {
  enum Kind {
    None,
    /// One LayerNorm over head_dim shared by all heads: `<q>.weight` /
    /// `<q>.bias` of `[head_dim]` (Persimmon).
    Shared,
    /// One LayerNorm per head: `<q>.weight` of `[heads, head_dim]` (Cohere).
    PerHead,
    /// One LayerNorm per head, stored one tensor per head:
    /// `<q>.norms.<h>.weight` (StableLM).
    PerHeadStacked,
    /// One RMSNorm over head_dim shared by all heads, `<q>.weight` of
    /// `[head_dim]`, `(weightOffset + w)` (Qwen3; Gemma 3 with offset 1).
    SharedRMS,
    /// One RMSNorm over the whole q (k) projection, `[heads * head_dim]`,
    /// before the head split (OLMo 2).
    WholeRMS,
  } kind = None;
  /// Module prefixes for the query and key norms.
  std::string q, k;
  double eps = 1e-5;
  bool bias = false;
  double weightOffset = 0.0;
};

/// The projections of one self-attention module.
struct AttentionSpec {
  /// Linear module prefixes ("model.layers.0.self_attn.q_proj"); ".weight"
  /// and ".bias" are appended. Ignored when `fused` is set.
  std::string q, k, v, o;
  /// Set: Q, K and V come from one fused projection.
  std::optional<FusedQKV> fused;
  bool qkvBias = false;
  bool oBias = false;
  /// `out_in` (torch.nn.Linear) or `in_out` (GPT-2's Conv1D).
  mlir::qeff::WeightLayout layout = mlir::qeff::WeightLayout::out_in;
  mlir::qeff::RotaryStyle rotaryStyle = mlir::qeff::RotaryStyle::half;
  /// Features rotated per head; 0 disables rotary embeddings.
  int64_t rotaryDim = 0;
  /// 0: no sliding window.
  int64_t slidingWindow = 0;
  /// 0: 1 / sqrt(head_dim).
  double scale = 0.0;
  /// ALiBi: one slope per query head, added as `slope * key_position` to the
  /// scaled scores. Empty: no ALiBi.
  std::vector<double> alibiSlopes;
  /// Non-zero: q, k and v are clamped to [-clipQkv, clipQkv] right after the
  /// projection (OLMo, DBRX).
  double clipQkv = 0.0;
  QKNorm qkNorm;
  /// Non-zero: scores are soft-capped, cap * tanh(s / cap) (Gemma 2).
  double softcap = 0.0;
  /// Non-zero: the rotary base instead of config rope_theta (Gemma 3's
  /// local layers: rope_local_base_freq).
  double ropeTheta = 0.0;
  /// Rotary without the config's rope_scaling (Gemma 3's local layers).
  bool unscaledRotary = false;
  /// Non-empty: the checkpoint tensor `[num_heads]` of attention sinks, one
  /// more logit per head in the softmax (GPT-OSS's `self_attn.sinks`).
  std::string sinks;
};

/// A normalisation module: RMSNorm (`weight_offset` 1 for Gemma's (1 + w)),
/// LayerNorm (with or without bias; `weight_offset` 1 for Nemotron's
/// LayerNorm1P) or a LayerNorm without weight and bias (OLMo; no tensors).
struct NormSpec {
  enum Kind { RMS, Layer, NonParametric } kind = RMS;
  double eps = 1e-6;
  double weightOffset = 0.0;
  bool bias = true;
};

/// A sparse MoE block: router `<prefix>.<router>.weight`, experts
/// `<prefix>.experts.<e>.{<gate>,<up>,<down>}.weight`, or, with
/// `fusedExperts`, the fused tensors `<prefix>.<fusedExperts>.<gate>` (etc.).
struct MoESpec {
  std::string prefix;
  std::string router = "gate";
  std::string gate = "w1", up = "w3", down = "w2";
  /// Non-empty: the experts are stored fused, one tensor per projection of
  /// `[num_experts * intermediate, hidden]` named `<prefix>.<fusedExperts>.
  /// <gate|up|down>` (no `.weight`; DBRX's `ffn.experts.mlp.{w1,v1,w2}`).
  /// Expert e's weights are rows [e * intermediate, (e + 1) * intermediate)
  /// of each (`qeff.weight {rows}`); the down projection is applied as
  /// `h_e @ rows_e` (its rows are the transpose of a Linear weight, so it
  /// is read `{transpose}`).
  std::string fusedExperts;
  int64_t numExperts = 0, topK = 0;
  /// 0: config intermediate_size.
  int64_t intermediateSize = 0;
  /// Renormalise the top-k probabilities to sum to 1 (Mixtral); false keeps
  /// the raw softmax values (Qwen2-MoE with norm_topk_prob false).
  bool normalizeTopK = true;
  /// Set: the experts' activation (DBRX's ffn_act_fn); else hidden_act.
  std::optional<mlir::qeff::Activation> activation;
};

/// ALiBi slopes as BLOOM and Falcon compute them: 2^(-8k/n) for the largest
/// power of two n <= heads, then the odd powers of 2^(-4/n) for the rest.
std::vector<double> bloomAlibiSlopes(int64_t heads);
/// ALiBi slopes as MPT computes them (alibi_bias_max 8): 2^(-8k/n) for the
/// next power of two n >= heads, reordered odd-then-even and truncated.
std::vector<double> mptAlibiSlopes(int64_t heads);

class DecoderBuilder {
public:
  /// Creates the module (with `qeff.model`) and the `@forward` function.
  DecoderBuilder(mlir::MLIRContext *context, const Family &family,
                 const ModelConfig &config, const Checkpoint &checkpoint,
                 std::string checkpointDir, std::string configText);

  const ModelConfig &config() const { return config_; }
  mlir::OpBuilder &builder() { return builder_; }

  /// Every op is located at the Hugging Face module it comes from (a NameLoc
  /// `model.layers.3.post_attention_layernorm`), which fp32-scopes, the layer
  /// outliner and the ONNX node names read. Ops of no module of their own
  /// (residual adds, scales, gates) take the innermost open scope: the
  /// decoder layer inside preNormBlock / postNormBlock / sandwichBlock, a
  /// scope a family opens (`Scope mlp(b, p + "mlp")`), else the model's base
  /// module (the parent of the token embedding's: `model`, `transformer`,
  /// `model.decoder`).
  class Scope {
  public:
    Scope(DecoderBuilder &b, std::string path) : b_(b) {
      b_.scopes_.push_back(std::move(path));
    }
    ~Scope() { b_.scopes_.pop_back(); }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    DecoderBuilder &b_;
  };
  /// The location of the innermost scope.
  mlir::Location scopeLoc();

  /// `[batch, seq]` int64 arguments of @forward.
  mlir::Value inputIds() const;
  mlir::Value positionIds() const;

  /// A `qeff.weight` of `shape`, checked against the checkpoint.
  mlir::Value weight(llvm::StringRef name, llvm::ArrayRef<int64_t> shape);
  /// Rows [start, start + count) of the checkpoint tensor `name` of
  /// `shape` (`qeff.weight {rows}`), transposed with `transpose`. A 3-D
  /// `shape` [n, rows, cols] (stacked expert matrices) is read as
  /// [n * rows, cols].
  mlir::Value weightRows(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                         int64_t start, int64_t count, bool transpose = false);
  /// Whether the checkpoint holds `name`.
  bool hasTensor(llvm::StringRef name) const;

  mlir::Value embedding(llvm::StringRef tableName);
  /// Learned absolute position embeddings: `table[position_ids]` for a
  /// `[positions, hidden]` table (GPT-2's `wpe`). Padding (position -1 on
  /// the device) reads the last row; its output is don't-care.
  mlir::Value positionEmbedding(llvm::StringRef tableName, int64_t positions);
  /// `prefix.weight` `[out, in]` (+ `prefix.bias` `[out]`).
  mlir::Value linear(mlir::Value x, llvm::StringRef prefix, int64_t out,
                     bool bias,
                     mlir::qeff::WeightLayout layout =
                         mlir::qeff::WeightLayout::out_in);
  mlir::Value rmsNorm(mlir::Value x, llvm::StringRef weightName, double eps,
                      double weightOffset = 0.0);
  mlir::Value layerNorm(mlir::Value x, llvm::StringRef prefix, double eps,
                        bool bias = true, double weightOffset = 0.0);
  /// A LayerNorm without weight and bias (OLMo).
  mlir::Value standardize(mlir::Value x, llvm::StringRef path, double eps);
  /// `prefix.weight` (+ `prefix.bias` for a LayerNorm with bias).
  mlir::Value norm(mlir::Value x, llvm::StringRef prefix, const NormSpec &spec);
  /// Self-attention of decoder layer `layer` with its KV cache: projections,
  /// head split, rotary, `qeff.kv_concat` on past_key/value.<layer>,
  /// attention, head merge, output projection. Records the layer's present
  /// key/value as outputs of @forward.
  mlir::Value selfAttention(int64_t layer, mlir::Value x,
                            const AttentionSpec &spec);
  /// `down(act(gate(x)) * up(x))`.
  /// `inter` 0: config intermediate_size.
  mlir::Value gatedMlp(mlir::Value x, llvm::StringRef gate, llvm::StringRef up,
                       llvm::StringRef down, bool bias, int64_t inter = 0);
  /// `down(act(gate) * up)` with `[gate | up] = gateUp(x)` (Phi-3).
  mlir::Value fusedGatedMlp(mlir::Value x, llvm::StringRef gateUp,
                            llvm::StringRef down, bool bias);
  /// `fcOut(act(fcIn(x)))`, the plain MLP of GPT-2, GPT-J, Phi, Falcon, MPT.
  mlir::Value mlp(mlir::Value x, llvm::StringRef fcIn, llvm::StringRef fcOut,
                  bool bias, mlir::qeff::Activation act,
                  mlir::qeff::WeightLayout layout =
                      mlir::qeff::WeightLayout::out_in);
  /// A sparse MoE block (Mixtral): router `<prefix>.gate`, experts
  /// `<prefix>.experts.<e>.{w1,w3,w2}`, softmax top-k, renormalised.
  mlir::Value moe(mlir::Value x, llvm::StringRef prefix, int64_t numExperts,
                  int64_t topK);
  /// A sparse MoE block as `spec` names it.
  mlir::Value moe(mlir::Value x, const MoESpec &spec);
  /// `sigmoid(gate) * x` for a `[..., 1]` gate (Qwen2-MoE's shared expert).
  mlir::Value sigmoidGate(mlir::Value gate, mlir::Value x);
  mlir::Value add(mlir::Value a, mlir::Value b);
  mlir::Value add(mlir::Value a, mlir::Value b, mlir::Location loc);
  /// A post-norm block (OPT with do_layer_norm_before = false):
  /// `h = n1(h + attn(h)); h = n2(h + mlp(h))`.
  mlir::Value postNormBlock(mlir::Value h, const NormSpec &norm,
                            llvm::StringRef attnNorm, llvm::StringRef mlpNorm,
                            llvm::function_ref<mlir::Value(mlir::Value)> attn,
                            llvm::function_ref<mlir::Value(mlir::Value)> mlp);
  /// A sandwich block (Gemma 2): `h += post1(attn(pre1(h)));
  /// h += post2(mlp(pre2(h)))`. With `preAttn` and `preMlp` empty, the
  /// branches take `h` unnormalised (OLMo 2's post-branch norms).
  mlir::Value sandwichBlock(mlir::Value h, const NormSpec &norm,
                            llvm::StringRef preAttn, llvm::StringRef postAttn,
                            llvm::StringRef preMlp, llvm::StringRef postMlp,
                            llvm::function_ref<mlir::Value(mlir::Value)> attn,
                            llvm::function_ref<mlir::Value(mlir::Value)> mlp);
  /// An embedding table `[vocab, width]` when its width is not hidden_size
  /// (OPT's word_embed_proj_dim).
  mlir::Value embedding(llvm::StringRef tableName, int64_t width);
  /// Learned positions read at `position + offset` (OPT: 2).
  mlir::Value positionEmbedding(llvm::StringRef tableName, int64_t positions,
                                int64_t offset);
  /// The logits finish() emits are multiplied by `scale` (Cohere's
  /// logit_scale) and then, with `softcap` > 0, soft-capped (Gemma 2).
  void setLogitTransform(double scale, double softcap);
  /// Records transformers' own cache layout where it is not bhsd (BLOOM:
  /// keys [batch * heads, head_dim, seq]) as the module attribute
  /// `qeff.hf_cache_layout`, which the compile manifest reports.
  void setHFCacheLayout(llvm::StringRef key, llvm::StringRef value);
  /// One pre-norm decoder block around the residual stream `h`:
  /// sequential `h += attn(n1(h)); h += mlp(n2(h))`, or parallel
  /// `h + attn(n1(h)) + mlp(n2(h))` (GPT-J, Phi, CodeGen, Falcon), where
  /// `n2` is `n1` when `mlpNorm` is empty (one shared LayerNorm).
  /// The block is the scope of its residual adds: `layer`, or when empty the
  /// module holding `attnNorm` (`model.layers.3.input_layernorm` ->
  /// `model.layers.3`).
  mlir::Value preNormBlock(mlir::Value h, const NormSpec &norm,
                           llvm::StringRef attnNorm, llvm::StringRef mlpNorm,
                           bool parallel,
                           llvm::function_ref<mlir::Value(mlir::Value)> attn,
                           llvm::function_ref<mlir::Value(mlir::Value)> mlp,
                           llvm::StringRef layer = "");
  mlir::Value scale(mlir::Value x, double factor);
  /// The activation named by config `hidden_act` (an error if unknown).
  mlir::qeff::Activation activation();
  /// The activation named by config field `field`, `fallback` when absent.
  mlir::qeff::Activation activation(llvm::StringRef field,
                                    llvm::StringRef fallback);
  /// The activation a transformers ACT2FN name denotes; reports an error at
  /// config field `field` if unknown.
  mlir::qeff::Activation activationNamed(llvm::StringRef name,
                                         llvm::StringRef field);

  /// Emits the LM head (`[batch, seq, vocab]` logits), returns them and the
  /// present caches from @forward, and hands over the module. Null when any
  /// error was reported.
  mlir::OwningOpRef<mlir::ModuleOp> finish(mlir::Value hidden,
                                           llvm::StringRef lmHeadWeight,
                                           llvm::StringRef lmHeadBias = "");

  /// Reports an error at the config field (config.json:line:col).
  void configError(llvm::StringRef field, const llvm::Twine &message);

private:
  /// `qeff.dims` of an @forward argument or result: the ONNX dim_param of
  /// each dynamic dimension ("" for static ones).
  mlir::ArrayAttr dimNames(llvm::ArrayRef<llvm::StringRef> names);
  mlir::Location configLoc(llvm::StringRef field);
  mlir::Location moduleLoc(llvm::StringRef modulePath);
  /// The location of the module owning a tensor (`model.norm.weight` ->
  /// `model.norm`); the first embedding table's parent becomes the root
  /// scope.
  mlir::Location tensorModuleLoc(llvm::StringRef tensorName);
  /// Checks the checkpoint tensor `name` against `shape` (each problem
  /// reported once per tensor) and returns its storage element type.
  mlir::Type checkedStorage(llvm::StringRef name,
                            llvm::ArrayRef<int64_t> shape, mlir::Location loc);
  mlir::Location weightLoc(llvm::StringRef name);
  mlir::RankedTensorType tensorType(llvm::ArrayRef<int64_t> shape,
                                    mlir::Type element = {});
  mlir::Value heads(mlir::Value x, int64_t numHeads, llvm::StringRef path);
  mlir::Value rotary(mlir::Value x, const AttentionSpec &spec,
                     llvm::StringRef path);
  /// `#qeff.rope_scaling` of the config's rope_scaling (null for none).
  mlir::qeff::RopeScalingAttr ropeScalingAttr();
  /// The positions a static rotary table covers (DecoderBlocks.cpp).
  int64_t rotaryPositions() const;
  /// clamp(x, -spec.clipQkv, spec.clipQkv) when clipQkv is set, else x.
  mlir::Value clipQkv(mlir::Value x, const AttentionSpec &spec,
                      llvm::StringRef path);
  /// The q (`isKey` false) or k norm of `spec.qkNorm` on [B, H, S, D].
  mlir::Value qkNorm(mlir::Value x, const AttentionSpec &spec, bool isKey);
  /// The logits after setLogitTransform's scale and softcap.
  mlir::Value transformLogits(mlir::Value logits);
  /// Q, K, V in [batch, heads, seq, head_dim] from a fused projection.
  std::array<mlir::Value, 3> splitFusedQKV(mlir::Value x,
                                           const AttentionSpec &spec);
  void fail() { failed_ = true; }

  mlir::MLIRContext *context_;
  const Family &family_;
  const ModelConfig &config_;
  const Checkpoint &checkpoint_;
  std::string checkpointDir_;
  std::string configPath_;
  std::string configText_;
  /// config.json (a text file with lines), not a GGUF file's metadata.
  bool configIsText_ = true;
  mlir::OpBuilder builder_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mutable mlir::func::FuncOp forward_;
  llvm::SmallVector<mlir::Value> presents_;
  /// Open scopes (innermost last) and the model's base module.
  std::vector<std::string> scopes_;
  std::string rootScope_;
  /// Tensors already reported as missing or mis-shaped.
  llvm::StringSet<> reportedTensors_;
  mlir::ArrayAttr checkpointFiles_;
  /// What the built ops use, for `#qeff.model` (set by finish()).
  bool usedRotary_ = false, usedRmsNorm_ = false;
  bool usedQkvBias_ = false, usedOBias_ = false, usedMlpBias_ = false;
  bool failed_ = false;
  double logitScale_ = 0.0, logitSoftcap_ = 0.0;
};

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_IMPORTERS_DECODERBUILDER_H
