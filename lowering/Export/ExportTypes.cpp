//===- ExportTypes.cpp - ONNX types, value infos, tensors, attributes -----===//
//
// Part of qeff. The exporter's mapping of MLIR types and attributes to their
// ONNX protobuf forms: element types, graph input/output value infos, constant
// tensors and node attributes; plus the location helpers that name nodes.
//
//===----------------------------------------------------------------------===//

#include "lowering/Export/ExporterImpl.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Location.h"

#include <optional>

using namespace mlir;

namespace mlir::qeff::exportimpl {

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

std::optional<hf::DType> dtypeOf(Type type) {
  if (type.isF32())
    return hf::DType::F32;
  if (type.isF16())
    return hf::DType::F16;
  if (type.isBF16())
    return hf::DType::BF16;
  if (type.isF64())
    return hf::DType::F64;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return std::nullopt;
  unsigned width = integer.getWidth();
  if (width == 1)
    return hf::DType::Bool;
  bool isUnsigned = integer.isUnsigned();
  switch (width) {
  case 8:
    return isUnsigned ? hf::DType::U8 : hf::DType::I8;
  case 16:
    return isUnsigned ? hf::DType::U16 : hf::DType::I16;
  case 32:
    return isUnsigned ? hf::DType::U32 : hf::DType::I32;
  case 64:
    return isUnsigned ? hf::DType::U64 : hf::DType::I64;
  default:
    return std::nullopt;
  }
}

pb::TensorProto_DataType onnxDataType(hf::DType dtype) {
  using T = pb::TensorProto;
  switch (dtype) {
  case hf::DType::F64:
    return T::DOUBLE;
  case hf::DType::F32:
    return T::FLOAT;
  case hf::DType::F16:
    return T::FLOAT16;
  case hf::DType::BF16:
    return T::BFLOAT16;
  case hf::DType::I64:
    return T::INT64;
  case hf::DType::I32:
    return T::INT32;
  case hf::DType::I16:
    return T::INT16;
  case hf::DType::I8:
    return T::INT8;
  case hf::DType::U64:
    return T::UINT64;
  case hf::DType::U32:
    return T::UINT32;
  case hf::DType::U16:
    return T::UINT16;
  case hf::DType::U8:
    return T::UINT8;
  case hf::DType::Bool:
    return T::BOOL;
  case hf::DType::F8_E4M3: // ONNX 1.12 has no 8-bit floats; decoded before
  case hf::DType::F8_E5M2: // export (frontend/Quant)
  case hf::DType::F8_E8M0:
    return T::UNDEFINED;
  }
  return T::UNDEFINED;
}

std::optional<int> onnxDataType(Type type) {
  if (std::optional<hf::DType> dtype = dtypeOf(type))
    return onnxDataType(*dtype);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

/// The innermost NameLoc's name in `loc` (through fused and call-site
/// locations), if any.
std::optional<StringRef> innermostName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    if (std::optional<StringRef> inner = innermostName(name.getChildLoc()))
      return inner;
    return name.getName().strref();
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location part : fused.getLocations())
      if (std::optional<StringRef> inner = innermostName(part))
        return inner;
    return std::nullopt;
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    return innermostName(callSite.getCallee());
  return std::nullopt;
}

/// The file named by `loc`, if it is (or wraps) a file location.
std::optional<StringRef> fileOf(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file.getFilename().strref();
  if (auto name = dyn_cast<NameLoc>(loc))
    return fileOf(name.getChildLoc());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location part : fused.getLocations())
      if (std::optional<StringRef> file = fileOf(part))
        return file;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Value infos, tensors and attributes
//===----------------------------------------------------------------------===//

LogicalResult Exporter::setValueInfo(pb::ValueInfoProto *info, StringRef name,
                                     Type type, Attribute dimsAttr,
                                     Location loc) {
  info->set_name(name.str());
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return emitError(loc) << "graph input/output '" << name
                          << "' must be a ranked tensor, got " << type;
  std::optional<int> dtype = onnxDataType(tensor.getElementType());
  if (!dtype)
    return emitError(loc) << "graph input/output '" << name
                          << "' has element type " << tensor.getElementType()
                          << ", which has no ONNX tensor type";
  auto dims = dyn_cast_or_null<ArrayAttr>(dimsAttr);
  if (dims && dims.size() != static_cast<size_t>(tensor.getRank()))
    return emitError(loc) << "qeff.dims of '" << name << "' has " << dims.size()
                          << " entries for a rank-" << tensor.getRank()
                          << " tensor";
  pb::TypeProto_Tensor *t = info->mutable_type()->mutable_tensor_type();
  t->set_elem_type(*dtype);
  pb::TensorShapeProto *shape = t->mutable_shape();
  for (int64_t i = 0; i < tensor.getRank(); ++i) {
    pb::TensorShapeProto_Dimension *dim = shape->add_dim();
    // A named dimension is a specialization symbol even where the IR knows
    // its value (ctx_len): the AI 100 binds it per specialization.
    auto param = dims ? dyn_cast<StringAttr>(dims[i]) : StringAttr();
    if (param && !param.getValue().empty())
      dim->set_dim_param(param.str());
    else if (!tensor.isDynamicDim(i))
      dim->set_dim_value(tensor.getDimSize(i));
  }
  return success();
}

