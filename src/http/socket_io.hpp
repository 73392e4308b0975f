// The non-blocking socket I/O the server's connections and the client's
// requests share: what the kernel takes or has now, never waiting (the
// caller waits for the descriptor in the store's reactor).
#pragma once

#include <cstddef>
#include <string>

namespace cmhost::http {

enum class SocketState { open, would_block, closed };

// Sends what `fd` takes now from the front of `out`, erasing what went:
// `open` when all went, `would_block` when the rest waits for POLLOUT,
// `closed` when the peer is gone (what is left of `out` stays).
SocketState send_pending(int fd, std::string& out);
// Appends to `in` what `fd` has now, until `in` holds `enough` bytes:
// `closed` at the peer's end of stream or a reset, else `would_block`
// (nothing more now) or `open` (stopped at `enough`). `got` says whether
// any byte came.
SocketState receive_available(int fd, std::string& in, size_t enough, bool& got);

}  // namespace cmhost::http
