//===- ModelCards.cpp - the model-card file of `qeff compile --models` ----===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "lowering/Driver/ModelCards.h"

#include "lowering/Driver/Artifacts.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using namespace mlir::qeff;
namespace json = llvm::json;
using llvm::StringRef;

namespace {

/// Every card option: the `qeff compile` options with underscores. Keep in
/// step with tools/qeff/CompileCommand.cpp (test/driver/model-cards-options
/// compares this list with `qeff compile --help`).
constexpr StringRef kOptionKeys[] = {
    "aic_hw_version", "qaic_arg",
    "batch_size",    "calibrate",       "ctx_len",
    "fp32_scopes",   "fp32_scopes_file", "full_batch_size",
    "kv_window",     "legacy_specializations", "max_top_k_ids",
    "mxfp6",         "mxint8_kv",       "num_cores",
    "num_devices",   "num_speculative_tokens", "on_device_sampling",
    "outline_layers", "prefill_seq_len", "qaic_compile",
    "weights_dtype"};

/// Compile options that cannot be set per card, with the reason.
std::optional<StringRef> notACardOption(StringRef key) {
  if (key == "emit")
    return StringRef("a card always compiles device artifacts (the compile "
                     "cache and OUT/<name> hold them); use `qeff compile "
                     "--emit` on one checkpoint for the intermediate forms");
  if (key == "o" || key == "output" || key == "output_dir")
    return StringRef("a card's output is OUT/<name> (`-o OUT` on the command "
                     "line)");
  if (key == "depfile")
    return StringRef("dependency files are written by single compiles only");
  return std::nullopt;
}

std::string render(const json::Value &value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << value;
  if (text.size() > 60)
    text = text.substr(0, 57) + "...";
  return text;
}

const char *kindName(const json::Value &value) {
  switch (value.kind()) {
  case json::Value::Null:
    return "null";
  case json::Value::Boolean:
    return "a boolean";
  case json::Value::Number:
    return "a number";
  case json::Value::String:
    return "a string";
  case json::Value::Array:
    return "an array";
  case json::Value::Object:
    return "an object";
  }
  return "a value";
}

std::string resolvePath(StringRef baseDir, StringRef path) {
  if (path.empty() || llvm::sys::path::is_absolute(path) || baseDir.empty())
    return path.str();
  llvm::SmallString<256> p(baseDir);
  llvm::sys::path::append(p, path);
  return std::string(p.str());
}

/// Which level set the batch shape (the card's own choice beats the
/// defaults').
struct BatchChoice {
  bool batchSize = false, fullBatchSize = false;
};

/// Applies one option to `o`. Returns an error text (without the location)
/// or "".
std::string applyOption(StringRef key, const json::Value &v, StringRef baseDir,
                        CompileOptions &o, BatchChoice &batch) {
  auto integer = [&](int64_t low, int64_t high, int64_t &out) -> std::string {
    std::optional<int64_t> n = v.getAsInteger();
    if (!n || v.kind() != json::Value::Number || *n < low || *n > high)
      return "must be an integer from " + std::to_string(low) + " to " +
             std::to_string(high) + ", got " + render(v);
    out = *n;
    return "";
  };
  auto boolean = [&](bool &out) -> std::string {
    std::optional<bool> b = v.getAsBoolean();
    if (!b)
      return std::string("must be true or false, got ") + render(v);
    out = *b;
    return "";
  };
  auto oneOf = [&](llvm::ArrayRef<StringRef> values,
                   StringRef &out) -> std::string {
    std::optional<StringRef> s = v.getAsString();
    if (s && llvm::is_contained(values, *s)) {
      out = *s;
      return "";
    }
    std::string list;
    for (StringRef value : values)
      list += (list.empty() ? "\"" : ", \"") + value.str() + "\"";
    return "must be one of " + list + ", got " + render(v);
  };
  auto path = [&](std::string &out) -> std::string {
    std::optional<StringRef> s = v.getAsString();
    if (!s || s->empty())
      return std::string("must be a non-empty path string, got ") + render(v);
    out = resolvePath(baseDir, *s);
    return "";
  };

  if (key == "ctx_len")
    return integer(1, kMaxCtxLen, o.ctxLen);
  if (key == "prefill_seq_len")
    return integer(1, kMaxCtxLen, o.prefillSeqLen);
  if (key == "batch_size") {
    batch.batchSize = true;
    return integer(1, kMaxBatchSize, o.batchSize);
  }
  if (key == "full_batch_size") {
    batch.fullBatchSize = true;
    return integer(1, kMaxBatchSize, o.fullBatchSize);
  }
  if (key == "num_cores")
    return integer(1, kMaxNumCores, o.numCores);
  if (key == "num_devices")
    return integer(1, 1024, o.numDevices);
  if (key == "mxfp6")
    return boolean(o.mxfp6);
  if (key == "on_device_sampling")
    return boolean(o.onDeviceSampling);
  if (key == "max_top_k_ids")
    return integer(1, 65536, o.maxTopKIds);
  if (key == "mxint8_kv")
    return boolean(o.mxint8KV);
  if (key == "legacy_specializations")
    return boolean(o.legacySpecializations);
  if (key == "kv_window") {
    StringRef s;
    std::string error = oneOf({"full", "rolling"}, s);
    o.kvWindow = s == "rolling" ? KVWindow::Rolling : KVWindow::Full;
    return error;
  }
  if (key == "outline_layers") {
    // As on the command line: on, off or auto; a boolean is on or off.
    if (std::optional<bool> b = v.getAsBoolean()) {
      o.outlineLayers = *b ? OutlineLayers::On : OutlineLayers::Off;
      return "";
    }
    StringRef s;
    std::string error = oneOf({"on", "off", "auto"}, s);
    o.outlineLayers = s == "on"    ? OutlineLayers::On
                      : s == "off" ? OutlineLayers::Off
                                   : OutlineLayers::Auto;
    return error.empty() ? "" : error + " (or true/false)";
  }
  if (key == "weights_dtype") {
    StringRef s;
    std::string error = oneOf({"f32", "f16", "bf16"}, s);
    o.weightsDType = s == "f16"    ? ExportWeightsDType::F16
                     : s == "bf16" ? ExportWeightsDType::BF16
                                   : ExportWeightsDType::AsIR;
    return error;
  }
  if (key == "num_speculative_tokens") {
    // One K or a list of them, as `--num-speculative-tokens K[,K2...]`; the
    // driver checks them against prefill_seq_len.
    o.numSpeculativeTokens.clear();
    auto take = [&](const json::Value &item) -> std::string {
      std::optional<int64_t> k = item.getAsInteger();
      if (!k || *k < 1 || *k > 1024)
        return "must be an integer from 1 to 1024 or a list of them, got " + render(item);
      o.numSpeculativeTokens.push_back(*k);
      return "";
    };
    if (const json::Array *list = v.getAsArray()) {
      if (list->empty())
        return std::string("must list at least one K");
      if (list->size() > 8)
        return "lists " + std::to_string(list->size()) + " values of K (at most 8)";
      for (const json::Value &item : *list) {
        if (std::string error = take(item); !error.empty())
          return error;
        if (std::count(o.numSpeculativeTokens.begin(), o.numSpeculativeTokens.end(),
                       o.numSpeculativeTokens.back()) > 1)
          return "lists " + std::to_string(o.numSpeculativeTokens.back()) + " twice";
      }
      return "";
    }
    return take(v);
  }
  if (key == "calibrate") {
    // `--calibrate` alone is 8 sample prompts, `--calibrate=N` N.
    if (std::optional<bool> b = v.getAsBoolean()) {
      o.calibrate = *b ? 8 : 0;
      return "";
    }
    int64_t n = 0;
    std::string error = integer(1, 1 << 20, n);
    o.calibrate = static_cast<int>(n);
    return error.empty() ? "" : error + " (or true: 8 prompts)";
  }
  if (key == "fp32_scopes") {
    // A list of module paths or globs, or one comma-separated string as on
    // the command line.
    o.fp32Scopes.clear();
    if (std::optional<StringRef> s = v.getAsString()) {
      llvm::SmallVector<StringRef> parts;
      s->split(parts, ',', -1, /*KeepEmpty=*/false);
      for (StringRef part : parts)
        o.fp32Scopes.push_back(part.trim().str());
      return "";
    }
    const json::Array *list = v.getAsArray();
    if (!list)
      return std::string("must be a list of module paths or globs, got ") +
             kindName(v);
    for (const json::Value &item : *list) {
      std::optional<StringRef> s = item.getAsString();
      if (!s || s->empty())
        return "must be a list of non-empty strings, got " + render(item) +
               " in it";
      o.fp32Scopes.push_back(s->str());
    }
    return "";
  }
  if (key == "fp32_scopes_file")
    return path(o.fp32ScopesFile);
  if (key == "qaic_compile")
    return path(o.qaicCompile);
  if (key == "aic_hw_version") {
    std::optional<StringRef> s = v.getAsString();
    if (!s || s->empty())
      return std::string("must be a non-empty string, got ") + render(v);
    o.aicHwVersion = s->str();
    return checkQAicArguments(o);
  }
  if (key == "qaic_arg") {
    // One --qaic-arg option, or a list of them.
    o.qaicArgs.clear();
    if (std::optional<StringRef> s = v.getAsString()) {
      o.qaicArgs.push_back(s->str());
      return checkQAicArguments(o);
    }
    const json::Array *list = v.getAsArray();
    if (!list)
      return std::string("must be a qaic-compile option or a list of them, got ") +
             kindName(v);
    for (const json::Value &item : *list) {
      std::optional<StringRef> s = item.getAsString();
      if (!s)
        return "must be a list of strings, got " + render(item) + " in it";
      o.qaicArgs.push_back(s->str());
    }
    return checkQAicArguments(o);
  }
  return "unknown key"; // not reached: keys are checked first
}

/// The closest option key, for "did you mean".
std::string suggestion(StringRef key) {
  StringRef best;
  unsigned bestDistance = 4;
  auto consider = [&](StringRef candidate) {
    unsigned d = key.edit_distance(candidate, true, bestDistance);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  };
  for (StringRef candidate : kOptionKeys)
    consider(candidate);
  consider("name");
  consider("model");
  std::string dashed = key.str();
  std::replace(dashed.begin(), dashed.end(), '-', '_');
  if (dashed != key && llvm::is_contained(kOptionKeys, StringRef(dashed)))
    return " (options are spelled with underscores: '" + dashed + "')";
  return best.empty() ? "" : " (did you mean '" + best.str() + "'?)";
}

/// The keys of an object, sorted (llvm::json::Object does not keep order).
std::vector<std::string> sortedKeys(const json::Object &object) {
  std::vector<std::string> keys;
  for (const auto &entry : object)
    keys.push_back(entry.first.str());
  std::sort(keys.begin(), keys.end());
  return keys;
}

/// The deepest nesting of arrays and objects in `text` (strings skipped).
int nestingDepth(StringRef text) {
  int depth = 0, deepest = 0;
  bool inString = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
    } else if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

/// The first key that appears twice in one object of `text` (valid JSON),
/// with its line; llvm::json keeps one of them silently. Keys are compared as
/// written (escapes not decoded).
std::optional<std::pair<std::string, unsigned>> duplicateKey(StringRef text) {
  std::vector<std::optional<llvm::StringSet<>>> stack; // nullopt: an array
  unsigned line = 1;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') {
      ++line;
    } else if (c == '{') {
      stack.emplace_back(llvm::StringSet<>());
    } else if (c == '[') {
      stack.emplace_back(std::nullopt);
    } else if ((c == '}' || c == ']') && !stack.empty()) {
      stack.pop_back();
    } else if (c == '"') {
      size_t start = ++i;
      while (i < text.size() && text[i] != '"')
        i += text[i] == '\\' ? 2 : 1;
      StringRef key = text.slice(start, std::min(i, text.size()));
      size_t next = text.find_first_not_of(" \t\r\n", i + 1);
      bool isKey = next != StringRef::npos && text[next] == ':';
      if (isKey && !stack.empty() && stack.back() &&
          !stack.back()->insert(key).second)
        return std::make_pair(key.str(), line);
    }
  }
  return std::nullopt;
}

} // namespace

