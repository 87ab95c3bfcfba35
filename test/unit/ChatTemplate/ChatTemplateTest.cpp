//===- ChatTemplateTest.cpp - QEffChatTemplate unit tests -----------------===//
//
// Parse errors (line:column and construct), render errors, resource limits and
// the loader. The rendering semantics themselves are checked against Python's
// jinja2 by test/chat-templates (compare.py).
//
//===----------------------------------------------------------------------===//

#include "frontend/ChatTemplate/ChatTemplate.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

using qeff::chat::ChatTemplate;
using qeff::chat::loadChatTemplate;
using qeff::chat::RenderLimits;
using json = nlohmann::ordered_json;

namespace {

std::string render(const std::string &source, const json &context = json::object()) {
  auto tmpl = ChatTemplate::parse(source);
  EXPECT_TRUE(tmpl.ok()) << tmpl.status();
  if (!tmpl.ok())
    return "<parse error>";
  auto out = tmpl->render(context);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : "<render error>";
}

absl::Status parseError(const std::string &source) {
  auto tmpl = ChatTemplate::parse(source);
  return tmpl.ok() ? absl::OkStatus() : tmpl.status();
}

absl::Status renderError(const std::string &source,
                         const json &context = json::object(),
                         const RenderLimits &limits = RenderLimits()) {
  auto tmpl = ChatTemplate::parse(source);
  EXPECT_TRUE(tmpl.ok()) << tmpl.status();
  if (!tmpl.ok())
    return tmpl.status();
  auto out = tmpl->render(context, limits);
  return out.ok() ? absl::OkStatus() : out.status();
}

void expectError(const absl::Status &status, absl::StatusCode code,
                 const std::string &needle) {
  EXPECT_EQ(status.code(), code) << status;
  EXPECT_NE(std::string(status.message()).find(needle), std::string::npos)
      << "'" << status.message() << "' does not contain '" << needle << "'";
}

TEST(ChatTemplateParse, RendersAChatTemplate) {
  json ctx = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}},
              {"add_generation_prompt", true}};
  EXPECT_EQ(render("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}\n"
                   "{% endfor %}{% if add_generation_prompt %}<|assistant|>"
                   "{% endif %}",
                   ctx),
            "<|user|>Hi\n<|assistant|>");
}

TEST(ChatTemplateParse, UnsupportedStatementsNameLineColumnAndConstruct) {
  expectError(parseError("ok\n  {% include 'x.j2' %}"),
              absl::StatusCode::kInvalidArgument,
              "line 2:6: the 'include' statement is not supported");
  for (const char *tag : {"extends", "import", "call", "filter", "with", "do",
                          "block", "autoescape"})
    expectError(parseError(std::string("{% ") + tag + " x %}"),
                absl::StatusCode::kInvalidArgument,
                std::string("'") + tag + "' statement is not supported");
  expectError(parseError("{% frobnicate %}"), absl::StatusCode::kInvalidArgument,
              "line 1:4: unknown tag 'frobnicate'");
}

TEST(ChatTemplateParse, UnknownFiltersTestsMethodsAndFunctionsFailAtLoad) {
  expectError(parseError("{{ x | wordwrap }}"),
              absl::StatusCode::kInvalidArgument,
              "line 1:8: filter 'wordwrap' is not supported");
  expectError(parseError("{{ x | safe }}"), absl::StatusCode::kInvalidArgument,
              "filter 'safe' is not supported");
  expectError(parseError("{% if x is escaped %}{% endif %}"),
              absl::StatusCode::kInvalidArgument, "test 'escaped' is not supported");
  expectError(parseError("{{ x.append(1) }}"), absl::StatusCode::kInvalidArgument,
              "method 'append' is not supported");
  expectError(parseError("{{ lipsum(2) }}"), absl::StatusCode::kInvalidArgument,
              "call of 'lipsum', which is neither a macro");
  expectError(parseError("{{ f(*args) }}"), absl::StatusCode::kInvalidArgument,
              "*args and **kwargs");
  expectError(parseError("{{ x[1, 2] }}"), absl::StatusCode::kInvalidArgument,
              "tuple subscripts are not supported");
  expectError(parseError("{% for x in y recursive %}{% endfor %}"),
              absl::StatusCode::kInvalidArgument, "recursive for loops");
  // A macro defined later in the template may be called.
  EXPECT_TRUE(parseError("{{ m() }}{% macro m() %}x{% endmacro %}").ok());
}

