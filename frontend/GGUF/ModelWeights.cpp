//===- ModelWeights.cpp - the weights of any checkpoint path --------------===//
//
// Part of qeff. See ModelWeights.h.
//
//===----------------------------------------------------------------------===//

#include "frontend/GGUF/ModelWeights.h"

#include "frontend/GGUF/GGUFModel.h"
#include "frontend/HF/ModelConfig.h"
#include "frontend/Quant/QuantCheckpoint.h"
#include "frontend/Quant/QuantUtil.h"

#include <sys/stat.h>

namespace qeff::gguf {

absl::StatusOr<std::unique_ptr<hf::Checkpoint>>
openModelWeights(const std::string &path) {
  struct stat st;
  bool dir = ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  if (!dir && isGGUFPath(path)) {
    QEFF_QUANT_ASSIGN(GGUFModel model, openGGUFModel(path));
    return std::move(model.checkpoint);
  }
  if (!dir) // a .safetensors file or an index: no config beside it to read
    return hf::Checkpoint::open(path);
  QEFF_QUANT_ASSIGN(hf::JsonConfig config, hf::readConfigJson(path));
  return quant::openDenseCheckpoint(path, config);
}

} // namespace qeff::gguf
