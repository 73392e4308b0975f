// `cmhost serve` end to end: a server on an ephemeral loopback port, asked
// by real clients (Debian's curl, and raw sockets for what curl will not
// send: chunked trailers, malformed and lying requests), then stopped with
// SIGTERM, which must end it with status 0.
//   node serve_test.mjs CMHOST ENGINE FIXTURES_DIR SCENARIO
// SCENARIO: hello (p3-cli-serve-hello-world), health (--health-path, on
// the same), echo (p3-http-echo),
// bad-input (the server's own refusals, on the echo service): DIR is
// ../shared/p3-fixtures; misbehave (tests/guests/http-service, a service
// that traps, lies about its length, never answers, by method): DIR is
// the build's tests/components; proxy-misbehave (tests/guests/http-proxy,
// the same for a wasi:http@0.2 proxy): DIR is tests/components; workers
// (both of those with --workers 2), fairness (more connections than room,
// on the service), reuse (a service's instances made, shared and retired):
// DIR is tests/components; js-proxy (tests/http/js-proxy, a
// wasi:http@0.2 fetch-event handler built with componentize-js): DIR holds
// its js-proxy.wasm (the build's tests/js-proxy).
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

const [cmhost, engine, fixtures, scenario, p3Fixtures] = process.argv.slice(2);
let failures = 0;
function check(ok, what, detail = '') {
  if (ok) {
    console.log(`ok: ${what}`);
  } else {
    failures++;
    console.log(`FAILED: ${what}${detail ? `\n  ${detail}` : ''}`);
  }
}

// Starts `cmhost serve` on 127.0.0.1:0 and resolves with its port once it
// says where it listens.
// One worker unless `extra` asks for more: most scenarios count on one
// server's state (its one instance, its room).
function startServer(component, extra = []) {
  const workers = extra.includes('--workers') ? [] : ['--workers', '1'];
  const args = ['serve', `--engine=${engine}`, '--compat=sync-cancel-in-set', '--addr', '127.0.0.1:0', '--log',
                ...workers, ...extra, component];
  const child = spawn(cmhost, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const ready = new Promise((resolve, reject) => {
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      const m = /Serving HTTP on http:\/\/127\.0\.0\.1:(\d+)\//.exec(stderr);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`cmhost serve exited with ${code} before listening:\n${stderr}`)));
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  // What the server said, once it said `pattern` (or after `ms`): curl runs
  // synchronously, so its stderr arrives only once the loop turns.
  const said = async (pattern, ms = 5000) => {
    for (const end = Date.now() + ms; !pattern.test(stderr) && Date.now() < end;)
      await new Promise((resolve) => setTimeout(resolve, 20));
    return pattern.test(stderr);
  };
  return { child, ready, exited, stderr: () => stderr, said };
}

// Sends raw bytes, reads until the server closes (or `idleMs` without a byte).
function raw(port, bytes, { idleMs = 5000, endAfterWrite = false } = {}) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks = [];
    let timer;
    const finish = (how) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), how });
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish('idle'), idleMs);
    };
    socket.on('connect', () => {
      socket.write(bytes);
      if (endAfterWrite) socket.end();
      arm();
    });
    socket.on('data', (d) => {
      chunks.push(d);
      arm();
    });
    socket.on('end', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    socket.on('error', () => finish('error'));
  });
}

// A raw HTTP/1.1 response: status, lowercase headers, body (dechunked), trailers.
function parseResponse(text) {
  const headEnd = text.indexOf('\r\n\r\n');
  if (headEnd < 0) return null;
  const lines = text.slice(0, headEnd).split('\r\n');
  const status = Number(lines[0].split(' ')[1]);
  const headers = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let rest = text.slice(headEnd + 4);
  let body = '';
  const trailers = {};
  let complete = true;
  if ((headers['transfer-encoding'] || '').toLowerCase() === 'chunked') {
    complete = false;
    for (;;) {
      const eol = rest.indexOf('\r\n');
      if (eol < 0) break;
      const size = parseInt(rest.slice(0, eol), 16);
      rest = rest.slice(eol + 2);
      if (size === 0) {
        for (;;) {
          const end = rest.indexOf('\r\n');
          if (end < 0) break;
          const line = rest.slice(0, end);
          rest = rest.slice(end + 2);
          if (line === '') {
            complete = true;
            break;
          }
          const colon = line.indexOf(':');
          trailers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
        }
        break;
      }
      body += rest.slice(0, size);
      rest = rest.slice(size + 2);
    }
  } else if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    body = rest.slice(0, length);
    complete = body.length === length;
    rest = rest.slice(length);
  } else {
    body = rest;
    rest = '';
  }
  return { status, headers, body, trailers, complete, rest };
}

function curl(args, input) {
  try {
    return { out: execFileSync('curl', ['-sS', '--max-time', '30', ...args],
                               { encoding: 'latin1', input, maxBuffer: 64 << 20 }), code: 0 };
  } catch (e) {
    return { out: e.stdout || '', code: e.status, err: e.stderr };
  }
}

async function stopAndCheck(server, { trapsExpected = false } = {}) {
  server.child.kill('SIGTERM');
  const { code, signal } = await server.exited;
  check(code === 0, `SIGTERM stops the server with status 0`, `code ${code} signal ${signal}\n${server.stderr()}`);
  if (!trapsExpected)
    check(!/guest trapped|cut off/.test(server.stderr()), 'no guest trapped, no response was cut off', server.stderr());
}

