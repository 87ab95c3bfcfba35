//===- SpeculationSetupTest.cpp - makeProposer and its draft checks -------===//
//
// makeProposer (SpeculationSetup.h), which `qeff run/infer` and `qeff
// serve` share: the --speculate spelling, prompt lookup, a draft equal to
// the target (it proposes, and owns its session), and the drafts refused at
// set-up: a larger vocabulary (a golden of 384 ids drafting for one of
// 320), a smaller one without tokenizers to compare, tokenizers that read
// an id differently (and a smaller one with the target's tokenizer, whose
// sampled proposals come with distributions of the target's size), not a
// directory, not compiled, too few rows.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/GoldenArtifact.h"
#include "test/unit/Runtime/ModelBuilder.h"

#include "frontend/Tokenizer/Tokenizer.h"
#include "qeff/compile/Compile.h"
#include "runtime/generation/Generator.h"
#include "runtime/generation/SpeculationSetup.h"

#include <gmock/gmock.h>

#include <fstream>

using namespace qeff::runtime;
using namespace qeff::runtime::test;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

/// Golden `name` compiled into `dir` (ctx 32, chunks of 4), a target of K
/// = 3 when `target`.
std::string compileGolden(const TempDir &dir, const std::string &name,
                          const std::string &sub, bool target,
                          int64_t batch = 1) {
  qeff::compile::Options options;
  options.checkpointDir = goldenDir(name);
  options.outputDir = dir.file(sub);
  options.ctxLen = 32;
  options.prefillSeqLen = 4;
  options.batchSize = batch;
  if (target)
    options.numSpeculativeTokens = {3};
  options.runQAic = false;
  auto compiled = qeff::compile::compileCheckpoint(options);
  EXPECT_TRUE(compiled) << compiled.message;
  return options.outputDir;
}

std::optional<Session> open(const std::string &dir) {
  SessionOptions options;
  options.numThreads = 1;
  auto s = Session::open(dir, DeviceKind::Host, options);
  EXPECT_TRUE(s.ok()) << s.error();
  if (!s.ok())
    return std::nullopt;
  return std::move(*s);
}

Result<std::shared_ptr<Proposer>> draftFor(Session &target, int64_t rows,
                                           const std::string &draftDir) {
  SpeculationSpec spec;
  spec.method = "draft";
  spec.draftArtifactDir = draftDir;
  ProposerTarget t;
  t.session = &target;
  t.rows = rows;
  t.ctxLen = 32;
  SessionOptions options;
  options.numThreads = 1;
  return makeProposer(spec, DeviceKind::Host, options, t, GenerationOptions());
}

TEST(SpeculationSetup, ParsesTheSpeculateFlag) {
  auto lookup = parseSpeculateFlag("prompt-lookup");
  ASSERT_TRUE(lookup.ok());
  EXPECT_EQ(lookup->method, "prompt-lookup");
  auto draft = parseSpeculateFlag("draft=/some/dir");
  ASSERT_TRUE(draft.ok());
  EXPECT_EQ(draft->method, "draft");
  EXPECT_EQ(draft->draftArtifactDir, "/some/dir");
  for (const char *bad : {"draft=", "ngram", "", "prompt-lookup "}) {
    auto r = parseSpeculateFlag(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error(), "must be prompt-lookup or draft=DIR, got '" +
                             std::string(bad) + "'");
  }
}

TEST(SpeculationSetup, PromptLookup) {
  SpeculationSpec spec;
  spec.method = "prompt-lookup";
  spec.promptLookupMax = 2;
  auto proposer = makeProposer(spec, DeviceKind::Host, {}, {}, {});
  ASSERT_TRUE(proposer.ok()) << proposer.error();
  EXPECT_EQ((*proposer)->name(), "prompt-lookup");
  std::vector<int64_t> context = {5, 6, 7, 5, 6};
  auto proposals = (*proposer)->propose({&context}, {3});
  ASSERT_TRUE(proposals.ok());
  EXPECT_EQ((*proposals)[0].tokens, (std::vector<int64_t>{7, 5, 6}));
  spec.promptLookupMax = 0;
  auto bad = makeProposer(spec, DeviceKind::Host, {}, {}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error(), HasSubstr("prompt_lookup_max >= 1, got 0"));
  spec.method = "eagle";
  bad = makeProposer(spec, DeviceKind::Host, {}, {}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error(), HasSubstr("unknown speculation method 'eagle'"));
}

