//===- Checkpoint.h - Name->tensor view over shards -------------*- C++ -*-===//
//
// A Hugging Face checkpoint's weights: either one `model.safetensors` or the
// shards listed by `model.safetensors.index.json` (`weight_map`: tensor name ->
// shard file). Both give the same view: every tensor by name, in name order,
// zero-copy from the mapped shards. The index is cross-checked against the
// shards: every listed tensor must be in its shard, no tensor in two shards, no
// shard tensor missing from the index.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_FRONTEND_HF_CHECKPOINT_H
#define QEFF_FRONTEND_HF_CHECKPOINT_H

#include "frontend/HF/SafeTensors.h"

#include <map>

namespace qeff::hf {

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
  /// The file holding a tensor; nullptr when absent.
  const SafeTensorsFile *fileOf(std::string_view name) const;
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
    const SafeTensorsFile *file;
    const TensorInfo *info;
  };

  std::string sourcePath_;
  bool sharded_ = false;
  std::vector<std::unique_ptr<SafeTensorsFile>> files_;
  std::map<std::string, Entry, std::less<>> tensors_;
};

} // namespace qeff::hf

#endif // QEFF_FRONTEND_HF_CHECKPOINT_H
