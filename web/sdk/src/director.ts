/**
 * The director's HTTP API (director/openapi.yaml, served at
 * `GET /v1/openapi.yaml`): accounts, sessions, Areas, invites, joins.
 *
 * @module
 */

/** An account. */
export interface Account {
  id: number;
  email: string;
  name: string;
  admin: boolean;
}

/** Where the account's character is. */
export interface Character {
  area: number;
  home: number;
  x: number;
  y: number;
  placed: boolean;
}

/** The answer of GET /v1/me. */
export interface Me extends Account {
  character?: Character;
}

/** An Area the account may enter. */
export interface Area {
  id: number;
  name: string;
  /** The rule set that sets its rules: home, village, arena, or one of the realm's content. */
  kind: string;
  /** The template it is made from (its map and rule set), or "empty", an open floor of any size. */
  template: string;
  owner: number;
  w: number;
  h: number;
}

/** A member of an Area as {@link Director.members} lists it. */
export interface Member {
  account: number;
  /** Its display name. */
  name: string;
  /** "owner", "member", or "builder" (may build where the Area builds by builders: a home). */
  role: "owner" | "member" | "builder";
}

/**
 * What {@link Director.createArea} makes: the default template of kind
 * (home without one), or a template of the realm's content (whose rule set
 * is then the kind, and whose map sets the size), or the built-in
 * "empty" template, an open floor of w x h (both 8 to 1024).
 */
export interface NewArea {
  kind?: string;
  template?: string;
  /** For the template "empty" only (or equal to the template's map's). */
  w?: number;
  h?: number;
}

/** An invite code of an Area, as it is made. */
export interface Invite {
  code: string;
  area: number;
  uses: number;
}

/** An invite the account made that can still be redeemed (GET /v1/me/invites). */
export interface MyInvite {
  code: string;
  area: number;
  /** When it stops being redeemable: an RFC 3339 time, UTC. */
  expires: string;
  /** How many more accounts may redeem it. */
  uses_left: number;
}

/** The answer of {@link Director.myInvites}. */
export interface MyInvites {
  /** Newest first, at most 500. */
  invites: MyInvite[];
  /** More redeemable invites exist past the ones listed. */
  more: boolean;
}

/** A join's answer: where to open the game socket and what to say in hello. */
export interface JoinAnswer {
  grant: string;
  wsUrl: string;
  /** The join id: the string of the JSON answer, as the uint64 it spells. */
  joinId: bigint;
  area: number;
}

/** A portal: square (x, y) of an Area leads to square (to_x, to_y) of Area to_area. */
export interface Portal {
  x: number;
  y: number;
  to_area: number;
  to_x: number;
  to_y: number;
}

/** The realm door as a player sees it (GET /director/info). */
export interface RealmInfo {
  open: boolean;
  cap: number;
  players: number;
  new_players_welcome: boolean;
  message: string;
  live_areas: number;
  hosts: number;
  /**
   * The realm's demo login, when it offers one to anyone (a realm of
   * `ley run` with its documented demo password); absent otherwise.
   */
  demo?: { email: string; password: string };
  knobs: RealmKnobs;
}

/** The realm's tuning, as its hosts run (GET /director/info's knobs). */
export interface RealmKnobs {
  tick_rate: number;
  interest_radius: number;
  cell_size: number;
  pool_size: number;
  /** Most area hosts at once (`--max-hosts`). */
  process_rail: number;
  persist_every: string;
  snapshot_rate_hz: number;
  max_live_areas: number;
  resume_grace_ms: number;
}

/** The realm door's settings (GET and PUT /v1/realm, admins). A PUT replaces all four. */
export interface RealmSettings {
  /** Accepting joins; false refuses everyone not inside already (REALM_CLOSED). */
  open: boolean;
  /** Players inside past which joins are refused (REALM_FULL). */
  cap: number;
  /** false refuses the first join of an account (NEW_PLAYERS_CLOSED). */
  new_players_welcome: boolean;
  /** Shown to players at the door, at most 1024 bytes. */
  message: string;
}

/** A registered area host and its last heartbeat (GET /v1/admin/hosts). */
export interface HostStats {
  id: number;
  name: string;
  pid: number;
  ws_url: string;
  spawned: boolean;
  /** Areas loaded. */
  areas: number;
  /** Areas ticking (not frozen). */
  active: number;
  peers: number;
  rss_kib: number;
  /** The worst Area's tick p99, in microseconds. */
  tick_p99_us: number;
  beat_age_ms: number;
}

