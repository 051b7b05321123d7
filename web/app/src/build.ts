/**
 * Building on the play screen: the inventory bar (20 slots; keys 1-9 and
 * 0 or a click pick one, picked again to put it away), placing the picked
 * slot's item on a square next to the body, taking a placed item back,
 * rearranging the bar (with a slot picked, a click on another moves the
 * picked stack there: onto an empty slot it moves, onto its kind it
 * merges, onto another kind the two swap; Shift-click or the Split button
 * moves half of it), and the panel of an opened chest, whose stacks move
 * to and from the inventory. The server decides everything: what shows
 * is what its inventory, container and static messages said, and its
 * refusals come back in words. Building is offered only where
 * area_info's rules say this player may build (Rule.MayBuild); elsewhere
 * the bar only shows what the player carries, and a try is answered in
 * words without sending an intent sure to be refused. Where the Area
 * allows building only on its plots (a village: area_info's plots, drawn
 * on the map), building is offered on them alone. Under the bar, a line
 * says what the picked slot holds and what a click on another does, and
 * another what waits in the stash (what an arena did not let the player
 * carry in). A container that is a crafting station (a cauldron) opens
 * in the same panel; crafting at it is craft.ts's; while it works on a
 * recipe that takes time (a furnace), the panel says when it is ready. A
 * stall opens in it too, its prices and purchases stall.ts's.
 */

import {
  CONTAINER_SLOT,
  Code,
  type ContainerState,
  DIR_DELTA,
  type Dir,
  IntentKind,
  type IntentRequest,
  type ItemKind,
  ItemFlag,
  ItemSlot,
  ObjectKind,
  Rule,
  type Session,
  type Stack,
  codeMeaning,
  dirOf,
  isDiagonal,
} from "@leyworks/ley-sdk";

import { byId, onTap } from "./dom.js";
import { capital, isFloorItem, itemName } from "./looks.js";
import { SlotRow } from "./slots.js";

/** The keys that pick the inventory's first ten slots, in order. */
const SLOT_KEYS: readonly string[] = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "0"];

/** What the player is told on trying to build where area_info's rules say it may not. */
const NO_BUILD = "You may not build here: the rules of this Area do not let you (a home's owner may name you one of its builders).";

/** Words for refusals of building, by code, whatever the intent (gathering is an action). */
const REFUSALS: Partial<Record<number, string>> = {
  [Code.NOT_BUILDER]: "You may not build or gather here: in a home only its owner and the builders it names may.",
  [Code.BUDGET]: "You have changed enough for this minute: wait a little.",
  [Code.ITEM_CAP]: "This Area holds as many things as it may.",
  [Code.COOLDOWN]: "This was gathered too recently: give it time to grow back.",
  [Code.NOT_EMPTY]: "Empty the chest before taking it back.",
  [Code.TRADING]: "You have something on offer in a trade: what you carry is held until the trade is done or called off.",
  [Code.WORKING]: "It is working: what it holds stays there until it is done.",
  [Code.NOT_OWNER]: "Only the stall's owner may do that.",
};

/** Words for refusals of one kind of item intent, by code. */
const INTENT_REFUSALS: Partial<Record<number, Partial<Record<number, string>>>> = {
  [IntentKind.Place]: {
    [Code.NOTHING_THERE]: "That slot is empty.",
    [Code.NOT_ALLOWED]: "That cannot be placed.",
    [Code.OCCUPIED]: "Something is already there: pick a free square.",
  },
  [IntentKind.Take]: {
    [Code.NOTHING_THERE]: "Nothing placed there to take back.",
    [Code.INVENTORY_FULL]: "Your inventory has no room for it.",
  },
  [IntentKind.MoveItem]: {
    [Code.NOTHING_THERE]: "Nothing there to move (is the chest still there?).",
    [Code.INVENTORY_FULL]: "No room for it there.",
    [Code.OCCUPIED]: "Another kind is there: only whole stacks swap.",
  },
  [IntentKind.Action]: {
    [Code.INVENTORY_FULL]: "Your inventory has no room for what you gathered.",
  },
};

