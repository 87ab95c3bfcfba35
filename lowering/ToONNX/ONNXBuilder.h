//===- ONNXBuilder.h - emitting onnx dialect ops tersely --------*- C++ -*-===//
//
// Part of qeff. The conversion patterns build small ONNX subgraphs; this
// helper keeps them readable: `b.op("MatMul", {x, w}, type)`, constants from
// plain values, result types from numpy broadcasting. Every op is created
// through its registered name so the patterns read like the ONNX they emit.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_LOWERING_TOONNX_ONNXBUILDER_H
#define QEFF_LOWERING_TOONNX_ONNXBUILDER_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::qeff {

class ONNXBuilder {
public:
  ONNXBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  /// `onnx.<opType>` with one result.
  Value op(StringRef opType, ValueRange operands, Type resultType,
           ArrayRef<NamedAttribute> attrs = {});
  /// `onnx.<opType>` with several results.
  SmallVector<Value> opN(StringRef opType, ValueRange operands,
                         TypeRange resultTypes,
                         ArrayRef<NamedAttribute> attrs = {});

  // Attributes.
  NamedAttribute attr(StringRef name, int64_t value);
  NamedAttribute attrF(StringRef name, float value);
  NamedAttribute attrInts(StringRef name, ArrayRef<int64_t> values);

  // Constants (onnx.Constant).
  Value i64s(ArrayRef<int64_t> values);            ///< 1-D int64
  Value i64s(ArrayRef<int64_t> values, ArrayRef<int64_t> shape);
  Value i64Scalar(int64_t value);                  ///< 0-D int64
  Value f32Scalar(float value);                    ///< 0-D float32
  Value f32s(ArrayRef<float> values, ArrayRef<int64_t> shape);
  Value bools(ArrayRef<bool> values, ArrayRef<int64_t> shape);

  // Common ops; result types follow ONNX's rules.
  Value add(Value x, Value y) { return binary("Add", x, y); }
  Value sub(Value x, Value y) { return binary("Sub", x, y); }
  Value mul(Value x, Value y) { return binary("Mul", x, y); }
  Value div(Value x, Value y) { return binary("Div", x, y); }
  Value binary(StringRef opType, Value x, Value y);
  /// Comparison / logic: i1 result of the broadcast shape.
  Value compare(StringRef opType, Value x, Value y);
  Value unary(StringRef opType, Value x) {
    return op(opType, {x}, x.getType());
  }
  Value matmul(Value x, Value y);
  Value transpose(Value x, ArrayRef<int64_t> perm);
  Value unsqueeze(Value x, ArrayRef<int64_t> axes);
  /// ONNX Reshape with a constant shape (0 copies the input dim, -1 infers);
  /// `resultShape` is the static knowledge of the result.
  Value reshape(Value x, ArrayRef<int64_t> shapeSpec,
                ArrayRef<int64_t> resultShape);
  Value concat(ValueRange xs, int64_t axis);
  SmallVector<Value> split(Value x, ArrayRef<int64_t> sizes, int64_t axis);
  Value where(Value cond, Value x, Value y);
  Value cast(Value x, Type elementType);

  static RankedTensorType tensor(ArrayRef<int64_t> shape, Type element);
  static ArrayRef<int64_t> shape(Value v);
  static Type elementType(Value v);
  /// numpy broadcasting of two static-or-dynamic shapes.
  static SmallVector<int64_t> broadcast(ArrayRef<int64_t> a,
                                        ArrayRef<int64_t> b);

  OpBuilder &builder() { return b; }
  Location location() const { return loc; }

private:
  OpBuilder &b;
  Location loc;
};

} // namespace mlir::qeff

#endif // QEFF_LOWERING_TOONNX_ONNXBUILDER_H
