//===- CompileDriver.h - checkpoint -> AI 100 compile artifacts -*- C++ -*-===//
//
// Part of qeff. What `qeff compile` does, as a C++ API: import a Hugging Face
// checkpoint, run the device pipeline, lower to ONNX, export, write the
// compile artifacts and, when the AI 100 compiler is installed, build the
// QPC. Every file lands in the output directory atomically: a failed compile
// leaves the directory as it was and never touches the checkpoint.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_DRIVER_COMPILEDRIVER_H
#define QEFF_LOWERING_DRIVER_COMPILEDRIVER_H

#include "lowering/Driver/MxReport.h"
#include "lowering/Export/ONNXExporter.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace mlir::qeff {

/// Where `qeff compile` stops.
enum class EmitKind {
  MLIRImport, ///< model.import.mlir: the imported IR (HF semantics)
  MLIRDevice, ///< model.device.mlir: after the device pipeline
  ONNX,       ///< model.onnx (+ .data) of the imported IR: HF semantics
  Device,     ///< the default: device ONNX and every compile artifact
};

/// The KV cache of sliding-window layers.
enum class KVWindow {
  Full,    ///< ctx_len slots, the window a mask (the device contract's shape)
  Rolling, ///< window + prefill_seq_len - 1 slots (+1 for padding) written
           ///< at position mod size (qeff-rolling-kv-window)
};
/// Whether decoder layers become ONNX model-local functions.
enum class OutlineLayers { Auto, On, Off };
/// OutlineLayers::Auto outlines models of more layers than this: there the
/// compile time of qaic-compile matters; small models gain nothing.
inline constexpr int64_t kOutlineLayersAuto = 4;

struct CompileOptions {
  std::string checkpointDir;
  std::string outputDir;
  EmitKind emit = EmitKind::Device;
  int64_t ctxLen = 128;
  int64_t prefillSeqLen = 32;
  int64_t batchSize = 1;
  /// > 0: continuous batching with a KV cache of this many sequences
  /// (batch_index input; Prefill batch 1, Decode batch fullBatchSize).
  int64_t fullBatchSize = 0;
  int64_t numCores = 16;
  KVWindow kvWindow = KVWindow::Full;
  /// Tensor parallelism over this many AI 100 SoCs (> 1: mdp.json and
  /// `-mdp-load-partition-config`; KV heads replicated when they do not
  /// divide; numCores cores on each device).
  int64_t numDevices = 1;
  /// Identical decoder layers as one function called per layer (ONNX
  /// model-local functions; qaic-compile `-sub-functions`). Auto: on for
  /// models of more than kOutlineLayersAuto decoder layers.
  OutlineLayers outlineLayers = OutlineLayers::Auto;
  /// Speculative-decoding target (`--num-speculative-tokens K[,K2...]`): a
  /// num_logits_to_keep input, logits [batch, num_logits_to_keep, vocab] and
  /// a Decode specialization of seq_len K + 1 per K (each 1..prefillSeqLen-1).
  std::vector<int64_t> numSpeculativeTokens;
  /// On-device sampling (`--on-device-sampling`, QEfficient's
  /// include_sampler): next_tokens instead of logits, sampled in the graph
  /// from the maxTopKIds largest logits (qeff-on-device-sampling).
  bool onDeviceSampling = false;
  /// 0: QEfficient's 512, or the vocabulary when smaller.
  int64_t maxTopKIds = 0;
  bool mxfp6 = false;
  bool mxint8KV = false;
  bool legacySpecializations = false;
  ExportWeightsDType weightsDType = ExportWeightsDType::AsIR;
  /// qaic-compile to run: explicit path; else $QEFF_QAIC_COMPILE; else
  /// <sdk>/exec/qaic-compile, else <sdk>/exec/qaic-exec (Apps SDKs that have
  /// only that; it compiles with -compile-only), <sdk> being
  /// $QEFF_QAIC_SDK_DIR or /opt/qti-aic.
  std::string qaicCompile;
  /// qaic-compile's -aic-hw-version (`--aic-hw-version`).
  std::string aicHwVersion = "ai100";
  /// More qaic-compile arguments, after qeff's own (`--qaic-arg`, e.g.
  /// -mos=1, -ols=2, -aic-enable-depth-first, -multicast-weights): in the
  /// command, the manifest, qaic-compile.sh and the content key.
  std::vector<std::string> qaicArgs;
  /// fp32 islands (qeff-fp16-clamp): module paths or globs whose ops stay
  /// fp32 on the device, and a file of more, one per line. Their ONNX nodes
  /// are listed in node_precision.yaml (`-node-precision-info`).
  std::vector<std::string> fp32Scopes;
  std::string fp32ScopesFile;
  /// > 0: calibrate with this many sample prompts on the host device in fp32
  /// and keep in fp32 the scopes whose values come near the fp16 limit
  /// (Calibration.h); their nodes join node_precision.yaml.
  int calibrate = 0;
  /// Measure each compressible weight's MXFP6 error for the MX report
  /// (`qeff compile --calibrate`: reads every weight once more).
  bool measureMxErrors = false;
  /// Run qaic-compile when found (off for the calibration's first compile).
  bool runQAic = true;
  /// Threads converting weights in the exporter (0: the hardware's, at most
  /// 8). The output does not depend on it; `qeff compile --models -j N`
  /// shares the cores between its N compiles.
  unsigned exportThreads = 0;
  /// Weight streaming progress (the CLI shows it on a terminal).
  std::function<void(const ExportProgress &)> progress;
  /// Called as each stage starts: "import", "device pipeline", "lowering",
  /// "export", "qaic-compile" (the Python module reports them).
  std::function<void(llvm::StringRef stage)> stageStarted;
  /// Polled between stages and after each exported weight; true stops the
  /// compile with "compile cancelled" (nothing is published).
  std::function<bool()> cancelled;
  /// BLAKE3-128 hashes (hashFile) of checkpoint files already computed by
  /// the caller, by name relative to checkpointDir: the manifest uses them
  /// instead of reading those files again. The others are hashed on a second
  /// thread while the pipeline and the export run.
  std::map<std::string, std::string> knownHashes;
};

