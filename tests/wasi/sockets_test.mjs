// Runs tests/wasi/sockets.c (a command calling wasi:sockets directly) under
// `cmhost run --allow-network` against servers started here on 127.0.0.1:
// a TCP echo client, a TCP listener this script connects to, a UDP round
// trip, name lookups, the errors of wrong calls; and without
// --allow-network, access-denied. Prints one line per case, exits 1 when
// any failed.
// Usage: node sockets_test.mjs CMHOST SOCKETS.wasm ENGINE
import { execFile, spawn } from "node:child_process";
import { createSocket } from "node:dgram";
import { connect, createServer } from "node:net";
import { promisify } from "node:util";

const [cmhost, guest, engine] = process.argv.slice(2);
if (!engine) {
  console.error("usage: node sockets_test.mjs CMHOST SOCKETS.wasm ENGINE");
  process.exit(2);
}
const run = (flags, ...args) =>
  promisify(execFile)(cmhost, ["run", `--engine=${engine}`, ...flags, guest, ...args], { timeout: 60000 })
    .then(({ stdout }) => stdout)
    .catch((e) => `exit ${e.code}: ${e.stdout}${e.stderr}`);

let failures = 0;
function expect(name, actual, expected) {
  if (actual === expected) {
    console.log(`ok: ${name}`);
  } else {
    failures++;
    console.log(`FAILED: ${name}\n  expected: ${JSON.stringify(expected)}\n  actual:   ${JSON.stringify(actual)}`);
  }
}

// A TCP echo server; what it received is checked too.
let tcpReceived = "";
const echo = createServer((socket) => {
  socket.on("data", (data) => {
    tcpReceived += data;
    socket.write(data);
  });
  socket.on("error", () => {});
});
await new Promise((resolve) => echo.listen(0, "127.0.0.1", resolve));
expect("tcp echo client", await run(["--allow-network"], "tcp-client", String(echo.address().port), "hello over tcp"),
  "echoed: hello over tcp\n");
expect("tcp echo server received", tcpReceived, "hello over tcp");
// A write without check-write is the guest's error: a trap naming it.
const unpermitted = await run(["--allow-network"], "unpermitted-write", String(echo.address().port));
expect("write without check-write", unpermitted.replace(/^exit 1: .*cmhost: trap: [^\n]*write of more than check-write allowed\n$/s, "trap"),
  "trap");
echo.close();

// The guest listens; this side connects once it says where.
const server = spawn(cmhost, ["run", `--engine=${engine}`, "--allow-network", guest, "tcp-server"]);
const stopServer = setTimeout(() => server.kill(), 60000);  // a guest that never gets its client
let serverOut = "";
const served = new Promise((resolve) => server.on("close", (code) => {
  clearTimeout(stopServer);
  resolve(code);
}));
const port = await new Promise((resolve, reject) => {
  server.stdout.on("data", (data) => {
    serverOut += data;
    const m = /listening on (\d+)\n/.exec(serverOut);
    if (m) resolve(Number(m[1]));
  });
  server.on("close", () => reject(new Error(`the guest ended: ${serverOut}`)));
}).catch((e) => {
  expect("tcp listener", e.message, "listening");
  return 0;
});
if (port) {
  const reply = await new Promise((resolve) => {
    let got = "";
    const client = connect(port, "127.0.0.1", () => client.write("ping\n"));
    client.on("data", (data) => (got += data));
    client.on("end", () => resolve(got));  // the guest shut its sending side down
    client.on("error", (e) => resolve(`error: ${e.message}`));
  });
  expect("tcp listener reply", reply, "got: ping\n");
  expect("tcp listener exit", await served, 0);
  expect("tcp listener output", serverOut.replace(/^listening on \d+\n/, ""), "served: ping\n");
}

// UDP: the server sends each datagram back where it came from.
const udp = createSocket("udp4");
udp.on("message", (message, from) => udp.send(message, from.port, from.address));
await new Promise((resolve) => udp.bind(0, "127.0.0.1", resolve));
expect("udp round trip", await run(["--allow-network"], "udp", String(udp.address().port), "hello over udp"),
  "udp echoed: hello over udp, from the server: yes\n");
udp.close();

const restream = await run(["--allow-network"], "udp-restream");
expect("udp stream while the previous streams live",
  restream.replace(/^exit 1: .*cmhost: trap: [^\n]*stream called before the previous streams were dropped\n$/s, "trap"), "trap");

expect("lookup of an address", await run(["--allow-network"], "lookup", "127.0.0.1"), "127.0.0.1\n");
expect("lookup of localhost", (await run(["--allow-network"], "lookup", "localhost")).split("\n")[0], "127.0.0.1");
// Without a resolver to ask (an offline machine), the failure is temporary.
const unknown = await run(["--allow-network"], "lookup", "no-such-host.invalid");
expect("lookup of an unknown name",
  ["exit 1: lookup: name-unresolvable\n", "exit 1: lookup: temporary-resolver-failure\n"].includes(unknown) ? "refused" : unknown,
  "refused");

expect("errors", await run(["--allow-network"], "errors"), [
  "finish-bind before start-bind: not-in-progress",
  "listen unbound: invalid-state",
  "connect to port 0: invalid-argument",
  "connect to 0.0.0.0: invalid-argument",
  "connect ipv4 socket to ipv6: invalid-argument",
  "bind multicast: invalid-argument",
  "bind while binding: concurrency-conflict",
  "bind twice: invalid-state",
  "connect to a closed port: connection-refused",
  "bind ipv6 socket to ipv4: invalid-argument",
  "lookup of 'not a name': invalid-argument",
  "lookup of 'localhost:80': invalid-argument",
  "udp stream unbound: invalid-state",
  "",
].join("\n"));

expect("network denied", await run([], "denied"), "tcp: access-denied\nudp: access-denied\nlookup: access-denied\n");

console.log(failures ? `${failures} failed` : "all passed");
process.exit(failures ? 1 : 0);
