/**
 * The codec against the golden files of net/wire/testdata: each decodes to
 * the value docs/protocol.md shows and encodes back byte for byte; and
 * the decoding rules refuse what they must.
 */

import { Code, type Message, MalformedError, decodeMessage, encodeMessage, readRecords } from "../src/index.js";
import { eq, hex, ok, test, throws, unhex } from "./harness.js";

/** The value of each golden file, as docs/protocol.md's worked examples give it. */
const goldens: Record<string, Message> = {
  hello: { type: "hello", grant: "g-7f3a9c", joinId: 42n, versions: [2] },
  resume: { type: "resume", token: "r-51e0", joinId: 43n },
  intent: { type: "intent", seq: 7, kind: 1, dir: 0, target: { x: 12, y: -3 } },
  hello_ack: { type: "hello_ack", joinId: 42n, entity: 1001, tick: 86400, area: 5, resumeToken: "r-51e0", version: 2 },
  area_info: {
    type: "area_info",
    area: 5,
    kind: "village",
    w: 64,
    h: 48,
    cellSize: 8,
    tickHz: 20,
    snapshotHz: 10,
    stepMs: 200,
    queueLen: 8,
    interestRadius: 24,
    resumeGraceMs: 30000,
    rules: 1,
  },
  error: { type: "error", code: Code.BAD_GRANT, refSeq: 0, joinId: 42n, detail: "grant unknown" },
  rehello: { type: "rehello", code: Code.REHELLO, detail: "binding lost" },
  intent_result: { type: "intent_result", seq: 7, code: Code.BLOCKED },
  snapshot: { type: "snapshot", tick: 86402, ackSeq: 7, flags: 0, records: unhex("0209100c011104061e001203") },
  static: { type: "static", cell: 9, version: 3, floor: [0, 12, 1, 2, 0, 50], objects: [{ id: 7, kind: 2, x: 8, y: 9, state: 1 }] },
  presence: { type: "presence", area: 5, players: [{ entity: 1001, name: "ada" }, { entity: 1002, name: "bo" }] },
  area_closing: { type: "area_closing", reason: Code.AREA_CLOSING, graceMs: 5000 },
  taken_over: { type: "taken_over" },
  portal_blocked: { type: "portal_blocked", reason: Code.TIMEOUT },
  portal_transfer_rejected: { type: "portal_transfer_rejected", reason: Code.NOT_MEMBER },
  portal_moved: { type: "portal_moved", area: 6, wsUrl: "wss://h2.example/ws", grant: "g-0b11", joinId: 44n },
};

test("golden files: every one has an expected value, and every expected value a file", (fx) => {
  eq(Object.keys(fx.golden).sort(), Object.keys(goldens).sort(), "golden files");
});

test("golden files decode to the documented values", (fx) => {
  for (const [name, h] of Object.entries(fx.golden)) {
    const want = goldens[name];
    if (want === undefined) continue; // the test above reports it
    eq(decodeMessage(unhex(h)), want, `decode ${name}`);
  }
});

test("golden files re-encode byte for byte", (fx) => {
  for (const [name, want] of Object.entries(goldens)) {
    const h = fx.golden[name];
    if (h === undefined) continue;
    eq(hex(encodeMessage(want)), h, `encode ${name}`);
  }
});

test("the golden snapshot's records decode as documented", () => {
  const m = goldens["snapshot"];
  ok(m !== undefined && m.type === "snapshot", "snapshot golden");
  if (m?.type !== "snapshot") return;
  eq(
    readRecords(m.records),
    [
      { op: "step", dir: 2, id: 9 },
      { op: "enter", entity: { id: 12, kind: 1, x: 17, y: 4, facing: 6, hp: 30, flags: 0 } },
      { op: "forget", cell: 3 },
    ],
    "records",
  );
});