llvm::ArrayRef<StringRef> mlir::qeff::modelCardOptionKeys() {
  return kOptionKeys;
}

bool mlir::qeff::isValidCardName(StringRef name) {
  if (name.empty() || name.size() > 128 || name.front() == '.' ||
      name.front() == '-')
    return false;
  return llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '.' || c == '_' || c == '-';
  });
}

llvm::Expected<ModelCardFile> mlir::qeff::parseModelCards(StringRef text,
                                                          StringRef path) {
  std::vector<std::string> errors;
  auto error = [&](const std::string &where, const std::string &message) {
    errors.push_back(path.str() + ": " + where + message);
  };
  auto done = [&]() -> llvm::Error {
    std::string all;
    for (const std::string &e : errors)
      all += (all.empty() ? "" : "\n") + e;
    return llvm::createStringError(llvm::inconvertibleErrorCode(), all);
  };

  if (int depth = nestingDepth(text); depth > kMaxModelCardNesting) {
    error("", "JSON nested " + std::to_string(depth) +
                  " levels deep; a model-card file needs at most " +
                  std::to_string(kMaxModelCardNesting));
    return done();
  }
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    error("", "not valid JSON: " + llvm::toString(parsed.takeError()));
    return done();
  }
  if (auto duplicate = duplicateKey(text)) {
    error("", "line " + std::to_string(duplicate->second) + ": key '" +
                  duplicate->first + "' appears twice in one object");
    return done();
  }
  const json::Object *root = parsed->getAsObject();
  if (!root) {
    error("", std::string("must be a JSON object {\"defaults\": {...}, "
                          "\"models\": [...]}, got ") +
                  kindName(*parsed));
    return done();
  }
  for (const std::string &key : sortedKeys(*root))
    if (key != "defaults" && key != "models" && key != "$schema")
      error("", "unknown top-level key '" + key +
                    "' (a model-card file has 'defaults' and 'models')");
  if (const json::Value *schema = root->get("$schema");
      schema && !schema->getAsString())
    error("", "'$schema' must be a string");

  StringRef baseDir = llvm::sys::path::parent_path(path);
  const json::Object *defaults = nullptr;
  if (const json::Value *d = root->get("defaults")) {
    defaults = d->getAsObject();
    if (!defaults)
      error("defaults: ", std::string("must be an object of options, got ") +
                              kindName(*d));
  }

  // Checks the keys of one level and applies its options.
  auto applyLevel = [&](const json::Object &object, const std::string &where,
                        bool isCard, CompileOptions &o, BatchChoice &batch) {
    for (const std::string &key : sortedKeys(object)) {
      if (isCard && (key == "name" || key == "model"))
        continue;
      const json::Value &value = *object.get(key);
      if (!llvm::is_contained(kOptionKeys, StringRef(key))) {
        if (!isCard && (key == "name" || key == "model"))
          error(where, "key '" + key + "': belongs in each card, not in defaults");
        else if (std::optional<StringRef> why = notACardOption(key))
          error(where, "key '" + key + "': not a card option: " + why->str());
        else
          error(where, "unknown key '" + key + "'" + suggestion(key));
        continue;
      }
      std::string message = applyOption(key, value, baseDir, o, batch);
      if (!message.empty())
        error(where, "key '" + key + "': " + message);
    }
    if (object.get("batch_size") && object.get("full_batch_size"))
      error(where, "keys 'batch_size' and 'full_batch_size' exclude each other "
                   "(continuous batching prefills one sequence and decodes "
                   "full_batch_size)");
  };

  CompileOptions base;
  BatchChoice baseBatch;
  if (defaults)
    applyLevel(*defaults, "defaults: ", false, base, baseBatch);

  ModelCardFile file;
  file.path = path.str();
  file.contentHash = hashText(text);
  const json::Value *modelsValue = root->get("models");
  const json::Array *models = modelsValue ? modelsValue->getAsArray() : nullptr;
  if (!modelsValue)
    error("", "no 'models' list");
  else if (!models)
    error("models: ", std::string("must be a list of cards, got ") +
                          kindName(*modelsValue));
  else if (models->empty())
    error("models: ", "the list is empty");

  llvm::StringMap<size_t> seen; // lower-case name -> index
  for (size_t i = 0; models && i < models->size(); ++i) {
    const json::Value &entry = (*models)[i];
    std::string where = "models[" + std::to_string(i) + "]";
    const json::Object *card = entry.getAsObject();
    if (!card) {
      error(where + ": ", std::string("a card must be an object, got ") +
                              kindName(entry));
      continue;
    }
    ModelCard mc;
    mc.index = i;
    const json::Value *name = card->get("name");
    std::optional<StringRef> nameText = name ? name->getAsString() : std::nullopt;
    if (!name) {
      error(where + ": ", "no 'name'");
    } else if (!nameText) {
      error(where + ": ", std::string("key 'name': must be a string, got ") +
                              kindName(*name));
    } else if (!isValidCardName(*nameText)) {
      error(where + ": ", "key 'name': '" + nameText->str() +
                              "' is not a valid card name (1 to 128 of "
                              "A-Z a-z 0-9 . _ -, not starting with . or -: "
                              "it names the directory OUT/<name>)");
    } else {
      mc.name = nameText->str();
      where += " '" + mc.name + "'";
      auto [it, fresh] = seen.try_emplace(StringRef(mc.name).lower(), i);
      if (!fresh)
        error(where + ": ", "key 'name': duplicate name; models[" +
                                std::to_string(it->second) + "] '" +
                                (*models)[it->second]
                                    .getAsObject()
                                    ->getString("name")
                                    ->str() +
                                "' has it already (names are compared "
                                "ignoring case: they name directories)");
    }
    where += ": ";
    const json::Value *model = card->get("model");
    std::optional<StringRef> modelText =
        model ? model->getAsString() : std::nullopt;
    if (!model)
      error(where, "no 'model' (the Hugging Face checkpoint directory)");
    else if (!modelText || modelText->empty())
      error(where, "key 'model': must be a non-empty path string, got " +
                       render(*model));
    else
      mc.model = modelText->str();

    mc.options = base;
    BatchChoice batch;
    applyLevel(*card, where, true, mc.options, batch);
    // The card's own batch shape beats the defaults'.
    if (batch.batchSize && !batch.fullBatchSize && baseBatch.fullBatchSize)
      mc.options.fullBatchSize = 0;
    if (batch.fullBatchSize && !batch.batchSize && baseBatch.batchSize)
      mc.options.batchSize = 1;
    if (mc.options.outlineLayers == OutlineLayers::On &&
        (!mc.options.fp32Scopes.empty() || !mc.options.fp32ScopesFile.empty() ||
         mc.options.calibrate > 0))
      error(where, "'outline_layers' on cannot be combined with fp32 scopes or "
                   "'calibrate' (an outlined layer's nodes are shared by every "
                   "layer of its kind)");
    mc.options.checkpointDir = resolvePath(baseDir, mc.model);
    file.cards.push_back(std::move(mc));
  }
  if (!errors.empty())
    return done();
  return file;
}

llvm::Expected<ModelCardFile> mlir::qeff::readModelCards(StringRef path) {
  auto fail = [&](const std::string &message) -> llvm::Error {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path.str() + ": " + message);
  };
  if (llvm::sys::fs::is_directory(path))
    return fail("is a directory, not a model-card file");
  uint64_t size = 0;
  if (std::error_code ec = llvm::sys::fs::file_size(path, size))
    return fail("cannot read: " + ec.message());
  if (size > kMaxModelCardFileBytes)
    return fail("is " + std::to_string(size) +
                " bytes; a model-card file may have at most " +
                std::to_string(kMaxModelCardFileBytes));
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return fail("cannot read: " + buffer.getError().message());
  return parseModelCards((*buffer)->getBuffer(), path);
}
