/**
 * @leyworks/ley-sdk: the client SDK of ley (protocol version 7).
 *
 * - {@link Director}: the HTTP API (accounts, sessions, Areas, joins).
 * - {@link Session}: a player in a realm: join, the game socket, the
 *   view, prediction and reconciliation, reconnects, portals, events.
 * - {@link AreaView}: a client's view of an Area, as docs/protocol.md
 *   keeps it.
 * - The codec ({@link encodeMessage}, {@link decodeMessage}, and
 *   {@link expandShortSnapshot} for short snapshots) and the snapshot
 *   records ({@link readRecords}, {@link RecordWriter}), for tools and
 *   tests.
 *
 * @packageDocumentation
 */

export * from "./protocol.js";
export * from "./codes.js";
export { MalformedError, MAX_CLIENT_MESSAGE, MAX_SERVER_MESSAGE } from "./strict.js";
export { decodeMessage, decodeClientMessage, encodeMessage } from "./codec.js";
export { Op, readRecords, RecordWriter, type EntityState, type SnapshotRecord } from "./records.js";
export { seqAfter, seqAtOrBefore, nextSeq } from "./seq.js";
export { AreaView, ViewError, type CellMap } from "./view.js";
export { Predictor, type PendingIntent, type Pose, type PredictorOptions } from "./prediction.js";
export { Interpolator, type Point } from "./interpolation.js";
export { inferCombat, type Combat, type Death, type Hit } from "./combat.js";
export { Emitter, type Listener } from "./emitter.js";
export { consoleLogger, silentLogger, type Logger } from "./log.js";
export { realClock, type Clock, type TimerHandle } from "./clock.js";
export { DEFAULT_BACKOFF, backoffDelay, type BackoffPolicy } from "./backoff.js";
export {
  ApiError,
  Director,
  type Account,
  type Area,
  type AreaDetail,
  type AreaMember,
  type Member,
  type Change,
  type Changes,
  type Character,
  type DirectorOptions,
  type FoundAccount,
  type FoundAccounts,
  type HostStats,
  type Invite,
  type JoinAnswer,
  type LiveArea,
  type Me,
  type MyInvite,
  type MyInvites,
  type NewArea,
  type Portal,
  type RealmInfo,
  type RealmKnobs,
  type RealmSettings,
  type Sample,
  type Samples,
} from "./director.js";
export {
  Session,
  type ContainerState,
  type Drawable,
  type EndReason,
  type GameSocket,
  type IntentOutcome,
  type IntentRequest,
  type NextAttempt,
  type SessionEvents,
  type SessionOptions,
  type SessionState,
} from "./session.js";
export { Spectator, type SpectatorEvents, type SpectatorOptions, type SpectatorState } from "./spectator.js";
export { loadEngine, type Engine, type EngineOffline, type EngineReplica, type EngineSim } from "./engine.js";
export { OFFLINE_AREA, OfflineRealm, type OfflineOptions } from "./offline.js";
