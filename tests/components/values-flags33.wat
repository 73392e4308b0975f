;; A flags type with 33 labels: more than the 32 the Component Model allows,
;; so loading this component must fail validation.
(component
  (type $f (flags "f0" "f1" "f2" "f3" "f4" "f5" "f6" "f7" "f8" "f9" "f10" "f11" "f12" "f13" "f14" "f15"
    "f16" "f17" "f18" "f19" "f20" "f21" "f22" "f23" "f24" "f25" "f26" "f27" "f28" "f29" "f30" "f31" "f32"))
  (export "too-many" (type $f))
)
