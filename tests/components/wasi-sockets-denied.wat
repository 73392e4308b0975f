;; Asks wasi:sockets for a TCP socket and a UDP socket (at 0.2.3: linked to
;; the host's 0.2.12 by semver) and returns each error code's index, or 255
;; when a socket was made: with the network denied, both are access-denied (1).
(component
  (import "wasi:sockets/network@0.2.3" (instance $network
    (type $ec (enum "unknown" "access-denied" "not-supported" "invalid-argument" "out-of-memory"
      "timeout" "concurrency-conflict" "not-in-progress" "would-block" "invalid-state" "new-socket-limit"
      "address-not-bindable" "address-in-use" "remote-unreachable" "connection-refused" "connection-reset"
      "connection-aborted" "datagram-too-large" "name-unresolvable" "temporary-resolver-failure"
      "permanent-resolver-failure"))
    (export "error-code" (type (eq $ec)))
    (type $af (enum "ipv4" "ipv6"))
    (export "ip-address-family" (type (eq $af)))))
  (alias export $network "error-code" (type $error-code))
  (alias export $network "ip-address-family" (type $family))
  (import "wasi:sockets/tcp@0.2.3" (instance $tcp (export "tcp-socket" (type (sub resource)))))
  (alias export $tcp "tcp-socket" (type $tcp-socket))
  (import "wasi:sockets/udp@0.2.3" (instance $udp (export "udp-socket" (type (sub resource)))))
  (alias export $udp "udp-socket" (type $udp-socket))
  (import "wasi:sockets/tcp-create-socket@0.2.3" (instance $tcp-create
    (export "error-code" (type $e (eq $error-code)))
    (export "ip-address-family" (type $f (eq $family)))
    (export "tcp-socket" (type $t (eq $tcp-socket)))
    (export "create-tcp-socket" (func (param "address-family" $f) (result (result (own $t) (error $e)))))))
  (import "wasi:sockets/udp-create-socket@0.2.3" (instance $udp-create
    (export "error-code" (type $e (eq $error-code)))
    (export "ip-address-family" (type $f (eq $family)))
    (export "udp-socket" (type $u (eq $udp-socket)))
    (export "create-udp-socket" (func (param "address-family" $f) (result (result (own $u) (error $e)))))))
  (alias export $tcp-create "create-tcp-socket" (func $create-tcp))
  (alias export $udp-create "create-udp-socket" (func $create-udp))
  (core module $memory (memory (export "memory") 1))
  (core instance $memory (instantiate $memory))
  (core func $create-tcp-lowered (canon lower (func $create-tcp) (memory (core memory $memory "memory"))))
  (core func $create-udp-lowered (canon lower (func $create-udp) (memory (core memory $memory "memory"))))
  (core module $main
    (import "" "memory" (memory 1))
    (import "" "create-tcp" (func $create-tcp (param i32 i32)))
    (import "" "create-udp" (func $create-udp (param i32 i32)))
    ;; result<own, error-code> at 16: discriminant at 16, payload at 20.
    (func $code (result i32)
      (if (result i32) (i32.load8_u (i32.const 16)) (then (i32.load8_u (i32.const 20))) (else (i32.const 255))))
    (func (export "try-tcp") (result i32) (call $create-tcp (i32.const 0) (i32.const 16)) (call $code))
    (func (export "try-udp") (result i32) (call $create-udp (i32.const 1) (i32.const 16)) (call $code)))
  (core instance $main (instantiate $main
    (with "" (instance (export "memory" (memory $memory "memory"))
                       (export "create-tcp" (func $create-tcp-lowered))
                       (export "create-udp" (func $create-udp-lowered))))))
  (func (export "try-tcp") (result u8) (canon lift (core func $main "try-tcp")))
  (func (export "try-udp") (result u8) (canon lift (core func $main "try-udp")))
)
