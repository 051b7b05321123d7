/**
 * A player's session in a realm: joining through the director, the game
 * socket, the view, prediction, and the reconnect coordinator that keeps
 * the player in play across dropped connections, closing Areas and
 * portals.
 *
 * @module
 */

import { type BackoffPolicy, DEFAULT_BACKOFF, backoffDelay } from "./backoff.js";
import { type Clock, type TimerHandle, realClock } from "./clock.js";
import { type Death, type Hit, inferCombat } from "./combat.js";
import { Code, codeName } from "./codes.js";
import { decodeMessage, encodeMessage } from "./codec.js";
import { ApiError, type Director, type JoinAnswer } from "./director.js";
import { Emitter } from "./emitter.js";
import type { Engine, EngineReplica } from "./engine.js";
import { Interpolator } from "./interpolation.js";
import { type Logger, consoleLogger } from "./log.js";
import { type PendingIntent, Predictor, type Pose } from "./prediction.js";
import {
  type Amount,
  type AreaInfo,
  CONTAINER_SLOT,
  type Cell,
  type ClientMessage,
  ContainerFlag,
  DIR_DELTA,
  type Dir,
  IntentKind,
  type ItemKind,
  type ItemSlots,
  type Message,
  NO_ITEM,
  type Plot,
  PROTOCOL_VERSION,
  type Recipe,
  SNAPSHOT_RESET,
  type ShortSnapshot,
  type Snapshot,
  type SnapshotBase,
  type Stack,
  type Trade,
  TradeStatus,
  expandShortSnapshot,
} from "./protocol.js";
import type { EntityState } from "./records.js";
import { nextSeq } from "./seq.js";
import { MalformedError } from "./strict.js";
import { AreaView, ViewError } from "./view.js";

/**
 * The session's states. "binding" is a socket open with hello or resume
 * sent; "bound" is hello_ack received; "ready" is bound with the first
 * snapshot applied: only then is the view the world.
 */
export type SessionState =
  | "idle"
  | "joining"
  | "connecting"
  | "binding"
  | "bound"
  | "ready"
  | "reconnecting"
  | "ended";

/** Why a session ended. */
export type EndReason =
  | "left"
  | "taken_over"
  | "realm_closed"
  | "realm_full"
  | "area_full"
  | "no_such_area"
  | "unauthorized"
  | "version_unsupported"
  | "gave_up";

/** What an intent asks for, before it has a seq. */
export interface IntentRequest {
  kind: IntentKind;
  dir: Dir;
  target: Cell;
  /** An item intent's slots and count (place, move item, use); none for the others. */
  item?: ItemSlots;
}

/**
 * The one answer every intent gets. "unknown" is an intent that was in
 * flight when a connection dropped, whose answer was lost with it: it was
 * applied or refused, and the view (re-based on the resumed session's
 * snapshots) shows what it did.
 */
export type IntentOutcome =
  | { status: "applied"; seq: number }
  | { status: "refused"; seq: number | null; code: number }
  | { status: "voided"; seq: number | null }
  | { status: "unknown"; seq: number };

/**
 * A container as the last `container` message for its square said it (see
 * {@link Session.containerAt}): what it holds, and for a stall its asks
 * and whether the player owns it; for a working station, the Area tick it
 * is done at.
 */
export interface ContainerState {
  /** The square it is placed on. */
  x: number;
  y: number;
  slots: readonly Stack[];
  /** A stall's asks, one a slot (`{kind: 0, count: 0}`: not for sale); empty for any other container. */
  prices: readonly Amount[];
  /** {@link ContainerFlag} bits. */
  flags: number;
  /** The player owns it (a stall's owner): flags has ContainerFlag.Owned. */
  owned: boolean;
  /** The Area tick a working station is done at (compare the snapshots' tick, {@link AreaView.tick}); 0 when idle. */
  ready: number;
}

/** An entity as a game draws it. */
export interface Drawable {
  id: number;
  /** {@link EntityKind}. */
  kind: number;
  /** What a creature is (`area_info.creatures[look - 1]`); 0 for players. */
  look: number;
  /** The creature kind's name, for creatures of a listed kind. */
  creature: string | undefined;
  /** Where to draw it, in squares (fractional while it slides). */
  x: number;
  y: number;
  facing: number;
  hp: number;
  /** Its full health ({@link AreaView.fullHp}): hp of fullHp; 0 when it has none. */
  fullHp: number;
  flags: number;
  /** The player's name from presence, for players. */
  name: string | undefined;
  /** The session's own body (drawn at its predicted pose). */
  self: boolean;
}

/** The session's events and their payloads. */
export interface SessionEvents {
  /** The state changed; detail says why, for people. */
  state: { state: SessionState; previous: SessionState; detail: string };
  /** Bound and the first snapshot applied. */
  ready: { area: number; entity: number; resumed: boolean };
  areaInfo: AreaInfo;
  presence: ReadonlyMap<number, string>;
  static: { cell: number };
  snapshot: { tick: number; ackSeq: number };
  /** What the character carries or has stashed changed (or came whole on a bind): {@link Session.inventory}, {@link Session.stash}. */
  inventory: { slots: readonly Stack[]; stash: readonly Stack[] };
  /** A container the player opened or stands next to: its contents (a stall's prices, a station's ready tick); see {@link Session.containerAt}. */
  container: ContainerState;
  /**
   * The player's trade changed (opened, an offer, a confirmation), or
   * ended: status TradeStatus.Done (the items changed hands; the
   * inventory event came first) or TradeStatus.Void (reason says why).
   * {@link Session.trade} is the open trade, null once it ended.
   */
  trade: Trade;
  /**
   * The recipes the character knows changed (it crafted or learned one),
   * or came whole on a bind: {@link Session.recipes}.
   */
  recipes: { known: readonly Recipe[] };
  /** A snapshot's ack_seq reached an intent: applied. */
  intentApplied: { seq: number; intent: IntentRequest };
  /** The server refused an intent (or the session could not queue it). */
  intentRefused: { seq: number | null; intent: IntentRequest; code: number; name: string };
  /** The session ended (or moved on) before the intent got an answer: not applied. */
  intentVoided: { seq: number | null; intent: IntentRequest };
  /** The intent's answer was lost with a dropped connection: applied or refused, the view shows which. */
  intentUnknown: { seq: number; intent: IntentRequest };
  /**
   * The player's body was killed and came back with full health at a
   * spawn point: from is where the snapshot before showed it, at where
   * it stands now. The protocol has no message for it: the session tells
   * it from the body's hp rising back to full (nothing else heals).
   */
  respawned: { from: { x: number; y: number }; at: { x: number; y: number }; hp: number };
  /**
   * A blow: an entity in view lost health (see {@link Hit}; inferred from
   * the snapshots, which have no word for it, unless inferCombat is off).
   */
  hit: Hit;
  /** An entity in view was killed (see {@link Death}; inferred like hit). */
  death: Death;
  areaClosing: { reason: number; graceMs: number };
  takenOver: { message: string };
  portalBlocked: { reason: number };
  portalRejected: { reason: number };
  /** The body crossed from Area from, standing on square at of it (null if unseen), to Area to. */
  portalMoved: { from: number; to: number; at: { x: number; y: number } | null };
  /** An error message of the server that no intent or join owns. */
  serverError: { code: number; name: string; detail: string };
  /** The director refused a join; willRetry says whether the session tries again. */
  joinRefused: { status: number; code: string; message: string; willRetry: boolean };
  /** A message was dropped (malformed, unknown, stale); the session goes on. */
  dropped: { reason: string };
  /** A round-trip sample, and the smoothed figure. */
  rtt: { sampleMs: number; smoothedMs: number };
  ended: { reason: EndReason; message: string };
}