/** A live Area, its host and the accounts bound there (GET /v1/admin/areas). */
export interface LiveArea {
  area: number;
  template: string;
  host: number;
  /** The Area's incarnation. */
  epoch: number;
  peers: number;
  accounts: number[];
  closing: boolean;
}

/** A member of an Area as an admin sees it: its account, role and when it joined. */
export interface AreaMember extends Account {
  role: "owner" | "member" | "builder";
  /** An RFC 3339 time. */
  added: string;
}

/**
 * An Area as the console shows it (GET /v1/admin/areas/{id}): its record,
 * owner, members (the first 100; members_total counts them all), the
 * invites to it that can still be redeemed, and its live incarnation.
 */
export interface AreaDetail extends Area {
  /** An RFC 3339 time. */
  created: string;
  /** When a player was last in it (RFC 3339); absent if never. */
  last_played?: string;
  /** The owner's account; absent if it is gone. */
  owner_account?: Account;
  members: AreaMember[];
  members_total: number;
  members_more: boolean;
  invites: MyInvite[];
  /** Absent while the Area is not live. */
  live?: LiveArea;
}

/** One of the director's capacity samples (GET /v1/admin/samples). */
export interface Sample {
  /** An RFC 3339 time. */
  at: string;
  players: number;
  live_areas: number;
  frozen_areas: number;
  hosts: number;
  rss_bytes: number;
  /** Cores busy (1 is one core). */
  cpu: number;
  worst_tick_p99_us: number;
}

/** The answer of {@link Director.samples}: oldest first, one every every_s seconds. */
export interface Samples {
  every_s: number;
  samples: Sample[];
}

/** An account as an admin finds it (GET /v1/admin/accounts): where its character is, and the Area it is bound in now (0: none). */
export interface FoundAccount extends Account {
  character?: Character;
  bound_in: number;
}

/** The answer of {@link Director.findAccounts}: newest first; more says others match past these. */
export interface FoundAccounts {
  accounts: FoundAccount[];
  more: boolean;
}

/** One entry of the audit log (GET /v1/admin/audit): a change an admin made, who made it and when. */
export interface Change {
  id: number;
  /** An RFC 3339 time. */
  at: string;
  /** The admin's account id, and display name ("" if the account is gone). */
  actor: number;
  actor_name: string;
  /** What kind of change, e.g. "realm.update". */
  action: string;
  /** What it changed, e.g. "realm". */
  target: string;
  /** What it was and became, in words. */
  detail: string;
}

/** A page of the audit log ({@link Director.audit}): newest first; more says older ones follow. */
export interface Changes {
  changes: Change[];
  more: boolean;
}

/**
 * ApiError is a refusal of the API ({code, message} with an HTTP status),
 * or a request that got no answer (status 0, code NETWORK).
 */
export class ApiError extends Error {
  override readonly name = "ApiError";

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Retry-After of a 429, in ms. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }

  /**
   * retryable reports whether the same request may succeed a little later:
   * no answer, 429, 409 IN_ANOTHER_AREA (the body of a dropped connection
   * is still in its Area), and the 5xx answers (REALM_FULL, AT_CAPACITY,
   * GRANT_FAILED are "worth a retry a little later").
   */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.code === "IN_ANOTHER_AREA" || this.status >= 500;
  }
}

/** DirectorOptions configure a {@link Director}. */
export interface DirectorOptions {
  /** The session token of an earlier login. */
  token?: string | null;
  /** The fetch to use (the global one by default). */
  fetch?: typeof fetch;
  /** How long a request may take before it counts as unanswered, in ms (15000; a join may start an area host). */
  timeoutMs?: number;
}

/**
 * Director is a client of one director's HTTP API. It keeps the session
 * token of the last login; every method throws an {@link ApiError} on a
 * refusal or a network failure.
 */
export class Director {
  /** The session token; null when logged out. */
  token: string | null;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;

  /** base is the director's URL ("" for the page's own origin). */
  constructor(
    readonly base: string,
    opts: DirectorOptions = {},
  ) {
    this.token = opts.token ?? null;
    this.fetchFn = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.timeoutMs = opts.timeoutMs ?? 15_000;
  }

