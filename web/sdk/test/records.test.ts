/** Snapshot records: the writer and the reader agree; malformed records are refused. */

import { MalformedError, RecordWriter, readRecords } from "../src/index.js";
import { eq, hex, test, throws, unhex } from "./harness.js";

test("records: every kind round-trips through the writer and the reader", () => {
  const e = { id: 300, kind: 1, x: 200, y: 5, facing: 6, hp: 65535, flags: 2 };
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
