/**
 * The decoding rules of docs/protocol.md ("Size limits and decoding
 * rules") checked over raw CBOR before cbor-x decodes it: cbor-x accepts
 * far more than the protocol (maps, tags, floats, indefinite lengths), so
 * a message is first walked once, head by head, and refused unless it is
 * made of what the schema allows: unsigned and negative integers, byte
 * strings, text strings of valid UTF-8, and definite-length arrays.
 *
 * @module
 */

import { Code } from "./codes.js";

/**
 * MalformedError: bytes that are not a message of the protocol. `code` is
 * the protocol's word for it: MALFORMED, UNKNOWN_TYPE (a type this side
 * does not take) or VERSION_UNSUPPORTED (an envelope of another version).
 */
export class MalformedError extends Error {
  override readonly name = "MalformedError";
  readonly code: number;

  constructor(message: string, code: number = Code.MALFORMED) {
    super(message);
    this.code = code;
  }
}

/** The largest server-to-client message, checked before decoding. */
export const MAX_SERVER_MESSAGE = 1 << 20;

/** The largest client-to-server message. */
export const MAX_CLIENT_MESSAGE = 64 << 10;

/** The longest text field, in bytes of UTF-8. */
export const MAX_TEXT = 1024;

/** The most elements of any array. */
export const MAX_ARRAY = 4096;

/** The deepest nesting of arrays, the envelope included (8 inside a body). */
export const MAX_DEPTH = 10;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * checkStrict throws a {@link MalformedError} unless b is exactly one CBOR
 * data item the protocol's decoding rules accept. It does not check the
 * schema (field counts and ranges); the codec does that after decoding.
 * Cost: one pass over b; no allocation but for text checks.
 */
export function checkStrict(b: Uint8Array, maxSize = MAX_SERVER_MESSAGE): void {
  if (b.length > maxSize) {
    throw new MalformedError(`message of ${b.length} bytes exceeds ${maxSize}`);
  }
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let pos = 0;

  // arg reads the argument of the head whose additional information is ai.
  const arg = (ai: number): number => {
    let n: number;
    if (ai < 24) return ai;
    switch (ai) {
      case 24:
        n = 1;
        break;
      case 25:
        n = 2;
        break;
      case 26:
        n = 4;
        break;
      case 27:
        n = 8;
        break;
      default:
        throw new MalformedError(`indefinite length or reserved head 0x${ai.toString(16)}`);
    }
    if (pos + n > b.length) throw new MalformedError("truncated head");
    let v: number;
    switch (n) {
      case 1:
        v = dv.getUint8(pos);
        break;
      case 2:
        v = dv.getUint16(pos);
        break;
      case 4:
        v = dv.getUint32(pos);
        break;
      default: {
        // Only integers may need more than 32 bits; for lengths the
        // caller compares with what is left, which such a value exceeds.
        const hi = dv.getUint32(pos);
        v = hi * 2 ** 32 + dv.getUint32(pos + 4);
      }
    }
    pos += n;
    return v;
  };

  const item = (depth: number): void => {
    if (pos >= b.length) throw new MalformedError("truncated message");
    const ib = b[pos++] as number;
    const major = ib >> 5;
    const a = arg(ib & 31);
    switch (major) {
      case 0:
      case 1:
        return;
      case 2:
        if (a > b.length - pos) throw new MalformedError("byte string longer than the message");
        pos += a;
        return;
      case 3:
        if (a > b.length - pos) throw new MalformedError("text longer than the message");
        if (a > MAX_TEXT) throw new MalformedError(`text of ${a} bytes exceeds ${MAX_TEXT}`);
        try {
          utf8.decode(b.subarray(pos, pos + a));
        } catch {
          throw new MalformedError("text is not valid UTF-8");
        }
        pos += a;
        return;
      case 4:
        if (depth >= MAX_DEPTH) throw new MalformedError("arrays nested too deep");
        if (a > MAX_ARRAY) throw new MalformedError(`array of ${a} elements exceeds ${MAX_ARRAY}`);
        if (a > b.length - pos) throw new MalformedError("array longer than the message");
        for (let i = 0; i < a; i++) item(depth + 1);
        return;
      case 5:
        throw new MalformedError("a map where the protocol has none");
      case 6:
        throw new MalformedError("a tag where the protocol has none");
      default:
        throw new MalformedError("a float or simple value where the protocol has none");
    }
  };

  item(0);
  if (pos !== b.length) throw new MalformedError(`${b.length - pos} trailing bytes`);
}
