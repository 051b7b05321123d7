/**
 * Stalls on the play screen. A stall (an item kind with ItemFlag.Stall)
 * opens in the chest's panel (build.ts) for anyone; under its slots, a
 * line a slot says what it holds and what it asks. Its owner (the
 * container message's owned flag) stocks it like a chest, and prices
 * each slot: a kind and a count for its whole stack (or not for sale).
 * Anyone else sees each slot's stack and price with a Buy button: the
 * purchase says what the player saw (the SDK fills the stack's count and
 * the price from the last container message), so a stall that changed
 * meanwhile is refused STALE, and nothing changes hands. The price paid
 * lies in the slot bought from (the owner's till) until the owner takes
 * it out; the owner need not be there.
 */

import {
  type Amount,
  Code,
  IntentKind,
  type IntentOutcome,
  type IntentRequest,
  type ItemKind,
  type Session,
  type Stack,
  codeMeaning,
} from "@leyworks/ley-sdk";

import type { Builder, OpenStation } from "./build.js";
import { byId, onTap } from "./dom.js";
import { capital } from "./looks.js";

/** Words for refusals of pricing and buying, by intent kind and code. */
const REFUSALS: Partial<Record<number, Partial<Record<number, string>>>> = {
  [IntentKind.Buy]: {
    [Code.STALE]: "The stall changed before you bought: look at it again.",
    [Code.NOT_FOR_SALE]: "That is not for sale.",
    [Code.CANT_PAY]: "You do not carry the price.",
    [Code.NOT_ALLOWED]: "This stall is yours: take what it holds out instead.",
    [Code.INVENTORY_FULL]: "Your inventory has no room for it.",
    [Code.NOTHING_THERE]: "There is no stall there any more.",
  },
  [IntentKind.Price]: {
    [Code.NOT_OWNER]: "Only the stall's owner may price it.",
    [Code.MALFORMED]: "That price cannot be: a kind that exists, and no more than one slot of it holds.",
    [Code.NOTHING_THERE]: "There is no stall there any more.",
  },
};

/** amountWords says an amount in words: "Wood × 2". */
export function amountWords(a: Amount, kinds: ReadonlyMap<number, ItemKind>): string {
  return `${kinds.get(a.kind)?.label ?? `item ${a.kind}`} × ${a.count}`;
}

/** Stall runs the lines of an open stall's panel: the owner's prices, the others' Buy buttons. */
export class Stall {
  private readonly el = byId("stall", HTMLElement);
  private readonly list = byId("stall-list", HTMLUListElement);
  private readonly note = byId("stall-note", HTMLElement);
  private key = "";

  /** session is the session in play; say tells the player something; done gives the focus back to the map. */
  constructor(
    private readonly session: () => Session | null,
    private readonly builder: Builder,
    private readonly say: (text: string) => void,
    private readonly done: () => void,
  ) {}

  /** reset hides the lines. */
  reset(): void {
    this.show(null);
  }

  /**
   * show draws the open stall's lines, one a slot (data-slot, data-kind,
   * data-count, data-price-kind and data-price-count on each, for tests
   * and tools); hidden while no stall's panel shows. Call it as the
   * chest's panel opens, changes or closes.
   */
  show(s: Session | null): void {
    const st = s === null ? undefined : this.builder.stall(s);
    const kinds = s?.itemKinds ?? new Map<number, ItemKind>();
    const key = st === undefined ? "" : JSON.stringify([st.x, st.y, st.state.owned, st.slots.map((q) => [q.kind, q.count]), st.state.prices, kinds.size]);
    if (key === this.key) return;
    this.key = key;
    this.el.hidden = st === undefined;
    if (s === null || st === undefined) {
      this.list.replaceChildren();
      return;
    }
    const owner = st.state.owned;
    this.list.replaceChildren(...st.slots.map((stack, k) => this.line(s, st, k, stack, st.state.prices[k], owner)));
    const text = owner
      ? "Stock it like a chest; price a slot (a kind and how many) to sell its whole stack. What buyers pay lies in the slot they bought from: take it out."
      : "Buy a slot's whole stack at its price: it comes into your inventory, the price out of it.";
    if (this.note.textContent !== text) this.note.textContent = text;
  }

