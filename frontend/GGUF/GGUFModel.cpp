//===- GGUFModel.cpp - a GGUF file as a Hugging Face checkpoint -----------===//
//
// Part of qeff. See GGUFModel.h. The metadata keys are llama.cpp's
// (gguf-py constants.py Keys.LLM / Keys.Attention / Keys.Rope); the tensor
// names its MODEL_TENSOR names, mapped to the HF names each architecture's
// transformers module uses.
//
//===----------------------------------------------------------------------===//

#include "frontend/GGUF/GGUFModel.h"

#include "frontend/GGUF/GGMLSource.h"
#include "frontend/GGUF/GGMLTypes.h"
#include "frontend/GGUF/GGUFTokenizer.h"
#include "frontend/Quant/QuantUtil.h"
#include "frontend/Tokenizer/Tokenizer.h"
#include "support/SafeFile.h"

#include "absl/strings/str_cat.h"

#include <nlohmann/json.hpp>

#include <charconv>
#include <cstring>
#include <unistd.h>

namespace qeff::gguf {

using quant::cat;

using OJson = nlohmann::ordered_json;

bool isGGUFPath(const std::string &path) {
  if (path.size() >= 5 && path.compare(path.size() - 5, 5, ".gguf") == 0)
    return true;
  uint64_t size = 0;
  std::string error;
  int fd = support::openRegularFile(path, size, error);
  if (fd < 0)
    return false;
  char magic[4] = {};
  bool gguf = size >= 4 && ::read(fd, magic, 4) == 4 && std::memcmp(magic, "GGUF", 4) == 0;
  ::close(fd);
  return gguf;
}

namespace {

/// The shortest decimal that reads back as the same f32: GGUF stores f32
/// epsilons (1e-05 becomes 9.99999975e-06); config.json gets the value the
/// converter was given.
double shortestF32(double value) {
  float f = static_cast<float>(value);
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), f);
  return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

enum class Kind {
  Plain,
  PermuteQ,   ///< llama: undo the Q row permutation (heads)
  PermuteK,   ///< llama: undo the K row permutation (KV heads)
  Transpose,  ///< GPT-2 Conv1D weights: [in, out] in HF
  MinusOne,   ///< Gemma norms: GGUF holds 1 + w
  FalconQKV,  ///< Falcon: [Q | K | V] back to HF's per-KV-head groups
  SplitHeads, ///< StableLM: [heads, head_dim] into one tensor per head
};

struct Rule {
  const char *gguf; ///< name after "blk.N." (layer) or the whole name
  const char *hf;   ///< name after the layer prefix, or the whole name
  Kind kind = Kind::Plain;
};

struct Arch {
  const char *name;
  const char *cls;
  const char *modelType;
  const char *layerPrefix; ///< HF prefix of layer N, "{N}" replaced
  std::vector<Rule> top, layer;
};

const std::vector<Arch> &archs() {
  static const std::vector<Arch> kArchs = [] {
    std::vector<Rule> llamaTop = {{"token_embd.weight", "model.embed_tokens.weight"},
                                  {"output_norm.weight", "model.norm.weight"},
                                  {"output.weight", "lm_head.weight"}};
    std::vector<Rule> llamaLayer = {
        {"attn_norm.weight", "input_layernorm.weight"},
        {"attn_q.weight", "self_attn.q_proj.weight", Kind::PermuteQ},
        {"attn_q.bias", "self_attn.q_proj.bias", Kind::PermuteQ},
        {"attn_k.weight", "self_attn.k_proj.weight", Kind::PermuteK},
        {"attn_k.bias", "self_attn.k_proj.bias", Kind::PermuteK},
        {"attn_v.weight", "self_attn.v_proj.weight"},
        {"attn_v.bias", "self_attn.v_proj.bias"},
        {"attn_output.weight", "self_attn.o_proj.weight"},
        {"attn_output.bias", "self_attn.o_proj.bias"},
        {"ffn_norm.weight", "post_attention_layernorm.weight"},
        {"ffn_gate.weight", "mlp.gate_proj.weight"},
        {"ffn_up.weight", "mlp.up_proj.weight"},
        {"ffn_down.weight", "mlp.down_proj.weight"}};
    std::vector<Rule> plainLayer = llamaLayer;
    for (Rule &r : plainLayer)
      r.kind = Kind::Plain;
    std::vector<Rule> gemmaTop = {{"token_embd.weight", "model.embed_tokens.weight"},
                                  {"output_norm.weight", "model.norm.weight", Kind::MinusOne}};
    std::vector<Rule> gemmaLayer = plainLayer;
    for (Rule &r : gemmaLayer)
      if (std::strstr(r.gguf, "norm"))
        r.kind = Kind::MinusOne;
    std::vector<Rule> gemma2Layer = gemmaLayer;
    for (Rule &r : gemma2Layer)
      if (std::strcmp(r.gguf, "ffn_norm.weight") == 0)
        r.hf = "pre_feedforward_layernorm.weight";
    gemma2Layer.push_back({"post_attention_norm.weight", "post_attention_layernorm.weight",
                           Kind::MinusOne});
    gemma2Layer.push_back({"post_ffw_norm.weight", "post_feedforward_layernorm.weight",
                           Kind::MinusOne});
    std::vector<Rule> normBias = {{"attn_norm.bias", "input_layernorm.bias"},
                                  {"ffn_norm.bias", "post_attention_layernorm.bias"}};
    std::vector<Rule> starcoder2Layer = {
        {"attn_norm.weight", "input_layernorm.weight"},
        {"attn_norm.bias", "input_layernorm.bias"},
        {"attn_q.weight", "self_attn.q_proj.weight"},
        {"attn_q.bias", "self_attn.q_proj.bias"},
        {"attn_k.weight", "self_attn.k_proj.weight"},
        {"attn_k.bias", "self_attn.k_proj.bias"},
        {"attn_v.weight", "self_attn.v_proj.weight"},
        {"attn_v.bias", "self_attn.v_proj.bias"},
        {"attn_output.weight", "self_attn.o_proj.weight"},
        {"attn_output.bias", "self_attn.o_proj.bias"},
        {"ffn_norm.weight", "post_attention_layernorm.weight"},
        {"ffn_norm.bias", "post_attention_layernorm.bias"},
        {"ffn_up.weight", "mlp.c_fc.weight"},
        {"ffn_up.bias", "mlp.c_fc.bias"},
        {"ffn_down.weight", "mlp.c_proj.weight"},
        {"ffn_down.bias", "mlp.c_proj.bias"}};
    std::vector<Rule> stablelmLayer = plainLayer;
    stablelmLayer.insert(stablelmLayer.end(), normBias.begin(), normBias.end());
    stablelmLayer.push_back({"attn_q_norm.weight", "self_attn.q_layernorm.norms", Kind::SplitHeads});
    stablelmLayer.push_back({"attn_k_norm.weight", "self_attn.k_layernorm.norms", Kind::SplitHeads});
    // Qwen3: Qwen2's tensors less the q/k/v biases, plus one [head_dim]
    // RMSNorm weight each for queries and keys (convert_hf_to_gguf.py's
    // Qwen3Model: q_norm -> attn_q_norm, k_norm -> attn_k_norm; no permute).
    std::vector<Rule> qwen3Layer = plainLayer;
    qwen3Layer.push_back({"attn_q_norm.weight", "self_attn.q_norm.weight"});
    qwen3Layer.push_back({"attn_k_norm.weight", "self_attn.k_norm.weight"});
    std::vector<Rule> normTopBias = {{"token_embd.weight", "model.embed_tokens.weight"},
                                     {"output_norm.weight", "model.norm.weight"},
                                     {"output_norm.bias", "model.norm.bias"},
                                     {"output.weight", "lm_head.weight"}};
    return std::vector<Arch>{
        {"llama", "LlamaForCausalLM", "llama", "model.layers.{N}.", llamaTop, llamaLayer},
        {"qwen2", "Qwen2ForCausalLM", "qwen2", "model.layers.{N}.", llamaTop, plainLayer},
        {"qwen3", "Qwen3ForCausalLM", "qwen3", "model.layers.{N}.", llamaTop, qwen3Layer},
        {"gemma", "GemmaForCausalLM", "gemma", "model.layers.{N}.", gemmaTop, gemmaLayer},
        {"gemma2", "Gemma2ForCausalLM", "gemma2", "model.layers.{N}.", gemmaTop, gemma2Layer},
        {"phi3", "Phi3ForCausalLM", "phi3", "model.layers.{N}.", llamaTop,
         {{"attn_norm.weight", "input_layernorm.weight"},
          {"attn_qkv.weight", "self_attn.qkv_proj.weight"},
          {"attn_output.weight", "self_attn.o_proj.weight"},
          {"ffn_norm.weight", "post_attention_layernorm.weight"},
          {"ffn_up.weight", "mlp.gate_up_proj.weight"},
          {"ffn_down.weight", "mlp.down_proj.weight"}}},
        {"gpt2", "GPT2LMHeadModel", "gpt2", "transformer.h.{N}.",
         {{"token_embd.weight", "transformer.wte.weight"},
          {"position_embd.weight", "transformer.wpe.weight"},
          {"output_norm.weight", "transformer.ln_f.weight"},
          {"output_norm.bias", "transformer.ln_f.bias"},
          // The converter writes the embedding again as output.weight; HF
          // GPT-2 ties its head to wte.
          {"output.weight", ""}},
         {{"attn_norm.weight", "ln_1.weight"},
          {"attn_norm.bias", "ln_1.bias"},
          {"attn_qkv.weight", "attn.c_attn.weight", Kind::Transpose},
          {"attn_qkv.bias", "attn.c_attn.bias"},
          {"attn_output.weight", "attn.c_proj.weight", Kind::Transpose},
          {"attn_output.bias", "attn.c_proj.bias"},
          {"ffn_norm.weight", "ln_2.weight"},
          {"ffn_norm.bias", "ln_2.bias"},
          {"ffn_up.weight", "mlp.c_fc.weight", Kind::Transpose},
          {"ffn_up.bias", "mlp.c_fc.bias"},
          {"ffn_down.weight", "mlp.c_proj.weight", Kind::Transpose},
          {"ffn_down.bias", "mlp.c_proj.bias"}}},
        {"falcon", "FalconForCausalLM", "falcon", "transformer.h.{N}.",
         {{"token_embd.weight", "transformer.word_embeddings.weight"},
          {"output_norm.weight", "transformer.ln_f.weight"},
          {"output_norm.bias", "transformer.ln_f.bias"},
          {"output.weight", "lm_head.weight"}},
         {{"attn_norm.weight", "input_layernorm.weight"},
          {"attn_norm.bias", "input_layernorm.bias"},
          {"attn_norm_2.weight", "ln_mlp.weight"},
          {"attn_norm_2.bias", "ln_mlp.bias"},
          {"attn_qkv.weight", "self_attention.query_key_value.weight", Kind::FalconQKV},
          {"attn_output.weight", "self_attention.dense.weight"},
          {"ffn_up.weight", "mlp.dense_h_to_4h.weight"},
          {"ffn_down.weight", "mlp.dense_4h_to_h.weight"}}},
        {"starcoder2", "Starcoder2ForCausalLM", "starcoder2", "model.layers.{N}.", normTopBias,
         starcoder2Layer},
        {"stablelm", "StableLmForCausalLM", "stablelm", "model.layers.{N}.", normTopBias,
         stablelmLayer},
    };
  }();
  return kArchs;
}

/// Builds config.json and the checkpoint of one file.
class Builder {
public:
  Builder(const GGUFFile &file, const Arch &arch) : f_(file), arch_(arch), a_(arch.name) {}

