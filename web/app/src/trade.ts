/**
 * Trading on the play screen. Next to another player (a square away, as
 * the last snapshot showed both), a "Trade with …" button opens a trade
 * with that player; a trade the other player opened opens the same
 * dialog. The dialog lists both sides (what this player offers, with a
 * Remove button a stack, and what the other offers), adds a stack of the
 * inventory (a slot and a count) to this player's side, says who has
 * confirmed the trade as it stands, and has Confirm (the revision shown:
 * a newer one on the server is refused STALE, so the player never
 * confirms what it has not seen) and Cancel. When the trade ends the
 * dialog says how: done (what went and what came), or void, with the
 * reason in words; it stays until closed or another trade opens. The
 * server decides everything: what shows is what its trade messages said.
 */

import {
  Code,
  type Dir,
  EntityFlag,
  EntityKind,
  IntentKind,
  type IntentOutcome,
  type IntentRequest,
  type ItemKind,
  type Offered,
  Rule,
  type Session,
  type Trade,
  TradeConfirmed,
  TradeStatus,
  codeMeaning,
  codeName,
  dirOf,
  isDiagonal,
} from "@leyworks/ley-sdk";

import { byId, onTap } from "./dom.js";
import { capital } from "./looks.js";

/** Words for refusals of the trade intents, by intent kind and code. */
const REFUSALS: Partial<Record<number, Partial<Record<number, string>>>> = {
  [IntentKind.Trade]: {
    [Code.NOTHING_THERE]: "Nobody is there to trade with any more.",
    [Code.NOT_ALLOWED]: "They are away: nobody plays them right now.",
    [Code.TRADING]: "You are trading already: finish or cancel that trade first.",
    [Code.BUSY]: "They are trading with someone else.",
  },
  [IntentKind.Offer]: {
    [Code.NOTHING_THERE]: "That slot is empty now.",
    [Code.MALFORMED]: "You cannot offer that: more than the slot holds, or a ninth stack.",
  },
  [IntentKind.Confirm]: {
    [Code.STALE]: "The trade changed as you confirmed: look at it again, then confirm.",
    [Code.NOTHING_THERE]: "Nothing is offered yet: there is nothing to confirm.",
  },
};

/** Refusals of any trade intent, by code. */
const ANY_REFUSALS: Partial<Record<number, string>> = {
  [Code.NOT_TRADING]: "You have no open trade.",
  [Code.BUDGET]: "You have changed enough for this minute: wait a little.",
};

/** Why a trade ended void, in words, by its reason. */
const VOID_REASONS: Partial<Record<number, string>> = {
  [Code.TRADE_CANCELLED]: "it was called off",
  [Code.TRADE_FAR]: "one of you walked out of reach",
  [Code.TRADE_LEFT]: "one of you left (or lost the connection)",
  [Code.TRADE_PORTAL]: "one of you stepped into a portal",
  [Code.TRADE_TAKEN_OVER]: "a login elsewhere took a session over",
  [Code.TRADE_CHANGED]: "an offer changed after it had been confirmed",
  [Code.INVENTORY_FULL]: "one of you had no room for what the other offered",
};

/** The kinds of intent this file says the refusals of. */
export const TRADE_INTENTS: ReadonlySet<number> = new Set([IntentKind.Trade, IntentKind.Offer, IntentKind.Confirm, IntentKind.Cancel]);

/** sideWords says a trade's side in words: "Chair × 2 + Table × 1", "nothing". */
function sideWords(side: readonly Offered[], kinds: ReadonlyMap<number, ItemKind>): string {
  return side.length === 0 ? "nothing" : side.map((o) => `${kinds.get(o.stack.kind)?.label ?? `item ${o.stack.kind}`} × ${o.stack.count}`).join(" + ");
}

/** A player next to the body, whom a trade may be opened with. */
interface Neighbour {
  entity: number;
  name: string;
  dir: Dir;
}