/** A WebSocket, as much of it as the session uses. */
export type GameSocket = Pick<WebSocket, "binaryType" | "onopen" | "onmessage" | "onclose" | "onerror" | "send" | "close">;

/** SessionOptions configure a {@link Session}. */
export interface SessionOptions {
  /** The director, logged in (or an OfflineRealm: what a session asks of a realm is a join and who it is). */
  director: Pick<Director, "join" | "me">;
  /** The Area to join. */
  area: number;
  logger?: Logger;
  clock?: Clock;
  /** A draw in [0, 1) for the jitter (Math.random by default). */
  random?: () => number;
  /** Opens the game socket (the browser's WebSocket by default). */
  socket?: (url: string) => GameSocket;
  backoff?: Partial<BackoffPolicy>;
  /** Joins through the director tried in a row before giving up (8). */
  maxJoinAttempts?: number;
  /** Resume no later than this before the grace ends, in ms (500). */
  graceMarginMs?: number;
  /** How long a socket may take to open and be answered hello_ack (or a refusal), in ms (10000). */
  bindTimeoutMs?: number;
  /**
   * How long a bound session may hear nothing from its host before the
   * connection counts as dead and is dropped (then resumed), in ms (5000;
   * 0: never). A host sends a snapshot at least once a second (its
   * keep-alive), so silence this long is a host or a network gone, not a
   * quiet Area.
   */
  silenceMs?: number;
  /**
   * Whether the session infers hit and death events from the snapshots'
   * health changes and gone records (true). A game whose server sends
   * such events turns it off and emits its own of the same shapes.
   */
  inferCombat?: boolean;
  /**
   * The engine ({@link loadEngine}): with it the session predicts its
   * player's steps and actions by the server's own rules, on a replica of
   * each Area built from its area_info and statics. Without it nothing is
   * predicted: `predicted` is the last snapshot's pose, and a step shows
   * once the server applied it.
   */
  engine?: Engine;
}

const RTT_ALPHA = 0.25;

/** How {@link Session} retries: see retry. */
interface RetryOptions {
  /** The least delay, in ms (a Retry-After). */
  atLeastMs?: number;
  /** An answered refusal: counted towards maxJoinAttempts. */
  refusal?: boolean;
  /** At once, no backoff. */
  now?: boolean;
  /** A join that keeps the resume in hand until a grant comes. */
  keepResume?: boolean;
}

/** The attempt a reconnecting session makes next, and when. */
export interface NextAttempt {
  /** "resume": the same host, the same session; "join": through the director. */
  kind: "resume" | "join";
  /** When, on the session's clock (ms; `performance.now()` in a browser). */
  at: number;
  /** Why the session is reconnecting, for people. */
  why: string;
}

/** An intent waiting to be sent or answered, with the promise to settle. */
interface Outgoing {
  readonly req: IntentRequest;
  readonly resolve: (o: IntentOutcome) => void;
}

/**
 * Session is one player's presence in a realm, from the first join until
 * it ends (taken over, left, refused for good). It follows the player
 * through portals and reconnects on its own: a dropped connection is
 * resumed within the Area's resume grace, and past it (or when the Area
 * closed or failed) the player joins again through the director, with
 * exponential backoff and full jitter between attempts.
 *
 * Intents are reliable: one made while the socket is down waits and is
 * sent once bound; those in flight when a connection dropped are sent
 * again after the resume (a copy the server had already is refused
 * STALE_SEQ, which the session recognises and ignores). Each intent's
 * promise settles exactly once: applied, refused, or voided (the session
 * ended without an answer: not applied).
 *
 * A malformed or unknown message is logged, counted and dropped; nothing
 * the server sends makes the session throw. A Session belongs to the
 * page's one thread; events are delivered synchronously.
 */
export class Session {
  /** The view of the current Area. */
  readonly view = new AreaView();
  /** Other entities' slides between snapshots. */
  readonly interpolator = new Interpolator();

  private readonly events: Emitter<SessionEvents>;
  private readonly predictor: Predictor;
  private engine: Engine | null;
  private infoFrame: Uint8Array | null = null; // the last area_info, as received: what useEngine builds a replica from
  private readonly director: Pick<Director, "join" | "me">;
  private readonly log: Logger;
  private readonly clock: Clock;
  /** When the last snapshot came (clock ms); -1 before one. */
  private snapshotAt = -1;
  private readonly random: () => number;
  private readonly socketFactory: (url: string) => GameSocket;
  private readonly backoff: BackoffPolicy;
  private readonly maxJoinAttempts: number;
  private readonly graceMarginMs: number;
  private readonly bindTimeoutMs: number;
  private readonly silenceMs: number;
  /** When the current socket last brought a message (clock ms). */
  private heardAt = 0;
  /** The tick and ack_seq of the last snapshot the current socket brought (a short one counts from it); null before one. */
  private lastSnapshot: SnapshotBase | null = null;
  private silenceTimer: TimerHandle | null = null;
  private readonly inferCombat: boolean;

  private st: SessionState = "idle";
  private targetArea: number;
  private ws: GameSocket | null = null;
  private wsUrl = "";
  private joinId = 0n;
  private resumeToken: string | null = null;
  private resuming = false;
  private sessionEnded = false; // a terminal message came: the close that follows is no drop
  private ownEntity = 0;
  private seq = 0;
  private readonly outgoing = new Map<number, Outgoing>();
  private readonly outbox: Outgoing[] = [];
  private gen = 0;
  private timer: TimerHandle | null = null;
  private bindTimer: TimerHandle | null = null;
  // Attempts in a row since the session was last ready (the backoff's
  // exponent), and answered refusals in a row (past maxJoinAttempts the
  // session gives up; a director that does not answer never counts).
  private attempts = 0;
  private refusals = 0;
  private nextTry: NextAttempt | null = null;
  // Whether a host ever bound this session. Until then a join retried asks
  // for the Area the player chose, not where /v1/me says the character is:
  // a body left behind in another Area (waiting out its resume grace)
  // would otherwise pull the player back there.
  private wasBound = false;
  private resumeDeadline = 0;
  private helloSentAt = 0;
  private rtt: number | null = null;
  private dropCount = 0;
  private endReason: EndReason | null = null;
  private ownHp = -1; // the own body's hp in the last snapshot that showed it; -1: not seen
  private slots: readonly Stack[] = [];
  private stashed: readonly Stack[] = [];
  private known: readonly Recipe[] = [];
  private openTrade: Trade | null = null;
  // The last container message of each square ("x,y"), of this Area.
  private readonly boxes = new Map<string, ContainerState>();
  private kinds: ReadonlyMap<number, ItemKind> = new Map();
  private plotList: readonly Plot[] = [];
  private resumeTick = -1; // hello_ack's tick of the last resume, while resent intents may be in doubt
  private readonly resentSeqs = new Set<number>(); // seqs sent again after the last resume
  // The last static frame of each cell, as received: a replica built
  // anew for the same Area (a resume's area_info) is laid with those the
  // view keeps, which the server does not send again.
  private readonly staticFrames = new Map<number, Uint8Array>();

  constructor(opts: SessionOptions) {
    this.director = opts.director;
    this.targetArea = opts.area;
    this.log = opts.logger ?? consoleLogger;
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.socketFactory = opts.socket ?? ((url) => new WebSocket(url));
    this.backoff = { ...DEFAULT_BACKOFF, ...opts.backoff };
    this.maxJoinAttempts = opts.maxJoinAttempts ?? 8;
    this.graceMarginMs = opts.graceMarginMs ?? 500;
    this.bindTimeoutMs = opts.bindTimeoutMs ?? 10_000;
    this.silenceMs = opts.silenceMs ?? 5_000;
    this.inferCombat = opts.inferCombat ?? true;
    this.engine = opts.engine ?? null;
    this.predictor = new Predictor({
      others: () => this.others(),
      onError: (err) => this.log.error("the engine's prediction failed; predicting nothing", { err: String(err) }),
    });
    this.events = new Emitter((event, err) => this.log.error("a listener threw", { event, err }));
  }

