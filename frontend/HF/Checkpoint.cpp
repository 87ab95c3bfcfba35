//===- Checkpoint.cpp - A name->tensor view over safetensors shards -------===//

#include "frontend/HF/Checkpoint.h"

#include "frontend/HF/JsonUtil.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include <sys/stat.h>

namespace qeff::hf {

using detail::Json;

namespace {

std::string joinPath(const std::string &dir, std::string_view name) {
  if (dir.empty())
    return std::string(name);
  if (dir.back() == '/')
    return detail::cat(dir, name);
  return detail::cat(dir, "/", name);
}

std::string parentDir(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

bool isDirectory(const std::string &path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

/// A shard name must be a plain file name inside the index's directory.
bool isPlainFileName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find('/') == std::string_view::npos &&
         name.find('\0') == std::string_view::npos;
}

constexpr uint64_t kMaxIndexSize = 256ull << 20;

} // namespace

absl::StatusOr<std::unique_ptr<Checkpoint>>
Checkpoint::open(const std::string &path) {
  if (isDirectory(path)) {
    std::string index = joinPath(path, "model.safetensors.index.json");
    if (detail::isRegularFile(index))
      return openIndex(index);
    std::string single = joinPath(path, "model.safetensors");
    if (detail::isRegularFile(single))
      return openFile(single);
    return absl::NotFoundError(
        detail::cat(path, ": no model.safetensors or "
                          "model.safetensors.index.json in the directory"));
  }
  if (absl::EndsWith(path, ".json"))
    return openIndex(path);
  return openFile(path);
}

absl::StatusOr<std::unique_ptr<Checkpoint>>
Checkpoint::openFile(const std::string &safetensorsPath) {
  absl::StatusOr<std::unique_ptr<SafeTensorsFile>> file =
      SafeTensorsFile::open(safetensorsPath);
  if (!file.ok())
    return file.status();
  std::unique_ptr<Checkpoint> ckpt(new Checkpoint());
  ckpt->sourcePath_ = safetensorsPath;
  for (const TensorInfo &info : (*file)->tensors())
    ckpt->tensors_.emplace(info.name, Entry{file->get(), &info});
  ckpt->files_.push_back(std::move(*file));
  return ckpt;
}

absl::StatusOr<std::unique_ptr<Checkpoint>>
Checkpoint::openIndex(const std::string &indexPath) {
  absl::StatusOr<std::string> text =
      detail::readSmallFile(indexPath, kMaxIndexSize);
  if (!text.ok())
    return text.status();
  absl::StatusOr<Json> index =
      detail::parseJson(*text, indexPath, "index", "field");
  if (!index.ok())
    return index.status();
  auto error = [&](auto &&...parts) {
    return absl::InvalidArgumentError(detail::cat(indexPath, ": ", parts...));
  };
  if (!index->is_object())
    return error("index must be a JSON object, got ", detail::describe(*index));
  auto mapIt = index->find("weight_map");
  if (mapIt == index->end())
    return error("missing field 'weight_map'");
  if (!mapIt->is_object())
    return error("field 'weight_map' must be an object mapping tensor names "
                 "to shard files, got ",
                 detail::describe(*mapIt));
  if (auto metaIt = index->find("metadata");
      metaIt != index->end() && !metaIt->is_object() && !metaIt->is_null())
    return error("field 'metadata' must be an object, got ",
                 detail::describe(*metaIt));

  // Shard file name -> listed tensors; std::map keeps shard order stable.
  std::map<std::string, std::vector<std::string>> shards;
  for (auto it = mapIt->begin(); it != mapIt->end(); ++it) {
    if (!it.value().is_string())
      return error("weight_map entry '", it.key(),
                   "' must be a shard file name (string), got ",
                   detail::describe(it.value()));
    const std::string &shard = it.value().get_ref<const std::string &>();
    if (!isPlainFileName(shard))
      return error("weight_map entry '", it.key(), "': shard '", shard,
                   "' must be a plain file name in the index's directory");
    shards[shard].push_back(it.key());
  }

  std::unique_ptr<Checkpoint> ckpt(new Checkpoint());
  ckpt->sourcePath_ = indexPath;
  ckpt->sharded_ = true;
  std::string dir = parentDir(indexPath);
  for (const auto &[shard, names] : shards) {
    std::string shardPath = joinPath(dir, shard);
    if (!detail::isRegularFile(shardPath))
      return absl::NotFoundError(detail::cat(
          indexPath, ": weight_map entry '", names.front(), "' names shard '",
          shard, "', which does not exist (", shardPath, ")"));
    absl::StatusOr<std::unique_ptr<SafeTensorsFile>> file =
        SafeTensorsFile::open(shardPath);
    if (!file.ok())
      return file.status();
    const SafeTensorsFile *f = file->get();
    ckpt->files_.push_back(std::move(*file));
    for (const std::string &name : names) {
      const TensorInfo *info = f->find(name);
      if (!info)
        return absl::NotFoundError(
            detail::cat(indexPath, ": weight_map maps tensor '", name,
                        "' to shard '", shard, "', which has no such tensor"));
      ckpt->tensors_.emplace(name, Entry{f, info});
    }
  }
  // Every shard tensor must be the one the index lists: catches a tensor
  // stored in two shards and shards holding tensors the index omits.
  for (const auto &file : ckpt->files_) {
    for (const TensorInfo &info : file->tensors()) {
      auto it = ckpt->tensors_.find(info.name);
      if (it == ckpt->tensors_.end())
        return error("shard '", file->path(), "' holds tensor '", info.name,
                     "', which weight_map does not list");
      if (it->second.file != file.get())
        return error("tensor '", info.name, "' is stored in two shards: '",
                     it->second.file->path(), "' (per weight_map) and '",
                     file->path(), "'");
    }
  }
  return ckpt;
}

const TensorInfo *Checkpoint::find(std::string_view name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.info;
}

const SafeTensorsFile *Checkpoint::fileOf(std::string_view name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.file;
}

absl::StatusOr<TensorView> Checkpoint::get(std::string_view name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    return absl::NotFoundError(
        detail::cat(sourcePath_, ": no tensor named '", name, "'"));
  return it->second.file->view(*it->second.info);
}

std::vector<std::string> Checkpoint::tensorNames() const {
  std::vector<std::string> names;
  names.reserve(tensors_.size());
  for (const auto &entry : tensors_)
    names.push_back(entry.first);
  return names;
}

uint64_t Checkpoint::totalBytes() const {
  uint64_t total = 0;
  for (const auto &entry : tensors_)
    total += entry.second.info->byteSize();
  return total;
}

int64_t Checkpoint::totalElements() const {
  int64_t total = 0;
  for (const auto &entry : tensors_)
    total += entry.second.info->numElements();
  return total;
}

} // namespace qeff::hf
