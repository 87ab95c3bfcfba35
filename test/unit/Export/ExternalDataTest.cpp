//===- ExternalDataTest.cpp - the external data file writer ---------------===//
//
// Part of qeff. writeDataFile against a reference built in memory (each
// tensor converted element by element at its laid-out offset, zero gaps), in
// every write mode, with one and several threads and with chunks small enough
// that tensors span many chunks and staging buffers, from file-mapped sources
// (released behind the sweep, transposed ones in strips); its errors (existing
// file, missing directory, a write refused half way by RLIMIT_FSIZE).
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/ExternalData.h"

#include "lowering/Export/WeightConversion.h"

#include <gtest/gtest.h>

#include <memory>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

using namespace qeff::exporter;

namespace {

class ExternalDataTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/qeff-external-data-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string &f : files_)
      std::remove(f.c_str());
    ::rmdir(dir_.c_str());
  }
  std::string path(const std::string &name) {
    files_.push_back(dir_ + "/" + name);
    return files_.back();
  }
  static std::vector<std::byte> read(const std::string &file) {
    std::ifstream in(file, std::ios::binary);
    std::vector<char> chars((std::istreambuf_iterator<char>(in)),
                            std::istreambuf_iterator<char>());
    std::vector<std::byte> bytes(chars.size());
    if (!chars.empty()) // memcpy from an empty vector's null data() is UB
      std::memcpy(bytes.data(), chars.data(), chars.size());
    return bytes;
  }

  std::string dir_;
  std::vector<std::string> files_;
};

/// Source tensors of several kinds; `storage` owns their bytes.
std::vector<DataTensor> makeTensors(std::vector<std::vector<std::byte>> &storage) {
  std::mt19937 rng(7);
  auto floats = [&](DType dtype, int64_t n) {
    std::vector<std::byte> bytes(n * qeff::hf::dtypeSize(dtype));
    for (int64_t i = 0; i < n; ++i) {
      float v = std::uniform_real_distribution<float>(-2.0f, 2.0f)(rng) *
                (i % 13 == 0 ? 1e5f : 1.0f); // some clip in f16
      convertElements(reinterpret_cast<const std::byte *>(&v), DType::F32,
                      bytes.data() + i * qeff::hf::dtypeSize(dtype), dtype, 1);
    }
    storage.push_back(std::move(bytes));
    return storage.back().data();
  };
  std::vector<DataTensor> tensors;
  auto add = [&](DType from, DType to, int64_t rows, int64_t cols, bool transpose) {
    DataTensor t;
    t.src = floats(from, rows * cols);
    t.from = from;
    t.to = to;
    t.numElements = rows * cols;
    t.transpose = transpose;
    t.rows = rows;
    t.cols = cols;
    tensors.push_back(t);
  };
  add(DType::BF16, DType::F32, 1, 3, false);      // 12 bytes: gaps follow
  add(DType::BF16, DType::F32, 300, 171, true);   // a Linear weight
  add(DType::F32, DType::F16, 1, 10007, false);   // clipping
  add(DType::F16, DType::F16, 0, 5, false);       // empty
  add(DType::BF16, DType::F16, 1000, 33, true);   // long output rows
  add(DType::F32, DType::F32, 1, 4099, false);    // identity
  // Raw bytes (a large constant).
  storage.emplace_back(5001);
  for (size_t i = 0; i < storage.back().size(); ++i)
    storage.back()[i] = static_cast<std::byte>(i * 31);
  DataTensor raw;
  raw.src = storage.back().data();
  raw.from = raw.to = DType::U8;
  raw.numElements = 5001;
  tensors.push_back(raw);
  return tensors;
}

/// The expected file: each tensor converted element by element.
std::vector<std::byte> reference(const std::vector<DataTensor> &tensors, uint64_t alignment,
                                 uint64_t &clipped) {
  uint64_t size = 0;
  std::vector<uint64_t> offsets = layoutDataFile(tensors, alignment, size);
  std::vector<std::byte> file(size, std::byte{0});
  clipped = 0;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const DataTensor &t = tensors[k];
    size_t in = qeff::hf::dtypeSize(t.from), out = qeff::hf::dtypeSize(t.to);
    for (int64_t e = 0; e < t.numElements; ++e) {
      int64_t at = e;
      if (t.transpose)
        at = (e % t.cols) * t.rows + e / t.cols;
      clipped += convertElements(t.src + e * in, t.from, file.data() + offsets[k] + at * out,
                                 t.to, 1);
    }
  }
  return file;
}

