// Makes a wasi-libc program a command component with the preview1 command
// adapter that ships with the pinned jco, as a toolchain user would. A
// program that also calls WASI 0.2 interfaces directly (through its own
// canonical ABI glue) names the world describing those imports: it is
// embedded first, as wit-bindgen does.
// Usage: node make-command.mjs CORE.wasm OUT.wasm [WIT_DIR WORLD]
import { readFile, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { componentEmbed, componentNew } from "@bytecodealliance/jco";
import { witSource } from "../../tools/wit-source.mjs";

const [core, out, wit, world] = process.argv.slice(2);
if (!out || (wit && !world)) {
  console.error("usage: node make-command.mjs CORE.wasm OUT.wasm [WIT_DIR WORLD]");
  process.exit(2);
}
const require = createRequire(import.meta.url);
const jco = dirname(dirname(require.resolve("@bytecodealliance/jco")));  // .../jco/dist/api.js
const adapter = await readFile(join(jco, "lib", "wasi_snapshot_preview1.command.wasm"));
let binary = new Uint8Array(await readFile(core));
if (wit) binary = await componentEmbed({ binary, witSource: witSource(wit), world });
const component = await componentNew(binary, [["wasi_snapshot_preview1", new Uint8Array(adapter)]]);
await writeFile(out, component);
