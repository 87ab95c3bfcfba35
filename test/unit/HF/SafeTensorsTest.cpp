//===- SafeTensorsTest.cpp - safetensors reader and writer tests ----------===//

#include "frontend/HF/SafeTensors.h"

#include "test/unit/HF/TestUtil.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

using namespace qeff::hf;
using namespace qeff::hf::test;
using ::testing::HasSubstr;

namespace {

/// Writes a raw safetensors file into `dir` and opens it.
absl::StatusOr<std::unique_ptr<SafeTensorsFile>>
openRaw(const TempDir &dir, const std::string &header, size_t dataBytes,
        std::optional<uint64_t> lengthOverride = {}) {
  std::string path = dir.write(
      "bad.safetensors", rawSafeTensors(header, dataBytes, lengthOverride));
  return SafeTensorsFile::open(path);
}

/// Expects an error whose message names the file and contains `what`.
template <typename S>
void expectError(const S &result, const TempDir &dir, const std::string &what) {
  ASSERT_FALSE(statusOf(result).ok());
  std::string message(statusOf(result).message());
  EXPECT_THAT(message, HasSubstr(dir.file("bad.safetensors")));
  EXPECT_THAT(message, HasSubstr(what));
}

float readF32(const std::byte *p) {
  float f;
  std::memcpy(&f, p, sizeof(f));
  return f;
}

//===----------------------------------------------------------------------===//
// Golden checkpoints
//===----------------------------------------------------------------------===//

TEST(SafeTensorsGolden, LlamaModel) {
  auto file = SafeTensorsFile::open(goldenDir("LlamaForCausalLM") +
                                    "/model.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->tensors().size(), 21u);
  EXPECT_EQ((*file)->metadata().at("format"), "pt");

  auto embed = (*file)->get("model.embed_tokens.weight");
  ASSERT_TRUE(embed.ok()) << embed.status();
  EXPECT_EQ(embed->dtype(), DType::F32);
  EXPECT_EQ(embed->shape(), (std::vector<int64_t>{384, 64}));
  EXPECT_EQ(embed->byteSize(), 384u * 64 * 4);
  EXPECT_EQ(embed->numElements(), 384 * 64);
  EXPECT_FLOAT_EQ(readF32(embed->data), 0.011228802613914013f);
  EXPECT_FLOAT_EQ(readF32(embed->data + 4), 0.16787168383598328f);

  const TensorInfo *norm = (*file)->find("model.norm.weight");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(norm->begin, 541696u);
  EXPECT_EQ(norm->end, 541952u);
  TensorView normView = (*file)->view(*norm);
  EXPECT_FLOAT_EQ(readF32(normView.data), 0.6300777196884155f);
  // The last tensor ends exactly at the end of the file.
  EXPECT_EQ((*file)->dataOffset() + norm->end, (*file)->fileSize());

  // Data-section order.
  for (size_t i = 1; i < (*file)->tensors().size(); ++i)
    EXPECT_EQ((*file)->tensors()[i - 1].end, (*file)->tensors()[i].begin);
}

TEST(SafeTensorsGolden, IntegerTensorsAndMetadata) {
  auto file = SafeTensorsFile::open(goldenDir("LlamaForCausalLM") +
                                    "/golden.safetensors");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->metadata().at("model"), "LlamaForCausalLM");
  auto ids = (*file)->get("input_ids");
  ASSERT_TRUE(ids.ok()) << ids.status();
  EXPECT_EQ(ids->dtype(), DType::I64);
  EXPECT_EQ(ids->shape(), (std::vector<int64_t>{2, 11}));
  int64_t values[22];
  std::memcpy(values, ids->data, sizeof(values));
  EXPECT_EQ(values[0], 236);
  EXPECT_EQ(values[10], 247);
  EXPECT_EQ(values[11], 0); // left padding of the second row
  EXPECT_EQ(values[21], 6);
}

TEST(SafeTensorsGolden, MissingTensorIsNotFound) {
  std::string path = goldenDir("MistralForCausalLM") + "/model.safetensors";
  auto file = SafeTensorsFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  auto missing = (*file)->get("model.layers.9.mlp.up_proj.weight");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing,
              StatusHasMessage(path + ": no tensor named "
                                      "'model.layers.9.mlp.up_proj.weight'"));
}

