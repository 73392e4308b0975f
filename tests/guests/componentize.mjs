// Turns a core module built from a C guest into a component, as
// wit-bindgen-based toolchains do: embed the WIT world in the module (a
// `component-type` custom section), then wrap it with wit-component
// (`componentNew`). Both come from the pinned jco's JS API; its `embed`
// command cannot read files from its sandbox.
//
// Usage: node componentize.mjs CORE.wasm WORLD.wit WORLD-NAME OUT.wasm
//
// The guests are built so that their core modules import nothing from WASI
// (only canonical ABI intrinsics), so no adapter is needed and cmhost, which
// has no WASI host functions, can run them. A module that does import
// `wasi_snapshot_preview1` is refused rather than silently adapted.
import { readFile, writeFile } from "node:fs/promises";
import { componentEmbed, componentNew } from "@bytecodealliance/jco";

const [core, wit, world, out] = process.argv.slice(2);
if (!out) {
  console.error("usage: node componentize.mjs CORE.wasm WORLD.wit WORLD-NAME OUT.wasm");
  process.exit(2);
}

const binary = new Uint8Array(await readFile(core));
const imports = WebAssembly.Module.imports(new WebAssembly.Module(binary));
const wasi = imports.filter((i) => i.module === "wasi_snapshot_preview1");
if (wasi.length > 0) {
  console.error(`${core} imports from wasi_snapshot_preview1: ${wasi.map((i) => i.name).join(", ")}`);
  process.exit(1);
}

const embedded = await componentEmbed({
  binary,
  witSource: await readFile(wit, "utf8"),
  world,
});
await writeFile(out, await componentNew(embedded));