/** Words for refusals of a move within the inventory (no chest in it), by code. */
const BAR_REFUSALS: Partial<Record<number, string>> = {
  [Code.NOTHING_THERE]: "That slot is empty now: nothing to move.",
  [Code.INVENTORY_FULL]: "That stack is full: it takes no more.",
  [Code.OCCUPIED]: "Another kind is there: only whole stacks swap (split onto an empty slot).",
};

/** half is how many items splitting a stack of n moves: half, rounded down, at least 1. */
function half(n: number): number {
  return Math.max(1, Math.floor(n / 2));
}

/** A square of the Area. */
interface Square {
  x: number;
  y: number;
}

/** The crafting station (or stall) whose panel shows: where, which way from the body, its kind, and what it holds. */
export interface OpenStation {
  x: number;
  y: number;
  dir: Dir;
  kind: ItemKind;
  slots: readonly Stack[];
  /** The container as its last message said it (a stall's prices and owner's flag, a station's ready tick). */
  state: ContainerState;
}

/** isStall reports whether an item of kind is a stall placed. */
export function isStall(kind: ItemKind | undefined): boolean {
  return kind !== undefined && (kind.flags & ItemFlag.Stall) !== 0;
}

/** Builder runs the inventory bar, placing and taking back, and the chest panel. */
export class Builder {
  private selected: number | null = null;
  /** The chest whose panel shows. */
  private chest: Square | null = null;
  /** The square of a container the player just acted on: its container message opens the panel. */
  private opening: Square | null = null;
  /** The open chest as its last container message said it. */
  private chestState: ContainerState | null = null;
  /** onChest is told whenever the chest's panel opens, changes or closes (craft.ts follows it). */
  onChest: () => void = () => {};
  private readonly bar: SlotRow;
  private readonly barEl = byId("inventory", HTMLElement);
  private readonly stashEl = byId("stash", HTMLElement);
  private readonly chestSlots: SlotRow;
  private readonly chestEl = byId("chest", HTMLElement);
  private readonly chestTitle = byId("chest-title", HTMLElement);
  private readonly chestPut = byId("chest-put", HTMLButtonElement);
  private readonly chestReady = byId("chest-ready", HTMLElement);
  private readonly pickedEl = byId("picked", HTMLElement);
  private readonly pickedText = byId("picked-text", HTMLElement);
  private readonly splitBtn = byId("split", HTMLButtonElement);
  /** Whether the player plays with a finger: the line under the bar speaks of taps. */
  private touch = false;

  /** session is the session in play; note tells the player something; done gives the focus back to the map. */
  constructor(
    private readonly session: () => Session | null,
    private readonly note: (text: string) => void,
    private readonly done: () => void,
  ) {
    this.bar = new SlotRow(this.barEl, SLOT_KEYS, (i, shift) => {
      this.slotClick(i, shift);
      this.done();
    });
    onTap(this.splitBtn, () => {
      this.splitPicked();
      this.done();
    });
    this.chestSlots = new SlotRow(byId("chest-slots", HTMLElement), [], (k) => {
      this.chestPick(k);
      this.done();
    });
    onTap(byId("chest-put", HTMLButtonElement), () => {
      this.putIn();
      this.done();
    });
    onTap(byId("chest-close", HTMLButtonElement), () => {
      this.closeChest();
      this.done();
    });
  }

  /** reset forgets the last session's inventory, selection, chest and rules. */
  reset(): void {
    delete this.barEl.dataset["build"];
    this.select(null);
    this.closeChest();
    this.opening = null;
    this.bar.show([], new Map());
    this.showStash([], new Map());
  }

  /** showInventory draws what the session's character carries, and what waits in its stash. */
  showInventory(s: Session): void {
    this.bar.show(s.inventory, s.itemKinds);
    this.showStash(s.stash, s.itemKinds);
    this.showPicked();
  }

  /** setTouch says the player plays with a finger (the line under the bar then speaks of taps). */
  setTouch(touch: boolean): void {
    this.touch = touch;
    this.showPicked();
  }