  private async call<T>(method: string, path: string, body?: object): Promise<T> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (this.token !== null) headers["Authorization"] = `Bearer ${this.token}`;
    let resp: Response;
    let text: string;
    try {
      resp = await this.fetchFn(this.base + path, {
        method,
        headers,
        signal: AbortSignal.timeout(this.timeoutMs),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      text = await resp.text();
    } catch (e) {
      throw new ApiError(0, "NETWORK", `no answer from the director: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (!resp.ok) {
      let code = `HTTP_${resp.status}`;
      let message = text;
      try {
        const e = JSON.parse(text) as { code?: unknown; message?: unknown };
        if (typeof e.code === "string") code = e.code;
        if (typeof e.message === "string") message = e.message;
      } catch {
        // Not the API's error shape (a proxy's page): keep the status.
      }
      const ra = Number(resp.headers.get("Retry-After"));
      throw new ApiError(resp.status, code, message, Number.isFinite(ra) && ra > 0 ? ra * 1000 : undefined);
    }
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }

  /** signUp creates an account (POST /v1/accounts); it does not log in. */
  signUp(email: string, password: string, name?: string): Promise<Account> {
    return this.call("POST", "/v1/accounts", name === undefined || name === "" ? { email, password } : { email, password, name });
  }

  /** login logs in (POST /v1/session) and keeps the token. A login ends the account's earlier sessions. */
  async login(email: string, password: string): Promise<Account> {
    const s = await this.call<{ token: string; account: Account }>("POST", "/v1/session", { email, password });
    this.token = s.token;
    return s.account;
  }

  /** logout ends the session (DELETE /v1/session) and forgets the token. */
  async logout(): Promise<void> {
    try {
      await this.call<undefined>("DELETE", "/v1/session");
    } finally {
      this.token = null;
    }
  }

  /** me returns the account and where its character is. */
  me(): Promise<Me> {
    return this.call("GET", "/v1/me");
  }

  /** areas lists the Areas the account is a member of. */
  async areas(): Promise<Area[]> {
    return (await this.call<{ areas: Area[] }>("GET", "/v1/areas")).areas;
  }

  /** area returns an Area the account is a member of (404 NO_SUCH_AREA for any other). */
  area(id: number): Promise<Area> {
    return this.call("GET", `/v1/areas/${id}`);
  }

  /**
   * createArea makes an Area the account owns, from a template (see
   * {@link NewArea}): `createArea("Market", { template: "village" })`,
   * `createArea("Bench", { kind: "village", template: "empty", w: 32, h: 32 })`;
   * with no options, a home.
   */
  createArea(name: string, opts: NewArea = {}): Promise<Area> {
    const body: Record<string, string | number> = { name };
    if (opts.kind !== undefined && opts.kind !== "") body["kind"] = opts.kind;
    if (opts.template !== undefined && opts.template !== "") body["template"] = opts.template;
    if (opts.w !== undefined && opts.w !== 0) body["w"] = opts.w;
    if (opts.h !== undefined && opts.h !== 0) body["h"] = opts.h;
    return this.call("POST", "/v1/areas", body);
  }

  /**
   * members lists an Area's members: all of them for its owner (and the
   * realm's admins), only the caller for any other member.
   */
  async members(area: number): Promise<Member[]> {
    return (await this.call<{ members: Member[] }>("GET", `/v1/areas/${Math.round(area)}/members`)).members;
  }

  /**
   * setRole names a member of an Area the account owns a builder, or a
   * plain member again; it holds from the member's next arrival there.
   */
  setRole(area: number, account: number, role: "member" | "builder"): Promise<Member> {
    return this.call("PUT", `/v1/areas/${Math.round(area)}/members/${Math.round(account)}`, { role });
  }

  /** createInvite makes an invite code of an Area the account owns. */
  createInvite(area: number, uses = 1, ttlSeconds = 0): Promise<Invite> {
    return this.call("POST", `/v1/areas/${area}/invites`, { uses, ttl_seconds: ttlSeconds });
  }

  /** myInvites lists the invites the account made that can still be redeemed, newest first. */
  myInvites(): Promise<MyInvites> {
    return this.call("GET", "/v1/me/invites");
  }

  /** redeemInvite makes the account a member of the invite's Area, and returns that Area's id. */
  async redeemInvite(code: string): Promise<number> {
    return (await this.call<{ area: number }>("POST", `/v1/invites/${encodeURIComponent(code)}/redeem`)).area;
  }

  /** join asks for a grant to an Area the account is a member of. */
  async join(area: number): Promise<JoinAnswer> {
    return this.grant(`/v1/areas/${area}/join`);
  }

  /**
   * spectate asks for a spectator grant to an Area (admins): its hello
   * watches the Area read-only, with no body (see {@link Spectator}).
   * Refused SPECTATORS_FULL past 4 spectators an Area, 16 a host.
   */
  async spectate(area: number): Promise<JoinAnswer> {
    return this.grant(`/v1/admin/areas/${Math.round(area)}/spectate`);
  }

  /** areaDetail returns an Area's record, owner, members, invites and live incarnation (admins). */
  areaDetail(area: number): Promise<AreaDetail> {
    return this.call("GET", `/v1/admin/areas/${Math.round(area)}`);
  }

  private async grant(path: string): Promise<JoinAnswer> {
    const j = await this.call<{ grant: string; ws_url: string; join_id: string; area: number }>("POST", path);
    if (!/^(0|[1-9][0-9]{0,19})$/.test(j.join_id)) {
      throw new ApiError(200, "BAD_ANSWER", `join_id ${JSON.stringify(j.join_id)} is not a decimal string`);
    }
    return { grant: j.grant, wsUrl: j.ws_url, joinId: BigInt(j.join_id), area: j.area };
  }

  /** setPortals replaces an Area's portals (its owner); they take effect when the Area next goes live. */
  async setPortals(area: number, portals: Portal[]): Promise<Portal[]> {
    return (await this.call<{ portals?: Portal[] }>("PUT", `/v1/areas/${area}/portals`, { portals })).portals ?? [];
  }

  /** realm returns the realm door's settings (admins; 403 FORBIDDEN for anyone else). */
  realm(): Promise<RealmSettings> {
    return this.call("GET", "/v1/realm");
  }

  /**
   * setRealm replaces the realm door's settings (admins) and returns them
   * as they are now. Closing the door (open from true to false) drains
   * the realm: every live Area closes after the director's close grace.
   */
  setRealm(s: RealmSettings): Promise<RealmSettings> {
    return this.call("PUT", "/v1/realm", { open: s.open, cap: s.cap, new_players_welcome: s.new_players_welcome, message: s.message });
  }

  /** hosts lists the registered area hosts with their last heartbeat (admins). */
  async hosts(): Promise<HostStats[]> {
    return (await this.call<{ hosts: HostStats[] }>("GET", "/v1/admin/hosts")).hosts;
  }

  /** liveAreas lists the live Areas, their hosts and the accounts bound there (admins). */
  async liveAreas(): Promise<LiveArea[]> {
    return (await this.call<{ areas: LiveArea[] }>("GET", "/v1/admin/areas")).areas;
  }

  /** findAccounts finds the accounts whose email or name holds q (admins; "" finds every account), newest first, at most limit (1 to 100). */
  findAccounts(q: string, limit = 20): Promise<FoundAccounts> {
    return this.call("GET", `/v1/admin/accounts?q=${encodeURIComponent(q)}&limit=${Math.round(limit)}`);
  }

  /** endSessions ends every session of an account and its play (admins); it resolves to how many sessions ended. */
  async endSessions(account: number): Promise<number> {
    return (await this.call<{ sessions: number }>("POST", `/v1/admin/accounts/${Math.round(account)}/logout`)).sessions;
  }

  /** giveMembership makes an account a member or a builder of an Area, or changes between the two (admins). */
  async giveMembership(area: number, account: number, role: "member" | "builder"): Promise<void> {
    await this.call<undefined>("PUT", `/v1/admin/areas/${Math.round(area)}/members/${Math.round(account)}`, { role });
  }

  /** takeMembership ends an account's membership of an Area (admins): a body of it there leaves at once. */
  async takeMembership(area: number, account: number): Promise<void> {
    await this.call<undefined>("DELETE", `/v1/admin/areas/${Math.round(area)}/members/${Math.round(account)}`);
  }

  /**
   * audit returns a page of the audit log (admins), newest first: at most
   * limit (1 to 200) changes with ids below before (0: from the newest).
   */
  audit(before = 0, limit = 50): Promise<Changes> {
    const q = before > 0 ? `&before=${Math.round(before)}` : "";
    return this.call("GET", `/v1/admin/audit?limit=${Math.round(limit)}${q}`);
  }

  /** samples returns the director's capacity samples of the last sinceSeconds (1 to 604800; admins), oldest first. */
  samples(sinceSeconds: number): Promise<Samples> {
    return this.call("GET", `/v1/admin/samples?since=${Math.round(sinceSeconds)}`);
  }

  /** info returns the realm door (public). */
  info(): Promise<RealmInfo> {
    return this.call("GET", "/director/info");
  }
}
