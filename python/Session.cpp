//===- Session.cpp - qeff._qeff.Session: run and generate -----------------===//
//
// Part of qeff. qeff::runtime::Session and the Generator over it. Feeds are
// read in place (a read-only view of the numpy buffer, kept alive by a
// reference to the array) when their dtype and layout allow, and outputs are
// numpy arrays over the session's own buffers (read-only; the session never
// writes a buffer that someone else still holds). Runs and generation release
// the GIL; one call at a time uses a session (a second one fails at once
// rather than deadlock a thread that is iterating a stream of the first).
//
//===----------------------------------------------------------------------===//

#include "python/Bindings.h"

#include "frontend/HF/GenerationConfig.h"
#include "frontend/Tokenizer/Tokenizer.h"
#include "lowering/Driver/PrecisionList.h"
#include "qeff/runtime/Session.h"
#include "runtime/generation/Generator.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <variant>

namespace qeff::python {

namespace rt = qeff::runtime;

namespace {

/// The numpy dtype of a runtime dtype.
py::dtype numpyDType(rt::DType dtype) {
  switch (dtype) {
  case rt::DType::Float32:
    return py::dtype("float32");
  case rt::DType::Float16:
    return py::dtype("float16");
  case rt::DType::Int64:
    return py::dtype("int64");
  case rt::DType::Int32:
    return py::dtype("int32");
  case rt::DType::Bool:
    return py::dtype("bool");
  }
  throw Error("unknown runtime dtype");
}

std::optional<rt::DType> runtimeDType(const py::dtype &dtype) {
  for (rt::DType d : {rt::DType::Float32, rt::DType::Float16, rt::DType::Int64,
                      rt::DType::Int32, rt::DType::Bool})
    if (dtype.equal(numpyDType(d)))
      return d;
  return std::nullopt;
}

/// A read-only tensor over `value`'s buffer: converted first (a copy) when
/// its dtype is not `want` (the model's) or it is not C-contiguous.
rt::Tensor feedTensor(const std::string &name, py::handle value,
                      std::optional<rt::DType> want) {
  py::module_ np = py::module_::import("numpy");
  py::array array = py::array::ensure(value);
  if (!array)
    throw py::type_error("feed '" + name + "' is not convertible to a numpy array");
  if (!want) {
    want = runtimeDType(array.dtype());
    if (!want)
      throw py::type_error("feed '" + name + "' has dtype " +
                           py::str(array.dtype()).cast<std::string>() +
                           ", not one of float32, float16, int64, int32, bool");
  }
  py::dtype dtype = numpyDType(*want);
  if (!array.dtype().equal(dtype)) {
    // Only value-preserving conversions: a float feed for an integer input
    // is a caller's mistake, not something to truncate.
    if (!np.attr("can_cast")(array.dtype(), dtype, "same_kind").cast<bool>())
      throw py::type_error("feed '" + name + "' has dtype " +
                           py::str(array.dtype()).cast<std::string>() +
                           " but the model's input is " +
                           py::str(dtype).cast<std::string>());
  }
  array = np.attr("ascontiguousarray")(array, dtype);
  rt::Shape shape(array.shape(), array.shape() + array.ndim());
  // The tensor may outlive this call (a past_* feed becomes retained
  // state), and dies wherever the session drops it: take the GIL then.
  PyObject *ref = array.ptr();
  Py_INCREF(ref);
  std::shared_ptr<void> owner(ref, [](void *p) {
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject *>(p));
  });
  return rt::Tensor::view(*want, std::move(shape),
                          const_cast<void *>(array.data()), std::move(owner),
                          /*readOnly=*/true);
}

/// A read-only numpy array over `tensor`'s buffer, keeping it alive.
py::array outputArray(const rt::Tensor &tensor) {
  auto *held = new rt::Tensor(tensor);
  py::capsule owner(held, [](void *p) { delete static_cast<rt::Tensor *>(p); });
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  py::array array(numpyDType(tensor.dtype()), shape,
                  const_cast<void *>(tensor.rawData()), owner);
  array.attr("setflags")(py::arg("write") = false);
  return array;
}

py::dict metricsDict(const rt::RowMetrics &m) {
  py::dict d;
  d["prompt_tokens"] = m.promptTokens;
  d["generated_tokens"] = m.generatedTokens;
  d["time_to_first_token_s"] = m.timeToFirstToken;
  d["prefill_tokens_per_s"] = m.prefillTokensPerSecond;
  d["decode_tokens_per_s"] = m.decodeTokensPerSecond;
  d["total_s"] = m.totalSeconds;
  // As `qeff run --json` (0 without speculative decoding).
  d["spec_proposed_tokens"] = m.specProposedTokens;
  d["spec_accepted_tokens"] = m.specAcceptedTokens;
  return d;
}

py::dict resultDict(const rt::GenerationResult &result, bool hasText) {
  py::list rows;
  for (const rt::RowResult &row : result.rows) {
    py::dict r;
    r["prompt_ids"] = row.promptIds;
    r["generated_ids"] = row.generatedIds;
    // Text cut inside a UTF-8 sequence is replaced, never an exception.
    if (hasText)
      r["text"] = py::reinterpret_steal<py::object>(PyUnicode_DecodeUTF8(
          row.text.data(), py::ssize_t(row.text.size()), "replace"));
    else
      r["text"] = py::none();
    r["finish_reason"] = row.finishReason;
    r["metrics"] = metricsDict(row.metrics);
    rows.append(r);
  }
  py::dict d;
  d["rows"] = rows;
  d["prefill_tokens_per_s"] = result.prefillTokensPerSecond;
  d["decode_tokens_per_s"] = result.decodeTokensPerSecond;
  d["total_s"] = result.totalSeconds;
  return d;
}

py::str decodeUtf8(const std::string &text) {
  return py::reinterpret_steal<py::str>(PyUnicode_DecodeUTF8(
      text.data(), py::ssize_t(text.size()), "replace"));
}

} // namespace

