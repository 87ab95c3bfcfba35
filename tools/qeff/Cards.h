//===- Cards.h - many models at once: `qeff compile --models` ---*- C++ -*-===//
//
// Part of qeff. The batch path over a model-card file (docs/model-cards.md):
//
//   qeff compile --models cards.json -o OUT [-j N]     every card, N at a time
//   qeff compile --models cards.json -o OUT --card-index I   card I only
//   qeff models summarize OUT                          merge the card summaries
//   qeff models check cards.json                       check the file only
//
// One card is compiled by one process (`--card-index`): the batch hashes each
// card itself, publishes a cache hit at once, and runs each miss as a child
// `qeff compile --models F --card-index I`, exactly what a pod of the
// Kubernetes Indexed Job runs, so one card's failure, crash or memory cannot
// take the others down, and a Ctrl-C stops every compile at once. Each card goes through the content-addressed compile cache
// (CompileCache.h) and is published as OUT/<name>, hard-linked from the
// cache entry (copied across file systems), with its summary in
// OUT/.summaries/<name>.json; the merge of those is OUT/summary.json.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_TOOLS_QEFF_CARDS_H
#define QEFF_TOOLS_QEFF_CARDS_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlir::qeff {
struct ModelCardFile;
}

namespace qeff::tool {

struct CardsRun {
  std::string cardsFile;
  std::string outDir;
  /// Empty: defaultCacheDir().
  std::string cacheDir;
  /// Cards compiled at once (0: what the cores and the memory allow).
  int jobs = 0;
  /// >= 0: compile this card only (in this process).
  int64_t cardIndex = -1;
  /// Card mode: JSON progress events on stdout, one per line (the batch
  /// reads them from its children).
  bool events = false;
  /// The exporter's converting threads (0: its default).
  unsigned exportThreads = 0;
  /// Checkpoint file -> BLAKE3-128 hash already computed by the batch
  /// (`--known-hash`, hidden): not hashed again.
  std::map<std::string, std::string> knownHashes;
};

/// `qeff compile --models`: exit status 0 when every card (or the one card)
/// succeeded, 1 otherwise, 130 when interrupted.
int runCompileCards(const CardsRun &run);

namespace detail {
/// Compiles card `index` of `cardsFile` in this process (`--card-index`).
int runOneCard(const CardsRun &run, size_t index);
/// One card through the cache in this process: its key (hashing the
/// checkpoint, except files in `hashes`); on a hit, or on a miss when
/// `compileMisses`, OUT/<name> and its summary: 0 ok, 1 failed. A miss
/// otherwise returns 2 with `hashes` set to the checkpoint's hashes (for
/// `--known-hash`). `print`: diagnostics on stderr and progress on stdout.
int cardThroughCache(const CardsRun &run,
                     const mlir::qeff::ModelCardFile &file, size_t index,
                     bool compileMisses, bool print,
                     std::map<std::string, std::string> &hashes);
} // namespace detail

/// One card's outcome: an entry of OUT/summary.json ("cards") plus where it
/// belongs (its index, the number of cards and the card file's hash).
struct CardSummary {
  std::string name;
  bool ok = false;
  std::string error;
  /// Relative to OUT (the card's name) when ok, else empty (null).
  std::string artifactDir;
  /// The compile cache key (32 hex digits); empty (null) when the card failed
  /// before it was known.
  std::string contentKey;
  bool cacheHit = false;
  double seconds = 0;
  uint64_t outputBytes = 0;
  size_t index = 0;
  size_t total = 0;
  std::string cardsHash;
};

/// OUT/.summaries/<name>.json.
std::string cardSummaryPath(const std::string &outDir, const std::string &name);
/// Reads one card summary file (an error names the file).
llvm::Expected<CardSummary> readCardSummary(const std::string &path);
/// Writes a card's summary file atomically. "" or an error text.
std::string writeCardSummary(const std::string &outDir, const CardSummary &s);
/// Reads the card summaries under OUT/.summaries and returns those of one
/// card file, in card order: of `cardsHash` when given, else of the card
/// file whose summary was written last (the others are reported on
/// `notes`). An error when a card of that file has no summary.
llvm::Expected<std::vector<CardSummary>>
collectCardSummaries(const std::string &outDir, const std::string &cardsHash,
                     std::vector<std::string> &notes);
/// Writes OUT/summary.json ({"cards": [...]}) atomically. "" or an error.
std::string writeSummary(const std::string &outDir,
                         const std::vector<CardSummary> &cards);
/// The one-screen table of a batch's outcome, on stdout.
void printSummaryTable(const std::vector<CardSummary> &cards,
                       const std::string &outDir);
/// "1.2 MiB".
std::string humanBytes(uint64_t bytes);

/// `qeff models summarize|check`.
bool isModelsCommand();
int runModels();

} // namespace qeff::tool

#endif // QEFF_TOOLS_QEFF_CARDS_H
