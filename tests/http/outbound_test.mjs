// The wasi:http client end to end: ../shared/p3-fixtures' outbound-request
// commands sent to a loopback echo server (Node's http, answering 200 with
// x-wasmtime-test-method, x-wasmtime-test-uri and the request's body, as
// upstream's test server does), with --allow-http; and the error codes a
// refused, denied or malformed request gets, which this guest prints as it
// fails (`Caused by: ErrorCode::...`).
//   node outbound_test.mjs CMHOST ENGINE FIXTURES_DIR
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';

const [cmhost, engine, fixtures] = process.argv.slice(2);
let failures = 0;
function check(ok, what, detail = '') {
  console.log(ok ? `ok: ${what}` : `FAILED: ${what}\n  ${detail}`);
  if (!ok) failures++;
}

const seen = [];
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    seen.push({ method: req.method, url: req.url, body: Buffer.concat(chunks).toString() });
    res.writeHead(200, { 'x-wasmtime-test-method': req.method, 'x-wasmtime-test-uri': req.url });
    res.end(Buffer.concat(chunks));
  });
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const address = `127.0.0.1:${server.address().port}`;

// Runs a fixture without blocking this process's loop (the server answers meanwhile).
function run(fixture, extra, server = address) {
  return new Promise((resolve) => {
    const args = ['run', `--engine=${engine}`, '--compat=sync-cancel-in-set', ...extra, '--env',
                  `HTTP_SERVER=${server}`, path.join(fixtures, `${fixture}.wasm`), '.'];
    const child = spawn(cmhost, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

const get = await run('p3-http-outbound-request-get', ['--allow-http']);
check(get.code === 0, 'GET /get?some=arg&goes=here through wasi:http/client', get.out);
check(seen.some((r) => r.method === 'GET' && r.url === '/get?some=arg&goes=here'), 'the server saw the GET',
      JSON.stringify(seen));
const post = await run('p3-http-outbound-request-post', ['--allow-http']);
check(post.code === 0, 'POST /post with a body through wasi:http/client', post.out);
check(seen.some((r) => r.method === 'POST' && r.url === '/post' && r.body === '{"foo": "bar"}'),
      'the server saw the POST and its body', JSON.stringify(seen));
const before = seen.length;
const denied = await run('p3-http-outbound-request-get', []);
check(denied.code !== 0 && /ErrorCode::HttpRequestDenied/.test(denied.out) && seen.length === before,
      'without --allow-http the request is denied (HTTP-request-denied) and nothing is sent', denied.out.slice(-400));
const failing = [
  ['a refused connection', '127.0.0.1:1', /ErrorCode::ConnectionRefused/],
  ['a name that does not resolve', 'nonexistent.invalid:80', /ErrorCode::DnsError/],
  ['a port out of range', '127.0.0.1:99999', /ErrorCode::HttpRequestUriInvalid/],
  ['an unclosed IPv6 literal', '[::1', /ErrorCode::HttpRequestUriInvalid/],
];
for (const [what, server, expected] of failing) {
  const got = await run('p3-http-outbound-request-get', ['--allow-http'], server);
  check(got.code !== 0 && expected.test(got.out), `${what}: ${expected.source.replace('ErrorCode::', '')}`,
        got.out.slice(-400));
}
server.close();
console.log(failures ? `${failures} FAILED` : 'all passed');
process.exit(failures ? 1 : 0);
