;; For `cmhost inspect`: functions at the root of the world, imported and
;; exported, with unnamed types of every shape (`result` with and without
;; payloads, options, tuples, nested lists, streams and futures), an async
;; function, and names that are WIT keywords (printed with `%`). The core
;; functions only trap: inspect never runs them.
(component
  (import "greet" (func (param "name" string) (result string)))
  (import "fetch" (func (param "url" string) (param "headers" (list (tuple string string)))
                        (result (result (list u8) (error u16)))))
  (import "notify" (func (param "from" (option string)) (param "status" (result))))
  (import "store" (func (param "key" string) (result (result (error string)))))
  (import "load" (func (param "key" string) (result (result (list (list u8))))))
  (import "watch" (func (param "s" (stream u8)) (result (future string))))
  (import "tick" (func (param "done" (future))))
  (import "wait" (func async (param "ms" u32)))

  (core module $impl
    (memory (export "mem") 1)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) unreachable)
    (func (export "result") (param i32) (result i32) unreachable)
    (func (export "hash") (param i32 i32) (result i64) unreachable)
    (func (export "split") (param i32 i32) (result i32) unreachable))
  (core instance $impl (instantiate $impl))

  (func (export "result") (param "type" u8) (result (result))
    (canon lift (core func $impl "result")))
  (func (export "hash") (param "data" (list u8)) (result u64)
    (canon lift (core func $impl "hash") (memory (core memory $impl "mem"))
      (realloc (core func $impl "realloc"))))
  (func (export "split") (param "s" string) (result (tuple string string))
    (canon lift (core func $impl "split") (memory (core memory $impl "mem"))
      (realloc (core func $impl "realloc"))))
)
