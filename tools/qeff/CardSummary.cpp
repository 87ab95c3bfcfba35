//===- CardSummary.cpp - card summaries, summary.json, `qeff models` ------===//
//
// Part of qeff. Each card's outcome is written beside its artifacts
// (OUT/.summaries/<name>.json) by the process that compiled it; the batch,
// or `qeff models summarize OUT` after a Kubernetes Job, merges them into
// OUT/summary.json. Summary files are read with llvm::json: a damaged one is
// an error naming it, never a crash.
//
//===----------------------------------------------------------------------===//

#include "tools/qeff/Cards.h"

#include "lowering/Driver/ModelCards.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fcntl.h>
#include <unistd.h>

using namespace llvm;
namespace json = llvm::json;
using qeff::tool::CardSummary;

namespace {

std::string join(StringRef dir, StringRef name) {
  SmallString<256> p(dir);
  sys::path::append(p, name);
  return std::string(p.str());
}

/// Writes `text` to `path` through a temporary file, fsync and rename.
std::string writeAtomically(const std::string &path, StringRef text) {
  SmallString<256> tmp;
  int fd = -1;
  if (std::error_code ec = sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd, tmp))
    return "cannot write " + path + ": " + ec.message();
  bool ok = true;
  {
    raw_fd_ostream os(fd, /*shouldClose=*/false);
    os << text;
    os.flush();
    ok = !os.has_error();
    if (!ok)
      os.clear_error();
  }
  ok = ok && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || sys::fs::rename(tmp, path)) {
    sys::fs::remove(tmp);
    return "cannot write " + path;
  }
  return "";
}

void writeCard(json::OStream &j, const CardSummary &s) {
  j.object([&] {
    j.attribute("name", s.name);
    j.attribute("status", s.ok ? "ok" : "failed");
    j.attribute("error", s.ok ? json::Value(nullptr) : json::Value(s.error));
    j.attribute("artifact_dir", s.artifactDir.empty()
                                    ? json::Value(nullptr)
                                    : json::Value(s.artifactDir));
    j.attribute("content_key", s.contentKey.empty()
                                   ? json::Value(nullptr)
                                   : json::Value(s.contentKey));
    j.attribute("cache_hit", s.cacheHit);
    // Milliseconds, printed as such (llvm::json prints doubles with 17
    // digits).
    j.attributeBegin("seconds");
    j.rawValue(formatv("{0:f3}", std::max(0.0, s.seconds)).str());
    j.attributeEnd();
    j.attribute("output_bytes", static_cast<int64_t>(s.outputBytes));
  });
}

/// One entry of "cards" back into a CardSummary; "" or what is wrong.
std::string readCard(const json::Value &v, CardSummary &s) {
  const json::Object *o = v.getAsObject();
  if (!o)
    return "a card entry is not an object";
  auto name = o->getString("name");
  auto status = o->getString("status");
  if (!name || !mlir::qeff::isValidCardName(*name))
    return "'name' is missing or not a card name";
  if (!status || (*status != "ok" && *status != "failed"))
    return "'status' must be \"ok\" or \"failed\"";
  s.name = name->str();
  s.ok = *status == "ok";
  if (auto e = o->getString("error"))
    s.error = e->str();
  if (auto a = o->getString("artifact_dir"))
    s.artifactDir = a->str();
  if (auto k = o->getString("content_key"))
    s.contentKey = k->str();
  s.cacheHit = o->getBoolean("cache_hit").value_or(false);
  s.seconds = o->getNumber("seconds").value_or(0);
  s.outputBytes = static_cast<uint64_t>(
      std::max<int64_t>(0, o->getInteger("output_bytes").value_or(0)));
  return "";
}

} // namespace

std::string qeff::tool::humanBytes(uint64_t bytes) {
  std::string s;
  raw_string_ostream os(s);
  if (bytes >= (1ull << 30))
    os << format("%.2f GiB", bytes / double(1ull << 30));
  else if (bytes >= (1ull << 20))
    os << format("%.1f MiB", bytes / double(1ull << 20));
  else if (bytes >= 1024)
    os << format("%.1f KiB", bytes / 1024.0);
  else
    os << bytes << " B";
  return s;
}