TEST(SafeTensorsDType, NamesAndSizes) {
  EXPECT_EQ(parseDType("BF16"), DType::BF16);
  EXPECT_EQ(parseDType("BOOL"), DType::Bool);
  EXPECT_EQ(parseDType("bf16"), std::nullopt);
  EXPECT_EQ(parseDType("F8_E4M3"), DType::F8_E4M3);
  EXPECT_EQ(parseDType("F8_E5M2"), DType::F8_E5M2);
  EXPECT_EQ(parseDType("F8_E8M0"), DType::F8_E8M0);
  EXPECT_EQ(dtypeSize(DType::F8_E4M3), 1u);
  EXPECT_FALSE(isFloatingPoint(DType::F8_E4M3)); // decoded, never a weight
  EXPECT_EQ(parseDType("F4"), std::nullopt);
  EXPECT_EQ(dtypeSize(DType::F64), 8u);
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_EQ(dtypeSize(DType::U8), 1u);
  EXPECT_EQ(dtypeName(DType::I16), "I16");
  EXPECT_TRUE(isFloatingPoint(DType::F16));
  EXPECT_FALSE(isFloatingPoint(DType::I32));
}

//===----------------------------------------------------------------------===//
// Writer round trips
//===----------------------------------------------------------------------===//

TEST(SafeTensorsWriter, RoundTripDTypes) {
  TempDir dir;
  std::vector<uint16_t> bf16 = {0x3f80, 0xbf80, 0x4000, 0x0000, 0x7f80, 0x3e00};
  std::vector<uint16_t> f16 = {0x3c00, 0xbc00, 0x7bff};
  std::vector<float> f32 = {1.5f, -2.25f, 3.0e-8f, 65504.0f};
  std::vector<int64_t> i64 = {-1, 0, 1LL << 40};
  std::vector<uint8_t> flags = {1, 0, 1};
  double scalar = 3.25;
  std::vector<TensorToWrite> tensors = {
      {"w.bf16", DType::BF16, {2, 3}, bf16.data(), bf16.size() * 2},
      {"w.f16", DType::F16, {3}, f16.data(), f16.size() * 2},
      {"a.f32", DType::F32, {2, 2}, f32.data(), f32.size() * 4},
      {"ids", DType::I64, {1, 3}, i64.data(), i64.size() * 8},
      {"mask", DType::Bool, {3}, flags.data(), flags.size()},
      {"scalar", DType::F64, {}, &scalar, sizeof(scalar)},
      {"empty", DType::F32, {0, 4}, nullptr, 0},
  };
  std::string path = dir.file("rt.safetensors");
  ASSERT_TRUE(writeSafeTensors(path, tensors, {{"format", "pt"}}).ok());

  // Atomic write: no temporary file left behind.
  size_t entries = 0;
  for (const auto &e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++entries;
  }
  EXPECT_EQ(entries, 1u);

  auto file = SafeTensorsFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ((*file)->dataOffset() % 8, 0u);
  EXPECT_EQ((*file)->metadata().at("format"), "pt");
  EXPECT_EQ((*file)->tensors().size(), tensors.size());
  for (const TensorToWrite &t : tensors) {
    SCOPED_TRACE(t.name);
    auto view = (*file)->get(t.name);
    ASSERT_TRUE(view.ok()) << view.status();
    EXPECT_EQ(view->dtype(), t.dtype);
    EXPECT_EQ(view->shape(), t.shape);
    ASSERT_EQ(view->byteSize(), t.byteSize);
    if (t.byteSize) {
      EXPECT_EQ(std::memcmp(view->data, t.data, t.byteSize), 0);
    }
  }
  EXPECT_EQ((*file)->find("scalar")->numElements(), 1);
  EXPECT_EQ((*file)->find("empty")->numElements(), 0);
}

TEST(SafeTensorsWriter, OverwritesExistingFile) {
  TempDir dir;
  std::string path = dir.write("x.safetensors", "garbage");
  float v = 1.0f;
  ASSERT_TRUE(writeSafeTensors(path, {{"v", DType::F32, {1}, &v, 4}}).ok());
  auto file = SafeTensorsFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE((*file)->contains("v"));
}