async function hello() {
  const server = startServer(path.join(fixtures, 'p3-cli-serve-hello-world.wasm'));
  const port = await server.ready;
  // Several requests in a row, on one connection (curl reuses it) and on new ones.
  const url = `http://127.0.0.1:${port}/`;
  const many = curl(['-w', '%{http_code}\\n', url, url, url]);
  check(many.code === 0 && many.out === 'Hello, WASI!200\n'.repeat(3), 'three requests on one connection',
        JSON.stringify(many));
  for (let i = 0; i < 3; i++) {
    const one = curl(['-w', ' %{http_code} %{num_connects}', url]);
    check(one.out === 'Hello, WASI! 200 1', `request ${i + 1} on a new connection`, JSON.stringify(one));
  }
  const head = curl(['-I', url]);
  check(/^HTTP\/1\.1 200/.test(head.out), 'HEAD answers 200 without a body', JSON.stringify(head));
  const http10 = await raw(port, 'GET / HTTP/1.0\r\n\r\n');
  const r10 = parseResponse(http10.text);
  check(r10 && r10.status === 200 && r10.body === 'Hello, WASI!' && http10.how === 'closed',
        'an HTTP/1.0 request gets the body until the connection closes', JSON.stringify(http10));
  const pipelined = await raw(port, 'GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
  const first = parseResponse(pipelined.text);
  const second = first && parseResponse(first.rest);
  check(first && second && first.body === 'Hello, WASI!' && second.body === 'Hello, WASI!',
        'two pipelined requests get two responses, in order', JSON.stringify(pipelined));
  check(await server.said(/(127\.0\.0\.1:\d+ GET \/ 200[^\n]*\n[^]*){8}/), '--log writes one line per request',
        server.stderr());
  await stopAndCheck(server);
}

// --health-path: the server answers the probe itself, on a kept-alive
// connection, between pipelined requests; any other path or a query goes
// to the guest.
async function health() {
  const server = startServer(path.join(fixtures, 'p3-cli-serve-hello-world.wasm'),
                             ['--health-path', '/healthz', '--metrics-path', '/metrics']);
  const port = await server.ready;
  const base = `http://127.0.0.1:${port}`;
  const probes = curl(['-w', ' %{http_code} %{num_connects}\n', `${base}/healthz`, `${base}/healthz`]);
  check(probes.out === 'ok\n 200 1\nok\n 200 0\n', 'the health path gets 200 ok, twice on one connection',
        JSON.stringify(probes));
  const head = curl(['-I', `${base}/healthz`]);
  check(/^HTTP\/1\.1 200/.test(head.out) && /content-length: 3/i.test(head.out), 'HEAD of the health path: 200, no body',
        JSON.stringify(head));
  const guest = curl(['-w', ' %{http_code}\n', `${base}/healthz?full`, `${base}/other`]);
  check(guest.out === 'Hello, WASI! 200\nHello, WASI! 200\n', 'a query or another path goes to the guest',
        JSON.stringify(guest));
  const pipelined = await raw(port, 'GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
  const first = parseResponse(pipelined.text);
  const second = first && parseResponse(first.rest);
  check(first && second && first.body === 'ok\n' && second.body === 'Hello, WASI!',
        'a probe and a request pipelined get their responses in order', JSON.stringify(pipelined));
  check(await server.said(/GET \/healthz 200/), '--log has the probe', server.stderr());
  // --metrics-path: 4 probes and 3 guest requests so far, one instance.
  const metrics = curl([`${base}/metrics`]).out;
  check(/^cmhost_http_requests_total\{status="200"\} 7$/m.test(metrics) &&
        /^cmhost_http_request_duration_seconds_count 7$/m.test(metrics) &&
        /^cmhost_instantiation_duration_seconds_count 1$/m.test(metrics) &&
        /^cmhost_instances_live 1$/m.test(metrics) &&
        /^cmhost_http_request_duration_seconds_bucket\{le="\+Inf"\} 7$/m.test(metrics),
        'the metrics count the requests, the instance and its instantiation', metrics);
  await stopAndCheck(server);
  const wrong = spawnSync(cmhost, ['serve', `--engine=${engine}`, '--health-path', 'healthz',
                                   path.join(fixtures, 'p3-cli-serve-hello-world.wasm')], { encoding: 'utf8' });
  check(wrong.status === 2 && /--health-path takes a path that starts with \//.test(wrong.stderr),
        'a health path without its slash is refused', JSON.stringify(wrong));
}

async function echo() {
  const server = startServer(path.join(fixtures, 'p3-http-echo.wasm'));
  const port = await server.ready;
  const url = `http://127.0.0.1:${port}/echo`;
  const body = 'And the mome raths outgrabe';
  const posted = curl(['-i', '-X', 'POST', '-H', 'foo: bar', '--data-binary', body, url]);
  const p = parseResponse(posted.out);
  check(p && p.status === 200 && p.body === body && p.headers.foo === 'bar', 'a POST is echoed with its header and body',
        JSON.stringify(posted));
  // Chunked with trailers, which curl does not send: a raw request.
  const chunked = await raw(port,
      'POST /echo HTTP/1.1\r\nHost: x\r\nfoo: bar\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n' +
      '4\r\nAnd \r\n17\r\nthe mome raths outgrabe\r\n0\r\nfizz: buzz\r\n\r\n');
  const c = parseResponse(chunked.text);
  check(c && c.status === 200 && c.body === body && c.trailers.fizz === 'buzz' && c.complete,
        'a chunked body and its trailers are echoed, chunked with trailers', JSON.stringify(chunked));
  // A large body, to a guest that reads as it goes.
  const large = Array.from({ length: 3 << 17 }, (_, i) => String(i % 10).repeat(7) + '\n').join('');
  const big = curl(['-X', 'PUT', '--data-binary', '@-', url], large);
  check(big.code === 0 && big.out === large, `a ${large.length}-byte body comes back whole and in order`,
        `got ${big.out.length} bytes, status ${big.code}`);
  // x-host-to-host: the guest hands the request's body stream and trailers
  // future back as the response's, so the host is on both ends of each.
  const handedOn = await raw(port,
      'POST /echo HTTP/1.1\r\nHost: x\r\nx-host-to-host: 1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n' +
      '4\r\nAnd \r\n17\r\nthe mome raths outgrabe\r\n0\r\nfizz: buzz\r\n\r\n');
  const h = parseResponse(handedOn.text);
  check(h && h.status === 200 && h.body === body && h.trailers.fizz === 'buzz' && h.complete,
        'a body and trailers the guest hands on go from host to host', JSON.stringify(handedOn));
  const bigHandedOn = curl(['-X', 'PUT', '-H', 'x-host-to-host: 1', '--data-binary', '@-', url], large);
  check(bigHandedOn.code === 0 && bigHandedOn.out === large,
        `a ${large.length}-byte body handed on comes back whole and in order`,
        `got ${bigHandedOn.out.length} bytes, status ${bigHandedOn.code}`);
  await stopAndCheck(server);
}

async function badInput() {
  const server = startServer(path.join(fixtures, 'p3-http-echo.wasm'), ['--idle-timeout', '1']);
  const port = await server.ready;
  const cases = [
    ['a malformed request line', 'GARBAGE\r\n\r\n', 400],
    ['a bad header line', 'GET / HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n', 400],
    ['an unknown HTTP version', 'GET / HTTP/2.7\r\nHost: x\r\n\r\n', 505],
    ['oversized headers', `GET / HTTP/1.1\r\nHost: x\r\nbig: ${'a'.repeat(70 * 1024)}\r\n\r\n`, 431],
    ['too many header fields', `GET / HTTP/1.1\r\n${Array.from({ length: 150 }, (_, i) => `h${i}: v\r\n`).join('')}\r\n`,
     431],
    ['a bad chunk size', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', 400],
    ['two different content-lengths', 'POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
     400],
  ];
  for (const [what, request, status] of cases) {
    const got = await raw(port, request);
    const r = parseResponse(got.text);
    check(r && r.status === status && got.how === 'closed', `${what}: ${status}, then the connection closes`,
          JSON.stringify(got).slice(0, 300));
  }
  // A client that sends half a head and then nothing: closed once idle.
  const started = Date.now();
  const slow = await raw(port, 'GET / HTTP/1.1\r\nHost: x\r\n', { idleMs: 10000 });
  check(slow.how === 'closed' && Date.now() - started < 8000, 'a stalled request head is closed after the idle timeout',
        JSON.stringify(slow));
  // A body shorter than its Content-Length, the client gone: the server survives.
  await raw(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten b', { endAfterWrite: true,
                                                                                                 idleMs: 2000 });
  const after = curl(['-X', 'POST', '--data-binary', 'still here', `http://127.0.0.1:${port}/`]);
  check(after.out === 'still here', 'the server serves on after a client left mid-body', JSON.stringify(after));
  check(await server.said(/POST \/echo: the client went before the response ended/),
        'the request whose client left is ended, saying why', server.stderr());
  await stopAndCheck(server, { trapsExpected: true });
}

// --workers 2: two servers on one port (SO_REUSEPORT), each with a store
// and an instance of its own; requests from many connections at once all
// answered; a spinning request still times out no sooner than
// --request-timeout (one ticker for both); SIGTERM drains both.
async function workers() {
  const service = path.join(fixtures, 'http-service.wasm');
  const refused = spawnSync(cmhost, ['serve', `--engine=${engine}`, '--workers', '0', service], { encoding: 'utf8' });
  check(refused.status === 2 && /--workers takes at least 1/.test(refused.stderr), '--workers 0 is refused',
        JSON.stringify(refused));
  for (const [file, body] of [[service, 'hello from a C service\n'],
                              [path.join(fixtures, 'http-proxy.wasm'), 'hello from a C proxy\n']]) {
    const server = startServer(file, ['--workers', '2', '--request-timeout', '1', '--metrics-path', '/metrics']);
    const port = await server.ready;
    const url = `http://127.0.0.1:${port}/`;
    const answers = await Promise.all(Array.from({ length: 40 }, async () => {
      const got = await raw(port, 'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
      const r = parseResponse(got.text);
      return r && r.status === 200 && r.body === body;
    }));
    check(answers.every(Boolean), `${path.basename(file)}: 40 connections at once, all answered`,
          JSON.stringify(answers));
    const started = Date.now();
    const spin = curl(['-w', '%{http_code}', '-X', 'SPIN', url]);
    const took = Date.now() - started;
    check(/500$/.test(spin.out) && took >= 1000 && took < 5000,
          `${path.basename(file)}: a spinning request gets a 500 after the timeout, not before (${took} ms)`,
          JSON.stringify(spin));
    check(curl(['-w', ' %{http_code}', url]).out === `${body} 200`, `${path.basename(file)}: and the next is answered`);
    // Both workers' counts in one: 41 answered, one 500. A service has an
    // instance per worker at first, and more where over 16 requests were
    // in one at once (--max-instance-concurrency), the spinning one's
    // retired; a proxy, one per request, the spinning one's perhaps not yet
    // interrupted.
    const metrics = curl([`${url}metrics`]).out;
    const service = file.endsWith('http-service.wasm');
    const made = Number((/^cmhost_instantiation_duration_seconds_count (\d+)$/m.exec(metrics) || [])[1]);
    const live = Number((/^cmhost_instances_live (\d+)$/m.exec(metrics) || [])[1]);
    check(/^cmhost_http_requests_total\{status="200"\} 41$/m.test(metrics) &&
          /^cmhost_http_requests_total\{status="500"\} 1$/m.test(metrics) &&
          (service ? made >= 2 && made <= 8 && live >= 1 && live < made : made === 42 && live <= 1),
          `${path.basename(file)}: the metrics of both workers together (made ${made}, live ${live})`, metrics);
    await stopAndCheck(server, { trapsExpected: true });
  }
  await socketActivation(service, 'hello from a C service\n');
}

// systemd's socket activation: a listening socket passed as descriptor 3
// with LISTEN_FDS=1 and LISTEN_PID naming the server is served instead of
// --addr, by every worker.
async function socketActivation(file, body) {
  const listener = net.createServer();
  await new Promise((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const port = listener.address().port;
  // $$ is the shell's pid, the server's once it execs.
  const child = spawn('/bin/sh', ['-c', 'export LISTEN_PID=$$ LISTEN_FDS=1; exec "$0" "$@"', cmhost, 'serve',
                                  `--engine=${engine}`, '--compat=sync-cancel-in-set', '--addr', '127.0.0.1:1',
                                  '--workers', '2', file],
                      { stdio: ['ignore', 'pipe', 'pipe', listener._handle.fd] });
  listener.close();  // the server's copy listens on
  const server = { child, stderr: () => stderr,
                   exited: new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal }))) };
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  for (const end = Date.now() + 60000; !/Serving HTTP/.test(stderr) && Date.now() < end;)
    await new Promise((resolve) => setTimeout(resolve, 20));
  check(stderr.includes(`Serving HTTP on http://127.0.0.1:${port}/`),
        'a socket passed by socket activation is served instead of --addr', stderr);
  const answers = await Promise.all(Array.from({ length: 20 }, async () => {
    const r = parseResponse((await raw(port, 'GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')).text);
    return r && r.status === 200 && r.body === body;
  }));
  check(answers.every(Boolean), 'the passed socket\'s connections are all answered', JSON.stringify(answers));
  await stopAndCheck(server);
}

// More connections than --max-concurrent-requests: the waiting ones get
// their turns in the order they came, so none starves. Fifty keep-alive
// connections send 100 requests each, one at a time, with room for one
// request at once: served in turn they all finish near the end; a
// starved one would finish long after the first.
async function fairness() {
  const server = startServer(path.join(fixtures, 'http-service.wasm'), ['--max-concurrent-requests', '1']);
  const port = await server.ready;
  const started = Date.now();
  const finished = await Promise.all(Array.from({ length: 50 }, () => new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let left = 100, text = '';
    const ask = () => socket.write('GET / HTTP/1.1\r\nHost: a\r\n\r\n');
    socket.on('connect', ask);
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      for (let r; (r = parseResponse(text)) && r.complete;) {
        text = r.rest;
        if (--left === 0) {
          socket.end();
          return resolve(Date.now() - started);
        }
        ask();
      }
    });
    socket.on('error', () => resolve(Infinity));
  })));
  const first = Math.min(...finished), last = Math.max(...finished);
  check(last < 60000 && first >= last / 2,
        `fifty connections sharing one request's room all finish together (first ${first} ms, last ${last} ms)`);
  await stopAndCheck(server);
}

