// Writes a component that nests values.wat and exports every function of it
// again, with the same type, through a core module of its own that calls the
// inner function through `canon lower`: each call then moves its values from
// the outer component's memory into the inner one's and back, through the
// runtime's cross-component path. The outer strings are in the given
// encoding, so strings are transcoded between every pair of encodings.
//
//   node values-nested.mjs values.wat out.wat utf8|utf16|latin1+utf16
//
// It also adds raw-* functions that pass chosen core values to inner
// functions reporting what they received (see tests/runtime/values_test.cpp).
import { readFileSync, writeFileSync } from 'node:fs';

const [source, output, encoding] = process.argv.slice(2);
if (!source || !output || !['utf8', 'utf16', 'latin1+utf16'].includes(encoding)) {
  console.error('usage: node values-nested.mjs values.wat out.wat utf8|utf16|latin1+utf16');
  process.exit(2);
}

const RETURN_AREA = 1024; // outer memory: spilled results land here; the heap starts at 32768
const MAX_FLAT_PARAMS = 16;

// S-expressions, comments removed, as nested arrays of tokens.
function parse(text) {
  const tokens = text.replace(/;;[^\n]*/g, '').match(/"[^"]*"|\(|\)|[^\s()]+/g);
  const stack = [[]];
  for (const t of tokens) {
    if (t === '(') stack.push([]);
    else if (t === ')') {
      const done = stack.pop();
      stack[stack.length - 1].push(done);
    } else stack[stack.length - 1].push(t);
  }
  return stack[0];
}

const show = (e) => (typeof e === 'string' ? e : '(' + e.map(show).join(' ') + ')');

// One form on lines of at most 100 columns, broken between tokens.
function wrapped(expr) {
  const lines = [];
  let line = '';
  for (const token of show(expr).split(' ')) {
    if (line && 2 + line.length + 1 + token.length > 100) {
      lines.push(line);
      line = '    ' + token;
    } else line = line ? line + ' ' + token : token;
  }
  lines.push(line);
  return lines.map((l) => '  ' + l).join('\n');
}

const join = (a, b) => (a === b ? a : (a === 'i32' && b === 'f32') || (a === 'f32' && b === 'i32') ? 'i32' : 'i64');

// The flattening of value types (CanonicalABI.md, flatten_type) for
// memory32, with the component's named types.
class Types {
  constructor(forms) {
    const defs = new Map(forms.filter((f) => f[0] === 'type').map((f) => [f[1], f[2]]));
    // (export $name "name" (type $name-def)) names the definition
    this.named = new Map(forms.filter(isTypeExport).map((f) => [f[1], defs.get(f[3][1])]));
  }

  variant(cases) {
    const joined = [];
    for (const c of cases) {
      if (c === null) continue;
      this.flat(c).forEach((t, i) => {
        joined[i] = i < joined.length ? join(joined[i], t) : t;
      });
    }
    return ['i32', ...joined];
  }

  flat(t) {
    if (typeof t === 'string') {
      if (['bool', 's8', 'u8', 's16', 'u16', 's32', 'u32', 'char'].includes(t)) return ['i32'];
      if (t === 's64' || t === 'u64') return ['i64'];
      if (t === 'f32' || t === 'f64') return [t];
      if (t === 'string') return ['i32', 'i32'];
      return this.flat(this.named.get(t));
    }
    const [head, ...rest] = t;
    const isError = (x) => Array.isArray(x) && x[0] === 'error';
    switch (head) {
      case 'enum':
      case 'flags':
        return ['i32'];
      case 'list':
        return rest.length === 1 ? ['i32', 'i32'] : Array(Number(rest[1])).fill(this.flat(rest[0])).flat();
      case 'record':
        return rest.flatMap((field) => this.flat(field[2]));
      case 'tuple':
        return rest.flatMap((e) => this.flat(e));
      case 'variant':
        return this.variant(rest.map((c) => (c.length > 2 ? c[2] : null)));
      case 'option':
        return this.variant([null, rest[0]]);
      case 'result':
        return this.variant([rest.find((x) => !isError(x)) ?? null, rest.find(isError)?.[1] ?? null]);
    }
    throw new Error('no flattening for ' + show(t));
  }
}

function isTypeExport(f) {
  return f[0] === 'export' && Array.isArray(f[3]) && f[3][0] === 'type';
}

// Outer functions handing inner ones chosen core values: a forwarder lifted
// again with a type whose core values are the same, so the runtime must lift
// them as the inner parameter's type on the way in (wrap, check, normalize).
const RAW_BITS = '(param "bits" u32) (result u32)';
const RAW = [
  ...['bool', 's8', 'u8', 's16', 'u16', 'char', 'color', 'perms'].map((t) => [`raw-${t}-bits`, `"${t}-bits"`, RAW_BITS]),
  ['raw-var-bits', '"var-bits"', '(param "case" u32) (param "a" u64) (param "b" u32) (result (tuple u32 u64 u32))'],
  ['raw-spill-bytes', '"spill-bytes"', '(param "words" (list u32 17)) (result (list u8))'],
];

