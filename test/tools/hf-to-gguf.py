#!/usr/bin/python3
"""Writes an F32 GGUF file from a tiny Hugging Face golden (test/data/golden).

  hf-to-gguf.py GOLDEN_DIR OUT.gguf

Follows llama.cpp's convert_hf_to_gguf.py (ggml-org/llama.cpp@150f157acf0f)
for the architectures frontend/GGUF imports: the metadata keys of each
architecture, the tensor names, and the conversions llama.cpp applies (the
llama Q/K row permutation, GPT-2's Conv1D weights transposed, Gemma's norms
stored as 1 + w, Falcon's fused QKV reordered to [Q | K | V], StableLM's
per-head norms stacked, GPT-2's embedding written again as output.weight).
No vocabulary (`tokenizer.ggml.model` "no_vocab", `<arch>.vocab_size`): the
goldens prompt with ids. (node-llama-cpp 3.21.1 cannot load a vocabulary-less
file, so these files are checked against the goldens only, not against
llama.cpp.)
For tests of the GGUF import of every architecture against the goldens.
Needs numpy.
"""
import json
import os
import struct
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    kinds = {"F32": np.float32, "F16": np.float16}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + b:8 + n + end],
                                  dtype=kinds[e["dtype"]]).reshape(e["shape"]).astype(np.float32)
    return out


def permute(w, heads):  # convert_hf_to_gguf LlamaModel.permute
    return (w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:])
            .swapaxes(1, 2).reshape(w.shape))


