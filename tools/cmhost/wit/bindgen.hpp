// `cmhost bindgen`: a C++ header of typed host bindings for a world, the
// C++ counterpart of wasmtime's `bindgen!`.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "cmhost/types.hpp"

namespace cmhost::tools {

struct BindgenOptions {
  // The world of a WIT package encoding to generate for (`world` or
  // `ns:pkg/world`); empty: its only world. Ignored for a component, whose
  // own imports and exports are its world.
  std::string world;
  // The namespace of the world's own items (root functions, world-level
  // types and the class wrapping an instance). Empty: the world's package
  // and name, or `component` for a component binary.
  std::string root_namespace;
  // The namespace the interfaces' namespaces (`ns::pkg::iface`) are put in,
  // e.g. `myapp::bindings`, so that two sets of bindings of one package
  // made with different options can live in one program. Empty: the
  // global namespace.
  std::string interface_namespace;
  // Where the header says it was generated from.
  std::string source_name;
  // The containers of strings, lists and maps throughout the header:
  // std::string and std::vector (owning); FrameString and FrameVector,
  // allocated from the thread's frame arena (frame: calls that make values
  // run under a typed::FrameScope); std::pmr containers (pmr); or owning
  // containers for what the host makes and, for exports' results, views
  // into the guest's memory handed to a callback before post-return
  // (views: a `PointView` twin of each type holding strings or lists).
  enum class Containers { Owning, Frame, Pmr, Views };
  Containers containers = Containers::Owning;
};

// The header for `bytes`: a component binary, or the binary encoding of a
// WIT package (a component exporting its worlds as component types). Throws
// cmhost::Error (Decode, Validate) for bytes that are neither, and (Usage)
// naming the item for what the bindings cannot express. Async functions are
// host methods completing a TypedCompletion and TypedAsyncFunc calls;
// streams and futures are typed handles (StreamReader and FutureReader
// when a host function takes one).
std::string generate_bindings(std::span<const uint8_t> bytes, const BindgenOptions& options);

// The same bindings as one header per interface (named after its namespace
// below `interface_namespace`, e.g. `wasi_io_streams.hpp`, including the
// headers of the interfaces whose types it uses) and `world.hpp`, which
// includes them all and adds the world's own items.
struct BindingFile {
  std::string name;
  std::string text;
};
std::vector<BindingFile> generate_split_bindings(std::span<const uint8_t> bytes, const BindgenOptions& options);

// `cmhost bindgen INPUT [--world NAME] [-o OUT.hpp | --split DIR]`: INPUT is a component
// binary, or a WIT file or directory, encoded with the pinned jco through
// `wit_encoder` (a Node script) first. Returns the exit status (2 on
// errors, with a message on stderr).
struct BindgenCommand {
  std::string input;
  std::string world;
  std::string output;     // empty: stdout (or split_dir)
  std::string split_dir;  // one header per interface in this directory
  std::string root_namespace;
  std::string interface_namespace;
  BindgenOptions::Containers containers = BindgenOptions::Containers::Owning;
  std::string node = "node";
  std::string node_modules;
  std::string wit_encoder;
};
int run_bindgen(const BindgenCommand& command);

}  // namespace cmhost::tools
