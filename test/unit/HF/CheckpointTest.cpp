//===- CheckpointTest.cpp - sharded and unsharded checkpoint tests --------===//

#include "frontend/HF/Checkpoint.h"

#include "test/unit/HF/TestUtil.h"

#include <cstring>

using namespace qeff::hf;
using namespace qeff::hf::test;
using ::testing::HasSubstr;

namespace {

constexpr const char *kShard1 = "model-00001-of-00002.safetensors";
constexpr const char *kShard2 = "model-00002-of-00002.safetensors";

/// Splits the golden Llama checkpoint into two shards plus an index in `dir`.
void writeShardedLlama(const TempDir &dir) {
  auto single = SafeTensorsFile::open(goldenDir("LlamaForCausalLM") +
                                      "/model.safetensors");
  ASSERT_TRUE(single.ok()) << single.status();
  std::vector<TensorToWrite> shards[2];
  std::string weightMap;
  size_t i = 0;
  for (const TensorInfo &info : (*single)->tensors()) {
    TensorView v = (*single)->view(info);
    int shard = (i++ % 2);
    shards[shard].push_back(
        {info.name, info.dtype, info.shape, v.data, v.byteSize()});
    weightMap += std::string(weightMap.empty() ? "" : ",\n") + "    \"" +
                 info.name + "\": \"" + (shard ? kShard2 : kShard1) + "\"";
  }
  ASSERT_TRUE(writeSafeTensors(dir.file(kShard1), shards[0]).ok());
  ASSERT_TRUE(writeSafeTensors(dir.file(kShard2), shards[1]).ok());
  dir.write("model.safetensors.index.json",
            "{\n  \"metadata\": {\"total_size\": 541952},\n"
            "  \"weight_map\": {\n" +
                weightMap + "\n  }\n}\n");
}

TEST(Checkpoint, GoldenUnsharded) {
  auto ckpt = Checkpoint::open(goldenDir("LlamaForCausalLM"));
  ASSERT_TRUE(ckpt.ok()) << ckpt.status();
  EXPECT_FALSE((*ckpt)->isSharded());
  EXPECT_EQ((*ckpt)->size(), 21u);
  EXPECT_EQ((*ckpt)->totalElements(), 135488); // golden/index.json
  EXPECT_EQ((*ckpt)->totalBytes(), 135488u * 4);
  EXPECT_TRUE((*ckpt)->contains("lm_head.weight"));
  auto names = (*ckpt)->tensorNames();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  auto q = (*ckpt)->get("model.layers.1.self_attn.k_proj.weight");
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->shape(), (std::vector<int64_t>{32, 64})); // 2 kv heads x 16
  EXPECT_THAT((*ckpt)->get("nope"), StatusHasMessage("no tensor named 'nope'"));

  auto mistral = Checkpoint::open(goldenDir("MistralForCausalLM"));
  ASSERT_TRUE(mistral.ok()) << mistral.status();
  EXPECT_EQ((*mistral)->totalElements(), 115008);
}

TEST(Checkpoint, ShardedEqualsUnsharded) {
  TempDir dir;
  writeShardedLlama(dir);
  auto single = Checkpoint::open(goldenDir("LlamaForCausalLM"));
  auto sharded = Checkpoint::open(dir.path());
  ASSERT_TRUE(single.ok()) << single.status();
  ASSERT_TRUE(sharded.ok()) << sharded.status();
  EXPECT_TRUE((*sharded)->isSharded());
  EXPECT_EQ((*sharded)->files().size(), 2u);
  ASSERT_EQ((*single)->tensorNames(), (*sharded)->tensorNames());
  for (const std::string &name : (*single)->tensorNames()) {
    SCOPED_TRACE(name);
    auto a = (*single)->get(name);
    auto b = (*sharded)->get(name);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->dtype(), b->dtype());
    EXPECT_EQ(a->shape(), b->shape());
    ASSERT_EQ(a->byteSize(), b->byteSize());
    EXPECT_EQ(std::memcmp(a->data, b->data, a->byteSize()), 0);
  }
  EXPECT_EQ((*single)->totalBytes(), (*sharded)->totalBytes());
  // The index can also be opened by path.
  auto byIndex = Checkpoint::open(dir.file("model.safetensors.index.json"));
  ASSERT_TRUE(byIndex.ok()) << byIndex.status();
  EXPECT_EQ((*byIndex)->size(), 21u);
}

//===----------------------------------------------------------------------===//
// Malformed indexes
//===----------------------------------------------------------------------===//

/// Writes two tiny shards: s1 holds "a", s2 holds "b".
void writeTinyShards(const TempDir &dir) {
  float a = 1, b = 2;
  ASSERT_TRUE(writeSafeTensors(dir.file("s1.safetensors"),
                               {{"a", DType::F32, {1}, &a, 4}})
                  .ok());
  ASSERT_TRUE(writeSafeTensors(dir.file("s2.safetensors"),
                               {{"b", DType::F32, {1}, &b, 4}})
                  .ok());
}

absl::StatusOr<std::unique_ptr<Checkpoint>> openIndex(const TempDir &dir,
                                                      const std::string &text) {
  dir.write("model.safetensors.index.json", text);
  return Checkpoint::open(dir.path());
}

