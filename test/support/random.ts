/**
 * The one seeded PRNG of the tests and benchmarks, so every randomised test and every generated
 * repository reproduces exactly from its seed: mulberry32 (`seededRandom`), a small helper over it
 * (`Rng`: integers, chances, picks, weighted picks) and pseudo-random bytes (`seededBytes`).
 */

/** mulberry32: a tiny seeded PRNG. Returns [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `size` pseudo-random bytes drawn from `rand` (four bytes per draw). */
export function seededBytes(rand: () => number, size: number): Buffer {
  const buf = Buffer.allocUnsafe(size + 3);
  for (let i = 0; i < size; i += 4) buf.writeUInt32LE(Math.floor(rand() * 0x1_0000_0000), i);
  return buf.subarray(0, size);
}

/** Integer, chance and pick helpers over one seeded sequence. */
export class Rng {
  private readonly f: () => number;
  constructor(seed: number) {
    this.f = seededRandom(seed);
  }
  /** [0, 1), the next number of the sequence. */
  next(): number {
    return this.f();
  }
  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.f() * n);
  }
  /** True with probability p. */
  chance(p: number): boolean {
    return this.f() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  /** A key of `w`, each with a probability proportional to its weight. */
  weighted<T extends string>(w: Record<T, number>): T {
    const entries = Object.entries(w) as Array<[T, number]>;
    let r = this.f() * entries.reduce((s, [, v]) => s + v, 0);
    for (const [k, v] of entries) if ((r -= v) < 0) return k;
    return entries[entries.length - 1]![0];
  }
}
