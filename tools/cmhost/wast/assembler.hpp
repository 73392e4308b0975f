// Component text to binary for `cmhost wast`, with the project's pinned jco.
//
// One Node process (tools/wast-assemble.mjs) serves the whole run, started on
// the first text not found in the cache; results, failures included, are
// cached by content so a repeat run needs no Node at all.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cmhost::tools::wast {

struct AssemblerConfig {
  std::string node = "node";        // the Node executable (searched in PATH)
  std::string node_modules;         // the tree holding @bytecodealliance/jco-transpile
  std::string helper_script;        // wast-assemble.mjs
  std::optional<std::string> cache_dir;  // no cache when unset
};

struct Assembled {
  bool ok = false;
  std::vector<uint8_t> wasm;  // ok
  std::string error;          // !ok: why jco refused the text
};

class Assembler {
 public:
  explicit Assembler(AssemblerConfig config);
  ~Assembler();
  Assembler(const Assembler&) = delete;
  Assembler& operator=(const Assembler&) = delete;

  // Assembles every text, in order. Throws cmhost::Error (Usage) when texts
  // are not cached and the helper cannot be started or stops answering.
  std::vector<Assembled> assemble(const std::vector<std::string>& texts);

  // How many texts came from the cache and how many from jco, for --verbose.
  size_t cache_hits() const { return cache_hits_; }
  size_t assembled() const { return assembled_; }

 private:
  void start_helper();
  std::string read_line();
  std::string cache_path(const std::string& text) const;
  std::optional<Assembled> cache_load(const std::string& text) const;
  void cache_store(const std::string& text, const Assembled& result) const;

  AssemblerConfig config_;
  std::string cache_salt_;  // jco's version and the helper's text: a new jco gets new entries
  pid_t helper_pid_ = -1;
  int to_helper_ = -1;
  int from_helper_ = -1;
  std::string pending_;  // bytes read past the last line
  size_t cache_hits_ = 0;
  size_t assembled_ = 0;
};

}  // namespace cmhost::tools::wast