  absl::Status config(OJson &c) {
    auto key = [&](const char *suffix) { return cat(a_, ".", suffix); };
    QEFF_QUANT_ASSIGN(int64_t layers, positive(key("block_count")));
    QEFF_QUANT_ASSIGN(int64_t hidden, positive(key("embedding_length")));
    QEFF_QUANT_ASSIGN(int64_t heads, positive(key("attention.head_count")));
    QEFF_QUANT_ASSIGN(int64_t kvHeads, f_.getInt(key("attention.head_count_kv"), heads));
    if (kvHeads <= 0 || heads % kvHeads != 0)
      return f_.keyError(key("attention.head_count_kv"),
                         cat("is ", kvHeads, ", which does not divide the ", heads,
                                      " attention heads"));
    QEFF_QUANT_ASSIGN(int64_t ctx, f_.getInt(key("context_length"), 2048));
    QEFF_QUANT_ASSIGN(int64_t headDim, f_.getInt(key("attention.key_length"), hidden / heads));
    QEFF_QUANT_ASSIGN(int64_t ff, f_.getInt(key("feed_forward_length"), 4 * hidden));
    QEFF_QUANT_ASSIGN(double theta, f_.getFloat(key("rope.freq_base"), 10000.0));
    QEFF_QUANT_ASSIGN(int64_t ropeDim, f_.getInt(key("rope.dimension_count"), headDim));
    QEFF_QUANT_ASSIGN(double rmsEps, f_.getFloat(key("attention.layer_norm_rms_epsilon"), 1e-6));
    QEFF_QUANT_ASSIGN(double lnEps, f_.getFloat(key("attention.layer_norm_epsilon"), 1e-5));
    heads_ = heads;
    kvHeads_ = kvHeads;
    headDim_ = headDim;
    const TensorInfo *embd = f_.findTensor("token_embd.weight");
    if (!embd || embd->ne.size() != 2)
      return absl::InvalidArgumentError(
          cat(f_.path(), ": no 2-D tensor 'token_embd.weight' (the token embedding)"));
    int64_t vocab = embd->ne[1];
    bool tied = !f_.findTensor("output.weight") || std::strcmp(a_, "gpt2") == 0;
    std::string name = a_;
    c["architectures"] = {arch_.cls};
    c["model_type"] = arch_.modelType;
    c["torch_dtype"] = "float32";
    c["vocab_size"] = vocab;
    c["tie_word_embeddings"] = tied;
    if (const Value *bos = f_.find("tokenizer.ggml.bos_token_id"); bos && bos->asInt())
      c["bos_token_id"] = *bos->asInt();
    if (const Value *eos = f_.find("tokenizer.ggml.eos_token_id"); eos && eos->asInt())
      c["eos_token_id"] = *eos->asInt();
    bool hasBias = f_.findTensor("blk.0.attn_q.bias") != nullptr;
    if (name == "gpt2") {
      c["n_embd"] = hidden;
      c["n_layer"] = layers;
      c["n_head"] = heads;
      c["n_inner"] = ff;
      c["n_positions"] = ctx;
      c["n_ctx"] = ctx;
      c["layer_norm_epsilon"] = shortestF32(lnEps);
      c["activation_function"] = "gelu_new";
      return absl::OkStatus();
    }
    if (name == "falcon") {
      bool newDecoder = f_.findTensor("blk.0.attn_norm_2.weight") != nullptr;
      c["hidden_size"] = hidden;
      c["num_hidden_layers"] = layers;
      c["num_attention_heads"] = heads;
      c["num_kv_heads"] = kvHeads;
      c["ffn_hidden_size"] = ff;
      c["new_decoder_architecture"] = newDecoder;
      c["multi_query"] = !newDecoder && kvHeads == 1;
      c["parallel_attn"] = true;
      c["bias"] = false;
      c["alibi"] = false;
      c["layer_norm_epsilon"] = shortestF32(lnEps);
      c["rope_theta"] = shortestF32(theta);
      c["max_position_embeddings"] = ctx;
      if (newDecoder)
        falconNewDecoder_ = true;
      return absl::OkStatus();
    }
    c["hidden_size"] = hidden;
    c["intermediate_size"] = ff;
    c["num_hidden_layers"] = layers;
    c["num_attention_heads"] = heads;
    c["num_key_value_heads"] = kvHeads;
    c["max_position_embeddings"] = ctx;
    c["rope_theta"] = shortestF32(theta);
    if (headDim != hidden / heads)
      c["head_dim"] = headDim;
    if (name == "llama" || name == "qwen2" || name == "qwen3") {
      c["rms_norm_eps"] = shortestF32(rmsEps);
      c["hidden_act"] = "silu";
      if (name == "llama") {
        c["attention_bias"] = hasBias;
        c["mlp_bias"] = false;
      } else {
        c["use_sliding_window"] = false;
      }
      if (name == "qwen3") {
        // Qwen3Config defaults head_dim to 128, not hidden / heads.
        c["head_dim"] = headDim;
        c["attention_bias"] = hasBias;
        if (!f_.findTensor("blk.0.attn_q_norm.weight") ||
            !f_.findTensor("blk.0.attn_k_norm.weight"))
          return absl::InvalidArgumentError(
              cat(f_.path(), ": qwen3 needs the per-head query/key norms "
                             "'blk.0.attn_q_norm.weight' and 'blk.0.attn_k_norm.weight'"));
      }
    } else if (name == "gemma" || name == "gemma2") {
      c["rms_norm_eps"] = shortestF32(rmsEps);
      c["head_dim"] = headDim;
      c["hidden_act"] = "gelu_pytorch_tanh";
      c["hidden_activation"] = "gelu_pytorch_tanh";
      if (name == "gemma2") {
        QEFF_QUANT_ASSIGN(double attnCap, f_.getFloat(key("attn_logit_softcapping"), 50.0));
        QEFF_QUANT_ASSIGN(double finalCap, f_.getFloat(key("final_logit_softcapping"), 30.0));
        QEFF_QUANT_ASSIGN(int64_t window, f_.getInt(key("attention.sliding_window"), 4096));
        c["attn_logit_softcapping"] = shortestF32(attnCap);
        c["final_logit_softcapping"] = shortestF32(finalCap);
        c["sliding_window"] = window;
        // llama.cpp scales queries by 1/sqrt(head_dim) for the 2B and 9B
        // models; the 27B model's hidden/heads scale is not in the file.
        c["query_pre_attn_scalar"] = headDim;
      }
    } else if (name == "phi3") {
      c["rms_norm_eps"] = shortestF32(rmsEps);
      c["hidden_act"] = "silu";
      QEFF_QUANT_ASSIGN(int64_t window, f_.getInt(key("attention.sliding_window"), 0));
      if (window > 0)
        c["sliding_window"] = window;
      else
        c["sliding_window"] = nullptr;
      if (ropeDim != headDim)
        c["partial_rotary_factor"] = double(ropeDim) / double(headDim);
      if (f_.findTensor("rope_factors_long.weight"))
        return absl::InvalidArgumentError(cat(
            f_.path(), ": tensor 'rope_factors_long.weight': Phi-3 LongRoPE scaling is not "
                       "supported"));
    } else if (name == "starcoder2") {
      c["norm_epsilon"] = shortestF32(lnEps);
      c["hidden_act"] = "gelu_pytorch_tanh";
      c["use_bias"] = hasBias;
      QEFF_QUANT_ASSIGN(int64_t window, f_.getInt(key("attention.sliding_window"), 0));
      if (window > 0)
        c["sliding_window"] = window;
      else
        c["sliding_window"] = nullptr;
    } else if (name == "stablelm") {
      c["layer_norm_eps"] = shortestF32(lnEps);
      c["hidden_act"] = "silu";
      c["partial_rotary_factor"] = double(ropeDim) / double(headDim);
      c["use_qkv_bias"] = hasBias;
      c["qk_layernorm"] = f_.findTensor("blk.0.attn_q_norm.weight") != nullptr;
      c["use_parallel_residual"] = f_.findTensor("blk.0.ffn_norm.weight") == nullptr;
    }
    if (name != "phi3" && name != "stablelm" && ropeDim != headDim)
      return f_.keyError(key("rope.dimension_count"),
                         cat("is ", ropeDim, " but the heads have ", headDim,
                                      " dimensions: partial rotary is not supported for ", a_));
    if (const Value *type = f_.find(key("rope.scaling.type"))) {
      QEFF_QUANT_ASSIGN(std::string t, f_.getString(key("rope.scaling.type")));
      if (t == "linear") {
        QEFF_QUANT_ASSIGN(double factor, f_.getFloat(key("rope.scaling.factor")));
        c["rope_scaling"] = {{"type", "linear"}, {"factor", shortestF32(factor)}};
      } else if (t != "none") {
        return f_.keyError(key("rope.scaling.type"),
                           "is '" + t + "': only linear RoPE scaling is supported");
      }
      (void)type;
    }
    return absl::OkStatus();
  }

