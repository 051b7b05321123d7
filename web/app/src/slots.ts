/**
 * A row of item slots on the page (the inventory bar, a chest's panel):
 * one button a slot, showing its kind's icon (its look, drawn), its label
 * and its count, and a selected one highlighted. Each slot says what it
 * holds in data attributes (data-slot, data-kind, data-count; data-kind
 * and data-count are "0" for an empty slot), so that tests and tools can
 * read it.
 */

import type { ItemKind, Stack } from "@leyworks/ley-sdk";

import { onTap } from "./dom.js";
import { drawLook, itemLabel } from "./looks.js";

/** The side of a slot's icon, in CSS pixels. */
const ICON = 28;

/** SlotRow draws the slots of one inventory or container into a list element. */
export class SlotRow {
  private readonly buttons: HTMLButtonElement[] = [];
  private readonly shown: string[] = [];
  private selectedSlot: number | null = null;
  private slots: readonly Stack[] = [];

  /**
   * keys are the keys that pick the first slots, shown on them ("1".."0"
   * for the inventory, none for a chest); onPick is told a slot clicked
   * or tapped, and whether with Shift.
   */
  constructor(
    private readonly el: HTMLElement,
    private readonly keys: readonly string[],
    private readonly onPick: (slot: number, shift: boolean) => void,
  ) {}

  /** show draws slots (drawing again only those that changed), each by its kind in kinds. */
  show(slots: readonly Stack[], kinds: ReadonlyMap<number, ItemKind>): void {
    this.slots = slots;
    while (this.buttons.length > slots.length) {
      this.buttons.pop()?.remove();
      this.shown.pop();
    }
    while (this.buttons.length < slots.length) this.add(this.buttons.length);
    slots.forEach((st, i) => {
      const kind = kinds.get(st.kind);
      const key = `${st.kind}:${st.count}:${itemLabel(kind, kinds, st.kind)}`;
      if (this.shown[i] !== key) {
        this.shown[i] = key;
        this.draw(this.buttons[i] as HTMLButtonElement, i, st, kind, kinds);
      }
    });
    this.mark();
  }

  /** holds reports whether slot i held a stack when last shown. */
  holds(i: number): boolean {
    return (this.slots[i]?.count ?? 0) > 0;
  }

  /** firstEmpty returns the first slot that was empty when last shown, or -1. */
  firstEmpty(): number {
    return this.slots.findIndex((st) => st.count === 0);
  }

  /** select highlights slot (null: none), scrolled into sight. */
  select(slot: number | null): void {
    this.selectedSlot = slot;
    this.mark();
    this.buttons[slot ?? -1]?.scrollIntoView({ block: "nearest", inline: "nearest" });
  }

  private mark(): void {
    this.buttons.forEach((b, i) => {
      const on = i === this.selectedSlot;
      b.classList.toggle("selected", on);
      b.setAttribute("aria-pressed", String(on));
    });
  }

  private add(i: number): void {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "slot";
    b.dataset["slot"] = String(i);
    onTap(b, (_x, _y, shift) => this.onPick(i, shift));
    this.el.append(b);
    this.buttons.push(b);
    this.shown.push("");
  }

  /** draw shows stack st, of kind, on b, the button of slot i. */
  private draw(b: HTMLButtonElement, i: number, st: Stack, kind: ItemKind | undefined, kinds: ReadonlyMap<number, ItemKind>): void {
    const empty = st.count === 0;
    b.dataset["kind"] = String(empty ? 0 : st.kind);
    b.dataset["count"] = String(empty ? 0 : st.count);
    const label = empty ? "" : (kind?.label ?? `item ${st.kind}`);
    b.title = empty ? `slot ${i + 1}: empty` : `slot ${i + 1}: ${itemLabel(kind, kinds, st.kind)} × ${st.count}`;
    const parts: HTMLElement[] = [];
    const key = this.keys[i];
    if (key !== undefined) parts.push(span("key", key));
    if (!empty) {
      parts.push(icon(kind), span("label", label));
      if (st.count > 1) parts.push(span("count", String(st.count)));
    }
    b.replaceChildren(...parts);
  }
}

function span(cls: string, text: string): HTMLSpanElement {
  const e = document.createElement("span");
  e.className = cls;
  e.textContent = text;
  return e;
}

/** icon draws an item kind's look on a small canvas. */
function icon(kind: ItemKind | undefined): HTMLCanvasElement {
  const c = document.createElement("canvas");
  const dpr = window.devicePixelRatio || 1;
  c.width = Math.round(ICON * dpr);
  c.height = Math.round(ICON * dpr);
  c.className = "icon";
  const ctx = c.getContext("2d");
  if (ctx !== null) {
    ctx.scale(dpr, dpr);
    drawLook(ctx, kind, 0, 0, ICON);
  }
  return c;
}
