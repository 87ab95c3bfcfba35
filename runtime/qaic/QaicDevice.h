//===- QaicDevice.h - The Cloud AI 100 device (Platform SDK) ----*- C++ -*-===//
//
// Runs a `qeff compile` output directory on an AI 100 through the Platform
// SDK's C++ runtime API (QAicApi.hpp, libQAic.so): loads the QPC that
// qaic-compile wrote into <dir>/qpc (programqpc.bin) on the device group
// (devMapping for more than one device, the data-path timeout of
// SessionOptions::qaicTimeoutMs), maps the manifest's inputs and outputs to
// the QPC's buffer bindings, picks the QPC's allowed shape (its
// specialization) from the shapes of the given inputs, sets the dims and then
// binds host buffers, checking every status, and runs one inference per
// Device::run. Retained state stays on the card: the `past_*` inputs and
// `*_RetainedState` outputs (which must allow partial buffers) are bound as
// empty buffers (dims {0}), the convention of the SDK's LLM examples, except
// after resetState(), when the next run binds zeros sized from the binding
// to the `past_*` inputs. The state cannot be read back (readState() says
// so). An inference handle the SDK keeps after a failure makes every later
// run fail at once (docs/device.md, "QAIC device").
//
// Built only when CMake finds the SDK (cmake/QEffQaicSdk.cmake); the unit
// test compiles this file against a fake SDK (test/unit/Runtime/FakeQaicSdk).
//
//===----------------------------------------------------------------------===//

#ifndef QEFF_RUNTIME_QAIC_QAICDEVICE_H
#define QEFF_RUNTIME_QAIC_QAICDEVICE_H

#include "qeff/runtime/Result.h"
#include "qeff/runtime/Session.h"

#include <memory>
#include <string>

namespace qeff::runtime::qaic {

/// Opens the QPC of `artifactDir` (<artifactDir>/qpc/programqpc.bin, with
/// qeff-manifest.json for the declared inputs and outputs) on the card
/// `options.qaicDeviceId`. Host-only options (fp16 emulation, observers) are
/// refused.
Result<std::unique_ptr<Device>> loadQaicDevice(const std::string &artifactDir,
                                               const SessionOptions &options);

} // namespace qeff::runtime::qaic

#endif // QEFF_RUNTIME_QAIC_QAICDEVICE_H
