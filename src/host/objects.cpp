#include "objects.hpp"

#include <string>

#include "cmhost/error.hpp"
#include "type_name.hpp"

namespace cmhost::host {

uint32_t Objects::add(std::shared_ptr<void> object, const std::type_info& type) {
  uint32_t rep;
  if (!free_.empty()) {
    rep = free_.back();
    free_.pop_back();
  } else {
    if (slots_.size() >= UINT32_MAX) throw Error(ErrorKind::Usage, "too many host objects in one store");
    rep = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  }
  slots_[rep] = {std::move(object), &type};
  ++live_;
  return rep;
}

void* Objects::get(uint32_t rep, const std::type_info& type) const {
  if (rep >= slots_.size() || !slots_[rep].object)
    throw_invalid_value("no host object " + std::to_string(rep) + " in this store");
  const Slot& slot = slots_[rep];
  if (*slot.type != type)
    throw_invalid_value("host object " + std::to_string(rep) + " is a " + type_name(*slot.type) + ", not a " +
                        type_name(type));
  return slot.object.get();
}

void Objects::remove(uint32_t rep) {
  if (rep >= slots_.size() || !slots_[rep].object) return;
  // Moved out first: the object's destructor may reach this table again.
  const std::shared_ptr<void> object = std::move(slots_[rep].object);
  slots_[rep].type = nullptr;
  free_.push_back(rep);
  --live_;
}

}  // namespace cmhost::host
