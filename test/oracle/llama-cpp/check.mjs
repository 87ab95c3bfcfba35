// scripts/setup-oracle.sh's check: every package of package.json installed at
// its pinned version, and node-llama-cpp's prebuilt CPU binary loads (never
// built from source). Prints one line; throws (exit 1) otherwise. A file,
// not `node -e`: node-llama-cpp tests its binary in a child process started
// with this process's arguments.
import fs from 'node:fs';

const here = new URL('.', import.meta.url);
const deps = JSON.parse(fs.readFileSync(new URL('package.json', here))).dependencies;
for (const [name, pinned] of Object.entries(deps)) {
  const have = JSON.parse(fs.readFileSync(new URL(`node_modules/${name}/package.json`, here))).version;
  if (have !== pinned) throw new Error(`${name}: installed ${have}, pinned ${pinned}`);
}
const { getLlama, LlamaLogLevel } = await import('node-llama-cpp');
const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
console.log(`node-llama-cpp ${deps['node-llama-cpp']} (llama.cpp ${llama.llamaCppRelease.release}, CPU)`);
await llama.dispose();
