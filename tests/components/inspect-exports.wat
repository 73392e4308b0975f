;; For `cmhost inspect`: exports. An interface with a resource the component
;; defines (constructor, methods, static function), a record and an enum,
;; taking a record from an imported interface of its package (`use`); an
;; inline interface (a bag of exports); a root function. The core functions
;; only trap: inspect never runs them.
(component
  (import "cmhost:demo/clock@0.1.0" (instance $clock
    (type $instant (record (field "seconds" u64) (field "nanos" u32)))
    (export "instant" (type $instant' (eq $instant)))
    (export "now" (func (result $instant')))))
  (alias export $clock "instant" (type $instant))

  (core module $impl
    (memory (export "mem") 1)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) unreachable)
    (func (export "new") (param i32) (result i32) unreachable)
    (func (export "get") (param i32) (result i32) unreachable)
    (func (export "add") (param i32 i32) unreachable)
    (func (export "zero") (result i32) unreachable)
    (func (export "report") (param i32) (result i32) unreachable)
    (func (export "reset") (param i32) unreachable)
    (func (export "run") (param i32 i32) (result i32) unreachable))
  (core instance $impl (instantiate $impl))

  (type $counter (resource (rep i32)))
  (type $stats (record (field "count" u32) (field "since" $instant)))
  (type $mode (enum "soft" "hard"))
  (type $features (flags "audit" "trace"))

  (func $new (param "start" u32) (result (own $counter))
    (canon lift (core func $impl "new")))
  (func $get (param "self" (borrow $counter)) (result u32)
    (canon lift (core func $impl "get")))
  (func $add (param "self" (borrow $counter)) (param "n" u32)
    (canon lift (core func $impl "add")))
  (func $zero (result (own $counter))
    (canon lift (core func $impl "zero")))
  (func $report (param "c" (borrow $counter)) (result $stats)
    (canon lift (core func $impl "report") (memory (core memory $impl "mem"))))
  (func $reset (param "mode" $mode)
    (canon lift (core func $impl "reset")))
  (func $configure (param "features" $features)
    (canon lift (core func $impl "reset")))
  (func $run (param "args" (list string)) (result (result u32 (error string)))
    (canon lift (core func $impl "run") (memory (core memory $impl "mem"))
      (realloc (core func $impl "realloc"))))

  ;; The interface is an instance of a component that takes the types and
  ;; functions as imports and exports them under their WIT names, as
  ;; wit-component builds exported interfaces.
  (component $counters-shim
    (type $instant-def (record (field "seconds" u64) (field "nanos" u32)))
    (import "import-type-instant" (type $instant (eq $instant-def)))
    (import "import-type-counter" (type $counter (sub resource)))
    (type $stats-def (record (field "count" u32) (field "since" $instant)))
    (import "import-type-stats" (type $stats (eq $stats-def)))
    (type $mode-def (enum "soft" "hard"))
    (import "import-type-mode" (type $mode (eq $mode-def)))
    (type $own (own $counter))
    (type $borrow (borrow $counter))
    (import "import-constructor-counter" (func $new (param "start" u32) (result $own)))
    (import "import-method-counter-get" (func $get (param "self" $borrow) (result u32)))
    (import "import-method-counter-add" (func $add (param "self" $borrow) (param "n" u32)))
    (import "import-static-counter-zero" (func $zero (result $own)))
    (import "import-func-report" (func $report (param "c" $borrow) (result $stats)))
    (import "import-func-reset" (func $reset (param "mode" $mode)))
    (export $instant' "instant" (type $instant))
    (export $counter' "counter" (type $counter))
    (type $stats-def' (record (field "count" u32) (field "since" $instant')))
    (export $stats' "stats" (type $stats) (type (eq $stats-def')))
    (export $mode' "mode" (type $mode))
    (type $own' (own $counter'))
    (type $borrow' (borrow $counter'))
    (export "[constructor]counter" (func $new) (func (param "start" u32) (result $own')))
    (export "[method]counter.get" (func $get) (func (param "self" $borrow') (result u32)))
    (export "[method]counter.add" (func $add) (func (param "self" $borrow') (param "n" u32)))
    (export "[static]counter.zero" (func $zero) (func (result $own')))
    (export "report" (func $report) (func (param "c" $borrow') (result $stats')))
    (export "reset" (func $reset) (func (param "mode" $mode'))))
  (instance $counters (instantiate $counters-shim
    (with "import-type-instant" (type $instant))
    (with "import-type-counter" (type $counter))
    (with "import-type-stats" (type $stats))
    (with "import-type-mode" (type $mode))
    (with "import-constructor-counter" (func $new))
    (with "import-method-counter-get" (func $get))
    (with "import-method-counter-add" (func $add))
    (with "import-static-counter-zero" (func $zero))
    (with "import-func-report" (func $report))
    (with "import-func-reset" (func $reset))))
  (instance $admin
    (export "features" (type $features))
    (export "configure" (func $configure)))

  (export "run" (func $run))
  (export "cmhost:demo/counters@0.1.0" (instance $counters))
  (export "admin" (instance $admin))
)