  // ---- what a game reads ----

  /** state is where the session is; see {@link SessionState}. */
  get state(): SessionState {
    return this.st;
  }

  /** ready reports whether the session is bound and its view is the world. */
  get ready(): boolean {
    return this.st === "ready";
  }

  /** area is the Area the session is in (or joining). */
  get area(): number {
    return this.targetArea;
  }

  /** entity is the player's body in the current session (0 before hello_ack). */
  get entity(): number {
    return this.ownEntity;
  }

  /** predicted is the body's predicted pose; null until a snapshot showed it. */
  get predicted(): Pose | null {
    return this.predictor.predicted;
  }

  /** confirmed is the body's pose as the last snapshot showed it (no prediction). */
  get confirmed(): Pose | null {
    return this.predictor.authoritative;
  }

  /**
   * self is the player's body as the last snapshot showed it (its hp of
   * `view.info.playerHp`, its flags), or undefined while the view does
   * not hold it.
   */
  get self(): EntityState | undefined {
    return this.view.entities.get(this.ownEntity);
  }

  /** pending is how many intents wait for an answer, sent or not. */
  get pending(): number {
    return this.predictor.outstanding.length + this.outbox.length;
  }

  /** rttMs is the smoothed round-trip time, or null before a sample. */
  get rttMs(): number | null {
    return this.rtt;
  }

  /** dropped counts the messages dropped as malformed, unknown or stale. */
  get dropped(): number {
    return this.dropCount;
  }

  /** ended is why the session ended, or null while it goes on. */
  get ended(): EndReason | null {
    return this.endReason;
  }

  /**
   * nextAttempt is the attempt a reconnecting session makes next and when
   * (on the session's clock), or null while none is scheduled: a page
   * counts down to it.
   */
  get nextAttempt(): NextAttempt | null {
    return this.timer === null ? null : this.nextTry;
  }

  /** on subscribes to an event and returns a function that unsubscribes. */
  on<K extends keyof SessionEvents>(name: K, fn: (payload: SessionEvents[K]) => void): () => void {
    return this.events.on(name, fn);
  }

  /**
   * drawables returns every entity in view as a game draws it at time now
   * (the session clock's ms): the own body at its predicted square, the
   * others where their slides are.
   */
  drawables(now: number = this.clock.now()): Drawable[] {
    const out: Drawable[] = [];
    const me = this.predictor.predicted;
    for (const e of this.view.entities.values()) {
      const self = e.id === this.ownEntity;
      const p = self && me !== null ? me : (this.interpolator.position(e.id, now) ?? e);
      out.push({
        id: e.id,
        kind: e.kind,
        look: e.look,
        creature: this.view.creatureKind(e.look)?.name,
        x: p.x,
        y: p.y,
        facing: self && me !== null ? me.facing : e.facing,
        hp: e.hp,
        fullHp: this.view.fullHp(e),
        flags: e.flags,
        name: this.view.players.get(e.id),
        self,
      });
    }
    return out;
  }

  // ---- what a game does ----

  /** start joins the Area of the options. */
  start(): void {
    if (this.st !== "idle") throw new Error(`session: start in state ${this.st}`);
    void this.requestJoin(this.targetArea);
  }

  /**
   * leave ends the session: the player quits the Area (the page's Leave,
   * a log out, the page hidden for good). Intents without an answer are
   * voided; the socket closes cleanly (see {@link Session.farewell}).
   * Safe to call in any state, and more than once.
   */
  leave(): void {
    this.farewell();
    this.end("left", "left the Area");
  }

  /**
   * retryNow makes a reconnecting session's next attempt at once rather
   * than at the end of its backoff (a page calls it when the browser says
   * it is online again, or when the player asks). It does nothing when no
   * attempt waits.
   */
  retryNow(): void {
    const next = this.nextTry;
    if (this.timer === null || next === null || this.st !== "reconnecting") return;
    this.clearTimer();
    this.attempt(next.kind);
  }

