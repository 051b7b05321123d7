/**
 * Crafting on the play screen. A placed container whose kind names a
 * crafting station (a cauldron) opens in the chest's panel (build.ts),
 * with a Craft button: the server matches what the station holds, whole,
 * against the station's recipes, and on a match turns it into what the
 * recipe makes, in the same container (the panel shows it, from the
 * container message), and the character learns the recipe. A mix that
 * matches none is answered NO_RECIPE: "Nothing comes of that mix."
 *
 * The Recipes list shows the recipes the character knows (the session's
 * recipes, from the server's recipes messages): the inputs and outputs
 * of each, by their kinds' labels. It shows nothing else: the server
 * never tells a client a recipe its character has neither made nor
 * learned, and this page guesses none. It shows while a station's panel
 * is open, and whenever the character knows a recipe.
 *
 * A recipe may take time (a furnace's bricks): crafting starts it, and
 * the station's panel counts down to when it is done (build.ts).
 *
 * An item of the inventory whose kind teaches (a blueprint,
 * ItemFlag.Teaches) gets a Use button, under the bar: using it teaches
 * its recipe (refused KNOWN when the character knows it already).
 */

import {
  Code,
  IntentKind,
  type IntentOutcome,
  type IntentRequest,
  type ItemKind,
  ItemFlag,
  type Recipe,
  type RecipeItem,
  type Session,
  codeMeaning,
} from "@leyworks/ley-sdk";

import type { Builder } from "./build.js";
import { byId, onTap } from "./dom.js";
import { capital, itemName } from "./looks.js";

/** What the player is told of a mix that matches no recipe of the station (NO_RECIPE). */
export const NO_MIX = "Nothing comes of that mix.";

/** Words for refusals of crafting and of using an item, by intent kind and code. */
const REFUSALS: Partial<Record<number, Partial<Record<number, string>>>> = {
  [IntentKind.Craft]: {
    [Code.NO_RECIPE]: NO_MIX,
    [Code.INVENTORY_FULL]: "What the mix makes would not fit in it: take something out first.",
    [Code.WORKING]: "It is working on a recipe already: wait until it is done.",
  },
  [IntentKind.Use]: {
    [Code.KNOWN]: "You know that recipe already.",
    [Code.NOT_ALLOWED]: "There is nothing to learn from that.",
    [Code.NOTHING_THERE]: "That slot is empty now.",
  },
};

/** recipeTitle is a recipe's name for people: "stone_floor" is "Stone floor". */
export function recipeTitle(r: Pick<Recipe, "name">): string {
  return capital(r.name.replace(/_/g, " "));
}

/** items says a recipe's inputs or outputs in words: "Plank × 4 + Stone × 1". */
function items(list: readonly RecipeItem[], kinds: ReadonlyMap<number, ItemKind>): string {
  return list.map((e) => `${kinds.get(e.kind)?.label ?? `item ${e.kind}`} × ${e.count}`).join(" + ");
}

/** recipeLine says a recipe: "Planks: Wood × 2 → Plank × 4"; one that takes time says how long: "Brick: Stone × 2 → Brick × 1 (10 s)". */
export function recipeLine(r: Recipe, kinds: ReadonlyMap<number, ItemKind>): string {
  return `${recipeTitle(r)}: ${items(r.inputs, kinds)} → ${items(r.outputs, kinds)}${r.seconds > 0 ? ` (${r.seconds} s)` : ""}`;
}

/** tally is what a list of stacks (or of a recipe's lines) holds, kind by kind, sorted by kind: empty ones left out. */
function tally(list: readonly { kind: number; count: number }[]): RecipeItem[] {
  const m = new Map<number, number>();
  for (const e of list) if (e.count > 0) m.set(e.kind, (m.get(e.kind) ?? 0) + e.count);
  return [...m].sort((a, b) => a[0] - b[0]).map(([kind, count]) => ({ kind, count }));
}

/** sameItems reports whether a and b hold the same kinds and counts (a multiset), in any order. */
function sameItems(a: readonly RecipeItem[], b: readonly RecipeItem[]): boolean {
  const key = (l: readonly RecipeItem[]): string => tally(l).map((e) => `${e.kind}:${e.count}`).join(",");
  return key(a) === key(b);
}