TEST(SafeTensorsWriter, RejectsInconsistentInput) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  float v[2] = {1, 2};
  EXPECT_THAT(writeSafeTensors(path, {{"v", DType::F32, {3}, v, 8}}),
              StatusHasMessage("tensor 'v': shape [3] of F32 does not match "
                               "8 bytes of data"));
  EXPECT_THAT(writeSafeTensors(path, {{"v", DType::F32, {1}, v, 4},
                                      {"v", DType::F32, {1}, v + 1, 4}}),
              StatusHasMessage("duplicate tensor name 'v'"));
  EXPECT_THAT(writeSafeTensors(path, {{"__metadata__", DType::F32, {1}, v, 4}}),
              StatusHasMessage("invalid tensor name '__metadata__'"));
  EXPECT_THAT(writeSafeTensors(path, {{"v", DType::F32, {-1}, v, 4}}),
              StatusHasMessage("negative dimension -1"));
  EXPECT_FALSE(std::filesystem::exists(path));
}

//===----------------------------------------------------------------------===//
// Malformed files: each gives its specific error naming file and tensor.
//===----------------------------------------------------------------------===//

TEST(SafeTensorsMalformed, Truncated) {
  TempDir dir;
  std::string path = dir.write("bad.safetensors", "abc");
  expectError(SafeTensorsFile::open(path), dir, "file is truncated: 3 bytes");
}

TEST(SafeTensorsMalformed, EmptyFile) {
  TempDir dir;
  std::string path = dir.write("bad.safetensors", "");
  expectError(SafeTensorsFile::open(path), dir, "file is truncated: 0 bytes");
}

TEST(SafeTensorsMalformed, MissingFile) {
  TempDir dir;
  auto r = SafeTensorsFile::open(dir.file("bad.safetensors"));
  expectError(r, dir, "cannot open");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
}

TEST(SafeTensorsMalformed, HeaderLengthBeyondFile) {
  TempDir dir;
  expectError(openRaw(dir, "{}", 0, /*lengthOverride=*/1000), dir,
              "header length 1000 extends beyond the end of the file (10 "
              "bytes)");
}

TEST(SafeTensorsMalformed, HeaderLengthAbsurd) {
  TempDir dir;
  expectError(openRaw(dir, "{}", 0, /*lengthOverride=*/1ull << 62), dir,
              "header length 4611686018427387904 exceeds the limit");
}

TEST(SafeTensorsMalformed, HeaderNotJson) {
  TempDir dir;
  expectError(openRaw(dir, "{\"a\": [1, 2", 0), dir,
              "header is not valid JSON");
}

TEST(SafeTensorsMalformed, EmptyHeader) {
  TempDir dir;
  expectError(openRaw(dir, "", 0), dir, "header is not valid JSON");
}

TEST(SafeTensorsMalformed, HeaderNotObject) {
  TempDir dir;
  expectError(openRaw(dir, "[1, 2, 3]", 0), dir,
              "header must be a JSON object, got [1,2,3]");
}

TEST(SafeTensorsMalformed, EntryNotObject) {
  TempDir dir;
  expectError(openRaw(dir, R"({"a": 5})", 0), dir,
              "tensor 'a': entry must be a JSON object, got 5");
}

TEST(SafeTensorsMalformed, MissingDType) {
  TempDir dir;
  expectError(
      openRaw(dir, R"({"a": {"shape": [1], "data_offsets": [0, 4]}})", 4), dir,
      "tensor 'a': missing field 'dtype'");
}

TEST(SafeTensorsMalformed, DTypeNotString) {
  TempDir dir;
  expectError(
      openRaw(dir,
              R"({"a": {"dtype": 4, "shape": [1], "data_offsets": [0, 4]}})",
              4),
      dir, "tensor 'a': field 'dtype' must be a string, got 4");
}

TEST(SafeTensorsMalformed, UnknownDType) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F8", "shape": [4],
                                "data_offsets": [0, 4]}})",
                      4),
              dir, "tensor 'a': unknown dtype 'F8'");
}

