# -*- Python -*-
# lit configuration for the qeff test suite.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst


def configure():
    config.name = "qeff"
    config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
    config.suffixes = [".mlir", ".test"]
    config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "data", "unit", "tools", "oracle", "Inputs", "e2e",
                       "bench", "Inputs", "chat-templates"]
    config.test_source_root = os.path.dirname(__file__)
    config.test_exec_root = os.path.join(config.qeff_obj_root, "test")

    config.substitutions.append(("%test_data", config.qeff_test_data))
    config.substitutions.append(("%qeff_src_root", config.qeff_src_root))
    config.substitutions.append(("%python", config.python_executable))
    # Built with the Cloud AI 100 Platform SDK (cmake/QEffQaicSdk.cmake).
    if config.qeff_have_qaic == "ON":
        config.available_features.add("qaic-device")
    llvm_config.with_system_environment(["HOME", "TMPDIR"])
    llvm_config.use_default_substitutions()

    tool_dirs = [config.qeff_tools_dir, config.llvm_tools_dir]
    # FileCheck, not and count come from LLVM 19 (Debian keeps them off PATH).
    llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
    tools = ["qeff", "qeff-opt", "qeff-translate", "qeff-chat-template"]
    llvm_config.add_tool_substitutions(tools, tool_dirs)


if hasattr(config, "qeff_obj_root"):
    configure()
else:
    # Run by source path (`lit test/dialects/QEff/ops.mlir`, docs/contributing.md):
    # lit found this file before the build's site configuration, which holds
    # the tool and data paths. Load that one ($QEFF_BUILD_DIR, default build/);
    # it loads this file again with them set.
    build_dir = os.environ.get("QEFF_BUILD_DIR") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build")
    site_config = os.path.join(build_dir, "test", "lit.site.cfg.py")
    if not os.path.exists(site_config):
        lit_config.fatal("no %s: build qeff first (scripts/build.sh), or set "
                         "QEFF_BUILD_DIR to its build directory" % site_config)
    lit_config.load_config(config, site_config)