async function misbehave() {
  const server = startServer(path.join(fixtures, 'http-service.wasm'), ['--request-timeout', '1']);
  const port = await server.ready;
  const url = `http://127.0.0.1:${port}/`;
  const ok = () => curl(['-w', ' %{http_code}', url]).out === 'hello from a C service\n 200';
  check(ok(), 'GET answers');
  const before = curl(['-w', '%{http_code}', '-X', 'POST', url]);
  check(/500$/.test(before.out) && await server.said(/guest trapped: unreachable/),
        'a trap before the response: 500, and the trap on stderr', JSON.stringify(before));
  check(ok(), 'a new instance answers the next request');
  const after = curl(['-X', 'PUT', url]);
  check(after.code === 18 && after.out === 'partial', 'a trap after the headers: the response is cut off',
        JSON.stringify(after));
  check(ok(), 'and the next request is answered');
  const longer = curl(['-X', 'DELETE', url]);
  check(longer.code === 18 && await server.said(/DELETE \/: the response is cut off: HTTP-response-body-size/),
        'a body longer than its content-length is cut off', JSON.stringify(longer));
  const forbidden = curl(['-X', 'PATCH', url]);
  check(forbidden.out === 'forbidden', 'a guest setting a forbidden header is refused (forbidden)',
        JSON.stringify(forbidden));
  const other = curl(['-w', '%{http_code}', '-X', 'TRACE', url]);
  check(other.out === '405', 'the guest\'s own status goes out', JSON.stringify(other));
  const started = Date.now();
  const never = curl(['-w', '%{http_code}', '-X', 'OPTIONS', url]);
  const waited = Date.now() - started;
  check(/500$/.test(never.out) && waited >= 900 && waited < 5000 && await server.said(/guest timed out after 1000 ms/),
        `a guest that never answers: 500 after --request-timeout (${waited} ms)`, JSON.stringify(never));
  check(ok(), 'and the next request gets a new instance');
  // The loop is the guest's thread here: only the interrupt ends the spin.
  const spinStarted = Date.now();
  const spun = curl(['-w', '%{http_code}', '--max-time', '10', '-X', 'SPIN', url]);
  const spunFor = Date.now() - spinStarted;
  check(/500$/.test(spun.out) && spunFor >= 900 && spunFor < 5000 &&
        await server.said(/guest timed out after 1000 ms: interrupted/),
        `a guest spinning without returning: interrupted, 500 after --request-timeout (${spunFor} ms)`,
        `${JSON.stringify(spun)}\n${server.stderr()}`);
  check(ok(), 'and the next request gets a new instance');
  // HANDON hands the request's body on after a wait, by when the host has
  // offered a body that already ended to the guest: its end and trailers
  // must still go on, or the response never ends.
  for (let i = 0; i < 3; i++) {
    const empty = curl(['--max-time', '5', '-w', "'%{http_code}'", '-X', 'HANDON', url]);
    check(empty.code === 0 && empty.out === "'200'", `an ended, empty body handed on ends its response (${i + 1})`,
          JSON.stringify(empty));
  }
  const handedOn = await raw(port,
      'HANDON / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n' +
      '4\r\nAnd \r\n17\r\nthe mome raths outgrabe\r\n0\r\nfizz: buzz\r\n\r\n');
  const h = parseResponse(handedOn.text);
  check(h && h.status === 200 && h.body === 'And the mome raths outgrabe' && h.trailers.fizz === 'buzz' && h.complete,
        'an ended body and its trailers handed on after a wait go out whole', JSON.stringify(handedOn));
  // The guest counts the tasks the host cancelled, in this instance.
  const gaveUp = curl(['--max-time', '0.3', '-X', 'OPTIONS', url]);
  let cancelled = '';
  for (const end = Date.now() + 3000; cancelled !== '1' && Date.now() < end;) {
    cancelled = curl(['-X', 'CANCELLED', url]).out;
    if (cancelled !== '1') await new Promise((resolve) => setTimeout(resolve, 50));
  }
  check(gaveUp.code === 28 && cancelled === '1', 'a client that leaves has its request\'s task cancelled',
        `${JSON.stringify(gaveUp)} cancelled: ${JSON.stringify(cancelled)}`);
  await stopAndCheck(server, { trapsExpected: true });

  // One request at a time: two trapping requests wait behind one that times
  // out. The first traps as it enters; the second must not enter (and trap)
  // while the server is still failing the first.
  const single = startServer(path.join(fixtures, 'http-service.wasm'),
                             ['--request-timeout', '1', '--max-concurrent-requests', '1']);
  const singlePort = await single.ready;
  const ask = (method) => raw(singlePort, `${method} / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
  const stuck = ask('OPTIONS');
  await new Promise((resolve) => setTimeout(resolve, 200));
  const queued = await Promise.all([stuck, ask('POST'), ask('POST')]);
  const statuses = queued.map((r) => (parseResponse(r.text) || {}).status);
  check(statuses.every((status) => status === 500), 'requests queued behind a timeout that trap get 500s',
        `${JSON.stringify(statuses)}\n${single.stderr()}`);
  check(curl(['-w', ' %{http_code}', `http://127.0.0.1:${singlePort}/`]).out === 'hello from a C service\n 200',
        'and the server still answers', single.stderr());
  await stopAndCheck(single, { trapsExpected: true });
}

