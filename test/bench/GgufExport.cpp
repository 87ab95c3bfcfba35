//===- GgufExport.cpp - a Llama checkpoint as a GGUF file for llama.cpp ---===//
//
// Part of qeff. A benchmark tool (not a test, not the product): writes the
// weights of a Llama-shaped Hugging Face safetensors checkpoint as a GGUF v3
// file that llama.cpp loads, so that test/bench/llama-bench.sh runs
// llama.cpp on the same weights as qeff. Matrices in F32, F16 or BF16 (the
// `--dtype`), norms in F32 as llama.cpp's own converter writes them; the
// query and key projections' rows permuted for llama.cpp's rope layout
// (convert_hf_to_gguf.py's `permute`). The checkpoint has no tokenizer (the
// synthetic ones of make-synthetic-checkpoint.py), so the file gets a
// placeholder SentencePiece vocabulary of `vocab` tokens (<unk>, <s>, </s>,
// 256 byte tokens, then "t<i>"): the benchmark feeds token ids.
//
//   qeff-gguf-export CKPT_DIR OUT.gguf --dtype f32|f16|bf16 --layers L
//       --hidden H --heads N --kv-heads K --intermediate I --vocab V
//       [--ctx C] [--eps E] [--rope-theta T]
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Checkpoint.h"
#include "lowering/Export/WeightConversion.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

using namespace qeff;

namespace {

enum : uint32_t { kU32 = 4, kI32 = 5, kF32 = 6, kString = 8, kArray = 9 };
enum : uint32_t { kGgmlF32 = 0, kGgmlF16 = 1, kGgmlBF16 = 30 };
constexpr uint64_t kAlign = 32;

struct Writer {
  std::FILE *f;
  uint64_t at = 0;
  void bytes(const void *p, size_t n) {
    if (n && std::fwrite(p, 1, n, f) != n) {
      std::perror("qeff-gguf-export: write");
      std::exit(1);
    }
    at += n;
  }
  template <typename T> void pod(T v) { bytes(&v, sizeof v); }
  void str(const std::string &s) {
    pod<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void pad() {
    static const char zeros[kAlign] = {};
    bytes(zeros, (kAlign - at % kAlign) % kAlign);
  }
};

struct Tensor {
  std::string gguf, hf;
  std::vector<int64_t> shape; // HF's, row-major
  uint32_t type;
  int permuteHeads = 0; // > 0: rope row permutation over this many heads
  uint64_t offset = 0, bytes = 0;
};

[[noreturn]] void die(const std::string &m) {
  std::fprintf(stderr, "qeff-gguf-export: %s\n", m.c_str());
  std::exit(2);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 3)
    die("usage: qeff-gguf-export CKPT_DIR OUT.gguf --dtype f32|f16|bf16 --layers L --hidden H "
        "--heads N --kv-heads K --intermediate I --vocab V [--ctx C] [--eps E] [--rope-theta T]");
  std::map<std::string, std::string> opt{{"--ctx", "2048"}, {"--eps", "1e-5"},
                                         {"--rope-theta", "10000"}, {"--dtype", "f32"}};
  for (int i = 3; i + 1 < argc; i += 2)
    opt[argv[i]] = argv[i + 1];
  auto num = [&](const char *k) {
    if (!opt.count(k))
      die(std::string("missing ") + k);
    return std::atoll(opt[k].c_str());
  };
  int64_t layers = num("--layers"), hidden = num("--hidden"), heads = num("--heads"),
          kvHeads = num("--kv-heads"), inter = num("--intermediate"), vocab = num("--vocab"),
          ctx = num("--ctx");
  float eps = std::strtof(opt["--eps"].c_str(), nullptr);
  float theta = std::strtof(opt["--rope-theta"].c_str(), nullptr);
  std::string dt = opt["--dtype"];
  uint32_t mat = dt == "f32" ? kGgmlF32 : dt == "f16" ? kGgmlF16 : dt == "bf16" ? kGgmlBF16 : 99;
  if (mat == 99)
    die("--dtype must be f32, f16 or bf16, got '" + dt + "'");
  auto ckpt = hf::Checkpoint::open(argv[1]);
  if (!ckpt.ok())
    die(std::string(ckpt.status().message()));

