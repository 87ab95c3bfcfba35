// RUN: qeff-opt %s -split-input-file -qeff-fp16-clamp=fp32-scopes=model.layers.9.mlp -verify-diagnostics
// RUN: not qeff-opt %s -qeff-fp16-clamp='fp32-scopes=model.layers.0.mlp,,model.norm' 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: printf 'model.layers.[0\n' > %t.glob
// RUN: not qeff-opt %s -qeff-fp16-clamp=fp32-scopes-file=%t.glob 2>&1 | FileCheck %s --check-prefix=GLOB -DFILE=%t.glob
// RUN: not qeff-opt %s -qeff-fp16-clamp=fp32-scopes-file=%t.missing 2>&1 | FileCheck %s --check-prefix=NOFILE -DFILE=%t.missing
// A FIFO (or device) as the scopes file is refused, never read (it would block).
// RUN: rm -f %t.fifo && mkfifo %t.fifo
// RUN: not qeff-opt %s -qeff-fp16-clamp=fp32-scopes-file=%t.fifo 2>&1 | FileCheck %s --check-prefix=FIFO -DFILE=%t.fifo
// Unbalanced brackets or quotes in a pass option are refused by qeff-opt
// (MLIR's option parser would loop forever on them).
// RUN: not qeff-opt %s -qeff-fp16-clamp='fp32-scopes=model.layers.[0' 2>&1 | FileCheck %s --check-prefix=BRACKET
// RUN: not qeff-opt %s --pass-pipeline='builtin.module(func.func(qeff-fp16-clamp{fp32-scopes=[abc}))' 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: not qeff-opt %s -qeff-fp16-clamp='fp32-scopes="model.norm' 2>&1 | FileCheck %s --check-prefix=QUOTE
// The space forms of the pipeline option too, each exiting with the error
// well within the 5 s bound (a hang would be killed and fail the test).
// RUN: %python -c "import subprocess,sys; r=subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=5); print(r.returncode, r.stderr.strip())" qeff-opt %s --pass-pipeline 'builtin.module(func.func(qeff-fp16-clamp{fp32-scopes=[abc}))' | FileCheck %s --check-prefix=SPACE
// RUN: %python -c "import subprocess,sys; r=subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=5); print(r.returncode, r.stderr.strip())" qeff-opt %s -p 'builtin.module(qeff-fp16-clamp{fp32-scopes="abc})' | FileCheck %s --check-prefix=SPACE-P
// RUN: printf 'model.layers.0.mlp\n# layer 9 does not exist\n  model.layers.9.mlp\n' > %t.scopes
// RUN: not qeff-opt %s -qeff-fp16-clamp=fp32-scopes-file=%t.scopes 2>&1 | FileCheck %s --check-prefix=FILE -DFILE=%t.scopes

// A scope that matches no op is an error (a typo would otherwise leave the
// model in fp16 without a word), at the module for the option and at the
// line of a scopes file.
// expected-error @+1 {{fp32 scope 'model.layers.9.mlp' matches no op (scopes are the module paths in the ops' locations, e.g. 'model.layers.0.mlp')}}
module {
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    %y = qeff.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("model.layers.0.mlp.down_proj")
    return %y : tensor<4xf32>
  }
}

// BRACKET: qeff-opt: option '-qeff-fp16-clamp=fp32-scopes=model.layers.[0': unclosed '[' (pass options must have balanced brackets and quotes)
// PIPELINE: qeff-opt: option '--pass-pipeline=builtin.module(func.func(qeff-fp16-clamp{fp32-scopes=[abc}))': unmatched '}' at offset 57
// SPACE: 1 qeff-opt: option '--pass-pipeline builtin.module(func.func(qeff-fp16-clamp{fp32-scopes=[abc}))': unmatched '}' at offset 57
// SPACE-P: 1 qeff-opt: option '-p builtin.module(qeff-fp16-clamp{fp32-scopes="abc})': unclosed quote " at offset 43
// QUOTE: qeff-opt: option '-qeff-fp16-clamp=fp32-scopes="model.norm': unclosed quote " at offset 12
// EMPTY: error: fp32-scopes: empty scope pattern
// GLOB: [[FILE]]:1:1: error: fp32-scopes: invalid scope pattern 'model.layers.[0': invalid glob pattern, unmatched '['
// FIFO: error: fp32-scopes-file: '[[FILE]]' is not a regular file of at most 1 MiB
// NOFILE: error: fp32-scopes-file: cannot read '[[FILE]]': No such file or directory
// FILE: [[FILE]]:3:3: error: fp32 scope 'model.layers.9.mlp' matches no op
