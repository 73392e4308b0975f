// `cmhost bindgen`: reads a component, or encodes WIT with the pinned jco
// (tools/wit-encode.mjs), and writes the header generate_bindings makes.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "bindgen.hpp"
#include "cmhost/error.hpp"
#include "support/files.hpp"

extern char** environ;

namespace cmhost::tools {

namespace fs = std::filesystem;

namespace {

std::vector<uint8_t> read_bytes(const fs::path& path) { return support::read_file(path.string()); }

// The world's encoding from WIT, by the Node script; its stderr is the
// message when it fails.
std::vector<uint8_t> encode_wit(const BindgenCommand& command) {
  char scratch_template[] = "/tmp/cmhost-bindgen-XXXXXX";
  const char* scratch = mkdtemp(scratch_template);
  if (!scratch) throw Error(ErrorKind::Usage, "cannot create a scratch directory for the WIT encoding");
  const fs::path dir(scratch);
  const fs::path out = dir / "world.wasm", errors = dir / "stderr";
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ec;
      fs::remove_all(dir, ec);
    }
  } cleanup{dir};

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, errors.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const std::string out_path = out.string();
  std::vector<std::string> argv_strings = {command.node,  command.wit_encoder, command.node_modules,
                                           command.input, command.world,       out_path};
  std::vector<char*> argv;
  for (std::string& a : argv_strings) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned = posix_spawnp(&pid, command.node.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0)
    throw Error(ErrorKind::Usage, "cannot run " + command.node + " to encode WIT (jco is needed for WIT input): " +
                                      std::strerror(spawned));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    const std::vector<uint8_t> message = read_bytes(errors);
    std::string text(message.begin(), message.end());
    while (!text.empty() && text.back() == '\n') text.pop_back();
    throw Error(ErrorKind::Validate, text.empty() ? "encoding the WIT failed" : text);
  }
  return read_bytes(out);
}

// Written beside the target and renamed: a build never sees half a header.
void write_whole(const fs::path& target, const std::string& text) {
  const fs::path partial = target.string() + ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw Error(ErrorKind::Usage, "cannot write " + partial.string());
  }
  fs::rename(partial, target);
}

bool is_wit(const fs::path& path) { return fs::is_directory(path) || path.extension() == ".wit"; }

}  // namespace

int run_bindgen(const BindgenCommand& command) {
  try {
    if (!command.output.empty() && !command.split_dir.empty())
      throw Error(ErrorKind::Usage, "-o and --split both say where to write: give one");
    const fs::path input(command.input);
    if (!fs::exists(input)) throw Error(ErrorKind::Usage, "no such file or directory: " + command.input);
    const std::vector<uint8_t> bytes = is_wit(input) ? encode_wit(command) : read_bytes(input);
    BindgenOptions options;
    options.world = command.world;
    options.root_namespace = command.root_namespace;
    options.interface_namespace = command.interface_namespace;
    options.containers = command.containers;
    options.source_name = input.filename().string();
    if (!command.split_dir.empty()) {
      const fs::path dir(command.split_dir);
      fs::create_directories(dir);
      for (const BindingFile& file : generate_split_bindings(bytes, options)) write_whole(dir / file.name, file.text);
      return 0;
    }
    const std::string header = generate_bindings(bytes, options);
    if (command.output.empty()) {
      std::cout << header;
      return 0;
    }
    write_whole(command.output, header);
    return 0;
  } catch (const Error& e) {
    std::cerr << "cmhost: " << to_string(e.kind()) << ": " << e.what() << "\n";
    return 2;
  } catch (const fs::filesystem_error& e) {
    std::cerr << "cmhost: " << e.what() << "\n";
    return 2;
  }
}

}  // namespace cmhost::tools
