//===- Module.cpp - the qeff._qeff Python module --------------------------===//
//
// Part of qeff. The module's entry point, its exception and the compile
// binding: qeff::compile::compileCheckpoint with its options as keywords,
// run without the GIL, interruptible and reporting progress.
//
//===----------------------------------------------------------------------===//

#include "python/Bindings.h"

#include "qeff/compile/Compile.h"
#include "qeff/runtime/Session.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <chrono>

namespace qeff::python {

PendingError::~PendingError() {
  if (!type_)
    return;
  py::gil_scoped_acquire gil;
  Py_XDECREF(type_);
  Py_XDECREF(value_);
  Py_XDECREF(traceback_);
}

void PendingError::take() {
  if (type_) {
    PyErr_Clear();
    return;
  }
  PyErr_Fetch(&type_, &value_, &traceback_);
}

bool PendingError::pollSignals() {
  if (type_)
    return true;
  // At most every 20 ms: taking the GIL waits for the Python thread holding
  // it (up to its switch interval), which a generation must not pay per step.
  auto now = std::chrono::steady_clock::now();
  if (now - lastPoll_ < std::chrono::milliseconds(20))
    return false;
  lastPoll_ = now;
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0)
    take();
  return type_ != nullptr;
}

void PendingError::raiseIfPending() {
  if (!type_)
    return;
  PyErr_Restore(type_, value_, traceback_);
  type_ = value_ = traceback_ = nullptr;
  throw py::error_already_set();
}

namespace {

compile::OutlineLayers outlineLayers(const py::object &value) {
  if (value.is_none())
    return compile::OutlineLayers::Auto;
  if (py::isinstance<py::bool_>(value))
    return value.cast<bool>() ? compile::OutlineLayers::On : compile::OutlineLayers::Off;
  if (py::isinstance<py::str>(value) && value.cast<std::string>() == "auto")
    return compile::OutlineLayers::Auto;
  throw py::value_error("outline_layers must be True, False, None or 'auto', got " +
                        py::repr(value).cast<std::string>());
}

compile::Emit emitOf(const std::string &emit) {
  if (emit == "device")
    return compile::Emit::Device;
  if (emit == "onnx")
    return compile::Emit::ONNX;
  if (emit == "mlir-import")
    return compile::Emit::MLIRImport;
  if (emit == "mlir-device")
    return compile::Emit::MLIRDevice;
  throw py::value_error("emit must be 'device', 'onnx', 'mlir-import' or "
                        "'mlir-device', got '" + emit + "'");
}

/// Calls Python code from a thread without the GIL: takes it, and keeps an
/// exception raised for later (no more calls once one was raised).
template <typename F> void callKeepingError(PendingError &pending, F &&call) {
  py::gil_scoped_acquire gil;
  if (pending.pending())
    return;
  try {
    call();
  } catch (py::error_already_set &e) {
    e.restore();
    pending.take();
  }
}

/// compile(model, out, **options) -> dict: what compileCheckpoint returned.
py::dict compileModel(const std::string &model, const std::string &out,
                      int64_t ctxLen, int64_t prefillSeqLen, int64_t batchSize,
                      int64_t fullBatchSize, int64_t numCores,
                      int64_t numDevices, bool mxfp6, bool mxint8KV,
                      const std::string &weightsDType,
                      const std::string &kvWindow,
                      const py::object &outline,
                      std::vector<std::string> fp32Scopes,
                      const std::string &fp32ScopesFile, int calibrate,
                      const std::string &qaicCompile, bool runQAic,
                      const std::string &aicHwVersion,
                      std::vector<std::string> qaicArgs,
                      const std::string &depfile, const std::string &emit,
                      std::vector<int64_t> numSpeculativeTokens,
                      bool onDeviceSampling, int64_t maxTopKIds,
                      const py::object &onStage, const py::object &onProgress) {
  compile::Options o;
  o.checkpointDir = model;
  o.outputDir = out;
  o.emit = emitOf(emit);
  o.ctxLen = ctxLen;
  o.prefillSeqLen = prefillSeqLen;
  o.batchSize = batchSize;
  o.fullBatchSize = fullBatchSize;
  o.numCores = numCores;
  o.numDevices = numDevices;
  o.mxfp6 = mxfp6;
  o.mxint8KV = mxint8KV;
  if (weightsDType != "f16" && weightsDType != "bf16" && weightsDType != "as-ir")
    throw py::value_error("weights_dtype must be 'as-ir', 'f16' or 'bf16', got '" +
                          weightsDType + "'");
  o.weightsF16 = weightsDType == "f16";
  o.weightsBF16 = weightsDType == "bf16";
  o.numSpeculativeTokens = std::move(numSpeculativeTokens);
  o.onDeviceSampling = onDeviceSampling;
  o.maxTopKIds = maxTopKIds;
  if (kvWindow != "full" && kvWindow != "rolling")
    throw py::value_error("kv_window must be 'full' or 'rolling', got '" +
                          kvWindow + "'");
  o.rollingKVWindow = kvWindow == "rolling";
  o.outlineLayers = outlineLayers(outline);
  o.fp32Scopes = std::move(fp32Scopes);
  o.fp32ScopesFile = fp32ScopesFile;
  o.calibrate = calibrate;
  o.qaicCompile = qaicCompile;
  o.runQAic = runQAic;
  o.aicHwVersion = aicHwVersion;
  o.qaicArgs = std::move(qaicArgs);
  o.depfile = depfile;

  // The callbacks and the interrupt poll run on this thread while the GIL
  // is released: each takes the GIL for its call; an exception they raise
  // (KeyboardInterrupt included) cancels the compile and is raised here.
  PendingError pending;
  o.cancelled = [&pending]() { return pending.pollSignals(); };
  if (!onStage.is_none())
    o.onStage = [&](const std::string &stage) {
      callKeepingError(pending, [&] { onStage(stage); });
    };
  if (!onProgress.is_none())
    o.onProgress = [&](const compile::Progress &p) {
      callKeepingError(pending, [&] {
        onProgress(p.tensorsDone, p.tensorsTotal, p.bytesDone, p.bytesTotal,
                   p.tensor);
      });
    };

  compile::Result result;
  {
    py::gil_scoped_release release;
    result = compile::compileCheckpoint(o);
  }
  pending.raiseIfPending();
  if (!result) {
    std::string message = result.message;
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    throw Error(message.empty() ? "compile failed" : message);
  }
  py::dict d;
  py::list files;
  for (const auto &[path, bytes] : result.files)
    files.append(py::make_tuple(path, bytes));
  d["files"] = files;
  d["qaic_command"] = result.qaicCommand;
  d["qpc_built"] = result.qpcBuilt;
  d["seconds"] = result.seconds;
  d["diagnostics"] = result.message;
  return d;
}

} // namespace

