// Encodes a WIT world as component-type bytes for `cmhost bindgen`, with the
// pinned jco: jco has no call that encodes WIT alone, but a dummy core module
// embedded for the world carries the world's binary encoding in its
// `component-type` custom section, which this script extracts.
//
// Usage: node wit-encode.mjs NODE_MODULES_DIR WIT_PATH WORLD|'' OUT_FILE
// WIT_PATH is a .wit file or a directory of them with an optional `deps/`
// (one package per file or per directory below it). jco's `witPath` needs
// preopens Node does not give it, so the files are joined into one
// `witSource`: the root package's files under its first `package` line, and
// each dependency's `package x:y;` file turned into a `package x:y { ... }`
// block. Errors go to stderr with exit status 1.
import { createRequire } from 'node:module';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [nodeModules, witPath, world, outFile] = process.argv.slice(2);

function fail(message) {
  process.stderr.write(message + '\n');
  process.exit(1);
}

function witFiles(dir) {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.wit') && statSync(join(dir, name)).isFile())
    .sort()
    .map((name) => join(dir, name));
}

// `package ns:name@1.0.0;` at the top of a file (after comments), or null.
const packageLine = /^((?:\s|\/\/[^\n]*\n|\/\*[\s\S]*?\*\/)*)package\s+([^;{\s]+)\s*;/;

function rootSource(files) {
  let header = null;
  const bodies = [];
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const m = packageLine.exec(text);
    if (m) {
      if (header === null) header = `package ${m[2]};\n`;
      else if (header !== `package ${m[2]};\n`) fail(`${file}: package ${m[2]} differs from the directory's ${header.trim()}`);
      bodies.push(m[1] + text.slice(m[0].length));
    } else {
      bodies.push(text);
    }
  }
  return (header ?? '') + bodies.join('\n');
}

// One dependency package's text as a `package x:y { ... }` block.
function asBlock(text) {
  const m = packageLine.exec(text);
  if (!m) return text;  // already `package x:y { ... }` blocks
  return `${m[1]}package ${m[2]} {\n${text.slice(m[0].length)}\n}\n`;
}

function gather(path) {
  if (!statSync(path).isDirectory()) return readFileSync(path, 'utf8');
  let source = rootSource(witFiles(path));
  const deps = join(path, 'deps');
  let entries = [];
  try {
    entries = readdirSync(deps).sort();
  } catch {
    return source;
  }
  for (const name of entries) {
    const entry = join(deps, name);
    // A directory is one package: its files joined as the root's are.
    if (statSync(entry).isDirectory()) source += '\n' + asBlock(rootSource(witFiles(entry)));
    else if (name.endsWith('.wit')) source += '\n' + asBlock(readFileSync(entry, 'utf8'));
  }
  return source;
}

// The payload of the first custom section whose name starts with `prefix`.
function customSection(bytes, prefix) {
  let at = 8;
  const leb = () => {
    let result = 0, shift = 0, byte;
    do {
      byte = bytes[at++];
      result += (byte & 0x7f) * 2 ** shift;
      shift += 7;
    } while (byte & 0x80);
    return result;
  };
  while (at < bytes.length) {
    const id = bytes[at++];
    const size = leb();
    const end = at + size;
    if (id === 0) {
      const nameLength = leb();
      const name = Buffer.from(bytes.subarray(at, at + nameLength)).toString('utf8');
      if (name.startsWith(prefix)) return bytes.subarray(at + nameLength, end);
    }
    at = end;
  }
  return null;
}

let componentEmbed;
try {
  const require = createRequire(join(nodeModules, '..', 'package.json'));
  ({ componentEmbed } = await import(pathToFileURL(require.resolve('@bytecodealliance/jco')).href));
} catch (e) {
  fail(`cannot load jco from ${nodeModules}: ${e.message}`);
}

let source;
try {
  source = gather(witPath);
} catch (e) {
  fail(`cannot read ${witPath}: ${e.message}`);
}
let embedded;
try {
  embedded = await componentEmbed({ dummy: true, witSource: source, ...(world ? { world } : {}) });
} catch (e) {
  fail(`${witPath}: ${e && e.message ? e.message : e}`);
}
const section = customSection(embedded, 'component-type');
if (!section) fail('jco produced no component-type section');
writeFileSync(outFile, section);
