;; Two tables that together hold more elements than the store allows by
;; default (2^20).
(module
  (table 600000 funcref)
  (table 600000 funcref))