  private line(s: Session, st: OpenStation, k: number, stack: Stack, price: Amount | undefined, owner: boolean): HTMLLIElement {
    const kinds = s.itemKinds;
    const e = document.createElement("li");
    const ask = price !== undefined && price.count > 0 ? price : undefined;
    e.dataset["slot"] = String(k);
    e.dataset["kind"] = String(stack.count > 0 ? stack.kind : 0);
    e.dataset["count"] = String(stack.count);
    e.dataset["priceKind"] = String(ask?.kind ?? 0);
    e.dataset["priceCount"] = String(ask?.count ?? 0);
    const what = stack.count > 0 ? amountWords({ kind: stack.kind, count: stack.count }, kinds) : "empty";
    const text = document.createElement("span");
    text.className = "what";
    text.textContent = `${k + 1}. ${what}${ask === undefined ? (stack.count > 0 ? ", not for sale" : "") : ` for ${amountWords(ask, kinds)}`}`;
    e.append(text);
    if (owner) {
      e.append(this.priceForm(st, k, ask, kinds));
      return e;
    }
    if (ask !== undefined && stack.count > 0) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "buy";
      b.textContent = "Buy";
      b.title = `buy ${what} for ${amountWords(ask, kinds)}`;
      onTap(b, () => {
        this.buy(k);
        this.done();
      });
      e.append(" ", b);
    }
    return e;
  }

  /** priceForm is the owner's price of slot k: a kind (or not for sale), a count, and a button. */
  private priceForm(st: OpenStation, k: number, ask: Amount | undefined, kinds: ReadonlyMap<number, ItemKind>): HTMLElement {
    const form = document.createElement("span");
    form.className = "price";
    const kind = document.createElement("select");
    kind.className = "price-kind";
    kind.setAttribute("aria-label", `the kind slot ${k + 1} asks`);
    const none = document.createElement("option");
    none.value = "0";
    none.textContent = "not for sale";
    kind.append(none);
    for (const c of [...kinds.values()].sort((a, b) => a.label.localeCompare(b.label))) {
      const o = document.createElement("option");
      o.value = String(c.code);
      o.textContent = c.label;
      kind.append(o);
    }
    kind.value = String(ask?.kind ?? 0);
    const count = document.createElement("input");
    count.className = "price-count";
    count.type = "number";
    count.min = "1";
    count.value = String(ask?.count ?? 1);
    count.setAttribute("aria-label", `how many slot ${k + 1} asks`);
    const b = document.createElement("button");
    b.type = "button";
    b.className = "set-price";
    b.textContent = "Price";
    b.title = `set what slot ${k + 1}'s whole stack sells for`;
    onTap(b, () => {
      const code = Number(kind.value);
      this.price(st, k, code, code === 0 ? 0 : Math.max(1, Math.floor(Number(count.value) || 1)));
      this.done();
    });
    form.append(kind, count, b);
    return form;
  }

  private live(): Session | null {
    const s = this.session();
    return s !== null && s.ready ? s : null;
  }

  /** price asks count items of the kind code for slot k of the open stall (code 0: not for sale). */
  price(st: OpenStation, k: number, code: number, count: number): void {
    const s = this.live();
    if (s === null) return;
    const stall = this.builder.stall(s);
    if (stall === undefined || stall.x !== st.x || stall.y !== st.y) {
      this.say("Open your stall first: act on it (Space) next to it.");
      return;
    }
    const words = code === 0 ? "not for sale" : `for ${amountWords({ kind: code, count }, s.itemKinds)}`;
    void s.price(stall.dir, k, code, count).then((o) => {
      if (this.session() !== s) return;
      this.answered(o, { kind: IntentKind.Price, dir: stall.dir, target: { x: code, y: count } }, `Slot ${k + 1}: ${words}.`);
    });
  }

  /** buy buys the whole stack of slot k of the open stall, at the price its last container message showed. */
  buy(k: number): void {
    const s = this.live();
    if (s === null) return;
    const st = this.builder.stall(s);
    if (st === undefined) {
      this.say("Open a stall first: act on it (Space) next to it.");
      return;
    }
    const stack = st.slots[k];
    const ask = st.state.prices[k];
    const words =
      stack === undefined || ask === undefined ? "it" : `${amountWords({ kind: stack.kind, count: stack.count }, s.itemKinds)} for ${amountWords(ask, s.itemKinds)}`;
    void s.buy(st.dir, k).then((o) => {
      if (this.session() !== s) return;
      this.answered(o, { kind: IntentKind.Buy, dir: st.dir, target: { x: ask?.kind ?? 0, y: ask?.count ?? 0 } }, `You bought ${words}.`);
    });
  }

  private answered(o: IntentOutcome, intent: IntentRequest, applied: string): void {
    switch (o.status) {
      case "applied":
        this.say(applied);
        return;
      case "refused":
        this.say(this.refusal(intent, o.code));
        return;
      case "unknown":
        this.say("The connection dropped as you did that: the stall and your inventory show what came of it.");
        return;
      case "voided":
        return;
    }
  }

  /** refusal says a refusal (code) of a price or buy intent in words. */
  refusal(intent: IntentRequest, code: number): string {
    return REFUSALS[intent.kind]?.[code] ?? this.builder.refusal(intent, code) ?? `${capital(codeMeaning(code))}.`;
  }
}
