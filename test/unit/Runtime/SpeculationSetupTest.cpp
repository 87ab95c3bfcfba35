//===- SpeculationSetupTest.cpp - makeProposer and its draft checks -------===//
//
// makeProposer (SpeculationSetup.h), which `qeff run/infer` and `qeff
// serve` share: the --speculate spelling, prompt lookup, a draft equal to
// the target (it proposes, and owns its session), and the drafts refused at
// set-up: not a directory, not compiled, too few rows.
//
//===----------------------------------------------------------------------===//

#include "test/unit/Runtime/ModelBuilder.h"

#include "qeff/compile/Compile.h"
#include "runtime/generation/Generator.h"
#include "runtime/generation/SpeculationSetup.h"

#include <gmock/gmock.h>

using namespace qeff::runtime;
using namespace qeff::runtime::test;
using ::testing::HasSubstr;

namespace {

std::string goldenDir(const std::string &name) {
  return std::string(QEFF_TEST_DATA_DIR) + "/golden/" + name;
}

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

} // namespace
