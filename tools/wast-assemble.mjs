// Assembles component text into binaries for `cmhost wast`, with the pinned
// jco's wasm-tools. One process serves a whole run: starting Node and
// initialising wasm-tools costs far more than assembling a component.
//
// Usage: node wast-assemble.mjs NODE_MODULES_DIR
// Protocol, one JSON object per line each way:
//   request  {"texts": ["(component ...)", ...]}
//   response {"results": [{"wasm": "<base64>"} | {"error": "<message>"}, ...]}
// A first line {"ready": true} says the assembler loaded; a load failure is
// reported as {"fatal": "<message>"} and the process exits.
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createInterface } from 'node:readline';

const nodeModules = process.argv[2];
const send = (object) => process.stdout.write(JSON.stringify(object) + '\n');

let parse;
try {
  // Resolve through the package's export map, as an importer inside the tree would.
  const require = createRequire(join(nodeModules, '..', 'package.json'));
  const entry = require.resolve('@bytecodealliance/jco-transpile/wasm-tools');
  ({ parse } = await import(pathToFileURL(entry).href));
} catch (e) {
  send({ fatal: `cannot load jco's wasm-tools from ${nodeModules}: ${e.message}` });
  process.exit(1);
}
send({ ready: true });

// wasm-tools reports a Rust debug dump; keep its message and position.
function reason(error) {
  const text = String(error && error.message ? error.message : error);
  const at = /text: Some\(Text \{ line: (\d+), col: (\d+)/.exec(text);
  const where = at ? ` (at ${+at[1] + 1}:${+at[2] + 1} of the component text)` : '';
  const custom = /kind: Custom\("((?:[^"\\]|\\.)*)"\)/.exec(text);
  if (custom) return custom[1].replace(/\\(.)/g, '$1') + where;
  const lex = /kind: Lex\((.*)\) \} \}\) \}$/.exec(text);
  if (lex) return `lexical error ${lex[1]}` + where;
  return text;
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  if (!line.trim()) continue;
  const { texts } = JSON.parse(line);
  const results = [];
  for (const text of texts) {
    try {
      const bytes = await parse(text);
      results.push({ wasm: Buffer.from(bytes).toString('base64') });
    } catch (e) {
      results.push({ error: reason(e) });
    }
  }
  send({ results });
}