Expected<CardSummary> qeff::tool::readCardSummary(const std::string &file) {
  auto fail = [&](const std::string &message) -> Error {
    return createStringError(inconvertibleErrorCode(), file + ": " + message);
  };
  sys::fs::file_status status;
  if (sys::fs::status(file, status) || !sys::fs::is_regular_file(status) ||
      status.getSize() > (1 << 20))
    return fail("not a card summary (not a regular file of at most 1 MiB)");
  auto buffer = MemoryBuffer::getFile(file);
  if (!buffer)
    return fail("cannot read: " + buffer.getError().message());
  Expected<json::Value> v = json::parse((*buffer)->getBuffer());
  if (!v)
    return fail("not valid JSON: " + toString(v.takeError()));
  const json::Object *o = v->getAsObject();
  CardSummary s;
  std::optional<int64_t> index = o ? o->getInteger("card_index") : std::nullopt;
  std::optional<int64_t> total = o ? o->getInteger("cards") : std::nullopt;
  std::optional<StringRef> hash = o ? o->getString("cards_file_hash") : std::nullopt;
  const json::Value *summary = o ? o->get("summary") : nullptr;
  if (!index || !total || !hash || !summary || *index < 0 || *total <= 0 ||
      *index >= *total || *total > 1000000)
    return fail("not a card summary (card_index, cards, cards_file_hash and "
                "summary expected)");
  if (std::string bad = readCard(*summary, s); !bad.empty())
    return fail(bad);
  if (sys::path::stem(file) != s.name)
    return fail("holds the summary of card '" + s.name + "'");
  s.index = static_cast<size_t>(*index);
  s.total = static_cast<size_t>(*total);
  s.cardsHash = hash->str();
  return s;
}

std::string qeff::tool::cardSummaryPath(const std::string &outDir,
                                        const std::string &name) {
  return join(join(outDir, ".summaries"), name + ".json");
}

std::string qeff::tool::writeCardSummary(const std::string &outDir,
                                         const CardSummary &s) {
  std::string dir = join(outDir, ".summaries");
  if (std::error_code ec = sys::fs::create_directories(dir))
    return "cannot create " + dir + ": " + ec.message();
  std::string text;
  raw_string_ostream os(text);
  json::OStream j(os, 2);
  j.object([&] {
    j.attribute("card_index", static_cast<int64_t>(s.index));
    j.attribute("cards", static_cast<int64_t>(s.total));
    j.attribute("cards_file_hash", s.cardsHash);
    j.attributeBegin("summary");
    writeCard(j, s);
    j.attributeEnd();
  });
  os << "\n";
  return writeAtomically(cardSummaryPath(outDir, s.name), text);
}

Expected<std::vector<CardSummary>>
qeff::tool::collectCardSummaries(const std::string &outDir,
                                 const std::string &cardsHash,
                                 std::vector<std::string> &notes) {
  auto fail = [](const std::string &message) -> Error {
    return createStringError(inconvertibleErrorCode(), message);
  };
  std::string dir = join(outDir, ".summaries");
  if (!sys::fs::is_directory(dir))
    return fail(dir + " does not exist: no card of a `qeff compile --models "
                      "... -o " + outDir + "` has finished");
  struct Read {
    CardSummary summary;
    sys::TimePoint<> written;
    std::string path;
  };
  std::vector<Read> all;
  std::error_code ec;
  for (sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    StringRef file = it->path();
    if (!file.ends_with(".json") || sys::path::filename(file).starts_with("."))
      continue;
    Read r;
    r.path = file.str();
    sys::fs::file_status status;
    if (!sys::fs::status(file, status))
      r.written = status.getLastModificationTime();
    Expected<CardSummary> s = readCardSummary(r.path);
    if (!s)
      return s.takeError();
    r.summary = std::move(*s);
    all.push_back(std::move(r));
  }
  if (ec)
    return fail("cannot list " + dir + ": " + ec.message());
  if (all.empty())
    return fail(dir + " holds no card summary");

  std::string want = cardsHash;
  if (want.empty()) {
    auto newest = std::max_element(all.begin(), all.end(), [](const Read &a, const Read &b) {
      return a.written < b.written;
    });
    want = newest->summary.cardsHash;
  }
  std::map<size_t, CardSummary> byIndex;
  size_t total = 0;
  for (Read &r : all) {
    if (r.summary.cardsHash != want) {
      notes.push_back("ignored " + r.path +
                      ": it belongs to another version of the card file");
      continue;
    }
    total = r.summary.total;
    auto [it, fresh] = byIndex.emplace(r.summary.index, r.summary);
    if (!fresh)
      return fail("cards '" + it->second.name + "' and '" + r.summary.name +
                  "' both claim card index " + std::to_string(r.summary.index));
  }
  std::string missing;
  size_t numMissing = 0;
  for (size_t i = 0; i < total; ++i)
    if (!byIndex.count(i)) {
      if (++numMissing <= 10)
        missing += (missing.empty() ? "" : ", ") + std::to_string(i);
    }
  if (byIndex.size() != total || numMissing)
    return fail(std::to_string(numMissing) + " of " + std::to_string(total) +
                " cards have no summary in " + dir + " (card index " + missing +
                (numMissing > 10 ? ", ..." : "") +
                "): their compile has not run or did not finish");
  std::vector<CardSummary> cards;
  for (auto &[index, s] : byIndex)
    cards.push_back(std::move(s));
  return cards;
}

std::string qeff::tool::writeSummary(const std::string &outDir,
                                     const std::vector<CardSummary> &cards) {
  std::string text;
  raw_string_ostream os(text);
  json::OStream j(os, 2);
  j.object([&] {
    j.attributeArray("cards", [&] {
      for (const CardSummary &s : cards)
        writeCard(j, s);
    });
  });
  os << "\n";
  return writeAtomically(join(outDir, "summary.json"), text);
}

