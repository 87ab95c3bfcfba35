#!/usr/bin/env python3
"""`qeff serve model.gguf` chats with the file's own tokenizer and template.

stories260K.gguf gets a `tokenizer.chat_template` (test/tools/
gguf-set-chat-template.py: "{{ bos_token }}" + the user message); `qeff serve`
on the .gguf file compiles it through a fresh cache and serves it. A chat
completion for "Once upon a time" must be rendered by that template (BOS + 4
tokens: usage.prompt_tokens 5) and continue greedily as llama2.c's published
output for the same prompt does.

  gguf-serve-chat.py QEFF GGUF SET_TEMPLATE_SCRIPT EXPECTED_TXT WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request


def main(qeff, gguf, set_template, expected_txt, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    model = os.path.join(work, "stories-chat.gguf")
    subprocess.run([sys.executable, set_template, gguf, model,
                    "{{ bos_token }}{{ messages[0]['content'] }}"], check=True)
    env = dict(os.environ, QEFF_CACHE_DIR=os.path.join(work, "cache"))
    server = subprocess.Popen([qeff, "serve", model, "--port", "0", "--ctx-len", "128"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        port, deadline = None, time.time() + 120
        while port is None and time.time() < deadline:
            line = server.stdout.readline()
            if not line:
                break
            if "listening on http://" in line:
                port = int(line.split("listening on http://")[1].split(":")[1].split()[0].rstrip("/"))
        if port is None:
            print("the server did not start:", server.stderr.read()[-2000:])
            print("0 passed, 1 failed")
            return 1
        body = json.dumps({"messages": [{"role": "user", "content": "Once upon a time"}],
                           "max_tokens": 20, "temperature": 0}).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body,
                                         {"Content-Type": "application/json"})
        reply = json.load(urllib.request.urlopen(request, timeout=60))
    finally:
        server.terminate()
        server.wait(timeout=30)
    content = reply["choices"][0]["message"]["content"]
    expected = open(expected_txt).read()[len("Once upon a time"):]
    checks = [("prompt rendered by the GGUF's template (BOS + 4 tokens)",
               reply["usage"]["prompt_tokens"] == 5),
              ("20 tokens generated", reply["usage"]["completion_tokens"] == 20),
              ("greedy continuation = llama2.c's", content and expected.startswith(content))]
    for what, ok in checks:
        print(("ok   " if ok else "FAIL ") + what)
    print("reply:", json.dumps(content))
    failed = sum(1 for _, ok in checks if not ok)
    print(f"{len(checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
