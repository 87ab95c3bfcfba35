//===- ElementwiseKernels.cpp - Arithmetic, comparison, logic, Cast --------===//
//
// numpy-broadcasting binary ops, Where, Min/Max, Clip, unary math and Cast.
//
//===----------------------------------------------------------------------===//

#include "runtime/host/Broadcast.h"
#include "runtime/host/Kernel.h"
#include "runtime/host/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

namespace qeff::runtime::host {
namespace {

constexpr int64_t kParallelGrain = 1 << 16;

/// out[i] = op(a[i'], b[i'']) with broadcasting; T input type (U of b when
/// it differs), R result type.
template <typename T, typename R, typename U = T, typename Op>
void broadcastBinary(Context &ctx, const Tensor &a, const Tensor &b, Tensor &out,
                     Op op) {
  BroadcastPlan plan(out.shape(), {&a.shape(), &b.shape()});
  const T *pa = a.data<T>();
  const U *pb = b.data<U>();
  R *po = out.data<R>();
  int64_t inner = plan.inner;
  int64_t sa = plan.innerStride[0], sb = plan.innerStride[1];
  int64_t grainRows = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(inner, 1));
  parallelFor(ctx, plan.rows, grainRows, [&](int64_t r0, int64_t r1) {
    plan.forEachRow(r0, r1, [&](int64_t o, const int64_t *offs) {
      const T *x = pa + offs[0];
      const U *y = pb + offs[1];
      R *z = po + o;
      if (sa && sb)
        for (int64_t i = 0; i < inner; ++i)
          z[i] = op(x[i], y[i]);
      else if (sa)
        for (int64_t i = 0; i < inner; ++i)
          z[i] = op(x[i], y[0]);
      else if (sb)
        for (int64_t i = 0; i < inner; ++i)
          z[i] = op(x[0], y[i]);
      else
        for (int64_t i = 0; i < inner; ++i)
          z[i] = op(x[0], y[0]);
    });
  });
}

/// Output buffer for a broadcast op: reuse an input with the output's shape.
Tensor outputFor(Context &ctx, std::vector<Tensor> &in, DType dtype,
                 const Shape &shape) {
  for (auto &t : in)
    if (t.valid() && t.shape() == shape && t.dtype() == dtype && t.uniquelyOwned())
      return ctx.reuseOrAllocate(t, dtype, shape);
  return ctx.allocate(dtype, shape);
}

enum class Arith { Add, Sub, Mul, Div, Pow, Min, Max, Mod };

/// `v` converted to the integer type T, saturating (NaN gives 0): the
/// conversion of an out-of-range double is undefined in C++.
template <typename T> T saturatingInt(double v) {
  if (std::isnan(v))
    return 0;
  if (v >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest()))
    return std::numeric_limits<T>::lowest();
  return static_cast<T>(v);
}

/// base^e for integers, e >= 0, by squaring, wrapping on overflow as the
/// two's complement product would (never a loop of e steps).
template <typename T> T integerPow(T base, int64_t e) {
  using UT = std::make_unsigned_t<T>;
  UT r = 1, b = static_cast<UT>(base);
  for (uint64_t k = static_cast<uint64_t>(e); k; k >>= 1) {
    if (k & 1)
      r = static_cast<UT>(r * b);
    b = static_cast<UT>(b * b);
  }
  return static_cast<T>(r);
}

