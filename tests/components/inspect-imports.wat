;; For `cmhost inspect`: interfaces imported from two packages, with named
;; types of every kind, a resource with a constructor, a method and a static
;; function, types one interface takes from another (`use`, also renamed),
;; an inline interface, a world type and names that are WIT keywords.
;; The function import comes first in the binary: WIT lists it after the
;; interfaces and the world's types.
(component
  (import "log" (func (param "level" u8) (param "type" string)))

  (import "cmhost:shapes/types@1.0.0" (instance $types
    (type $point (record (field "x" s32) (field "y" s32)))
    (export "point" (type $point' (eq $point)))
    (type $color (enum "red" "green" "blue"))
    (export "color" (type $color' (eq $color)))
    (type $style (flags "bold" "italic" "underline"))
    (export "style" (type $style' (eq $style)))
    (type $shape (variant (case "circle" u32) (case "rect" $point') (case "empty")))
    (export "shape" (type $shape' (eq $shape)))
    (type $points (list $point'))
    (export "points" (type $points' (eq $points)))
    (export "canvas" (type $canvas (sub resource)))
    (type $own-canvas (own $canvas))
    (type $borrow-canvas (borrow $canvas))
    (export "[constructor]canvas"
      (func (param "width" u32) (param "height" u32) (result $own-canvas)))
    (type $draw-result (result (error string)))
    (export "[method]canvas.draw"
      (func (param "self" $borrow-canvas) (param "s" $shape') (param "c" $color')
            (param "st" $style') (result $draw-result)))
    (export "[method]canvas.size" (func (param "self" $borrow-canvas) (result (tuple u32 u32))))
    (type $maybe-canvas (option $own-canvas))
    (export "[static]canvas.open" (func (param "name" string) (result $maybe-canvas)))
    (export "area" (func (param "s" $shape') (result f64)))
    (export "outline" (func (param "s" $shape') (result $points')))))

  (alias export $types "point" (type $point))
  (alias export $types "shape" (type $shape))
  (alias export $types "canvas" (type $canvas))

  (import "cmhost:shapes/render@1.0.0" (instance $render
    (alias outer 1 $point (type $point-outer))
    (export "point" (type $point' (eq $point-outer)))
    (alias outer 1 $shape (type $shape-outer))
    (export "figure" (type $figure (eq $shape-outer)))
    (alias outer 1 $canvas (type $canvas-outer))
    (export "canvas" (type $canvas' (eq $canvas-outer)))
    (type $borrow-canvas (borrow $canvas'))
    (type $path (list $point'))
    (export "paint"
      (func (param "c" $borrow-canvas) (param "at" $point') (param "f" $figure) (result $path)))))

  (import "cmhost:text/fonts" (instance
    (type $weight (enum "light" "regular" "bold"))
    (export "weight" (type $weight' (eq $weight)))
    (export "list" (func (result (list string))))
    (export "pick" (func (param "size" u16) (param "weight" $weight') (result (option string))))))

  (import "host" (instance
    (type $entry (record (field "key" string) (field "value" (option s64))))
    (export "entry" (type $entry' (eq $entry)))
    (export "get" (func (param "key" string) (result (result $entry' (error string)))))
    (export "flush" (func))))

  (import "point" (type $world-point (eq $point)))
  (import "locate" (func (param "name" string) (result $world-point)))
)
