// One WIT `witSource` for jco's componentEmbed from a .wit file or a
// directory of them with an optional `deps/` (one package per file or per
// directory below it). jco's `witPath` needs preopens Node does not give
// it, so the files are joined: the root package's files under its first
// `package` line, and each dependency's `package x:y;` file turned into a
// `package x:y { ... }` block.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

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
      else if (header !== `package ${m[2]};\n`) throw new Error(`${file}: package ${m[2]} differs from the directory's ${header.trim()}`);
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

export function witSource(path) {
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

