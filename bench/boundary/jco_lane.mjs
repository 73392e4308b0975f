// The jco lane of the boundary benchmark: the boundary component transpiled
// by `jco transpile` (default options), `take-typed` called from Node, the
// JS values walked into a sink with the same checksum as the C++ lanes.
// Usage: node jco_lane.mjs TRANSPILED_DIR ROWS[,ROWS...] ROUNDS
// Prints {"rows": {"N": {"ns_per_element": x, "checksum": {...}}}}.
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const [dir, rowsArg, roundsArg] = process.argv.slice(2);
const component = await import(pathToFileURL(path.join(dir, 'boundary.js')).href);
const rounds = Number(roundsArg);

const CASES = ['cache-string', 'register-template', 'append-children', 'assign-id', 'create-placeholder',
  'create-text-node', 'load-template', 'replace-with', 'replace-placeholder', 'insert-after', 'insert-before',
  'set-attribute', 'set-text', 'new-event-listener', 'remove-event-listener', 'remove', 'push-root'];
const CASE_INDEX = new Map(CASES.map((c, i) => [c, i]));
const ATTR_KINDS = new Map([['text', 0], ['float', 1], ['int', 2], ['boolean', 3], ['none', 4]]);
const NODE_KINDS = new Map([['element', 0], ['text', 1], ['dynamic', 2]]);

// Texts in the batch are ASCII, so a JS string's length is its UTF-8 size;
// a non-ASCII text would make the checksums differ, loudly.
class ChecksumSink {
  constructor() { this.calls = new Array(17).fill(0); this.numbers = 0; this.textBytes = 0; }
  one(c, id) { this.calls[c]++; this.numbers += id; }
  stack(c, p) { this.calls[c]++; this.numbers += p.id + p.m; }
  path(c, path, n) { this.calls[c]++; this.numbers += n + path.length; for (const b of path) this.numbers += b; }
  text(c, id, t) { this.calls[c]++; this.numbers += id; this.textBytes += t.length; }
  listener(c, p) { this.calls[c]++; this.numbers += p.id + p.name + (p.bubbles ? 1 : 0); }
  template(t) {
    this.calls[1]++;
    this.numbers += t.id + t.nodes.length;
    for (const r of t.roots) this.numbers += r;
    for (const n of t.nodes) {
      const kind = NODE_KINDS.get(n.tag);
      this.numbers += kind;
      if (kind === 0) {
        const e = n.val;
        this.numbers += e.tag + (e.ns ?? 0) + e.attrs.length;
        for (const c of e.children) this.numbers += c;
        for (const a of e.attrs) { this.numbers += a.name + (a.ns ?? 0); this.textBytes += a.value.length; }
      } else if (kind === 1) {
        this.textBytes += n.val.length;
      }
    }
  }
  attribute(p) {
    this.calls[11]++;
    const kind = ATTR_KINDS.get(p.value.tag);
    this.numbers += p.id + p.name + (p.ns ?? 0) + kind;
    if (kind === 0) this.textBytes += p.value.val.length;
    else if (kind === 1) this.numbers += Math.trunc(p.value.val);
    else if (kind === 2) this.numbers += Number(p.value.val);
    else if (kind === 3) this.numbers += p.value.val ? 1 : 0;
  }
}

function deliver(ops, sink) {
  for (const op of ops) {
    const p = op.val;
    switch (CASE_INDEX.get(op.tag)) {
      case 0: sink.calls[0]++; sink.numbers += p.id; sink.textBytes += p.str.length; break;
      case 1: sink.template(p); break;
      case 2: case 7: case 9: case 10: sink.stack(CASE_INDEX.get(op.tag), p); break;
      case 3: sink.path(3, p.path, p.id); break;
      case 4: case 15: case 16: sink.one(CASE_INDEX.get(op.tag), p); break;
      case 5: sink.text(5, p.id, p.text); break;
      case 6: sink.calls[6]++; sink.numbers += p.id + p.tmpl + p.root; break;
      case 8: sink.path(8, p.path, p.m); break;
      case 11: sink.attribute(p); break;
      case 12: sink.text(12, p.id, p.text); break;
      case 13: case 14: sink.listener(CASE_INDEX.get(op.tag), p); break;
      default: throw new Error(`unknown case ${op.tag}`);
    }
  }
}

// Batch sizes are interleaved round by round, as in the driver, after two
// warm-up rounds (V8 optimises the lift and the walk in tiers). The guest
// holds one prepared batch, so each size is prepared before its turn,
// outside the timing.
const sizes = rowsArg.split(',').map(Number).map((rows) => ({
  rows, elements: 7 + 8 * rows, samples: [], check: new ChecksumSink(),
}));
for (const size of sizes) {
  component.prepare(size.rows);
  deliver(component.takeTyped(), size.check);
  size.reps = Math.max(3, Math.floor(100000 / size.elements));
}
const sink = new ChecksumSink();
for (let round = -2; round < rounds; round++) {
  for (const size of sizes) {
    component.prepare(size.rows);
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < size.reps; i++) deliver(component.takeTyped(), sink);
    const ns = Number(process.hrtime.bigint() - t0);
    if (round >= 0) size.samples.push(ns / (size.reps * size.elements));
  }
}
const out = { rows: {} };
for (const { rows, samples, check } of sizes) {
  samples.sort((a, b) => a - b);
  out.rows[rows] = {
    ns_per_element: samples[Math.floor(samples.length / 2)],
    checksum: { calls: check.calls, numbers: check.numbers, text_bytes: check.textBytes },
  };
}
process.stdout.write(JSON.stringify(out));
