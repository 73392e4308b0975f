#include "cmhost/sort.hpp"

namespace cmhost {

const char* to_string(Sort sort) noexcept {
  switch (sort) {
    case Sort::CoreFunc: return "core func";
    case Sort::CoreTable: return "core table";
    case Sort::CoreMemory: return "core memory";
    case Sort::CoreGlobal: return "core global";
    case Sort::CoreTag: return "core tag";
    case Sort::CoreType: return "core type";
    case Sort::CoreModule: return "core module";
    case Sort::CoreInstance: return "core instance";
    case Sort::Func: return "func";
    case Sort::Value: return "value";
    case Sort::Type: return "type";
    case Sort::Component: return "component";
    case Sort::Instance: return "instance";
  }
  return "?";
}

}  // namespace cmhost
