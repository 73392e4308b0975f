// Builds a JavaScript guest with the pinned componentize-js, offline: the
// WASI shim gets a preopen to read the WIT and sources through, and no AOT
// (it would download a binary). `disableFeatures` keeps wasi:http out
// unless `http` is given: then `fetch` and the fetch-event handler are in.
// Usage: node build.mjs WIT_DIR SOURCE.js OUT.wasm [WORLD http]
//   WIT_DIR holds the world and deps/ as real directories.
import { writeFile } from "node:fs/promises";
import { componentize } from "@bytecodealliance/componentize-js";
import { _setPreopens } from "@bytecodealliance/preview2-shim/filesystem";

const [witPath, sourcePath, out, worldName = "app", features] = process.argv.slice(2);
if (!out) {
  console.error("usage: node build.mjs WIT_DIR SOURCE.js OUT.wasm");
  process.exit(2);
}
_setPreopens({ "/": "/" });
const { component } = await componentize({
  sourcePath,
  witPath,
  worldName,
  disableFeatures: features === "http" ? [] : ["http", "fetch-event"],
});
await writeFile(out, component);
