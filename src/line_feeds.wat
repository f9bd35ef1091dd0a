;; Line feeds in a range of this module's memory, sixteen bytes at a time (SIMD), for
;; seekLineFeed in bytes.ts. `deno task build:wasm` compiles this file into
;; src/line_feeds.generated.ts; tests/unit/bytes_test.ts fails when the two differ.
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
)
