/**
 * Client-side prediction with server reconciliation for the player's own
 * body. The player's steps move the predicted pose at once; the intents
 * sent and not yet answered are kept by seq; every snapshot resets the
 * prediction to the server's pose of the body and replays the steps still
 * pending after its `ack_seq`; a refused intent is dropped and the rest
 * replayed, so a refused step rolls back, and a snapshot that never came
 * (latest-wins) changes nothing, since the next one settles the same
 * seqs.
 *
 * @module
 */

import { type Cell, DIR_DELTA, type Dir, IntentKind, isDiagonal } from "./protocol.js";
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
  /** When it was sent (the session's clock, in ms). */
  readonly sentAt: number;
  /** It was sent again after a resume: a STALE_SEQ for it is the server having the first copy. */
  resent: boolean;
}

/** Terrain is what a prediction asks of the world. */
export interface Terrain {
  /** passable reports whether the body could stand on (x, y): on the grid, no wall, no other body. */
  passable(x: number, y: number): boolean;
  /** diagonal reports whether the Area allows diagonal steps. */
  readonly diagonal: boolean;
}

/**
 * stepPose returns the pose after a step in dir as the server would apply
 * it: the body turns to dir, and moves when the square is passable (and
 * the step is not a diagonal the Area forbids).
 */
export function stepPose(p: Pose, dir: Dir, t: Terrain): Pose {
  const [dx, dy] = DIR_DELTA[dir] as readonly [number, number];
  if (isDiagonal(dir) && !t.diagonal) return { ...p, facing: dir };
  const x = p.x + dx;
  const y = p.y + dy;
  return t.passable(x, y) ? { x, y, facing: dir } : { ...p, facing: dir };
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

  /** sent records an intent just sent; a step moves the prediction at once. */
  sent(p: PendingIntent, t: Terrain): void {
    this.pending.push(p);
    if (this.pose !== null && p.kind === IntentKind.Step) this.pose = stepPose(this.pose, p.dir, t);
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
    for (const q of this.pending) {
      if (q.kind === IntentKind.Step) p = stepPose(p, q.dir, t);
    }
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
