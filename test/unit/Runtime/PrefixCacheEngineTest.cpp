//===- PrefixCacheEngineTest.cpp - prefix caching in BatchEngine ----------===//
//
// Goldens compiled on the host device (continuous batching with 1, 2 and 4
// rows, and a plain single-row artifact) serve 50 requests with shared
// prefixes (families of prompts sharing long prefixes, repeated prompts,
// prompts that are prefixes or extensions of earlier ones), greedy and
// seeded, with prefix caching on and off:
//  - the tokens are identical;
//  - every admission takes the row an independent model of the rule
//    predicts (longest usable prefix among the free rows, least recently
//    freed on a tie) and skips exactly the tokens that model predicts, from
//    the row histories the test rebuilds from the outputs (prompt +
//    generated tokens but the last, which is never fed back);
//  - the skipped tokens add up to that prediction, and are > 0.
// A rolling KV buffer (--kv-window=rolling, Mistral with window 4) reuses
// a row only while its history fits the window; tokens still identical.
// Dynamic NTK and longrope rope scaling reuse only within their threshold
// (unrestricted reuse changes tokens there); tokens identical.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/GoldenArtifact.h"
#include "test/unit/Runtime/ModelBuilder.h"

#include "frontend/HF/SafeTensors.h"
#include "qeff/compile/Compile.h"
#include "runtime/generation/BatchEngine.h"

#include <gmock/gmock.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>

using namespace qeff::runtime;
using namespace qeff::runtime::test;

namespace {

constexpr int64_t kCtx = 64, kPrefill = 4;

/// Golden `name` compiled for the host: continuous batching over
/// `fullBatch` rows, or (0) a batch-1 artifact serving one row.
std::optional<Session> openArtifact(const TempDir &dir, const std::string &name,
                                    int64_t fullBatch, bool rolling,
                                    int64_t prefill = kPrefill) {
  qeff::compile::Options options;
  options.checkpointDir = goldenDir(name);
  options.outputDir = dir.file("artifact");
  options.ctxLen = kCtx;
  options.prefillSeqLen = prefill;
  options.batchSize = 1;
  options.fullBatchSize = fullBatch;
  options.rollingKVWindow = rolling;
  SessionOptions sessionOptions;
  sessionOptions.numThreads = 1;
  sessionOptions.prepackWeights = true; // as qeff serve
  return compileAndOpenOnHost(options, sessionOptions);
}

int64_t vocabOf(const std::string &name) {
  std::ifstream in(goldenDir(name) + "/config.json");
  return nlohmann::json::parse(in)["vocab_size"].get<int64_t>();
}

struct Request {
  std::vector<int64_t> prompt;
  int64_t maxNew = 1;
};

/// 50 requests over `vocab` with prompts of at most `maxPrompt` tokens:
/// families sharing long prefixes, repeats, prefixes and extensions of
/// earlier prompts, and unrelated ones (a fixed pseudo-random mix).
std::vector<Request> sharedPrefixRequests(int64_t vocab, int64_t maxPrompt,
                                          int64_t maxNew, uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](int64_t lo, int64_t hi) { // [lo, hi]
    return lo + int64_t(rng() % uint64_t(hi - lo + 1));
  };
  auto tokens = [&](int64_t n) {
    std::vector<int64_t> t;
    for (int64_t i = 0; i < n; ++i)
      t.push_back(uniform(3, vocab - 1));
    return t;
  };
  std::vector<std::vector<int64_t>> families;
  for (int i = 0; i < 4; ++i)
    families.push_back(tokens(uniform(std::max<int64_t>(1, maxPrompt / 2),
                                      std::max<int64_t>(1, maxPrompt - 1))));
  std::vector<Request> out;
  while (out.size() < 50) {
    Request r;
    r.maxNew = uniform(1, maxNew);
    int kind = out.empty() ? 0 : int(uniform(0, 5));
    if (kind <= 1) { // a family prefix and a suffix of its own
      r.prompt = families[uniform(0, 3)];
      r.prompt.resize(uniform(1, r.prompt.size()));
      std::vector<int64_t> tail = tokens(uniform(0, 4));
      r.prompt.insert(r.prompt.end(), tail.begin(), tail.end());
    } else if (kind == 2) { // an earlier prompt again
      r.prompt = out[uniform(0, out.size() - 1)].prompt;
    } else if (kind == 3) { // a prefix of an earlier prompt
      r.prompt = out[uniform(0, out.size() - 1)].prompt;
      r.prompt.resize(uniform(1, r.prompt.size()));
    } else if (kind == 4) { // an earlier prompt extended
      r.prompt = out[uniform(0, out.size() - 1)].prompt;
      std::vector<int64_t> tail = tokens(uniform(1, 3));
      r.prompt.insert(r.prompt.end(), tail.begin(), tail.end());
    } else {
      r.prompt = tokens(uniform(1, maxPrompt));
    }
    if (r.prompt.empty())
      r.prompt = tokens(1);
    if (int64_t(r.prompt.size()) > maxPrompt)
      r.prompt.resize(maxPrompt);
    out.push_back(std::move(r));
  }
  return out;
}