TEST_F(ExternalDataTest, LayoutAlignsEveryTensor) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<DataTensor> tensors = makeTensors(storage);
  uint64_t size = 0;
  std::vector<uint64_t> offsets = layoutDataFile(tensors, 64, size);
  ASSERT_EQ(offsets.size(), tensors.size());
  EXPECT_EQ(offsets[0], 0u);
  EXPECT_EQ(offsets[1], 64u); // after 12 bytes
  for (size_t i = 0; i < offsets.size(); ++i) {
    EXPECT_EQ(offsets[i] % 64, 0u);
    if (i > 0)
      EXPECT_GE(offsets[i], offsets[i - 1] + tensors[i - 1].fileBytes());
  }
  EXPECT_EQ(size, offsets.back() + tensors.back().fileBytes());
}

TEST_F(ExternalDataTest, EveryModeAndThreadCountWritesTheReferenceBytes) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<DataTensor> tensors = makeTensors(storage);
  uint64_t expectedClipped = 0;
  std::vector<std::byte> expected = reference(tensors, 64, expectedClipped);
  ASSERT_GT(expectedClipped, 0u);
  int n = 0;
  for (DataWriteMode mode :
       {DataWriteMode::Auto, DataWriteMode::Buffered, DataWriteMode::Direct}) {
    for (unsigned threads : {1u, 3u}) {
      // 4 KiB chunks: every tensor but the smallest spans several chunks and
      // staging buffers; 1 MiB: whole tensors per chunk.
      for (size_t chunk : {size_t(4096), size_t(1) << 20}) {
        SCOPED_TRACE("mode " + std::to_string(static_cast<int>(mode)) + ", " +
                     std::to_string(threads) + " threads, chunk " +
                     std::to_string(chunk));
        DataFileOptions options;
        options.mode = mode;
        options.threads = threads;
        options.chunkBytes = chunk;
        std::vector<size_t> done;
        options.progress = [&](size_t i) { done.push_back(i); };
        std::string file = path("data" + std::to_string(n++));
        DataFileResult result = writeDataFile(file, tensors, options);
        ASSERT_TRUE(result) << result.error;
        EXPECT_EQ(result.fileBytes, expected.size());
        EXPECT_EQ(result.clipped, expectedClipped);
        EXPECT_EQ(read(file), expected);
        std::vector<size_t> order(tensors.size());
        for (size_t i = 0; i < order.size(); ++i)
          order[i] = i;
        EXPECT_EQ(done, order);
        if (mode == DataWriteMode::Buffered)
          EXPECT_EQ(result.mode, DataWriteMode::Buffered);
      }
    }
  }
}

/// Row selections (replicated KV heads): the file holds exactly the bytes of
/// a tensor built by copying the selected source rows, plain and transposed,
/// converted, whatever the chunking and threads.
TEST_F(ExternalDataTest, RowSelectionsWriteTheSelectedRows) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<DataTensor> sources = makeTensors(storage);
  const DataTensor &linear = sources[1]; // bf16 [300, 171]
  std::vector<int64_t> rows;
  for (int64_t head = 0; head < 300 / 50; ++head)
    for (int copy = 0; copy < 3; ++copy)
      for (int64_t r = 0; r < 50; ++r)
        rows.push_back(head * 50 + r);
  rows.push_back(299); // a lone repeated row
  size_t in = qeff::hf::dtypeSize(linear.from);
  storage.emplace_back(rows.size() * linear.cols * in);
  for (size_t r = 0; r < rows.size(); ++r)
    std::memcpy(storage.back().data() + r * linear.cols * in,
                linear.src + rows[r] * linear.cols * in, linear.cols * in);
  std::vector<DataTensor> copied, selected;
  for (bool transpose : {false, true}) {
    for (DType to : {DType::F32, DType::F16}) {
      DataTensor c;
      c.src = storage.back().data();
      c.from = linear.from;
      c.to = to;
      c.rows = static_cast<int64_t>(rows.size());
      c.cols = linear.cols;
      c.numElements = c.rows * c.cols;
      c.transpose = transpose;
      copied.push_back(c);
      DataTensor s = c;
      s.src = linear.src;
      s.sourceRows = rows;
      selected.push_back(s);
    }
  }
  uint64_t expectedClipped = 0;
  std::vector<std::byte> expected = reference(copied, 64, expectedClipped);
  int n = 0;
  for (unsigned threads : {1u, 3u}) {
    for (size_t chunk : {size_t(4096), size_t(1) << 20}) {
      DataFileOptions options;
      options.threads = threads;
      options.chunkBytes = chunk;
      options.mode = DataWriteMode::Buffered;
      std::string file = path("rows" + std::to_string(n++));
      DataFileResult result = writeDataFile(file, selected, options);
      ASSERT_TRUE(result) << result.error;
      EXPECT_EQ(result.clipped, expectedClipped);
      EXPECT_EQ(read(file), expected);
    }
  }
}

