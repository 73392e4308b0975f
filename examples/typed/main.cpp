// A host written against the header `cmhost bindgen` generates from
// app.wit: it implements the imported `canvas` interface (a Host class and
// the `layer` resource's class), adds it to a linker, and calls the guest's
// `scene` export with C++ values: records, variants with named cases, flags,
// tuples, lists and strings, and a resource whose objects are the host's.
//
//   typed app.wasm
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "app.hpp"

namespace canvas = example::shapes::canvas;
namespace scene = example::shapes::scene;

// One layer of the host's canvas: it prints what the guest draws on it.
class PrintedLayer final : public canvas::Layer {
 public:
  explicit PrintedLayer(std::string name) : name_(std::move(name)) {}
  ~PrintedLayer() override { std::cout << "layer " << name_ << ": " << drawn_ << " shapes, dropped\n"; }

  uint32_t draw(cmhost::Caller&, canvas::Shape shape, canvas::Style style) override {
    std::cout << "layer " << name_ << ": " << describe(shape) << (style.has(canvas::Style::bold) ? " bold" : "")
              << (style.has(canvas::Style::filled) ? " filled" : "") << "\n";
    return ++drawn_;
  }

 private:
  static std::string describe(const canvas::Shape& shape) {
    if (const auto* c = std::get_if<canvas::shape::Circle>(&shape)) {
      const auto& [center, radius] = c->value;
      return "circle at (" + std::to_string(center.x) + ", " + std::to_string(center.y) + ") r " +
             std::to_string(radius);
    }
    if (const auto* p = std::get_if<canvas::shape::Polygon>(&shape))
      return "polygon of " + std::to_string(p->value.size()) + " points";
    return "label \"" + std::get<canvas::shape::Label>(shape).value + "\"";
  }

  std::string name_;
  uint32_t drawn_ = 0;
};

class Canvas final : public canvas::Host {
 public:
  std::unique_ptr<canvas::Layer> layer_new(cmhost::Caller&, std::string name) override {
    std::cout << "layer " << name << ": made\n";
    return std::make_unique<PrintedLayer>(std::move(name));
  }
};

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: typed COMPONENT.wasm\n";
    return 2;
  }
  try {
    cmhost::Engine engine;
    cmhost::Store store(engine);
    cmhost::Linker linker;
    example::shapes::app::add_to_linker(linker, std::make_shared<Canvas>());
    const auto app = example::shapes::app::App::instantiate(store, cmhost::Component::from_file(engine, argv[1]), linker);

    const std::vector<canvas::Shape> shapes = {
        canvas::shape::Circle{{canvas::Point{1.5f, 2}, 0.5f}},
        canvas::shape::Label{"hello"},
        canvas::shape::Polygon{{{0, 0}, {4, 0}, {4, 3}}},
        canvas::shape::Label{"world"},
    };
    const scene::Stats stats = app.scene().render(store, shapes);
    std::cout << "rendered " << stats.shapes << " shapes, " << stats.points << " points, labels:";
    for (const std::string& label : stats.labels) std::cout << " " << label;
    std::cout << "\n";
  } catch (const cmhost::Error& e) {
    std::cerr << "typed: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