LogicalResult Exporter::elementsToTensor(Operation *op, ElementsAttr attr,
                                         pb::TensorProto &tensor,
                                         std::string &bytes) {
  auto type = cast<ShapedType>(attr.getType());
  std::optional<hf::DType> dtype = dtypeOf(type.getElementType());
  if (!dtype || !type.hasStaticShape())
    return op->emitError("constant of type ")
           << type << " has no ONNX tensor form";
  tensor.set_data_type(onnxDataType(*dtype));
  for (int64_t dim : type.getShape())
    tensor.add_dims(dim);
  size_t elemSize = hf::dtypeSize(*dtype);
  int64_t count = type.getNumElements();
  bytes.clear();
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return op->emitError("constant resource '")
             << resource.getRawHandle().getKey() << "' has no data";
    ArrayRef<char> data = blob->getData();
    if (data.size() != count * elemSize)
      return op->emitError("constant resource holds ")
             << data.size() << " bytes, expected " << count * elemSize;
    bytes.assign(data.begin(), data.end());
    return success();
  }
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return op->emitError("constant attribute kind is not supported by the "
                         "ONNX exporter (use dense<...> or dense_resource)");
  bytes.reserve(count * elemSize);
  if (*dtype == hf::DType::Bool) {
    for (bool b : dense.getValues<bool>())
      bytes.push_back(b ? 1 : 0);
    return success();
  }
  ArrayRef<char> raw = dense.getRawData();
  if (dense.isSplat()) {
    for (int64_t i = 0; i < count; ++i)
      bytes.append(raw.data(), elemSize);
  } else {
    bytes.assign(raw.begin(), raw.end());
  }
  if (bytes.size() != count * elemSize)
    return op->emitError("constant data holds ")
           << bytes.size() << " bytes, expected " << count * elemSize;
  return success();
}

LogicalResult Exporter::convertAttribute(Operation *op, StringRef name,
                                         Attribute attr,
                                         pb::AttributeProto &out) {
  out.set_name(name.str());
  auto ints = [&](auto values) {
    out.set_type(pb::AttributeProto::INTS);
    for (auto v : values)
      out.add_ints(static_cast<int64_t>(v));
  };
  auto floats = [&](auto values) {
    out.set_type(pb::AttributeProto::FLOATS);
    for (auto v : values)
      out.add_floats(static_cast<float>(v));
  };
  if (auto b = dyn_cast<BoolAttr>(attr)) {
    out.set_type(pb::AttributeProto::INT);
    out.set_i(b.getValue() ? 1 : 0);
  } else if (auto i = dyn_cast<IntegerAttr>(attr)) {
    out.set_type(pb::AttributeProto::INT);
    out.set_i(i.getType().isUnsignedInteger() ? i.getValue().getZExtValue()
                                              : i.getValue().getSExtValue());
  } else if (auto f = dyn_cast<FloatAttr>(attr)) {
    out.set_type(pb::AttributeProto::FLOAT);
    out.set_f(static_cast<float>(f.getValueAsDouble()));
  } else if (auto s = dyn_cast<StringAttr>(attr)) {
    out.set_type(pb::AttributeProto::STRING);
    out.set_s(s.str());
  } else if (auto a = dyn_cast<DenseI64ArrayAttr>(attr)) {
    ints(a.asArrayRef());
  } else if (auto a = dyn_cast<DenseI32ArrayAttr>(attr)) {
    ints(a.asArrayRef());
  } else if (auto a = dyn_cast<DenseF32ArrayAttr>(attr)) {
    floats(a.asArrayRef());
  } else if (auto a = dyn_cast<DenseF64ArrayAttr>(attr)) {
    floats(a.asArrayRef());
  } else if (auto t = dyn_cast<TypeAttr>(attr)) {
    std::optional<int> dtype = onnxDataType(t.getValue());
    if (!dtype)
      return op->emitError("attribute '")
             << name << "': type " << t.getValue() << " has no ONNX data type";
    out.set_type(pb::AttributeProto::INT);
    out.set_i(*dtype);
  } else if (auto e = dyn_cast<ElementsAttr>(attr)) {
    out.set_type(pb::AttributeProto::TENSOR);
    std::string bytes;
    if (failed(elementsToTensor(op, e, *out.mutable_t(), bytes)))
      return failure();
    out.mutable_t()->set_raw_data(std::move(bytes));
  } else if (auto array = dyn_cast<ArrayAttr>(attr)) {
    if (llvm::all_of(array, [](Attribute a) { return isa<IntegerAttr>(a); })) {
      out.set_type(pb::AttributeProto::INTS);
      for (Attribute a : array)
        out.add_ints(cast<IntegerAttr>(a).getValue().getSExtValue());
    } else if (llvm::all_of(array,
                            [](Attribute a) { return isa<FloatAttr>(a); })) {
      floats(llvm::map_range(array, [](Attribute a) {
        return cast<FloatAttr>(a).getValueAsDouble();
      }));
    } else if (llvm::all_of(array,
                            [](Attribute a) { return isa<StringAttr>(a); })) {
      out.set_type(pb::AttributeProto::STRINGS);
      for (Attribute a : array)
        out.add_strings(cast<StringAttr>(a).str());
    } else {
      return op->emitError("attribute '")
             << name << "': an array must hold only integers, only floats or "
             << "only strings to map to ONNX";
    }
  } else {
    return op->emitError("attribute '")
           << name << "' (" << attr << ") has no ONNX attribute form";
  }
  return success();
}

} // namespace mlir::qeff::exportimpl
