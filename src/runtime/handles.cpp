#include "handles.hpp"

namespace cmhost::runtime {

const char* to_string(HandleKind kind) noexcept {
  switch (kind) {
    case HandleKind::Resource: return "resource handle";
    case HandleKind::Subtask: return "subtask";
    case HandleKind::StreamReadable: return "readable stream end";
    case HandleKind::StreamWritable: return "writable stream end";
    case HandleKind::FutureReadable: return "readable future end";
    case HandleKind::FutureWritable: return "writable future end";
    case HandleKind::WaitableSet: return "waitable set";
    case HandleKind::ErrorContext: return "error-context";
    case HandleKind::SharedStream: return "stream";
    case HandleKind::SharedFuture: return "future";
  }
  return "handle";
}

}  // namespace cmhost::runtime
