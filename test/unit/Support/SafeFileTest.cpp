//===- SafeFileTest.cpp - support/: untrusted files, checked sizes --------===//

#include "support/CheckedMath.h"
#include "support/SafeFile.h"

#include "qeff/runtime/Tensor.h"

#include "gtest/gtest.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace qeff;

namespace {

class SafeFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("qeff-safefile-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "art");
    write(root / "art" / "data.bin", "0123456789");
    write(root / "outside.bin", "secret");
  }
  void TearDown() override { fs::remove_all(root); }
  static void write(const fs::path &p, const std::string &text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  std::string art() const { return (root / "art").string(); }
  fs::path root;
};

TEST_F(SafeFileTest, ReadsRegularFilesWithinTheLimit) {
  std::string text, error;
  ASSERT_TRUE(support::readRegularFile(art() + "/data.bin", 10, text, error)) << error;
  EXPECT_EQ(text, "0123456789");
  EXPECT_FALSE(support::readRegularFile(art() + "/data.bin", 9, text, error));
  EXPECT_NE(error.find("file is too large (10 bytes, limit 9)"), std::string::npos) << error;
}

TEST_F(SafeFileTest, RefusesFifosWithoutBlocking) {
  std::string fifo = art() + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string text, error;
  EXPECT_FALSE(support::readRegularFile(fifo, 100, text, error));
  EXPECT_NE(error.find("not a regular file (a FIFO)"), std::string::npos) << error;
  EXPECT_FALSE(support::readRegularFile(art(), 100, text, error));
  EXPECT_NE(error.find("(a directory)"), std::string::npos) << error;
  EXPECT_FALSE(support::readRegularFile("/dev/zero", 100, text, error));
  EXPECT_NE(error.find("(a character device)"), std::string::npos) << error;
}

TEST_F(SafeFileTest, ResolveInsideRefusesEscapes) {
  std::string resolved, error;
  EXPECT_TRUE(support::resolveInside(art(), "data.bin", resolved, error)) << error;
  EXPECT_EQ(resolved, fs::canonical(root / "art" / "data.bin").string());
  EXPECT_FALSE(support::resolveInside(art(), "/etc/passwd", resolved, error));
  EXPECT_NE(error.find("absolute path"), std::string::npos);
  EXPECT_FALSE(support::resolveInside(art(), "../outside.bin", resolved, error));
  EXPECT_NE(error.find("'..'"), std::string::npos);
  EXPECT_FALSE(support::resolveInside(art(), "x/../data.bin", resolved, error));
  fs::create_symlink(root / "outside.bin", root / "art" / "link");
  EXPECT_FALSE(support::resolveInside(art(), "link", resolved, error));
  EXPECT_NE(error.find("outside the artifact directory"), std::string::npos) << error;
  fs::create_symlink(root, root / "art" / "up");
  EXPECT_FALSE(support::resolveInside(art(), "up/outside.bin", resolved, error));
  fs::create_symlink("data.bin", root / "art" / "inner");
  EXPECT_TRUE(support::resolveInside(art(), "inner", resolved, error)) << error;
  EXPECT_FALSE(support::resolveInside(art(), "", resolved, error));
}

// The compile copies tokenizer files into the artifacts: a FIFO must not
// block it nor /dev/zero fill the disk.
TEST_F(SafeFileTest, CopiesRegularFilesOnly) {
  std::string to = art() + "/copy.bin", text, error;
  ASSERT_TRUE(support::copyRegularFile(art() + "/data.bin", to, 10, error)) << error;
  ASSERT_TRUE(support::readRegularFile(to, 100, text, error)) << error;
  EXPECT_EQ(text, "0123456789");
  EXPECT_FALSE(support::copyRegularFile(art() + "/data.bin", to, 9, error));
  EXPECT_NE(error.find("data.bin: file is too large (10 bytes, limit 9)"), std::string::npos)
      << error;

  std::string fifo = art() + "/tokenizer.model", zero = art() + "/zero.model";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink("/dev/zero", zero);
  EXPECT_FALSE(support::copyRegularFile(fifo, art() + "/out1", 1 << 20, error));
  EXPECT_NE(error.find("tokenizer.model: not a regular file (a FIFO)"), std::string::npos)
      << error;
  EXPECT_FALSE(support::copyRegularFile(zero, art() + "/out2", 1 << 20, error));
  EXPECT_NE(error.find("zero.model: not a regular file (a character device)"),
            std::string::npos)
      << error;
  EXPECT_FALSE(fs::exists(art() + "/out1"));
  EXPECT_FALSE(fs::exists(art() + "/out2"));
  EXPECT_FALSE(support::copyRegularFile(art() + "/missing", art() + "/out3", 10, error));
  EXPECT_NE(error.find("missing: cannot open"), std::string::npos) << error;
}

TEST(CheckedMathTest, ProductsReportOverflow) {
  int64_t n = 0;
  std::vector<int64_t> ok = {2, 3, 4}, wrap = {int64_t(1) << 62, 4}, neg = {2, -1};
  EXPECT_TRUE(support::checkedProduct(ok.begin(), ok.end(), INT64_MAX, n));
  EXPECT_EQ(n, 24);
  EXPECT_FALSE(support::checkedProduct(wrap.begin(), wrap.end(), INT64_MAX, n));
  EXPECT_FALSE(support::checkedProduct(neg.begin(), neg.end(), INT64_MAX, n));
  EXPECT_FALSE(support::checkedProduct(ok.begin(), ok.end(), 23, n));
}

TEST(CheckedMathTest, TensorSizesNeverWrap) {
  using namespace qeff::runtime;
  EXPECT_EQ(numElements({2, 3}), 6);
  EXPECT_EQ(byteSize(DType::Float32, {2, 3}), 24u);
  EXPECT_THROW(numElements({int64_t(1) << 62, 4}), SizeError);
  EXPECT_THROW(numElements({4, -1}), SizeError);
  EXPECT_THROW(byteSize(DType::Int64, {int64_t(1) << 46}), SizeError);
  EXPECT_THROW(Tensor::empty(DType::Float32, {int64_t(1) << 40, int64_t(1) << 30}), SizeError);
  EXPECT_EQ(numElements({0, int64_t(1) << 20}), 0);
  // An empty shape's other dims are bounded too (kernel strides fit int64).
  EXPECT_THROW(numElements({0, int64_t(1) << 62, 4}), SizeError);
}

} // namespace
