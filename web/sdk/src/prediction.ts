/**
 * Client-side prediction with server reconciliation for the player's own
 * body. The player's steps move the predicted pose at once, and actions
 * turn it; the intents sent and not yet answered are kept by seq; every
 * snapshot resets the prediction to the server's pose of the body and
 * replays the intents still pending after its `ack_seq`; a refused intent
 * is dropped and the rest replayed, so a refused step rolls back, and a
 * snapshot that never came (latest-wins) changes nothing, since the next
 * one settles the same seqs.
 *
 * @module
 */

import { type Cell, DIR_DELTA, type Dir, IntentKind, type ItemSlots, isDiagonal } from "./protocol.js";
import { seqAtOrBefore } from "./seq.js";

/** Where a body stands and which way it faces. */
export interface Pose {
  x: number;
  y: number;
  facing: number;
}

/** One intent sent and not yet answered. */
export interface PendingIntent {
  readonly seq: number;
  readonly kind: IntentKind;
  readonly dir: Dir;
  readonly target: Cell;
  /** An item intent's slots and count. */
  readonly item?: ItemSlots;
  /** When it was sent (the session's clock, in ms). */
  readonly sentAt: number;
  /**
   * It was in flight when a connection dropped and was sent again after
   * the resume: its first copy's answer, if the server had one, may have
   * been lost with the connection.
   */
  resent: boolean;
  /** The resent copy was refused STALE_SEQ: the server had the first copy, whose answer is the one that counts. */
  stale: boolean;
}

/** Terrain is what a prediction asks of the world. */
export interface Terrain {
  /** passable reports whether the body could step onto (x, y) now: on the grid, walkable, no other body there. */
  passable(x: number, y: number): boolean;
  /**
   * walkable, when given, reports whether the map lets a body stand on
   * (x, y), bodies aside. A diagonal step is then blocked (the body turns
   * without moving) when either square beside it, (x1, y0) or (x0, y1),
   * is not walkable: bodies do not cut the corners of walls and objects.
   */
  walkable?(x: number, y: number): boolean;
  /**
   * onGrid, when given, reports whether (x, y) is a square of the Area. A
   * step off the grid leaves the pose as it is (the server refuses it
   * OUT_OF_BOUNDS without turning the body); without onGrid such a step
   * turns the body like any blocked one.
   */
  onGrid?(x: number, y: number): boolean;
  /** diagonal reports whether the Area allows diagonal steps. */
  readonly diagonal: boolean;
}

/**
 * stepPose returns the pose after a step in dir as the server would apply
 * it: the body moves when the square is passable (and, for a diagonal, the
 * two squares beside it are walkable), and faces dir; a step into a wall,
 * an object or a body turns it without moving it. A diagonal where the
 * Area allows none (refused NOT_ALLOWED) and a step off the grid (refused
 * OUT_OF_BOUNDS) change nothing.
 */
export function stepPose(p: Pose, dir: Dir, t: Terrain): Pose {
  if (isDiagonal(dir) && !t.diagonal) return { ...p };
  const [dx, dy] = DIR_DELTA[dir] as readonly [number, number];
  const x = p.x + dx;
  const y = p.y + dy;
  if (t.onGrid !== undefined && !t.onGrid(x, y)) return { ...p };
  if (!t.passable(x, y)) return { ...p, facing: dir };
  if (dx !== 0 && dy !== 0 && t.walkable !== undefined && (!t.walkable(x, p.y) || !t.walkable(p.x, y))) {
    return { ...p, facing: dir };
  }
  return { x, y, facing: dir };
}

/**
 * actionPose returns the pose after an action in dir: the body turns to
 * face the square it acts on, and does not move. What the action does (a
 * door opened, a creature hurt) is not predicted: it shows in the next
 * static or snapshot. A diagonal where the Area allows none (refused
 * NOT_ALLOWED) changes nothing.
 */
export function actionPose(p: Pose, dir: Dir, t: Terrain): Pose {
  if (isDiagonal(dir) && !t.diagonal) return { ...p };
  return { ...p, facing: dir };
}

/** predict applies one intent to a pose: steps and actions; move-tos and stops are the server's to carry out. */
function predict(p: Pose, q: Pick<PendingIntent, "kind" | "dir">, t: Terrain): Pose {
  switch (q.kind) {
    case IntentKind.Step:
      return stepPose(p, q.dir, t);
    case IntentKind.Action:
      return actionPose(p, q.dir, t);
    default:
      return p;
  }
}

/**
 * Predictor keeps the pending intents of one session and the predicted
 * pose of its body. It belongs to one session; every method is O(pending),
 * and pending is at most the Area's queue length in practice.
 */
export class Predictor {
  private readonly pending: PendingIntent[] = [];
  private server: Pose | null = null;
  private pose: Pose | null = null;

  /** predicted is the body's predicted pose; null until a snapshot showed the body. */
  get predicted(): Pose | null {
    return this.pose;
  }

  /** authoritative is the body's pose as the last snapshot showed it. */
  get authoritative(): Pose | null {
    return this.server;
  }

  /** outstanding lists the intents sent and not answered, in seq order. */
  get outstanding(): readonly PendingIntent[] {
    return this.pending;
  }

  /** find returns the pending intent of seq, if any. */
  find(seq: number): PendingIntent | undefined {
    return this.pending.find((p) => p.seq === seq);
  }

  /** sent records an intent just sent; a step moves the prediction at once, an action turns it. */
  sent(p: PendingIntent, t: Terrain): void {
    this.pending.push(p);
    if (this.pose !== null) this.pose = predict(this.pose, p, t);
  }

  /**
   * acked settles, as applied, every pending intent whose seq is at or
   * before ackSeq in serial order, and returns them.
   */
  acked(ackSeq: number): PendingIntent[] {
    const done: PendingIntent[] = [];
    for (let i = 0; i < this.pending.length; ) {
      const p = this.pending[i] as PendingIntent;
      if (seqAtOrBefore(p.seq, ackSeq)) {
        done.push(p);
        this.pending.splice(i, 1);
      } else {
        i++;
      }
    }
    return done;
  }

  /** take removes the pending intent of seq (refused) and returns it; call replay after. */
  take(seq: number): PendingIntent | undefined {
    const i = this.pending.findIndex((p) => p.seq === seq);
    if (i < 0) return undefined;
    const [p] = this.pending.splice(i, 1);
    return p;
  }

  /**
   * reconcile takes the server's pose of the body (null when the snapshot
   * does not show it) and replays the pending steps on it.
   */
  reconcile(server: Pose | null, t: Terrain): void {
    this.server = server === null ? null : { ...server };
    this.replay(t);
  }

  /** replay recomputes the prediction: the server's pose, then every pending step in order. */
  replay(t: Terrain): void {
    if (this.server === null) {
      this.pose = null;
      return;
    }
    let p: Pose = { ...this.server };
    for (const q of this.pending) p = predict(p, q, t);
    this.pose = p;
  }

  /**
   * clear ends the session's seq space: every pending intent is dropped
   * and returned (its session ended without an answer: not applied), and
   * the prediction forgets the body.
   */
  clear(): PendingIntent[] {
    const all = this.pending.splice(0);
    this.server = null;
    this.pose = null;
    return all;
  }
}