/// A decoder over an f32 matrix the test owns (DataTensor::decoded), as a
/// quantized or GGUF tensor presents itself; with `native`, it writes the
/// transposed form itself (as AWQ and GPTQ do).
class MatrixSource final : public qeff::hf::DenseSource {
public:
  MatrixSource(const float *data, int64_t cols, bool native)
      : data_(data), cols_(cols), native_(native) {}
  void decode(int64_t r0, int64_t r1, int64_t c0, int64_t c1, float *dst,
              int64_t ld) const override {
    for (int64_t r = r0; r < r1; ++r)
      for (int64_t c = c0; c < c1; ++c)
        dst[(r - r0) * ld + (c - c0)] = data_[r * cols_ + c];
  }
  void decodeTransposed(int64_t c0, int64_t c1, int64_t r0, int64_t r1, float *dst,
                        int64_t ld) const override {
    if (!native_)
      return DenseSource::decodeTransposed(c0, c1, r0, r1, dst, ld);
    for (int64_t c = c0; c < c1; ++c)
      for (int64_t r = r0; r < r1; ++r)
        dst[(c - c0) * ld + (r - r0)] = data_[r * cols_ + c];
  }
  std::vector<std::pair<const std::byte *, size_t>> packedRanges() const override { return {}; }
  std::string format() const override { return "test"; }

private:
  const float *data_;
  int64_t cols_;
  bool native_;
};

TEST_F(ExternalDataTest, DecodedSourcesWriteTheBytesOfTheirDenseForm) {
  std::mt19937 rng(11);
  std::vector<float> matrix(300 * 171);
  for (float &v : matrix)
    v = std::uniform_real_distribution<float>(-3.0f, 3.0f)(rng) * 3e4f; // some clip in f16
  std::vector<int64_t> rows = {0, 1, 2, 299, 150, 150, 7};
  std::vector<std::unique_ptr<MatrixSource>> sources;
  std::vector<DataTensor> plain, decoded;
  for (bool native : {false, true})
    for (bool transpose : {false, true})
      for (DType to : {DType::F32, DType::F16})
        for (bool select : {false, true}) {
          sources.push_back(std::make_unique<MatrixSource>(matrix.data(), 171, native));
          DataTensor p;
          p.src = reinterpret_cast<const std::byte *>(matrix.data());
          p.from = DType::F32;
          p.to = to;
          p.rows = select ? int64_t(rows.size()) : 300;
          p.cols = 171;
          p.numElements = p.rows * p.cols;
          p.transpose = transpose;
          if (select)
            p.sourceRows = rows;
          plain.push_back(p);
          DataTensor d = p;
          d.src = nullptr;
          d.decoded = sources.back().get();
          d.releaseSource = true;
          decoded.push_back(d);
        }
  int n = 0;
  for (unsigned threads : {1u, 3u})
    for (size_t chunk : {size_t(4096), size_t(1) << 20}) {
      DataFileOptions options;
      options.threads = threads;
      options.chunkBytes = chunk;
      options.mode = DataWriteMode::Buffered;
      std::string a = path("plain" + std::to_string(n)), b = path("decoded" + std::to_string(n));
      ++n;
      DataFileResult ra = writeDataFile(a, plain, options);
      DataFileResult rb = writeDataFile(b, decoded, options);
      ASSERT_TRUE(ra) << ra.error;
      ASSERT_TRUE(rb) << rb.error;
      EXPECT_EQ(ra.clipped, rb.clipped);
      EXPECT_GT(rb.clipped, 0u);
      EXPECT_EQ(read(a), read(b)) << threads << " threads, chunks of " << chunk;
    }
}

/// How many pages of [data, data + size) are mapped in this process (from
/// /proc/self/pagemap: bit 63 of each page's entry).
size_t mappedPages(const std::byte *data, size_t size) {
  size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  uintptr_t first = reinterpret_cast<uintptr_t>(data) / page;
  uintptr_t last = (reinterpret_cast<uintptr_t>(data) + size + page - 1) / page;
  int fd = ::open("/proc/self/pagemap", O_RDONLY);
  if (fd < 0)
    return SIZE_MAX;
  size_t present = 0;
  for (uintptr_t p = first; p < last; ++p) {
    uint64_t entry = 0;
    if (::pread(fd, &entry, sizeof entry, static_cast<off_t>(p * sizeof entry)) !=
        static_cast<ssize_t>(sizeof entry)) {
      present = SIZE_MAX;
      break;
    }
    present += (entry >> 63) & 1;
  }
  ::close(fd);
  return present;
}