void qeff::tool::printSummaryTable(const std::vector<CardSummary> &cards,
                                   const std::string &outDir) {
  // One screen: every failed card, then ok cards up to ~20 rows.
  size_t width = 4;
  for (const CardSummary &s : cards)
    width = std::max(width, std::min<size_t>(s.name.size(), 32));
  raw_ostream &os = outs();
  os << left_justify("card", width) << "  status  cache  seconds        size\n";
  size_t shown = 0, ok = 0, failed = 0, hits = 0;
  double seconds = 0;
  uint64_t bytes = 0;
  std::vector<const CardSummary *> rows;
  for (const CardSummary &s : cards) {
    (s.ok ? ok : failed)++;
    hits += s.cacheHit;
    seconds += s.seconds;
    bytes += s.outputBytes;
    if (!s.ok)
      rows.push_back(&s);
  }
  for (const CardSummary &s : cards)
    if (s.ok && rows.size() < std::max<size_t>(20, failed))
      rows.push_back(&s);
  std::sort(rows.begin(), rows.end(), [](const CardSummary *a, const CardSummary *b) {
    return a->index < b->index;
  });
  for (const CardSummary *s : rows) {
    ++shown;
    std::string name = s->name.size() > 32 ? s->name.substr(0, 31) + "~" : s->name;
    os << left_justify(name, width) << "  " << left_justify(s->ok ? "ok" : "FAILED", 6)
       << "  " << left_justify(s->cacheHit ? "hit" : "-", 5) << "  "
       << format("%7.2f", s->seconds) << "  " << right_justify(humanBytes(s->outputBytes), 10)
       << "\n";
    if (!s->ok) {
      std::string error = s->error;
      if (size_t nl = error.find('\n'); nl != std::string::npos)
        error = error.substr(0, nl) + " ...";
      if (error.size() > 160)
        error = error.substr(0, 157) + "...";
      os << "    " << error << "\n";
    }
  }
  if (shown < cards.size())
    os << "  ... and " << cards.size() - shown << " more ok cards\n";
  os << cards.size() << " cards: " << ok << " ok, " << failed << " failed, "
     << hits << " cache hits; " << format("%.2f", seconds) << " s of compiles, "
     << humanBytes(bytes) << " in " << outDir << " (" << join(outDir, "summary.json")
     << ")\n";
}

// `qeff models summarize OUT` / `qeff models check cards.json`.
namespace {
cl::SubCommand modelsCommand(
    "models", "Model-card files (docs/model-cards.md): 'summarize OUT' merges "
              "the card summaries of `qeff compile --models ... -o OUT "
              "--card-index I` runs into OUT/summary.json; 'check cards.json' "
              "checks a card file without compiling");
cl::opt<std::string> modelsAction(cl::Positional, cl::desc("<summarize|check>"),
                                  cl::Required, cl::sub(modelsCommand));
cl::opt<std::string> modelsPath(cl::Positional, cl::desc("<OUT|cards.json>"),
                                cl::Required, cl::sub(modelsCommand));
} // namespace

bool qeff::tool::isModelsCommand() { return static_cast<bool>(modelsCommand); }

int qeff::tool::runModels() {
  if (modelsAction == "check") {
    Expected<mlir::qeff::ModelCardFile> file = mlir::qeff::readModelCards(modelsPath);
    if (!file) {
      errs() << toString(file.takeError()) << "\n";
      return 1;
    }
    outs() << modelsPath << ": " << file->cards.size() << " card"
           << (file->cards.size() == 1 ? "" : "s") << ", no errors\n";
    for (const mlir::qeff::ModelCard &card : file->cards) {
      const mlir::qeff::CompileOptions &o = card.options;
      outs() << "  " << card.name << "  " << o.checkpointDir << "  ctx_len "
             << o.ctxLen << ", prefill_seq_len " << o.prefillSeqLen
             << (o.fullBatchSize > 0
                     ? ", full_batch_size " + std::to_string(o.fullBatchSize)
                     : ", batch_size " + std::to_string(o.batchSize))
             << "\n";
    }
    return 0;
  }
  if (modelsAction != "summarize") {
    errs() << "qeff models: unknown action '" << modelsAction
           << "' (summarize OUT, or check cards.json)\n";
    return 1;
  }
  std::vector<std::string> notes;
  Expected<std::vector<CardSummary>> cards =
      collectCardSummaries(modelsPath, "", notes);
  for (const std::string &note : notes)
    errs() << "qeff models summarize: " << note << "\n";
  if (!cards) {
    errs() << "qeff models summarize: " << toString(cards.takeError())
           << "; summary.json not written\n";
    return 1;
  }
  if (std::string error = writeSummary(modelsPath, *cards); !error.empty()) {
    errs() << "qeff models summarize: " << error << "\n";
    return 1;
  }
  printSummaryTable(*cards, modelsPath);
  return llvm::all_of(*cards, [](const CardSummary &s) { return s.ok; }) ? 0 : 1;
}
