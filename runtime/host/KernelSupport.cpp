//===- KernelSupport.cpp - Arena, attributes and shared kernel helpers ----===//

#include "runtime/host/Kernel.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <cstring>
#include <thread>

namespace qeff::runtime::host {

void fail(const std::string &message) { throw KernelError(message); }

//===----------------------------------------------------------------------===//
// Arena
//===----------------------------------------------------------------------===//

namespace {
/// Buffers from this size on are mapped on their own with transparent huge
/// pages asked for: a prefill's first layer writes ~11 MB of fresh
/// activations (1.1B, 128 tokens), and in this VM each 4 KiB page's first
/// write costs ~10 us of fault.
constexpr size_t kHugeBufferBytes = size_t(2) << 20;

void *allocateBuffer(size_t capacity) {
  if (capacity < kHugeBufferBytes)
    return std::aligned_alloc(64, capacity);
  void *p = mmap(nullptr, capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    return nullptr;
#ifdef MADV_HUGEPAGE
  madvise(p, capacity, MADV_HUGEPAGE);
#endif
  return p;
}

void freeBuffer(void *p, size_t capacity) {
  if (capacity < kHugeBufferBytes)
    std::free(p);
  else
    munmap(p, capacity);
}
} // namespace

Arena::~Arena() {
  for (auto &[size, p] : free_)
    freeBuffer(p, size);
}

Tensor Arena::allocate(DType dtype, Shape shape) {
  size_t bytes = byteSize(dtype, shape); // checked: throws SizeError
  QEFF_CHECK(maxBytes_ == 0 || bytes <= maxBytes_,
        "a tensor " + std::string(dtypeName(dtype)) + " " + shapeString(shape) + " of " +
            std::to_string(bytes) + " bytes is over the session's limit of " +
            std::to_string(maxBytes_) + " (maxTensorBytes)");
  size_t capacity = std::max<size_t>(64, (bytes + 63) / 64 * 64);
  void *p = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.lower_bound(capacity);
    // Accept a pooled buffer up to twice the request, so a small value does
    // not pin a big buffer.
    if (it != free_.end() && it->first <= 2 * capacity) {
      capacity = it->first;
      p = it->second;
      pooledBytes_ -= capacity;
      free_.erase(it);
    }
  }
  if (!p) {
    p = allocateBuffer(capacity);
    if (!p)
      throw std::bad_alloc();
  }
  auto self = shared_from_this();
  return Tensor::view(
      dtype, std::move(shape), p,
      std::shared_ptr<void>(p, [self, capacity](void *q) { self->release(q, capacity); }),
      /*readOnly=*/false);
}

void Arena::release(void *p, size_t capacity) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.emplace(capacity, p);
  pooledBytes_ += capacity;
}

