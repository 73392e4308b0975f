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
//
// A world may use the WASI packages the pinned jco ships (say
// `import wasi:http/types@0.3.0;`): each `wasi:NAME/...@VERSION` the WIT
// names, and those the added packages name in turn, comes from jco's
// lib/wit/builtin/VERSION/wasi-NAME/package.wit (the WIT scripts/wasi-bindings
// makes cmhost's WASI bindings from), appended as a nested package
// (`package wasi:http@0.3.0 { ... }`): the WIT goes in as one source text,
// since `witPath` cannot read files from jco's sandbox either. A WIT that
// names no WASI package goes in unchanged.
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

const wasiPackageUse = /\bwasi:([a-z][a-z0-9-]*)\/[a-z][a-z0-9-]*@(\d+\.\d+\.\d+(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?)/g;
const jcoWasiWit = new URL("../lib/wit/builtin/", import.meta.resolve("@bytecodealliance/jco"));

async function withWasiPackages(source) {
  let text = source;
  const added = new Set();
  const toScan = [source];
  while (toScan.length > 0) {
    for (const [, name, version] of toScan.pop().matchAll(wasiPackageUse)) {
      const id = `wasi:${name}@${version}`;
      if (added.has(id) || source.includes(`package ${id}`)) continue;
      added.add(id);
      let wit;
      try {
        wit = await readFile(new URL(`${version}/wasi-${name}/package.wit`, jcoWasiWit), "utf8");
      } catch {
        continue; // not shipped by jco: the WIT parser says what is missing
      }
      toScan.push(wit);
      text += `\n${wit.replace(/^package\s+([^;\s]+)\s*;/m, "package $1 {")}\n}\n`;
    }
  }
  return text;
}

const embedded = await componentEmbed({
  binary,
  witSource: await withWasiPackages(await readFile(wit, "utf8")),
  world,
});
await writeFile(out, await componentNew(embedded));
