// A wasi:http 0.3 middleware (world `http-middleware`): every request goes
// on to the imported handler, the next hop, and its response comes back
// with status 203 (Non-Authoritative Information, as a transforming proxy
// says), or its error as it is. Both ends are synchronous: the export is
// lifted without `async` (its task runs on a fiber of its own) and the
// import lowered without it (the call blocks that task until the next hop
// answers), so the glue is a pair of plain calls.
#include "../http-common.h"

// `result<own<response>, error-code>` in memory: the case at 0, the
// response's handle or the error-code at 8 (error-code's payloads hold
// u64s: it is 8-aligned, at most 32 bytes).
typedef struct handle_result {
  _Alignas(8) uint8_t is_err;
  _Alignas(8) uint8_t payload[32];
} handle_result_t;

IMPORT("wasi:http/handler@0.3.0", "handle")
extern void next_hop_handle(uint32_t request, handle_result_t *ret);
IMPORT("wasi:http/types@0.3.0", "[method]response.set-status-code")
extern uint32_t http_response_set_status_code(uint32_t response, uint32_t status);

static handle_result_t result;

__attribute__((__export_name__("wasi:http/handler@0.3.0#handle"))) handle_result_t *handle(uint32_t request) {
  next_hop_handle(request, &result);
  if (!result.is_err && http_response_set_status_code(*(uint32_t *)result.payload, 203) != 0) __builtin_trap();
  return &result;
}