struct Outcome {
  std::vector<std::vector<int64_t>> tokens;
  int64_t cached = 0;     ///< sum of the results' cachedPromptTokens
  int64_t predicted = 0;  ///< what the test's model of the rule predicts
};

/// Serves `requests` in order (admitted while a row is free, then one
/// decode step of all rows), checking each admission against the test's own
/// model of the rule: row histories rebuilt from the outputs, the longest
/// usable prefix among the free rows, the least recently freed on a tie.
/// `historyLimit`: the longest reusable history (rolling buffers);
/// `promptLimit`: the longest prompt that reuses anything (rope threshold).
Outcome serveAll(Session &session, const std::vector<Request> &requests,
                 bool caching, double temperature, int64_t historyLimit,
                 int64_t promptLimit = PrefixCache::kUnlimited) {
  Outcome out;
  out.tokens.resize(requests.size());
  auto engine = BatchEngine::create(session, nullptr);
  EXPECT_TRUE(engine.ok()) << engine.error();
  if (!engine.ok())
    return out;
  engine->setPrefixCaching(caching);
  const int64_t rows = engine->rows();
  std::vector<std::vector<int64_t>> history(rows);
  std::vector<int64_t> freedAt(rows, 0), occupant(rows, -1);
  int64_t clock = 0;
  size_t next = 0, finished = 0;
  std::vector<RowUpdate> updates;
  auto take = [&](const std::vector<RowUpdate> &us) {
    for (const RowUpdate &u : us) {
      if (!u.result)
        continue;
      int64_t i = occupant[u.row];
      const RowResult &res = *u.result;
      EXPECT_EQ(res.finishReason, "max_new_tokens") << "request " << i;
      out.tokens[i] = res.generatedIds;
      out.cached += res.metrics.cachedPromptTokens;
      // The row holds the prompt and every generated token but the last
      // (each decode step feeds the previous one).
      history[u.row] = res.promptIds;
      history[u.row].insert(history[u.row].end(), res.generatedIds.begin(),
                            res.generatedIds.end() - 1);
      freedAt[u.row] = ++clock;
      occupant[u.row] = -1;
      ++finished;
    }
  };
  while (finished < requests.size()) {
    while (next < requests.size() && engine->hasFreeRow()) {
      const Request &req = requests[next];
      // The prediction.
      int64_t bestRow = -1, bestReuse = -1;
      for (int64_t r = 0; r < rows; ++r) {
        if (occupant[r] >= 0)
          continue;
        int64_t reuse = 0;
        if (caching && int64_t(history[r].size()) <= historyLimit &&
            int64_t(req.prompt.size()) <= promptLimit)
          while (reuse < int64_t(history[r].size()) &&
                 reuse + 1 < int64_t(req.prompt.size()) &&
                 history[r][reuse] == req.prompt[reuse])
            ++reuse;
        if (reuse > bestReuse || (reuse == bestReuse && freedAt[r] < freedAt[bestRow])) {
          bestRow = r;
          bestReuse = reuse;
        }
      }
      GenerationOptions options;
      options.maxNewTokens = req.maxNew;
      options.temperature = temperature;
      options.seed = 1000 + next;
      updates.clear();
      auto row = engine->admit(req.prompt, options, updates);
      EXPECT_TRUE(row.ok()) << row.error();
      if (!row.ok())
        return out;
      EXPECT_EQ(*row, bestRow) << "request " << next;
      EXPECT_EQ(engine->reusedTokens(*row), bestReuse) << "request " << next;
      out.predicted += bestReuse;
      occupant[*row] = int64_t(next++);
      take(updates);
    }
    updates.clear();
    Status s = engine->step(updates);
    EXPECT_TRUE(s.ok()) << s.error();
    if (!s.ok())
      return out;
    take(updates);
  }
  return out;
}

