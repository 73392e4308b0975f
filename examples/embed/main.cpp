// An embedder of the installed cmhost package: loads a component, supplies
// its import with a typed host function that reads the store's user data,
// and calls its export with C++ values.
//
//   embed app.wasm
#include <cmhost/cmhost.hpp>

#include <cstdint>
#include <iostream>

// The store's user data: the next id to hand out.
struct Ids {
  uint32_t next = 100;
};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: embed COMPONENT.wasm\n";
    return 2;
  }
  try {
    cmhost::Engine engine;
    const auto component = cmhost::Component::from_file(engine, argv[1]);
    cmhost::Store store(engine, Ids{});
    cmhost::Linker linker;
    linker.func_wrap("next-id", [](cmhost::Caller& caller) { return caller.data<Ids>().next++; });
    const auto instance = linker.instantiate(store, component);
    const auto sum_ids = instance.typed_func<uint32_t(uint32_t)>("sum-ids");
    std::cout << "sum-ids(3) = " << sum_ids.call(store, 3) << "\n";
    std::cout << "next id: " << store.data<Ids>().next << "\n";
  } catch (const cmhost::Error& e) {
    std::cerr << "embed: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
