//===- ModelCards.h - the model-card file of `qeff compile --models` -*- C++ -*-===//
//
// Part of qeff. A model-card file lists models to compile (and serve) in one
// call (docs/model-cards.md, schema docs/model-cards.schema.json):
//
//   {"defaults": {...options}, "models": [{"name": "...", "model": "<hf_dir>",
//                                         ...options}, ...]}
//
// The options are exactly the `qeff compile` options with underscores
// (`ctx_len`, `full_batch_size`, `mxfp6`, ...); a card's own options override
// the defaults; a relative path (`model`, `fp32_scopes_file`, `qaic_compile`)
// is relative to the card file's directory. The whole file is checked before
// anything runs: unknown keys, wrong types, values out of range and
// duplicate names are errors naming the card and the key. The file is parsed
// with llvm::json, which reports malformed JSON as an error (never aborts).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_DRIVER_MODELCARDS_H
#define QEFF_LOWERING_DRIVER_MODELCARDS_H

#include "lowering/Driver/CompileDriver.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::qeff {

struct ModelCard {
  /// The card's name: the served model name and the directory OUT/<name>.
  std::string name;
  /// Position in the file's `models` list (what `--card-index` selects).
  size_t index = 0;
  /// `model` as written in the file.
  std::string model;
  /// The compile options: checkpointDir is `model` resolved against the card
  /// file's directory; outputDir is left empty.
  CompileOptions options;
};

struct ModelCardFile {
  /// The path the file was read from.
  std::string path;
  /// BLAKE3-128 of the file's bytes: per-card summaries carry it, so that a
  /// merge never mixes summaries of two versions of the list.
  std::string contentHash;
  std::vector<ModelCard> cards;
};

/// Reads and checks a model-card file. On error, every problem found, one per
/// line, each naming the file, the card (`models[i] 'name'`) and the key.
llvm::Expected<ModelCardFile> readModelCards(llvm::StringRef path);

/// The same on text already read (`path` names it in messages and anchors
/// relative paths).
llvm::Expected<ModelCardFile> parseModelCards(llvm::StringRef text,
                                              llvm::StringRef path);

/// The option keys a card (or `defaults`) may hold, sorted; besides them a
/// card has `name` and `model`.
llvm::ArrayRef<llvm::StringRef> modelCardOptionKeys();

/// Whether `name` may name a card: 1 to 128 characters of [A-Za-z0-9._-],
/// not starting with '.' or '-' (it becomes a directory name and a URL
/// path segment).
bool isValidCardName(llvm::StringRef name);

/// The largest model-card file read (bytes) and its JSON nesting limit.
constexpr uint64_t kMaxModelCardFileBytes = 16ull << 20;
constexpr int kMaxModelCardNesting = 16;

} // namespace mlir::qeff

#endif // QEFF_LOWERING_DRIVER_MODELCARDS_H