/// Caching on and off give the same tokens; the skipped tokens are the
/// predicted ones.
void compareOnOff(Session &session, const std::vector<Request> &requests,
                  double temperature, int64_t historyLimit, bool expectHits,
                  int64_t promptLimit = PrefixCache::kUnlimited) {
  Outcome off = serveAll(session, requests, false, temperature, historyLimit,
                         promptLimit);
  Outcome on = serveAll(session, requests, true, temperature, historyLimit,
                        promptLimit);
  EXPECT_EQ(off.cached, 0);
  EXPECT_EQ(off.predicted, 0);
  ASSERT_EQ(on.tokens.size(), off.tokens.size());
  for (size_t i = 0; i < on.tokens.size(); ++i)
    EXPECT_EQ(on.tokens[i], off.tokens[i]) << "request " << i;
  EXPECT_EQ(on.cached, on.predicted);
  if (expectHits)
    EXPECT_GT(on.cached, 0);
}

TEST(PrefixCacheEngine, SameTokensWithAndWithoutReuse) {
  for (const char *name : {"LlamaForCausalLM", "GPT2LMHeadModel"}) {
    const int64_t vocab = vocabOf(name);
    std::vector<Request> requests = sharedPrefixRequests(vocab, 40, 8);
    for (int64_t fullBatch : {0, 1, 2, 4}) {
      SCOPED_TRACE(std::string(name) + ", full_batch_size " + std::to_string(fullBatch));
      TempDir dir;
      auto session = openArtifact(dir, name, fullBatch, false);
      ASSERT_TRUE(session);
      {
        auto engine = BatchEngine::create(*session, nullptr);
        ASSERT_TRUE(engine.ok()) << engine.error();
        EXPECT_EQ(engine->rows(), std::max<int64_t>(1, fullBatch));
        EXPECT_EQ(engine->prefixCache().historyLimit(), PrefixCache::kUnlimited);
      }
      for (double temperature : {0.0, 0.8}) {
        SCOPED_TRACE("temperature " + std::to_string(temperature));
        compareOnOff(*session, requests, temperature, PrefixCache::kUnlimited, true);
      }
    }
  }
}