void expectIndexError(const absl::StatusOr<std::unique_ptr<Checkpoint>> &r,
                      const TempDir &dir, const std::string &what) {
  ASSERT_FALSE(r.ok());
  std::string message(r.status().message());
  EXPECT_THAT(message, HasSubstr(dir.file("model.safetensors.index.json")));
  EXPECT_THAT(message, HasSubstr(what));
}

TEST(CheckpointMalformed, TinyShardsAreValid) {
  TempDir dir;
  writeTinyShards(dir);
  auto ok = openIndex(
      dir, R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})");
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ((*ok)->fileOf("b")->path(), dir.file("s2.safetensors"));
}

TEST(CheckpointMalformed, MissingShard) {
  TempDir dir;
  writeTinyShards(dir);
  auto r = openIndex(dir, R"({"weight_map": {"a": "s1.safetensors",
                                             "c": "s3.safetensors"}})");
  expectIndexError(r, dir,
                   "weight_map entry 'c' names shard 's3.safetensors', which "
                   "does not exist");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

TEST(CheckpointMalformed, TensorMissingInShard) {
  TempDir dir;
  writeTinyShards(dir);
  expectIndexError(
      openIndex(dir, R"({"weight_map": {"a": "s1.safetensors",
                                        "b": "s1.safetensors"}})"),
      dir,
      "weight_map maps tensor 'b' to shard 's1.safetensors', which has no "
      "such tensor");
}

TEST(CheckpointMalformed, WeightMapNotObject) {
  TempDir dir;
  expectIndexError(openIndex(dir, R"({"weight_map": ["s1.safetensors"]})"), dir,
                   "field 'weight_map' must be an object mapping tensor names "
                   "to shard files");
}

TEST(CheckpointMalformed, WeightMapMissing) {
  TempDir dir;
  expectIndexError(openIndex(dir, R"({"metadata": {}})"), dir,
                   "missing field 'weight_map'");
}

TEST(CheckpointMalformed, WeightMapValueNotString) {
  TempDir dir;
  expectIndexError(openIndex(dir, R"({"weight_map": {"a": 1}})"), dir,
                   "weight_map entry 'a' must be a shard file name (string)");
}

TEST(CheckpointMalformed, ShardOutsideDirectory) {
  TempDir dir;
  expectIndexError(
      openIndex(dir, R"({"weight_map": {"a": "../s1.safetensors"}})"), dir,
      "shard '../s1.safetensors' must be a plain file name");
}

TEST(CheckpointMalformed, IndexNotObject) {
  TempDir dir;
  expectIndexError(openIndex(dir, "[]"), dir, "index must be a JSON object");
}

TEST(CheckpointMalformed, IndexNotJson) {
  TempDir dir;
  expectIndexError(openIndex(dir, "{\"weight_map\": {"), dir,
                   "index is not valid JSON");
}

TEST(CheckpointMalformed, DuplicateIndexEntry) {
  TempDir dir;
  writeTinyShards(dir);
  expectIndexError(openIndex(dir, R"({"weight_map": {"a": "s1.safetensors",
                                        "a": "s2.safetensors"}})"),
                   dir, "duplicate key 'a' in 'weight_map'");
}

TEST(CheckpointMalformed, TensorInTwoShards) {
  TempDir dir;
  float v = 1;
  ASSERT_TRUE(writeSafeTensors(dir.file("s1.safetensors"),
                               {{"a", DType::F32, {1}, &v, 4}})
                  .ok());
  ASSERT_TRUE(writeSafeTensors(dir.file("s2.safetensors"),
                               {{"a", DType::F32, {1}, &v, 4},
                                {"b", DType::F32, {1}, &v, 4}})
                  .ok());
  expectIndexError(openIndex(dir, R"({"weight_map": {"a": "s1.safetensors",
                                        "b": "s2.safetensors"}})"),
                   dir, "tensor 'a' is stored in two shards");
}

TEST(CheckpointMalformed, ShardTensorNotInIndex) {
  TempDir dir;
  writeTinyShards(dir);
  float v = 1;
  ASSERT_TRUE(writeSafeTensors(dir.file("s2.safetensors"),
                               {{"b", DType::F32, {1}, &v, 4},
                                {"extra", DType::F32, {1}, &v, 4}})
                  .ok());
  expectIndexError(openIndex(dir, R"({"weight_map": {"a": "s1.safetensors",
                                        "b": "s2.safetensors"}})"),
                   dir, "holds tensor 'extra', which weight_map does not list");
}

TEST(CheckpointMalformed, BrokenShardNamesShard) {
  TempDir dir;
  writeTinyShards(dir);
  dir.write("s2.safetensors", "xx");
  auto r = openIndex(
      dir, R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(
      r, StatusHasMessage(dir.file("s2.safetensors") + ": file is truncated"));
}

TEST(CheckpointMalformed, NoWeightsInDirectory) {
  TempDir dir;
  EXPECT_THAT(Checkpoint::open(dir.path()),
              StatusHasMessage("no model.safetensors or "
                               "model.safetensors.index.json"));
}

} // namespace