// A 0.3 service's instances (--max-instance-reuse, --max-instance-
// concurrency, --instance-idle-timeout), counted by the metrics: each
// instance is made once and, retired, freed.
async function reuse() {
  const file = path.join(fixtures, 'http-service.wasm');
  const countsOf = (port) => {
    const metrics = curl([`http://127.0.0.1:${port}/metrics`]).out;
    const made = /^cmhost_instantiation_duration_seconds_count (\d+)$/m.exec(metrics);
    const live = /^cmhost_instances_live (\d+)$/m.exec(metrics);
    return made && live ? { made: Number(made[1]), live: Number(live[1]) } : { made: NaN, live: NaN };
  };
  const instancesOf = (port) => {
    const { made, live } = countsOf(port);
    return `made ${made}, live ${live}`;
  };
  const get = (port) => curl(['-w', ' %{http_code}', `http://127.0.0.1:${port}/`]).out === 'hello from a C service\n 200';

  // Ten requests, three an instance: four instances, the three retired ones freed.
  const reused = startServer(file, ['--max-instance-reuse', '3', '--metrics-path', '/metrics']);
  const reusedPort = await reused.ready;
  const answered = Array.from({ length: 10 }, () => get(reusedPort));
  check(answered.every(Boolean), 'ten requests with --max-instance-reuse 3 are answered');
  const afterTen = instancesOf(reusedPort);
  check(afterTen === 'made 4, live 1', `each instance serves three requests, then goes (${afterTen})`, afterTen);
  await stopAndCheck(reused);

  // Three requests at once, two an instance: a second instance takes the
  // third; the next request goes to the first instance with room.
  const shared = startServer(file, ['--max-instance-concurrency', '2', '--metrics-path', '/metrics']);
  const sharedPort = await shared.ready;
  const hanging = Array.from({ length: 3 }, () => {
    const socket = net.connect(sharedPort, '127.0.0.1');
    socket.on('connect', () => socket.write('OPTIONS / HTTP/1.1\r\nHost: x\r\n\r\n'));
    socket.on('error', () => {});
    return socket;
  });
  let atOnce = '';
  for (const end = Date.now() + 3000; atOnce !== 'made 2, live 2' && Date.now() < end;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    atOnce = instancesOf(sharedPort);
  }
  check(atOnce === 'made 2, live 2', `three requests at once, two an instance: two instances (${atOnce})`, atOnce);
  for (const socket of hanging) socket.destroy();  // the clients leave: their tasks are cancelled
  let cancelled = '';
  for (const end = Date.now() + 3000; cancelled !== '2' && Date.now() < end;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    cancelled = curl(['-X', 'CANCELLED', `http://127.0.0.1:${sharedPort}/`]).out;
  }
  check(cancelled === '2', 'the next request goes to the first instance, where two tasks were cancelled',
        `cancelled: ${JSON.stringify(cancelled)}\n${shared.stderr()}`);
  await stopAndCheck(shared);

  // An instance without a request for --instance-idle-timeout goes; the
  // next request gets a new one. (The first instance, made at start, may
  // have gone before the first request on a slow machine.)
  const idle = startServer(file, ['--instance-idle-timeout', '0.3', '--metrics-path', '/metrics']);
  const idlePort = await idle.ready;
  check(get(idlePort), 'a request before the instance is idle');
  await new Promise((resolve) => setTimeout(resolve, 800));
  const idleNow = countsOf(idlePort);
  check(idleNow.live === 0 && idleNow.made >= 1, `an idle instance goes (made ${idleNow.made}, live ${idleNow.live})`);
  check(get(idlePort), 'and the next request gets a new one');
  const afterIdle = countsOf(idlePort);
  check(afterIdle.made === idleNow.made + 1 && afterIdle.live === 1,
        `made anew (made ${afterIdle.made}, live ${afterIdle.live})`);
  await stopAndCheck(idle);

  const wrong = spawnSync(cmhost, ['serve', `--engine=${engine}`, '--max-instance-reuse', '0', file], { encoding: 'utf8' });
  check(wrong.status === 2 && /--max-instance-reuse takes at least 1/.test(wrong.stderr),
        '--max-instance-reuse 0 is refused', JSON.stringify(wrong));
}