struct CompileReport {
  /// Final paths and sizes of the files written.
  std::vector<std::pair<std::string, uint64_t>> files;
  /// The qaic-compile command line for these artifacts (Device only).
  std::string qaicCommand;
  /// The compiler that ran, empty when none was found.
  std::string qaicCompiler;
  /// It rejected the named specializations.json (an Apps SDK without the
  /// fix of quic/efficient-transformers#1129) and built the QPC from the
  /// flat form of the same specializations.
  bool flatSpecializationsRetry = false;
  bool qpcBuilt = false;
  /// model.onnx (Device): main graph nodes, and the model-local layer
  /// functions (--outline-layers) with their nodes.
  size_t graphNodes = 0;
  size_t layerFunctions = 0;
  size_t functionNodes = 0;
  int qaicExitCode = 0;
  /// --calibrate: the nodes found near the fp16 limit (largest |value|),
  /// the largest |value| elsewhere, and the scopes made fp32.
  std::vector<std::pair<std::string, float>> calibratedNodes;
  float calibrationMaxElsewhere = 0;
  std::vector<std::string> calibratedScopes;
  /// What -mxfp6-matmul compresses (Device; also in the manifest's "mx").
  MxReport mx;
  double seconds = 0;
};

/// Bounds of the shape options (compileCheckpoint refuses values outside).
constexpr int64_t kMaxCtxLen = int64_t(1) << 20;
constexpr int64_t kMaxBatchSize = 4096;
constexpr int64_t kMaxNumCores = 64;
/// Decode specializations a speculative-decoding target may add.
constexpr size_t kMaxSpeculativeSpecializations = 8;

/// Runs the compile. Errors are reported through the context's diagnostic
/// handler, naming the file, tensor, field or op at fault.
LogicalResult compileCheckpoint(MLIRContext &context,
                                const CompileOptions &options,
                                CompileReport &report);

/// node_precision.yaml for qaic-compile `-node-precision-info`: the nodes of
/// `model` (a ModelProto file, read without its external data) whose scope
/// (`/<scope>/<OpType>_<n>`) is in `fp32Scopes`, each named by its first
/// output, as qaic-compile identifies node instances. `comment` lines head
/// the file. Errors are emitted at `loc`.
LogicalResult precisionListYaml(Location loc, const std::string &model,
                                const std::vector<std::string> &fp32Scopes,
                                ArrayRef<std::string> comment,
                                std::string &yaml, size_t &numNodes);

/// The qaic-compile command line for artifacts in `dir`; with `dir` empty,
/// the artifact paths are relative to the artifact directory (what the
/// manifest and qaic-compile.sh record: artifacts are relocatable).
std::vector<std::string> qaicCompileArguments(const CompileOptions &options,
                                              bool hasPrecisionList,
                                              const std::string &dir);

/// mdp.json for `-mdp-load-partition-config`: one partition over devices
/// 0..numDevices-1, numCores cores each, connected peer to peer.
std::string mdpPartitionJson(int64_t numDevices, int64_t numCores);

/// The compiler `qeff compile` would run, or "" (see CompileOptions).
std::string findQAicCompile(const std::string &explicitPath);

/// Whether `compiler` is qaic-exec, which compiles only with -compile-only
/// (without it, it runs the network on a card too).
bool isQAicExec(const std::string &compiler);

/// An error naming the bad --qaic-arg or --aic-hw-version, or "".
std::string checkQAicArguments(const CompileOptions &options);

/// Runs `compiler` with `args` (and -compile-only when it is qaic-exec),
/// passing its output through, and records the outcome in `report`. With
/// `flatSpecializations` (the flat form of the named specializations.json),
/// a compiler that rejects the named form with exit code 255 and
/// kNamedSpecializationsRejected is run once more with the flat form.
LogicalResult runQAicCompile(Location loc, const std::string &compiler,
                             const std::vector<std::string> &args,
                             const CompileOptions &options,
                             const std::string &flatSpecializations,
                             CompileReport &report);

} // namespace mlir::qeff

#endif // QEFF_LOWERING_DRIVER_COMPILEDRIVER_H