/** Trader runs the Trade buttons and the trade dialog. */
export class Trader {
  private readonly traders = byId("traders", HTMLElement);
  private readonly panel = byId("trade", HTMLElement);
  private readonly title = byId("trade-title", HTMLElement);
  private readonly closeBtn = byId("trade-close", HTMLButtonElement);
  private readonly mine = byId("trade-mine", HTMLUListElement);
  private readonly theirs = byId("trade-theirs", HTMLUListElement);
  private readonly theirsHead = byId("trade-theirs-head", HTMLElement);
  private readonly add = byId("trade-add", HTMLElement);
  private readonly slotSel = byId("trade-slot", HTMLSelectElement);
  private readonly countIn = byId("trade-count", HTMLInputElement);
  private readonly stateEl = byId("trade-state", HTMLElement);
  private readonly buttons = byId("trade-buttons", HTMLElement);
  private readonly confirmBtn = byId("trade-confirm", HTMLButtonElement);
  private readonly endEl = byId("trade-end", HTMLElement);
  /** The trade the dialog shows (open, or how the last one ended); null while it is closed. */
  private shown: Trade | null = null;
  private tradersKey = "";
  private slotsKey = "";

  /** session is the session in play; say tells the player something; done gives the focus back to the map. */
  constructor(
    private readonly session: () => Session | null,
    private readonly say: (text: string) => void,
    private readonly done: () => void,
  ) {
    onTap(byId("trade-offer", HTMLButtonElement), () => this.offerPicked());
    onTap(this.confirmBtn, () => {
      this.confirm();
      this.done();
    });
    onTap(byId("trade-cancel", HTMLButtonElement), () => {
      this.cancel();
      this.done();
    });
    onTap(this.closeBtn, () => {
      this.close();
      this.done();
    });
    this.slotSel.addEventListener("change", () => this.fitCount(true));
  }

  /** reset forgets the last session's trade and neighbours. */
  reset(): void {
    this.shown = null;
    this.panel.hidden = true;
    this.tradersKey = "";
    this.slotsKey = "";
    this.traders.hidden = true;
    this.traders.replaceChildren();
  }

  /** close hides the dialog of a trade that ended; an open trade's stays (Cancel calls it off). It reports whether it closed one. */
  close(): boolean {
    if (this.shown === null || this.shown.status === TradeStatus.Open) return false;
    this.shown = null;
    this.panel.hidden = true;
    const s = this.session();
    if (s !== null) this.follow(s);
    return true;
  }

  private live(): Session | null {
    const s = this.session();
    return s !== null && s.ready ? s : null;
  }

