//===- ExportFiles.cpp - streamed external data and the atomic file write -===//
//
// Part of qeff. The exporter's last step: the external tensors (checkpoint
// weights, converted and transposed on the fly, and large constants) are
// streamed into <model>.onnx.data, the ModelProto serialized deterministically,
// optionally checked, and both files moved into the output directory from a
// temporary directory beside them.
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/ExporterImpl.h"

#include "lowering/Export/ExternalData.h"
#include "lowering/Export/ONNXCheck.h"
#include "lowering/Export/WeightConversion.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

using namespace mlir;
namespace conv = ::qeff::exporter;

namespace mlir::qeff::exportimpl {

/// Alignment of every tensor in the external data file.
constexpr uint64_t kDataAlignment = 64;

static std::string errnoText() { return std::strerror(errno); }

LogicalResult Exporter::streamTensors(const std::string &dataPath,
                                      ExportReport &report) {
  std::vector<conv::DataTensor> tensors;
  tensors.reserve(external_.size());
  for (const ExternalTensor &tensor : external_) {
    conv::DataTensor t;
    if (tensor.info) {
      absl::StatusOr<hf::TensorView> view = checkpoint_->get(tensor.info->name);
      if (!view.ok())
        return tensor.op->emitError(std::string(view.status().message()));
      t.src = view->data;
      t.from = tensor.info->dtype;
      t.to = tensor.to;
      t.numElements = tensor.info->numElements();
      t.releaseSource = true;
      if (view->source) {
        // Decoded while it streams (a quantized or GGUF tensor): the dense
        // [rows, cols] f32 matrix of its HF twin.
        t.decoded = view->source;
        const std::vector<int64_t> &shape = tensor.info->shape;
        t.rows = shape.size() >= 2 ? shape[0] : 1;
        t.cols = t.rows ? t.numElements / t.rows : 0;
      }
      if (!tensor.sourceRows.empty()) {
        // A row selection: the selected [rows, cols] matrix, read in place.
        t.sourceRows = tensor.sourceRows;
        if (t.decoded)
          t.decodedCols = t.cols;
        t.rows = static_cast<int64_t>(t.sourceRows.size());
        t.cols = tensor.sourceRowCount ? t.numElements / tensor.sourceRowCount : 0;
        t.numElements = t.rows * t.cols;
        t.releaseSource = false;
        t.transpose = tensor.transpose;
      } else if (tensor.transpose) {
        t.transpose = true;
        t.rows = tensor.info->shape[0];
        t.cols = tensor.info->shape[1];
      }
    } else {
      t.src = reinterpret_cast<const std::byte *>(tensor.data.data());
      t.from = t.to = hf::DType::U8;
      t.numElements = static_cast<int64_t>(tensor.data.size());
    }
    assert(t.fileBytes() == tensor.bytes && "tensor size mismatch");
    tensors.push_back(t);
  }

  ExportProgress progress;
  progress.tensorsTotal = external_.size();
  for (const ExternalTensor &t : external_)
    progress.bytesTotal += t.bytes;
  conv::DataFileOptions fileOptions;
  fileOptions.alignment = kDataAlignment;
  fileOptions.threads = options_.threads;
  fileOptions.cancelled = options_.cancelled;
  fileOptions.progress = [&](size_t i) {
    const ExternalTensor &tensor = external_[i];
    ++progress.tensorsDone;
    progress.bytesDone += tensor.bytes;
    progress.tensorName =
        tensor.info ? std::string_view(tensor.info->name)
                    : std::string_view(graph_->initializer(tensor.initializer).name());
    if (options_.progress)
      options_.progress(progress);
  };
  conv::DataFileResult written = conv::writeDataFile(dataPath, tensors, fileOptions);
  if (!written) {
    if (written.failedTensor < external_.size()) {
      const ExternalTensor &tensor = external_[written.failedTensor];
      return tensor.op->emitError("writing tensor '")
             << (tensor.info ? tensor.info->name
                             : graph_->initializer(tensor.initializer).name())
             << "': " << written.error;
    }
    return module_.emitError("export-onnx: ") << written.error;
  }

  std::string location = llvm::sys::path::filename(dataPath).str();
  for (auto [i, tensor] : llvm::enumerate(external_)) {
    pb::TensorProto *init = graph_->mutable_initializer(tensor.initializer);
    init->set_data_location(pb::TensorProto::EXTERNAL);
    auto addEntry = [&](const char *key, std::string value) {
      pb::StringStringEntryProto *entry = init->add_external_data();
      entry->set_key(key);
      entry->set_value(std::move(value));
    };
    addEntry("location", location);
    addEntry("offset", std::to_string(written.offsets[i]));
    addEntry("length", std::to_string(tensor.bytes));
    std::string().swap(tensor.data);
  }
  report.clippedValues = written.clipped;
  report.numExternalTensors = external_.size();
  report.externalBytes = progress.bytesDone;
  return success();
}

/// A temporary directory removed on destruction unless released.
class TempDir {
public:
  ~TempDir() {
    if (!path_.empty())
      llvm::sys::fs::remove_directories(path_);
  }
  bool create(const std::string &parent) {
    llvm::SmallString<256> pattern(parent);
    llvm::sys::path::append(pattern, ".qeff-tmp-XXXXXX");
    std::string text(pattern.str());
    if (!::mkdtemp(text.data()))
      return false;
    path_ = text;
    return true;
  }
  const std::string &path() const { return path_; }

private:
  std::string path_;
};

LogicalResult Exporter::writeFiles(ExportReport &report) {
  const std::string &outDir = options_.outputDir;
  bool createdOutDir = !llvm::sys::fs::exists(outDir);
  if (std::error_code ec = llvm::sys::fs::create_directories(outDir))
    return module_.emitError("export-onnx: cannot create output directory '")
           << outDir << "': " << ec.message();
  // Removes the output directory again on failure if this export created it
  // (and it is still empty).
  struct OutDirGuard {
    std::string path;
    bool active;
    ~OutDirGuard() {
      if (active)
        llvm::sys::fs::remove(path);
    }
  } outDirGuard{outDir, createdOutDir};

  LogicalResult result = [&]() -> LogicalResult {
    TempDir tmp;
    if (!tmp.create(outDir))
      return module_.emitError("export-onnx: cannot create a temporary "
                               "directory in '")
             << outDir << "': " << errnoText();
    std::string modelFile = options_.modelName + ".onnx";
    std::string dataFile = modelFile + ".data";
    auto join = [](StringRef dir, StringRef file) {
      llvm::SmallString<256> path(dir);
      llvm::sys::path::append(path, file);
      return std::string(path.str());
    };
    std::string tmpModel = join(tmp.path(), modelFile);
    std::string tmpData = join(tmp.path(), dataFile);
    bool hasData = !external_.empty();
    if (hasData && failed(streamTensors(tmpData, report)))
      return failure();

    std::string bytes;
    {
      google::protobuf::io::StringOutputStream stream(&bytes);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      if (!model_.SerializeToCodedStream(&coded))
        return module_.emitError("export-onnx: cannot serialize the model "
                                 "(larger than 2 GB?)");
    }
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(tmpModel, ec);
      if (ec)
        return module_.emitError("export-onnx: cannot create ")
               << tmpModel << ": " << ec.message();
      os.write(bytes.data(), bytes.size());
      os.close();
      if (os.has_error())
        return module_.emitError("export-onnx: writing ")
               << tmpModel << ": " << os.error().message();
    }
    if (options_.validate)
      if (std::optional<std::string> problem = conv::checkONNXModel(tmpModel))
        return module_.emitError("export-onnx: the exported model is not "
                                 "valid ONNX: ")
               << *problem;

    std::string finalModel = join(outDir, modelFile);
    std::string finalData = join(outDir, dataFile);
    if (hasData) {
      if (std::error_code ec = llvm::sys::fs::rename(tmpData, finalData))
        return module_.emitError("export-onnx: cannot move ")
               << tmpData << " to " << finalData << ": " << ec.message();
    }
    if (std::error_code ec = llvm::sys::fs::rename(tmpModel, finalModel)) {
      if (hasData)
        llvm::sys::fs::remove(finalData);
      return module_.emitError("export-onnx: cannot move ")
             << tmpModel << " to " << finalModel << ": " << ec.message();
    }
    report.files.push_back({finalModel, bytes.size()});
    if (hasData)
      report.files.push_back({finalData, 0});
    if (hasData) {
      uint64_t size = 0;
      llvm::sys::fs::file_size(finalData, size);
      report.files.back().second = size;
    }
    return success();
  }();
  if (succeeded(result))
    outDirGuard.active = false;
  return result;
}

} // namespace mlir::qeff::exportimpl
