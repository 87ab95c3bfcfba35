// A program built against an installed qeff (find_package(qeff)): compiles a
// checkpoint with qeff::compile (unless it is "-": the artifact exists) and
// greedily generates from a prompt of token ids with qeff::runtime.
//   consumer <checkpoint|-> <artifact_dir> <new_tokens> <prompt id>...
#include <qeff/compile/Compile.h>
#include <qeff/runtime/Generator.h>
#include <qeff/runtime/Session.h>

#include <cstdio>
#include <string>

using namespace qeff;

int main(int argc, char **argv) {
  if (argc < 5)
    return std::fputs("usage: consumer <checkpoint|-> <out> <n> <ids>...\n", stderr), 2;
  if (std::string(argv[1]) != "-") {
    compile::Options options;
    options.checkpointDir = argv[1];
    options.outputDir = argv[2];
    compile::Result compiled = compile::compileCheckpoint(options);
    if (!compiled)
      return std::fputs(compiled.message.c_str(), stderr), 1;
  }
  auto session = runtime::Session::open(argv[2], runtime::DeviceKind::Host);
  if (!session)
    return std::fprintf(stderr, "%s\n", session.error().c_str()), 1;
  auto generator = runtime::Generator::create(*session, nullptr);
  runtime::GenerationOptions greedy;
  greedy.maxNewTokens = std::stoll(argv[3]);
  std::vector<int64_t> prompt;
  for (int i = 4; i < argc; ++i)
    prompt.push_back(std::stoll(argv[i]));
  auto result = generator ? generator->generate({prompt}, greedy)
                          : runtime::Result<runtime::GenerationResult>(
                                runtime::Error{generator.error()});
  if (!result)
    return std::fprintf(stderr, "%s\n", result.error().c_str()), 1;
  for (int64_t id : result->rows[0].generatedIds)
    std::printf("%lld ", static_cast<long long>(id));
  return std::puts(""), 0;
}
