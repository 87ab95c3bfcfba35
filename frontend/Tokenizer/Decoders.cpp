//===- Decoders.cpp - tokenizer.json "decoder" ----------------------------===//
//
// ByteLevel, Metaspace, Replace, ByteFallback, Fuse, Strip, BPEDecoder and
// Sequence decoders, each a port of the decode_chain of HF `tokenizers`.
//
//===----------------------------------------------------------------------===//

#include "frontend/Tokenizer/Components.h"
#include "frontend/Tokenizer/Unicode.h"

namespace qeff::tokenizer::detail {
namespace {

/// Byte-level characters back to bytes, then one lossy UTF-8 string. Tokens
/// with a character outside the byte table (added tokens) keep their bytes.
class ByteLevelDecoder : public Decoder {
public:
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::string bytes;
    for (const std::string &token : tokens) {
      std::string mapped;
      bool ok = true;
      for (size_t pos = 0; pos < token.size() && ok;) {
        int byte = unicodeToByte(decodeUtf8(token, pos));
        ok = byte >= 0;
        mapped.push_back(static_cast<char>(byte));
      }
      bytes += ok ? mapped : token;
    }
    tokens.assign(1, sanitizeUtf8(bytes));
  }
  bool rawToken(std::string &token, bool, bool &joined) const override {
    std::string mapped;
    for (size_t pos = 0; pos < token.size();) {
      int byte = unicodeToByte(decodeUtf8(token, pos));
      if (byte < 0) {
        mapped = token;
        break;
      }
      mapped.push_back(static_cast<char>(byte));
    }
    token = std::move(mapped);
    joined = true;
    return true;
  }
};

class MetaspaceDecoder : public Decoder {
public:
  MetaspaceDecoder(std::string replacement, bool dropFirst)
      : replacement_(std::move(replacement)), dropFirst_(dropFirst) {}
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i)
      tokens[i] =
          replaceAll(tokens[i], replacement_, i == 0 && dropFirst_ ? "" : " ");
  }
  bool rawToken(std::string &token, bool atStart, bool &joined) const override {
    // Once joined, the whole text is token 0.
    token = replaceAll(token, replacement_,
                       (atStart || joined) && dropFirst_ ? "" : " ");
    return true;
  }

private:
  std::string replacement_;
  bool dropFirst_;
};

class ReplaceDecoder : public Decoder {
public:
  ReplaceDecoder(Matcher matcher, std::string content)
      : matcher_(std::move(matcher)), content_(std::move(content)) {}
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (std::string &token : tokens)
      replaceMatches(matcher_, content_, token);
  }
  bool rawToken(std::string &token, bool, bool &joined) const override {
    // On joined text a pattern may match across tokens.
    if (joined)
      return false;
    replaceMatches(matcher_, content_, token);
    return true;
  }

private:
  Matcher matcher_;
  std::string content_;
};

/// Runs of <0xNN> tokens become the UTF-8 text they spell, or one U+FFFD per
/// byte when the run is not valid UTF-8.
class ByteFallbackDecoder : public Decoder {
public:
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    auto flush = [&] {
      if (pending.empty())
        return;
      if (isValidUtf8(pending))
        out.push_back(pending);
      else
        for (size_t i = 0; i < pending.size(); ++i)
          out.push_back("\xEF\xBF\xBD");
      pending.clear();
    };
    for (std::string &token : tokens) {
      int byte = parseByteToken(token);
      if (byte >= 0) {
        pending.push_back(static_cast<char>(byte));
        continue;
      }
      flush();
      out.push_back(std::move(token));
    }
    flush();
    tokens = std::move(out);
  }
  bool rawToken(std::string &token, bool, bool &joined) const override {
    if (joined)
      return false;
    if (int byte = parseByteToken(token); byte >= 0)
      token.assign(1, static_cast<char>(byte));
    return true;
  }

  static int parseByteToken(std::string_view token) {
    if (token.size() != 6 || token.substr(0, 3) != "<0x" || token[5] != '>')
      return -1;
    int value = 0;
    for (char c : token.substr(3, 2)) {
      int digit = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
      if (digit < 0)
        return -1;
      value = value * 16 + digit;
    }
    return value;
  }
};

class FuseDecoder : public Decoder {
public:
  void decodeChain(std::vector<std::string> &tokens) const override {
    std::string joined;
    for (const std::string &token : tokens)
      joined += token;
    tokens.assign(1, std::move(joined));
  }
  bool rawToken(std::string &, bool, bool &joined) const override {
    joined = true;
    return true;
  }
};

/// Removes up to `start` leading and `stop` trailing `content` characters
/// from every token.
class StripDecoder : public Decoder {
public:
  StripDecoder(std::string content, int64_t start, int64_t stop)
      : content_(std::move(content)), start_(start), stop_(stop) {}
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (std::string &token : tokens)
      strip(token, start_, stop_);
  }
  bool rawToken(std::string &token, bool atStart, bool &joined) const override {
    // On joined text only the text's ends are stripped: the start when the
    // token begins it (the end is not modelled: a token's share there is
    // unknown until the text ends).
    if (!joined)
      strip(token, start_, stop_);
    else if (atStart)
      strip(token, start_, 0);
    return true;
  }

