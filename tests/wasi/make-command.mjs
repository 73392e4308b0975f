// Makes a wasi-libc program a command component with the preview1 command
// adapter that ships with the pinned jco, as a toolchain user would.
// Usage: node make-command.mjs CORE.wasm OUT.wasm
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { componentNew } from "@bytecodealliance/jco";

const [core, out] = process.argv.slice(2);
if (!out) {
  console.error("usage: node make-command.mjs CORE.wasm OUT.wasm");
  process.exit(2);
}
const require = createRequire(import.meta.url);
const jco = dirname(dirname(require.resolve("@bytecodealliance/jco")));  // .../jco/dist/api.js
const adapter = await readFile(join(jco, "lib", "wasi_snapshot_preview1.command.wasm"));
const component = await componentNew(new Uint8Array(await readFile(core)), [
  ["wasi_snapshot_preview1", new Uint8Array(adapter)],
]);
await writeFile(out, component);
