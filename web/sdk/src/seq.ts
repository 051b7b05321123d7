/**
 * Intent seqs in serial-number arithmetic on 32 bits (RFC 1982), as
 * docs/protocol.md ("Seqs") orders them: `a` is after `b` when
 * `0 < (a - b) mod 2^32 < 2^31`. After 4294967295 comes 0.
 *
 * @module
 */

/** seqAfter reports whether a comes after b. */
export function seqAfter(a: number, b: number): boolean {
  const d = (a - b) >>> 0;
  return d !== 0 && d < 0x80000000;
}

/** seqAtOrBefore reports whether a is b or comes before it (an ack of b settles a). */
export function seqAtOrBefore(a: number, b: number): boolean {
  return a >>> 0 === b >>> 0 || seqAfter(b, a);
}

/** nextSeq returns the seq after s. */
export function nextSeq(s: number): number {
  return (s + 1) >>> 0;
}
