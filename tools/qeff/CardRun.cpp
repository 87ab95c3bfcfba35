//===- CardRun.cpp - one model card: `qeff compile --models F --card-index I`-===//
//
// Part of qeff. Compiles one card through the compile cache, publishes
// OUT/<name> hard-linked from the cache entry (the same bytes a single
// `qeff compile` of the card's options writes: artifacts name nothing of their
// location) and writes the card's summary beside it. What a pod of the
// Kubernetes Indexed Job runs, and what the batch runs per card.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/Cards.h"
#include "tools/qeff/ModelPath.h"

#include "lowering/Driver/Commit.h"
#include "lowering/Driver/CompileCache.h"
#include "lowering/Driver/ModelCards.h"
#include "support/DiagnosticPrinter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>

using namespace llvm;
using namespace mlir::qeff;
using qeff::tool::CardSummary;

namespace {

std::string join(StringRef dir, StringRef name) {
  SmallString<256> p(dir);
  sys::path::append(p, name);
  return std::string(p.str());
}

/// Progress of this card: JSON events (for the batch) or plain lines.
class Reporter {
public:
  enum Mode { Events, Plain, Silent };
  Reporter(Mode mode, std::string card) : mode_(mode), card_(std::move(card)) {}
  void stage(StringRef stage, StringRef text) {
    if (mode_ == Silent)
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (mode_ == Events)
      outs() << "{\"event\":\"stage\",\"stage\":\"" << stage << "\"}\n";
    else
      outs() << "qeff compile: card '" << card_ << "': " << text << "\n";
    outs().flush();
  }
  void weights(uint64_t done, uint64_t total) {
    if (mode_ != Events)
      return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto now = std::chrono::steady_clock::now();
    if (done < total && now - last_ < std::chrono::milliseconds(100))
      return;
    last_ = now;
    outs() << "{\"event\":\"weights\",\"done\":" << done << ",\"total\":" << total
           << "}\n";
    outs().flush();
  }

private:
  Mode mode_;
  std::string card_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point last_{};
};

/// Hard-links (or, across file systems, copies) the tree `from` into `to`.
std::string linkTree(const std::string &from, const std::string &to, uint64_t &bytes) {
  std::error_code ec;
  for (sys::fs::recursive_directory_iterator it(from, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef path = it->path();
    std::string rel = path.drop_front(from.size()).ltrim('/').str();
    std::string target = join(to, rel);
    sys::fs::file_status status;
    if (std::error_code sc = sys::fs::status(path, status, /*follow=*/false))
      return "cannot read " + path.str() + ": " + sc.message();
    if (sys::fs::is_directory(status)) {
      if (std::error_code dc = sys::fs::create_directory(target))
        return "cannot create " + target + ": " + dc.message();
      continue;
    }
    if (!sys::fs::is_regular_file(status))
      return "the cache entry holds " + path.str() + ", which is not a regular file";
    bytes += status.getSize();
    if (!sys::fs::create_hard_link(path, target))
      continue;
    if (std::error_code cc = sys::fs::copy_file(path, target))
      return "cannot copy " + path.str() + " to " + target + ": " + cc.message();
  }
  if (ec)
    return "cannot list " + from + ": " + ec.message();
  return "";
}

} // namespace

/// One card through the cache: hash; on a hit, or a miss when
/// `compileMisses`, publish OUT/<name> and write the summary (0 ok, 1 failed);
/// a miss otherwise is left to the caller with the checkpoint's hashes (2).
/// `print`: diagnostics on stderr and a line for a failure.
int qeff::tool::detail::cardThroughCache(
    const CardsRun &run, const ModelCardFile &file, size_t index,
    bool compileMisses, bool print, std::map<std::string, std::string> &hashes) {
  auto started = std::chrono::steady_clock::now();
  const ModelCard &card = file.cards[index];
  CardSummary summary;
  summary.name = card.name;
  summary.index = index;
  summary.total = file.cards.size();
  summary.cardsHash = file.contentHash;
  Reporter report(print ? (run.events ? Reporter::Events : Reporter::Plain)
                        : Reporter::Silent,
                  card.name);

  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  SourceMgr sourceMgr;
  std::optional<qeff::support::DiagnosticPrinter> printer;
  if (print)
    printer.emplace(sourceMgr, &context);
  // The card's error for its summary: every error diagnostic (then printed).
  std::string errors;
  mlir::ScopedDiagnosticHandler capture(&context, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error) {
      std::string text;
      if (auto loc = dyn_cast<mlir::FileLineColLoc>(d.getLocation()))
        text = loc.getFilename().str() + ": ";
      text += d.str();
      errors += (errors.empty() ? "" : "\n") + text;
    }
    return print ? mlir::failure() : mlir::success();
  });

  auto finish = [&](bool ok, std::string error) {
    summary.ok = ok;
    summary.error = ok ? "" : std::move(error);
    summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    std::string written = writeCardSummary(run.outDir, summary);
    if (!written.empty()) {
      if (print)
        errs() << "qeff compile: card '" << card.name << "': " << written << "\n";
      return 1;
    }
    if (ok)
      report.stage("ok", (summary.cacheHit ? "ok (cache hit), " : "ok, ") +
                             humanBytes(summary.outputBytes) + " in " +
                             join(run.outDir, card.name));
    else {
      report.stage("failed", "FAILED: " + summary.error);
      if (print)
        errs() << "qeff compile: card '" << card.name << "' failed: " << summary.error << "\n";
    }
    return ok ? 0 : 1;
  };

  CompileOptions options = card.options;
  options.exportThreads = run.exportThreads;
  options.knownHashes = hashes;
  if (std::string error; classifyModelPath(options.checkpointDir, error) ==
                         ModelPathKind::Invalid)
    return finish(false, "model '" + options.checkpointDir + "': " + error);
  options.progress = [&](const ExportProgress &p) { report.weights(p.bytesDone, p.bytesTotal); };

  std::string cacheDir = run.cacheDir.empty() ? defaultCacheDir() : run.cacheDir;
  report.stage("hash", "hashing " + options.checkpointDir);
  CacheResult cached;
  bool ok;
  if (compileMisses) {
    CompileReport compiled;
    ok = mlir::succeeded(compileThroughCache(
        context, options, cacheDir, cached, compiled,
        [&] { report.stage("wait", "waiting for another compile of the same key"); },
        [&] { report.stage("compile", "compiling (cache miss " + cached.key + ")"); }));
  } else {
    mlir::Location loc = mlir::FileLineColLoc::get(&context, options.checkpointDir, 0, 0);
    ok = mlir::succeeded(lookupCompileCache(loc, options, cacheDir, cached));
    if (ok && !cached.hit) {
      hashes = options.knownHashes;
      return 2;
    }
  }
  summary.contentKey = cached.key;
  summary.cacheHit = cached.hit;
  if (!ok)
    return finish(false, errors.empty() ? "the compile failed" : errors);

  // OUT/<name>: staged beside, linked from the cache entry, published by one
  // rename (an earlier OUT/<name> is replaced whole).
  report.stage("link", "publishing " + join(run.outDir, card.name));
  std::string outputDir = join(run.outDir, card.name);
  {
    SmallString<256> absolute(outputDir);
    sys::fs::make_absolute(absolute);
    outputDir = std::string(absolute.str());
  }
  mlir::Location loc = mlir::FileLineColLoc::get(&context, outputDir, 0, 0);
  std::string staging;
  if (mlir::failed(createStagingDir(loc, outputDir, staging)))
    return finish(false, errors);
  uint64_t bytes = 0;
  if (std::string error = linkTree(cached.artifactDir, staging, bytes); !error.empty()) {
    removeStagingDir(staging);
    return finish(false, error);
  }
  std::vector<std::pair<std::string, uint64_t>> files;
  if (mlir::failed(publishStagingDir(loc, staging, outputDir, files))) {
    removeStagingDir(staging);
    return finish(false, errors);
  }
  summary.outputBytes = bytes;
  summary.artifactDir = card.name;
  return finish(true, "");
}

int qeff::tool::detail::runOneCard(const CardsRun &run, size_t index) {
  Expected<ModelCardFile> file = readModelCards(run.cardsFile);
  if (!file) {
    errs() << toString(file.takeError()) << "\n";
    return 1;
  }
  if (index >= file->cards.size()) {
    errs() << "qeff compile: --card-index " << index << " is out of range: "
           << run.cardsFile << " has " << file->cards.size() << " card"
           << (file->cards.size() == 1 ? "" : "s") << " (indexes 0.."
           << file->cards.size() - 1 << ")\n";
    return 1;
  }
  std::map<std::string, std::string> hashes = run.knownHashes;
  return cardThroughCache(run, *file, index, /*compileMisses=*/true,
                          /*print=*/true, hashes);
}
