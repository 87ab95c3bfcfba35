//===- Checkpoint.cpp - A name->tensor view over safetensors shards -------===//

#include "frontend/HF/Checkpoint.h"

#include "frontend/HF/JsonUtil.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

#include <algorithm>
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

DenseSource::~DenseSource() = default;

void DenseSource::decodeTransposed(int64_t c0, int64_t c1, int64_t r0,
                                   int64_t r1, float *dst, int64_t ld) const {
  // Strips of 64 rows keep the temporary small whatever the tile.
  constexpr int64_t kStrip = 64;
  std::vector<float> tile(static_cast<size_t>(kStrip * (c1 - c0)));
  for (int64_t r = r0; r < r1; r += kStrip) {
    int64_t re = std::min(r1, r + kStrip);
    decode(r, re, c0, c1, tile.data(), c1 - c0);
    for (int64_t i = r; i < re; ++i)
      for (int64_t j = c0; j < c1; ++j)
        dst[(j - c0) * ld + (i - r0)] = tile[(i - r) * (c1 - c0) + (j - c0)];
  }
}

std::unique_ptr<Checkpoint> Checkpoint::createEmpty(std::string sourcePath) {
  std::unique_ptr<Checkpoint> ckpt(new Checkpoint());
  ckpt->sourcePath_ = std::move(sourcePath);
  return ckpt;
}

void Checkpoint::addExternal(TensorInfo info, const std::byte *data,
                             std::string file) {
  Entry entry;
  entry.data = data;
  entry.path = file;
  if (std::find(extraFiles_.begin(), extraFiles_.end(), file) ==
      extraFiles_.end())
    extraFiles_.push_back(file);
  ownedInfos_.push_back(std::move(info));
  entry.info = &ownedInfos_.back();
  tensors_.insert_or_assign(ownedInfos_.back().name, std::move(entry));
}

void Checkpoint::addDecoded(TensorInfo info,
                            std::shared_ptr<const DenseSource> source,
                            std::string file) {
  Entry entry;
  entry.source = std::move(source);
  entry.path = file;
  if (std::find(extraFiles_.begin(), extraFiles_.end(), file) ==
          extraFiles_.end() &&
      std::none_of(files_.begin(), files_.end(),
                   [&](const auto &f) { return f->path() == file; }))
    extraFiles_.push_back(file);
  info.dtype = DType::F32;
  info.begin = 0;
  info.end = static_cast<uint64_t>(info.numElements()) * 4;
  ownedInfos_.push_back(std::move(info));
  entry.info = &ownedInfos_.back();
  tensors_.insert_or_assign(ownedInfos_.back().name, std::move(entry));
}

void Checkpoint::remove(std::string_view name) {
  auto it = tensors_.find(name);
  if (it != tensors_.end())
    tensors_.erase(it);
}

void Checkpoint::keepAlive(std::shared_ptr<const void> owner) {
  owners_.push_back(std::move(owner));
}

const DenseSource *Checkpoint::decodedSource(std::string_view name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : it->second.source.get();
}

size_t Checkpoint::numDecoded() const {
  size_t n = 0;
  for (const auto &entry : tensors_)
    n += entry.second.source != nullptr;
  return n;
}

std::string Checkpoint::filePathOf(std::string_view name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end())
    return "";
  return it->second.file ? it->second.file->path() : it->second.path;
}

std::vector<std::string> Checkpoint::filePaths() const {
  std::vector<std::string> paths;
  for (const auto &file : files_)
    paths.push_back(file->path());
  paths.insert(paths.end(), extraFiles_.begin(), extraFiles_.end());
  return paths;
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
  const Entry &entry = it->second;
  if (entry.file)
    return entry.file->view(*entry.info);
  return TensorView{entry.info, entry.data, entry.source.get()};
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
