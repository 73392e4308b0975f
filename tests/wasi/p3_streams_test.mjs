// Runs the exports of tests/components/wasi-p3-streams.wat through
// `cmhost run --invoke`, each in a process of its own with the stdin and
// stdout its case needs: stdin echoed to stdout, 4 MiB written to a slow
// reader, a pending stdin read cancelled, stdin dropped while input keeps
// coming, stdout closed under the writer (exit status from its future),
// paths confined beneath a 0.3 preopen, and the spec's traps for reading
// past the end, writing to a dropped end and reading a future twice. Every
// run has a deadline: a hang is a failure. Prints one line per case and
// `all passed`, or lines with FAILED (exit 1).
// Usage: node p3_streams_test.mjs CMHOST COMPONENT.wasm ENGINE
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, openSync, closeSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [cmhost, component, engine] = process.argv.slice(2);
if (!engine) {
  console.error("usage: node p3_streams_test.mjs CMHOST COMPONENT.wasm ENGINE");
  process.exit(2);
}
const TIMEOUT_MS = 60000;

// Runs `cmhost run --invoke CALL [flags] COMPONENT`. `stdin` is "pipe" (then
// `feed(child)` drives it), "ignore" (/dev/null) or a descriptor; `onSpawn`
// sees the child first. Resolves with the status, the output and whether
// the deadline killed it; stdin is ended once the child is gone.
function run(call, { flags = [], stdin = "ignore", onSpawn, feed, timeout = TIMEOUT_MS, onStdout } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmhost, ["run", `--engine=${engine}`, ...flags, "--invoke", call, component], {
      stdio: [stdin, "pipe", "pipe"],
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, timeout);
    const stdout = [];
    let stderr = "";
    if (child.stdin) child.stdin.on("error", () => {});  // EPIPE once the child is gone
    child.stdout.on("error", () => {});
    child.stderr.on("data", (d) => (stderr += d));
    if (onStdout) onStdout(child, stdout);
    else child.stdout.on("data", (d) => stdout.push(d));
    if (onSpawn) onSpawn(child);
    if (feed) feed(child);
    child.on("error", (e) => (stderr += `spawn: ${e.message}`));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (child.stdin && !child.stdin.destroyed) child.stdin.destroy();
      resolve({ code, signal, timedOut, stdout: Buffer.concat(stdout), stderr });
    });
  });
}

let failures = 0;
function report(name, problems) {
  if (problems.length === 0) {
    console.log(`ok: ${name}`);
  } else {
    failures++;
    console.log(`FAILED: ${name}\n  ${problems.join("\n  ")}`);
  }
}
// What is wrong with a run expected to exit with `code` and print `stdout`
// (a string, or a predicate on the Buffer returning a problem or null).
function check(r, { code = 0, stdout, stderr } = {}) {
  const problems = [];
  if (r.timedOut) problems.push("timed out (a hang): killed at the deadline");
  else if (r.code !== code) problems.push(`exit ${r.code}${r.signal ? ` (signal ${r.signal})` : ""}, expected ${code}`);
  if (typeof stdout === "string" && r.stdout.toString() !== stdout)
    problems.push(`stdout ${JSON.stringify(r.stdout.toString().slice(0, 400))}, expected ${JSON.stringify(stdout.slice(0, 400))}`);
  if (typeof stdout === "function") {
    const problem = stdout(r.stdout);
    if (problem) problems.push(problem);
  }
  if (stderr && !stderr.test(r.stderr)) problems.push(`stderr ${JSON.stringify(r.stderr)}, expected ${stderr}`);
  if (problems.length && r.stderr && !stderr) problems.push(`stderr: ${JSON.stringify(r.stderr)}`);
  return problems;
}

// 1. echo: a text of several reads' worth on stdin comes back on stdout,
// followed by its byte count.
{
  let text = "";
  for (let i = 0; text.length < 20000; i++) text += `line ${i}: the quick brown fox, é, 日本\n`;
  const bytes = Buffer.byteLength(text);
  const r = await run("echo-stdin()", {
    stdin: "pipe",
    feed: (child) => child.stdin.end(text),
  });
  report(`echo-stdin (${bytes} bytes)`, check(r, { stdout: `${text}${bytes}\n` }));
}