  /** neighbours are the players (not away) a square from the body, straight unless the Area allows diagonals. */
  private neighbours(s: Session): Neighbour[] {
    const me = s.confirmed;
    if (me === null) return [];
    const diagonal = ((s.view.info?.rules ?? 0) & Rule.Diagonal) !== 0;
    const out: Neighbour[] = [];
    for (const e of s.view.entities.values()) {
      if (e.id === s.entity || e.kind !== EntityKind.Player || (e.flags & EntityFlag.Away) !== 0) continue;
      const dir = Math.max(Math.abs(e.x - me.x), Math.abs(e.y - me.y)) === 1 ? dirOf(e.x - me.x, e.y - me.y) : undefined;
      if (dir === undefined || (isDiagonal(dir) && !diagonal)) continue;
      out.push({ entity: e.id, name: s.view.players.get(e.id) ?? `player ${e.id}`, dir });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * follow offers a "Trade with …" button for each player next to the
   * body (data-entity and data-name on each), while no trade is open;
   * call it after every snapshot and presence.
   */
  follow(s: Session): void {
    const open = s.trade !== null;
    const near = open || !s.ready ? [] : this.neighbours(s);
    const key = JSON.stringify(near);
    if (key === this.tradersKey) return;
    this.tradersKey = key;
    this.traders.hidden = near.length === 0;
    this.traders.replaceChildren(
      ...near.map((n) => {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = `Trade with ${n.name}`;
        b.title = `offer ${n.name} a trade: both of you see both sides, and both confirm`;
        b.dataset["entity"] = String(n.entity);
        b.dataset["name"] = n.name;
        onTap(b, () => {
          this.open(n.entity);
          this.done();
        });
        return b;
      }),
    );
  }

  /** open opens a trade with the player entity, if it still stands next to the body. */
  open(entity: number): void {
    const s = this.live();
    if (s === null) return;
    const n = this.neighbours(s).find((q) => q.entity === entity);
    if (n === undefined) {
      this.say("They are not next to you any more: step up to them first.");
      return;
    }
    void s.tradeWith(n.dir).then((o) => this.answered(s, o, { kind: IntentKind.Trade, dir: n.dir, target: { x: 0, y: 0 } }, `You offered ${n.name} a trade.`));
  }

  /** onTrade takes a trade event: the dialog opens (another's trade too), changes, or says how it ended. */
  onTrade(s: Session, t: Trade): void {
    this.shown = t;
    this.draw(s);
    this.follow(s);
    if (t.status === TradeStatus.Done) this.say(`The trade with ${this.name(s, t)} is done.`);
    else if (t.status === TradeStatus.Void) this.say(`The trade with ${this.name(s, t)} is void: ${this.reasonWords(t.reason)}.`);
  }

  /** showInventory follows what the character carries: the slots offered from. */
  showInventory(s: Session): void {
    if (this.shown !== null) this.draw(s);
  }

  private name(s: Session, t: Trade): string {
    return s.view.players.get(t.with) ?? `player ${t.with}`;
  }

  private reasonWords(reason: number): string {
    return VOID_REASONS[reason] ?? codeMeaning(reason);
  }

  /**
   * draw shows the trade in the dialog. The dialog's data-status is
   * "open", "done" or "void", data-reason the code's name of a void one,
   * data-rev and data-confirmed its revision and confirmations, data-with
   * the other player's name; each side's lines have data-slot, data-kind
   * and data-count.
   */
  private draw(s: Session): void {
    const t = this.shown;
    const appearing = this.panel.hidden && t !== null;
    this.panel.hidden = t === null;
    if (t === null) return;
    const kinds = s.itemKinds;
    const who = this.name(s, t);
    const open = t.status === TradeStatus.Open;
    const status = open ? "open" : t.status === TradeStatus.Done ? "done" : "void";
    this.panel.dataset["status"] = status;
    this.panel.dataset["reason"] = t.status === TradeStatus.Void ? codeName(t.reason) : "";
    this.panel.dataset["rev"] = String(t.rev);
    this.panel.dataset["confirmed"] = String(t.confirmed);
    this.panel.dataset["with"] = who;
    this.title.textContent = open ? `Trading with ${who}` : `Trade with ${who}: ${status}`;
    this.theirsHead.textContent = `${capital(who)} offers`;
    this.mine.replaceChildren(...t.mine.map((o) => this.line(o, kinds, open)));
    this.theirs.replaceChildren(...t.theirs.map((o) => this.line(o, kinds, false)));
    if (t.mine.length === 0) this.mine.append(this.nothing());
    if (t.theirs.length === 0) this.theirs.append(this.nothing());
    this.add.hidden = !open;
    this.buttons.hidden = !open;
    this.closeBtn.hidden = open;
    const me = (t.confirmed & TradeConfirmed.Mine) !== 0;
    const they = (t.confirmed & TradeConfirmed.Theirs) !== 0;
    this.confirmBtn.disabled = !open || me;
    this.confirmBtn.textContent = me ? "Confirmed" : "Confirm";
    const state = !open
      ? ""
      : t.mine.length === 0 && t.theirs.length === 0
        ? `Nothing is offered yet: add what you offer, or wait for ${who}'s offer.`
        : me && they
          ? "You both confirmed."
          : me
            ? `You confirmed; waiting for ${who} to confirm.`
            : they
              ? `${capital(who)} confirmed this: Confirm to trade.`
              : "Nobody has confirmed this yet.";
    if (this.stateEl.textContent !== state) this.stateEl.textContent = state;
    this.stateEl.hidden = state === "";
    const end =
      t.status === TradeStatus.Done
        ? `Done: you gave ${sideWords(t.mine, kinds)} and got ${sideWords(t.theirs, kinds)}.`
        : t.status === TradeStatus.Void
          ? `Void: ${this.reasonWords(t.reason)}. Nobody's items moved.`
          : "";
    this.endEl.textContent = end;
    this.endEl.hidden = end === "";
    this.showSlots(s, open);
    if (appearing) {
      // On a phone the side panel sits under the map: bring a trade that
      // opens (above all one another player opened) into view, drawn whole.
      this.panel.scrollIntoView({ block: "nearest" });
    }
  }

  private nothing(): HTMLLIElement {
    const e = document.createElement("li");
    e.className = "muted";
    e.textContent = "nothing";
    return e;
  }

  /** line is one stack of a side; with remove, a Remove button that takes it off this player's offer. */
  private line(o: Offered, kinds: ReadonlyMap<number, ItemKind>, remove: boolean): HTMLLIElement {
    const e = document.createElement("li");
    e.dataset["slot"] = String(o.slot);
    e.dataset["kind"] = String(o.stack.kind);
    e.dataset["count"] = String(o.stack.count);
    const what = `${kinds.get(o.stack.kind)?.label ?? `item ${o.stack.kind}`} × ${o.stack.count}`;
    const text = document.createElement("span");
    text.textContent = remove ? `${what} (slot ${o.slot + 1})` : what;
    e.append(text);
    if (remove) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "remove";
      b.textContent = "Remove";
      b.title = `take ${what} off your offer`;
      onTap(b, () => {
        this.offer(o.slot, 0);
        this.done();
      });
      e.append(" ", b);
    }
    return e;
  }

  /** showSlots lists the inventory's stacks to offer from (value: the slot), keeping the one chosen while it holds something. */
  private showSlots(s: Session, open: boolean): void {
    if (!open) return;
    const kinds = s.itemKinds;
    const rows = s.inventory.map((st, i) => ({ i, st })).filter((r) => r.st.count > 0);
    const key = JSON.stringify(rows.map((r) => [r.i, r.st.kind, r.st.count]));
    if (key === this.slotsKey) return;
    this.slotsKey = key;
    const was = this.slotSel.value;
    this.slotSel.replaceChildren(
      ...rows.map((r) => {
        const o = document.createElement("option");
        o.value = String(r.i);
        o.textContent = `${kinds.get(r.st.kind)?.label ?? `item ${r.st.kind}`} × ${r.st.count} (slot ${r.i + 1})`;
        return o;
      }),
    );
    if (rows.some((r) => String(r.i) === was)) this.slotSel.value = was;
    this.fitCount(this.slotSel.value !== was);
  }

  /** fitCount bounds the count to the chosen slot's stack; reset sets it to the whole stack. */
  private fitCount(reset: boolean): void {
    const n = this.session()?.inventory[Number(this.slotSel.value)]?.count ?? 0;
    this.countIn.max = String(Math.max(1, n));
    const v = Math.floor(Number(this.countIn.value) || 0);
    if (reset || v < 1 || v > n) this.countIn.value = String(Math.max(1, n));
  }

  /** offerPicked offers the chosen slot's count. */
  private offerPicked(): void {
    if (this.slotSel.value === "") {
      this.say("You carry nothing to offer.");
      return;
    }
    const slot = Number(this.slotSel.value);
    const n = this.session()?.inventory[slot]?.count ?? 0;
    const count = Math.min(n, Math.max(1, Math.floor(Number(this.countIn.value) || 1)));
    this.offer(slot, count);
  }

  /** offer puts count items of inventory slot slot on this player's side (0: takes the slot off). */
  offer(slot: number, count: number): void {
    const s = this.live();
    if (s === null) return;
    void s.offer(slot, count).then((o) => this.answered(s, o, { kind: IntentKind.Offer, dir: 0, target: { x: 0, y: 0 } }, ""));
  }

  /** confirm confirms the trade as the dialog shows it. */
  confirm(): void {
    const s = this.live();
    if (s === null) return;
    void s.confirmTrade().then((o) => this.answered(s, o, { kind: IntentKind.Confirm, dir: 0, target: { x: 0, y: 0 } }, ""));
  }

  /** cancel calls the open trade off. */
  cancel(): void {
    const s = this.live();
    if (s === null) return;
    void s.cancelTrade().then((o) => this.answered(s, o, { kind: IntentKind.Cancel, dir: 0, target: { x: 0, y: 0 } }, ""));
  }

  private answered(s: Session, o: IntentOutcome, intent: IntentRequest, applied: string): void {
    if (this.session() !== s) return;
    if (o.status === "applied" && applied !== "") this.say(applied);
    if (o.status === "refused") this.say(this.refusal(intent, o.code));
  }

  /** refusal says a refusal (code) of a trade intent in words. */
  refusal(intent: IntentRequest, code: number): string {
    return REFUSALS[intent.kind]?.[code] ?? ANY_REFUSALS[code] ?? `${capital(codeMeaning(code))}.`;
  }
}
