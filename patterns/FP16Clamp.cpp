//===- FP16Clamp.cpp - the qeff-fp16-clamp pass ---------------------------===//
//
// Part of qeff. Marks the fp32 islands asked for (by scope pattern), then runs
// the DRR rewrites of FP16Clamp.td, which read the marks.
//
//===----------------------------------------------------------------------===//

#include "patterns/Passes.h"
#include "patterns/PatternUtils.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/StringSaver.h"

#include <cmath>

namespace mlir::qeff {
#define GEN_PASS_DEF_QEFFFP16CLAMP
#include "patterns/Passes.h.inc"
} // namespace mlir::qeff

using namespace mlir;
using namespace mlir::qeff;

namespace {
#include "patterns/FP16Clamp.inc"
} // namespace

void mlir::qeff::populateFP16ClampPatterns(RewritePatternSet &patterns) {
  populateWithGenerated(patterns);
}

namespace {

/// A scope pattern. llvm::GlobPattern keeps a StringRef into the text it was
/// created from, so `text` points into storage that outlives the pattern
/// (a StringSaver of runOnOperation), never into the scopes file's buffer.
struct ScopePattern {
  StringRef text;
  llvm::GlobPattern glob;
  Location loc;
  bool used = false;
};

struct QEffFP16ClampPass
    : mlir::qeff::impl::QEffFP16ClampBase<QEffFP16ClampPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    populateFP16ClampPatterns(set);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  LogicalResult addPattern(StringRef text, Location loc, llvm::StringSaver &saver,
                           SmallVectorImpl<ScopePattern> &out) {
    text = text.trim();
    if (text.empty())
      return emitError(loc) << "fp32-scopes: empty scope pattern";
    // The glob points into `saved`, which outlives every use of it.
    StringRef saved = saver.save(text);
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(saved);
    if (!glob)
      return emitError(loc) << "fp32-scopes: invalid scope pattern '" << text
                            << "': " << llvm::toString(glob.takeError());
    out.push_back({saved, std::move(*glob), loc});
    return success();
  }

  /// The patterns of fp32-scopes, then of fp32-scopes-file (located at their
  /// line in the file).
  LogicalResult collectPatterns(ModuleOp module, llvm::StringSaver &saver,
                                SmallVectorImpl<ScopePattern> &out) {
    for (const std::string &text : fp32Scopes)
      if (failed(addPattern(text, module.getLoc(), saver, out)))
        return failure();
    if (fp32ScopesFile.empty())
      return success();
    // Only a regular file of a sane size: a FIFO would block the compile.
    uint64_t size = 0;
    if (llvm::sys::fs::exists(fp32ScopesFile) &&
        (!llvm::sys::fs::is_regular_file(fp32ScopesFile) ||
         llvm::sys::fs::file_size(fp32ScopesFile, size) || size > (uint64_t(1) << 20)))
      return emitError(module.getLoc())
             << "fp32-scopes-file: '" << fp32ScopesFile
             << "' is not a regular file of at most 1 MiB";
    auto buffer = llvm::MemoryBuffer::getFile(fp32ScopesFile, /*IsText=*/true);
    if (!buffer)
      return emitError(module.getLoc())
             << "fp32-scopes-file: cannot read '" << fp32ScopesFile
             << "': " << buffer.getError().message();
    SmallVector<StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n');
    for (auto [i, line] : llvm::enumerate(lines)) {
      StringRef text = line.split('#').first.trim();
      if (text.empty())
        continue;
      Location loc = FileLineColLoc::get(&getContext(), fp32ScopesFile, i + 1,
                                         line.find_first_not_of(" \t") + 1);
      if (failed(addPattern(text, loc, saver, out)))
        return failure();
    }
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::BumpPtrAllocator allocator;
    llvm::StringSaver saver(allocator);
    SmallVector<ScopePattern> scopes;
    if (failed(collectPatterns(module, saver, scopes)))
      return signalPassFailure();

    if (!scopes.empty()) {
      auto fp32 = StringAttr::get(&getContext(), "fp32");
      module.walk([&](Operation *op) {
        if (!llvm::isa<QEffDialect>(op->getDialect()))
          return;
        std::optional<StringRef> scope = scopeOf(op->getLoc());
        if (!scope)
          return;
        bool marked = false;
        for (ScopePattern &p : scopes)
          if (scopeMatches(p.glob, *scope))
            marked = p.used = true;
        if (marked)
          op->setAttr(kPrecisionAttr, fp32);
      });
      for (const ScopePattern &p : scopes)
        if (!p.used) {
          emitError(p.loc)
              << "fp32 scope '" << p.text
              << "' matches no op (scopes are the module paths in the ops' "
                 "locations, e.g. 'model.layers.0.mlp')";
          return signalPassFailure();
        }
      SmallVector<Attribute> texts;
      for (const ScopePattern &p : scopes)
        texts.push_back(StringAttr::get(&getContext(), p.text));
      module->setAttr(kFP32ScopesAttr, ArrayAttr::get(&getContext(), texts));
    }

    // Rotary embeddings whose frequencies depend on the sequence length
    // (dynamic NTK, longrope) compute their bases and position * frequency
    // angles in the graph: fp16 holds neither (rope_theta alone can exceed
    // 65504, and an angle at position 4000 has an fp16 step of 2). They are
    // always fp32 islands.
    auto fp32 = StringAttr::get(&getContext(), "fp32");
    module.walk([&](RotaryOp op) {
      if (RopeScalingAttr scaling = op.getScalingAttr())
        if (scaling.isSeqLenDependent())
          op->setAttr(kPrecisionAttr, fp32);
    });

    if (failed(applyPatternsAndFoldGreedily(module, patterns)))
      return signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