class ArithKernel : public Kernel {
public:
  ArithKernel(Arith op, const char *name, bool fmod = false)
      : op_(op), name_(name), fmod_(fmod) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(in.size() >= 1, "needs inputs");
    if (in.size() == 1) { // Min/Max of one input
      out[0] = in[0];
      return;
    }
    Tensor acc = in[0];
    for (size_t k = 1; k < in.size(); ++k) {
      const Tensor &b = in[k];
      QEFF_CHECK(present(in, k), "missing input");
      bool powMixed = op_ == Arith::Pow && acc.dtype() != b.dtype();
      QEFF_CHECK(acc.dtype() == b.dtype() || powMixed,
            std::string(name_) + " of " + std::string(dtypeName(acc.dtype())) +
                " and " + std::string(dtypeName(b.dtype())));
      Shape shape = broadcastShapes(acc.shape(), b.shape());
      std::vector<Tensor> cands;
      if (k == 1) {
        cands.push_back(std::move(in[0]));
        acc = Tensor();
        if (!powMixed)
          cands.push_back(std::move(in[1]));
      } else {
        cands.push_back(std::move(acc));
      }
      const Tensor &x = cands[0];
      const Tensor &y = k == 1 && !powMixed ? cands[1] : b;
      Tensor r = outputFor(ctx, cands, x.dtype(), shape);
      if (op_ == Arith::Pow && (powMixed || x.dtype() != DType::Float32)) {
        powMixedTypes(ctx, x, y, r);
      } else if (op_ == Arith::Pow) {
        powFloat(ctx, x, y, r);
      } else {
        dispatchType(x.dtype(), [&](auto tag) {
          using T = decltype(tag);
          if constexpr (std::is_same_v<T, uint8_t>) {
            fail(std::string(name_) + " of bool tensors");
          } else {
            if constexpr (std::is_integral_v<T>)
              if (op_ == Arith::Div || op_ == Arith::Mod) {
                const T *py = y.data<T>();
                for (int64_t i = 0; i < y.numElements(); ++i)
                  QEFF_CHECK(py[i] != 0, "integer division by zero");
              }
            switch (op_) {
            case Arith::Add: broadcastBinary<T, T>(ctx, x, y, r, [](T p, T q) { return wrapAdd(p, q); }); break;
            case Arith::Sub: broadcastBinary<T, T>(ctx, x, y, r, [](T p, T q) { return wrapSub(p, q); }); break;
            case Arith::Mul: broadcastBinary<T, T>(ctx, x, y, r, [](T p, T q) { return wrapMul(p, q); }); break;
            case Arith::Div:
              broadcastBinary<T, T>(ctx, x, y, r, [](T p, T q) {
                if constexpr (std::is_integral_v<T>) // lowest / -1 traps
                  if (q == T(-1))
                    return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(p));
                return T(p / q);
              });
              break;
            case Arith::Min: broadcastBinary<T, T>(ctx, x, y, r, [](T p, T q) {
                if constexpr (std::is_floating_point_v<T>) if (std::isnan(p) || std::isnan(q)) return T(NAN);
                return std::min(p, q); }); break;
            case Arith::Max: broadcastBinary<T, T>(ctx, x, y, r, [](T p, T q) {
                if constexpr (std::is_floating_point_v<T>) if (std::isnan(p) || std::isnan(q)) return T(NAN);
                return std::max(p, q); }); break;
            case Arith::Mod:
              // fmod = 1: the remainder has the dividend's sign (C fmod,
              // C++ %); fmod = 0 (integers only): the divisor's sign, as
              // Python's %. Floats always take fmod (ONNX requires fmod = 1
              // for them; its reference computes np.fmod either way).
              if (fmod_)
                broadcastBinary<T, T>(ctx, x, y, r, [](T p, T q) {
                  if constexpr (std::is_floating_point_v<T>) return T(std::fmod(p, q));
                  else return q == T(-1) ? T(0) : T(p % q); // lowest % -1 traps
                });
              else
                broadcastBinary<T, T>(ctx, x, y, r, [](T p, T q) {
                  if constexpr (std::is_floating_point_v<T>) return T(std::fmod(p, q));
                  else {
                    if (q == T(-1))
                      return T(0);
                    T m = p % q;
                    return (m != 0 && ((m < 0) != (q < 0))) ? T(m + q) : m;
                  }
                });
              break;
            case Arith::Pow:
              break; // powMixedTypes / powFloat above
            }
          }
        });
      }
      acc = std::move(r);
    }
    out[0] = std::move(acc);
  }

