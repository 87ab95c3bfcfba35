//===- Checkpoint.h - Name->tensor view over shards -------------*- C++ -*-===//
//
// A Hugging Face checkpoint's weights: either one `model.safetensors` or the
// shards listed by `model.safetensors.index.json` (`weight_map`: tensor name ->
// shard file). Both give the same view: every tensor by name, in name order,
// zero-copy from the mapped shards. The index is cross-checked against the
// shards: every listed tensor must be in its shard, no tensor in two shards, no
// shard tensor missing from the index.
//
// The view is also where other storage forms become dense weights: a reader
// (frontend/Quant for quantized safetensors, frontend/GGUF for GGUF files)
// replaces a module's packed tensors by one decoded tensor (addDecoded) or
// adds views of another file's bytes (addExternal). The importer and the
// exporter see names, shapes and dtypes only; the exporter asks a decoded
// tensor's DenseSource for tiles while it streams, so memory stays O(tile).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_CHECKPOINT_H
#define QEFF_FRONTEND_HF_CHECKPOINT_H

#include "frontend/HF/SafeTensors.h"

#include <deque>
#include <map>

namespace qeff::hf {

/// A tensor stored in another form (packed quantized groups, GGUF blocks,
/// permuted rows) presented as a dense row-major f32 matrix of
/// [shape[0], product of the other dims] ([1, n] for a 1-D tensor). A source
/// validates everything it reads when it is made: decoding never fails.
class DenseSource {
public:
  virtual ~DenseSource();
  /// Writes rows [r0, r1) x columns [c0, c1) of the dense matrix into `dst`,
  /// row-major with rows `ld` floats apart. Thread-safe (const, no state).
  virtual void decode(int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                      float *dst, int64_t ld) const = 0;
  /// The same tile transposed: row j of `dst` holds column c0 + j, rows
  /// [r0, r1) of it (the form a Linear weight is exported in). The default
  /// decodes and transposes; layouts packed along the rows (AWQ, GPTQ)
  /// produce it directly.
  virtual void decodeTransposed(int64_t c0, int64_t c1, int64_t r0, int64_t r1,
                                float *dst, int64_t ld) const;
  /// Columns of one packed block: tiles whose column bounds are multiples of
  /// it decode nothing twice (1 when any tile is as cheap).
  virtual int64_t columnBlock() const { return 1; }
  /// The packed bytes it reads, as ranges of mapped files (read-ahead and
  /// release by the exporter).
  virtual std::vector<std::pair<const std::byte *, size_t>>
  packedRanges() const = 0;
  /// The packed form, short ("AWQ int4 g128", "GGUF Q4_K").
  virtual std::string format() const = 0;
};

class Checkpoint {
public:
  /// Opens the weights of a checkpoint directory: the sharded index when
  /// `model.safetensors.index.json` exists, else `model.safetensors`. `path`
  /// may also name an index (.json) or a .safetensors file directly.
  static absl::StatusOr<std::unique_ptr<Checkpoint>>
  open(const std::string &path);
  /// One unsharded file.
  static absl::StatusOr<std::unique_ptr<Checkpoint>>
  openFile(const std::string &safetensorsPath);
  /// A sharded index; shard names resolve relative to its directory.
  static absl::StatusOr<std::unique_ptr<Checkpoint>>
  openIndex(const std::string &indexPath);
  /// An empty view named `sourcePath`, for readers of other file formats
  /// (GGUF) to fill with addExternal / addDecoded.
  static std::unique_ptr<Checkpoint> createEmpty(std::string sourcePath);

  /// Adds (or replaces) a tensor whose bytes lie in a mapping kept alive by
  /// keepAlive; `file` names that file in messages.
  void addExternal(TensorInfo info, const std::byte *data, std::string file);
  /// Adds (or replaces) a tensor decoded by `source`; `info.dtype` must be
  /// F32 and `info.shape` the source's. `file` names the packed file.
  void addDecoded(TensorInfo info, std::shared_ptr<const DenseSource> source,
                  std::string file);
  /// Removes a tensor from the view (the packed parts of a decoded one).
  void remove(std::string_view name);
  /// Keeps `owner` (a mapping the external tensors point into) alive as
  /// long as the checkpoint.
  void keepAlive(std::shared_ptr<const void> owner);
  /// The decoder of a decoded tensor, nullptr for stored ones.
  const DenseSource *decodedSource(std::string_view name) const;
  /// Number of decoded tensors.
  size_t numDecoded() const;

  /// The index path for sharded checkpoints, else the single file's path.
  const std::string &sourcePath() const { return sourcePath_; }
  bool isSharded() const { return sharded_; }
  /// Mapped files in shard-name order.
  const std::vector<std::unique_ptr<SafeTensorsFile>> &files() const {
    return files_;
  }

  size_t size() const { return tensors_.size(); }
  bool contains(std::string_view name) const { return find(name) != nullptr; }
  /// nullptr when absent.
  const TensorInfo *find(std::string_view name) const;
  /// The safetensors file holding a tensor; nullptr when absent or held
  /// elsewhere (GGUF, decoded).
  const SafeTensorsFile *fileOf(std::string_view name) const;
  /// The path of the file holding (or packing) a tensor; "" when absent.
  std::string filePathOf(std::string_view name) const;
  /// Every file the weights come from (shards, a GGUF file), in order.
  std::vector<std::string> filePaths() const;
  /// NotFound naming the checkpoint and the tensor when absent.
  absl::StatusOr<TensorView> get(std::string_view name) const;
  /// All tensor names, sorted.
  std::vector<std::string> tensorNames() const;

  /// Sum of the tensors' byte sizes / element counts.
  uint64_t totalBytes() const;
  int64_t totalElements() const;

private:
  Checkpoint() = default;
  struct Entry {
    const SafeTensorsFile *file = nullptr;
    const TensorInfo *info = nullptr;
    /// addExternal: the bytes; addDecoded: the decoder.
    const std::byte *data = nullptr;
    std::shared_ptr<const DenseSource> source;
    /// addExternal / addDecoded: the file named in messages.
    std::string path;
  };

  std::string sourcePath_;
  bool sharded_ = false;
  std::vector<std::unique_ptr<SafeTensorsFile>> files_;
  std::map<std::string, Entry, std::less<>> tensors_;
  /// TensorInfos of added tensors (stable addresses).
  std::deque<TensorInfo> ownedInfos_;
  std::vector<std::string> extraFiles_;
  std::vector<std::shared_ptr<const void>> owners_;
};

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_CHECKPOINT_H
