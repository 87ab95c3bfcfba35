//===- JsonUtil.cpp - Non-throwing JSON helpers for the HF reader ---------===//

#include "frontend/HF/JsonUtil.h"

#include "support/SafeFile.h"

#include "absl/strings/str_cat.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace qeff::hf::detail {
namespace {

struct Frame {
  bool isObject;
  std::string name;
  std::string key; ///< its key in the parent object
  std::set<std::string> keys;
  size_t values = 0; ///< of an array, so far
};

// Deeply nested values would make later recursive walks (copy, dump)
// overflow the stack: refuse them.
constexpr size_t kMaxDepth = 64;

/// The checking pass over a JSON text: records the first syntax error (with
/// its position), whether the nesting passes kMaxDepth and the first duplicate
/// key, without building anything. Linear in the text: nlohmann's DOM parser
/// with a parse callback rescans the parent object at every object end
/// (quadratic in a safetensors header's tensor count), so the DOM is built
/// afterwards without a callback.
class CheckSax : public nlohmann::json_sax<Json> {
public:
  CheckSax(std::string_view topLevelKeyNoun) : topLevelKeyNoun(topLevelKeyNoun) {}

  std::string syntaxError;
  /// The field of a number too large for a double ("1e999"), and its text.
  std::string overflowField, overflowText;
  std::string duplicate;
  bool tooDeep = false;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t &) override { return value(); }
  bool string(string_t &) override { return value(); }
  bool binary(binary_t &) override { return value(); }
  bool start_object(std::size_t) override { return open(/*isObject=*/true); }
  bool start_array(std::size_t) override { return open(/*isObject=*/false); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t &k) override {
    lastKey = k;
    if (!stack.empty() && duplicate.empty() &&
        !stack.back().keys.insert(lastKey).second) {
      if (stack.size() == 1)
        duplicate = cat("duplicate ", topLevelKeyNoun, " '", lastKey, "'");
      else
        duplicate =
            cat("duplicate key '", lastKey, "' in '", stack.back().name, "'");
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string &token,
                   const nlohmann::detail::exception &ex) override {
    syntaxError = ex.what();
    if (ex.id == 406) { // out_of_range: number overflow
      overflowField = here();
      overflowText = token.substr(0, 64);
    }
    return false;
  }

private:
  /// The path of the value being parsed: "rope_scaling.factor",
  /// "eos_token_id[1]" (keys cut at 64 bytes).
  std::string here() const {
    std::string path;
    auto addKey = [&](const std::string &key) {
      path += cat(path.empty() ? "" : ".", key.substr(0, 64));
    };
    if (stack.size() > kMaxDepth)
      return "(a value nested deeper than the limit)";
    for (size_t i = 1; i <= stack.size(); ++i) {
      const Frame &parent = stack[i - 1];
      bool last = i == stack.size();
      if (parent.isObject)
        addKey(last ? lastKey : stack[i].key);
      else // the current element, or the one frame i is
        path += cat("[", last ? parent.values : parent.values - 1, "]");
    }
    return path;
  }
  bool value() {
    if (!stack.empty() && !stack.back().isObject)
      ++stack.back().values;
    return true;
  }
  bool open(bool isObject) {
    std::string name, key;
    if (stack.size() >= kMaxDepth) {
      tooDeep = true; // keeps names (and their cost) bounded
    } else if (!stack.empty()) {
      name = stack.back().isObject ? lastKey : stack.back().name + "[]";
      if (stack.back().isObject)
        key = lastKey;
    }
    value();
    stack.push_back({isObject, std::move(name), std::move(key), {}});
    return true;
  }
  bool close() {
    if (!stack.empty())
      stack.pop_back();
    return true;
  }

  std::string_view topLevelKeyNoun;
  std::vector<Frame> stack;
  std::string lastKey;
};

} // namespace

absl::StatusOr<Json> parseJson(std::string_view text, std::string_view fileName,
                               std::string_view what,
                               std::string_view topLevelKeyNoun) {
  CheckSax check(topLevelKeyNoun);
  bool valid = false;
  try {
    valid = Json::sax_parse(text.begin(), text.end(), &check);
  } catch (const std::exception &e) {
    if (check.syntaxError.empty())
      check.syntaxError = e.what();
  }
  if (!valid && !check.overflowField.empty())
    return absl::InvalidArgumentError(
        cat(fileName, ": field '", check.overflowField, "': ", check.overflowText,
            " is out of range (too large in magnitude for a double)"));
  if (!valid)
    return absl::InvalidArgumentError(
        cat(fileName, ": ", what, " is not valid JSON",
            check.syntaxError.empty() ? "" : cat(" (", check.syntaxError, ")")));
  if (check.tooDeep)
    return absl::InvalidArgumentError(
        cat(fileName, ": ", what, " nests deeper than ", kMaxDepth, " levels"));
  if (!check.duplicate.empty())
    return absl::InvalidArgumentError(
        cat(fileName, ": ", what, ": ", check.duplicate));
  Json result;
  try {
    result = Json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                         /*allow_exceptions=*/false);
  } catch (const std::exception &e) {
    return absl::InvalidArgumentError(
        cat(fileName, ": ", what, " cannot be parsed: ", e.what()));
  }
  if (result.is_discarded())
    return absl::InvalidArgumentError(
        cat(fileName, ": ", what, " is not valid JSON"));
  return result;
}

absl::StatusOr<std::string> readSmallFile(const std::string &path,
                                          uint64_t maxSize) {
  // Regular files only (a FIFO or device would block or never end), and
  // bounded: support::readRegularFile opens with O_NONBLOCK and checks fstat.
  std::string text, error;
  if (!support::readRegularFile(path, maxSize, text, error))
    return support::isRegularFile(path) || !::access(path.c_str(), F_OK)
               ? absl::InvalidArgumentError(error)
               : absl::NotFoundError(error);
  return text;
}

std::string describe(const Json &value) {
  // Containers of containers are summarised rather than printed.
  if (value.is_structured())
    for (const Json &child : value)
      if (child.is_structured())
        return value.is_array() ? cat("an array of ", value.size(), " values")
                                : cat("an object of ", value.size(), " fields");
  std::string text = value.dump(-1, ' ', false, Json::error_handler_t::replace);
  if (text.size() > 64)
    text = text.substr(0, 61) + "...";
  return text;
}

std::optional<int64_t> asInt64(const Json &value) {
  if (value.is_number_unsigned()) {
    uint64_t v = value.get<uint64_t>();
    if (v > static_cast<uint64_t>(INT64_MAX))
      return std::nullopt;
    return static_cast<int64_t>(v);
  }
  if (value.is_number_integer())
    return value.get<int64_t>();
  return std::nullopt;
}

std::optional<uint64_t> asUInt64(const Json &value) {
  if (value.is_number_unsigned())
    return value.get<uint64_t>();
  if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    if (v >= 0)
      return static_cast<uint64_t>(v);
  }
  return std::nullopt;
}

std::optional<double> asDouble(const Json &value) {
  if (value.is_number_float())
    return value.get<double>();
  if (value.is_number_unsigned())
    return static_cast<double>(value.get<uint64_t>());
  if (value.is_number_integer())
    return static_cast<double>(value.get<int64_t>());
  return std::nullopt;
}

bool isRegularFile(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

} // namespace qeff::hf::detail
