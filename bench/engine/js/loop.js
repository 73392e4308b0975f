// The JavaScript work of the tier benchmark: `n` rounds of integer
// arithmetic, a branch and an array store, as interpreters of JavaScript
// spend their time.
const table = new Int32Array(1024);

export function loop(n) {
  let x = 1;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) | 0;
    if (x & 1) table[i & 1023] = x;
    else x ^= table[(x >>> 8) & 1023];
  }
  return x >>> 0;
}