/// An open artifact: the session, its tokenizer (when the artifact has
/// one) and its EOS ids.
class PySession {
public:
  PySession(const std::string &dir, const std::string &device, int threads,
            const std::string &numerics,
            std::optional<std::vector<std::string>> fp32Nodes,
            const std::string &mxRounding, const std::string &mxWeightAxis,
            bool prepackWeights, std::vector<int> deviceGroup,
            int64_t qaicTimeoutMs)
      : dir_(dir) {
    rt::SessionOptions options;
    if (device != "host" && device != "qaic")
      throw py::value_error("device must be 'host' or 'qaic', got '" + device + "'");
    if (threads < 0)
      throw py::value_error("threads must be >= 0 (0: all cores), got " +
                            std::to_string(threads));
    std::string why;
    if (device == "qaic" && !rt::qaicDeviceAvailable(&why))
      throw Error("device='qaic' is unavailable: this qeff has no Cloud AI 100 "
                  "device (" + why + "); use device='host'");
    // As `qeff run --numerics ...`: the precision list of an fp16 mode is
    // the artifact's, unless the caller names the nodes.
    if (rt::Status st = mlir::qeff::applyNumerics(dir, device, numerics, mxRounding,
                                                  mxWeightAxis, options);
        !st)
      throw Error(st.error());
    if (fp32Nodes) {
      if (options.numerics != rt::Numerics::FP16 && !fp32Nodes->empty())
        throw py::value_error("fp32_nodes is for the fp16 numerics");
      options.fp32Nodes = {fp32Nodes->begin(), fp32Nodes->end()};
    }
    options.numThreads = threads;
    options.prepackWeights = prepackWeights;
    options.deviceGroup = std::move(deviceGroup);
    options.qaicTimeoutMs = qaicTimeoutMs;
    std::error_code ec;
    bool hasTokenizer =
        std::filesystem::exists(std::filesystem::path(dir) / "tokenizer.json", ec);
    std::optional<rt::Result<rt::Session>> session;
    std::string error;
    {
      py::gil_scoped_release release;
      session.emplace(rt::Session::open(
          dir, device == "qaic" ? rt::DeviceKind::Qaic : rt::DeviceKind::Host,
          options));
      if (*session && hasTokenizer) {
        auto loaded = tokenizer::Tokenizer::fromDirectory(dir);
        if (loaded.ok())
          tokenizer_.emplace(std::move(*loaded));
        else
          error = std::string(loaded.status().message());
      }
    }
    if (!*session)
      throw Error(session->error());
    if (!error.empty())
      throw Error(error);
    session_.emplace(std::move(**session));
    auto eos = hf::eosTokenIdsOf(
        dir, tokenizer_ ? tokenizer_->eosIds() : std::vector<int64_t>{});
    if (!eos.ok())
      throw Error(std::string(eos.status().message()));
    eos_ = std::move(*eos);
  }

