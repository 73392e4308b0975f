// A fetch-event handler: `served` counts the requests this instance saw,
// so every response says 1 when each request gets a fresh instance.
let served = 0;

async function handle(request) {
  served += 1;
  const url = new URL(request.url);
  if (url.pathname === "/echo") {
    const body = await request.text();
    return new Response(body, {
      status: 201,
      headers: { "content-type": "text/plain", "x-method": request.method, "x-length": String(body.length) },
    });
  }
  if (url.pathname === "/throw") throw new Error("the handler failed on purpose");
  if (url.pathname === "/fetch") {
    // The upstream a test names: its answer passed on, or why there is none.
    try {
      const upstream = await fetch(request.headers.get("x-upstream"), {
        method: "POST",
        headers: { "x-from": "js-proxy" },
        body: "sent upstream",
      });
      const text = await upstream.text();
      return new Response(`upstream ${upstream.status}: ${text}`, { headers: { "x-upstream-header": upstream.headers.get("x-echo") ?? "" } });
    } catch (e) {
      return new Response(`fetch failed: ${e.message}`, { status: 502 });
    }
  }
  return new Response(`hello from JavaScript: request ${served} of this instance, ${request.method} ${url.pathname}\n`, {
    headers: { "content-type": "text/plain" },
  });
}

addEventListener("fetch", (event) => event.respondWith(handle(event.request)));