const OUTER_LIBC = `  ;; The outer memory and allocator.
  (core module $libc
    (memory (export "mem") 1)
    (global $bump (mut i32) (i32.const 32768))
    (func (export "realloc") (param $old i32) (param $old_size i32) (param $align i32) (param $new_size i32) (result i32)
      (local $ret i32) (local $end i32) (local $have i32)
      (local.set $ret
        (i32.and (i32.add (global.get $bump) (i32.sub (local.get $align) (i32.const 1)))
                 (i32.sub (i32.const 0) (local.get $align))))
      (local.set $end (i32.add (local.get $ret) (local.get $new_size)))
      (local.set $have (i32.shl (memory.size) (i32.const 16)))
      (if (i32.gt_u (local.get $end) (local.get $have))
        (then
          (if (i32.eq (memory.grow (i32.shr_u (i32.add (i32.sub (local.get $end) (local.get $have))
                                                       (i32.const 0xFFFF))
                                              (i32.const 16)))
                      (i32.const -1))
            (then unreachable))))
      (global.set $bump (local.get $end))
      (memory.copy (local.get $ret) (local.get $old)
        (select (local.get $old_size) (local.get $new_size)
                (i32.lt_u (local.get $old_size) (local.get $new_size))))
      (local.get $ret)))
  (core instance $libc (instantiate $libc))`;

const text = readFileSync(source, 'utf8');
const forms = parse(text)[0].slice(1); // the forms inside (component ...)
const types = new Types(forms);
const funcs = forms.filter((f) => f[0] === 'func');
const options = `string-encoding=${encoding} (memory (core memory $libc "mem")) (realloc (core func $libc "realloc"))`;
const signature = (ps, rs) => ps.map((p) => ` (param ${p})`).join('') + rs.map((r) => ` (result ${r})`).join('');

const inner = text
  .slice(text.indexOf('(component\n'))
  .trimEnd()
  .replace('(component\n', '(component $values\n')
  .split('\n')
  .map((l) => (l ? '  ' + l : l))
  .join('\n');

const lowers = [];
const imports = [];
const forwarders = [];
const lifts = [];
const index = new Map();
funcs.forEach((func, k) => {
  const name = func[1][1];
  index.set(name, k);
  const params = func.filter((p) => Array.isArray(p) && p[0] === 'param');
  const result = func.find((r) => Array.isArray(r) && r[0] === 'result')?.[1];
  const flatParams = params.flatMap((p) => types.flat(p[2]));
  const flatResult = result === undefined ? [] : types.flat(result);
  const coreParams = flatParams.length <= MAX_FLAT_PARAMS ? flatParams : ['i32'];
  const spilled = flatResult.length > 1;

  lowers.push(`  (core func $lowered${k} (canon lower (func $v ${name}) ${options}))`);
  imports.push(`    (import "values" "${k}" (func $f${k}${signature(spilled ? [...coreParams, 'i32'] : coreParams, spilled ? [] : flatResult)}))`);
  const args = coreParams.map((_, i) => ` (local.get ${i})`).join('');
  const body = spilled ? `(call $f${k}${args} (i32.const ${RETURN_AREA})) (i32.const ${RETURN_AREA})` : `(call $f${k}${args})`;
  forwarders.push(`    (func (export "${k}")${signature(coreParams, spilled ? ['i32'] : flatResult)}\n      ${body})`);
  const head = [`(func (export ${name})`, ...params.map(show), ...(result === undefined ? [] : [`(result ${show(result)})`])];
  lifts.push(`  ${head.join(' ')}\n    (canon lift (core func $i "${k}") ${options}))`);
});
for (const [raw, target, sig] of RAW) lifts.push(`  (func (export "${raw}") ${sig}\n    (canon lift (core func $i "${index.get(target)}") ${options}))`);
// An f32 with chosen bits needs a core function of its own.
forwarders.push(`    (func (export "raw-f32") (param i32) (result i32)\n      (call $f${index.get('"f32-bits"')} (f32.reinterpret_i32 (local.get 0))))`);
lifts.push(`  (func (export "raw-f32-bits") ${RAW_BITS}\n    (canon lift (core func $i "raw-f32") ${options}))`);

const out = [
  `;; Generated by values-nested.mjs from values.wat, with the outer strings in ${encoding}.`,
  '(component',
  inner,
  '  (instance $v (instantiate $values))',
  '',
  '  ;; The same named types, exported by the outer component.',
  ...forms.filter((f) => f[0] === 'type' || isTypeExport(f)).map(wrapped),
  '',
  OUTER_LIBC,
  '',
  '  ;; Each inner function lowered into the outer memory.',
  ...lowers,
  '',
  '  ;; Forwarders: flat arguments (or the pointer to spilled ones) passed on;',
  `  ;; spilled results through the return area at ${RETURN_AREA}.`,
  '  (core module $forward',
  '    (import "libc" "mem" (memory 1))',
  ...imports,
  ...forwarders,
  '  )',
  '  (core instance $i (instantiate $forward',
  '    (with "libc" (instance $libc))',
  '    (with "values" (instance',
  ...funcs.map((_, k) => `      (export "${k}" (func $lowered${k}))`),
  '    ))))',
  '',
  '  ;; The same functions, lifted again.',
  ...lifts,
  ')',
];
writeFileSync(output, out.join('\n') + '\n');