private:
  /// Pow where the base is not float or the exponent's type differs from
  /// the base's (ONNX Pow(T, T1): the result has the base's type). A float
  /// base takes the exponent as float; an integer base an integer exponent
  /// by exact squaring (a negative one is an error, as in numpy) and a float
  /// exponent through double pow, truncated toward zero and saturated.
  static void powMixedTypes(Context &ctx, const Tensor &x, const Tensor &y, Tensor &r) {
    QEFF_CHECK(x.dtype() != DType::Bool && y.dtype() != DType::Bool, "Pow of bool tensors");
    if (x.dtype() == DType::Float32) {
      Tensor yf = ctx.allocate(DType::Float32, y.shape());
      auto v = y.toFloatVector();
      std::copy(v.begin(), v.end(), yf.data<float>());
      powFloat(ctx, x, yf, r);
      return;
    }
    dispatchType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, uint8_t>) {
        if (y.dtype() == DType::Float32) {
          broadcastBinary<T, T, float>(ctx, x, y, r, [](T p, float q) {
            return saturatingInt<T>(std::pow(static_cast<double>(p), static_cast<double>(q)));
          });
          return;
        }
        Tensor yi = ctx.allocate(DType::Int64, y.shape());
        auto v = indexValues(y, "exponent");
        for (size_t i = 0; i < v.size(); ++i) {
          if (v[i] < 0)
            fail("Pow: integer base to the negative integer power " + std::to_string(v[i]));
          yi.data<int64_t>()[i] = v[i];
        }
        broadcastBinary<T, T, int64_t>(ctx, x, yi, r,
                                       [](T p, int64_t q) { return integerPow<T>(p, q); });
      }
    });
  }
  static void powFloat(Context &ctx, const Tensor &x, const Tensor &y, Tensor &r) {
    // The common exponents (RMSNorm's x^2, sqrt) as exact fast paths.
    if (y.numElements() == 1) {
      float e = y.data<float>()[0];
      if (e == 2.f) {
        broadcastBinary<float, float>(ctx, x, y, r, [](float p, float) { return p * p; });
        return;
      }
      if (e == 1.f) {
        broadcastBinary<float, float>(ctx, x, y, r, [](float p, float) { return p; });
        return;
      }
      if (e == 0.5f) {
        broadcastBinary<float, float>(ctx, x, y, r, [](float p, float) { return std::sqrt(p); });
        return;
      }
    }
    broadcastBinary<float, float>(ctx, x, y, r, [](float p, float q) { return std::pow(p, q); });
  }
  Arith op_;
  const char *name_;
  bool fmod_;
};

enum class Cmp { Eq, Lt, Gt, Le, Ge, And, Or, Xor };

class CompareKernel : public Kernel {
public:
  explicit CompareKernel(Cmp op) : op_(op) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs two inputs");
    const Tensor &a = in[0], &b = in[1];
    QEFF_CHECK(a.dtype() == b.dtype(), "operands of different types " +
                                      std::string(dtypeName(a.dtype())) + " and " +
                                      std::string(dtypeName(b.dtype())));
    if (op_ >= Cmp::And)
      QEFF_CHECK(a.dtype() == DType::Bool, "logical op needs bool inputs");
    Shape shape = broadcastShapes(a.shape(), b.shape());
    Tensor r = ctx.allocate(DType::Bool, shape);
    dispatchType(a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      switch (op_) {
      case Cmp::Eq: broadcastBinary<T, uint8_t>(ctx, a, b, r, [](T p, T q) { return uint8_t(p == q); }); break;
      case Cmp::Lt: broadcastBinary<T, uint8_t>(ctx, a, b, r, [](T p, T q) { return uint8_t(p < q); }); break;
      case Cmp::Gt: broadcastBinary<T, uint8_t>(ctx, a, b, r, [](T p, T q) { return uint8_t(p > q); }); break;
      case Cmp::Le: broadcastBinary<T, uint8_t>(ctx, a, b, r, [](T p, T q) { return uint8_t(p <= q); }); break;
      case Cmp::Ge: broadcastBinary<T, uint8_t>(ctx, a, b, r, [](T p, T q) { return uint8_t(p >= q); }); break;
      case Cmp::And: broadcastBinary<T, uint8_t>(ctx, a, b, r, [](T p, T q) { return uint8_t(p && q); }); break;
      case Cmp::Or: broadcastBinary<T, uint8_t>(ctx, a, b, r, [](T p, T q) { return uint8_t(p || q); }); break;
      case Cmp::Xor: broadcastBinary<T, uint8_t>(ctx, a, b, r, [](T p, T q) { return uint8_t(!p != !q); }); break;
      }
    });
    out[0] = std::move(r);
  }