/** teaches reports whether an item of kind teaches a recipe when used (a blueprint). */
export function teaches(kind: ItemKind | undefined): boolean {
  return kind !== undefined && (kind.flags & ItemFlag.Teaches) !== 0;
}

/** Crafter runs the Craft button, the Recipes list and the Use buttons. */
export class Crafter {
  private readonly craftBtn = byId("chest-craft", HTMLButtonElement);
  private readonly panel = byId("recipes", HTMLElement);
  private readonly list = byId("recipe-list", HTMLUListElement);
  private readonly listNote = byId("recipes-note", HTMLElement);
  private readonly usable = byId("usable", HTMLUListElement);
  private listKey = "";
  private usableKey = "";

  /** session is the session in play; say tells the player something (the status line); done gives the focus back to the map. */
  constructor(
    private readonly session: () => Session | null,
    private readonly builder: Builder,
    private readonly say: (text: string) => void,
    private readonly done: () => void,
  ) {
    onTap(this.craftBtn, () => {
      this.craft();
      this.done();
    });
  }

  /** reset forgets the last session's recipes and blueprints. */
  reset(): void {
    this.show(null);
  }

  /**
   * show draws what follows the session: the Craft button (with a
   * station's panel), the Recipes list, the Use buttons. Call it on every
   * recipes, inventory and area_info event, and as the chest's panel
   * opens, changes or closes.
   */
  show(s: Session | null): void {
    const station = s === null ? undefined : this.builder.station(s);
    this.craftBtn.hidden = station === undefined;
    this.showRecipes(s, station?.kind);
    this.showUsable(s);
  }

  /**
   * showRecipes lists the recipes the character knows (data-code,
   * data-name and data-station on each line, for tests and tools), those
   * of the open station first; it shows while a station's panel is open,
   * or while the character knows any.
   */
  private showRecipes(s: Session | null, station: ItemKind | undefined): void {
    const known = s?.recipes ?? [];
    const kinds = s?.itemKinds ?? new Map<number, ItemKind>();
    const here = station?.station ?? "";
    const key = JSON.stringify([here, known.map((r) => [r.code, r.station, recipeLine(r, kinds)])]);
    if (key === this.listKey) return;
    this.listKey = key;
    this.panel.hidden = known.length === 0 && station === undefined;
    this.panel.dataset["count"] = String(known.length);
    const sorted = [...known].sort((a, b) => Number(b.station === here) - Number(a.station === here) || a.code - b.code);
    this.list.replaceChildren(
      ...sorted.map((r) => {
        const e = document.createElement("li");
        e.textContent = recipeLine(r, kinds);
        e.title = `made at ${this.stationName(kinds, r.station)}`;
        e.dataset["code"] = String(r.code);
        e.dataset["name"] = r.name;
        e.dataset["station"] = r.station;
        if (r.station === here) e.className = "here";
        return e;
      }),
    );
    const mine = known.filter((r) => r.station === here).length;
    const note =
      station === undefined
        ? ""
        : mine === 0
          ? `You know no recipe of ${itemName(station)} yet: put things in it and craft to find one, or use a blueprint.`
          : `Put in exactly what a recipe takes, then Craft.`;
    if (this.listNote.textContent !== note) this.listNote.textContent = note;
    this.listNote.hidden = note === "";
  }

  /** stationName names a station for people, by the first item kind that is one: "a cauldron". */
  private stationName(kinds: ReadonlyMap<number, ItemKind>, station: string): string {
    for (const k of kinds.values()) if (k.station === station) return itemName(k);
    return itemName({ label: station.replace(/_/g, " ") } as ItemKind);
  }

  /** showUsable gives each inventory slot whose kind teaches a Use button (data-slot, data-kind on its line). */
  private showUsable(s: Session | null): void {
    const rows: { slot: number; kind: ItemKind }[] = [];
    s?.inventory.forEach((st, slot) => {
      const kind = s.itemKinds.get(st.kind);
      if (st.count > 0 && kind !== undefined && teaches(kind)) rows.push({ slot, kind });
    });
    const key = JSON.stringify(rows.map((r) => [r.slot, r.kind.code, r.kind.label]));
    if (key === this.usableKey) return;
    this.usableKey = key;
    this.usable.hidden = rows.length === 0;
    this.usable.replaceChildren(
      ...rows.map(({ slot, kind }) => {
        const e = document.createElement("li");
        e.dataset["slot"] = String(slot);
        e.dataset["kind"] = String(kind.code);
        const label = document.createElement("span");
        label.textContent = `${kind.label} (slot ${slot + 1})`;
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = "Use";
        b.title = `use ${itemName(kind)}: learn the recipe it teaches`;
        onTap(b, () => {
          this.use(slot);
          this.done();
        });
        e.append(label, " ", b);
        return e;
      }),
    );
  }