TEST(SafeTensorsMalformed, ShapeNotArray) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": 4,
                                "data_offsets": [0, 16]}})",
                      16),
              dir, "tensor 'a': field 'shape' must be an array of integers");
}

TEST(SafeTensorsMalformed, NegativeDim) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": [2, -2],
                                "data_offsets": [0, 16]}})",
                      16),
              dir, "tensor 'a': negative dimension -2 at index 1 of 'shape'");
}

TEST(SafeTensorsMalformed, NonIntegerDim) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": [2.5],
                                "data_offsets": [0, 8]}})",
                      8),
              dir, "tensor 'a': dimension 0 of 'shape' must be an integer");
}

TEST(SafeTensorsMalformed, MissingOffsets) {
  TempDir dir;
  expectError(openRaw(dir, R"({"a": {"dtype": "F32", "shape": [1]}})", 4), dir,
              "tensor 'a': missing field 'data_offsets'");
}

TEST(SafeTensorsMalformed, OffsetsWrongArity) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": [1],
                                "data_offsets": [0, 4, 8]}})",
                      8),
              dir,
              "tensor 'a': field 'data_offsets' must be an array of two "
              "non-negative integers");
}

TEST(SafeTensorsMalformed, NegativeOffset) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": [1],
                                "data_offsets": [-4, 0]}})",
                      4),
              dir, "tensor 'a': field 'data_offsets' must be an array of two");
}

TEST(SafeTensorsMalformed, ShapeSizeMismatch) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": [2, 3],
                                "data_offsets": [0, 20]}})",
                      20),
              dir,
              "tensor 'a': shape [2, 3] of F32 needs 24 bytes but "
              "data_offsets [0, 20] span 20");
}

TEST(SafeTensorsMalformed, ShapeProductOverflow) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32",
                                "shape": [4294967296, 4294967296, 16],
                                "data_offsets": [0, 0]}})",
                      0),
              dir,
              "tensor 'a': shape [4294967296, 4294967296, 16] is too "
              "large");
}

TEST(SafeTensorsMalformed, ByteSizeOverflow) {
  // Elements fit in int64 but bytes do not (wraps to 0 without the check).
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F64",
                                "shape": [2305843009213693952],
                                "data_offsets": [0, 0]}})",
                      0),
              dir, "tensor 'a': shape [2305843009213693952] is too large");
}

TEST(SafeTensorsMalformed, OffsetsEndBeforeBegin) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "U8", "shape": [0],
                                "data_offsets": [8, 4]}})",
                      8),
              dir, "tensor 'a': data_offsets [8, 4] end before they begin");
}

TEST(SafeTensorsMalformed, OffsetsBeyondData) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": [4],
                                "data_offsets": [0, 16]}})",
                      8),
              dir,
              "tensor 'a': data_offsets [0, 16] extend beyond the data "
              "section (8 bytes)");
}

TEST(SafeTensorsMalformed, OverlappingRanges) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": [4],
                                "data_offsets": [0, 16]},
                          "b": {"dtype": "F32", "shape": [4],
                                "data_offsets": [8, 24]}})",
                      24),
              dir, "tensors 'a' [0, 16] and 'b' [8, 24] overlap");
}

TEST(SafeTensorsMalformed, HoleInData) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": [1],
                                "data_offsets": [0, 4]},
                          "b": {"dtype": "F32", "shape": [1],
                                "data_offsets": [8, 12]}})",
                      12),
              dir, "hole in the data section: bytes [4, 8) before tensor 'b'");
}

TEST(SafeTensorsMalformed, TrailingData) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": [1],
                                "data_offsets": [0, 4]}})",
                      12),
              dir, "data section has 8 trailing bytes");
}

TEST(SafeTensorsMalformed, DuplicateTensorName) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "shape": [1],
                                "data_offsets": [0, 4]},
                          "a": {"dtype": "F32", "shape": [1],
                                "data_offsets": [4, 8]}})",
                      8),
              dir, "header: duplicate tensor name 'a'");
}

