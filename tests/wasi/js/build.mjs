// Builds a JavaScript guest with the pinned componentize-js, offline:
// `disableFeatures` keeps wasi:http out, the WASI shim gets a preopen to
// read the WIT and sources through, and no AOT (it would download a binary).
// Usage: node build.mjs WIT_DIR SOURCE.js OUT.wasm
//   WIT_DIR holds the world and deps/ as real directories.
import { writeFile } from "node:fs/promises";
import { componentize } from "@bytecodealliance/componentize-js";
import { _setPreopens } from "@bytecodealliance/preview2-shim/filesystem";

const [witPath, sourcePath, out] = process.argv.slice(2);
if (!out) {
  console.error("usage: node build.mjs WIT_DIR SOURCE.js OUT.wasm");
  process.exit(2);
}
_setPreopens({ "/": "/" });
const { component } = await componentize({
  sourcePath,
  witPath,
  worldName: "app",
  disableFeatures: ["http", "fetch-event"],
});
await writeFile(out, component);
