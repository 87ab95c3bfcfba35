//===- ExportCheckpointTest.cpp - The exporter reuses the importer's checkpoint
//
// `qeff compile` opens a checkpoint once: importHFCheckpoint hands out the
// checkpoint it opened (safetensors headers parsed, files mapped) and the
// exporter reads the weights from it (ExportOptions::checkpoint) instead of
// parsing the headers again. Checked on a golden Llama checkpoint: with the
// importer's checkpoint the export needs no checkpoint directory at all (a
// path that does not exist is never opened) and writes the same bytes as an
// export that opens the directory itself; without it, the missing directory
// is an error naming it.
//
//===----------------------------------------------------------------------===//

#include "frontend/HF/Importers/FamilyRegistry.h"
#include "lowering/Export/ONNXExporter.h"
#include "lowering/ToONNX/Passes.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string readAll(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Exported {
  bool ok = false;
  std::string diagnostics;
};

class ExportCheckpoint : public ::testing::Test {
protected:
  void SetUp() override {
    out_ = fs::temp_directory_path() /
           ("qeff-export-checkpoint-" + std::to_string(::getpid()));
    fs::remove_all(out_);
    fs::create_directories(out_);
  }
  void TearDown() override { fs::remove_all(out_); }

  /// Imports the golden Llama (keeping the opened checkpoint in `opened`
  /// when asked), lowers it to ONNX and exports into out_/`name`.
  Exported run(const std::string &name, bool reuse, const std::string &checkpointDir) {
    mlir::MLIRContext context;
    Exported result;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &d) {
      result.diagnostics += d.str() + "\n";
      return mlir::success();
    });
    std::shared_ptr<const qeff::hf::Checkpoint> opened;
    auto module = qeff::hf::importHFCheckpoint(golden_, &context, reuse ? &opened : nullptr);
    if (!module)
      return result;
    EXPECT_EQ(reuse, opened != nullptr);
    mlir::PassManager pm(&context);
    pm.addPass(mlir::qeff::createQEffLowerToONNX());
    if (mlir::failed(pm.run(*module)))
      return result;
    mlir::qeff::ExportOptions options;
    options.outputDir = (out_ / name).string();
    options.checkpointDir = checkpointDir;
    options.checkpoint = opened;
    result.ok = mlir::succeeded(mlir::qeff::exportONNX(*module, options));
    return result;
  }

  std::string golden_ = QEFF_TEST_DATA_DIR "/golden/LlamaForCausalLM";
  fs::path out_;
};

TEST_F(ExportCheckpoint, ReusesTheImportersCheckpoint) {
  Exported own = run("own", /*reuse=*/false, golden_);
  ASSERT_TRUE(own.ok) << own.diagnostics;
  // The importer's checkpoint: the directory given is never opened.
  Exported reused = run("reused", /*reuse=*/true, "/nonexistent/qeff-checkpoint");
  ASSERT_TRUE(reused.ok) << reused.diagnostics;
  for (const char *file : {"model.onnx", "model.onnx.data"})
    EXPECT_EQ(readAll(out_ / "own" / file), readAll(out_ / "reused" / file)) << file;
  EXPECT_GT(fs::file_size(out_ / "reused" / "model.onnx.data"), 0u);
}

TEST_F(ExportCheckpoint, WithoutItTheDirectoryIsOpened) {
  Exported missing = run("missing", /*reuse=*/false, "/nonexistent/qeff-checkpoint");
  EXPECT_FALSE(missing.ok);
  EXPECT_NE(missing.diagnostics.find("cannot open checkpoint '/nonexistent/qeff-checkpoint'"),
            std::string::npos)
      << missing.diagnostics;
}

} // namespace
