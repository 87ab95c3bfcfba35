//===- DiagnosticPrinterTest.cpp - diagnostics never open special files ---===//
//
// support::DiagnosticPrinter shows the source line of a bounded regular file
// and never opens anything else: a location in a FIFO (config.json replaced
// by one) is printed without a source line instead of blocking the printer.
// A symlink to /dev/zero is test/hostile's (hostile-checkpoints.py), under a
// memory limit.
//
//===----------------------------------------------------------------------===//

#include "support/DiagnosticPrinter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {

class DiagnosticPrinterTest : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("qeff-diagprinter-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root);
  }
  void TearDown() override { fs::remove_all(root); }

  /// Prints an error at `file`:`line`:`col` (with a note at `noteFile`:1:1
  /// when given) through a DiagnosticPrinter; fails the test instead of
  /// hanging when printing blocks.
  std::string print(const std::string &file, unsigned line, unsigned col,
                    const std::string &noteFile = "") {
    auto printed = std::async(std::launch::async, [=] {
      mlir::MLIRContext context;
      llvm::SourceMgr mgr;
      std::string out;
      llvm::raw_string_ostream os(out);
      qeff::support::DiagnosticPrinter printer(mgr, &context, os);
      auto diag = mlir::emitError(mlir::FileLineColLoc::get(&context, file, line, col))
                  << "bad field";
      if (!noteFile.empty())
        diag.attachNote(mlir::FileLineColLoc::get(&context, noteFile, 1, 1)) << "see here";
      diag.report();
      return out;
    });
    if (printed.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
      // Unblock a printer stuck opening a FIFO, so that the test ends.
      for (const std::string &path : {file, noteFile})
        if (int fd = path.empty() ? -1 : ::open(path.c_str(), O_WRONLY | O_NONBLOCK); fd >= 0)
          ::close(fd);
      ADD_FAILURE() << "printing a diagnostic blocked (a file was opened)";
    }
    return printed.get();
  }

  fs::path root;
};

TEST_F(DiagnosticPrinterTest, ShowsTheLineOfARegularFile) {
  std::string file = (root / "config.json").string();
  std::ofstream(file) << "{\n  \"rope_theta\": 1e999\n}\n";
  std::string out = print(file, 2, 3);
  EXPECT_NE(out.find(file + ":2:3: error: bad field"), std::string::npos) << out;
  EXPECT_NE(out.find("  \"rope_theta\": 1e999"), std::string::npos) << out;
}

TEST_F(DiagnosticPrinterTest, NeverOpensAFifo) {
  std::string fifo = (root / "config.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string out = print(fifo, 1, 1);
  EXPECT_EQ(out, fifo + ":1:1: error: bad field\n");
}

TEST_F(DiagnosticPrinterTest, DoesNotReadTooLargeFiles) {
  std::string big = (root / "config.json").string();
  std::ofstream(big) << "{}\n";
  fs::resize_file(big, (uint64_t(16) << 20) + 1); // sparse: one byte past the limit
  EXPECT_EQ(print(big, 1, 1), big + ":1:1: error: bad field\n");
}

TEST_F(DiagnosticPrinterTest, NotesInARegularFileKeepTheirLine) {
  std::string fifo = (root / "fifo.json").string(), file = (root / "a.json").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::ofstream(file) << "first line\n";
  std::string out = print(fifo, 1, 1, file);
  EXPECT_NE(out.find(fifo + ":1:1: error: bad field\n"), std::string::npos) << out;
  EXPECT_NE(out.find(file + ":1:1: note: see here\nfirst line\n^"), std::string::npos) << out;
}

} // namespace