TEST(SafeTensorsMalformed, DuplicateFieldInEntry) {
  TempDir dir;
  expectError(openRaw(dir,
                      R"({"a": {"dtype": "F32", "dtype": "F16", "shape": [1],
                                "data_offsets": [0, 4]}})",
                      4),
              dir, "duplicate key 'dtype' in 'a'");
}

TEST(SafeTensorsMalformed, MetadataNotObject) {
  TempDir dir;
  expectError(openRaw(dir, R"({"__metadata__": ["pt"]})", 0), dir,
              "'__metadata__' must be an object of strings");
}

TEST(SafeTensorsMalformed, MetadataValueNotString) {
  TempDir dir;
  expectError(openRaw(dir, R"({"__metadata__": {"format": 1}})", 0), dir,
              "'__metadata__' field 'format' must be a string, got 1");
}

TEST(SafeTensorsMalformed, DeeplyNestedHeader) {
  TempDir dir;
  expectError(
      openRaw(dir, std::string(100000, '[') + std::string(100000, ']'), 0), dir,
      "header nests deeper than 64 levels");
}

TEST(SafeTensorsMalformed, PaddedHeaderAndEmptyFileAreValid) {
  // Trailing spaces (the reference writer's alignment padding) are fine, and
  // a file with no tensors is valid.
  TempDir dir;
  auto file = openRaw(dir, "{\"__metadata__\": {\"k\": \"v\"}}     ", 0);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE((*file)->tensors().empty());
  EXPECT_EQ((*file)->metadata().at("k"), "v");
}

TEST(SafeTensorsMalformed, HeaderWithNulBytes) {
  TempDir dir;
  expectError(openRaw(dir, std::string("{\"a\"\0\0", 6), 0), dir,
              "header is not valid JSON");
}

//===----------------------------------------------------------------------===//
// Robustness: every truncation and many byte corruptions of a valid file give
// either a valid file or an error, never a crash (run under ASan to see
// out-of-bounds reads).
//===----------------------------------------------------------------------===//

std::string validFileBytes(const TempDir &dir) {
  float f[3] = {1, 2, 3};
  int64_t i[2] = {4, 5};
  EXPECT_TRUE(writeSafeTensors(dir.file("valid.safetensors"),
                               {{"f", DType::F32, {3}, f, sizeof(f)},
                                {"i", DType::I64, {2, 1}, i, sizeof(i)}},
                               {{"format", "pt"}})
                  .ok());
  std::ifstream in(dir.file("valid.safetensors"), std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SafeTensorsRobustness, EveryTruncation) {
  TempDir dir;
  std::string bytes = validFileBytes(dir);
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::string path = dir.write("cut.safetensors", bytes.substr(0, n));
    auto file = SafeTensorsFile::open(path);
    EXPECT_FALSE(file.ok()) << "prefix of " << n << " bytes";
    EXPECT_THAT(file, StatusHasMessage(path));
  }
}

TEST(SafeTensorsRobustness, CorruptedBytes) {
  TempDir dir;
  std::string bytes = validFileBytes(dir);
  size_t headerEnd = bytes.size() - 3 * 4 - 2 * 8;
  const char replacements[] = {'\0', '"', '{', '}', '[',    ']', ',',
                               ':',  '9', '-', 'e', '\xff', ' '};
  int accepted = 0, rejected = 0;
  for (size_t pos = 0; pos < headerEnd; ++pos) {
    for (char c : replacements) {
      if (bytes[pos] == c)
        continue;
      std::string copy = bytes;
      copy[pos] = c;
      std::string path = dir.write("bad.safetensors", copy);
      auto file = SafeTensorsFile::open(path);
      if (!file.ok()) {
        ++rejected;
        continue;
      }
      ++accepted;
      // Whatever was accepted must be self-consistent.
      for (const TensorInfo &t : (*file)->tensors()) {
        TensorView v = (*file)->view(t);
        ASSERT_LE((*file)->dataOffset() + t.end, (*file)->fileSize());
        volatile std::byte sink{};
        for (size_t k = 0; k < v.byteSize(); ++k)
          sink = v.data[k];
        (void)sink;
      }
    }
  }
  EXPECT_GT(rejected, 0);
  EXPECT_GT(accepted, 0); // e.g. edits inside the metadata string
}

} // namespace
