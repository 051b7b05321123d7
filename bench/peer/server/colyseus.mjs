// The Node.js peer: a Colyseus 0.18 server doing the work the comparison
// gives ley (issue 27): players on a 64x64 floor in rooms of --per-room,
// each stepping one square in one of 8 directions per "step" message;
// everyone in a room sees the whole room; state patches at 10 Hz
// (patchRate 100 ms), sent only when the state changed (Colyseus's own
// behaviour).
//
//   node server/colyseus.mjs --port 2567 --per-room 20
import { parseArgs } from "node:util";
import { Server, Room } from "@colyseus/core";
import { WebSocketTransport } from "@colyseus/ws-transport";
import { schema, t } from "@colyseus/schema";

const { values: opt } = parseArgs({
  options: {
    port: { type: "string", default: "2567" },
    "per-room": { type: "string", default: "20" },
  },
});
const side = 64;
const perRoom = Number(opt["per-room"]);
// The (dx, dy) of each direction, 0 (north) to 7 (north-west), as ley's.
const delta = [[0, -1], [1, -1], [1, 0], [1, 1], [0, 1], [-1, 1], [-1, 0], [-1, -1]];

const Player = schema({ x: t.uint8(), y: t.uint8(), facing: t.uint8() }, "Player");
const GridState = schema({ players: t.map(Player) }, "GridState");

class GridRoom extends Room {
  maxClients = perRoom;
  patchRate = 100;

  onCreate() {
    this.setState(new GridState());
    this.onMessage("step", (client, dir) => {
      const p = this.state.players.get(client.sessionId);
      const d = delta[dir];
      if (p === undefined || d === undefined) return;
      const x = p.x + d[0], y = p.y + d[1];
      p.facing = dir;
      if (x < 0 || y < 0 || x >= side || y >= side) return;
      p.x = x;
      p.y = y;
    });
  }

  onJoin(client) {
    const p = new Player();
    p.x = Math.floor(Math.random() * side);
    p.y = Math.floor(Math.random() * side);
    p.facing = 4;
    this.state.players.set(client.sessionId, p);
  }

  onLeave(client) {
    this.state.players.delete(client.sessionId);
  }
}

const server = new Server({ transport: new WebSocketTransport(), greet: false });
server.define("grid", GridRoom);
await server.listen(Number(opt.port), "127.0.0.1");
console.log(`colyseus peer: ws://127.0.0.1:${opt.port}, rooms of ${perRoom}`);
