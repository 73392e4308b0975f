// The host objects behind a store's host resources: a resource's rep is a
// slot here, and dropping its last own handle frees the object. Private to
// the host room; cmhost::Store owns one.
#pragma once

#include <cstdint>
#include <memory>
#include <typeinfo>
#include <vector>

namespace cmhost::host {

class Objects {
 public:
  // Keeps `object` (of dynamic type `type`) and returns its rep.
  uint32_t add(std::shared_ptr<void> object, const std::type_info& type);
  // The object of `rep`; Error (InvalidValue) naming both types when it is
  // not a `type`, or when there is no such object.
  void* get(uint32_t rep, const std::type_info& type) const;
  // Frees the object of `rep` (its destructor runs); nothing if there is none.
  void remove(uint32_t rep);
  size_t size() const { return live_; }

 private:
  struct Slot {
    std::shared_ptr<void> object;
    const std::type_info* type = nullptr;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  size_t live_ = 0;
};

}  // namespace cmhost::host