  /// Maps every tensor of the file; unknown ones are refused by name.
  absl::Status tensors(hf::Checkpoint &ckpt) {
    std::string prefix = arch_.layerPrefix;
    for (const TensorInfo &t : f_.tensors()) {
      const Rule *rule = nullptr;
      std::string hfName;
      if (t.name.rfind("blk.", 0) == 0) {
        size_t dot = t.name.find('.', 4);
        std::string layer = dot == std::string::npos ? "" : t.name.substr(4, dot - 4);
        bool numeric = !layer.empty() && layer.size() < 7 &&
                       layer.find_first_not_of("0123456789") == std::string::npos;
        if (numeric) {
          std::string rest = t.name.substr(dot + 1);
          for (const Rule &r : arch_.layer)
            if (rest == r.gguf)
              rule = &r;
          std::string p = prefix;
          p.replace(p.find("{N}"), 3, layer);
          if (rule)
            hfName = p + rule->hf;
        }
      } else {
        for (const Rule &r : arch_.top)
          if (t.name == r.gguf) {
            rule = &r;
            hfName = r.hf;
          }
      }
      if (!rule)
        return absl::InvalidArgumentError(cat(
            f_.path(), ": tensor '", t.name, "' is not part of a ", a_,
            " model as qeff imports it (unknown tensor name)"));
      if (hfName.empty())
        continue; // deliberately unused
      if (absl::Status st = add(ckpt, t, *rule, hfName); !st.ok())
        return st;
    }
    return absl::OkStatus();
  }

private:
  absl::StatusOr<int64_t> positive(const std::string &key) {
    QEFF_QUANT_ASSIGN(int64_t v, f_.getInt(key));
    if (v <= 0 || v > (int64_t(1) << 24))
      return f_.keyError(key, cat("must be a positive integer, got ", v));
    return v;
  }