private:
  Cmp op_;
};

class WhereKernel : public Kernel {
public:
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1) && present(in, 2), "needs three inputs");
    const Tensor &c = in[0], &x = in[1], &y = in[2];
    QEFF_CHECK(c.dtype() == DType::Bool, "condition must be bool");
    QEFF_CHECK(x.dtype() == y.dtype(), "X and Y of different types");
    Shape shape = broadcastShapes(broadcastShapes(c.shape(), x.shape()), y.shape());
    // In place over X when it is handed over with the output's shape (each
    // element is read before it is written).
    Tensor r = x.shape() == shape ? ctx.reuseOrAllocate(x, x.dtype(), shape)
                                  : ctx.allocate(x.dtype(), shape);
    BroadcastPlan plan(shape, {&c.shape(), &x.shape(), &y.shape()});
    dispatchType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const uint8_t *pc = c.data<uint8_t>();
      const T *px = x.data<T>(), *py = y.data<T>();
      T *po = r.data<T>();
      int64_t inner = plan.inner;
      int64_t sc = plan.innerStride[0], sx = plan.innerStride[1], sy = plan.innerStride[2];
      int64_t grainRows = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(inner, 1));
      parallelFor(ctx, plan.rows, grainRows, [&](int64_t r0, int64_t r1) {
        plan.forEachRow(r0, r1, [&](int64_t o, const int64_t *offs) {
          const uint8_t *c = pc + offs[0];
          const T *a = px + offs[1], *b = py + offs[2];
          T *z = po + o;
          // The attention mask's case (condition and X contiguous, Y a scalar)
          // and the all-contiguous case as plain loops the compiler vectorises.
          if (sc && sx && !sy) {
            T fill = b[0];
            for (int64_t i = 0; i < inner; ++i)
              z[i] = c[i] ? a[i] : fill;
          } else if (sc && sx && sy) {
            for (int64_t i = 0; i < inner; ++i)
              z[i] = c[i] ? a[i] : b[i];
          } else {
            for (int64_t i = 0; i < inner; ++i)
              z[i] = c[i * sc] ? a[i * sx] : b[i * sy];
          }
        });
      });
    });
    out[0] = std::move(r);
  }
};

enum class Unary {
  Sqrt, Reciprocal, Neg, Exp, Log, Tanh, Erf, Sigmoid, Relu, Sin, Cos, Abs,
  Not, Floor, Ceil, Identity, Softplus, Gelu
};

