//===- Interpreter.h - Rendering a parsed chat template ---------*- C++ -*-===//

#ifndef QEFF_FRONTEND_CHATTEMPLATE_INTERPRETER_H
#define QEFF_FRONTEND_CHATTEMPLATE_INTERPRETER_H

#include "frontend/ChatTemplate/Ast.h"
#include "frontend/ChatTemplate/ChatTemplate.h"

#include <string>

namespace qeff::chat::detail {

/// Renders `tmpl` with the variables of the dict `context`; throws
/// TemplateError.
std::string render(const Template &tmpl, const Value &context,
                   const RenderLimits &limits);

} // namespace qeff::chat::detail

#endif // QEFF_FRONTEND_CHATTEMPLATE_INTERPRETER_H