  std::vector<int64_t> permutation(int64_t heads, int64_t rows) {
    // convert_hf_to_gguf LlamaModel.permute: reshape(heads, 2, d/2, in)
    // .swapaxes(1, 2): HF row (h, b * d/2 + a) is file row h*d + 2a + b.
    std::vector<int64_t> map(static_cast<size_t>(rows));
    int64_t d = rows / heads;
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t j = 0; j < d; ++j) {
        int64_t a = j % (d / 2), b = j / (d / 2);
        map[static_cast<size_t>(h * d + j)] = h * d + 2 * a + b;
      }
    return map;
  }

  std::vector<int64_t> falconPermutation(int64_t rows) {
    // convert_hf_to_gguf FalconModel: qkv.view(kv, q_per + 2, d, in) was
    // written as [Q | K | V]; HF row (g, p, d) comes from the file's Q, K or
    // V block.
    int64_t d = headDim_, qPer = heads_ / kvHeads_;
    std::vector<int64_t> map;
    map.reserve(static_cast<size_t>(rows));
    for (int64_t g = 0; g < kvHeads_; ++g)
      for (int64_t p = 0; p < qPer + 2; ++p)
        for (int64_t j = 0; j < d; ++j)
          map.push_back(p < qPer    ? (g * qPer + p) * d + j
                        : p == qPer ? heads_ * d + g * d + j
                                    : heads_ * d + kvHeads_ * d + g * d + j);
    return map;
  }