private:
  void strip(std::string &token, int64_t start, int64_t stop) const {
    std::string_view view = token;
    for (int64_t i = 0; i < start && view.substr(0, content_.size()) ==
                                         std::string_view(content_);
         ++i)
      view.remove_prefix(content_.size());
    for (int64_t i = 0; i < stop && view.size() >= content_.size() &&
                        view.substr(view.size() - content_.size()) ==
                            std::string_view(content_);
         ++i)
      view.remove_suffix(content_.size());
    token = std::string(view);
  }

  std::string content_;
  int64_t start_, stop_;
};

/// Classic BPE end-of-word suffix ("</w>") back to spaces.
class BpeSuffixDecoder : public Decoder {
public:
  explicit BpeSuffixDecoder(std::string suffix) : suffix_(std::move(suffix)) {}
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (size_t i = 0; i < tokens.size(); ++i)
      tokens[i] =
          replaceAll(tokens[i], suffix_, i + 1 == tokens.size() ? "" : " ");
  }
  bool rawToken(std::string &token, bool, bool &joined) const override {
    // A token followed by others (the last one's share is unknown until the
    // text ends).
    if (joined)
      return false;
    token = replaceAll(token, suffix_, " ");
    return true;
  }

private:
  std::string suffix_;
};

class SequenceDecoder : public Decoder {
public:
  explicit SequenceDecoder(std::vector<std::unique_ptr<const Decoder>> steps)
      : steps_(std::move(steps)) {}
  void decodeChain(std::vector<std::string> &tokens) const override {
    for (const auto &step : steps_)
      step->decodeChain(tokens);
  }
  bool rawToken(std::string &token, bool atStart, bool &joined) const override {
    for (const auto &step : steps_)
      if (!step->rawToken(token, atStart, joined))
        return false;
    return true;
  }

private:
  std::vector<std::unique_ptr<const Decoder>> steps_;
};

} // namespace

bool Decoder::rawToken(std::string &, bool, bool &) const { return false; }

std::unique_ptr<const Decoder> makeByteLevelDecoder() {
  return std::make_unique<ByteLevelDecoder>();
}

absl::StatusOr<std::unique_ptr<const Decoder>>
parseDecoder(const Json &json, const JsonPath &path) {
  auto type = getType(json, path);
  if (!type.ok())
    return type.status();

  if (*type == "Sequence") {
    auto steps = parseSequence<Decoder>(json, path, "decoders", parseDecoder);
    if (!steps.ok())
      return steps.status();
    return std::make_unique<SequenceDecoder>(*std::move(steps));
  }
  if (*type == "ByteLevel")
    return makeByteLevelDecoder();
  if (*type == "Metaspace") {
    auto replacement = getChar(json, path, "replacement", "\u2581");
    if (!replacement.ok())
      return replacement.status();
    auto legacyPrefix = getBool(json, path, "add_prefix_space", true);
    if (!legacyPrefix.ok())
      return legacyPrefix.status();
    bool dropFirst = *legacyPrefix;
    auto scheme = getOptString(json, path, "prepend_scheme");
    if (!scheme.ok())
      return scheme.status();
    if (*scheme) {
      if (**scheme != "always" && **scheme != "first" && **scheme != "never")
        return jsonError(path / "prepend_scheme",
                         strCat("unknown prepend scheme '", **scheme,
                                "' (expected always, first or never)"));
      dropFirst = **scheme != "never";
    }
    return std::make_unique<MetaspaceDecoder>(*std::move(replacement),
                                              dropFirst);
  }
  if (*type == "Replace") {
    auto matcher = parsePattern(json, path);
    if (!matcher.ok())
      return matcher.status();
    auto content = getString(json, path, "content");
    if (!content.ok())
      return content.status();
    return std::make_unique<ReplaceDecoder>(*std::move(matcher),
                                            *std::move(content));
  }
  if (*type == "ByteFallback")
    return std::make_unique<ByteFallbackDecoder>();
  if (*type == "Fuse")
    return std::make_unique<FuseDecoder>();
  if (*type == "Strip") {
    auto content = getChar(json, path, "content", " ");
    if (!content.ok())
      return content.status();
    auto start = getInt(json, path, "start", 0);
    if (!start.ok())
      return start.status();
    auto stop = getInt(json, path, "stop", 0);
    if (!stop.ok())
      return stop.status();
    return std::make_unique<StripDecoder>(*std::move(content), *start, *stop);
  }
  if (*type == "BPEDecoder") {
    auto suffix = getOptString(json, path, "suffix");
    if (!suffix.ok())
      return suffix.status();
    return std::make_unique<BpeSuffixDecoder>(suffix->value_or("</w>"));
  }
  return unsupported(path / "type", strCat("decoder '", *type, "'"));
}

} // namespace qeff::tokenizer::detail