class UnaryKernel : public Kernel {
public:
  explicit UnaryKernel(Unary op) : op_(op) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing input");
    if (op_ == Unary::Identity) {
      out[0] = in[0];
      return;
    }
    Tensor &x = in[0];
    if (op_ == Unary::Not) {
      QEFF_CHECK(x.dtype() == DType::Bool, "Not needs a bool input");
      Tensor r = ctx.reuseOrAllocate(x, DType::Bool, x.shape());
      const uint8_t *p = x.data<uint8_t>();
      uint8_t *q = r.data<uint8_t>();
      for (int64_t i = 0; i < x.numElements(); ++i)
        q[i] = !p[i];
      out[0] = std::move(r);
      return;
    }
    if (x.dtype() != DType::Float32) {
      QEFF_CHECK((op_ == Unary::Neg || op_ == Unary::Abs || op_ == Unary::Relu) &&
                (x.dtype() == DType::Int64 || x.dtype() == DType::Int32),
            "needs a float input, got " + std::string(dtypeName(x.dtype())));
      Tensor r = ctx.reuseOrAllocate(x, x.dtype(), x.shape());
      dispatchType(x.dtype(), [&](auto tag) {
        using T = decltype(tag);
        const T *p = x.data<T>();
        T *q = r.data<T>();
        for (int64_t i = 0; i < x.numElements(); ++i)
          q[i] = op_ == Unary::Neg ? T(-p[i]) : op_ == Unary::Abs ? T(p[i] < 0 ? -p[i] : p[i])
                                                                  : T(p[i] < 0 ? 0 : p[i]);
      });
      out[0] = std::move(r);
      return;
    }
    Tensor r = ctx.reuseOrAllocate(x, DType::Float32, x.shape());
    const float *p = x.data<float>();
    float *q = r.data<float>();
    Unary op = op_;
    parallelFor(ctx, x.numElements(), kParallelGrain / 4, [&](int64_t b, int64_t e) {
      switch (op) {
      case Unary::Sqrt: for (int64_t i = b; i < e; ++i) q[i] = std::sqrt(p[i]); break;
      case Unary::Reciprocal: for (int64_t i = b; i < e; ++i) q[i] = 1.f / p[i]; break;
      case Unary::Neg: for (int64_t i = b; i < e; ++i) q[i] = -p[i]; break;
      case Unary::Exp: vec::exp(p + b, q + b, e - b); break;
      case Unary::Log: for (int64_t i = b; i < e; ++i) q[i] = std::log(p[i]); break;
      case Unary::Tanh: for (int64_t i = b; i < e; ++i) q[i] = std::tanh(p[i]); break;
      case Unary::Erf: for (int64_t i = b; i < e; ++i) q[i] = std::erf(p[i]); break;
      case Unary::Sigmoid: vec::sigmoid(p + b, q + b, e - b); break;
      case Unary::Relu: for (int64_t i = b; i < e; ++i) q[i] = p[i] > 0 ? p[i] : 0.f; break;
      case Unary::Sin: for (int64_t i = b; i < e; ++i) q[i] = std::sin(p[i]); break;
      case Unary::Cos: for (int64_t i = b; i < e; ++i) q[i] = std::cos(p[i]); break;
      case Unary::Abs: for (int64_t i = b; i < e; ++i) q[i] = std::fabs(p[i]); break;
      case Unary::Floor: for (int64_t i = b; i < e; ++i) q[i] = std::floor(p[i]); break;
      case Unary::Ceil: for (int64_t i = b; i < e; ++i) q[i] = std::ceil(p[i]); break;
      case Unary::Softplus: for (int64_t i = b; i < e; ++i) q[i] = std::log1p(std::exp(p[i])); break;
      default: break;
      }
    });
    out[0] = std::move(r);
  }

private:
  Unary op_;
};

class ClipKernel : public Kernel {
public:
  ClipKernel(bool hasMin, float min, bool hasMax, float max)
      : attrMin_(hasMin), attrMax_(hasMax), min_(min), max_(max) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing input");
    Tensor &x = in[0];
    dispatchType(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, uint8_t>) {
        fail("Clip of bool");
      } else {
        T lo = std::numeric_limits<T>::lowest(), hi = std::numeric_limits<T>::max();
        if (attrMin_) lo = T(min_);
        if (attrMax_) hi = T(max_);
        for (int k : {1, 2}) {
          if (!present(in, k))
            continue;
          QEFF_CHECK(in[k].numElements() == 1 && in[k].dtype() == x.dtype(),
                "min/max must be scalars of the input's type");
          (k == 1 ? lo : hi) = in[k].data<T>()[0];
        }
        // ONNX: min > max sets every value to max (min(max(x, lo), hi)).
        if (lo > hi)
          lo = hi;
        Tensor r = ctx.reuseOrAllocate(x, x.dtype(), x.shape());
        const T *p = x.data<T>();
        T *q = r.data<T>();
        if constexpr (std::is_same_v<T, float>) {
          parallelFor(ctx, x.numElements(), kParallelGrain, [&](int64_t b, int64_t e) {
            vec::clip(p + b, q + b, e - b, lo, hi);
          });
        } else {
          for (int64_t i = 0; i < x.numElements(); ++i)
            q[i] = p[i] < lo ? lo : (p[i] > hi ? hi : p[i]);
        }
        out[0] = std::move(r);
      }
    });
  }

