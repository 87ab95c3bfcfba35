//===- ONNXBuilder.cpp - emitting onnx dialect ops tersely ----------------===//
//
// Part of qeff.
//
//===----------------------------------------------------------------------===//

#include "lowering/ToONNX/ONNXBuilder.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"

using namespace mlir;
using namespace mlir::qeff;

RankedTensorType ONNXBuilder::tensor(ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}

ArrayRef<int64_t> ONNXBuilder::shape(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getShape();
}

Type ONNXBuilder::elementType(Value v) {
  return llvm::cast<RankedTensorType>(v.getType()).getElementType();
}

SmallVector<int64_t> ONNXBuilder::broadcast(ArrayRef<int64_t> a,
                                            ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == 1)
      out[i] = db;
    else if (db == 1)
      out[i] = da;
    else if (ShapedType::isDynamic(da))
      out[i] = db;
    else
      out[i] = da;
  }
  return out;
}

Value ONNXBuilder::op(StringRef opType, ValueRange operands, Type resultType,
                      ArrayRef<NamedAttribute> attrs) {
  return opN(opType, operands, TypeRange{resultType}, attrs).front();
}

SmallVector<Value> ONNXBuilder::opN(StringRef opType, ValueRange operands,
                                    TypeRange resultTypes,
                                    ArrayRef<NamedAttribute> attrs) {
  OperationState state(loc, ("onnx." + opType).str());
  state.addOperands(operands);
  state.addTypes(resultTypes);
  state.addAttributes(attrs);
  Operation *created = b.create(state);
  return SmallVector<Value>(created->getResults());
}

NamedAttribute ONNXBuilder::attr(StringRef name, int64_t value) {
  return b.getNamedAttr(name, b.getI64IntegerAttr(value));
}

NamedAttribute ONNXBuilder::attrF(StringRef name, float value) {
  return b.getNamedAttr(name, b.getF32FloatAttr(value));
}

NamedAttribute ONNXBuilder::attrInts(StringRef name, ArrayRef<int64_t> values) {
  return b.getNamedAttr(name, b.getDenseI64ArrayAttr(values));
}

Value ONNXBuilder::i64s(ArrayRef<int64_t> values, ArrayRef<int64_t> shape) {
  auto type = tensor(shape, b.getI64Type());
  return op("Constant", {}, type,
            {b.getNamedAttr("value", DenseElementsAttr::get(type, values))});
}

Value ONNXBuilder::i64s(ArrayRef<int64_t> values) {
  return i64s(values, {static_cast<int64_t>(values.size())});
}

Value ONNXBuilder::i64Scalar(int64_t value) { return i64s({value}, {}); }

Value ONNXBuilder::f32s(ArrayRef<float> values, ArrayRef<int64_t> shape) {
  auto type = tensor(shape, b.getF32Type());
  return op("Constant", {}, type,
            {b.getNamedAttr("value", DenseElementsAttr::get(type, values))});
}

Value ONNXBuilder::f32Scalar(float value) { return f32s({value}, {}); }

Value ONNXBuilder::bools(ArrayRef<bool> values, ArrayRef<int64_t> shape) {
  auto type = tensor(shape, b.getI1Type());
  return op("Constant", {}, type,
            {b.getNamedAttr("value", DenseElementsAttr::get(type, values))});
}

Value ONNXBuilder::binary(StringRef opType, Value x, Value y) {
  return op(opType, {x, y},
            tensor(broadcast(shape(x), shape(y)), elementType(x)));
}

Value ONNXBuilder::compare(StringRef opType, Value x, Value y) {
  return op(opType, {x, y},
            tensor(broadcast(shape(x), shape(y)), b.getI1Type()));
}

Value ONNXBuilder::matmul(Value x, Value y) {
  ArrayRef<int64_t> a = shape(x), c = shape(y);
  SmallVector<int64_t> batch =
      broadcast(a.drop_back(2), c.size() >= 2 ? c.drop_back(2)
                                              : ArrayRef<int64_t>{});
  batch.push_back(a[a.size() - 2]);
  batch.push_back(c.back());
  return op("MatMul", {x, y}, tensor(batch, elementType(x)));
}

Value ONNXBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(shape(x)[p]);
  return op("Transpose", {x}, tensor(out, elementType(x)),
            {attrInts("perm", perm)});
}

Value ONNXBuilder::unsqueeze(Value x, ArrayRef<int64_t> axes) {
  SmallVector<int64_t> out(shape(x));
  SmallVector<int64_t> sorted(axes);
  int64_t rank = out.size() + axes.size();
  for (int64_t &a : sorted)
    if (a < 0)
      a += rank;
  llvm::sort(sorted);
  for (int64_t a : sorted)
    out.insert(out.begin() + a, 1);
  return op("Unsqueeze", {x, i64s(axes)}, tensor(out, elementType(x)));
}

Value ONNXBuilder::reshape(Value x, ArrayRef<int64_t> shapeSpec,
                           ArrayRef<int64_t> resultShape) {
  return op("Reshape", {x, i64s(shapeSpec)},
            tensor(resultShape, elementType(x)));
}

Value ONNXBuilder::concat(ValueRange xs, int64_t axis) {
  SmallVector<int64_t> out(shape(xs.front()));
  int64_t a = axis < 0 ? axis + out.size() : axis;
  int64_t total = 0;
  for (Value x : xs) {
    int64_t d = shape(x)[a];
    total = (ShapedType::isDynamic(d) || ShapedType::isDynamic(total))
                ? ShapedType::kDynamic
                : total + d;
  }
  out[a] = total;
  return op("Concat", xs, tensor(out, elementType(xs.front())),
            {attr("axis", axis)});
}

SmallVector<Value> ONNXBuilder::split(Value x, ArrayRef<int64_t> sizes,
                                      int64_t axis) {
  SmallVector<Type> types;
  int64_t a = axis < 0 ? axis + shape(x).size() : axis;
  for (int64_t size : sizes) {
    SmallVector<int64_t> out(shape(x));
    out[a] = size;
    types.push_back(tensor(out, elementType(x)));
  }
  return opN("Split", {x, i64s(sizes)}, types, {attr("axis", axis)});
}

Value ONNXBuilder::where(Value cond, Value x, Value y) {
  SmallVector<int64_t> out =
      broadcast(broadcast(shape(cond), shape(x)), shape(y));
  return op("Where", {cond, x, y}, tensor(out, elementType(x)));
}

Value ONNXBuilder::cast(Value x, Type elementType) {
  return op("Cast", {x}, tensor(shape(x), elementType),
            {b.getNamedAttr("to", TypeAttr::get(elementType))});
}