  /**
   * showStash says what waits in the stash, kind by kind, under the bar
   * (hidden when nothing does); data-count is how many items, for tests
   * and tools.
   */
  private showStash(stash: readonly Stack[], kinds: ReadonlyMap<number, ItemKind>): void {
    const counts = new Map<number, number>();
    for (const st of stash) counts.set(st.kind, (counts.get(st.kind) ?? 0) + st.count);
    const n = [...counts.values()].reduce((a, b) => a + b, 0);
    this.stashEl.hidden = n === 0;
    this.stashEl.dataset["count"] = String(n);
    const what = [...counts].map(([k, c]) => `${kinds.get(k)?.label ?? `item ${k}`} × ${c}`).join(", ");
    const text = n === 0 ? "" : `${n} item${n === 1 ? " waits" : "s wait"} in your stash (${what}): they come back in an Area that lets you carry them.`;
    if (this.stashEl.textContent !== text) this.stashEl.textContent = text;
  }

  /**
   * showRules follows area_info's rules for this player: where it may not
   * build, nothing stays picked and the bar only shows what it carries.
   */
  showRules(s: Session): void {
    const may = this.may(s);
    if (!may) this.select(null);
    this.barEl.dataset["build"] = String(may);
  }

  /** may reports whether area_info's rules let this player build in the session's Area (place, take back, gather, use a chest). */
  may(s: Session): boolean {
    return ((s.view.info?.rules ?? 0) & Rule.MayBuild) !== 0;
  }

  /** onPlot reports whether square (x, y) may be built on as far as plots go: on one of them, or anywhere where the Area has none. */
  private onPlot(s: Session, x: number, y: number): boolean {
    return s.plots.length === 0 || s.plots.some((p) => x >= p.x && y >= p.y && x < p.x + p.w && y < p.y + p.h);
  }

  /** allowed reports whether this player may build in s's Area, telling it in words when not. */
  allowed(s: Session): boolean {
    if (this.may(s)) return true;
    this.note(NO_BUILD);
    return false;
  }

  /** pick picks inventory slot i, or puts it away when it was picked; where this player may not build, it says so instead. */
  pick(i: number): void {
    const s = this.live();
    if (s !== null && !this.allowed(s)) return;
    this.select(this.selected === i ? null : i);
  }

  /** pickKey picks the slot of a slot key ("1".."9", "0"); it reports whether key was one. */
  pickKey(key: string): boolean {
    const i = SLOT_KEYS.indexOf(key);
    if (i < 0) return false;
    this.pick(i);
    return true;
  }

  /**
   * slotClick takes a click or a tap on inventory slot i (shift: with
   * Shift). With no slot picked, or an empty one, it picks i; on the
   * picked slot it puts it away; on another slot it moves the picked stack
   * there, whole (onto an empty slot it moves, onto a stack of its kind
   * the two merge as far as the kind's stack goes, onto another kind the
   * two swap), and nothing stays picked; with Shift, a stack of more than
   * one moves half (split), and the rest stays picked. The keys only pick
   * (pickKey).
   */
  slotClick(i: number, shift: boolean): void {
    const s = this.live();
    if (s !== null && !this.allowed(s)) return;
    const from = this.selected;
    const st = s === null ? undefined : this.stack(s);
    if (s === null || from === null || from === i || st === undefined) {
      this.select(from === i ? null : i);
      return;
    }
    if (shift && st.count > 1) {
      void s.moveItem(from, i, half(st.count));
      return;
    }
    this.select(null);
    void s.moveItem(from, i, 0);
  }

  /** splitPicked moves half the picked stack (rounded down) to the inventory's first empty slot; the rest stays picked. */
  splitPicked(): void {
    const s = this.live();
    if (s !== null && !this.allowed(s)) return;
    const st = s === null ? undefined : this.stack(s);
    if (s === null || this.selected === null || st === undefined || st.count < 2) {
      this.note("Pick a slot holding more than one item to split it.");
      return;
    }
    const to = s.inventory.findIndex((q) => q.count === 0);
    if (to < 0) {
      this.note("Your inventory has no empty slot to split onto.");
      return;
    }
    void s.moveItem(this.selected, to, half(st.count));
  }

  private select(i: number | null): void {
    this.selected = i;
    this.bar.select(i);
    this.showPicked();
  }