// A reused row's prefill starts mid-chunk (not rounded to a chunk boundary)
// after another sequence sharing the prefix ran in the row: its last logits
// are those of the prompt prefilled from position 0 in a fresh row, on the
// host device and in ONNX Runtime (the ONNX path: test/oracle/run-onnx.js
// steps the exported graph with the cache fed back).
TEST(PrefixCacheEngine, PrefillMayStartAtAnyPosition) {
  TempDir dir;
  auto session = openArtifact(dir, "LlamaForCausalLM", 2, false);
  ASSERT_TRUE(session);
  const std::vector<int64_t> prompt = {5, 17, 29, 41, 53, 65, 77, 89, 101, 113, 125};
  const std::vector<int64_t> other = {5, 17, 29, 41, 53, 65, 200, 210, 220, 230};
  const int64_t reuse = 6; // prompt and other share 6 tokens
  struct Chunk {
    std::vector<int64_t> ids, positions;
    int64_t row;
  };
  auto chunks = [](const std::vector<int64_t> &t, int64_t from, int64_t row) {
    std::vector<Chunk> out;
    for (int64_t s = from; s < int64_t(t.size()); s += kPrefill) {
      Chunk c{std::vector<int64_t>(kPrefill, 0), std::vector<int64_t>(kPrefill, -1), row};
      for (int64_t j = 0; j < kPrefill && s + j < int64_t(t.size()); ++j) {
        c.ids[j] = t[s + j];
        c.positions[j] = s + j;
      }
      out.push_back(c);
    }
    return out;
  };
  // Row 0: the prompt from 0. Row 1: `other`, then the prompt from 6.
  std::vector<Chunk> steps = chunks(prompt, 0, 0);
  const size_t fresh = steps.size() - 1;
  for (const Chunk &c : chunks(other, 0, 1))
    steps.push_back(c);
  for (const Chunk &c : chunks(prompt, reuse, 1))
    steps.push_back(c);
  const size_t reused = steps.size() - 1;
  ASSERT_NE(steps[fresh + 1 + 3].positions[0] % kPrefill, 0); // mid-chunk start
  auto inputsOf = [](const Chunk &c) {
    return TensorMap{{"input_ids", Tensor::fromInt64({1, kPrefill}, c.ids)},
                     {"position_ids", Tensor::fromInt64({1, kPrefill}, c.positions)},
                     {"batch_index", Tensor::fromInt64({1, 1}, {c.row})}};
  };
  auto near = [](const std::vector<float> &a, const std::vector<float> &b,
                 const char *what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (size_t j = 0; j < a.size(); ++j)
      ASSERT_LE(std::fabs(a[j] - b[j]), 1e-4f * (1.f + std::fabs(b[j])))
          << what << ": logit " << j << ": " << a[j] << " vs " << b[j];
    EXPECT_EQ(std::max_element(a.begin(), a.end()) - a.begin(),
              std::max_element(b.begin(), b.end()) - b.begin())
        << what;
  };

  // The host device.
  session->reset();
  std::vector<std::vector<float>> host(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    Status st = session->run(inputsOf(steps[i]));
    ASSERT_TRUE(st.ok()) << st.error();
    host[i] = session->getOutput("logits")->toFloatVector();
  }
  near(host[reused], host[fresh], "host: reused vs fresh");

#ifndef QEFF_NODE
  ADD_FAILURE() << "node not found at configure time: run scripts/setup-oracle.sh";
#else
  // ONNX Runtime: one process steps the graph, the cache fed back.
  nlohmann::json plan = {{"save", {"logits"}}, {"feedback", nlohmann::json::object()}};
  std::vector<Tensor> zeros;
  for (const std::string &name : session->stateNames()) {
    plan["feedback"][name + "_RetainedState"] = name;
    auto t = session->readState(name);
    ASSERT_TRUE(t.ok()) << t.error();
    zeros.push_back(Tensor::zeros(t->dtype(), t->shape()));
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    TensorMap in = inputsOf(steps[i]);
    std::vector<qeff::hf::TensorToWrite> tensors;
    for (const auto &[name, t] : in)
      tensors.push_back({name, qeff::hf::DType::I64, t.shape(), t.rawData(), t.byteSize()});
    if (i == 0)
      for (size_t k = 0; k < zeros.size(); ++k)
        tensors.push_back({session->stateNames()[k], qeff::hf::DType::F32,
                           zeros[k].shape(), zeros[k].rawData(), zeros[k].byteSize()});
    std::string file = "in" + std::to_string(i) + ".safetensors";
    ASSERT_TRUE(qeff::hf::writeSafeTensors(dir.file(file), tensors).ok());
    plan["steps"].push_back({{"inputs", file},
                             {"outputs", "out" + std::to_string(i) + ".safetensors"}});
  }
  dir.write("steps.json", plan.dump());
  std::string cmd = std::string("'") + QEFF_NODE + "' '" + QEFF_ORACLE_RUN +
                    "' --model '" + dir.file("artifact/model.onnx") + "' --steps '" +
                    dir.file("steps.json") + "' 2> '" + dir.file("err.txt") + "'";
  int rc = std::system(cmd.c_str());
  std::ifstream err(dir.file("err.txt"));
  std::stringstream errText;
  errText << err.rdbuf();
  ASSERT_EQ(rc, 0) << "oracle failed: " << errText.str();
  auto logitsOf = [&](size_t i) {
    auto file = qeff::hf::SafeTensorsFile::open(dir.file("out" + std::to_string(i) +
                                                         ".safetensors"));
    EXPECT_TRUE(file.ok());
    std::vector<float> v;
    if (!file.ok())
      return v;
    auto view = (*file)->get("logits");
    EXPECT_TRUE(view.ok());
    if (view.ok()) {
      v.resize(view->byteSize() / sizeof(float));
      std::memcpy(v.data(), view->data, view->byteSize());
    }
    return v;
  };
  std::vector<float> ortFresh = logitsOf(fresh), ortReused = logitsOf(reused);
  near(ortReused, ortFresh, "ONNX Runtime: reused vs fresh");
  near(ortReused, host[reused], "ONNX Runtime vs host");
#endif
}