// Draft = target: accepted (same vocabulary, no tokenizers to compare), it
// proposes what the target would generate greedily, and the session it
// opened lives as long as the proposer.
TEST(SpeculationSetup, DraftEqualToTheTargetProposes) {
  TempDir dir;
  std::string target = compileGolden(dir, "LlamaForCausalLM", "target", true);
  std::string draftDir = compileGolden(dir, "LlamaForCausalLM", "draft", false);
  auto session = open(target);
  ASSERT_TRUE(session);
  auto proposer = draftFor(*session, 1, draftDir);
  ASSERT_TRUE(proposer.ok()) << proposer.error();
  EXPECT_EQ((*proposer)->name(), "draft=" + draftDir);
  // The draft's greedy continuation is the target's greedy tokens.
  std::vector<int64_t> context = {47, 310, 327, 150, 226, 40, 59, 6};
  auto proposals = (*proposer)->propose({&context}, {3});
  ASSERT_TRUE(proposals.ok()) << proposals.error();
  std::vector<int64_t> first = (*proposals)[0].tokens;
  auto generator = Generator::create(*session, nullptr);
  ASSERT_TRUE(generator.ok()) << generator.error();
  GenerationOptions options;
  options.maxNewTokens = 4;
  auto result = generator->generate({context}, options);
  ASSERT_TRUE(result.ok()) << result.error();
  const std::vector<int64_t> &greedy = result->rows[0].generatedIds;
  ASSERT_EQ(greedy.size(), 4u);
  EXPECT_EQ(first, std::vector<int64_t>(greedy.begin(), greedy.begin() + 3));
  // After the target took token 0 (the draft's cache is caught up from the
  // first difference): tokens 1..3.
  context.push_back(greedy[0]);
  proposals = (*proposer)->propose({&context}, {3});
  ASSERT_TRUE(proposals.ok()) << proposals.error();
  EXPECT_EQ((*proposals)[0].tokens,
            std::vector<int64_t>(greedy.begin() + 1, greedy.end()));
}

/// makeProposer's error for a draft compiled from golden `draft` under a
/// target compiled from golden `target`; the draft's directory in `dir`.
std::string draftError(const std::string &target, const std::string &draft,
                       std::string &draftDir) {
  TempDir dir;
  std::string targetDir = compileGolden(dir, target, "target", true);
  draftDir = compileGolden(dir, draft, "draft", false);
  auto session = open(targetDir);
  if (!session)
    return "no target session";
  auto proposer = draftFor(*session, 1, draftDir);
  return proposer.ok() ? "accepted" : proposer.error();
}

// GPT2LMHeadModel's golden has 320 ids, LlamaForCausalLM's 384: a larger
// draft vocabulary is refused; a smaller one too when no tokenizers show
// that its ids mean the target's.
TEST(SpeculationSetup, RefusesADraftVocabularyThatDoesNotFit) {
  std::string draftDir;
  std::string larger = draftError("GPT2LMHeadModel", "LlamaForCausalLM", draftDir);
  EXPECT_EQ(larger,
            "the draft model " + draftDir +
                ": its vocabulary has 384 ids, the target's 320: it could "
                "propose ids the target does not have (a draft needs the "
                "target's tokenizer)");
  std::string smaller = draftError("LlamaForCausalLM", "GPT2LMHeadModel", draftDir);
  EXPECT_THAT(smaller,
              AllOf(HasSubstr("the draft model " + draftDir + ": "),
                    HasSubstr("its vocabulary has 320 ids, the target's 384"),
                    HasSubstr("without a tokenizer.json in both artifacts")));
}

TEST(SpeculationSetup, RefusesWhatIsNoFittingArtifact) {
  TempDir dir;
  std::string target =
      compileGolden(dir, "LlamaForCausalLM", "target", true, /*batch=*/2);
  std::string draftDir = compileGolden(dir, "LlamaForCausalLM", "draft", false);
  auto session = open(target);
  ASSERT_TRUE(session);
  auto rows = draftFor(*session, 2, draftDir);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.error(), "the draft model " + draftDir +
                              ": it decodes 1 rows but the target 2: compile "
                              "it with the target's --batch-size or "
                              "--full-batch-size");
  auto missing = draftFor(*session, 2, dir.file("nothing"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error(),
            "the draft model " + dir.file("nothing") + ": not a directory");
  auto checkpoint = draftFor(*session, 2, goldenDir("LlamaForCausalLM"));
  ASSERT_FALSE(checkpoint.ok());
  EXPECT_THAT(checkpoint.error(),
              HasSubstr("not a compiled artifact (no qeff-manifest.json)"));
}