  /**
   * showPicked says, under the bar, what the picked slot holds and what a
   * click (or a tap) on another slot does with it, and shows the Split
   * button while it holds more than one item; nothing while no slot is
   * picked. The bar's data-picked is the picked slot ("" for none), for
   * tests and tools.
   */
  private showPicked(): void {
    const i = this.selected;
    this.barEl.dataset["picked"] = i === null ? "" : String(i);
    const s = this.session();
    const st = i === null || s === null ? undefined : s.inventory[i];
    const n = st?.count ?? 0;
    this.pickedEl.hidden = i === null;
    this.splitBtn.hidden = i === null || n < 2;
    let text = "";
    if (i !== null) {
      const click = this.touch ? "tap" : "click";
      if (st === undefined || n === 0) {
        text = `Slot ${i + 1} picked, empty: ${click} another slot to pick it instead.`;
      } else {
        const label = s?.itemKinds.get(st.kind)?.label ?? `item ${st.kind}`;
        const halfWords = n < 2 ? "" : this.touch ? " · Split moves half" : " (Shift-click: half)";
        text = `${label} × ${n} picked: ${click} another slot to move ${n === 1 ? "it" : "them"} there${halfWords} · ${click} it again to put it away`;
      }
    }
    if (this.pickedText.textContent !== text) this.pickedText.textContent = text;
  }

  /** placing returns the kind of the picked slot's item when it can be placed here; undefined otherwise. */
  placing(s: Session): ItemKind | undefined {
    if (!this.may(s)) return undefined;
    const st = this.stack(s);
    const kind = st === undefined ? undefined : s.itemKinds.get(st.kind);
    return kind !== undefined && kind.slot !== ItemSlot.None ? kind : undefined;
  }

  private stack(s: Session): Stack | undefined {
    const st = this.selected === null ? undefined : s.inventory[this.selected];
    return st === undefined || st.count === 0 ? undefined : st;
  }

  /** place places one of the picked slot's items on the square next to the body in dir. */
  place(dir: Dir): void {
    const s = this.live();
    if (s !== null && !this.allowed(s)) return;
    if (s === null || this.selected === null) {
      this.note("Pick what to place first: a slot of your inventory (keys 1-9 and 0, or a click).");
      return;
    }
    const st = this.stack(s);
    if (st === undefined) {
      this.note(`Slot ${this.selected + 1} is empty.`);
      return;
    }
    const kind = s.itemKinds.get(st.kind);
    if (kind === undefined || kind.slot === ItemSlot.None) {
      this.note(`${capital(itemName(kind))} cannot be placed.`);
      return;
    }
    if (this.straight(s, dir)) void s.place(this.selected, dir);
  }

  /** placeFaced places the picked slot's item on the square the body faces. */
  placeFaced(): void {
    const p = this.session()?.predicted ?? null;
    if (p !== null) this.place(p.facing as Dir);
  }

  /** takeFaced takes back the item placed on the square the body faces. */
  takeFaced(): void {
    const s = this.live();
    const p = s?.predicted ?? null;
    if (s === null || p === null || !this.allowed(s)) return;
    const [dx, dy] = DIR_DELTA[p.facing & 7] as readonly [number, number];
    if (!s.view.objectsAt(p.x + dx, p.y + dy).some((o) => o.item !== 0)) {
      this.note("Nothing placed there to take back: face it first.");
      return;
    }
    void s.take(p.facing as Dir);
  }

  /** acting is told of an action on square (x, y): on a placed chest, its contents open the panel when they come. */
  acting(s: Session, x: number, y: number): void {
    this.opening = s.view.objectsAt(x, y).some((o) => o.kind === ObjectKind.Item && (s.view.itemKind(o.item)?.container ?? 0) > 0) ? { x, y } : null;
  }