// A rolling buffer of window 4 (+ prefill_seq_len - 1 spare slots) reuses a
// row only while its whole history is at most 4 tokens: short prompts and
// few new tokens make both cases occur. The same artifact compiled with the
// full cache (the window a mask) reuses any history.
TEST(PrefixCacheEngine, RollingWindowReusesOnlyWhatTheWindowHolds) {
  const std::string name = "MistralForCausalLM-small_window";
  std::ifstream in(goldenDir(name) + "/config.json");
  const int64_t window = nlohmann::json::parse(in)["sliding_window"].get<int64_t>();
  ASSERT_EQ(window, 4);
  const int64_t vocab = vocabOf(name);
  std::vector<Request> shortOnes = sharedPrefixRequests(vocab, 5, 2, 11);
  std::vector<Request> longOnes = sharedPrefixRequests(vocab, 30, 6, 12);
  for (Request &r : longOnes) // every history longer than the window
    while (int64_t(r.prompt.size()) <= window)
      r.prompt.push_back(3);
  for (bool rolling : {true, false}) {
    for (int64_t fullBatch : {1, 2}) {
      SCOPED_TRACE(std::string(rolling ? "rolling" : "full") + ", full_batch_size " +
                   std::to_string(fullBatch));
      TempDir dir;
      auto session = openArtifact(dir, name, fullBatch, rolling);
      ASSERT_TRUE(session);
      const int64_t limit = rolling ? window : PrefixCache::kUnlimited;
      {
        auto engine = BatchEngine::create(*session, nullptr);
        ASSERT_TRUE(engine.ok()) << engine.error();
        EXPECT_EQ(engine->prefixCache().historyLimit(), limit);
      }
      for (double temperature : {0.0, 0.8}) {
        SCOPED_TRACE("temperature " + std::to_string(temperature));
        compareOnOff(*session, shortOnes, temperature, limit, true);
        // Long histories: a rolling buffer reuses none of them.
        Outcome on = serveAll(*session, longOnes, true, temperature, limit);
        Outcome off = serveAll(*session, longOnes, false, temperature, limit);
        EXPECT_EQ(on.tokens, off.tokens);
        EXPECT_EQ(on.cached, on.predicted);
        if (rolling)
          EXPECT_EQ(on.cached, 0);
        else
          EXPECT_GT(on.cached, 0);
      }
    }
  }
}