  std::vector<Tensor> ts;
  ts.push_back({"token_embd.weight", "model.embed_tokens.weight", {}, mat});
  for (int64_t l = 0; l < layers; ++l) {
    std::string b = "blk." + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".";
    ts.push_back({b + "attn_norm.weight", h + "input_layernorm.weight", {}, kGgmlF32});
    ts.push_back({b + "attn_q.weight", h + "self_attn.q_proj.weight", {}, mat, int(heads)});
    ts.push_back({b + "attn_k.weight", h + "self_attn.k_proj.weight", {}, mat, int(kvHeads)});
    ts.push_back({b + "attn_v.weight", h + "self_attn.v_proj.weight", {}, mat});
    ts.push_back({b + "attn_output.weight", h + "self_attn.o_proj.weight", {}, mat});
    ts.push_back({b + "ffn_norm.weight", h + "post_attention_layernorm.weight", {}, kGgmlF32});
    ts.push_back({b + "ffn_gate.weight", h + "mlp.gate_proj.weight", {}, mat});
    ts.push_back({b + "ffn_up.weight", h + "mlp.up_proj.weight", {}, mat});
    ts.push_back({b + "ffn_down.weight", h + "mlp.down_proj.weight", {}, mat});
  }
  ts.push_back({"output_norm.weight", "model.norm.weight", {}, kGgmlF32});
  bool tied = !(*ckpt)->contains("lm_head.weight");
  if (!tied)
    ts.push_back({"output.weight", "lm_head.weight", {}, mat});
  uint64_t offset = 0;
  for (Tensor &t : ts) {
    const hf::TensorInfo *info = (*ckpt)->find(t.hf);
    if (!info)
      die("the checkpoint has no tensor '" + t.hf + "'");
    t.shape = info->shape;
    uint64_t n = info->numElements();
    t.bytes = n * (t.type == kGgmlF32 ? 4 : 2);
    t.offset = offset;
    offset += (t.bytes + kAlign - 1) / kAlign * kAlign;
  }

