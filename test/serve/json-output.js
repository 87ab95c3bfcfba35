// JSON output (response_format) through the official OpenAI client: a JSON
// schema's output parses and validates against the schema (ajv, an
// independent validator) for 100 seeds, with the properties in the schema's
// order; streams equal whole responses; JSON mode gives an object; guided_json
// (vLLM's spelling) works the same; unsupported schemas and malformed
// response_format objects are refused with 400 naming the field.
"use strict";
const path = require("path");
const L = require("./lib");
const { assert } = L;
const Ajv = require(path.join(__dirname, "../oracle/node_modules/ajv")).default;

const t = L.args();
const artifacts = L.compile(t, "cb4-512", ["--ctx-len", "512", "--full-batch-size", "4"]);
let server, ai;

// Every string and array bounded, so each output closes well within
// max_tokens whatever the model samples.
const schema = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 10 },
    age: { type: "integer", minimum: 0, maximum: 120 },
    mood: { enum: ["happy", "sad", "sleepy"] },
    tags: { type: "array", items: { type: "string", maxLength: 5 }, maxItems: 3 },
    pet: {
      anyOf: [
        { type: "null" },
        {
          type: "object",
          properties: { kind: { enum: ["cat", "dog"] }, legs: { type: "integer", minimum: 0, maximum: 8 } },
          required: ["kind", "legs"],
          additionalProperties: false,
        },
      ],
    },
    happy: { type: "boolean" },
  },
  required: ["name", "age", "mood"],
  additionalProperties: false,
};
const validate = new Ajv({ strict: false }).compile(schema);
const format = { type: "json_schema", json_schema: { name: "person", schema, strict: true } };

function checkJson(text, what) {
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new Error(`${what}: not JSON (${e.message}): ${JSON.stringify(text)}`);
  }
  assert.ok(validate(value), `${what}: ${JSON.stringify(validate.errors)} in ${text}`);
  // Properties come in the schema's order.
  const order = Object.keys(schema.properties);
  const keys = Object.keys(value);
  assert.deepStrictEqual(keys, order.filter((k) => keys.includes(k)), `${what}: key order of ${text}`);
  return value;
}

async function refused(body, param, message) {
  const res = await L.http(server, "/v1/completions", {
    method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt: "x", ...body }),
  });
  const text = await res.text();
  assert.strictEqual(res.status, 400, text);
  const err = JSON.parse(text).error;
  assert.strictEqual(err.param, param, text);
  assert.match(err.message, message);
}

L.run([
  ["start", async () => {
    server = await L.startServer(t, artifacts, ["--model-name", "stories"]);
    ai = L.client(server);
  }],
  ["a JSON schema's output validates for 100 seeds (n = 100)", async () => {
    const r = await ai.completions.create({
      model: "stories", prompt: "Once upon a time", max_tokens: 480, temperature: 1, seed: 7, n: 100,
      response_format: format,
    });
    assert.strictEqual(r.choices.length, 100);
    const distinct = new Set();
    for (const c of r.choices) {
      assert.strictEqual(c.finish_reason, "stop", `choice ${c.index} did not close: ${c.text}`);
      checkJson(c.text, `choice ${c.index}`);
      distinct.add(c.text);
    }
    assert.ok(distinct.size > 50, `only ${distinct.size} distinct outputs of 100`);
  }],
  ["greedy and streamed: the same JSON", async () => {
    const body = { model: "stories", prompt: "Lily is", max_tokens: 480, temperature: 0, response_format: format };
    const whole = await ai.completions.create(body);
    checkJson(whole.choices[0].text, "greedy");
    let text = "";
    for await (const chunk of await ai.completions.create({ ...body, stream: true }))
      text += chunk.choices[0] ? chunk.choices[0].text : "";
    assert.strictEqual(text, whole.choices[0].text);
  }],
  ["guided_json (vLLM's extension) constrains the same way", async () => {
    const res = await L.http(server, "/v1/completions", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ prompt: "Once", max_tokens: 480, temperature: 0.7, seed: 3, guided_json: schema }),
    });
    const r = await res.json();
    assert.strictEqual(res.status, 200, JSON.stringify(r));
    checkJson(r.choices[0].text, "guided_json");
  }],
  ["JSON mode gives an object (when it closes)", async () => {
    const r = await ai.completions.create({
      model: "stories", prompt: "Once", max_tokens: 64, temperature: 0.8, seed: 1, n: 8,
      response_format: { type: "json_object" },
    });
    for (const c of r.choices) {
      assert.ok(c.text.startsWith("{"), c.text);
      if (c.finish_reason === "stop") {
        const v = JSON.parse(c.text);
        assert.ok(v !== null && typeof v === "object" && !Array.isArray(v), c.text);
      }
    }
  }],
  ["unsupported schemas and malformed response_format objects: 400 naming the field", async () => {
    await refused({ response_format: { type: "json_schema", json_schema: { name: "p", schema: { type: "string", pattern: "^a+$" } } } },
      "response_format", /response_format\.json_schema\.schema\.pattern: .*not supported/);
    await refused({ response_format: { type: "json_schema", json_schema: { schema: { type: "string" } } } },
      "response_format.json_schema.name", /name: is required/);
    await refused({ response_format: { type: "xml" } }, "response_format.type", /must be "text", "json_object" or "json_schema"/);
    await refused({ response_format: { type: "json_schema", json_schema: { name: "p", schema: { type: "object", properties: { a: { type: "string", format: "email" } } } } } },
      "response_format", /properties\.a\.format/);
    await refused({ response_format: format, guided_json: schema }, "guided_json", /not both/);
  }],
]);