private:
  bool attrMin_, attrMax_;
  float min_, max_;
};

class CastKernel : public Kernel {
public:
  explicit CastKernel(DType to) : to_(to) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing input");
    Tensor &x = in[0];
    // f16 and bf16 values are computed as f32 rounded to the type.
    bool rounded = to_ == DType::Float16 || to_ == DType::BFloat16;
    DType internal = rounded ? DType::Float32 : to_;
    if (x.dtype() == internal && !rounded) {
      out[0] = x;
      return;
    }
    Tensor r = ctx.reuseOrAllocate(x, internal, x.shape());
    int64_t n = x.numElements();
    dispatchType(x.dtype(), [&](auto stag) {
      using S = decltype(stag);
      const S *p = x.data<S>();
      dispatchType(internal, [&](auto dtag) {
        using D = decltype(dtag);
        D *q = r.data<D>();
        for (int64_t i = 0; i < n; ++i) {
          if constexpr (std::is_same_v<D, uint8_t>)
            q[i] = p[i] != S(0);
          else if constexpr (std::is_integral_v<D> && std::is_floating_point_v<S>)
            q[i] = std::isfinite(p[i]) ? D(p[i]) : D(0);
          else
            q[i] = D(p[i]);
        }
        if constexpr (std::is_same_v<D, float>) {
          if (to_ == DType::Float16)
            for (int64_t i = 0; i < n; ++i)
              q[i] = roundToHalf(q[i]);
          else if (to_ == DType::BFloat16)
            for (int64_t i = 0; i < n; ++i)
              q[i] = bfloat16ToFloat(floatToBFloat16(q[i]));
        }
      });
    });
    out[0] = std::move(r);
  }

private:
  DType to_;
};

/// x * sigmoid(x) in one pass: a Sigmoid and the Mul reading it and its
/// input, fused by the executor (fp32 numerics only).
class SiluKernel : public Kernel {
public:
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0), "missing input");
    Tensor &x = in[0];
    requireFloat(x, "input");
    Tensor r = ctx.reuseOrAllocate(x, DType::Float32, x.shape());
    const float *p = x.data<float>();
    float *q = r.data<float>();
    parallelFor(ctx, x.numElements(), kParallelGrain / 4,
                [&](int64_t b, int64_t e) { vec::silu(p + b, q + b, e - b); });
    out[0] = std::move(r);
  }
};