  /**
   * onContainer takes a container message: the chest just opened, or the
   * one whose panel shows. The panel's data-stall is "owner" or "buyer"
   * for a stall ("" otherwise), data-ready a working station's ready tick
   * ("0" when idle).
   */
  onContainer(s: Session, c: ContainerState): void {
    const { x, y } = c;
    const at = (q: Square | null): boolean => q !== null && q.x === x && q.y === y;
    if (!at(this.chest) && !at(this.opening)) return;
    this.opening = null;
    this.chest = { x, y };
    const kind = this.chestKind(s, x, y);
    const stall = isStall(kind);
    this.chestEl.hidden = false;
    this.chestEl.dataset["x"] = String(x);
    this.chestEl.dataset["y"] = String(y);
    this.chestTitle.textContent = stall && c.owned ? "Your stall" : capital(itemName(kind));
    this.chestEl.dataset["station"] = kind?.station ?? "";
    this.chestEl.dataset["stall"] = stall ? (c.owned ? "owner" : "buyer") : "";
    this.chestEl.dataset["ready"] = String(c.ready);
    // Only a stall's owner stocks it; the others buy.
    this.chestPut.hidden = stall && !c.owned;
    this.chestState = c;
    this.chestSlots.show(c.slots, s.itemKinds);
    this.showReady(s);
    this.onChest();
  }

  /**
   * showReady says, in the open station's panel, when the recipe it works
   * on is done: "Working: ready in 7 s", counted from the Area's tick now
   * (Session.tickNow: the last snapshot's, counted on; the station's clock
   * runs only while the Area ticks). Hidden while it is idle. Call it every
   * frame.
   */
  showReady(s: Session): void {
    const ready = this.chestState?.ready ?? 0;
    const hz = s.view.info?.tickHz ?? 0;
    let text = "";
    if (this.chest !== null && ready > 0 && hz > 0) {
      const left = Math.ceil((ready - s.tickNow()) / hz);
      text = left > 0 ? `Working: ready in ${left} s.` : "Working: ready any moment now.";
      this.chestReady.dataset["left"] = String(Math.max(0, left));
    }
    this.chestReady.hidden = text === "";
    if (this.chestReady.textContent !== text) this.chestReady.textContent = text;
  }

  /** chestKind is the kind of the item placed on (x, y) (the container's), if the view knows it. */
  private chestKind(s: Session, x: number, y: number): ItemKind | undefined {
    const o = s.view.objectsAt(x, y).find((q) => q.item !== 0);
    return o === undefined ? undefined : s.view.itemKind(o.item);
  }

  /**
   * station is the crafting station whose panel shows (a container whose
   * kind names a station), with what it holds; undefined when the panel
   * is closed, or shows a plain chest.
   */
  station(s: Session): OpenStation | undefined {
    const o = this.open(s);
    return o === undefined || o.kind.station === "" ? undefined : o;
  }

  /** stall is the stall whose panel shows, with what it holds and asks; undefined when the panel is closed, or shows no stall. */
  stall(s: Session): OpenStation | undefined {
    const o = this.open(s);
    return o === undefined || !isStall(o.kind) ? undefined : o;
  }

  /** open is the container whose panel shows, if the body is next to it and its kind is known. */
  private open(s: Session): OpenStation | undefined {
    const c = this.chest;
    const state = this.chestState;
    const kind = c === null ? undefined : this.chestKind(s, c.x, c.y);
    const dir = this.chestDir(s);
    if (c === null || state === null || kind === undefined || dir === undefined) return undefined;
    return { x: c.x, y: c.y, dir, kind, slots: state.slots, state };
  }

  /** follow closes the chest's panel once the body is not next to it, or it is gone. */
  follow(s: Session): void {
    const c = this.chest;
    const p = s.confirmed;
    if (c === null || p === null) return;
    const there = s.view.objectsAt(c.x, c.y).some((o) => (s.view.itemKind(o.item)?.container ?? 0) > 0);
    if (!there || Math.max(Math.abs(c.x - p.x), Math.abs(c.y - p.y)) > 1) this.closeChest();
  }

  /** closeChest hides the chest's panel; it reports whether one showed. */
  closeChest(): boolean {
    const was = this.chest !== null;
    this.chest = null;
    this.chestState = null;
    this.chestEl.hidden = true;
    this.chestReady.hidden = true;
    if (was) this.onChest();
    return was;
  }

