;; Byte searches in a range of this module's memory, sixteen bytes at a time (SIMD), for
;; bytes.ts: line feeds counted (seekLineFeed, for the line index), and the first of two byte
;; values (indexOfEither, where control strings may begin). `deno task build:wasm` compiles this file into
;; src/generated/byte_scans.ts; tests/bytes_test.ts fails when the two differ.
(module
  ;; One page (64 KiB): bytes.ts copies a range in, a window at a time.
  (memory (export "memory") 1)
  ;; seek(at, to, limit): the index of the limit-th line feed (0x0A) in memory[at, to), or
  ;; -1 - count when there are fewer (count: how many there are). The caller keeps `to` within
  ;; the memory (beyond, a load traps) and `limit` at least 1 (below, no index is found).
  (func (export "seek") (param $at i32) (param $to i32) (param $limit i32) (result i32)
    (local $count i32) (local $mask i32) (local $found i32)
    (block $vectors_done
      (loop $vectors
        (br_if $vectors_done (i32.gt_u (i32.add (local.get $at) (i32.const 16)) (local.get $to)))
        ;; One bit a byte that is a line feed.
        (local.set $mask
          (i8x16.bitmask
            (i8x16.eq
              (v128.load (local.get $at))
              (v128.const i8x16 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10 10))))
        (local.set $found (i32.popcnt (local.get $mask)))
        (if (i32.ge_u (i32.add (local.get $count) (local.get $found)) (local.get $limit))
          (then
            ;; The wanted one is among these: count them off lowest first. The loop ends with
            ;; the bits, whatever `limit` is.
            (loop $bits
              (local.set $count (i32.add (local.get $count) (i32.const 1)))
              (if (i32.eq (local.get $count) (local.get $limit))
                (then (return (i32.add (local.get $at) (i32.ctz (local.get $mask))))))
              (local.set $mask
                (i32.and (local.get $mask) (i32.sub (local.get $mask) (i32.const 1))))
              (br_if $bits (local.get $mask))))
          (else (local.set $count (i32.add (local.get $count) (local.get $found)))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $vectors)))
    ;; The last bytes, fewer than sixteen, one at a time.
    (block $bytes_done
      (loop $bytes
        (br_if $bytes_done (i32.ge_u (local.get $at) (local.get $to)))
        (if (i32.eq (i32.load8_u (local.get $at)) (i32.const 10))
          (then
            (local.set $count (i32.add (local.get $count) (i32.const 1)))
            (if (i32.eq (local.get $count) (local.get $limit)) (then (return (local.get $at))))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $bytes)))
    (i32.sub (i32.const -1) (local.get $count)))
;; first_of(at, to, a, b): the index of the first byte in memory[at, to) that is `a` or `b`
  ;; (each 0-255), or -1.
  (func (export "first_of") (param $at i32) (param $to i32) (param $a i32) (param $b i32)
    (result i32)
    (local $either v128) (local $mask i32) (local $byte i32) (local $va v128) (local $vb v128)
    (local.set $va (i8x16.splat (local.get $a)))
    (local.set $vb (i8x16.splat (local.get $b)))
    (block $vectors_done
      (loop $vectors
        (br_if $vectors_done (i32.gt_u (i32.add (local.get $at) (i32.const 16)) (local.get $to)))
        (local.set $either (v128.load (local.get $at)))
        ;; One bit a byte that is either value.
        (local.set $mask
          (i8x16.bitmask
            (v128.or
              (i8x16.eq (local.get $either) (local.get $va))
              (i8x16.eq (local.get $either) (local.get $vb)))))
        (if (local.get $mask)
          (then (return (i32.add (local.get $at) (i32.ctz (local.get $mask))))))
        (local.set $at (i32.add (local.get $at) (i32.const 16)))
        (br $vectors)))
    ;; The last bytes, fewer than sixteen, one at a time.
    (block $bytes_done
      (loop $bytes
        (br_if $bytes_done (i32.ge_u (local.get $at) (local.get $to)))
        (local.set $byte (i32.load8_u (local.get $at)))
        (if (i32.or (i32.eq (local.get $byte) (local.get $a)) (i32.eq (local.get $byte) (local.get $b)))
          (then (return (local.get $at))))
        (local.set $at (i32.add (local.get $at) (i32.const 1)))
        (br $bytes)))
    (i32.const -1))
)