/// The rotary embedding's x * cos + RotateHalf(x) * sin, RotateHalf(x) =
/// Concat(-x2, x1) of x's two halves along `axis` (Split, Neg, Concat, two
/// Muls and an Add, fused by the executor; fp32 numerics only), cos and sin
/// broadcast as the Muls broadcast them. Each product and the sum rounded
/// as the nodes round them (no fused multiply-add).
class RotateHalfKernel : public Kernel {
public:
  RotateHalfKernel(int64_t half, int64_t axis) : half_(half), axis_(axis) {}
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1) && present(in, 2), "needs x, cos and sin");
    const Tensor &x = in[0], &c = in[1], &s = in[2];
    requireFloat(x, "x");
    requireFloat(c, "cos");
    requireFloat(s, "sin");
    QEFF_CHECK(x.rank() >= 1, "Split of a scalar");
    int64_t a = normalizeAxis(axis_, x.rank());
    int64_t d = x.dim(a), h = d / 2;
    QEFF_CHECK(d % 2 == 0 && (half_ < 0 || d == 2 * half_),
               "Split of a dim of " + std::to_string(d) + " into " +
                   (half_ < 0 ? std::string("two halves")
                              : "two parts of " + std::to_string(half_)));
    // RotateHalf(x), as Neg and Concat write it.
    Tensor rot = ctx.allocate(DType::Float32, x.shape());
    const float *px = x.data<float>();
    float *pr = rot.data<float>();
    int64_t inner = prod(x.shape(), a + 1, x.rank()), outer = prod(x.shape(), 0, a);
    parallelFor(ctx, outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, d * inner)),
                [&](int64_t o0, int64_t o1) {
                  for (int64_t o = o0; o < o1; ++o) {
                    const float *xo = px + o * d * inner;
                    float *ro = pr + o * d * inner;
                    for (int64_t e = 0; e < h * inner; ++e) {
                      ro[e] = -xo[h * inner + e];
                      ro[h * inner + e] = xo[e];
                    }
                  }
                });
    Shape shape = broadcastShapes(broadcastShapes(x.shape(), c.shape()), s.shape());
    Tensor r = ctx.allocate(DType::Float32, shape);
    BroadcastPlan plan(shape, {&x.shape(), &c.shape(), &s.shape()});
    const float *pc = c.data<float>(), *ps = s.data<float>();
    float *pz = r.data<float>();
    int64_t run = plan.inner;
    const int64_t *st = plan.innerStride.data();
    parallelFor(ctx, plan.rows, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(run, 1)),
                [&](int64_t r0, int64_t r1) {
                  plan.forEachRow(r0, r1, [&](int64_t o, const int64_t *offs) {
                    rotateRun(px + offs[0], pr + offs[0], st[0], pc + offs[1], st[1],
                              ps + offs[2], st[2], pz + o, run);
                  });
                });
    out[0] = std::move(r);
  }

private:
  /// z = x * c + r * s over a run (strides 0 or 1), each operation rounded
  /// on its own.
  static void rotateRun(const float *x, const float *r, int64_t ix, const float *c, int64_t ic,
                        const float *s, int64_t is, float *z, int64_t n) {
#pragma clang fp contract(off)
    if (ix == 1 && ic == 1 && is == 1) {
      for (int64_t j = 0; j < n; ++j) {
        float a = x[j] * c[j];
        float b = r[j] * s[j];
        z[j] = a + b;
      }
      return;
    }
    for (int64_t j = 0; j < n; ++j) {
      float a = x[j * ix] * c[j * ic];
      float b = r[j * ix] * s[j * is];
      z[j] = a + b;
    }
  }

  int64_t half_, axis_;
};

/// x / sqrt(mean(x * x over the last axis) + eps) (a fused RMSNorm: Mul,
/// ReduceMean, Add, Sqrt, Div), each step rounded as the nodes round it:
/// the products, the sum in order, the mean, eps, the root, the quotients.
class RmsNormKernel : public Kernel {
public:
  void run(Context &ctx, std::vector<Tensor> &in, std::vector<Tensor> &out) override {
    QEFF_CHECK(present(in, 0) && present(in, 1), "needs x and eps");
    Tensor &x = in[0];
    requireFloat(x, "x");
    requireFloat(in[1], "eps");
    QEFF_CHECK(in[1].numElements() == 1, "eps must have one element (internal error)");
    QEFF_CHECK(x.rank() >= 1, "ReduceMean over axis -1 of a scalar");
    int64_t n = x.shape().back();
    QEFF_CHECK(n > 0, "ReduceMean over an empty axis");
    float eps = in[1].data<float>()[0];
    Tensor r = ctx.reuseOrAllocate(x, DType::Float32, x.shape());
    const float *p = x.data<float>();
    float *q = r.data<float>();
    parallelFor(ctx, x.numElements() / n, std::max<int64_t>(1, kParallelGrain / n),
                [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        const float *xr = p + row * n;
        float sum = 0.f;
        for (int64_t j = 0; j < n; ++j) {
          float sq = xr[j] * xr[j];
          sum += sq;
        }
        float mean = sum / float(n);
        float root = std::sqrt(mean + eps);
        float *yr = q + row * n;
        for (int64_t j = 0; j < n; ++j)
          yr[j] = xr[j] / root;
      }
    });
    out[0] = std::move(r);
  }
};