  py::dict run(const py::dict &feeds) {
    rt::TensorMap inputs;
    for (auto [key, value] : feeds) {
      std::string name = py::str(key);
      std::optional<rt::DType> want;
      for (const rt::TensorInfo &info : session_->inputInfos())
        if (info.name == name)
          want = info.dtype;
      inputs.emplace(name, feedTensor(name, value, want));
    }
    rt::Status status;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(busy_, std::try_to_lock);
      if (!lock.owns_lock())
        status = rt::makeError("the session is busy (a generation stream is "
                               "running on it): finish or close the stream first");
      else
        status = session_->run(inputs);
      inputs.clear();
    }
    if (!status)
      throw Error(status.error());
    py::dict out;
    for (const auto &[name, tensor] : session_->outputs())
      out[py::str(name)] = outputArray(tensor);
    return out;
  }

  /// Prompts as ids: lists of ids kept, strings encoded (BOS/EOS as the
  /// tokenizer's post-processor adds them, as `qeff run --prompt` does).
  std::vector<std::vector<int64_t>> promptIds(const py::list &prompts) const {
    std::vector<std::vector<int64_t>> ids;
    for (py::handle p : prompts) {
      if (py::isinstance<py::str>(p)) {
        if (!tokenizer_)
          throw Error("a text prompt needs a tokenizer, and " + dir_ +
                      " has no tokenizer.json; give token ids instead");
        ids.push_back(tokenizer_->encode(p.cast<std::string>(), true));
      } else {
        ids.push_back(p.cast<std::vector<int64_t>>());
      }
    }
    return ids;
  }

  rt::GenerationOptions options(const py::dict &o) const {
    rt::GenerationOptions g;
    g.maxNewTokens = o["max_new_tokens"].cast<int64_t>();
    g.temperature = o["temperature"].cast<double>();
    g.topK = o["top_k"].cast<int64_t>();
    g.topP = o["top_p"].cast<double>();
    g.minP = o["min_p"].cast<double>();
    g.repetitionPenalty = o["repetition_penalty"].cast<double>();
    g.seed = o["seed"].cast<uint64_t>();
    g.stopStrings = o["stop"].cast<std::vector<std::string>>();
    g.stopTokenIds = o["stop_token_ids"].cast<std::vector<int64_t>>();
    g.eosIds = o["ignore_eos"].cast<bool>() ? std::vector<int64_t>{} : eos_;
    if (g.maxNewTokens < 1)
      throw py::value_error("max_new_tokens must be >= 1, got " +
                            std::to_string(g.maxNewTokens));
    if (!g.stopStrings.empty() && !tokenizer_)
      throw py::value_error("stop strings need a tokenizer, and " + dir_ +
                            " has no tokenizer.json");
    if (std::string bad = rt::checkGenerationOptions(g); !bad.empty())
      throw py::value_error(bad);
    return g;
  }

  py::dict generate(const py::list &prompts, const py::dict &opts) {
    std::vector<std::vector<int64_t>> ids = promptIds(prompts);
    rt::GenerationOptions g = options(opts);
    PendingError pending;
    rt::GenerationHooks hooks;
    hooks.cancelled = [&pending]() { return pending.pollSignals(); };
    std::optional<rt::Result<rt::GenerationResult>> result;
    {
      py::gil_scoped_release release;
      std::unique_lock<std::mutex> lock(busy_, std::try_to_lock);
      if (!lock.owns_lock()) {
        result.emplace(rt::makeError("the session is busy (a generation "
                                     "stream is running on it)"));
      } else {
        auto generator =
            rt::Generator::create(*session_, tokenizer_ ? &*tokenizer_ : nullptr);
        if (!generator)
          result.emplace(rt::makeError(generator.error()));
        else
          result.emplace(generator->generate(ids, g, {}, hooks));
      }
    }
    pending.raiseIfPending();
    if (!*result)
      throw Error(result->error());
    return resultDict(**result, bool(tokenizer_));
  }

  /// The worker side of a stream: generation on a thread of its own.
  class Stream {
  public:
    Stream(PySession &session, std::vector<std::vector<int64_t>> prompts,
           rt::GenerationOptions options)
        : session_(session) {
      thread_ = std::thread([this, prompts = std::move(prompts),
                             options = std::move(options)]() {
        run(prompts, options);
      });
    }
    ~Stream() { close(); }

    /// Stops the generation (if running) and waits for its thread.
    void close() {
      cancel_ = true;
      if (thread_.joinable()) {
        // The GIL may be held (a destructor, close()): the worker never
        // takes it, so waiting with it is safe, but release it anyway so
        // other Python threads run meanwhile.
        if (PyGILState_Check()) {
          py::gil_scoped_release release;
          thread_.join();
        } else {
          thread_.join();
        }
      }
    }

    /// The next (row, token id, text) chunk; None at the end.
    py::object next() {
      std::unique_lock<std::mutex> lock(mutex_);
      while (chunks_.empty() && !done_) {
        lock.unlock();
        {
          py::gil_scoped_release release;
          std::unique_lock<std::mutex> wait(mutex_);
          ready_.wait_for(wait, std::chrono::milliseconds(50), [this] {
            return !chunks_.empty() || done_;
          });
        }
        // Ctrl-C while waiting: stop the generation, then raise.
        if (PyErr_CheckSignals() != 0) {
          py::error_already_set e;
          close();
          throw e;
        }
        lock.lock();
      }
      if (!chunks_.empty()) {
        Chunk c = std::move(chunks_.front());
        chunks_.pop_front();
        return py::make_tuple(c.row, c.token, decodeUtf8(c.text));
      }
      lock.unlock();
      close();
      if (!error_.empty())
        throw Error(error_);
      return py::none();
    }

    /// The result once the stream ended (None before).
    py::object result() {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!done_ || !result_)
        return py::none();
      return resultDict(*result_, bool(session_.tokenizer_));
    }

  private:
    struct Chunk {
      size_t row;
      int64_t token;
      std::string text;
    };

    void run(const std::vector<std::vector<int64_t>> &prompts,
             const rt::GenerationOptions &options) {
      std::unique_lock<std::mutex> busy(session_.busy_, std::try_to_lock);
      std::optional<rt::Result<rt::GenerationResult>> result;
      if (!busy.owns_lock()) {
        result.emplace(rt::makeError("the session is busy (another call is "
                                     "running on it)"));
      } else {
        auto generator = rt::Generator::create(
            *session_.session_,
            session_.tokenizer_ ? &*session_.tokenizer_ : nullptr);
        if (!generator) {
          result.emplace(rt::makeError(generator.error()));
        } else {
          // Text arrives before its token (GenerationHooks::onToken): it is
          // held per row and sent with the token.
          std::map<size_t, std::string> text;
          rt::GenerationHooks hooks;
          hooks.cancelled = [this]() { return cancel_.load(); };
          hooks.onToken = [&](size_t row, int64_t token) {
            std::lock_guard<std::mutex> lock(mutex_);
            chunks_.push_back({row, token, std::move(text[row])});
            text[row].clear();
            ready_.notify_all();
          };
          result.emplace(generator->generate(
              prompts, options,
              [&](size_t row, const std::string &t) { text[row] += t; }, hooks));
        }
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (*result)
        result_ = std::move(**result);
      else if (!cancel_)
        error_ = result->error();
      done_ = true;
      ready_.notify_all();
    }

    PySession &session_;
    std::thread thread_;
    std::atomic<bool> cancel_{false};
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<Chunk> chunks_;
    bool done_ = false;
    std::string error_;
    std::optional<rt::GenerationResult> result_;
  };

  std::unique_ptr<Stream> stream(const py::list &prompts, const py::dict &opts) {
    return std::make_unique<Stream>(*this, promptIds(prompts), options(opts));
  }

  py::list infos(const std::vector<rt::TensorInfo> &infos) const {
    py::list list;
    for (const rt::TensorInfo &info : infos) {
      py::list dims;
      for (const rt::Dim &d : info.dims)
        dims.append(d.symbol.empty() ? py::object(py::int_(d.value))
                                     : py::object(py::str(d.symbol)));
      list.append(py::make_tuple(info.name, numpyDType(info.dtype),
                                 info.hasShape ? py::object(dims) : py::none()));
    }
    return list;
  }

  py::list specializations() const {
    py::list list;
    for (const rt::Specialization &s : session_->specializations()) {
      py::dict symbols;
      for (const auto &[k, v] : s.symbols)
        symbols[py::str(k)] = v;
      list.append(py::make_tuple(s.name, symbols));
    }
    return list;
  }

  void reset() {
    py::gil_scoped_release release;
    std::unique_lock<std::mutex> lock(busy_, std::try_to_lock);
    if (!lock.owns_lock())
      throw Error("the session is busy (a generation stream is running on it)");
    session_->reset();
  }

  py::array readState(const std::string &name) {
    std::unique_lock<std::mutex> lock(busy_, std::try_to_lock);
    if (!lock.owns_lock())
      throw Error("the session is busy (a generation stream is running on it)");
    rt::Result<rt::Tensor> t = session_->readState(name);
    if (!t)
      throw Error(t.error());
    return outputArray(*t);
  }

  std::string dir_;
  std::optional<rt::Session> session_;
  std::optional<tokenizer::Tokenizer> tokenizer_;
  std::vector<int64_t> eos_;
  std::mutex busy_;
};

