#!/usr/bin/python3
"""Renders one checkpoint's chat template with every conversation of a
conversations file, by qeff (the qeff-chat-template tool) and by Python's
jinja2 configured exactly as Hugging Face transformers' apply_chat_template
(transformers.utils.chat_template_utils: ImmutableSandboxedEnvironment with
trim_blocks, lstrip_blocks, the loopcontrols extension and the generation
tag, the raise_exception and strftime_now globals, the json.dumps tojson
filter), and checks that the prompts are byte-identical. Where jinja2 raises,
qeff must fail too; for raise_exception with the same message.

The context is the one apply_chat_template builds: messages, tools (None when
absent), documents=None, add_generation_prompt, the special tokens of
tokenizer_config.json, then any extra variables of the conversation.

usage: compare.py <qeff-chat-template> <checkpoint_dir> <conversations.json>
       compare.py --semantics <qeff-chat-template> <semantics.json>

The second form renders each small template of semantics.json (one construct
each, with its own context) the same two ways.
"""

import json
import os
import subprocess
import sys
import tempfile
from datetime import datetime

import jinja2
import jinja2.ext
from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

MIN_IDENTICAL_PROMPTS = 4


class RaisedByTemplate(jinja2.exceptions.TemplateError):
    pass


class AssistantTracker(jinja2.ext.Extension):
    """transformers' {% generation %} tag, rendering its body unchanged."""

    tags = {"generation"}

    def parse(self, parser):
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(["name:endgeneration"], drop_needle=True)
        return nodes.CallBlock(
            self.call_method("_render", []), [], [], body
        ).set_lineno(lineno)

    def _render(self, caller):
        return caller()


def make_environment():
    def raise_exception(message):
        raise RaisedByTemplate(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None,
               sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def strftime_now(format):
        return datetime.now().strftime(format)

    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True,
        extensions=[AssistantTracker, jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def load_template(checkpoint):
    with open(os.path.join(checkpoint, "tokenizer_config.json"),
              encoding="utf-8") as f:
        config = json.load(f)
    template = config["chat_template"]
    if isinstance(template, list):
        template = {t["name"]: t["template"] for t in template}["default"]

    def token(key):
        value = config.get(key)
        if isinstance(value, dict):
            value = value["content"]
        return value if value is not None else ""

    return template, token("bos_token"), token("eos_token")


def render_jinja(template, context):
    """(prompt, None) or (None, (kind, message))."""
    try:
        return template.render(**context), None
    except RaisedByTemplate as e:
        return None, ("raise", str(e))
    except Exception as e:  # any other jinja2 / Python error
        return None, ("error", f"{type(e).__name__}: {e}")


def run_tool(tool, checkpoint, context):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False,
                                     encoding="utf-8") as f:
        json.dump(context, f, ensure_ascii=False)
        context_path = f.name
    try:
        return subprocess.run([tool, checkpoint, context_path],
                              capture_output=True, timeout=60)
    finally:
        os.unlink(context_path)


class Tally:
    def __init__(self):
        self.failures, self.identical, self.identical_errors = [], 0, 0

    def check(self, label, expected, expected_error, proc):
        stderr = proc.stderr.decode("utf-8", "replace").strip()
        if expected_error is None:
            want = expected.encode("utf-8")
            if proc.returncode != 0:
                self.failures.append(f"{label}: jinja2 renders {want!r}, qeff "
                                     f"fails: {stderr}")
            elif proc.stdout != want:
                self.failures.append(f"{label}: prompts differ\n  jinja2: "
                                     f"{want!r}\n  qeff:   {proc.stdout!r}")
            else:
                self.identical += 1
                print(f"ok    {label}: {len(want)} bytes identical")
            return
        kind, message = expected_error
        if proc.returncode == 0:
            self.failures.append(f"{label}: jinja2 raises ({message}), qeff "
                                 f"renders {proc.stdout!r}")
        elif kind == "raise" and (proc.returncode != 2 or
                                  stderr != f"error: {message}"):
            self.failures.append(f"{label}: raise_exception({message!r}) in "
                                 f"jinja2, qeff: exit {proc.returncode}, {stderr}")
        elif kind != "raise" and proc.returncode != 1:
            self.failures.append(f"{label}: jinja2 fails ({message}), qeff: "
                                 f"exit {proc.returncode}, {stderr}")
        else:
            self.identical_errors += 1
            print(f"ok    {label}: both fail ({kind}: {message} | qeff: "
                  f"{stderr})")

    def report(self, name, total, min_prompts):
        for failure in self.failures:
            print("FAIL  " + failure)
        print(f"{name}: {self.identical} identical prompts, "
              f"{self.identical_errors} identical errors, "
              f"{len(self.failures)} failures of {total} cases")
        if self.identical < min_prompts:
            print(f"FAIL  {name}: fewer than {min_prompts} cases rendered")
            return 1
        return 1 if self.failures else 0


def compare_checkpoint(tool, checkpoint, conversations_path):
    name = os.path.basename(os.path.normpath(checkpoint))
    template_source, bos, eos = load_template(checkpoint)
    template = make_environment().from_string(template_source)
    with open(conversations_path, encoding="utf-8") as f:
        conversations = json.load(f)
    tally = Tally()
    for conv in conversations:
        context = {
            "messages": conv["messages"],
            "tools": conv.get("tools"),
            "documents": None,
            "add_generation_prompt": conv.get("add_generation_prompt", False),
            "bos_token": bos,
            "eos_token": eos,
        }
        context.update(conv.get("extra", {}))
        expected, expected_error = render_jinja(template, context)
        tally.check(f"{name} x {conv['name']}", expected, expected_error,
                    run_tool(tool, checkpoint, context))
    return tally.report(name, len(conversations), MIN_IDENTICAL_PROMPTS)


def compare_semantics(tool, cases_path):
    """Small templates (one construct each) from a cases file, each written
    to a temporary checkpoint as chat_template.jinja."""
    with open(cases_path, encoding="utf-8") as f:
        cases = json.load(f)
    env = make_environment()
    tally = Tally()
    with tempfile.TemporaryDirectory() as tmp:
        for index, case in enumerate(cases):
            with open(os.path.join(tmp, "chat_template.jinja"), "w",
                      encoding="utf-8", newline="") as f:
                f.write(case["t"])
            context = {"bos_token": "", "eos_token": ""}
            context.update(case.get("c", {}))
            try:
                template = env.from_string(case["t"])
            except Exception as e:
                print(f"FAIL  case {index}: jinja2 cannot parse it: {e}")
                return 1
            expected, expected_error = render_jinja(template, context)
            tally.check(f"case {index} {case['t'][:40]!r}", expected,
                        expected_error, run_tool(tool, tmp, context))
    return tally.report("semantics", len(cases), len(cases) // 2)


def main():
    if sys.argv[1] == "--semantics":
        return compare_semantics(sys.argv[2], sys.argv[3])
    return compare_checkpoint(*sys.argv[1:4])


if __name__ == "__main__":
    sys.exit(main())
