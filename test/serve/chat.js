// /v1/chat/completions renders the model's own chat template: on a copy of
// the bundled model whose tokenizer_config.json carries a real chat
// template, the prompt the server generates from is exactly Python jinja2's
// rendering (as transformers' apply_chat_template renders it), and the
// output equals `qeff infer` on that prompt's tokens, whole and streamed.
// A model without a template answers chat requests with 501 naming why.
"use strict";
const L = require("./lib");
const { assert } = L;
const fs = require("fs");
const path = require("path");
const { execFileSync } = require("child_process");

const t = L.args();
const artifacts = L.compile(t, "cb2", ["--ctx-len", "256", "--full-batch-size", "2"]);
// The test copy: the artifacts with the bundled model's tokenizer config
// plus a real chat template (Zephyr's; test/data/chat-templates/SOURCE.md).
const chatConfig = path.join(__dirname, "../data/chat-templates/stories260K-chat/tokenizer_config.json");
const TEMPLATE = JSON.parse(fs.readFileSync(chatConfig, "utf8")).chat_template;
const chatDir = path.join(t.workDir, "chat-model");
fs.cpSync(artifacts, chatDir, { recursive: true });
fs.copyFileSync(chatConfig, path.join(chatDir, "tokenizer_config.json"));

/// jinja2's rendering, with transformers' environment (trim_blocks,
/// lstrip_blocks, the sandbox).
function jinja2(messages, addGenerationPrompt) {
  const script = `
import json, sys, jinja2.sandbox
spec = json.load(sys.stdin)
env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
sys.stdout.write(env.from_string(spec["template"]).render(
    messages=spec["messages"], add_generation_prompt=spec["add"],
    bos_token="<s>", eos_token="</s>"))`;
  return execFileSync("python3", ["-c", script], {
    input: JSON.stringify({ template: TEMPLATE, messages, add: addGenerationPrompt }), encoding: "utf8",
  });
}

const conversations = [
  [{ role: "user", content: "Tell me a story about a cat." }],
  [{ role: "system", content: "You tell short stories." },
   { role: "user", content: "Once upon a time" }],
  [{ role: "user", content: "Hi" }, { role: "assistant", content: "Hello! What story?" },
   { role: "user", content: [{ type: "text", text: "A dog" }, { type: "text", text: "and a ball." }] }],
];

let server, plain, ai;
L.run([
  ["start", async () => {
    server = await L.startServer(t, chatDir, ["--model-name", "chat"]);
    ai = L.client(server);
  }],
  ["the prompt is jinja2's rendering; the output equals qeff infer on it", async () => {
    for (const messages of conversations) {
      const flat = messages.map((m) => ({
        ...m, content: Array.isArray(m.content) ? m.content.map((p) => p.text).join("\n") : m.content,
      }));
      const rendered = jinja2(flat, true);
      // The rendered text's tokens, as /v1/completions encodes it (with the
      // BOS the tokenizer adds, which chat does not add: the template would).
      const viaText = await ai.completions.create({
        model: "chat", prompt: rendered, max_tokens: 1, temperature: 0, return_token_ids: true,
      });
      const expectedIds = viaText.choices[0].prompt_token_ids.slice(1);
      assert.strictEqual(viaText.choices[0].prompt_token_ids[0], 1, "BOS first");
      const r = await ai.chat.completions.create({
        model: "chat", messages, max_tokens: 24, temperature: 0, return_token_ids: true,
      });
      const c = r.choices[0];
      assert.deepStrictEqual(c.prompt_token_ids, expectedIds, `prompt of ${JSON.stringify(messages)}`);
      assert.strictEqual(r.usage.prompt_tokens, expectedIds.length);
      const ref = JSON.parse(execFileSync(t.qeff, [
        "infer", chatDir, "--token-ids", expectedIds.join(","), "--max-new-tokens", "24",
        "--temperature", "0", "--json"], { encoding: "utf8" })).rows[0];
      assert.deepStrictEqual(c.token_ids, ref.generated_ids);
      assert.strictEqual(c.message.content, ref.text);
      assert.strictEqual(c.message.role, "assistant");
      assert.strictEqual(r.object, "chat.completion");

      const stream = await ai.chat.completions.create({
        model: "chat", messages, max_tokens: 24, temperature: 0, stream: true,
      });
      let text = "", role = null, reason = null;
      for await (const chunk of stream) {
        const d = chunk.choices[0].delta;
        if (d.role) role = d.role;
        text += d.content || "";
        reason = chunk.choices[0].finish_reason || reason;
      }
      assert.strictEqual(role, "assistant");
      assert.strictEqual(text, ref.text);
      assert.strictEqual(reason, ref.finish_reason === "max_new_tokens" ? "length" : "stop");
    }
  }],
  ["add_generation_prompt false renders without the assistant header", async () => {
    const messages = conversations[0];
    const rendered = jinja2(messages, false);
    const viaText = await ai.completions.create({
      model: "chat", prompt: rendered, max_tokens: 1, temperature: 0, return_token_ids: true,
    });
    const r = await ai.chat.completions.create({
      model: "chat", messages, max_tokens: 4, temperature: 0, return_token_ids: true,
      add_generation_prompt: false,
    });
    assert.deepStrictEqual(r.choices[0].prompt_token_ids, viaText.choices[0].prompt_token_ids.slice(1));
  }],
  ["a template's raise_exception is a 400 naming messages", async () => {
    // Llama 2's template refuses roles that do not alternate.
    const llamaDir = path.join(t.workDir, "llama2-chat-model");
    fs.cpSync(artifacts, llamaDir, { recursive: true });
    const cfg = JSON.parse(fs.readFileSync(path.join(llamaDir, "tokenizer_config.json"), "utf8"));
    cfg.chat_template = JSON.parse(fs.readFileSync(
      path.join(__dirname, "../data/chat-templates/llama-2-chat/tokenizer_config.json"), "utf8")).chat_template;
    fs.writeFileSync(path.join(llamaDir, "tokenizer_config.json"), JSON.stringify(cfg));
    const llama = await L.startServer(t, llamaDir, ["--model-name", "llama"]);
    const res = await L.http(llama, "/v1/chat/completions", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "a" }, { role: "user", content: "b" }] }),
    });
    const err = (await res.json()).error;
    assert.strictEqual(res.status, 400);
    assert.strictEqual(err.param, "messages");
    assert.match(err.message, /^messages: the chat template failed: Conversation roles must alternate user\/assistant/);
    const ok = await L.client(llama).chat.completions.create({
      model: "llama", messages: [{ role: "user", content: "a" }], max_tokens: 3, temperature: 0,
    });
    assert.strictEqual(ok.usage.completion_tokens, 3);
    await L.stopServer(llama);
  }],
  ["a model without a chat template answers 501 naming why", async () => {
    plain = await L.startServer(t, artifacts, ["--model-name", "plain"]);
    const res = await L.http(plain, "/v1/chat/completions", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "hi" }] }),
    });
    assert.strictEqual(res.status, 501);
    assert.match((await res.json()).error.message, /Chat completions are not available for model 'plain': .*no chat template/);
  }],
]);
