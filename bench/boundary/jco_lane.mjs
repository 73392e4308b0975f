// The jco lane of the boundary benchmark: the boundary component transpiled
// by `jco transpile` (default options), `take-typed` called from Node and
// the JS values walked into a sink. The driver (driver.cpp) runs this script
// as a child and sends one request per line on stdin; each answer is one
// JSON line on stdout:
//   prepare ROWS       -> {"ok": true}        the guest prepares a batch
//   coverage           -> {"ok": true}        the guest prepares the coverage batch
//   digest [text|float] -> {"calls": [...], "hash": "hex"}
//                         the prepared batch walked into DigestSink (the same
//                         stream as sink.hpp's); `text`/`float` corrupt one
//                         text byte or float bit (the driver's own tests)
//   time REPS          -> {"ns": x}           REPS calls and walks into the
//                         tally sink, timed here with hrtime
//   lift REPS          -> {"ns": x}           REPS calls alone (jco's lift,
//                         no walk), timed the same way
// Usage: node jco_lane.mjs TRANSPILED_DIR
import { pathToFileURL } from 'node:url';
import path from 'node:path';
import readline from 'node:readline';

const [dir] = process.argv.slice(2);
const component = await import(pathToFileURL(path.join(dir, 'boundary.js')).href);

const CASES = ['cache-string', 'register-template', 'append-children', 'assign-id', 'create-placeholder',
  'create-text-node', 'load-template', 'replace-with', 'replace-placeholder', 'insert-after', 'insert-before',
  'set-attribute', 'set-text', 'new-event-listener', 'remove-event-listener', 'remove', 'push-root'];
const CASE_INDEX = new Map(CASES.map((c, i) => [c, i]));
const ATTR_KINDS = new Map([['text', 0], ['float', 1], ['int', 2], ['boolean', 3], ['none', 4]]);
const NODE_KINDS = new Map([['element', 0], ['text', 1], ['dynamic', 2]]);

// What the timed rounds deliver to, as sink.hpp's TallySink: calls per case,
// a sum of ids and numbers, text sizes (JS string lengths). It is not
// compared with the C++ tally (floats are summed differently). The walk
// switches on the tag strings, as a JavaScript developer would write it
// (V8 compares the interned tags by identity).
class TallySink {
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
      switch (n.tag) {
        case 'element': {
          const e = n.val;
          this.numbers += e.tag + (e.ns ?? 0) + e.attrs.length;
          for (const c of e.children) this.numbers += c;
          for (const a of e.attrs) { this.numbers += a.name + (a.ns ?? 0); this.textBytes += a.value.length; }
          break;
        }
        case 'text': this.numbers += 1; this.textBytes += n.val.length; break;
        default: this.numbers += 2; break;
      }
    }
  }
  attribute(p) {
    this.calls[11]++;
    this.numbers += p.id + p.name + (p.ns ?? 0);
    const v = p.value;
    switch (v.tag) {
      case 'text': this.textBytes += v.val.length; break;
      case 'float': this.numbers += 1 + Math.trunc(v.val); break;
      case 'int': this.numbers += 2 + Number(v.val); break;
      case 'boolean': this.numbers += 3 + (v.val ? 1 : 0); break;
      default: this.numbers += 4; break;
    }
  }
}

// 64-bit FNV-1a over the operand stream of sink.hpp's DigestSink, in four
// 16-bit limbs (exact in doubles, no BigInt per byte).
const encoder = new TextEncoder();
const floatView = new DataView(new ArrayBuffer(8));
class DigestSink {
  constructor(corrupt) {
    this.calls = new Array(17).fill(0);
    this.h = [0x2325, 0x8422, 0x9ce4, 0xcbf2];  // 0xcbf29ce484222325, low limb first
    this.corrupt = corrupt;  // 'text' or 'float': change the first one met
  }
  byte(b) {
    const h = this.h;
    h[0] ^= b;
    // h * 0x100000001b3 mod 2^64: 0x1b3 on every limb, and 2^40 = 0x100 on the third limb up.
    let t = h[0] * 0x1b3;
    const n0 = t & 0xffff;
    t = h[1] * 0x1b3 + Math.floor(t / 65536);
    const n1 = t & 0xffff;
    t = h[2] * 0x1b3 + h[0] * 0x100 + Math.floor(t / 65536);
    const n2 = t & 0xffff;
    t = h[3] * 0x1b3 + h[1] * 0x100 + Math.floor(t / 65536);
    h[0] = n0; h[1] = n1; h[2] = n2; h[3] = t & 0xffff;
  }
  u32pair(lo, hi) {
    for (let i = 0; i < 4; i++) this.byte((lo >>> (8 * i)) & 0xff);
    for (let i = 0; i < 4; i++) this.byte((hi >>> (8 * i)) & 0xff);
  }
  int(v) {  // a number below 2^53, or a bigint (s64, two's complement)
    if (typeof v === 'bigint') {
      const u = BigInt.asUintN(64, v);
      this.u32pair(Number(u & 0xffffffffn), Number(u >> 32n));
    } else {
      this.u32pair(v % 0x100000000, Math.floor(v / 0x100000000));
    }
  }
  float(v) {
    floatView.setFloat64(0, v, true);
    let lo = floatView.getUint32(0, true);
    if (this.corrupt === 'float') { lo ^= 1; this.corrupt = undefined; }
    this.u32pair(lo, floatView.getUint32(4, true));
  }
  bytes(b) { this.int(b.length); for (const x of b) this.byte(x); }
  text(s) {
    const b = encoder.encode(s);
    if (this.corrupt === 'text' && b.length > 0) { b[0] ^= 1; this.corrupt = undefined; }
    this.bytes(b);
  }
  option(v) { this.int(v === undefined ? 0 : 1); this.int(v ?? 0); }
  begin(c) { this.calls[c]++; this.byte(c); }
  ints(c, ...values) { this.begin(c); for (const v of values) this.int(v); }
  idText(c, id, t) { this.begin(c); this.int(id); this.text(t); }
  // Template texts are not corrupted (the C++ CorruptingSink leaves them too).
  template(t) {
    this.begin(1);
    this.int(t.id);
    this.int(t.nodes.length);
    for (const n of t.nodes) {
      const kind = NODE_KINDS.get(n.tag);
      this.int(kind);
      if (kind === 0) {
        const e = n.val;
        this.int(e.tag); this.option(e.ns);
        this.int(e.attrs.length);
        for (const a of e.attrs) { this.int(a.name); this.option(a.ns); this.bytes(encoder.encode(a.value)); }
        this.int(e.children.length);
        for (const c of e.children) this.int(c);
      } else if (kind === 1) {
        this.bytes(encoder.encode(n.val));
      }
    }
    this.int(t.roots.length);
    for (const r of t.roots) this.int(r);
  }
  attribute(p) {
    this.begin(11);
    const kind = ATTR_KINDS.get(p.value.tag);
    this.int(p.id); this.int(p.name); this.option(p.ns); this.int(kind);
    if (kind === 0) this.text(p.value.val);
    else if (kind === 1) this.float(p.value.val);
    else if (kind === 2) this.int(p.value.val);
    else if (kind === 3) this.int(p.value.val ? 1 : 0);
  }
  hash() { return this.h.slice().reverse().map((x) => x.toString(16).padStart(4, '0')).join(''); }
}