TEST(ChatTemplateParse, SyntaxErrors) {
  expectError(parseError("{{ x "), absl::StatusCode::kInvalidArgument,
              "missing end of variable tag");
  expectError(parseError("{% if x %}"), absl::StatusCode::kInvalidArgument,
              "unexpected end of template, expected 'elif'");
  expectError(parseError("{# never closed"), absl::StatusCode::kInvalidArgument,
              "missing end of comment tag");
  expectError(parseError("{{ 'abc }}"), absl::StatusCode::kInvalidArgument,
              "unterminated string literal");
  expectError(parseError("{{ (1 }}"), absl::StatusCode::kInvalidArgument,
              "line 1:7: unexpected '}', expected ')'");
  expectError(parseError("{{ 1 ]}}"), absl::StatusCode::kInvalidArgument,
              "line 1:6: unexpected ']'");
  expectError(parseError("{% break %}"), absl::StatusCode::kInvalidArgument,
              "'break' outside of a loop");
  expectError(parseError("{{ a ? b }}"), absl::StatusCode::kInvalidArgument,
              "unexpected character '?'");
  expectError(parseError("{% endfor %}"), absl::StatusCode::kInvalidArgument,
              "unknown tag 'endfor'");
  expectError(parseError("{{ 99999999999999999999 }}"),
              absl::StatusCode::kInvalidArgument, "exceeds 64 bits");
}

TEST(ChatTemplateRender, RaiseExceptionIsTheTemplatesMessageVerbatim) {
  absl::Status s = renderError(
      "{% if messages[0].role != 'user' %}{{ raise_exception('Roles must "
      "alternate user/assistant') }}{% endif %}",
      {{"messages", {{{"role", "assistant"}}}}});
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "Roles must alternate user/assistant");
}

TEST(ChatTemplateRender, ErrorsNameTheLocation) {
  expectError(renderError("\n  {{ m.a.b }}", {{"m", json::object()}}),
              absl::StatusCode::kInvalidArgument,
              "chat template: line 2:9: 'dict object' has no attribute 'a'");
  expectError(renderError("{{ 'a' + 1 }}"), absl::StatusCode::kInvalidArgument,
              "can only concatenate str");
  expectError(renderError("{{ 2 ** 64 }}"), absl::StatusCode::kInvalidArgument,
              "integer overflow");
  expectError(renderError("{{ 'É' | lower }}"), absl::StatusCode::kInvalidArgument,
              "case mapping of the non-ASCII letter U+00C9 is not supported");
  expectError(renderError("{{ '%s' % 1 }}"), absl::StatusCode::kInvalidArgument,
              "printf-style");
}

TEST(ChatTemplateRender, ContextMustBeAnObject) {
  auto tmpl = ChatTemplate::parse("x");
  ASSERT_TRUE(tmpl.ok());
  EXPECT_FALSE(tmpl->render(json::array()).ok());
  EXPECT_EQ(*tmpl->render(nlohmann::json::object()), "x");
}

TEST(ChatTemplateRender, KeyOrderFollowsTheJsonType) {
  auto tmpl = ChatTemplate::parse("{{ tools | tojson }}");
  ASSERT_TRUE(tmpl.ok());
  json ordered = json::parse(R"({"tools": {"z": 1, "a": 2}})");
  nlohmann::json sorted = nlohmann::json::parse(R"({"tools": {"z": 1, "a": 2}})");
  EXPECT_EQ(*tmpl->render(ordered), R"({"z": 1, "a": 2})");
  EXPECT_EQ(*tmpl->render(sorted), R"({"a": 2, "z": 1})");
}

TEST(ChatTemplateRender, IsReentrantAndShared) {
  auto tmpl = ChatTemplate::parse("{% set n = namespace(c=0) %}{% for x in xs %}"
                                  "{% set n.c = n.c + x %}{% endfor %}{{ n.c }}");
  ASSERT_TRUE(tmpl.ok());
  ChatTemplate copy = *tmpl;
  EXPECT_EQ(*tmpl->render(json{{"xs", {1, 2, 3}}}), "6");
  EXPECT_EQ(*copy.render(json{{"xs", {4}}}), "4");
  EXPECT_EQ(*tmpl->render(json{{"xs", {1, 2, 3}}}), "6");
}

