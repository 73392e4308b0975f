;; For `cmhost inspect`: type aliases, laid out as wit-component encodes this
;; WIT (the golden's interface bodies are this text in wasm-tools' layout):
;;
;;   package cmhost:aliases@0.2.0;
;;
;;   interface base {
;;     type str-ref = u16;
;;     type element-id = u32;
;;     resource node {
;;       constructor(id: element-id);
;;       id: func() -> element-id;
;;     }
;;     type handle = node;
;;     record pos { x: s32, y: s32 }
;;     record cache-string { id: str-ref, str: string }
;;     enum level { low, high }
;;     flags mode { a, b }
;;     lookup: func(id: element-id, name: str-ref) -> option<handle>;
;;     touch: func(h: borrow<handle>, raw: u16) -> cache-string;
;;     make: func(p: pos, l: level, m: mode) -> node;
;;   }
;;
;;   interface user {
;;     use base.{pos as point, str-ref, element-id as id, handle, node,
;;               cache-string as cached, level as lvl, mode as bits};
;;     type ids = list<id>;
;;     type ref2 = str-ref;
;;     type again = handle;
;;     place: func(p: point, at: id, l: lvl, m: bits) -> ids;
;;     find: func(name: ref2, c: cached, n: borrow<node>) -> again;
;;   }
;;
;;   interface table {
;;     use base.{str-ref, pos as cell};
;;     type row-id = u64;
;;     type key = row-id;
;;     resource cursor {
;;       next: func() -> option<key>;
;;     }
;;     type cur = cursor;
;;     record row { id: row-id, name: str-ref, at: cell }
;;     get: func(k: key, raw: u64) -> option<row>;
;;     scan: func(start: key) -> cur;
;;     close: func(c: borrow<cur>);
;;   }
;;
;;   world aliases {
;;     use base.{str-ref, handle};
;;     type w-id = u32;
;;     type w-ref = str-ref;
;;     type w-handle = handle;
;;     import base;
;;     import user;
;;     import locate: func(a: w-id, b: str-ref, c: w-ref, d: u32) -> w-handle;
;;     export probe: func(s: str-ref, raw: u16) -> w-id;
;;     export table;
;;   }
;;
;; Aliases of primitive types and of resources are type exports whose bound
;; names another type export (or a primitive type definition); uses go
;; through the alias's index. The core functions only trap: inspect never
;; runs them.
(component
  (import "cmhost:aliases/base@0.2.0" (instance $base
    (type $str-ref-def u16)
    (export "str-ref" (type $str-ref (eq $str-ref-def)))
    (type $element-id-def u32)
    (export "element-id" (type $element-id (eq $element-id-def)))
    (export "node" (type $node (sub resource)))
    (export "handle" (type $handle (eq $node)))
    (type $pos-def (record (field "x" s32) (field "y" s32)))
    (export "pos" (type $pos (eq $pos-def)))
    (type $cache-string-def (record (field "id" $str-ref) (field "str" string)))
    (export "cache-string" (type $cache-string (eq $cache-string-def)))
    (type $level-def (enum "low" "high"))
    (export "level" (type $level (eq $level-def)))
    (type $mode-def (flags "a" "b"))
    (export "mode" (type $mode (eq $mode-def)))
    (type $own-node (own $node))
    (export "[constructor]node" (func (param "id" $element-id) (result $own-node)))
    (type $borrow-node (borrow $node))
    (export "[method]node.id" (func (param "self" $borrow-node) (result $element-id)))
    (type $own-handle (own $handle))
    (type $maybe-handle (option $own-handle))
    (export "lookup" (func (param "id" $element-id) (param "name" $str-ref) (result $maybe-handle)))
    (type $borrow-handle (borrow $handle))
    (export "touch"
      (func (param "h" $borrow-handle) (param "raw" u16) (result $cache-string)))
    (export "make"
      (func (param "p" $pos) (param "l" $level) (param "m" $mode) (result $own-node)))))

  (alias export $base "str-ref" (type $str-ref))
  (alias export $base "element-id" (type $element-id))
  (alias export $base "node" (type $node))
  (alias export $base "handle" (type $handle))
  (alias export $base "pos" (type $pos))
  (alias export $base "cache-string" (type $cache-string))
  (alias export $base "level" (type $level))
  (alias export $base "mode" (type $mode))

  ;; `use` (also renamed) of every kind of type, and aliases of the names
  ;; taken: `ref2` of a primitive type, `again` of a resource.
  (import "cmhost:aliases/user@0.2.0" (instance $user
    (alias outer 1 $pos (type $pos-outer))
    (export "point" (type $point (eq $pos-outer)))
    (alias outer 1 $str-ref (type $str-ref-outer))
    (export "str-ref" (type $str-ref' (eq $str-ref-outer)))
    (alias outer 1 $element-id (type $element-id-outer))
    (export "id" (type $id (eq $element-id-outer)))
    (alias outer 1 $handle (type $handle-outer))
    (export "handle" (type $handle' (eq $handle-outer)))
    (alias outer 1 $node (type $node-outer))
    (export "node" (type $node' (eq $node-outer)))
    (alias outer 1 $cache-string (type $cache-string-outer))
    (export "cached" (type $cached (eq $cache-string-outer)))
    (alias outer 1 $level (type $level-outer))
    (export "lvl" (type $lvl (eq $level-outer)))
    (alias outer 1 $mode (type $mode-outer))
    (export "bits" (type $bits (eq $mode-outer)))
    (type $ids-def (list $id))
    (export "ids" (type $ids (eq $ids-def)))
    (export "ref2" (type $ref2 (eq $str-ref')))
    (export "again" (type $again (eq $handle')))
    (export "place"
      (func (param "p" $point) (param "at" $id) (param "l" $lvl) (param "m" $bits) (result $ids)))
    (type $borrow-node (borrow $node'))
    (type $own-again (own $again))
    (export "find"
      (func (param "name" $ref2) (param "c" $cached) (param "n" $borrow-node)
            (result $own-again)))))

  ;; The world's types: uses of base's, a new primitive type and aliases.
  (import "str-ref" (type $w-str-ref (eq $str-ref)))
  (import "handle" (type $w-base-handle (eq $handle)))
  (type $u32 u32)
  (import "w-id" (type $w-id (eq $u32)))
  (import "w-ref" (type $w-ref (eq $w-str-ref)))
  (import "w-handle" (type $w-handle (eq $w-base-handle)))
  (type $own-w-handle (own $w-handle))
  (import "locate"
    (func (param "a" $w-id) (param "b" $w-str-ref) (param "c" $w-ref) (param "d" u32)
          (result $own-w-handle)))

  (core module $impl
    (memory (export "mem") 1)
    (func (export "probe") (param i32 i32) (result i32) unreachable)
    (func (export "next") (param i32) (result i32) unreachable)
    (func (export "get") (param i64 i64) (result i32) unreachable)
    (func (export "scan") (param i64) (result i32) unreachable)
    (func (export "close") (param i32) unreachable))
  (core instance $impl (instantiate $impl))

  (func $probe (param "s" $w-str-ref) (param "raw" u16) (result $w-id)
    (canon lift (core func $impl "probe")))

  (type $row-id u64)
  (type $cursor (resource (rep i32)))
  (type $row (record (field "id" $row-id) (field "name" $str-ref) (field "at" $pos)))
  (type $borrow-cursor (borrow $cursor))
  (func $next (param "self" $borrow-cursor) (result (option $row-id))
    (canon lift (core func $impl "next") (memory (core memory $impl "mem"))))
  (func $get (param "k" $row-id) (param "raw" u64) (result (option $row))
    (canon lift (core func $impl "get") (memory (core memory $impl "mem"))))
  (func $scan (param "start" $row-id) (result (own $cursor))
    (canon lift (core func $impl "scan")))
  (func $close (param "c" $borrow-cursor)
    (canon lift (core func $impl "close")))

  ;; The exported interface, as wit-component builds one: a shim component
  ;; takes the types and functions as imports and exports them under their
  ;; WIT names. Its `row-id` is a type of its own, `key` and `cur` name its
  ;; exports again, `str-ref` and `cell` are base's.
  (component $table-shim
    (type $str-ref-def u16)
    (import "import-type-str-ref" (type $str-ref (eq $str-ref-def)))
    (type $pos-def (record (field "x" s32) (field "y" s32)))
    (import "import-type-cell" (type $cell (eq $pos-def)))
    (import "import-type-cursor" (type $cursor (sub resource)))
    (type $row-id-def u64)
    (import "import-type-row-id" (type $row-id (eq $row-id-def)))
    (import "import-type-key" (type $key (eq $row-id)))
    (import "import-type-cur" (type $cur (eq $cursor)))
    (type $row-def (record (field "id" $row-id) (field "name" $str-ref) (field "at" $cell)))
    (import "import-type-row" (type $row (eq $row-def)))
    (type $borrow-cursor (borrow $cursor))
    (type $maybe-key (option $key))
    (import "import-method-cursor-next" (func $next (param "self" $borrow-cursor) (result $maybe-key)))
    (type $maybe-row (option $row))
    (import "import-func-get" (func $get (param "k" $key) (param "raw" u64) (result $maybe-row)))
    (type $own-cur (own $cur))
    (import "import-func-scan" (func $scan (param "start" $key) (result $own-cur)))
    (type $borrow-cur (borrow $cur))
    (import "import-func-close" (func $close (param "c" $borrow-cur)))
    (export $str-ref' "str-ref" (type $str-ref))
    (export $cell' "cell" (type $cell))
    (type $row-id-def' u64)
    (export $row-id' "row-id" (type $row-id-def'))
    (export $key' "key" (type $row-id'))
    (export $cursor' "cursor" (type $cursor))
    (export $cur' "cur" (type $cursor'))
    (type $row-def' (record (field "id" $row-id') (field "name" $str-ref') (field "at" $cell')))
    (export $row' "row" (type $row-def'))
    (type $borrow-cursor' (borrow $cursor'))
    (type $maybe-key' (option $key'))
    (export "[method]cursor.next" (func $next)
      (func (param "self" $borrow-cursor') (result $maybe-key')))
    (type $maybe-row' (option $row'))
    (export "get" (func $get) (func (param "k" $key') (param "raw" u64) (result $maybe-row')))
    (type $own-cur' (own $cur'))
    (export "scan" (func $scan) (func (param "start" $key') (result $own-cur')))
    (type $borrow-cur' (borrow $cur'))
    (export "close" (func $close) (func (param "c" $borrow-cur'))))
  (instance $table (instantiate $table-shim
    (with "import-type-str-ref" (type $str-ref))
    (with "import-type-cell" (type $pos))
    (with "import-type-cursor" (type $cursor))
    (with "import-type-row-id" (type $row-id))
    (with "import-type-key" (type $row-id))
    (with "import-type-cur" (type $cursor))
    (with "import-type-row" (type $row))
    (with "import-method-cursor-next" (func $next))
    (with "import-func-get" (func $get))
    (with "import-func-scan" (func $scan))
    (with "import-func-close" (func $close))))

  (export "probe" (func $probe))
  (export "cmhost:aliases/table@0.2.0" (instance $table))
)