def convert(golden):
    c = json.load(open(os.path.join(golden, "config.json")))
    w = read_safetensors(os.path.join(golden, "model.safetensors"))
    arch = {"LlamaForCausalLM": "llama", "MistralForCausalLM": "llama",
            "Qwen2ForCausalLM": "qwen2", "Qwen3ForCausalLM": "qwen3",
            "GemmaForCausalLM": "gemma",
            "Gemma2ForCausalLM": "gemma2", "Phi3ForCausalLM": "phi3",
            "GPT2LMHeadModel": "gpt2", "FalconForCausalLM": "falcon",
            "Starcoder2ForCausalLM": "starcoder2",
            "StableLmForCausalLM": "stablelm"}[c["architectures"][0]]
    hidden = c.get("hidden_size", c.get("n_embd"))
    heads = c.get("num_attention_heads", c.get("n_head"))
    layers = c.get("num_hidden_layers", c.get("n_layer"))
    kv = c.get("num_key_value_heads", heads)
    if arch == "falcon":
        kv = c["num_kv_heads"] if c["new_decoder_architecture"] else (1 if c["multi_query"] else heads)
    head_dim = c.get("head_dim") or hidden // heads
    kvs = [("general.architecture", "str", arch),
           (f"{arch}.block_count", "u32", layers),
           (f"{arch}.context_length", "u32", c.get("max_position_embeddings", c.get("n_positions"))),
           (f"{arch}.embedding_length", "u32", hidden),
           (f"{arch}.feed_forward_length", "u32",
            c.get("intermediate_size") or c.get("n_inner") or c.get("ffn_hidden_size") or 4 * hidden),
           (f"{arch}.attention.head_count", "u32", heads),
           (f"{arch}.attention.head_count_kv", "u32", kv),
           (f"{arch}.rope.freq_base", "f32", c.get("rope_theta", 10000.0)),
           (f"{arch}.vocab_size", "u32", c["vocab_size"])]
    # No vocabulary (llama.cpp's "no_vocab"): the goldens prompt with ids.
    kvs.append(("tokenizer.ggml.model", "str", "no_vocab"))
    rot = int(head_dim * c.get("partial_rotary_factor", 1.0))
    kvs.append((f"{arch}.rope.dimension_count", "u32", rot))
    if c.get("head_dim"):
        kvs += [(f"{arch}.attention.key_length", "u32", head_dim),
                (f"{arch}.attention.value_length", "u32", head_dim)]
    if "rms_norm_eps" in c:
        kvs.append((f"{arch}.attention.layer_norm_rms_epsilon", "f32", c["rms_norm_eps"]))
    for key in ("layer_norm_epsilon", "layer_norm_eps", "norm_epsilon"):
        if key in c:
            kvs.append((f"{arch}.attention.layer_norm_epsilon", "f32", c[key]))
    if arch == "gemma2":
        kvs += [(f"{arch}.attn_logit_softcapping", "f32", c["attn_logit_softcapping"]),
                (f"{arch}.final_logit_softcapping", "f32", c["final_logit_softcapping"]),
                (f"{arch}.attention.sliding_window", "u32", c["sliding_window"])]
    if arch in ("starcoder2", "phi3") and c.get("sliding_window"):
        kvs.append((f"{arch}.attention.sliding_window", "u32", c["sliding_window"]))

    t = {}
    L = "model.layers.{}."
    if arch == "gpt2":
        t["token_embd.weight"] = w["transformer.wte.weight"]
        t["position_embd.weight"] = w["transformer.wpe.weight"]
        t["output_norm.weight"] = w["transformer.ln_f.weight"]
        t["output_norm.bias"] = w["transformer.ln_f.bias"]
        t["output.weight"] = w["transformer.wte.weight"]
        names = {"ln_1": "attn_norm", "attn.c_attn": "attn_qkv", "attn.c_proj": "attn_output",
                 "ln_2": "ffn_norm", "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down"}
        for i in range(layers):
            for hf, gg in names.items():
                for kind in ("weight", "bias"):
                    x = w[f"transformer.h.{i}.{hf}.{kind}"]
                    t[f"blk.{i}.{gg}.{kind}"] = x.T if kind == "weight" and x.ndim == 2 else x
    elif arch == "falcon":
        t["token_embd.weight"] = w["transformer.word_embeddings.weight"]
        t["output_norm.weight"] = w["transformer.ln_f.weight"]
        t["output_norm.bias"] = w["transformer.ln_f.bias"]
        if "lm_head.weight" in w:
            t["output.weight"] = w["lm_head.weight"]
        for i in range(layers):
            p = f"transformer.h.{i}."
            if c["new_decoder_architecture"]:
                t[f"blk.{i}.attn_norm.weight"] = w[p + "ln_attn.weight"]
                t[f"blk.{i}.attn_norm.bias"] = w[p + "ln_attn.bias"]
                t[f"blk.{i}.attn_norm_2.weight"] = w[p + "ln_mlp.weight"]
                t[f"blk.{i}.attn_norm_2.bias"] = w[p + "ln_mlp.bias"]
            else:
                t[f"blk.{i}.attn_norm.weight"] = w[p + "input_layernorm.weight"]
                t[f"blk.{i}.attn_norm.bias"] = w[p + "input_layernorm.bias"]
            qkv = w[p + "self_attention.query_key_value.weight"]
            # FalconModel.modify_tensors: [Q | K | V] from per-KV-group rows.
            v = qkv.reshape(kv, heads // kv + 2, head_dim, hidden)
            q = v[:, :-2].reshape(heads * head_dim, hidden)
            k = v[:, [-2]].reshape(kv * head_dim, hidden)
            vv = v[:, [-1]].reshape(kv * head_dim, hidden)
            t[f"blk.{i}.attn_qkv.weight"] = np.concatenate([q, k, vv])
            t[f"blk.{i}.attn_output.weight"] = w[p + "self_attention.dense.weight"]
            t[f"blk.{i}.ffn_up.weight"] = w[p + "mlp.dense_h_to_4h.weight"]
            t[f"blk.{i}.ffn_down.weight"] = w[p + "mlp.dense_4h_to_h.weight"]
    else:
        plus = 1.0 if arch in ("gemma", "gemma2") else 0.0
        t["token_embd.weight"] = w["model.embed_tokens.weight"]
        t["output_norm.weight"] = w["model.norm.weight"] + plus
        if "model.norm.bias" in w:
            t["output_norm.bias"] = w["model.norm.bias"]
        if "lm_head.weight" in w and not c.get("tie_word_embeddings", arch in ("gemma", "gemma2")):
            t["output.weight"] = w["lm_head.weight"]
        names = {"input_layernorm": "attn_norm", "self_attn.q_proj": "attn_q",
                 "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
                 "self_attn.o_proj": "attn_output", "self_attn.qkv_proj": "attn_qkv",
                 "post_attention_layernorm": "ffn_norm", "mlp.gate_proj": "ffn_gate",
                 "mlp.up_proj": "ffn_up", "mlp.down_proj": "ffn_down",
                 # Qwen3 (convert_hf_to_gguf.py: q_norm/k_norm, [head_dim]).
                 "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm",
                 "mlp.gate_up_proj": "ffn_up", "mlp.c_fc": "ffn_up", "mlp.c_proj": "ffn_down",
                 "pre_feedforward_layernorm": "ffn_norm",
                 "post_feedforward_layernorm": "post_ffw_norm"}
        if arch == "gemma2":
            names["post_attention_layernorm"] = "post_attention_norm"
        for i in range(layers):
            p = L.format(i)
            for hf, gg in names.items():
                for kind in ("weight", "bias"):
                    if p + hf + "." + kind not in w:
                        continue
                    x = w[p + hf + "." + kind]
                    if arch == "llama" and gg in ("attn_q", "attn_k"):
                        x = permute(x, heads if gg == "attn_q" else kv)
                    if plus and "norm" in gg:
                        x = x + plus
                    t[f"blk.{i}.{gg}.{kind}"] = x
            for which in ("q", "k"):
                norms = [w[k] for k in sorted((k for k in w if k.startswith(
                    p + f"self_attn.{which}_layernorm.norms.")), key=lambda k: int(k.split(".")[-2]))]
                if norms:
                    t[f"blk.{i}.attn_{which}_norm.weight"] = np.stack(norms)
    return kvs, t


def write(path, kvs, tensors):
    def s(x):
        b = x.encode()
        return struct.pack("<Q", len(b)) + b
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs))
    for key, kind, value in kvs:
        head += s(key)
        if kind == "str":
            head += struct.pack("<I", 8) + s(value)
        elif kind == "strs":
            head += struct.pack("<IIQ", 9, 8, len(value)) + b"".join(s(v) for v in value)
        elif kind == "f32s":
            head += struct.pack("<IIQ", 9, 6, len(value)) + struct.pack("<%df" % len(value), *value)
        elif kind == "i32s":
            head += struct.pack("<IIQ", 9, 5, len(value)) + struct.pack("<%di" % len(value), *value)
        elif kind == "u32":
            head += struct.pack("<II", 4, int(value))
        else:
            head += struct.pack("<If", 6, float(value))
    offset, blobs = 0, []
    for name, x in tensors.items():
        x = np.ascontiguousarray(x, dtype="<f4")
        head += s(name) + struct.pack("<I", x.ndim)
        head += b"".join(struct.pack("<Q", d) for d in reversed(x.shape))
        head += struct.pack("<IQ", 0, offset)
        blob = x.tobytes()
        blob += b"\0" * ((32 - len(blob) % 32) % 32)
        blobs.append(blob)
        offset += len(blob)
    head += b"\0" * ((32 - len(head) % 32) % 32)
    with open(path, "wb") as f:
        f.write(head + b"".join(blobs))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    write(sys.argv[2], *convert(sys.argv[1]))
