// A big guest on each tier: a componentize-js component (SpiderMonkey
// inside, about 12 MB of wasm; bench/engine/js/loop.js) through `cmhost`,
// side by side with the same component under Node.js (V8) through
// `jco transpile`, in one run.
//
// Usage: node js_tiers.mjs CMHOST JS_LOOP.wasm JS_LOOP_TRANSPILED_DIR
//   - compile: `cmhost compile` per tier, cold: wall, CPU of cmhost and its
//     compilers, peak resident memory of the largest process (/usr/bin/time);
//   - whole process: `cmhost run --artifact A --invoke 'loop(0)'` per tier
//     against the interpreter's `cmhost run --invoke 'loop(0)'`;
//   - JavaScript work: loop(1000000) per aot tier against V8, as the time
//     of `--invoke 'loop(1000000)'` less that of `--invoke 'loop(0)'` (the
//     interpreter, about two orders of magnitude slower, is left out).
// Each time but the compiles is the median of 5 runs.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [cmhost, loopWasm, transpiledDir] = process.argv.slice(2);
if (!transpiledDir) {
  console.error("usage: node js_tiers.mjs CMHOST JS_LOOP.wasm JS_LOOP_TRANSPILED_DIR");
  process.exit(2);
}
const RUNS = 5;
const N = 1000000;
const scratch = mkdtempSync(path.join(tmpdir(), "cmhost-js-tiers-"));
const env = { ...process.env, XDG_CACHE_HOME: scratch };
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

function run(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync(cmhost, args, { env, encoding: "utf8", maxBuffer: 1 << 24 });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (result.status !== 0) throw new Error(`cmhost ${args.join(" ")}: exit ${result.status}\n${result.stderr}`);
  return { seconds, stdout: result.stdout.trim() };
}

try {
  console.log(`${path.basename(loopWasm)}: cmhost compile, cold, one run per tier`);
  const lanes = [{ name: "interp", args: [], loop: false }];
  for (const [tier, flags] of [["baseline", ["--baseline"]], ["optimized", []]]) {
    const artifact = path.join(scratch, `${tier}.cmhost-aot`);
    const result = spawnSync("/usr/bin/time", ["-f", "%e %U %S %M", cmhost, "compile", ...flags, loopWasm, "-o", artifact],
                             { env, encoding: "utf8" });
    if (result.status !== 0) throw new Error(`compile (${tier}): ${result.stderr}`);
    const [wall, user, sys, peakKb] = result.stderr.trim().split("\n").at(-1).split(" ").map(Number);
    console.log(`  ${tier}: ${wall.toFixed(1)} s wall, ${(user + sys).toFixed(1)} s CPU, largest process ${(peakKb / 1024).toFixed(0)} MB`);
    lanes.push({ name: `aot ${tier}`, args: ["--artifact", artifact], loop: true });
  }

  const { loop } = await import(pathToFileURL(path.join(transpiledDir, "js-loop.js")).href);
  const expected = String(loop(N));
  const v8 = median(Array.from({ length: RUNS }, () => {
    const start = process.hrtime.bigint();
    loop(N);
    return Number(process.hrtime.bigint() - start) / 1e9;
  }));

  console.log(`whole process (cmhost run --invoke 'loop(0)') and loop(${N}), median of ${RUNS}; V8 (jco transpile) ${(v8 * 1000).toFixed(1)} ms`);
  let interpWhole;
  for (const lane of lanes) {
    const samples = Array.from({ length: RUNS }, () => {
      const empty = run(["run", ...lane.args, "--invoke", "loop(0)", loopWasm]).seconds;
      if (!lane.loop) return { empty, work: NaN };
      const full = run(["run", ...lane.args, "--invoke", `loop(${N})`, loopWasm]);
      if (full.stdout !== expected) throw new Error(`${lane.name}: loop(${N}) = ${full.stdout}, V8 says ${expected}`);
      return { empty, work: full.seconds - empty };
    });
    const whole = median(samples.map((s) => s.empty));
    const work = median(samples.map((s) => s.work));
    interpWhole ??= whole;
    const loopText = lane.loop ? `, loop ${(work * 1000).toFixed(1)} ms (${(work / v8).toFixed(2)}x V8)` : "";
    console.log(`  ${lane.name}: whole process ${(whole * 1000).toFixed(0)} ms (${(whole / interpWhole).toFixed(3)}x the interpreter)${loopText}`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