// A 0.2 proxy: a fresh instance for every request (each says it is its
// instance's first), bodies both ways, requests at once, a failing handler.
async function jsProxy() {
  const server = startServer(path.join(fixtures, 'js-proxy.wasm'));
  const port = await server.ready;
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 3; i++) {
    const one = curl(['-w', ' %{http_code}', `${url}/hello`]);
    check(one.out === 'hello from JavaScript: request 1 of this instance, GET /hello\n 200',
          `request ${i + 1} in a row gets a fresh instance`, JSON.stringify(one));
  }
  const kept = curl(['-w', '%{http_code}\n', `${url}/a`, `${url}/b`]);
  check(kept.out === 'hello from JavaScript: request 1 of this instance, GET /a\n200\n' +
                     'hello from JavaScript: request 1 of this instance, GET /b\n200\n',
        'two requests on one kept-alive connection', JSON.stringify(kept));
  const posted = curl(['-i', '-X', 'POST', '--data-binary', 'And the mome raths outgrabe', `${url}/echo`]);
  const p = parseResponse(posted.out);
  check(p && p.status === 201 && p.body === 'And the mome raths outgrabe' && p.headers['x-method'] === 'POST' &&
        p.headers['x-length'] === '27', 'a POST body reaches the guest and its response comes back', JSON.stringify(posted));
  // More than the exchange holds at once in either direction.
  const large = Array.from({ length: 1 << 16 }, (_, i) => String(i % 10).repeat(15) + '\n').join('');
  const big = curl(['-X', 'PUT', '--data-binary', '@-', `${url}/echo`], large);
  check(big.code === 0 && big.out === large, `a ${large.length}-byte body goes through and back whole`,
        `got ${big.out.length} bytes, status ${big.code}`);
  const parallel = curl(['-Z', '--parallel-max', '4', '-w', '%{http_code}\n', ...[1, 2, 3, 4].map((i) => `${url}/p${i}`)]);
  check(parallel.code === 0 && (parallel.out.match(/request 1 of this instance/g) || []).length === 4 &&
        (parallel.out.match(/^200$/gm) || []).length === 4, 'four requests at once, each on its own instance',
        JSON.stringify(parallel));
  const failing = curl(['-X', 'GET', `${url}/throw`]);
  check(failing.code === 18 && await server.said(/GET \/throw: the response is cut off: the guest dropped its body without finishing it/),
        'a handler that throws after its headers: the response is cut off, saying why', JSON.stringify(failing));
  await raw(port, 'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly ten b', { endAfterWrite: true,
                                                                                                 idleMs: 3000 });
  const after = curl(['-w', ' %{http_code}', `${url}/after`]);
  check(after.out === 'hello from JavaScript: request 1 of this instance, GET /after\n 200',
        'the server serves on after a client left mid-body', JSON.stringify(after));
  check(await server.said(/(GET \/hello 200[^\n]*\n[^]*){3}/), '--log writes one line per request', server.stderr());
  await stopAndCheck(server, { trapsExpected: true });
}