function deliverTally(ops, sink) {
  for (const op of ops) {
    const p = op.val;
    switch (op.tag) {
      case 'cache-string': sink.calls[0]++; sink.numbers += p.id; sink.textBytes += p.str.length; break;
      case 'register-template': sink.template(p); break;
      case 'append-children': sink.stack(2, p); break;
      case 'assign-id': sink.path(3, p.path, p.id); break;
      case 'create-placeholder': sink.one(4, p); break;
      case 'create-text-node': sink.text(5, p.id, p.text); break;
      case 'load-template': sink.calls[6]++; sink.numbers += p.id + p.tmpl + p.root; break;
      case 'replace-with': sink.stack(7, p); break;
      case 'replace-placeholder': sink.path(8, p.path, p.m); break;
      case 'insert-after': sink.stack(9, p); break;
      case 'insert-before': sink.stack(10, p); break;
      case 'set-attribute': sink.attribute(p); break;
      case 'set-text': sink.text(12, p.id, p.text); break;
      case 'new-event-listener': sink.listener(13, p); break;
      case 'remove-event-listener': sink.listener(14, p); break;
      case 'remove': sink.one(15, p); break;
      case 'push-root': sink.one(16, p); break;
      default: throw new Error(`unknown case ${op.tag}`);
    }
  }
}

function deliverDigest(ops, sink) {
  for (const op of ops) {
    const p = op.val;
    const c = CASE_INDEX.get(op.tag);
    switch (c) {
      case 0: sink.idText(0, p.id, p.str); break;
      case 1: sink.template(p); break;
      case 2: case 7: case 9: case 10: sink.ints(c, p.id, p.m); break;
      case 3: sink.begin(3); sink.bytes(p.path); sink.int(p.id); break;
      case 4: case 15: case 16: sink.ints(c, p); break;
      case 5: case 12: sink.idText(c, p.id, p.text); break;
      case 6: sink.ints(6, p.id, p.tmpl, p.root); break;
      case 8: sink.begin(8); sink.bytes(p.path); sink.int(p.m); break;
      case 11: sink.attribute(p); break;
      case 13: case 14: sink.ints(c, p.id, p.name, p.bubbles ? 1 : 0); break;
      default: throw new Error(`unknown case ${op.tag}`);
    }
  }
}

const tally = new TallySink();
function answer(request) {
  const [verb, arg] = request.trim().split(/\s+/);
  switch (verb) {
    case 'prepare': component.prepare(Number(arg)); return { ok: true };
    case 'coverage': component.prepareCoverage(); return { ok: true };
    case 'digest': {
      const sink = new DigestSink(arg);
      deliverDigest(component.takeTyped(), sink);
      return { calls: sink.calls, hash: sink.hash() };
    }
    case 'time': {
      const reps = Number(arg);
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < reps; i++) deliverTally(component.takeTyped(), tally);
      return { ns: Number(process.hrtime.bigint() - t0) };
    }
    case 'lift': {  // the calls alone: what jco's lift costs without any walk
      const reps = Number(arg);
      let kept = 0;
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < reps; i++) kept += component.takeTyped().length;
      const ns = Number(process.hrtime.bigint() - t0);
      tally.numbers += kept;  // used, so the calls cannot be left out
      return { ns };
    }
    default: throw new Error(`unknown request: ${request}`);
  }
}

for await (const line of readline.createInterface({ input: process.stdin })) {
  process.stdout.write(JSON.stringify(answer(line)) + '\n');
}