/// A byte-less BPE tokenizer of `vocab` (token -> id, JSON) and an added
/// special token "</s>" with id `eos`.
qeff::tokenizer::Tokenizer tokenizer(const std::string &vocab, int64_t eos) {
  std::string json =
      R"({"added_tokens": [{"id": )" + std::to_string(eos) +
      R"(, "content": "</s>", "special": true}], "model": {"type": "BPE", "vocab": )" +
      vocab + R"(, "merges": ["a b"]}})";
  auto t = qeff::tokenizer::Tokenizer::fromJsonText(json);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

// Tokenizers decide when both artifacts have one: the same ids read the
// same (a smaller model vocabulary is then fine: padding rows), else the
// first id read differently is named.
TEST(SpeculationSetup, TokenizersMustReadEveryIdAlike) {
  auto target = tokenizer(R"({"a": 0, "b": 1, "ab": 2})", 3);
  auto same = tokenizer(R"({"a": 0, "b": 1, "ab": 2})", 3);
  auto swapped = tokenizer(R"({"b": 0, "a": 1, "ab": 2})", 3);
  auto otherEos = tokenizer(R"({"a": 0, "b": 1, "ab": 2})", 4);
  EXPECT_TRUE(checkDraftVocabulary(64, 64, &target, &same));
  EXPECT_TRUE(checkDraftVocabulary(64, 32, &target, &same));
  Status larger = checkDraftVocabulary(32, 64, &target, &same);
  ASSERT_FALSE(larger);
  EXPECT_THAT(larger.error(), HasSubstr("its vocabulary has 64 ids, the target's 32"));
  Status differs = checkDraftVocabulary(64, 64, &target, &swapped);
  ASSERT_FALSE(differs);
  EXPECT_EQ(differs.error(), "its tokenizer reads id 0 as 'b', the target's as "
                             "'a': a draft needs the target's tokenizer");
  Status eos = checkDraftVocabulary(64, 64, &target, &otherEos);
  ASSERT_FALSE(eos);
  EXPECT_THAT(eos.error(), HasSubstr("its tokenizer has 5 ids, the target's 4"));
  // One tokenizer only: the vocabulary sizes decide (as vLLM and HF do).
  EXPECT_TRUE(checkDraftVocabulary(64, 64, &target, nullptr));
  EXPECT_TRUE(checkDraftVocabulary(64, 64, nullptr, nullptr));
  EXPECT_FALSE(checkDraftVocabulary(64, 32, nullptr, &same));
}

// A draft with a smaller model vocabulary (GPT-2's golden: 320 ids under
// Llama's 384) and the target's tokenizer.json is accepted; sampling, it
// hands over distributions of the target's size (ids past its own at 0),
// which verification indexes by the target's ids. Another tokenizer is
// refused, naming the first id read differently.
TEST(SpeculationSetup, ASmallerDraftWithTheTargetsTokenizer) {
  TempDir dir;
  std::string target = compileGolden(dir, "LlamaForCausalLM", "target", true);
  std::string draftDir = compileGolden(dir, "GPT2LMHeadModel", "draft", false);
  const std::string model =
      R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";
  auto write = [](const std::string &path, const std::string &text) {
    std::ofstream(path) << text;
  };
  write(target + "/tokenizer.json", "{" + model + "}");
  write(draftDir + "/tokenizer.json", "{" + model + "}");
  auto targetTokenizer = qeff::tokenizer::Tokenizer::fromDirectory(target);
  ASSERT_TRUE(targetTokenizer.ok()) << targetTokenizer.status();
  auto session = open(target);
  ASSERT_TRUE(session);
  SpeculationSpec spec;
  spec.method = "draft";
  spec.draftArtifactDir = draftDir;
  ProposerTarget t;
  t.session = &*session;
  t.rows = 1;
  t.ctxLen = 32;
  t.tokenizer = &*targetTokenizer;
  SessionOptions options;
  options.numThreads = 1;
  GenerationOptions sampling;
  sampling.temperature = 1.0;
  sampling.seed = 5;
  auto proposer = makeProposer(spec, DeviceKind::Host, options, t, sampling);
  ASSERT_TRUE(proposer.ok()) << proposer.error();
  std::vector<int64_t> context = {47, 310, 3, 150, 226, 40, 59, 6};
  for (int64_t &id : context)
    id %= 320;
  auto proposals = (*proposer)->propose({&context}, {3});
  ASSERT_TRUE(proposals.ok()) << proposals.error();
  const Proposal &p = (*proposals)[0];
  ASSERT_EQ(p.tokens.size(), 3u);
  ASSERT_EQ(p.probs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_LT(p.tokens[i], 320);
    ASSERT_EQ(p.probs[i].size(), 384u);
    double sum = 0;
    for (float q : p.probs[i])
      sum += q;
    EXPECT_NEAR(sum, 1.0, 1e-4);
    EXPECT_GT(p.probs[i][p.tokens[i]], 0.0f);
    for (size_t v = 320; v < 384; ++v)
      EXPECT_EQ(p.probs[i][v], 0.0f) << "id " << v;
  }

  write(draftDir + "/tokenizer.json",
        R"({"model": {"type": "BPE", "vocab": {"a": 0, "ab": 1, "b": 2}, "merges": ["a b"]}})");
  auto refused = makeProposer(spec, DeviceKind::Host, options, t, sampling);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error(), "the draft model " + draftDir +
                                 ": its tokenizer reads id 1 as 'ab', the "
                                 "target's as 'b': a draft needs the target's "
                                 "tokenizer");
}

} // namespace