// 2. backpressure: 4 MiB of i % 251 to a reader that stops four times for
// 100 ms; every byte arrives once, in order, then the count.
{
  const n = 4 * 1024 * 1024;
  let received = 0;
  let pauses = 0;
  const r = await run(`write-pattern(${n})`, {
    onStdout: (child, chunks) =>
      child.stdout.on("data", (d) => {
        chunks.push(d);
        const before = received;
        received += d.length;
        if (pauses < 4 && Math.floor(received / (n / 5)) > Math.floor(before / (n / 5))) {
          pauses++;
          child.stdout.pause();
          setTimeout(() => child.stdout.resume(), 100);
        }
      }),
  });
  const pattern = (out) => {
    const tail = `${n}\n`;
    if (out.length !== n + tail.length) return `stdout has ${out.length} bytes, expected ${n} + ${JSON.stringify(tail)}`;
    for (let i = 0; i < n; i++)
      if (out[i] !== i % 251) return `byte ${i} is ${out[i]}, expected ${i % 251}`;
    if (out.subarray(n).toString() !== tail) return `stdout ends ${JSON.stringify(out.subarray(n).toString())}, expected ${JSON.stringify(tail)}`;
    return null;
  };
  const problems = check(r, { stdout: pattern });
  if (pauses < 4 && !r.timedOut) problems.push(`the reader paused ${pauses} times, expected 4`);
  report(`write-pattern (4 MiB, slow reader)`, problems);
}

// 3. cancel: a read of stdin with nothing to read is cancelled; stdin stays
// open, with no data, until the child is gone (or the deadline).
{
  const r = await run("cancel-stdin-read()", { stdin: "pipe", timeout: 20000 });
  report("cancel-stdin-read (stdin open, no data)", check(r, { stdout: "1\n" }));
}

// 4. drop early: one chunk read, the stream dropped while the driver keeps
// writing; stdin's future is ok.
{
  let timer;
  const r = await run("drop-stdin-early()", {
    stdin: "pipe",
    timeout: 20000,
    feed: (child) => {
      const more = () => {
        if (child.exitCode !== null || child.signalCode !== null || child.stdin.destroyed) return;
        child.stdin.write("more input\n");
        timer = setTimeout(more, 10);
      };
      more();
    },
  });
  clearTimeout(timer);
  report("drop-stdin-early (input keeps coming)", check(r, { stdout: "1\n" }));
}

// 5. closed pipe: stdout's reader is gone before the guest writes; the
// write reports DROPPED, the future err(pipe), and the guest exits with
// 16 * 1 + 2 = 18.
{
  const r = await run("write-until-closed()", {
    timeout: 20000,
    onStdout: (child) => child.stdout.destroy(),
  });
  report("write-until-closed (stdout closed)", check(r, { code: 18 }));
}

// 6. confinement: `--dir TMP::.`; inside.txt opens; `..`, an absolute path
// and a symlink out are not-permitted (case 30, so 31).
{
  const dir = mkdtempSync(join(tmpdir(), "cmhost-p3-streams-"));
  try {
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "inside.txt"), "inside\n");
    symlinkSync("/etc", join(dir, "escape"));
    const NOT_PERMITTED = 30 + 1;
    for (const [path, expected] of [
      ["inside.txt", 0],
      ["sub/../inside.txt", 0],
      ["../x", NOT_PERMITTED],
      ["/etc/passwd", NOT_PERMITTED],
      ["escape/passwd", NOT_PERMITTED],
      ["missing.txt", 19 + 1 /* no-entry */],
    ]) {
      const r = await run(`open-path(${JSON.stringify(path)})`, { flags: ["--dir", `${dir}::.`] });
      report(`open-path ${JSON.stringify(path)} -> ${expected}`, check(r, { stdout: `${expected}\n` }));
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// 7. the spec's traps, named, with exit 1 and nothing hanging.
{
  const devnull = openSync("/dev/null", "r");
  try {
    const r = await run("read-after-end()", { stdin: devnull, timeout: 20000 });
    report("read-after-end (trap)", check(r, {
      code: 1,
      stderr: /cmhost: trap: .*cannot read from stream after being notified that the writable end dropped/,
    }));
  } finally {
    closeSync(devnull);
  }
}
{
  const r = await run("write-after-drop()", { timeout: 20000 });
  report("write-after-drop (trap)", check(r, { code: 1, stderr: /cmhost: trap: .*(unknown handle|invalid handle)/ }));
}
{
  const r = await run("future-twice()", { timeout: 20000 });
  report("future-twice (trap)", check(r, {
    code: 1,
    stderr: /cmhost: trap: .*cannot read from future after previous read succeeded/,
  }));
}

console.log(failures ? `${failures} FAILED` : "all passed");
process.exit(failures ? 1 : 0);
