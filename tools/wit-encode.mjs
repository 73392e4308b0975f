// Encodes a WIT world as component-type bytes for `cmhost bindgen`, with the
// pinned jco: jco has no call that encodes WIT alone, but a dummy core module
// embedded for the world carries the world's binary encoding in its
// `component-type` custom section, which this script extracts.
//
// Usage: node wit-encode.mjs NODE_MODULES_DIR WIT_PATH WORLD|'' OUT_FILE
// WIT_PATH is a .wit file or a directory of them with an optional `deps/`,
// joined into one `witSource` by wit-source.mjs. Errors go to stderr with
// exit status 1.
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { witSource } from './wit-source.mjs';

const [nodeModules, witPath, world, outFile] = process.argv.slice(2);

function fail(message) {
  process.stderr.write(message + '\n');
  process.exit(1);
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
  source = witSource(witPath);
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