// --fuel bounds each request's guest: too little for JavaScript to start
// gives a 500 saying so, and the server goes on.
async function jsProxyFuel() {
  const server = startServer(path.join(fixtures, 'js-proxy.wasm'), ['--fuel', '1000']);
  const port = await server.ready;
  for (let i = 0; i < 2; i++) {
    const starved = curl(['-w', '%{http_code}', `http://127.0.0.1:${port}/`]);
    check(/500$/.test(starved.out), `request ${i + 1} past its fuel gets a 500`, JSON.stringify(starved));
  }
  check(await server.said(/out of fuel/), 'the server says the guest ran out of fuel', server.stderr());
  await stopAndCheck(server, { trapsExpected: true });
}

// fetch() in a 0.2 proxy: wasi:http/outgoing-handler, against an upstream
// of the test's own; denied without --allow-http.
async function jsProxyFetch() {
  // The upstream runs in a process of its own: curl blocks this one.
  const upstream = spawn(process.execPath, ['-e', `
    const server = require('node:http').createServer((req, res) => {
      let body = '';
      req.on('data', (d) => { body += d; });
      req.on('end', () => {
        res.setHeader('x-echo', req.method + ' ' + req.url + ' ' + req.headers['x-from']);
        res.end('got ' + body.length + ' bytes: ' + body);
      });
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const upstreamPort = await new Promise((resolve) => upstream.stdout.once('data', (d) => resolve(Number(String(d)))));
  const target = `http://127.0.0.1:${upstreamPort}/up?x=1`;
  const allowed = startServer(path.join(fixtures, 'js-proxy.wasm'), ['--allow-http']);
  const port = await allowed.ready;
  const fetched = curl(['-i', '-H', `x-upstream: ${target}`, `http://127.0.0.1:${port}/fetch`]);
  const f = parseResponse(fetched.out);
  check(f && f.status === 200 && f.body === 'upstream 200: got 13 bytes: sent upstream' &&
        f.headers['x-upstream-header'] === 'POST /up?x=1 js-proxy', 'fetch() reaches the upstream and its answer comes back',
        JSON.stringify(fetched));
  const refused = curl(['-w', ' %{http_code}', '-H', 'x-upstream: http://127.0.0.1:1/', `http://127.0.0.1:${port}/fetch`]);
  check(/^fetch failed: .* 502$/.test(refused.out), 'a refused connection fails the fetch', JSON.stringify(refused));
  await stopAndCheck(allowed);
  const denied = startServer(path.join(fixtures, 'js-proxy.wasm'));
  const deniedPort = await denied.ready;
  const no = curl(['-w', ' %{http_code}', '-H', `x-upstream: ${target}`, `http://127.0.0.1:${deniedPort}/fetch`]);
  check(/^fetch failed: .* 502$/.test(no.out), 'without --allow-http the fetch is denied', JSON.stringify(no));
  await stopAndCheck(denied);
  upstream.kill();
}

// A 0.2 proxy of our own, on either engine: each request a fresh instance,
// whatever the last one did.
async function proxyMisbehave() {
  // One request at a time: a guest thread still running holds the next.
  const server = startServer(path.join(fixtures, 'http-proxy.wasm'),
                             ['--request-timeout', '1', '--max-concurrent-requests', '1']);
  const port = await server.ready;
  const url = `http://127.0.0.1:${port}/`;
  const ok = () => curl(['-w', ' %{http_code}', url]).out === 'hello from a C proxy\n 200';
  check(ok(), 'GET answers');
  const large = Array.from({ length: 1 << 15 }, (_, i) => String(i % 10).repeat(15) + '\n').join('');
  const echoed = curl(['-X', 'POST', '--data-binary', '@-', url], large);
  check(echoed.code === 0 && echoed.out === large, `a ${large.length}-byte body is echoed whole`,
        `got ${echoed.out.length} bytes, status ${echoed.code}`);
  const partial = curl(['-w', '%{http_code}', '-X', 'PUT', url]);
  check((partial.code === 18 && partial.out.startsWith('partial')) || /500$/.test(partial.out),
        'a trap after the response was set: a 500, or the response cut off', JSON.stringify(partial));
  check(await server.said(/PUT \/: (trap: unreachable|the response is cut off: trap: unreachable)/),
        'the trap is what the server reports', server.stderr());
  check(ok(), 'the next request gets a fresh instance');
  // Each of the next two responses fails before its end: whether the client
  // has its head and declared bytes (then the connection closes) or a 500
  // depends on when the server's loop takes the head.
  const cutOrRefused = (got, reason) => got.out === '012' || got.out === `${reason}\n`;
  const longer = curl(['-X', 'DELETE', url]);
  // The guest's write and finish fail, or it traps.
  check(cutOrRefused(longer, "the guest's body of 10 bytes breaks its content-length of 3") &&
        await server.said(/DELETE \/: (the response is cut off: )?the guest's body of 10 bytes breaks its content-length of 3/),
        'a body longer than its content-length: its write and finish fail with HTTP-response-body-size(10), ' +
        'the client has the declared bytes or a 500', `${JSON.stringify(longer)}\n${server.stderr()}`);
  const shorter = curl(['-X', 'SHORT', url]);
  check(cutOrRefused(shorter, "the guest's body of 3 bytes breaks its content-length of 10") &&
        await server.said(/SHORT \/: (the response is cut off: )?the guest's body of 3 bytes breaks its content-length of 10/),
        'a body shorter than its content-length: its finish fails with HTTP-response-body-size(3), the response is cut off',
        `${JSON.stringify(shorter)}\n${server.stderr()}`);
  const forbidden = curl(['-X', 'PATCH', url]);
  check(forbidden.out === 'forbidden', 'a guest setting a forbidden header is refused (forbidden)',
        JSON.stringify(forbidden));
  const unset = curl(['-w', ' %{http_code}', '-X', 'OPTIONS', url]);
  check(/500$/.test(unset.out) && /without a response/.test(unset.out), 'a guest that never sets a response: 500',
        JSON.stringify(unset));
  const trapped = curl(['-w', ' %{http_code}', '-X', 'TRACE', url]);
  check(/500$/.test(trapped.out) && /unreachable/.test(trapped.out), 'a trap before the response: 500 saying so',
        JSON.stringify(trapped));
  const other = curl(['-w', '%{http_code}', '-X', 'FOO', url]);
  check(other.out === '405', 'the guest\'s own status goes out', JSON.stringify(other));
  const spinStarted = Date.now();
  const spun = curl(['-w', '%{http_code}', '--max-time', '10', '-X', 'SPIN', url]);
  const spunFor = Date.now() - spinStarted;
  check(/500$/.test(spun.out) && spunFor >= 900 && spunFor < 5000 && await server.said(/guest timed out after 1000 ms on SPIN/),
        `a guest spinning without calling the host: 500 after --request-timeout (${spunFor} ms)`, JSON.stringify(spun));
  const next = curl(['--max-time', '5', '-w', ' %{http_code}', url]);
  check(next.out === 'hello from a C proxy\n 200',
        'its thread is interrupted, so the next request (one at a time) is answered', JSON.stringify(next));
  check(ok(), 'and the server serves on');
  await stopAndCheck(server, { trapsExpected: true });
}

// A wasi:http 0.3 middleware (tests/guests/http-middleware): its imported
// handler goes to --next-hop's component, or else to the network.
async function middleware() {
  const component = path.join(fixtures, 'http-middleware.wasm');
  const hello = path.join(p3Fixtures, 'p3-cli-serve-hello-world.wasm');
  const server = startServer(component, ['--next-hop', hello]);
  const port = await server.ready;
  for (let i = 0; i < 2; i++) {
    const got = curl(['-w', ' %{http_code}', `http://127.0.0.1:${port}/`]);
    check(got.out === 'Hello, WASI! 203', `request ${i + 1}: the next hop's response, its status set by the middleware`,
          JSON.stringify(got));
  }
  await stopAndCheck(server);
  // A next hop that traps is replaced along with the middleware's instance.
  const service = startServer(component, ['--next-hop', path.join(fixtures, 'http-service.wasm')]);
  const servicePort = await service.ready;
  const serviceUrl = `http://127.0.0.1:${servicePort}/`;
  const trapped = curl(['-w', '%{http_code}', '-X', 'POST', serviceUrl]);
  check(/500$/.test(trapped.out) && await service.said(/guest trapped/), 'a next hop that traps: 500',
        `${JSON.stringify(trapped)}\n${service.stderr()}`);
  for (let i = 0; i < 2; i++) {
    const got = curl(['-w', ' %{http_code}', serviceUrl]);
    check(got.out === 'hello from a C service\n 203', `request ${i + 1} after it goes to a new next hop`,
          `${JSON.stringify(got)}\n${service.stderr()}`);
  }
  await stopAndCheck(service, { trapsExpected: true });
  // Without a next hop the handler is the network, which needs --allow-http.
  const alone = startServer(component);
  const alonePort = await alone.ready;
  const denied = curl(['-w', '%{http_code}', `http://127.0.0.1:${alonePort}/`]);
  check(/500$/.test(denied.out) && await alone.said(/the handler failed GET \/: HTTP-request-denied/),
        'without --next-hop the imported handler is the network: denied without --allow-http',
        `${JSON.stringify(denied)}\n${alone.stderr()}`);
  await stopAndCheck(alone, { trapsExpected: true });
  // With --allow-http the request goes where its Host says: an upstream
  // echo (in a process of its own: curl blocks this one). The request's
  // body and the upstream's response body are handed on unread, so each
  // goes from host to host, through the client and the server.
  const upstream = spawn(process.execPath, ['-e', `
    const server = require('node:http').createServer((req, res) => {
      res.setHeader('x-echo', req.method + ' ' + req.url);
      req.pipe(res);
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const upstreamPort = await new Promise((resolve) => upstream.stdout.once('data', (d) => resolve(Number(String(d)))));
  process.on('exit', () => upstream.kill());
  const open = startServer(component, ['--allow-http']);
  const openPort = await open.ready;
  const large = Array.from({ length: 1 << 16 }, (_, i) => String(i % 10).repeat(15) + '\n').join('');
  const relayed = curl(['-w', '\n%{http_code} %header{x-echo}', '-H', `Host: 127.0.0.1:${upstreamPort}`, '-X', 'PUT',
                        '--data-binary', '@-', `http://127.0.0.1:${openPort}/up?x=1`], large);
  check(relayed.code === 0 && relayed.out === `${large}\n203 PUT /up?x=1`,
        `a ${large.length}-byte body goes upstream and back, handed on by the middleware`,
        `${relayed.out.length} bytes, ending ${JSON.stringify(relayed.out.slice(-40))}\n${open.stderr()}`);
  // Over 1 MiB curl sends `Expect: 100-continue` and waits: the server says
  // continue; the middleware passes the field on, so the upstream answers
  // 100 Continue first, an interim response the client passes over.
  const started = Date.now();
  const expecting = curl(['-w', '\n%{http_code}', '-H', `Host: 127.0.0.1:${upstreamPort}`, '-X', 'PUT',
                          '--data-binary', '@-', `http://127.0.0.1:${openPort}/expect`], large.repeat(3));
  const took = Date.now() - started;
  check(expecting.code === 0 && expecting.out === `${large.repeat(3)}\n203` && took < 900,
        `a ${3 * large.length}-byte body after 100 Continue, from the server and from the upstream (${took} ms)`,
        `${expecting.out.length} bytes, status ${expecting.code}\n${open.stderr()}`);
  await stopAndCheck(open);
  upstream.kill();
  // A next hop for a component that imports no handler.
  const wrong = spawnSync(cmhost, ['serve', `--engine=${engine}`, '--addr', '127.0.0.1:0', '--next-hop', hello, hello],
                          { encoding: 'utf8', timeout: 60000 });
  check(wrong.status === 2 && /--next-hop: the served component imports no wasi:http\/handler/.test(wrong.stderr),
        '--next-hop for a component without a handler import is refused', JSON.stringify(wrong));
}

const scenarios = { hello, health, workers, fairness, reuse, echo, 'bad-input': badInput, misbehave, 'proxy-misbehave': proxyMisbehave, 'js-proxy': jsProxy, 'js-proxy-fuel': jsProxyFuel,
                    'js-proxy-fetch': jsProxyFetch, middleware };
try {
  await scenarios[scenario]();
} catch (e) {
  check(false, `scenario ${scenario}`, e.stack);
}
console.log(failures ? `${failures} FAILED` : 'all passed');
process.exit(failures ? 1 : 0);
