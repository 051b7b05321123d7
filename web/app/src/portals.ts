/**
 * Portal squares as far as a client can know them. The protocol does not
 * tell a client where an Area's portals are; a body standing with the
 * transit flag stands on one, so every square seen that way is
 * remembered (in localStorage, per Area) and drawn from then on.
 */

const PREFIX = "ley.portals.";

/** PortalMemory remembers the portal squares seen, per Area. */
export class PortalMemory {
  private readonly areas = new Map<number, Set<string>>();

  private load(area: number): Set<string> {
    let s = this.areas.get(area);
    if (s === undefined) {
      s = new Set();
      try {
        const raw = localStorage.getItem(PREFIX + area);
        if (raw !== null) for (const k of JSON.parse(raw) as string[]) s.add(k);
      } catch {
        // Storage off or garbled: start empty.
      }
      this.areas.set(area, s);
    }
    return s;
  }

  /** saw records that (x, y) of area is a portal. */
  saw(area: number, x: number, y: number): void {
    const s = this.load(area);
    const k = `${x},${y}`;
    if (s.has(k)) return;
    s.add(k);
    try {
      localStorage.setItem(PREFIX + area, JSON.stringify([...s]));
    } catch {
      // Storage full or off: keep it for this page.
    }
  }

  /** squares lists the portal squares known in area. */
  squares(area: number): [number, number][] {
    return [...this.load(area)].map((k) => k.split(",").map(Number) as [number, number]);
  }
}