  /**
   * chestPick takes a click on chest slot k: its stack moves into the
   * picked inventory slot (the first empty one when none is picked); on an
   * empty chest slot the picked inventory slot's stack moves there.
   */
  chestPick(k: number): void {
    const s = this.live();
    const dir = s === null ? undefined : this.chestDir(s);
    if (s === null || dir === undefined || !this.allowed(s)) return;
    const held = this.chestSlots.holds(k);
    if (held) {
      const to = this.selected ?? s.inventory.findIndex((st) => st.count === 0);
      if (to < 0) {
        this.note("Your inventory has no room: empty a slot first.");
        return;
      }
      void s.moveItem(CONTAINER_SLOT + k, to, 0, dir);
      return;
    }
    if (this.stack(s) === undefined || this.selected === null) {
      this.note(`Pick a slot of your inventory to put in ${this.chestWords()}.`);
      return;
    }
    void s.moveItem(this.selected, CONTAINER_SLOT + k, 0, dir);
  }

  /** putIn moves the picked inventory slot's stack into the open chest's first empty slot. */
  putIn(): void {
    const s = this.live();
    if (s !== null && !this.allowed(s)) return;
    const dir = s === null ? undefined : this.chestDir(s);
    if (s === null || dir === undefined) {
      this.note("Open a chest or a cauldron first: act on it (Space) next to it.");
      return;
    }
    if (this.stack(s) === undefined || this.selected === null) {
      this.note(`Pick a slot of your inventory to put in ${this.chestWords()}.`);
      return;
    }
    const k = this.chestSlots.firstEmpty();
    if (k < 0) {
      this.note(`${capital(this.chestWords())} is full.`);
      return;
    }
    void s.moveItem(this.selected, CONTAINER_SLOT + k, 0, dir);
  }

  /** chestWords names the open chest for people: "the chest", "the cauldron". */
  private chestWords(): string {
    return `the ${(this.chestTitle.textContent ?? "").replace(/^an? /i, "").toLowerCase() || "chest"}`;
  }

  /** chestDir is the direction from the body to the open chest; undefined when none is open. */
  private chestDir(s: Session): Dir | undefined {
    const c = this.chest;
    const p = s.confirmed;
    if (c === null || p === null) return undefined;
    return dirOf(c.x - p.x, c.y - p.y);
  }

  /** refusal says a refusal (code) of intent in words, if it is building's; undefined otherwise. */
  refusal(intent: IntentRequest, code: number): string | undefined {
    const kind = intent.kind;
    const item = intent.item;
    const inBar = kind === IntentKind.MoveItem && item !== undefined && item.from < CONTAINER_SLOT && item.to < CONTAINER_SLOT;
    const own = (inBar ? BAR_REFUSALS[code] : undefined) ?? INTENT_REFUSALS[kind]?.[code] ?? REFUSALS[code];
    if (own !== undefined) return own;
    if (kind === IntentKind.Place || kind === IntentKind.Take || kind === IntentKind.MoveItem) return `${capital(codeMeaning(code))}.`;
    return undefined;
  }

  /** facing says what building does with the faced square (x, y), for the line beside the map; "" for nothing (off the plots too). */
  facing(s: Session, x: number, y: number, touch: boolean): string {
    if (!this.may(s) || !this.onPlot(s, x, y)) return "";
    const words: string[] = [];
    if (s.view.objectsAt(x, y).some((o) => o.item !== 0)) words.push(touch ? "Take takes it back" : "T takes it back");
    const kind = this.placing(s);
    if (kind !== undefined && this.free(s, x, y, kind)) words.push(`${touch ? "Build" : "B"} places ${itemName(kind)}`);
    return words.join(", ");
  }

  /** free reports whether, as far as the view knows, an item of kind may be placed on (x, y): its slot there empty, no body there. */
  private free(s: Session, x: number, y: number, kind: ItemKind): boolean {
    const v = s.view;
    if (!s.walkable(x, y) || v.entityAt(x, y, s.entity) !== undefined) return false;
    const floor = kind.slot === ItemSlot.Floor;
    return !v.objectsAt(x, y).some((o) => isFloorItem(v.itemKind(o.item)) === floor);
  }

  private live(): Session | null {
    const s = this.session();
    return s !== null && s.ready ? s : null;
  }

  /** straight reports whether dir may be built towards: a diagonal only where the Area allows diagonals (else the player is told). */
  private straight(s: Session, dir: Dir): boolean {
    if (!isDiagonal(dir) || ((s.view.info?.rules ?? 0) & Rule.Diagonal) !== 0) return true;
    this.note("No diagonals in this Area: stand straight beside it.");
    return false;
  }
}
