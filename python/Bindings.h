//===- Bindings.h - the qeff Python module's shared pieces ------*- C++ -*-===//
//
// Part of qeff. The native module `qeff._qeff` (pybind11): one file per
// bound class, these helpers shared by them. Everything here runs with
// exceptions and RTTI (pybind11 needs both); the qeff libraries it calls
// report errors as values, turned into qeff.Error here.
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_PYTHON_BINDINGS_H
#define QEFF_PYTHON_BINDINGS_H

#include <pybind11/pybind11.h>

#include <chrono>
#include <stdexcept>
#include <string>

namespace qeff::python {

namespace py = pybind11;

/// Raised as qeff.Error (a RuntimeError) with the C++ message.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A Python exception raised while C++ code ran without the GIL (Ctrl-C's
/// KeyboardInterrupt, an exception of a progress callback), kept until the
/// C++ call returned and raised then.
class PendingError {
public:
  PendingError() = default;
  PendingError(const PendingError &) = delete;
  PendingError &operator=(const PendingError &) = delete;
  ~PendingError();

  bool pending() const { return type_ != nullptr; }
  /// With the GIL held: takes the exception being raised (the first one
  /// wins; later ones are dropped).
  void take();
  /// Without the GIL, on the interpreter's main thread: runs the signal
  /// handlers (at most every 20 ms); true when one raised, now or before.
  bool pollSignals();
  /// With the GIL held: raises the kept exception, if any.
  void raiseIfPending();

private:
  PyObject *type_ = nullptr, *value_ = nullptr, *traceback_ = nullptr;
  std::chrono::steady_clock::time_point lastPoll_;
};

void bindCompile(py::module_ &m);
void bindSession(py::module_ &m);
void bindTokenizer(py::module_ &m);

} // namespace qeff::python

#endif // QEFF_PYTHON_BINDINGS_H