  absl::Status add(hf::Checkpoint &ckpt, const TensorInfo &t, const Rule &rule,
                   const std::string &hfName) {
    const GGMLType *type = ggmlType(t.type);
    if (!type->decodable)
      return absl::InvalidArgumentError(cat(
          f_.path(), ": tensor '", t.name, "' has ggml type ", type->name,
          ", which qeff cannot dequantize (supported: F32, F16, BF16, Q4_0, Q4_1, Q5_0, "
          "Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS)"));
    std::string name = hfName;
    if (falconNewDecoder_ && name.find("input_layernorm") != std::string::npos)
      name.replace(name.find("input_layernorm"), 15, "ln_attn");
    std::vector<int64_t> shape(t.ne.rbegin(), t.ne.rend());
    int64_t rows = t.ne.size() >= 2 ? t.numElements() / t.ne[0] : t.ne[0];
    GGMLSourceSpec spec;
    spec.tensor = &t;
    switch (rule.kind) {
    case Kind::Plain:
      break;
    case Kind::PermuteQ:
    case Kind::PermuteK: {
      int64_t heads = rule.kind == Kind::PermuteQ ? heads_ : kvHeads_;
      if (rows % heads != 0 || (rows / heads) % 2 != 0)
        return absl::InvalidArgumentError(cat(
            f_.path(), ": tensor '", t.name, "' has ", rows, " rows, not ", heads,
            " heads of an even size"));
      if (t.ne.size() == 1) // a bias: its values are the rows
        return addBiasPermuted(ckpt, t, name, permutation(heads, rows));
      spec.rowMap = permutation(heads, rows);
      break;
    }
    case Kind::Transpose:
      if (t.ne.size() != 2)
        return absl::InvalidArgumentError(cat(f_.path(), ": tensor '", t.name,
                                                       "' must be 2-D"));
      spec.transpose = true;
      shape = {t.ne[0], t.ne[1]};
      break;
    case Kind::MinusOne:
      spec.offset = -1.0f;
      break;
    case Kind::FalconQKV:
      if (rows != (heads_ + 2 * kvHeads_) * headDim_)
        return absl::InvalidArgumentError(cat(
            f_.path(), ": tensor '", t.name, "' has ", rows, " rows, expected (",
            heads_, " + 2 * ", kvHeads_, ") * ", headDim_));
      spec.rowMap = falconPermutation(rows);
      break;
    case Kind::SplitHeads: {
      // [heads, head_dim] (ne = [head_dim, heads]): one tensor per head.
      if (t.ne.size() != 2 || (t.type != kF32 && t.type != kF16 && t.type != kBF16))
        return absl::InvalidArgumentError(cat(
            f_.path(), ": tensor '", t.name, "' must be a 2-D F32/F16/BF16 [heads, head_dim]"));
      const GGMLType *ty = ggmlType(t.type);
      for (int64_t h = 0; h < t.ne[1]; ++h) {
        hf::TensorInfo info;
        info.name = cat(name, ".", h, ".weight");
        info.dtype = t.type == kF32 ? hf::DType::F32 : t.type == kF16 ? hf::DType::F16
                                                                     : hf::DType::BF16;
        info.shape = {t.ne[0]};
        info.end = uint64_t(t.ne[0] * ty->typeSize);
        ckpt.addExternal(std::move(info), t.data + h * t.ne[0] * ty->typeSize, f_.path());
      }
      return absl::OkStatus();
    }
    }
    bool plainFloat = (t.type == kF32 || t.type == kF16 || t.type == kBF16) &&
                      spec.rowMap.empty() && !spec.transpose && spec.offset == 0.0f;
    hf::TensorInfo info;
    info.name = name;
    info.shape = shape;
    if (plainFloat) {
      info.dtype = t.type == kF32 ? hf::DType::F32 : t.type == kF16 ? hf::DType::F16
                                                                   : hf::DType::BF16;
      info.end = t.bytes;
      ckpt.addExternal(std::move(info), t.data, f_.path());
    } else {
      ckpt.addDecoded(std::move(info), makeGGMLSource(std::move(spec)), f_.path());
    }
    return absl::OkStatus();
  }