// Hostile templates: bounded depth, output, iterations, recursion.

TEST(ChatTemplateLimits, DeepExpressionNestingIsAParseError) {
  std::string deep = "{{ " + std::string(5000, '(') + "1" +
                     std::string(5000, ')') + " }}";
  expectError(parseError(deep), absl::StatusCode::kInvalidArgument,
              "deeper than");
  std::string chain = "{{ 1";
  for (int k = 0; k < 20000; ++k)
    chain += " + 1";
  expectError(parseError(chain + " }}"), absl::StatusCode::kInvalidArgument,
              "nested deeper than");
  std::string filters = "{{ x";
  for (int k = 0; k < 20000; ++k)
    filters += "|trim";
  expectError(parseError(filters + " }}"), absl::StatusCode::kInvalidArgument,
              "nested deeper than");
  std::string nots = "{{ " ;
  for (int k = 0; k < 20000; ++k)
    nots += "not ";
  expectError(parseError(nots + "x }}"), absl::StatusCode::kInvalidArgument,
              "deeper than");
}

TEST(ChatTemplateLimits, DeepBlockNestingIsAParseError) {
  std::string deep;
  for (int k = 0; k < 5000; ++k)
    deep += "{% if true %}";
  for (int k = 0; k < 5000; ++k)
    deep += "{% endif %}";
  expectError(parseError(deep), absl::StatusCode::kInvalidArgument,
              "nested deeper than");
  // 100 levels are fine.
  std::string ok;
  for (int k = 0; k < 100; ++k)
    ok += "{% if true %}";
  ok += "x";
  for (int k = 0; k < 100; ++k)
    ok += "{% endif %}";
  EXPECT_EQ(render(ok), "x");
}

TEST(ChatTemplateLimits, OutputSizeIsBounded) {
  RenderLimits limits;
  limits.maxOutputBytes = 1000;
  expectError(renderError("{% for i in range(2000) %}x{% endfor %}",
                          json::object(), limits),
              absl::StatusCode::kResourceExhausted, "size limit of 1000 bytes");
  expectError(renderError("{{ 'abc' * 100000000000 }}"),
              absl::StatusCode::kResourceExhausted, "size limit");
  expectError(renderError("{% set ns = namespace(s='ab') %}{% for i in "
                          "range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}"),
              absl::StatusCode::kResourceExhausted, "size limit");
}

TEST(ChatTemplateLimits, LoopIterationsAreBounded) {
  expectError(renderError("{% for a in range(100000) %}{% for b in "
                          "range(100000) %}{% endfor %}{% endfor %}"),
              absl::StatusCode::kResourceExhausted, "loop iterations");
  expectError(renderError("{{ range(1000000) | list }}"),
              absl::StatusCode::kInvalidArgument, "Range too big");
}

TEST(ChatTemplateLimits, MacroRecursionIsBounded) {
  expectError(renderError("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}"),
              absl::StatusCode::kResourceExhausted, "macro call depth of 64");
}

TEST(ChatTemplateLimits, ValueNestingIsBounded) {
  expectError(renderError("{% set ns = namespace(x=[]) %}{% for i in range(1000) %}"
                          "{% set ns.x = [ns.x] %}{% endfor %}"),
              absl::StatusCode::kResourceExhausted, "nesting limit");
  expectError(renderError("{% set ns = namespace() %}{% set ns.me = ns %}"),
              absl::StatusCode::kInvalidArgument,
              "storing a namespace inside a namespace");
  json deep = json::array();
  for (int k = 0; k < 1000; ++k)
    deep = json::array({deep});
  expectError(renderError("x", {{"deep", deep}}),
              absl::StatusCode::kInvalidArgument, "nested deeper than");
}

// Loader.

class LoaderTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = std::filesystem::path(::testing::TempDir()) /
          ("chat-loader-" + std::string(::testing::UnitTest::GetInstance()
                                            ->current_test_info()
                                            ->name()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  void write(const std::string &name, const std::string &text) {
    std::ofstream(dir / name, std::ios::binary) << text;
  }
  std::filesystem::path dir;
};

TEST_F(LoaderTest, StringTemplateAndAddedTokenObjects) {
  write("tokenizer_config.json",
        R"({"chat_template": "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}",
            "bos_token": {"content": "<s>", "lstrip": false},
            "eos_token": "</s>"})");
  auto info = loadChatTemplate(dir.string());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->bosToken, "<s>");
  EXPECT_EQ(info->eosToken, "</s>");
  json ctx = {{"messages", {{{"content", "hi"}}}},
              {"bos_token", info->bosToken},
              {"eos_token", info->eosToken}};
  EXPECT_EQ(*info->tmpl.render(ctx), "<s>hi</s>");
}

TEST_F(LoaderTest, ListFormUsesDefault) {
  write("tokenizer_config.json",
        R"({"chat_template": [{"name": "tool_use", "template": "T"},
                              {"name": "default", "template": "D"}]})");
  auto info = loadChatTemplate(dir.string());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->tmpl.source(), "D");
  EXPECT_EQ(info->bosToken, "");
  write("tokenizer_config.json",
        R"({"chat_template": [{"name": "tool_use", "template": "T"}]})");
  expectError(loadChatTemplate(dir.string()).status(),
              absl::StatusCode::kInvalidArgument, "without a \"default\"");
}

TEST_F(LoaderTest, SeparateTemplateFilesTakePrecedence) {
  write("tokenizer_config.json", R"({"chat_template": "config", "eos_token": "E"})");
  write("chat_template.json", R"({"chat_template": "json"})");
  auto info = loadChatTemplate(dir.string());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->tmpl.source(), "json");
  write("chat_template.jinja", "jinja\n");
  info = loadChatTemplate(dir.string());
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->tmpl.source(), "jinja\n");
  EXPECT_EQ(*info->tmpl.render(json::object()), "jinja");
  EXPECT_EQ(info->eosToken, "E");
}

TEST_F(LoaderTest, Errors) {
  expectError(loadChatTemplate(dir.string()).status(), absl::StatusCode::kNotFound,
              "no chat template");
  write("tokenizer_config.json", R"({"bos_token": "<s>"})");
  expectError(loadChatTemplate(dir.string()).status(), absl::StatusCode::kNotFound,
              "no chat template");
  write("tokenizer_config.json", "{not json");
  expectError(loadChatTemplate(dir.string()).status(),
              absl::StatusCode::kInvalidArgument, "not valid JSON");
  write("tokenizer_config.json", R"({"chat_template": "{% include 'x' %}"})");
  expectError(loadChatTemplate(dir.string()).status(),
              absl::StatusCode::kInvalidArgument,
              "tokenizer_config.json (chat_template): chat template: line 1:4: "
              "the 'include' statement is not supported");
  write("tokenizer_config.json", R"({"chat_template": 5})");
  expectError(loadChatTemplate(dir.string()).status(),
              absl::StatusCode::kInvalidArgument, "must be a string or a list");
  write("tokenizer_config.json", R"({"chat_template": "x", "eos_token": 3})");
  expectError(loadChatTemplate(dir.string()).status(),
              absl::StatusCode::kInvalidArgument, "eos_token must be a string");
  expectError(loadChatTemplate((dir / "missing").string()).status(),
              absl::StatusCode::kNotFound, "not a directory");
}

TEST(ChatTemplateData, StoriesChatCopyRendersZephyr) {
  auto info = loadChatTemplate(QEFF_TEST_DATA_DIR "/chat-templates/stories260K-chat");
  ASSERT_TRUE(info.ok()) << info.status();
  json messages = {{{"role", "user"}, {"content", "Hi"}}};
  json ctx = qeff::chat::makeChatContext(*info, messages, true);
  EXPECT_TRUE(ctx["tools"].is_null());
  EXPECT_EQ(*info->tmpl.render(ctx), "<|user|>\nHi</s>\n<|assistant|>\n");
}

TEST(ChatTemplateData, EveryBundledTemplateLoads) {
  std::filesystem::path root = QEFF_TEST_DATA_DIR "/chat-templates";
  int count = 0;
  for (const auto &entry : std::filesystem::directory_iterator(root)) {
    if (!entry.is_directory())
      continue;
    auto info = loadChatTemplate(entry.path().string());
    EXPECT_TRUE(info.ok()) << entry.path() << ": " << info.status();
    ++count;
  }
  EXPECT_GE(count, 6);
}

} // namespace