// Rope frequencies that follow the sequence length (dynamic NTK, longrope:
// threshold 16 in these goldens) rotate a cached key with the L of the step
// that wrote it. The artifact as compiled reuses a row only while its
// history and the new prompt are within the threshold, and gives the tokens
// of no reuse (prefill chunks of 4 and of 32, one chunk per prompt), with
// hits on the short requests. The claim behind the limit: with the
// manifest's seq_len_dependent_rope removed (the engine then reuses any
// history), a chat's next turn (the golden's prompt, then that prompt with
// its 12 greedy tokens and more) gets other tokens with reuse than without:
// reused keys keep the decode steps' rotations (L = p + 1, the golden's
// step_logits) where a fresh one-chunk prefill rotates all for L = 22 (its
// full_logits).
TEST(PrefixCacheEngine, SeqLenDependentRopeReusesOnlyWithinItsThreshold) {
  for (const char *name : {"LlamaForCausalLM-dynamic_rope", "Phi3ForCausalLM-longrope"}) {
    std::ifstream in(goldenDir(name) + "/golden.json");
    nlohmann::json golden = nlohmann::json::parse(in);
    const int64_t threshold =
        golden["seq_len_dependent_rope"]["threshold"].get<int64_t>();
    ASSERT_EQ(threshold, 16);
    const int64_t vocab = vocabOf(name);
    std::vector<Request> shortOnes = sharedPrefixRequests(vocab, 12, 4, 21);
    std::vector<Request> longOnes = sharedPrefixRequests(vocab, 30, 8, 22);
    Request turn1, turn2;
    turn1.prompt = golden["prompt_ids"][0].get<std::vector<int64_t>>();
    turn1.maxNew = golden["N"].get<int64_t>();
    turn2.prompt = turn1.prompt;
    for (int64_t t : golden["greedy_tokens"][0].get<std::vector<int64_t>>())
      turn2.prompt.push_back(t);
    turn2.prompt.push_back(turn2.prompt[0]);
    turn2.maxNew = 8;
    longOnes.insert(longOnes.begin(), {turn1, turn2});
    for (int64_t fullBatch : {1, 2}) {
      for (int64_t prefill : {kPrefill, int64_t(32)}) {
        SCOPED_TRACE(std::string(name) + ", full_batch_size " + std::to_string(fullBatch) +
                     ", prefill_seq_len " + std::to_string(prefill));
        TempDir dir;
        auto session = openArtifact(dir, name, fullBatch, false, prefill);
        ASSERT_TRUE(session);
        EXPECT_EQ(session->ropeThreshold(), threshold);
        {
          auto engine = BatchEngine::create(*session, nullptr);
          ASSERT_TRUE(engine.ok()) << engine.error();
          EXPECT_EQ(engine->prefixCache().historyLimit(), threshold);
          EXPECT_EQ(engine->prefixCache().promptLimit(), threshold);
        }
        for (double temperature : {0.0, 0.8}) {
          SCOPED_TRACE("temperature " + std::to_string(temperature));
          compareOnOff(*session, shortOnes, temperature, threshold, true, threshold);
          compareOnOff(*session, longOnes, temperature, threshold, false, threshold);
        }
        if (prefill != 32)
          continue;

        // The claim, on the artifact without its marker.
        std::string manifestPath = dir.file("artifact") + "/qeff-manifest.json";
        std::ifstream manifestIn(manifestPath);
        nlohmann::ordered_json manifest = nlohmann::ordered_json::parse(manifestIn);
        manifestIn.close();
        ASSERT_TRUE(manifest.contains("seq_len_dependent_rope"));
        EXPECT_EQ(manifest["seq_len_dependent_rope"]["threshold"], threshold);
        SessionOptions sessionOptions;
        sessionOptions.numThreads = 1;
        sessionOptions.prepackWeights = true;
        // A malformed marker is an error naming the file and the field.
        manifest["seq_len_dependent_rope"]["threshold"] = "16";
        std::ofstream(manifestPath) << manifest.dump(2);
        auto bad = Session::open(dir.file("artifact"), DeviceKind::Host, sessionOptions);
        ASSERT_FALSE(bad.ok());
        EXPECT_THAT(bad.error(), ::testing::HasSubstr(
                                     "qeff-manifest.json: \"seq_len_dependent_rope."
                                     "threshold\" must be a non-negative integer"));
        manifest.erase("seq_len_dependent_rope");
        std::ofstream(manifestPath) << manifest.dump(2);
        auto unaware = Session::open(dir.file("artifact"), DeviceKind::Host, sessionOptions);
        ASSERT_TRUE(unaware.ok()) << unaware.error();
        EXPECT_EQ(unaware->ropeThreshold(), -1);
        // With 2 rows a longer request keeps the other row busy, so that
        // the second turn waits for the first turn's row.
        std::vector<Request> chat = {turn1, turn2};
        if (fullBatch == 2)
          chat.insert(chat.begin() + 1, Request{{3}, turn1.maxNew + 8});
        Outcome off = serveAll(*unaware, chat, false, 0.0, PrefixCache::kUnlimited);
        Outcome on = serveAll(*unaware, chat, true, 0.0, PrefixCache::kUnlimited);
        EXPECT_EQ(off.tokens[0], golden["greedy_tokens"][0].get<std::vector<int64_t>>());
        EXPECT_EQ(on.cached, int64_t(turn2.prompt.size()) - 2);
        EXPECT_NE(on.tokens.back(), off.tokens.back())
            << "reuse past the rope threshold no longer changes tokens";
      }
    }
  }
}

} // namespace