template <typename K, typename... Args> KernelFactory simple(Args... args) {
  return [=](const onnx::NodeProto &, const Attrs &attrs) -> std::unique_ptr<Kernel> {
    attrs.allowOnly({});
    return std::make_unique<K>(args...);
  };
}

} // namespace

std::unique_ptr<Kernel> makeSiluKernel() { return std::make_unique<SiluKernel>(); }
std::unique_ptr<Kernel> makeRotateHalfKernel(int64_t half, int64_t axis) {
  return std::make_unique<RotateHalfKernel>(half, axis);
}
std::unique_ptr<Kernel> makeRmsNormKernel() { return std::make_unique<RmsNormKernel>(); }

void registerElementwiseKernels(KernelRegistry &r) {
  r["Add"] = simple<ArithKernel>(Arith::Add, "Add");
  r["Sub"] = simple<ArithKernel>(Arith::Sub, "Sub");
  r["Mul"] = simple<ArithKernel>(Arith::Mul, "Mul");
  r["Div"] = simple<ArithKernel>(Arith::Div, "Div");
  r["Pow"] = simple<ArithKernel>(Arith::Pow, "Pow");
  r["Min"] = simple<ArithKernel>(Arith::Min, "Min");
  r["Max"] = simple<ArithKernel>(Arith::Max, "Max");
  r["Mod"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"fmod"});
    int64_t fmod = a.getInt("fmod", 0);
    QEFF_CHECK(fmod == 0 || fmod == 1, "fmod must be 0 or 1, got " + std::to_string(fmod));
    return std::make_unique<ArithKernel>(Arith::Mod, "Mod", fmod == 1);
  };
  r["Equal"] = simple<CompareKernel>(Cmp::Eq);
  r["Less"] = simple<CompareKernel>(Cmp::Lt);
  r["Greater"] = simple<CompareKernel>(Cmp::Gt);
  r["LessOrEqual"] = simple<CompareKernel>(Cmp::Le);
  r["GreaterOrEqual"] = simple<CompareKernel>(Cmp::Ge);
  r["And"] = simple<CompareKernel>(Cmp::And);
  r["Or"] = simple<CompareKernel>(Cmp::Or);
  r["Xor"] = simple<CompareKernel>(Cmp::Xor);
  r["Where"] = simple<WhereKernel>();
  const std::pair<const char *, Unary> unary[] = {
      {"Sqrt", Unary::Sqrt}, {"Reciprocal", Unary::Reciprocal}, {"Neg", Unary::Neg},
      {"Exp", Unary::Exp}, {"Log", Unary::Log}, {"Tanh", Unary::Tanh},
      {"Erf", Unary::Erf}, {"Sigmoid", Unary::Sigmoid}, {"Relu", Unary::Relu},
      {"Sin", Unary::Sin}, {"Cos", Unary::Cos}, {"Abs", Unary::Abs},
      {"Not", Unary::Not}, {"Floor", Unary::Floor}, {"Ceil", Unary::Ceil},
      {"Identity", Unary::Identity}, {"Softplus", Unary::Softplus}};
  for (auto [name, op] : unary)
    r[name] = simple<UnaryKernel>(op);
  r["Clip"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"min", "max"});
    return std::make_unique<ClipKernel>(a.has("min"), a.getFloat("min", 0), a.has("max"),
                                        a.getFloat("max", 0));
  };
  r["Cast"] = [](const onnx::NodeProto &, const Attrs &a) -> std::unique_ptr<Kernel> {
    a.allowOnly({"to", "saturate"});
    QEFF_CHECK(a.has("to"), "missing attribute 'to'");
    return std::make_unique<CastKernel>(dtypeFromOnnx(static_cast<int>(a.getInt("to", 0))));
  };
}

} // namespace qeff::runtime::host