test("join ids past 2^53 survive both ways", () => {
  const joinId = 18446744073709551615n; // 2^64 - 1
  const m: Message = { type: "hello", grant: "g", joinId, versions: [2] };
  const b = encodeMessage(m);
  eq(hex(b.subarray(0, 6)), "830201836167", "head");
  eq(hex(b.subarray(6, 15)), "1bffffffffffffffff", "join id in 8 bytes");
  eq(decodeMessage(b), m, "round trip");
  const mid: Message = { type: "resume", token: "t", joinId: 2n ** 40n };
  eq(hex(encodeMessage(mid)), "830202826174" + "1b0000010000000000", "2^40 in 8 bytes");
  const small: Message = { type: "resume", token: "t", joinId: 5n };
  eq(hex(encodeMessage(small)), "830202826174" + "05", "a small join id in one byte");
});

test("longer integer forms are accepted", () => {
  // intent_result{seq: 7, code: BLOCKED} with seq as a 64-bit head.
  eq(decodeMessage(unhex("83020b821b00000000000000070f")), { type: "intent_result", seq: 7, code: Code.BLOCKED }, "decode");
});

test("the decoding rules refuse what is outside the schema", () => {
  const cases: [string, string, number][] = [
    ["empty", "", Code.MALFORMED],
    ["not an array", "02", Code.MALFORMED],
    ["envelope of 2", "820210", Code.MALFORMED],
    ["indefinite array", "9f021080ff", Code.MALFORMED],
    ["a map", "a0", Code.MALFORMED],
    ["a tag", "c283020b82070f", Code.MALFORMED],
    ["a float", "83020b82f93c000f", Code.MALFORMED],
    ["null", "830210f6", Code.MALFORMED],
    ["trailing bytes", "8302108000", Code.MALFORMED],
    ["truncated", "83020b8207", Code.MALFORMED],
    ["byte string past the end", "83020c84010000" + "4502", Code.MALFORMED],
    ["invalid UTF-8", "83020a820262c328", Code.MALFORMED],
    ["wrong field count", "83020b83070f00", Code.MALFORMED],
    ["wrong field type", "83020b8261070f", Code.MALFORMED],
    ["field out of range", "83020b82071a00010000", Code.MALFORMED],
    ["a negative seq", "83020b82200f", Code.MALFORMED],
    ["unknown type", "8302158100", Code.UNKNOWN_TYPE],
    ["another version", "83030b82070f", Code.VERSION_UNSUPPORTED],
  ];
  for (const [name, h, code] of cases) {
    const e = throws(() => decodeMessage(unhex(h)), MalformedError, name);
    eq(e.code, code, `${name}: code`);
  }
});

test("hello_ack and error decode whatever their envelope's version", () => {
  const m = decodeMessage(unhex("830109840300182a60"));
  eq(m, { type: "error", code: Code.BAD_GRANT, refSeq: 0, joinId: 42n, detail: "" }, "error of version 1");
});

test("a text field over 1024 bytes is refused", () => {
  const long = "x".repeat(1025);
  const b = encodeMessage({ type: "rehello", code: 2, detail: long });
  throws(() => decodeMessage(b), MalformedError, "1025 bytes");
  const fine = encodeMessage({ type: "rehello", code: 2, detail: long.slice(1) });
  eq(decodeMessage(fine), { type: "rehello", code: 2, detail: long.slice(1) }, "1024 bytes");
});

test("a message over 1 MiB is refused before decoding", () => {
  const b = new Uint8Array((1 << 20) + 1);
  throws(() => decodeMessage(b), MalformedError, "1 MiB + 1");
});

test("arrays nested too deep are refused", () => {
  throws(() => decodeMessage(unhex("830214" + "81".repeat(12) + "00")), MalformedError, "12 levels");
});

test("encoding refuses fields out of range", () => {
  throws(() => encodeMessage({ type: "intent", seq: 2 ** 32, kind: 0, dir: 0, target: { x: 0, y: 0 } }), RangeError, "seq 2^32");
  throws(() => encodeMessage({ type: "intent", seq: 1, kind: 0, dir: 0, target: { x: 2 ** 31, y: 0 } }), RangeError, "x 2^31");
  throws(() => encodeMessage({ type: "hello", grant: "g", joinId: -1n, versions: [2] }), RangeError, "join id -1");
});