TEST_F(ExternalDataTest, FileMappedSourcesAreReleasedAndStripsGiveTheSameBytes) {
  // The sources live in a file mapped read-only, as the checkpoint's do, so
  // that their pages can be dropped; the transposed ones are swept in strips
  // of a few rows (stripSourceAbove 0).
  std::vector<std::vector<std::byte>> storage;
  std::vector<DataTensor> tensors = makeTensors(storage);
  std::string sourceFile = path("source");
  std::vector<size_t> at;
  {
    std::ofstream out(sourceFile, std::ios::binary);
    size_t offset = 0;
    for (const DataTensor &t : tensors) {
      at.push_back(offset);
      size_t n = t.numElements * qeff::hf::dtypeSize(t.from);
      out.write(reinterpret_cast<const char *>(t.src), static_cast<std::streamsize>(n));
      offset += n;
    }
  }
  uint64_t expectedClipped = 0;
  std::vector<std::byte> expected = reference(tensors, 64, expectedClipped);
  int fd = ::open(sourceFile.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  size_t size = at.back() + tensors.back().numElements;
  void *map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  ASSERT_NE(map, MAP_FAILED);
  std::vector<DataTensor> mapped = tensors;
  for (size_t i = 0; i < mapped.size(); ++i) {
    mapped[i].src = static_cast<const std::byte *>(map) + at[i];
    mapped[i].releaseSource = true;
  }
  int n = 0;
  for (unsigned threads : {1u, 3u}) {
    for (size_t strip : {size_t(1), size_t(700)}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, strips of " + std::to_string(strip) +
                   " bytes");
      DataFileOptions options;
      options.threads = threads;
      options.chunkBytes = 4096;
      options.stripSourceAbove = 0;
      options.stripBytes = strip;
      std::string file = path("mapped" + std::to_string(n++));
      DataFileResult result = writeDataFile(file, mapped, options);
      ASSERT_TRUE(result) << result.error;
      EXPECT_EQ(result.clipped, expectedClipped);
      EXPECT_EQ(read(file), expected);
      for (size_t i = 0; i < mapped.size(); ++i)
        EXPECT_EQ(mappedPages(mapped[i].src, mapped[i].numElements *
                                                 qeff::hf::dtypeSize(mapped[i].from)),
                  0u)
            << "source pages of tensor " << i << " still mapped";
    }
  }
  ::munmap(map, size);
}

TEST_F(ExternalDataTest, NoTensorsGiveAnEmptyFile) {
  std::string file = path("empty");
  DataFileResult result = writeDataFile(file, {}, {});
  ASSERT_TRUE(result) << result.error;
  EXPECT_EQ(result.fileBytes, 0u);
  EXPECT_TRUE(read(file).empty());
}

TEST_F(ExternalDataTest, RefusesToOverwriteOrToWriteIntoAMissingDirectory) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<DataTensor> tensors = makeTensors(storage);
  std::string file = path("exists");
  { std::ofstream(file) << "keep"; }
  DataFileResult result = writeDataFile(file, tensors, {});
  EXPECT_FALSE(result);
  EXPECT_NE(result.error.find("cannot create " + file), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("File exists"), std::string::npos) << result.error;
  EXPECT_EQ(result.failedTensor, SIZE_MAX);
  EXPECT_EQ(read(file).size(), 4u); // untouched

  result = writeDataFile(dir_ + "/missing/data", tensors, {});
  EXPECT_FALSE(result);
  EXPECT_NE(result.error.find("No such file or directory"), std::string::npos)
      << result.error;
}

TEST_F(ExternalDataTest, AWriteRefusedHalfWayIsAnErrorNamingTheFile) {
  // A 64 KiB file-size limit: the first staging buffers are written, then
  // pwrite fails with EFBIG (SIGXFSZ ignored so that it is an error, as a
  // full disk would be).
  std::vector<std::byte> big(1 << 20, std::byte{1});
  DataTensor t;
  t.src = big.data();
  t.from = t.to = DType::U8;
  t.numElements = static_cast<int64_t>(big.size());
  std::vector<DataTensor> tensors(4, t);
  struct rlimit old;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto oldHandler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = old;
  limit.rlim_cur = 64 << 10;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limit), 0);
  for (DataWriteMode mode : {DataWriteMode::Buffered, DataWriteMode::Auto}) {
    DataFileOptions options;
    options.mode = mode;
    options.chunkBytes = 16 << 10;
    std::string file = path("limited" + std::to_string(static_cast<int>(mode)));
    DataFileResult result = writeDataFile(file, tensors, options);
    EXPECT_FALSE(result);
    EXPECT_NE(result.error.find("writing " + file), std::string::npos) << result.error;
    EXPECT_NE(result.error.find("File too large"), std::string::npos) << result.error;
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, oldHandler);
}

} // namespace
