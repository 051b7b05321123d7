/** Snapshot records: the writer and the reader agree; malformed records are refused. */

import { MalformedError, RecordWriter, readRecords } from "../src/index.js";
import { eq, hex, test, throws, unhex } from "./harness.js";

test("records: every kind round-trips through the writer and the reader", () => {
  const e = { id: 300, kind: 1, look: 200, x: 200, y: 5, facing: 6, hp: 65535, flags: 2 };
  const b = new RecordWriter()
    .step(9, 2)
    .pos(128, 129, 16383)
    .gone(4294967295)
    .state(7, 30, 1, 4)
    .enter(e)
    .cell(12, [e, { ...e, id: 1 }])
    .forget(3)
    .bytes();
  eq(
    readRecords(b),
    [
      { op: "step", dir: 2, id: 9 },
      { op: "pos", id: 128, x: 129, y: 16383 },
      { op: "gone", id: 4294967295 },
      { op: "state", id: 7, hp: 30, flags: 1, facing: 4 },
      { op: "enter", entity: e },
      { op: "cell", cell: 12, entities: [e, { ...e, id: 1 }] },
      { op: "forget", cell: 3 },
    ],
    "records",
  );
});

test("records: varints are LEB128, low bits first", () => {
  eq(hex(new RecordWriter().step(1, 0).step(127, 7).step(128, 1).step(300, 2).bytes()), "0001077f01800102ac02", "steps");
});

test("records: malformed ones are refused", () => {
  const cases: [string, string][] = [
    ["unknown op", "13"],
    ["op between the kinds", "0b01"],
    ["truncated id", "02"],
    ["truncated varint", "0280"],
    ["id over 32 bits", "02808080801001"],
    ["hp over 16 bits", "0a018080040000"],
    ["look over 16 bits", "100101808004" + "0000000000"],
    ["an entity one byte short (no flags)", "1001010102030400"],
    ["x over 31 bits", "0801808080800800"],
    ["cell count beyond the bytes", "110005" + "00000000000000"],
    ["truncated entity", "10010002"],
    ["varint too long", "02" + "80".repeat(10) + "01"],
  ];
  for (const [name, h] of cases) throws(() => readRecords(unhex(h)), MalformedError, name);
});

test("records: empty records are no records", () => {
  eq(readRecords(new Uint8Array(0)), [], "none");
});

test("records: an entity is id, kind, look, x, y, facing, hp, flags", () => {
  // docs/protocol.md's golden snapshot: enter id 12, creature, look 1, (17, 4), facing w, hp 15.
  eq(
    readRecords(unhex("100c01011104060f00")),
    [{ op: "enter", entity: { id: 12, kind: 1, look: 1, x: 17, y: 4, facing: 6, hp: 15, flags: 0 } }],
    "enter",
  );
  // A player has look 0; a look past 127 takes two bytes.
  eq(hex(new RecordWriter().enter({ id: 1, kind: 0, look: 0, x: 4, y: 4, facing: 0, hp: 100, flags: 0 }).bytes()), "100100000404006400", "a player");
  eq(hex(new RecordWriter().enter({ id: 2, kind: 1, look: 300, x: 1, y: 1, facing: 0, hp: 0, flags: 0 }).bytes()), "100201ac020101000000", "look 300");
  // A cell of n entities needs at least 8 bytes each.
  throws(() => readRecords(unhex("110002" + "02010106040000" + "0002010106040000")), MalformedError, "two entities in 15 bytes");
});
