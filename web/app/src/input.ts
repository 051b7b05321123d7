/**
 * Keyboard and pointer input of the play screen: held keys step the body
 * at the Area's pace (one step each step_ms, never more queued than the
 * Area takes), a click walks to a square (move_to), Space or Escape stop,
 * Shift-click acts on a square.
 */

import { type Session, Rule, dirOf } from "@leyworks/ley-sdk";

const KEYS: Record<string, [number, number]> = {
  ArrowUp: [0, -1],
  w: [0, -1],
  k: [0, -1],
  ArrowDown: [0, 1],
  s: [0, 1],
  j: [0, 1],
  ArrowLeft: [-1, 0],
  a: [-1, 0],
  h: [-1, 0],
  ArrowRight: [1, 0],
  d: [1, 0],
  l: [1, 0],
  q: [-1, -1],
  e: [1, -1],
  z: [-1, 1],
  c: [1, 1],
};

/** Input turns the player's keys and clicks into intents of the session. */
export class Input {
  private readonly held = new Set<string>();
  private nextStepAt = 0;

  constructor(
    private readonly session: () => Session | null,
    private readonly onMoveTo: (x: number, y: number) => void,
    private readonly onStop: () => void,
  ) {}

  /** keydown takes a key press; it reports whether the key was the game's. */
  keydown(ev: KeyboardEvent): boolean {
    if (ev.target instanceof HTMLInputElement || ev.ctrlKey || ev.metaKey || ev.altKey) return false;
    const key = ev.key.length === 1 ? ev.key.toLowerCase() : ev.key;
    if (key === " " || key === "Escape") {
      this.held.clear();
      this.onStop();
      return true;
    }
    if (KEYS[key] === undefined) return false;
    this.held.add(key);
    this.tick(performance.now());
    return true;
  }

  /** keyup takes a key release. */
  keyup(ev: KeyboardEvent): void {
    this.held.delete(ev.key.length === 1 ? ev.key.toLowerCase() : ev.key);
  }

  /** blur forgets the held keys (the page lost the focus). */
  blur(): void {
    this.held.clear();
  }

  /** click takes a click on square (x, y): walk there, or act on it with Shift. */
  click(x: number, y: number, shift: boolean): void {
    const s = this.session();
    if (s === null) return;
    if (shift) {
      void s.action(x, y);
      return;
    }
    this.onMoveTo(x, y);
  }

  /** tick steps while keys are held, at the Area's pace; call it every frame. */
  tick(now: number): void {
    const s = this.session();
    if (s === null || !s.ready || this.held.size === 0 || now < this.nextStepAt) return;
    const info = s.view.info;
    if (info === null || s.pending >= Math.max(info.queueLen - 1, 1)) return;
    let dx = 0;
    let dy = 0;
    for (const k of this.held) {
      const d = KEYS[k];
      if (d !== undefined) {
        dx += d[0];
        dy += d[1];
      }
    }
    if (dx !== 0 && dy !== 0 && (info.rules & Rule.Diagonal) === 0) dy = 0;
    const dir = dirOf(dx, dy);
    if (dir === undefined) return;
    this.nextStepAt = now + info.stepMs;
    void s.step(dir);
  }
}