void bindSession(py::module_ &m) {
  py::class_<PySession::Stream>(m, "_Stream")
      .def("next", &PySession::Stream::next)
      .def("close", &PySession::Stream::close)
      .def("result", &PySession::Stream::result);
  py::class_<PySession>(m, "Session")
      .def(py::init<const std::string &, const std::string &, int,
                    const std::string &, std::optional<std::vector<std::string>>,
                    const std::string &, const std::string &, bool,
                    std::vector<int>, int64_t>(),
           py::arg("artifact"), py::kw_only(), py::arg("device") = "host",
           py::arg("threads") = 0, py::arg("numerics") = "fp32",
           py::arg("fp32_nodes") = py::none(), py::arg("mx_rounding") = "even",
           py::arg("mx_weight_axis") = "k",
           py::arg("prepack_weights") = false,
           py::arg("device_group") = std::vector<int>{},
           py::arg("qaic_timeout_ms") = 60000)
      .def("run", &PySession::run, py::arg("feeds"))
      .def("generate", &PySession::generate, py::arg("prompts"), py::arg("options"))
      // The stream keeps its session alive (keep_alive<0, 1>).
      .def("stream", &PySession::stream, py::arg("prompts"), py::arg("options"),
           py::keep_alive<0, 1>())
      .def("reset", &PySession::reset)
      .def("read_state", &PySession::readState, py::arg("name"))
      .def_property_readonly("inputs", [](const PySession &s) {
        return s.infos(s.session_->inputInfos());
      })
      .def_property_readonly("outputs", [](const PySession &s) {
        return s.infos(s.session_->outputInfos());
      })
      .def_property_readonly("state_names", [](const PySession &s) {
        return s.session_->stateNames();
      })
      .def_property_readonly("specializations", &PySession::specializations)
      .def_property_readonly("has_tokenizer",
                             [](const PySession &s) { return bool(s.tokenizer_); })
      .def_property_readonly("eos_ids", [](const PySession &s) { return s.eos_; });
}

} // namespace qeff::python