  /// A permuted 1-D tensor (Q/K bias): decoded with the map over its values.
  absl::Status addBiasPermuted(hf::Checkpoint &ckpt, const TensorInfo &t,
                               const std::string &name, const std::vector<int64_t> &map) {
    // Biases are F32/F16 in practice: their values are permuted one by one.
    if (t.type != kF32 && t.type != kF16 && t.type != kBF16)
      return absl::InvalidArgumentError(cat(
          f_.path(), ": tensor '", t.name, "' is a ", ggmlTypeName(t.type),
          " bias; permuted biases must be F32, F16 or BF16"));
    hf::TensorInfo info;
    info.name = name;
    info.shape = {t.ne[0]};
    ckpt.addDecoded(std::move(info), makePermutedVector(t, map), f_.path());
    return absl::OkStatus();
  }

  std::shared_ptr<const hf::DenseSource> makePermutedVector(const TensorInfo &t,
                                                            const std::vector<int64_t> &map);

  const GGUFFile &f_;
  const Arch &arch_;
  const char *a_;
  int64_t heads_ = 1, kvHeads_ = 1, headDim_ = 1;
  bool falconNewDecoder_ = false;
};

/// Values of a float vector in another order, as a [1, n] dense source.
class PermutedVector final : public hf::DenseSource {
public:
  PermutedVector(const TensorInfo &t, std::vector<int64_t> map) : t_(t), map_(std::move(map)) {}
  void decode(int64_t, int64_t, int64_t c0, int64_t c1, float *dst, int64_t) const override {
    int64_t size = ggmlType(t_.type)->typeSize;
    for (int64_t c = c0; c < c1; ++c)
      decodeBlock(t_.type, t_.data + map_[static_cast<size_t>(c)] * size, dst + (c - c0));
  }
  std::vector<std::pair<const std::byte *, size_t>> packedRanges() const override {
    return {{t_.data, t_.bytes}};
  }
  std::string format() const override { return "GGUF " + ggmlTypeName(t_.type); }

private:
  const TensorInfo &t_;
  std::vector<int64_t> map_;
};