  std::FILE *f = std::fopen(argv[2], "wb");
  if (!f)
    die(std::string("cannot write ") + argv[2]);
  Writer w{f};
  w.bytes("GGUF", 4);
  w.pod<uint32_t>(3);
  w.pod<uint64_t>(ts.size());
  uint64_t kvs = 18; // the key-value pairs below
  w.pod<uint64_t>(kvs);
  auto kvU32 = [&](const char *k, uint32_t v) { w.str(k); w.pod(kU32); w.pod(v); };
  auto kvF32 = [&](const char *k, float v) { w.str(k); w.pod(kF32); w.pod(v); };
  auto kvStr = [&](const char *k, const std::string &v) { w.str(k); w.pod(kString); w.str(v); };
  kvStr("general.architecture", "llama");
  kvStr("general.name", "qeff-bench");
  kvU32("general.file_type", mat == kGgmlF32 ? 0 : mat == kGgmlF16 ? 1 : 32);
  kvU32("llama.context_length", uint32_t(ctx));
  kvU32("llama.embedding_length", uint32_t(hidden));
  kvU32("llama.block_count", uint32_t(layers));
  kvU32("llama.feed_forward_length", uint32_t(inter));
  kvU32("llama.rope.dimension_count", uint32_t(hidden / heads));
  kvU32("llama.attention.head_count", uint32_t(heads));
  kvU32("llama.attention.head_count_kv", uint32_t(kvHeads));
  kvF32("llama.attention.layer_norm_rms_epsilon", eps);
  kvF32("llama.rope.freq_base", theta);
  kvStr("tokenizer.ggml.model", "llama");
  {
    w.str("tokenizer.ggml.tokens");
    w.pod(kArray);
    w.pod(kString);
    w.pod<uint64_t>(vocab);
    for (int64_t i = 0; i < vocab; ++i) {
      char buf[32];
      if (i < 3)
        std::snprintf(buf, sizeof buf, "%s", i == 0 ? "<unk>" : i == 1 ? "<s>" : "</s>");
      else if (i < 259)
        std::snprintf(buf, sizeof buf, "<0x%02X>", unsigned(i - 3));
      else
        std::snprintf(buf, sizeof buf, "t%lld", static_cast<long long>(i));
      w.str(buf);
    }
    w.str("tokenizer.ggml.scores");
    w.pod(kArray);
    w.pod(kF32);
    w.pod<uint64_t>(vocab);
    for (int64_t i = 0; i < vocab; ++i)
      w.pod(-float(i));
    w.str("tokenizer.ggml.token_type");
    w.pod(kArray);
    w.pod(kI32);
    w.pod<uint64_t>(vocab);
    for (int64_t i = 0; i < vocab; ++i) // unknown, control, byte, normal
      w.pod<int32_t>(i == 0 ? 2 : i < 3 ? 3 : i < 259 ? 6 : 1);
  }
  kvU32("tokenizer.ggml.bos_token_id", 1);
  kvU32("tokenizer.ggml.eos_token_id", 2);
  for (const Tensor &t : ts) {
    w.str(t.gguf);
    w.pod<uint32_t>(t.shape.size());
    for (auto it = t.shape.rbegin(); it != t.shape.rend(); ++it) // ne[0] is the innermost
      w.pod<uint64_t>(*it);
    w.pod(t.type);
    w.pod(t.offset);
  }
  w.pad();
  uint64_t dataStart = w.at;
  std::vector<std::byte> src, out;
  for (const Tensor &t : ts) {
    auto view = (*ckpt)->get(t.hf);
    if (!view.ok())
      die(std::string(view.status().message()));
    hf::DType to = t.type == kGgmlF32 ? hf::DType::F32
                   : t.type == kGgmlF16 ? hf::DType::F16
                                        : hf::DType::BF16;
    if (!exporter::canConvert(view->dtype(), to))
      die("cannot convert '" + t.hf + "' to " + dt);
    size_t n = view->numElements(), es = t.type == kGgmlF32 ? 4 : 2;
    src.resize(view->byteSize());
    std::memcpy(src.data(), view->data, src.size());
    out.resize(n * es);
    exporter::convertElements(src.data(), view->dtype(), out.data(), to, n);
    if (t.permuteHeads > 0) {
      // Row (head h, pair i, half j) <- row (h, j, i): HF's rotate_half
      // halves become llama.cpp's interleaved pairs.
      int64_t rows = t.shape[0], cols = n / rows, hd = rows / t.permuteHeads;
      size_t rowBytes = cols * es;
      std::vector<std::byte> perm(out.size());
      for (int64_t h = 0; h < t.permuteHeads; ++h)
        for (int64_t i = 0; i < hd / 2; ++i)
          for (int64_t j = 0; j < 2; ++j)
            std::memcpy(perm.data() + (h * hd + i * 2 + j) * rowBytes,
                        out.data() + (h * hd + j * (hd / 2) + i) * rowBytes, rowBytes);
      out.swap(perm);
    }
    if (w.at - dataStart != t.offset)
      die("internal error: tensor offsets");
    w.bytes(out.data(), out.size());
    w.pad();
  }
  if (std::fclose(f) != 0)
    die(std::string("closing ") + argv[2]);
  std::printf("wrote %s: %zu tensors, %s matrices%s, %.1f MB\n", argv[2], ts.size(), dt.c_str(),
              tied ? ", tied embeddings" : "", double(w.at) / 1e6);
  return 0;
}