  private live(): Session | null {
    const s = this.session();
    return s !== null && s.ready ? s : null;
  }

  /**
   * craft crafts at the station whose panel shows. An empty station is
   * answered in words without an intent (nothing can come of nothing).
   */
  craft(): void {
    const s = this.live();
    if (s === null) return;
    const st = this.builder.station(s);
    if (st === undefined) {
      this.say("Open a cauldron first: act on it (Space) next to it.");
      return;
    }
    if (!this.builder.allowed(s)) return;
    const mix = tally(st.slots);
    const where = itemName(st.kind).replace(/^an? /, "the ");
    if (mix.length === 0) {
      this.say(`${capital(where)} is empty: put in what you would mix first.`);
      return;
    }
    const station = st.kind.station;
    void s.craft(st.dir).then((o) => {
      if (this.session() !== s) return;
      this.crafted(s, o, station, mix, where);
    });
  }

  /** crafted tells the player how a craft went; mix is what the station held as it was sent. */
  private crafted(s: Session, o: IntentOutcome, station: string, mix: readonly RecipeItem[], where: string): void {
    switch (o.status) {
      case "applied": {
        // The recipes the character knows came before the snapshot that
        // applied the craft: the one it made is among them.
        const r = s.recipes.find((q) => q.station === station && sameItems(q.inputs, mix));
        this.say(
          r === undefined
            ? `Done: see what ${where} holds now.`
            : r.seconds > 0
              ? `${recipeTitle(r)}: ${items(r.inputs, s.itemKinds)} will make ${items(r.outputs, s.itemKinds)} in ${where}, in ${r.seconds} s of play here.`
              : `${recipeTitle(r)}: ${items(r.inputs, s.itemKinds)} made ${items(r.outputs, s.itemKinds)} in ${where}.`,
        );
        return;
      }
      case "refused":
        this.say(this.refusal({ kind: IntentKind.Craft, dir: 0, target: { x: 0, y: 0 } }, o.code, where));
        return;
      case "unknown":
        this.say(`The connection dropped as you crafted: ${where} shows what came of it.`);
        return;
      case "voided":
        return;
    }
  }

  /** use uses the item of inventory slot slot (a blueprint: its recipe is learned). */
  use(slot: number): void {
    const s = this.live();
    if (s === null) return;
    const st = s.inventory[slot];
    const kind = st === undefined || st.count === 0 ? undefined : s.itemKinds.get(st.kind);
    if (kind === undefined) {
      this.say("That slot is empty.");
      return;
    }
    if (!teaches(kind)) {
      this.say("There is nothing to learn from that.");
      return;
    }
    const before = new Set(s.recipes.map((r) => r.code));
    void s.use(slot).then((o) => {
      if (this.session() !== s) return;
      switch (o.status) {
        case "applied": {
          const learned = s.recipes.filter((r) => !before.has(r.code));
          this.say(learned.length === 0 ? `You studied ${itemName(kind)}.` : `You learned ${learned.map((r) => `the recipe “${recipeLine(r, s.itemKinds)}”`).join(" and ")}.`);
          return;
        }
        case "refused":
          this.say(this.refusal({ kind: IntentKind.Use, dir: 0, target: { x: 0, y: 0 } }, o.code, "it"));
          return;
        case "unknown":
          this.say("The connection dropped as you used it: the Recipes list shows what you know.");
          return;
        case "voided":
          return;
      }
    });
  }

  /** refusal says a refusal (code) of a craft or use intent in words; where names the station. */
  refusal(intent: IntentRequest, code: number, where: string): string {
    const own = REFUSALS[intent.kind]?.[code];
    if (own !== undefined) return own;
    if (intent.kind === IntentKind.Craft && code === Code.NOTHING_THERE) return `There is no station to craft at there any more (is ${where} still there?).`;
    return this.builder.refusal(intent, code) ?? `${capital(codeMeaning(code))}.`;
  }
}
