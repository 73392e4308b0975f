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
  return new Response(`hello from JavaScript: request ${served} of this instance, ${request.method} ${url.pathname}\n`, {
    headers: { "content-type": "text/plain" },
  });
}

addEventListener("fetch", (event) => event.respondWith(handle(event.request)));
