//===- StructuredBench.cpp - cost of constrained-decoding masks -----------===//
//
// Part of qeff's benchmarks (docs/structured-output.md, "Cost"). For the
// tokenizers of test/data: the time to read the vocabulary, to compile a
// schema, and per mask in typical states (the start, a key, a string value,
// a value start, a number) and on average over random walks. Masks are
// timed in thread CPU time.
//
//   qeff-structured-bench [stories260K|llama2|gpt2|qwen2 ...]
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Tokenizer.h"
#include "runtime/structured/JsonConstraint.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <random>
#include <sstream>

using namespace qeff;
using Clock = std::chrono::steady_clock;
using Json = nlohmann::ordered_json;

namespace {

double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

/// This thread's CPU time in ms: masks are timed by it, so that on a shared
/// machine a preemption does not count as mask time.
double cpuMs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

absl::StatusOr<tokenizer::Tokenizer> load(const std::string &name) {
  const std::string data = QEFF_TEST_DATA_DIR;
  if (name == "stories260K")
    return tokenizer::Tokenizer::fromDirectory(data + "/models/stories260K-hf");
  if (name == "llama2")
    return tokenizer::Tokenizer::fromJsonText(readFile(
        data + "/tokenizers/llama2/tokenizer.hf-internal-testing.json"));
  if (name == "gpt2")
    return tokenizer::Tokenizer::fromVocabAndMerges(
        data + "/tokenizers/gpt2/encoder.json",
        data + "/tokenizers/gpt2/vocab.bpe");
  if (name == "qwen2")
    return tokenizer::Tokenizer::fromFile(data +
                                          "/tokenizers/qwen2/tokenizer.json");
  return absl::NotFoundError("unknown tokenizer " + name);
}

const char *kPerson = R"({"type": "object", "properties": {
  "name": {"type": "string", "maxLength": 40},
  "age": {"type": "integer", "minimum": 0, "maximum": 150},
  "email": {"type": "string"},
  "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
  "address": {"type": "object", "properties": {"street": {"type": "string"},
              "city": {"type": "string"}}, "required": ["city"]}},
  "required": ["name", "age"], "additionalProperties": false})";

/// The matcher after `prefix`, spelled with single-byte tokens.
std::unique_ptr<runtime::ConstraintMatcher>
at(const runtime::TokenConstraint &c, const structured::Vocabulary &vocab,
   const std::string &prefix) {
  auto m = c.start();
  for (size_t i = 0; i < prefix.size(); ++i) {
    bool done = false;
    for (size_t id = 0; id < vocab.size() && !done; ++id) {
      const std::string *b = vocab.bytes(int64_t(id), i == 0);
      if (b && b->size() == 1 && (*b)[0] == prefix[i])
        done = m->accept(int64_t(id));
    }
    if (!done)
      std::fprintf(stderr, "cannot spell '%s' at %zu\n", prefix.c_str(), i);
  }
  return m;
}

struct MaskTime {
  double first, median;
  size_t allowed;
};

/// The first and the median ms of a mask from the state after `prefix`
/// (the first builds what the vocabulary builds on first use).
MaskTime maskTime(const runtime::TokenConstraint &c,
                  const structured::Vocabulary &vocab,
                  const std::string &prefix) {
  auto m = at(c, vocab, prefix);
  std::vector<double> times;
  size_t allowed = 0;
  for (int i = 0; i < 21; ++i) {
    std::vector<uint8_t> mask(vocab.size(), 0);
    double start = cpuMs();
    m->allowedTokens(mask);
    times.push_back(cpuMs() - start);
    allowed = size_t(std::count(mask.begin(), mask.end(), 1));
  }
  double first = times[0];
  std::nth_element(times.begin(), times.begin() + 10, times.end());
  return {first, times[10], allowed};
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> names(argv + 1, argv + argc);
  if (names.empty())
    names = {"stories260K", "llama2", "gpt2", "qwen2"};
  Json person = Json::parse(kPerson);
  for (const std::string &name : names) {
    auto tok = load(name);
    if (!tok.ok()) {
      std::fprintf(stderr, "%s\n", std::string(tok.status().message()).c_str());
      return 1;
    }
    std::string error;
    auto start = Clock::now();
    auto vocab = structured::makeVocabulary(*tok, error);
    double vocabMs = msSince(start);
    if (!vocab) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), error.c_str());
      return 1;
    }
    start = Clock::now();
    auto schema =
        structured::makeJsonConstraint(vocab, &person, "schema", error);
    double compileMs = msSince(start);
    auto object = structured::makeJsonConstraint(vocab, nullptr, "", error);
    std::printf("%s: %zu tokens, vocabulary %.1f ms, schema compile %.3f ms\n",
                name.c_str(), vocab->size(), vocabMs, compileMs);
    struct Case {
      const char *label;
      const runtime::TokenConstraint *c;
      std::string prefix;
    };
    const Case cases[] = {
        {"schema: start", schema.get(), ""},
        {"schema: first key", schema.get(), "{\""},
        {"schema: string value", schema.get(), "{\"name\": \"Jo"},
        {"schema: value start", schema.get(), "{\"name\": \"Jo\", \"age\": "},
        {"schema: number", schema.get(), "{\"name\": \"Jo\", \"age\": 4"},
        {"schema: after value", schema.get(), "{\"name\": \"Jo\", \"age\": 42"},
        {"json mode: key", object.get(), "{\""},
        {"json mode: value start", object.get(), "{\"a\": "},
        {"json mode: string value", object.get(), "{\"a\": \"xy"},
    };
    for (const Case &k : cases) {
      MaskTime t = maskTime(*k.c, *vocab, k.prefix);
      std::printf("  %-26s %8.3f ms  (%zu allowed; first %.3f ms)\n", k.label,
                  t.median, t.allowed, t.first);
    }
    // Random walks: every mask of 20 sequences, after a first pass that
    // builds the vocabulary's string tables (a one-time cost per state).
    for (int pass = 0; pass < 2; ++pass)
      for (const auto &[label, c] :
           {std::pair{"walks, schema", schema.get()},
            std::pair{"walks, json mode", object.get()}}) {
        double total = 0, worst = 0;
        size_t masks = 0;
        std::string worstText;
        for (unsigned seed = 1; seed <= 20; ++seed) {
          std::mt19937 rng(seed);
          auto m = c->start();
          std::string text;
          for (int step = 0; step < 200 && !m->mustEnd(); ++step) {
            if (m->canEnd() && rng() % 4 == 0)
              break;
            std::vector<uint8_t> mask(vocab->size(), 0);
            double t0 = cpuMs();
            m->allowedTokens(mask);
            double ms = cpuMs() - t0;
            total += ms, ++masks;
            if (ms > worst)
              worst = ms, worstText = text;
            std::vector<int64_t> allowed;
            for (size_t i = 0; i < mask.size(); ++i)
              if (mask[i])
                allowed.push_back(int64_t(i));
            if (allowed.empty())
              break;
            int64_t pick = allowed[rng() % allowed.size()];
            text += *vocab->bytes(pick, step == 0);
            m->accept(pick);
          }
        }
        std::printf("  %-26s %8.3f ms mean, %.3f ms worst over %zu masks%s\n",
                    label, total / double(masks), worst, masks,
                    pass ? "" : " (first pass)");
        if (std::getenv("QEFF_BENCH_VERBOSE"))
          std::printf("    worst after: %s\n", worstText.c_str());
      }
  }
  return 0;
}
