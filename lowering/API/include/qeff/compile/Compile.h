//===- Compile.h - the public compile API of qeff ---------------*- C++ -*-===//
//
// Part of qeff. What `qeff compile` does, for programs that link qeff: a
// Hugging Face checkpoint directory and options in, an artifact directory out
// (model.onnx + external data, specializations.json, custom_io.yaml,
// qeff-manifest.json, qaic-compile.sh; the QPC when the AI 100 compiler is
// installed), which qeff::runtime::Session opens. No MLIR types: errors come
// back as a message, never as an abort or an exception.
//
//   qeff::compile::Options options;
//   options.checkpointDir = "tiny-llama";
//   options.outputDir = "tiny-llama.qeff";
//   qeff::compile::Result compiled = qeff::compile::compileCheckpoint(options);
//   if (!compiled) { std::fputs(compiled.message.c_str(), stderr); return 1; }
//
// CMake: find_package(qeff CONFIG REQUIRED), link qeff::compile.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_COMPILE_COMPILE_H
#define QEFF_COMPILE_COMPILE_H

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace qeff::compile {

/// Where the compile stops (`qeff compile --emit`).
enum class Emit {
  MLIRImport, ///< model.import.mlir: the imported IR (HF semantics)
  MLIRDevice, ///< model.device.mlir: after the device pipeline
  ONNX,       ///< model.onnx of the imported IR (HF semantics)
  Device,     ///< device ONNX and every compile artifact (the default)
};

/// Whether identical decoder layers become one ONNX model-local function
/// (`--outline-layers`); Auto: for models of more than 4 layers.
enum class OutlineLayers { Auto, On, Off };

/// How far the weight export is.
struct Progress {
  uint64_t tensorsDone = 0, tensorsTotal = 0;
  uint64_t bytesDone = 0, bytesTotal = 0;
  std::string tensor; ///< the tensor just written
};

/// The options of `qeff compile`, with its defaults.
struct Options {
  std::string checkpointDir; ///< the HF checkpoint (never modified)
  std::string outputDir;     ///< created if missing; replaced atomically
  Emit emit = Emit::Device;
  int64_t ctxLen = 128;        ///< KV cache slots per sequence
  int64_t prefillSeqLen = 32;  ///< tokens per prefill chunk
  int64_t batchSize = 1;       ///< sequences per run
  int64_t fullBatchSize = 0;   ///< > 0: continuous batching (batch_index)
  int64_t numCores = 16;       ///< AI 100 cores to compile for
  int64_t numDevices = 1;      ///< tensor parallelism over this many SoCs
  bool rollingKVWindow = false; ///< `--kv-window=rolling`
  OutlineLayers outlineLayers = OutlineLayers::Auto;
  /// Speculative-decoding target (`--num-speculative-tokens`): a Decode
  /// specialization of seq_len K + 1 per K, logits of num_logits_to_keep
  /// tokens.
  std::vector<int64_t> numSpeculativeTokens;
  /// `--on-device-sampling`: next_tokens instead of logits, sampled in the
  /// graph among the maxTopKIds most likely tokens (`--max-top-k-ids`).
  bool onDeviceSampling = false;
  int64_t maxTopKIds = 0; ///< 0: 512, or the vocabulary when smaller
  bool mxfp6 = false;          ///< matmul weights in MXFP6
  bool mxint8KV = false;       ///< KV cache in MXINT8
  bool weightsF16 = false;     ///< `--weights-dtype=f16`
  bool weightsBF16 = false;    ///< `--weights-dtype=bf16` (weightsF16 wins)
  /// fp32 islands: HF module paths or globs, and a file of more.
  std::vector<std::string> fp32Scopes;
  std::string fp32ScopesFile;
  /// > 0: calibrate fp32 islands over this many sample prompts.
  int calibrate = 0;
  /// qaic-compile to run (empty: $QEFF_QAIC_COMPILE, else the SDK's).
  std::string qaicCompile;
  /// Run qaic-compile when it is found.
  bool runQAic = true;
  /// qaic-compile's -aic-hw-version (`--aic-hw-version`).
  std::string aicHwVersion = "ai100";
  /// More qaic-compile arguments (`--qaic-arg`: -mos=1,
  /// -aic-enable-depth-first, ...); the options qeff sets itself are refused
  /// with the qeff option to use instead.
  std::vector<std::string> qaicArgs;
  /// Non-empty: write a Make-style depfile here naming every file the
  /// compile read (`qeff compile --depfile`).
  std::string depfile;
  /// Called as each stage starts, on the calling thread: "import",
  /// "device pipeline", "lowering", "export", "qaic-compile".
  std::function<void(const std::string &stage)> onStage;
  /// Called on the calling thread after each weight written to
  /// model.onnx.data.
  std::function<void(const Progress &)> onProgress;
  /// Polled on the calling thread between stages and after each weight
  /// written; true stops the compile: the result fails with "compile
  /// cancelled" and outputDir is left as it was (qaic-compile, once
  /// started, runs to its end).
  std::function<bool()> cancelled;
};

/// The outcome of a compile.
struct Result {
  bool ok = false;
  /// The diagnostics, one per line with their location (file, tensor, field
  /// or op), as `qeff compile` prints them; empty after a clean compile.
  std::string message;
  /// Final paths and sizes of the files written.
  std::vector<std::pair<std::string, uint64_t>> files;
  /// The qaic-compile command line for the artifacts (Emit::Device).
  std::string qaicCommand;
  bool qpcBuilt = false;
  double seconds = 0;

  explicit operator bool() const { return ok; }
};

/// Compiles `options.checkpointDir` into `options.outputDir`. Thread-safe:
/// each call has a compiler context of its own.
Result compileCheckpoint(const Options &options);

/// The qeff version these headers belong to ("0.1.0").
const char *version();

} // namespace qeff::compile

#endif // QEFF_COMPILE_COMPILE_H