std::shared_ptr<const hf::DenseSource>
Builder::makePermutedVector(const TensorInfo &t, const std::vector<int64_t> &map) {
  return std::make_shared<PermutedVector>(t, map);
}

} // namespace

absl::StatusOr<GGUFModel> openGGUFModel(const std::string &path, bool withWeights) {
  QEFF_QUANT_ASSIGN(std::unique_ptr<GGUFFile> opened, GGUFFile::open(path));
  std::shared_ptr<const GGUFFile> file = std::move(opened);
  QEFF_QUANT_ASSIGN(std::string archName, file->getString("general.architecture"));
  const Arch *arch = nullptr;
  for (const Arch &a : archs())
    if (archName == a.name)
      arch = &a;
  if (!arch) {
    std::string supported;
    for (const Arch &a : archs())
      supported += (supported.empty() ? "" : ", ") + std::string(a.name);
    return file->keyError("general.architecture",
                          cat("is '", archName, "'",
                                       "; supported GGUF architectures: ", supported));
  }
  Builder builder(*file, *arch);
  OJson config = OJson::object();
  if (absl::Status st = builder.config(config); !st.ok())
    return st;
  GGUFModel model;
  model.file = file;
  model.hfFiles["config.json"] =
      config.dump(2, ' ', false, OJson::error_handler_t::replace) + "\n";
  OJson generation = OJson::object();
  if (config.contains("bos_token_id"))
    generation["bos_token_id"] = config["bos_token_id"];
  if (config.contains("eos_token_id"))
    generation["eos_token_id"] = config["eos_token_id"];
  model.hfFiles["generation_config.json"] =
      generation.dump(2, ' ', false, OJson::error_handler_t::replace) + "\n";
  // "no_vocab": llama.cpp's vocabulary-less models (token ids only).
  const Value *tokenizerModel = file->find("tokenizer.ggml.model");
  bool noVocab = tokenizerModel && tokenizerModel->type == Value::Type::String &&
                 (tokenizerModel->s == "no_vocab" || tokenizerModel->s == "none");
  if (tokenizerModel && !noVocab) {
    QEFF_QUANT_ASSIGN(GGUFTokenizerFiles tok, ggufTokenizerFiles(*file));
    // Loaded once here, so that artifacts never carry a tokenizer.json that
    // qeff run or qeff serve would refuse.
    auto loaded = tokenizer::Tokenizer::fromJsonText(tok.tokenizerJson, tok.tokenizerConfigJson,
                                                     path + " (tokenizer.ggml.*)");
    if (loaded.ok()) {
      model.hfFiles["tokenizer.json"] = std::move(tok.tokenizerJson);
      model.hfFiles["tokenizer_config.json"] = std::move(tok.tokenizerConfigJson);
    } else {
      model.tokenizerProblem = std::string(loaded.status().message());
    }
  }
  std::unique_ptr<hf::Checkpoint> ckpt = hf::Checkpoint::createEmpty(path);
  if (absl::Status st = builder.tensors(*ckpt); !st.ok())
    return st;
  ckpt->keepAlive(file);
  if (withWeights)
    model.checkpoint = std::move(ckpt);
  return model;
}

} // namespace qeff::gguf