  /** step asks for one step in dir. */
  step(dir: Dir): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Step, dir, target: { x: 0, y: 0 } });
  }

  /** moveTo asks the body to walk to (x, y) along a path the server plans. */
  moveTo(x: number, y: number): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.MoveTo, dir: 0, target: { x, y } });
  }

  /** stop drops the queued steps and the move-to target. */
  stop(): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Stop, dir: 0, target: { x: 0, y: 0 } });
  }

  /**
   * place places one item of inventory slot `slot` on the square next to
   * the body in dir (it spends the movement budget like a step). The
   * placed item comes in its cell's next static, the inventory in the
   * next inventory event; refusals are named (NOT_BUILDER, OFF_PLOT,
   * OCCUPIED, BUDGET, ITEM_CAP...).
   */
  place(slot: number, dir: Dir): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Place, dir, target: { x: 0, y: 0 }, item: { from: slot, to: 0, count: 0 } });
  }

  /** take takes the item placed on the square next to the body in dir back into the inventory. */
  take(dir: Dir): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Take, dir, target: { x: 0, y: 0 } });
  }

  /**
   * moveItem moves count items (0: the whole stack) from slot from to slot
   * to: inventory slots 0..19, or CONTAINER_SLOT + k, slot k of the
   * container placed next to the body in dir. It spends no movement budget.
   */
  moveItem(from: number, to: number, count: number, dir: Dir = 0): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.MoveItem, dir, target: { x: 0, y: 0 }, item: { from, to, count } });
  }

  /**
   * craft crafts at the crafting station placed on the square next to the
   * body in dir (an item kind whose `station` is not ""): the server
   * matches the station container's whole contents, as a multiset of kinds
   * and counts, against that station's recipes; on a match it consumes
   * them and puts the recipe's outputs in the same container, and the
   * character learns the recipe (a recipes event). The container comes
   * again in a container event. No match is refused NO_RECIPE and changes
   * nothing; the rest as moving items into the container (NOTHING_THERE
   * where no station stands, NOT_BUILDER, BUDGET, PORTAL_IN_PROGRESS...).
   * It spends the movement budget like a step, and does not turn the body.
   */
  craft(dir: Dir): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Craft, dir, target: { x: 0, y: 0 } });
  }

  /**
   * use uses the item of inventory slot `slot`: a blueprint (a kind with
   * ItemFlag.Teaches) teaches its recipe (a recipes event follows) and is
   * consumed, unless the content keeps it. Refused KNOWN when the
   * character knows the recipe already (nothing changes), NOT_ALLOWED for
   * an item that is no blueprint, NOTHING_THERE for an empty slot, BUDGET
   * when the minute's changes are spent. It spends no movement budget.
   */
  use(slot: number): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Use, dir: 0, target: { x: 0, y: 0 }, item: { from: slot, to: 0, count: 0 } });
  }

  /**
   * tradeWith opens a trade with the player whose body stands on the
   * square next to the body in dir: both are sent a trade event (rev 0,
   * nothing offered). Refused NOTHING_THERE (no player there), NOT_ALLOWED
   * (that player is away), TRADING (this player trades already), BUSY
   * (the other does), PORTAL_IN_PROGRESS, BUDGET. While a trade is open,
   * the player's other item intents are refused TRADING.
   */
  tradeWith(dir: Dir): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Trade, dir, target: { x: 0, y: 0 } });
  }

  /**
   * offer puts count items of inventory slot `slot` on the player's side
   * of its open trade (count 0 takes the slot off the offer). Every change
   * drops the player's own confirmation; a change after the other player
   * confirmed voids the trade (TRADE_CHANGED). Refused NOT_TRADING,
   * NOTHING_THERE (an empty slot), MALFORMED (a count above the stack's,
   * a ninth slot).
   */
  offer(slot: number, count: number): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Offer, dir: 0, target: { x: 0, y: 0 }, item: { from: slot, to: 0, count } });
  }

  /**
   * confirmTrade confirms the open trade as the last trade event showed it
   * (its rev): a newer revision on the server is refused STALE, so nothing
   * the player has not seen is confirmed. When both players have
   * confirmed one revision the items change hands in one tick (an
   * inventory event, then a trade event of status Done), or the trade ends
   * void INVENTORY_FULL when either has no room. With no trade known it
   * names revision 0, which the server answers NOT_TRADING (or
   * NOTHING_THERE: a revision 0 offers nothing).
   */
  confirmTrade(): Promise<IntentOutcome> {
    const rev = this.openTrade?.rev ?? 0;
    return this.intent({ kind: IntentKind.Confirm, dir: 0, target: { x: 0, y: 0 }, item: { from: 0, to: 0, count: rev & 0xffff } });
  }

  /** cancelTrade calls the open trade off: both are sent a trade event, void TRADE_CANCELLED. Refused NOT_TRADING without one. */
  cancelTrade(): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Cancel, dir: 0, target: { x: 0, y: 0 } });
  }

  /**
   * trade is the player's open trade as the last trade event showed it
   * (from its own side: `mine` is what this player offers), or null when
   * none is open. A trade still open when the session loses its binding
   * (a dropped connection, a portal, a takeover, leaving) ended with it on
   * the server: the session says so with a trade event of status Void and
   * reason TRADE_LEFT, TRADE_PORTAL or TRADE_TAKEN_OVER, unless the
   * server's own came first.
   */
  get trade(): Trade | null {
    return this.openTrade;
  }

  /**
   * price sets the price of slot k (0-based) of the player's stall on the
   * square next to the body in dir: count items of the item kind `kind`
   * for its whole stack (count 0 takes the slot off sale). Refused
   * NOT_OWNER (a stall of another), NOTHING_THERE (no stall there),
   * MALFORMED (no such kind, or a count above its stack), BUDGET. The new
   * prices come in a container event.
   */
  price(dir: Dir, k: number, kind: number, count: number): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Price, dir, target: { x: kind, y: count }, item: { from: CONTAINER_SLOT + k, to: 0, count: 0 } });
  }

  /**
   * buy buys the whole stack of slot k (0-based) of the stall on the
   * square next to the body in dir (as predicted), at its price. The
   * intent says what the player saw, from the last container event of
   * that square: the stack's count and the price; a stall that no longer
   * matches is refused STALE and nothing changes hands (open it again, or
   * wait for its next container event). Refused NOT_FOR_SALE (no price, or
   * nothing there; also where no container was seen), NOT_ALLOWED (the
   * player's own stall), CANT_PAY, INVENTORY_FULL, BUDGET. On a purchase
   * the price lies in slot k (the owner's till) and the stack comes into
   * the inventory, in one tick; the owner need not be online.
   */
  buy(dir: Dir, k: number): Promise<IntentOutcome> {
    const p = this.predictor.predicted ?? this.predictor.authoritative;
    const [dx, dy] = DIR_DELTA[dir & 7] as readonly [number, number];
    const seen = p === null ? undefined : this.containerAt(p.x + dx, p.y + dy);
    const count = seen?.slots[k]?.count ?? 0;
    const ask = seen?.prices[k];
    return this.intent({
      kind: IntentKind.Buy,
      dir,
      target: { x: ask?.kind ?? 0, y: ask?.count ?? 0 },
      item: { from: CONTAINER_SLOT + k, to: 0, count },
    });
  }

  /**
   * containerAt is the container placed on (x, y) as the last container
   * event of that square showed it (this Area's; a new Area forgets them),
   * or undefined when none came. It may be stale: the server sends a
   * container's contents to those who open it or stand next to it.
   */
  containerAt(x: number, y: number): ContainerState | undefined {
    return this.boxes.get(`${x},${y}`);
  }

  /**
   * recipes are the recipes the character knows, sorted by code (empty
   * until the first bind), each message replacing them whole. The server
   * sends no other: what a character has neither made nor learned, this
   * side cannot know.
   */
  get recipes(): readonly Recipe[] {
    return this.known;
  }

  /** inventory is what the character carries, slot by slot (empty until the first bind). */
  get inventory(): readonly Stack[] {
    return this.slots;
  }

  /**
   * stash is what waits for the character outside this Area (from the
   * inventory message): what the Area's rules did not let it carry in,
   * given back on a bind where they do. Empty until the first bind.
   */
  get stash(): readonly Stack[] {
    return this.stashed;
  }

  /** itemKinds are the realm's item kinds by code (from area_info). */
  get itemKinds(): ReadonlyMap<number, ItemKind> {
    return this.kinds;
  }

  /**
   * plots are where this Area lets players build when its rules allow it
   * only there (a village; elsewhere place and take are refused OFF_PLOT),
   * from area_info; empty where they do not.
   */
  get plots(): readonly Plot[] {
    return this.plotList;
  }

  /**
   * action acts on the square next to the body in dir, and turns the body
   * to face it (the turn is predicted; what the action does is not): it
   * opens or closes the door there, or attacks the body there (a
   * creature; a player where the Area's rules allow PvP, else refused
   * NOT_ALLOWED). Nothing there to act on is refused NOTHING_THERE. It
   * spends the movement budget like a step, and is answered like any
   * intent. A door's new state comes in its cell's next static.
   */
  action(dir: Dir): Promise<IntentOutcome> {
    return this.intent({ kind: IntentKind.Action, dir, target: { x: 0, y: 0 } });
  }

  /** intent sends any intent; see {@link IntentRequest}. */
  intent(req: IntentRequest): Promise<IntentOutcome> {
    return new Promise((resolve) => {
      const o: Outgoing = { req, resolve };
      if (this.st === "ended") {
        resolve({ status: "voided", seq: null });
        return;
      }
      if ((this.st === "bound" || this.st === "ready") && this.ws !== null) {
        this.send(o);
        return;
      }
      const limit = this.view.info?.queueLen ?? 8;
      if (this.outbox.length >= limit) {
        this.events.emit("intentRefused", { seq: null, intent: req, code: Code.TOO_FAST, name: "TOO_FAST" });
        resolve({ status: "refused", seq: null, code: Code.TOO_FAST });
        return;
      }
      this.outbox.push(o);
    });
  }

  // ---- joining and connecting ----

  private setState(s: SessionState, detail = ""): void {
    if (s === this.st) return;
    const previous = this.st;
    this.st = s;
    this.events.emit("state", { state: s, previous, detail });
  }

  private clearTimer(): void {
    if (this.timer !== null) {
      this.clock.clearTimeout(this.timer);
      this.timer = null;
    }
    this.clearBindTimer();
  }

  /**
   * watchSilence drops the bound connection once it has brought nothing
   * for silenceMs (a host keeps a session alive with a snapshot a second,
   * so it is gone), and resumes or joins again as for any drop.
   */
  private watchSilence(): void {
    this.clearSilence();
    if (this.silenceMs <= 0) return;
    const gen = this.gen;
    const check = (): void => {
      this.silenceTimer = null;
      if (gen !== this.gen || this.ws === null) return;
      const quiet = this.clock.now() - this.heardAt;
      if (quiet < this.silenceMs) {
        this.silenceTimer = this.clock.setTimeout(check, this.silenceMs - quiet);
        return;
      }
      this.log.warn("nothing heard from the host in time; dropping the connection", { ms: quiet });
      this.detach(4000, "silent");
      this.onClose(4003, "silent", true);
    };
    this.silenceTimer = this.clock.setTimeout(check, this.silenceMs);
  }

  private clearSilence(): void {
    if (this.silenceTimer !== null) {
      this.clock.clearTimeout(this.silenceTimer);
      this.silenceTimer = null;
    }
  }

  private clearBindTimer(): void {
    if (this.bindTimer !== null) {
      this.clock.clearTimeout(this.bindTimer);
      this.bindTimer = null;
    }
  }

  /** requestJoin asks the director for a grant to area, then says hello with it. */
  private async requestJoin(area: number): Promise<void> {
    const gen = ++this.gen;
    this.targetArea = area;
    this.setState("joining", `joining Area ${area}`);
    let j: JoinAnswer;
    try {
      j = await this.director.join(area);
    } catch (e) {
      if (gen !== this.gen) return;
      this.joinFailed(e);
      return;
    }
    if (gen !== this.gen) {
      this.log.debug("a stale join answer dropped", { area, joinId: j.joinId.toString() });
      return;
    }
    // A grant is a new session: a resume still in hand (kept while the
    // director was asked instead of a host that did not answer) is given
    // up, and what it had in flight was not applied as far as anyone
    // will say.
    if (this.resumeToken !== null) this.endSeqSpace();
    this.targetArea = j.area;
    this.joinId = j.joinId;
    this.wsUrl = j.wsUrl;
    this.connect({ type: "hello", grant: j.grant, joinId: j.joinId, versions: [PROTOCOL_VERSION] });
  }

  private joinFailed(e: unknown): void {
    const err = e instanceof ApiError ? e : new ApiError(0, "NETWORK", String(e));
    // No answer at all (the director or the network is down, a realm
    // being restarted) is retried without end; answered refusals only up
    // to maxJoinAttempts in a row.
    const unanswered = err.status === 0;
    const willRetry = err.retryable && (unanswered || this.refusals + 1 < this.maxJoinAttempts);
    this.events.emit("joinRefused", { status: err.status, code: err.code, message: err.message, willRetry });
    if (willRetry) {
      // The director does not answer either: maybe this side's network is
      // down rather than the host, so a resume still in its grace is tried
      // again next.
      const kind = unanswered && this.resumable() ? "resume" : "join";
      if (kind === "join" && this.resumeToken !== null) this.endSeqSpace();
      this.retry(kind, unanswered ? "the realm does not answer" : `${err.code}: ${err.message}`, {
        atLeastMs: err.retryAfterMs ?? 0,
        refusal: !unanswered,
      });
      return;
    }
    const reason: EndReason =
      err.code === "REALM_CLOSED" || err.code === "NEW_PLAYERS_CLOSED"
        ? "realm_closed"
        : err.code === "REALM_FULL"
          ? "realm_full"
          : err.code === "NO_SUCH_AREA"
            ? "no_such_area"
            : err.status === 401
              ? "unauthorized"
              : "gave_up";
    this.end(reason, err.message);
  }

  /** rejoin joins again through the director, the Area the character is in if the director says. */
  private async rejoin(): Promise<void> {
    const gen = ++this.gen;
    this.setState("joining", "joining again");
    let area = this.targetArea;
    try {
      const me = await this.director.me();
      if (me.character !== undefined) area = me.character.area;
    } catch (e) {
      if (gen !== this.gen) return;
      if (e instanceof ApiError && e.status === 401) {
        this.end("unauthorized", e.message);
        return;
      }
      this.log.debug("GET /v1/me failed before a rejoin; joining the same Area", { err: String(e) });
    }
    if (gen !== this.gen) return;
    await this.requestJoin(area);
  }

  /** connect opens a socket to the current ws_url and says first (hello or resume) once it is open. */
  private connect(first: ClientMessage): void {
    this.detach();
    const gen = ++this.gen;
    this.sessionEnded = false;
    this.lastSnapshot = null; // a short snapshot counts from one of its own connection
    this.resuming = first.type === "resume";
    this.nextTry = null;
    let opened = false;
    let ws: GameSocket;
    try {
      ws = this.socketFactory(this.wsUrl);
    } catch (e) {
      this.log.warn("cannot open the game socket", { url: this.wsUrl, err: String(e) });
      this.onClose(4002, "the socket did not open", false);
      return;
    }
    this.ws = ws;
    ws.binaryType = "arraybuffer";
    this.setState("connecting", this.resuming ? "resuming" : "connecting");
    // A host that never opens or never answers must not hold the session:
    // past the timeout the socket is dropped like any dead connection.
    this.clearBindTimer();
    this.bindTimer = this.clock.setTimeout(() => {
      this.bindTimer = null;
      if (gen !== this.gen) return;
      this.log.warn("no answer to hello or resume in time; dropping the connection", { ms: this.bindTimeoutMs });
      this.detach();
      this.onClose(4001, "bind timeout", opened);
    }, this.bindTimeoutMs);
    ws.onopen = () => {
      if (gen !== this.gen) return;
      opened = true;
      this.setState("binding");
      this.helloSentAt = this.clock.now();
      this.sendRaw(first);
    };
    ws.onmessage = (ev: MessageEvent) => {
      if (gen !== this.gen) return;
      this.heardAt = this.clock.now();
      this.onFrame(ev.data);
    };
    ws.onclose = (ev: CloseEvent) => {
      if (gen !== this.gen) return;
      this.onClose(ev.code, ev.reason, opened);
    };
    ws.onerror = () => {};
  }

  /** detach forgets the current socket: its events are ignored from now on; it is closed (code 1000 unless told). */
  private detach(code = 1000, reason?: string): void {
    this.clearBindTimer();
    this.clearSilence();
    const ws = this.ws;
    this.ws = null;
    if (ws === null) return;
    ws.onopen = null;
    ws.onmessage = null;
    ws.onclose = null;
    ws.onerror = null;
    try {
      ws.close(code, reason);
    } catch {
      // Already closing.
    }
  }

  /** resumable reports whether a resume may still find the body: a token, and the grace not over. */
  private resumable(): boolean {
    return this.resumeToken !== null && this.resumeDeadline > 0 && this.clock.now() < this.resumeDeadline;
  }

  /**
   * onClose takes the end of the current socket. opened says whether it
   * ever opened: one that did not was refused (or never answered) at the
   * transport, before any word of the protocol, so nothing listens at
   * that address any more. For a resume that means the host is gone (it
   * crashed, or stopped): the session asks the director at once, which
   * knows where the Area lives now, rather than knocking on a dead
   * address until the grace is spent.
   */
  private onClose(code: number, reason: string, opened: boolean): void {
    this.ws = null;
    if (this.st === "ended") return;
    if (this.sessionEnded) return; // the next step is already under way
    this.log.info("the game connection dropped", { code, reason, state: this.st, opened });
    if (this.resumeToken !== null && this.view.info !== null) {
      if (this.resumeDeadline === 0) {
        this.resumeDeadline = this.clock.now() + this.view.info.resumeGraceMs - this.graceMarginMs;
      }
      if (this.resuming && !opened) {
        this.log.info("the host does not take connections; joining through the director", { url: this.wsUrl });
        this.retry("join", "the host does not answer", { now: true, keepResume: true });
        return;
      }
      this.retry("resume", "the connection dropped");
      return;
    }
    this.endSeqSpace();
    // A grant's host that refuses the connection is a refusal the director
    // led to (it may not know yet that the host is gone): counted.
    this.retry("join", opened ? "the connection dropped" : "the host does not answer", { refusal: !opened });
  }

  /**
   * retry schedules the next attempt after a backoff with jitter (or at
   * once, with now): a resume while the grace lasts, else a join through
   * the director. A join ends the resume's seq space unless keepResume
   * (the director is asked while the resume is still in hand: the join's
   * grant ends it, an unanswered director falls back to it).
   */
  private retry(kind: "resume" | "join", why: string, opts: RetryOptions = {}): void {
    this.clearTimer();
    this.gen++; // nothing of the attempt before may act from now on
    this.attempts++;
    if (opts.refusal === true && ++this.refusals > this.maxJoinAttempts) {
      this.end("gave_up", `gave up after ${this.maxJoinAttempts} attempts: ${why}`);
      return;
    }
    const now = this.clock.now();
    let delay = opts.now === true ? 0 : Math.max(backoffDelay(this.backoff, this.attempts, this.random()), opts.atLeastMs ?? 0);
    if (kind === "resume" && (this.resumeToken === null || now + delay >= this.resumeDeadline)) {
      this.log.info("the resume grace is over: joining again", { why });
      kind = "join";
    }
    if (kind === "join" && opts.keepResume !== true && this.resumeToken !== null) this.endSeqSpace();
    this.nextTry = { kind, at: now + delay, why };
    this.setState("reconnecting", `${why}; ${kind === "resume" ? "resuming" : "joining again"} in ${Math.round(delay)} ms`);
    if (delay === 0) {
      this.attempt(kind);
      return;
    }
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      this.attempt(kind);
    }, delay);
  }

  /** attempt makes the attempt retry scheduled. */
  private attempt(kind: "resume" | "join"): void {
    this.nextTry = null;
    if (kind === "resume") {
      this.connect({ type: "resume", token: this.resumeToken ?? "", joinId: this.joinId });
    } else if (this.wasBound) {
      void this.rejoin();
    } else {
      void this.requestJoin(this.targetArea);
    }
  }

  /**
   * endSeqSpace ends the current session's seqs: every intent without an
   * answer was not applied (the last snapshot's ack_seq settled the rest).
   */
  private endSeqSpace(): void {
    this.resumeToken = null;
    this.resumeDeadline = 0;
    this.resumeTick = -1;
    this.resentSeqs.clear();
    this.ownHp = -1;
    for (const p of this.predictor.clear()) {
      const o = this.outgoing.get(p.seq);
      this.outgoing.delete(p.seq);
      if (o !== undefined) this.settle(o, p.seq, { status: "voided", seq: p.seq });
    }
    this.outgoing.clear();
  }

  /**
   * farewell is the one place a session says goodbye to its host, best
   * effort, on the socket as it is, before {@link Session.leave} closes
   * it (close code 1000, reason "leave"): while bound it sends `leave{}`,
   * so the body leaves the Area at once (its state stored) rather than
   * staying away for the resume grace. The close right after it does not
   * wait for `left{}`: a browser's WebSocket sends what it was given
   * before its close frame.
   */
  private farewell(): void {
    const ws = this.ws;
    if (ws === null) return;
    if (this.st === "bound" || this.st === "ready") this.sendRaw({ type: "leave" });
    this.detach(1000, "leave");
  }

  private end(reason: EndReason, message: string): void {
    if (this.st === "ended") return;
    this.clearTimer();
    this.gen++;
    this.endReason = reason;
    this.detach();
    this.endTrade(reason === "taken_over" ? Code.TRADE_TAKEN_OVER : Code.TRADE_LEFT);
    this.endSeqSpace();
    for (const o of this.outbox.splice(0)) this.settle(o, null, { status: "voided", seq: null });
    this.setState("ended", message);
    this.events.emit("ended", { reason, message });
  }

  /**
   * endTrade ends the open trade, if any, as the server ended it when this
   * side lost its binding (reason: why, as the server says it): a trade
   * event of status Void, unless the server's own came first.
   */
  private endTrade(reason: number): void {
    const t = this.openTrade;
    if (t === null) return;
    this.openTrade = null;
    this.events.emit("trade", { ...t, confirmed: 0, status: TradeStatus.Void, reason });
  }

  // ---- sending ----

  private sendRaw(m: ClientMessage): void {
    try {
      this.ws?.send(encodeMessage(m));
    } catch (e) {
      // A socket that closes under us: the close event handles it.
      this.log.warn("send failed", { type: m.type, err: String(e) });
    }
  }

  /**
   * useEngine gives the session the engine (when it was started before the
   * engine loaded): it predicts from now on, on a replica of the Area it
   * plays built from the area_info and the maps it was told. A session
   * given one already keeps it.
   */
  useEngine(engine: Engine): void {
    if (this.engine !== null) return;
    this.engine = engine;
    if (this.infoFrame !== null) this.buildReplica(this.infoFrame);
    this.predictor.replay();
  }

  /**
   * tickNow is the Area's tick now, as far as the client can tell: the
   * last snapshot's tick counted on at `tick_hz` since it came. A server
   * sends no snapshot in a round with nothing new for the player (at least
   * one a second), so the last snapshot's tick ({@link AreaView.tick}) may
   * be up to a second old: count down to a tick (`container.ready`)
   * against this.
   */
  tickNow(): number {
    const hz = this.view.info?.tickHz ?? 0;
    if (hz === 0 || this.snapshotAt < 0) return this.view.tick;
    return this.view.tick + Math.floor(((this.clock.now() - this.snapshotAt) * hz) / 1000);
  }

  /** predicting reports whether the session predicts: it has the engine, and the engine a replica of the Area. */
  get predicting(): boolean {
    return this.predictor.replica !== null;
  }

  /**
   * walkable reports whether the map, as the engine's replica of it knows
   * it (the server's own rule), lets a body stand on (x, y): a square of
   * the grid, of a floor bodies stand on, with no object that stops
   * bodies. Bodies are not counted (see {@link AreaView.entityAt}).
   * Without the engine, or on a square whose cell's map has not come, it
   * answers true: the server decides.
   */
  walkable(x: number, y: number): boolean {
    const r = this.predictor.replica;
    if (r === null) return true;
    try {
      return r.walkable(x, y);
    } catch {
      return true;
    }
  }

  /** others lists the squares of every body in view but the player's own, as x, y pairs (what a prediction steps around). */
  private others(): Int32Array {
    const out = new Int32Array(2 * this.view.entities.size);
    let n = 0;
    for (const e of this.view.entities.values()) {
      if (e.id === this.ownEntity) continue;
      out[n++] = e.x;
      out[n++] = e.y;
    }
    return out.subarray(0, n);
  }

  private send(o: Outgoing): void {
    this.seq = nextSeq(this.seq);
    const p: PendingIntent = { seq: this.seq, ...o.req, sentAt: this.clock.now(), resent: false, stale: false };
    this.outgoing.set(p.seq, o);
    this.predictor.sent(p);
    this.sendRaw({ type: "intent", seq: p.seq, kind: p.kind, dir: p.dir, target: p.target, item: p.item ?? NO_ITEM });
  }

  private settle(o: Outgoing, seq: number | null, outcome: IntentOutcome): void {
    o.resolve(outcome);
    switch (outcome.status) {
      case "applied":
        this.events.emit("intentApplied", { seq: outcome.seq, intent: o.req });
        return;
      case "refused":
        this.events.emit("intentRefused", { seq, intent: o.req, code: outcome.code, name: codeName(outcome.code) });
        return;
      case "unknown":
        this.events.emit("intentUnknown", { seq: outcome.seq, intent: o.req });
        return;
      case "voided":
        this.events.emit("intentVoided", { seq, intent: o.req });
    }
  }

  private sampleRtt(ms: number): void {
    this.rtt = this.rtt === null ? ms : this.rtt + RTT_ALPHA * (ms - this.rtt);
    this.events.emit("rtt", { sampleMs: ms, smoothedMs: this.rtt });
  }

  // ---- receiving ----

  private drop(reason: string, fields: Record<string, unknown> = {}): void {
    this.dropCount++;
    this.log.warn(`message dropped: ${reason}`, fields);
    this.events.emit("dropped", { reason });
  }

  private onFrame(data: unknown): void {
    if (!(data instanceof ArrayBuffer)) {
      this.drop("a text frame");
      return;
    }
    const frame = new Uint8Array(data);
    let m: Message;
    try {
      m = decodeMessage(frame);
    } catch (e) {
      this.drop(e instanceof MalformedError ? e.message : String(e), { bytes: data.byteLength });
      return;
    }
    try {
      this.handle(m, frame);
    } catch (e) {
      // A bug of ours must not take the page down with it either.
      this.log.error("handling a message failed", { type: m.type, err: String(e) });
    }
  }

  /** handle acts on one message of the server; frame is its bytes as received (the engine's replica takes area_info and static so). */
  private handle(m: Message, frame: Uint8Array): void {
    switch (m.type) {
      case "hello_ack":
        this.onHelloAck(m.joinId, m.entity, m.tick, m.area, m.resumeToken);
        return;
      case "inventory":
        this.slots = m.slots;
        this.stashed = m.stash;
        this.events.emit("inventory", { slots: m.slots, stash: m.stash });
        return;
      case "container": {
        const c: ContainerState = {
          x: m.x,
          y: m.y,
          slots: m.slots,
          prices: m.prices,
          flags: m.flags,
          owned: (m.flags & ContainerFlag.Owned) !== 0,
          ready: m.ready,
        };
        this.boxes.set(`${m.x},${m.y}`, c);
        this.events.emit("container", c);
        return;
      }
      case "trade":
        this.openTrade = m.status === TradeStatus.Open ? m : null;
        this.events.emit("trade", m);
        return;
      case "recipes":
        this.known = m.known;
        this.events.emit("recipes", { known: m.known });
        return;
      case "area_info":
        this.kinds = new Map(m.items.map((k) => [k.code, k]));
        this.plotList = m.plots;
        this.view.applyAreaInfo(m);
        this.infoFrame = frame;
        this.buildReplica(frame);
        this.interpolator.durationMs = m.stepMs;
        this.events.emit("areaInfo", m);
        return;
      case "static":
        try {
          this.view.applyStatic(m);
        } catch (e) {
          this.drop(String(e));
          return;
        }
        this.staticFrames.set(m.cell, frame);
        this.layStatic(frame);
        this.events.emit("static", { cell: m.cell });
        return;
      case "presence":
        this.view.applyPresence(m);
        this.events.emit("presence", this.view.players);
        return;
      case "snapshot":
        this.lastSnapshot = { tick: m.tick, ackSeq: m.ackSeq };
        this.onSnapshot(m.tick, m.ackSeq, m.flags, m.records);
        return;
      case "short_snapshot":
        this.onShortSnapshot(m);
        return;
      case "intent_result":
        this.onRefusal(m.seq, m.code);
        return;
      case "error":
        this.onError(m.code, m.refSeq, m.joinId, m.detail);
        return;
      case "rehello":
        this.sessionEnded = true;
        this.endSeqSpace();
        if (m.code === Code.REALM_CLOSED) {
          this.end("realm_closed", "the realm closed");
          return;
        }
        this.attempts = 0;
        this.refusals = 0;
        this.retry("join", `the session ended (${codeName(m.code)})`);
        return;
      case "area_closing":
        this.events.emit("areaClosing", { reason: m.reason, graceMs: m.graceMs });
        return;
      case "taken_over":
        this.sessionEnded = true;
        this.endTrade(Code.TRADE_TAKEN_OVER);
        this.events.emit("takenOver", { message: "another login took this session over" });
        this.end("taken_over", "another login took this session over");
        return;
      case "left": // answers our leave; the socket is closed already
        this.sessionEnded = true;
        return;
      case "portal_blocked":
        this.events.emit("portalBlocked", { reason: m.reason });
        return;
      case "portal_transfer_rejected":
        this.events.emit("portalRejected", { reason: m.reason });
        return;
      case "portal_moved": {
        this.sessionEnded = true;
        const seen = this.predictor.authoritative;
        const at = seen === null ? null : { x: seen.x, y: seen.y };
        this.endSeqSpace();
        const from = this.targetArea;
        this.endTrade(Code.TRADE_PORTAL);
        this.targetArea = m.area;
        this.joinId = m.joinId;
        this.wsUrl = m.wsUrl;
        this.attempts = 0;
        this.refusals = 0;
        this.events.emit("portalMoved", { from, to: m.area, at });
        this.connect({ type: "hello", grant: m.grant, joinId: m.joinId, versions: [PROTOCOL_VERSION] });
        return;
      }
      case "hello":
      case "resume":
      case "intent":
        this.drop(`a client message (${m.type}) from the server`);
        return;
    }
  }

  /**
   * buildReplica builds the engine's replica of the Area an area_info
   * frame describes, laid with the maps the view keeps of it (none in a
   * new Area): the predictions run on it from the next one on. Without
   * an engine, or when it fails, nothing is predicted.
   */
  private buildReplica(areaInfo: Uint8Array): void {
    this.predictor.replica = null;
    for (const cell of this.staticFrames.keys()) {
      if (!this.view.maps.has(cell)) this.staticFrames.delete(cell);
    }
    if (this.engine === null) return;
    let r: EngineReplica;
    try {
      r = this.engine.replica(areaInfo);
    } catch (e) {
      this.log.error("the engine could not build the Area; predicting nothing", { err: String(e) });
      return;
    }
    this.predictor.replica = r;
    for (const frame of this.staticFrames.values()) this.layStatic(frame);
  }

  /** layStatic lays a static frame on the replica; one that fails drops the replica (and the prediction with it). */
  private layStatic(frame: Uint8Array): void {
    const r = this.predictor.replica;
    if (r === null) return;
    try {
      r.static(frame);
    } catch (e) {
      this.log.error("the engine could not lay a cell's map; predicting nothing", { err: String(e) });
      this.predictor.replica = null;
      this.predictor.replay();
    }
  }

  private onHelloAck(joinId: bigint, entity: number, tick: number, area: number, token: string): void {
    if (this.st !== "binding") {
      this.drop(`hello_ack in state ${this.st}`);
      return;
    }
    if (joinId !== this.joinId) {
      this.drop("hello_ack of another join", { joinId: joinId.toString(), want: this.joinId.toString() });
      return;
    }
    this.clearBindTimer();
    this.watchSilence();
    this.sampleRtt(this.clock.now() - this.helloSentAt);
    const resumed = this.resuming;
    this.resumeToken = token;
    this.resumeDeadline = 0;
    this.ownEntity = entity;
    this.wasBound = true;
    if (area !== this.view.info?.area) {
      this.view.reset();
      this.interpolator.clear();
      this.boxes.clear();
      this.staticFrames.clear();
      this.predictor.replica = null; // the new Area's area_info builds its own
    }
    // A trade does not outlive its players' connections: the server voided
    // it as this one dropped (and what it said of it was lost with it).
    this.endTrade(Code.TRADE_LEFT);
    this.targetArea = area;
    if (resumed) {
      // The ones the server had are refused STALE_SEQ (their first copy's
      // answer counts), the ones lost with the connection are applied now.
      this.resentSeqs.clear();
      this.resumeTick = this.predictor.outstanding.length > 0 ? tick : -1;
      for (const p of this.predictor.outstanding) {
        p.resent = true;
        p.stale = false;
        this.resentSeqs.add(p.seq);
        this.sendRaw({ type: "intent", seq: p.seq, kind: p.kind, dir: p.dir, target: p.target, item: p.item ?? NO_ITEM });
      }
    } else {
      this.seq = 0;
    }
    this.setState("bound");
    for (const o of this.outbox.splice(0)) this.send(o);
  }

  /**
   * onShortSnapshot expands a short snapshot against the last snapshot of
   * the connection, then takes it as that snapshot. One with no snapshot
   * before it on the connection is malformed: dropped, as any.
   */
  private onShortSnapshot(m: ShortSnapshot): void {
    const last = this.lastSnapshot;
    if (last === null) {
      this.drop("a short snapshot with no snapshot before it on this connection");
      return;
    }
    let s: Snapshot;
    try {
      s = expandShortSnapshot(last, m);
    } catch (e) {
      this.drop(e instanceof Error ? e.message : String(e));
      return;
    }
    this.lastSnapshot = { tick: s.tick, ackSeq: s.ackSeq };
    this.onSnapshot(s.tick, s.ackSeq, s.flags, s.records);
  }

  private onSnapshot(tick: number, ackSeq: number, flags: number, records: Uint8Array): void {
    if (this.st !== "bound" && this.st !== "ready") {
      this.drop(`snapshot in state ${this.st}`);
      return;
    }
    const before = this.inferCombat ? new Map(this.view.entities) : null;
    try {
      this.view.applySnapshot({ type: "snapshot", tick, ackSeq, flags, records });
    } catch (e) {
      if (e instanceof MalformedError) {
        // Records that do not decode changed nothing: drop the message.
        this.drop(e.message);
        return;
      }
      if (e instanceof ViewError) {
        // The view is not to be trusted: a new connection starts it over
        // (the resume's first snapshot is a reset).
        this.log.error("a snapshot broke the view; reconnecting", { err: e.message });
        this.ws?.close(4000, "view broken");
        return;
      }
      throw e;
    }
    const now = this.clock.now();
    this.snapshotAt = now;
    const actions: Dir[] = [];
    for (const p of this.predictor.acked(ackSeq)) {
      const o = this.outgoing.get(p.seq);
      this.outgoing.delete(p.seq);
      if (p.kind === IntentKind.Action) actions.push(p.dir);
      if (!p.resent) this.sampleRtt(now - p.sentAt);
      // An intent in flight at the drop, at or before the ack: its answer
      // may have been a refusal sent on the lost connection.
      const outcome: IntentOutcome = p.resent ? { status: "unknown", seq: p.seq } : { status: "applied", seq: p.seq };
      if (o !== undefined) this.settle(o, p.seq, outcome);
    }
    this.settleLostAnswers(tick);
    const own = this.view.entities.get(this.ownEntity);
    const pose = this.predictor.authoritative;
    if (before !== null && (flags & SNAPSHOT_RESET) === 0) {
      // The squares the own actions applied in this snapshot aimed at:
      // an action does not move the body, so from where it stands now.
      const struck = own === undefined ? [] : actions.map((d) => {
        const [dx, dy] = DIR_DELTA[d & 7] as readonly [number, number];
        return { x: own.x + dx, y: own.y + dy };
      });
      const c = inferCombat(before, this.view, this.view.gone, this.ownEntity, struck);
      for (const h of c.hits) this.events.emit("hit", h);
      for (const d of c.deaths) this.events.emit("death", d);
    }
    this.noticeRespawn(pose, own);
    this.predictor.reconcile(own === undefined ? null : { x: own.x, y: own.y, facing: own.facing });
    for (const e of this.view.entities.values()) {
      if (e.id !== this.ownEntity) this.interpolator.observe(e.id, e.x, e.y, now);
    }
    this.interpolator.retain(this.view.entities);
    if (this.st === "bound") {
      this.attempts = 0;
      this.refusals = 0;
      this.setState("ready");
      this.events.emit("ready", { area: this.targetArea, entity: this.ownEntity, resumed: this.resuming });
    }
    this.events.emit("snapshot", { tick, ackSeq });
  }

  /**
   * settleLostAnswers settles the resent intents whose first copy the
   * server had (their resent copy refused STALE_SEQ) and that are still
   * without an answer once the server has surely answered every first
   * copy: a queue of queue_len intents drains within queue_len step
   * periods, so past that (and a step period more), counted in the
   * Area's ticks from the resume's hello_ack, the answer was a refusal
   * sent on the lost connection. The snapshot's view is the truth it
   * made; nothing of it is replayed any more.
   */
  private settleLostAnswers(tick: number): void {
    const info = this.view.info;
    if (this.resumeTick < 0 || info === null) return;
    const doubtTicks = Math.ceil(((info.queueLen + 1) * info.stepMs * info.tickHz) / 1000);
    if (tick - this.resumeTick < doubtTicks) return;
    this.resumeTick = -1;
    for (const p of [...this.predictor.outstanding]) {
      if (!p.stale) continue;
      this.predictor.take(p.seq);
      const o = this.outgoing.get(p.seq);
      this.outgoing.delete(p.seq);
      if (o !== undefined) this.settle(o, p.seq, { status: "unknown", seq: p.seq });
    }
  }

  /**
   * noticeRespawn tells a death from the snapshots, which have no word
   * for it: a player at 0 hp comes back at a spawn point with full
   * health, in the same tick, and nothing else gives a player health
   * back, so the body's hp rising to full from below is a death and a
   * return. (A blow that kills from full health shows nothing: the body
   * is only seen back where it appears.)
   */
  private noticeRespawn(before: Pose | null, own: EntityState | undefined): void {
    const last = this.ownHp;
    this.ownHp = own === undefined ? -1 : own.hp;
    const full = this.view.info?.playerHp ?? 0;
    if (own === undefined || before === null || last < 0 || full === 0 || own.hp !== full || last >= full) return;
    this.events.emit("respawned", { from: { x: before.x, y: before.y }, at: { x: own.x, y: own.y }, hp: own.hp });
  }

  private onRefusal(seq: number, code: number): void {
    const p = this.predictor.find(seq);
    if (p === undefined) {
      if (code === Code.STALE_SEQ && this.resentSeqs.has(seq)) return; // a resent copy of one settled meanwhile
      this.drop(`an answer for seq ${seq}, which is not pending`, { code: codeName(code) });
      return;
    }
    if (code === Code.STALE_SEQ && p.resent && !p.stale) {
      // The server had the first copy: its answer is the one that counts
      // (it comes on this connection if the copy was still queued, and
      // was lost if it went out on the dropped one).
      p.stale = true;
      return;
    }
    this.predictor.take(seq);
    this.predictor.replay();
    if (!p.resent) this.sampleRtt(this.clock.now() - p.sentAt);
    const o = this.outgoing.get(seq);
    this.outgoing.delete(seq);
    if (o !== undefined) this.settle(o, seq, { status: "refused", seq, code });
  }

  private onError(code: number, refSeq: number, joinId: bigint, detail: string): void {
    if (refSeq !== 0) {
      // NOT_HELLO or REHELLO for an intent: it was not applied.
      this.onRefusal(refSeq, code);
      return;
    }
    if (joinId !== 0n && joinId !== this.joinId) {
      this.drop("an error of another join", { code: codeName(code), joinId: joinId.toString() });
      return;
    }
    if (this.st === "binding" && joinId === this.joinId) {
      this.joinRefusedByHost(code, detail);
      return;
    }
    this.log.warn("server error", { code: codeName(code), detail });
    this.events.emit("serverError", { code, name: codeName(code), detail });
  }

  /** joinRefusedByHost handles the host's refusal of a hello or resume. */
  private joinRefusedByHost(code: number, detail: string): void {
    this.log.info("the host refused the join", { code: codeName(code), detail, resume: this.resuming });
    this.sessionEnded = true;
    this.detach();
    switch (code) {
      case Code.AREA_FULL:
        this.end("area_full", "the Area is full");
        return;
      case Code.VERSION_UNSUPPORTED:
        this.end("version_unsupported", `the server does not speak protocol version ${PROTOCOL_VERSION}`);
        return;
      default:
        // BAD_TOKEN (the body is gone), BAD_GRANT, GRANT_EXPIRED,
        // AREA_CLOSING, INTERNAL: a new grant from the director. A resume
        // refused asks for it at once (the session goes on elsewhere or
        // anew); a hello refused is a refusal the director led to.
        this.endSeqSpace();
        this.retry("join", `the host refused the ${this.resuming ? "resume" : "join"} (${codeName(code)})`, {
          now: this.resuming,
          refusal: !this.resuming,
        });
    }
  }
}