void bindCompile(py::module_ &m) {
  m.def("compile", &compileModel, py::arg("model"), py::arg("out"),
        py::kw_only(), py::arg("ctx_len") = 128,
        py::arg("prefill_seq_len") = 32, py::arg("batch_size") = 1,
        py::arg("full_batch_size") = 0, py::arg("num_cores") = 16,
        py::arg("num_devices") = 1, py::arg("mxfp6") = false,
        py::arg("mxint8_kv") = false, py::arg("weights_dtype") = "as-ir",
        py::arg("kv_window") = "full", py::arg("outline_layers") = py::none(),
        py::arg("fp32_scopes") = std::vector<std::string>{},
        py::arg("fp32_scopes_file") = "", py::arg("calibrate") = 0,
        py::arg("qaic_compile") = "", py::arg("run_qaic") = true,
        py::arg("aic_hw_version") = "ai100",
        py::arg("qaic_args") = std::vector<std::string>{},
        py::arg("depfile") = "", py::arg("emit") = "device",
        py::arg("num_speculative_tokens") = std::vector<int64_t>{},
        py::arg("on_device_sampling") = false, py::arg("max_top_k_ids") = 0,
        py::arg("on_stage") = py::none(), py::arg("on_progress") = py::none(),
        "Compiles a Hugging Face checkpoint into an artifact directory "
        "(qeff::compile::compileCheckpoint). Use qeff.compile().");
}

} // namespace qeff::python

PYBIND11_MODULE(_qeff, m) {
  using namespace qeff::python;
  m.doc() = "qeff's native module: use the qeff package.";
  py::register_exception<Error>(m, "Error", PyExc_RuntimeError);
  m.attr("__version__") = qeff::compile::version();
  m.def("qaic_device_available", []() {
    std::string why;
    bool available = qeff::runtime::qaicDeviceAvailable(&why);
    return py::make_tuple(available, why);
  });
  bindCompile(m);
  bindSession(m);
  bindTokenizer(m);
}
