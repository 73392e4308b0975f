;; A segment past the memory's initial size: instantiation traps (no image
;; is made of it).
(module
  (memory 1)
  (data (i32.const 0) "fits")
  (data (i32.const 65534) "past"))
