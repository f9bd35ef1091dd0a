/**
 * A seeded random source for property tests. The seed comes from TEST_SEED or is drawn at
 * random and printed with any failure, so a failing case can be replayed.
 *
 * @module
 */

/** A deterministic generator (mulberry32). */
export class Random {
  #state: number;
  constructor(readonly seed: number) {
    this.#state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    let t = (this.#state = (this.#state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [low, high]. */
  int(low: number, high: number): number {
    return low + Math.floor(this.next() * (high - low + 1));
  }

  /** One of the items. */
  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)];
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** A string of `length` pieces drawn from `alphabet`. */
  string(alphabet: readonly string[], length: number): string {
    let text = "";
    for (let i = 0; i < length; i++) text += this.pick(alphabet);
    return text;
  }
}

/** Runs `body` for `runs` seeds derived from one base seed; failures name the seed to replay. */
export function forAll(runs: number, body: (random: Random) => void): void {
  const base = Number(Deno.env.get("TEST_SEED") ?? Math.floor(Math.random() * 2 ** 31));
  for (let run = 0; run < runs; run++) {
    const seed = (base + run * 7919) >>> 0;
    try {
      body(new Random(seed));
    } catch (error) {
      throw new Error(
        `property failed for seed ${seed} (replay: TEST_SEED=${seed}): ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }
}

/** Text pieces covering ASCII, CJK, emoji (surrogate pairs) and combining marks. */
export const TEXT_PIECES = [
  "a",
  "b",
  "z",
  " ",
  "0",
  "~",
  "é",
  "中",
  "文",
  "😀",
  "🎉",
  "ñ",
  "e\u0301",
  "\t",
];