Tensor Context::reuseOrAllocate(const Tensor &input, DType dtype, Shape shape) {
  if (input.valid() && input.uniquelyOwned() &&
      input.byteSize() == byteSize(dtype, shape) &&
      input.dtype() != DType::Float16 && input.dtype() != DType::BFloat16)
    return Tensor::view(dtype, std::move(shape),
                        const_cast<void *>(input.rawData()), input.owner(),
                        /*readOnly=*/false);
  return allocate(dtype, std::move(shape));
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

Attrs::Attrs(const onnx::NodeProto &node) : node_(node) {}

const onnx::AttributeProto *Attrs::find(const std::string &name) const {
  for (const auto &a : node_.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

bool Attrs::has(const std::string &name) const { return find(name) != nullptr; }

int64_t Attrs::getInt(const std::string &name, int64_t dflt) const {
  const auto *a = find(name);
  if (!a)
    return dflt;
  QEFF_CHECK(a->type() == onnx::AttributeProto::INT || (a->type() == 0 && a->has_i()),
        "attribute '" + name + "' must be an int");
  return a->i();
}

float Attrs::getFloat(const std::string &name, float dflt) const {
  const auto *a = find(name);
  if (!a)
    return dflt;
  QEFF_CHECK(a->type() == onnx::AttributeProto::FLOAT || (a->type() == 0 && a->has_f()),
        "attribute '" + name + "' must be a float");
  return a->f();
}

std::string Attrs::getString(const std::string &name,
                             const std::string &dflt) const {
  const auto *a = find(name);
  if (!a)
    return dflt;
  QEFF_CHECK(a->type() == onnx::AttributeProto::STRING || (a->type() == 0 && a->has_s()),
        "attribute '" + name + "' must be a string");
  return a->s();
}

std::vector<int64_t> Attrs::getInts(const std::string &name) const {
  const auto *a = find(name);
  if (!a)
    return {};
  QEFF_CHECK(a->type() == onnx::AttributeProto::INTS || a->type() == 0,
        "attribute '" + name + "' must be a list of ints");
  return {a->ints().begin(), a->ints().end()};
}

const onnx::TensorProto *Attrs::getTensor(const std::string &name) const {
  const auto *a = find(name);
  if (!a)
    return nullptr;
  QEFF_CHECK(a->type() == onnx::AttributeProto::TENSOR || a->has_t(),
        "attribute '" + name + "' must be a tensor");
  return &a->t();
}

void Attrs::allowOnly(std::initializer_list<const char *> known) const {
  for (const auto &a : node_.attribute()) {
    bool ok = false;
    for (const char *k : known)
      ok |= a.name() == k;
    QEFF_CHECK(ok, "unsupported attribute '" + a.name() + "'");
  }
}

//===----------------------------------------------------------------------===//
// Registry, dtypes, constants
//===----------------------------------------------------------------------===//

const KernelRegistry &kernelRegistry() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    registerElementwiseKernels(r);
    registerTensorKernels(r);
    registerIndexKernels(r);
    registerNNKernels(r);
    return r;
  }();
  return registry;
}

DType dtypeFromOnnx(int t) {
  switch (t) {
  case onnx::TensorProto::FLOAT: return DType::Float32;
  case onnx::TensorProto::FLOAT16: return DType::Float16;
  case onnx::TensorProto::INT64: return DType::Int64;
  case onnx::TensorProto::INT32: return DType::Int32;
  case onnx::TensorProto::BOOL: return DType::Bool;
  case onnx::TensorProto::BFLOAT16: return DType::BFloat16;
  default: break;
  }
  const char *name = onnx::TensorProto::DataType_IsValid(t)
                         ? onnx::TensorProto::DataType_Name(
                               static_cast<onnx::TensorProto::DataType>(t))
                               .c_str()
                         : "?";
  fail(std::string("unsupported element type ") + name + " (" + std::to_string(t) +
       "); the host device handles FLOAT, FLOAT16, BFLOAT16, INT64, INT32, BOOL");
}

Tensor tensorFromProto(const onnx::TensorProto &p) {
  DType dt = dtypeFromOnnx(p.data_type());
  Shape shape(p.dims().begin(), p.dims().end());
  int64_t n = numElements(shape);
  QEFF_CHECK(p.data_location() != onnx::TensorProto::EXTERNAL,
        "tensor '" + p.name() + "' has external data (internal error)");
  bool twoByte = dt == DType::Float16 || dt == DType::BFloat16;
  DType internal = twoByte ? DType::Float32 : dt;
  // The data present is checked against the shape before allocating for it.
  if (p.has_raw_data()) {
    const std::string &raw = p.raw_data();
    QEFF_CHECK(raw.size() == byteSize(dt, shape),
          "tensor '" + p.name() + "': raw_data has " + std::to_string(raw.size()) +
              " bytes, expected " + std::to_string(byteSize(dt, shape)));
  }
  int64_t values = p.has_raw_data() ? n
                   : dt == DType::Float32 ? p.float_data_size()
                   : dt == DType::Int64   ? p.int64_data_size()
                                          : p.int32_data_size();
  QEFF_CHECK(values == n, "tensor '" + p.name() + "' has " + std::to_string(values) +
                         " values, expected " + std::to_string(n));
  Tensor t = Tensor::empty(internal, shape);
  if (p.has_raw_data()) {
    const std::string &raw = p.raw_data();
    if (twoByte) {
      for (int64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, raw.data() + 2 * i, 2);
        t.data<float>()[i] = dt == DType::Float16 ? halfToFloat(h) : bfloat16ToFloat(h);
      }
    } else if (n) {
      std::memcpy(t.rawData(), raw.data(), raw.size());
    }
    return t;
  }
  auto need = [&](int64_t have) {
    QEFF_CHECK(have == n, "tensor '" + p.name() + "' has " + std::to_string(have) +
                         " values, expected " + std::to_string(n));
  };
  switch (dt) {
  case DType::Float32:
    need(p.float_data_size());
    std::copy(p.float_data().begin(), p.float_data().end(), t.data<float>());
    break;
  case DType::Float16:
    need(p.int32_data_size());
    for (int64_t i = 0; i < n; ++i)
      t.data<float>()[i] = halfToFloat(static_cast<uint16_t>(p.int32_data(i)));
    break;
  case DType::BFloat16:
    need(p.int32_data_size());
    for (int64_t i = 0; i < n; ++i)
      t.data<float>()[i] = bfloat16ToFloat(static_cast<uint16_t>(p.int32_data(i)));
    break;
  case DType::Int64:
    need(p.int64_data_size());
    std::copy(p.int64_data().begin(), p.int64_data().end(), t.data<int64_t>());
    break;
  case DType::Int32:
    need(p.int32_data_size());
    std::copy(p.int32_data().begin(), p.int32_data().end(), t.data<int32_t>());
    break;
  case DType::Bool:
    need(p.int32_data_size());
    for (int64_t i = 0; i < n; ++i)
      t.data<uint8_t>()[i] = p.int32_data(i) != 0;
    break;
  }
  return t;
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

int64_t normalizeAxis(int64_t axis, int64_t rank, const char *what) {
  int64_t a = axis < 0 ? axis + rank : axis;
  // [-rank, rank): none for a scalar, which no op taking an axis accepts
  // (ONNX); the callers index the input's dims with the result.
  QEFF_CHECK(a >= 0 && a < rank,
        std::string(what) + " " + std::to_string(axis) + " out of range for rank " +
            std::to_string(rank));
  return a;
}

Shape broadcastShapes(const Shape &a, const Shape &b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    QEFF_CHECK(da == db || da == 1 || db == 1,
          "shapes " + shapeString(a) + " and " + shapeString(b) +
              " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

std::vector<int64_t> broadcastStrides(const Shape &shape, const Shape &out) {
  std::vector<int64_t> s(out.size(), 0);
  auto own = stridesOf(shape);
  size_t off = out.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    s[i + off] = shape[i] == 1 ? 0 : own[i];
  return s;
}

std::vector<int64_t> indexValues(const Tensor &t, const char *what) {
  QEFF_CHECK(t.dtype() == DType::Int64 || t.dtype() == DType::Int32,
        std::string(what) + " must be int64 or int32, got " +
            std::string(dtypeName(t.dtype())));
  return t.toInt64Vector();
}

void requireFloat(const Tensor &t, const char *what) {
  QEFF_CHECK(t.dtype() == DType::Float32,
        std::string(what) + " must be a float tensor, got " +
            std::string(dtypeName(t.dtype())));
}

namespace {

/// Worker threads kept for the life of the process: parallelFor used to start
/// and join fresh std::threads on every call, which costs more than many of
/// the loops it splits. One job at a time; a caller that finds the pool busy
/// (another device running concurrently) runs its loop inline.
///
/// Hand-offs spin before they sleep: a decode step runs ~200 products a few
/// tens of microseconds apart, and waking a sleeping thread (futex, and in a
/// VM an interrupt to an idle virtual CPU) cost ~7 us a product, more than
/// the k/v projections' own work. An idle worker polls for the next job for
/// up to kSpin before it blocks; the caller polls for the last chunks the
/// same way. Outside a burst of jobs the pool sleeps as before.
class ThreadPool {
public:
  static ThreadPool &instance() {
    static ThreadPool *pool = new ThreadPool; // never destroyed: workers may outlive statics
    return *pool;
  }

  /// Runs fn over `chunks` chunks of [0, n) on up to `threads` threads
  /// (the caller is one of them). Returns false when the pool is busy.
  bool run(int64_t threads, int64_t n, int64_t chunk,
           const std::function<void(int64_t, int64_t)> &fn) {
    std::unique_lock<std::mutex> busy(runMutex_, std::try_to_lock);
    if (!busy.owns_lock())
      return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (static_cast<int64_t>(workers_.size()) < threads - 1)
        workers_.emplace_back([this] { workerLoop(); });
    }
    // The job, then the slots, then its number: a worker that takes a slot
    // sees the job.
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    error_ = nullptr;
    next_.store(0);
    pending_.store((n + chunk - 1) / chunk);
    wanted_.store(threads - 1);
    published_.fetch_add(1);
    if (sleepers_.load() > 0) {
      { std::lock_guard<std::mutex> lock(mutex_); }
      wake_.notify_all();
    }
    work();
    // Every chunk is taken: no worker may enter now. Wait for those inside.
    wanted_.store(0);
    if (!spinUntil([this] { return finished(); })) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [this] { return finished(); });
    }
    fn_ = nullptr;
    if (error_)
      std::rethrow_exception(error_);
    return true;
  }

private:
  static constexpr std::chrono::microseconds kSpin{200};

  /// Polls `ready` for up to kSpin; true when it became true.
  template <typename Ready> static bool spinUntil(Ready ready) {
    auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (unsigned i = 1;; ++i) {
      if (ready())
        return true;
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline)
        return ready();
    }
  }

  bool finished() const { return pending_.load() == 0 && active_.load() == 0; }

  /// Called by whoever may have made finished() true.
  void notifyIfFinished() {
    if (!finished())
      return;
    { std::lock_guard<std::mutex> lock(mutex_); } // a caller between check and wait
    done_.notify_all();
  }

  void workerLoop() {
    uint64_t idleAt = 0;
    for (;;) {
      if (!spinUntil([&] { return published_.load() != idleAt; })) {
        std::unique_lock<std::mutex> lock(mutex_);
        sleepers_.fetch_add(1);
        wake_.wait(lock, [&] { return published_.load() != idleAt; });
        sleepers_.fetch_sub(1);
      }
      uint64_t job = published_.load();
      // Counted as active before taking a slot: the caller does not return
      // (and its job's state stays put) while a worker may be entering.
      active_.fetch_add(1);
      int64_t w = wanted_.load();
      while (w > 0 && !wanted_.compare_exchange_weak(w, w - 1)) {
      }
      if (w > 0)
        work();
      idleAt = job;
      active_.fetch_sub(1);
      notifyIfFinished();
    }
  }

  /// Takes chunks until none is left.
  void work() {
    for (;;) {
      int64_t c = next_.fetch_add(1);
      int64_t b = c * chunk_;
      if (b >= n_)
        return;
      try {
        (*fn_)(b, std::min(n_, b + chunk_));
      } catch (...) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!error_)
          error_ = std::current_exception();
      }
      if (pending_.fetch_sub(1) == 1)
        notifyIfFinished();
    }
  }

  std::mutex runMutex_;
  std::mutex mutex_; ///< workers_, error_, and the sleeps below
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  // The job: written by the caller before wanted_ opens it.
  const std::function<void(int64_t, int64_t)> *fn_ = nullptr;
  int64_t n_ = 0, chunk_ = 1;
  std::exception_ptr error_;
  /// The job's number; slots left for workers; chunks not finished; workers
  /// inside a job; workers asleep on wake_; the next chunk.
  std::atomic<uint64_t> published_{0};
  std::atomic<int64_t> wanted_{0}, pending_{0}, active_{0}, sleepers_{0}, next_{0};
};

} // namespace

namespace {

/// Runs fn over [0, n) in `chunks` equal chunks on `threads` threads of the
/// pool (inline with one thread or when the pool is busy).
void runChunks(int64_t threads, int64_t chunks, int64_t n,
               const std::function<void(int64_t, int64_t)> &fn) {
  if (threads <= 1) {
    if (n > 0)
      fn(0, n);
    return;
  }
  if (!ThreadPool::instance().run(threads, n, (n + chunks - 1) / chunks, fn))
    fn(0, n);
}

} // namespace

void parallelFor(const Context &ctx, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn) {
  int64_t threads = std::min<int64_t>(ctx.numThreads, grain > 0 ? n / grain : 1);
  runChunks(threads, threads, n, fn);
}

void parallelForBalanced(const Context &ctx, int64_t n,
                         const std::function<void(int64_t, int64_t)> &fn, int64_t perThread) {
  int64_t threads = std::min<int64_t>(ctx.numThreads, n);
  runChunks(threads, std::min<int64_t>(n, threads * std::max<int64_t>(1, perThread)), n, fn);
}

} // namespace qeff::runtime::host
