/**
 * Client-side prediction with server reconciliation for the player's own
 * body. The intents sent and not yet answered are kept by seq; the
 * predicted pose is the server's pose of the body with every pending
 * intent replayed on it by the engine ({@link EngineReplica.predict}: the
 * server's own movement rules, on a replica of the Area as the client was
 * told of it), so it moves and turns exactly as the server will, as far
 * as the world the client knows stays still. Every snapshot re-bases the
 * prediction on the server's pose and replays the intents still pending
 * after its `ack_seq`; a refused intent is dropped and the rest replayed,
 * so a refused step rolls back, and a snapshot that never came
 * (latest-wins) changes nothing, since the next one settles the same seqs.
 *
 * Without a replica (no engine, or the Area's not built yet) nothing is
 * predicted: the predicted pose is the server's.
 *
 * @module
 */

import type { EngineReplica } from "./engine.js";
import type { Cell, Dir, IntentKind, ItemSlots } from "./protocol.js";
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

/** PredictorOptions configure a {@link Predictor}. */
export interface PredictorOptions {
  /**
   * others returns the squares of every other body in view (players and
   * creatures), as x, y pairs: they stop the body as the server's do.
   * None by default.
   */
  others?: () => Int32Array;
  /**
   * onError is told of a replica that threw; the predictor drops it (see
   * {@link Predictor.replica}) and predicts nothing until it is given
   * another.
   */
  onError?: (err: unknown) => void;
}

const NO_BODIES = new Int32Array(0);

/**
 * Predictor keeps the pending intents of one session and the predicted
 * pose of its body. It belongs to one session; every method but a
 * prediction is O(pending), and a prediction is one call of the engine
 * (pending is at most the Area's queue length in practice).
 */
export class Predictor {
  private current: EngineReplica | null = null;

  private readonly pending: PendingIntent[] = [];
  private readonly others: () => Int32Array;
  private readonly onError: (err: unknown) => void;
  private server: Pose | null = null;
  private pose: Pose | null = null;

  constructor(opts: PredictorOptions = {}) {
    this.others = opts.others ?? (() => NO_BODIES);
    this.onError = opts.onError ?? (() => {});
  }

  /**
   * replica is the engine's replica of the Area the predictions run on,
   * or null: nothing is predicted (the predicted pose is the server's).
   * A new one is used from the next prediction on (sent, reconcile,
   * replay); the one it replaces is freed.
   */
  get replica(): EngineReplica | null {
    return this.current;
  }

  set replica(r: EngineReplica | null) {
    const old = this.current;
    this.current = r;
    if (old === null || old === r) return;
    try {
      old.free();
    } catch {
      // An engine that stopped has nothing left to free.
    }
  }

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

  /** sent records an intent just sent, and predicts it at once (a step moves the body, an action turns it). */
  sent(p: PendingIntent): void {
    this.pending.push(p);
    this.replay();
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
   * does not show it) and replays the pending intents on it.
   */
  reconcile(server: Pose | null): void {
    this.server = server === null ? null : { ...server };
    this.replay();
  }

  /**
   * replay recomputes the prediction: the server's pose, with every
   * pending intent answered in order by the engine's replica (without
   * one, the server's pose as it is).
   */
  replay(): void {
    const server = this.server;
    if (server === null) {
      this.pose = null;
      return;
    }
    this.pose = { ...server };
    const r = this.replica;
    if (r === null || this.pending.length === 0) return;
    const intents = new Int32Array(2 * this.pending.length);
    this.pending.forEach((p, i) => {
      intents[2 * i] = p.kind;
      intents[2 * i + 1] = p.dir;
    });
    try {
      const got: unknown = r.predict(server.x, server.y, server.facing, this.others(), intents);
      // (An engine whose Go program died answers undefined.)
      if (!(got instanceof Int32Array) || got.length !== 3) throw new Error(`the engine's predict answered ${String(got)}`);
      this.pose = { x: got[0] as number, y: got[1] as number, facing: got[2] as number };
    } catch (e) {
      this.replica = null;
      this.onError(e);
    }
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
