/** Small DOM helpers. */

/** byId returns the element of id, checked to be of type. */
export function byId<T extends HTMLElement>(id: string, type: new () => T): T {
  const e = document.getElementById(id);
  if (!(e instanceof type)) throw new Error(`#${id} is not a ${type.name}`);
  return e;
}

/** show shows exactly one of the sections. */
export function show(visible: HTMLElement, ...others: HTMLElement[]): void {
  visible.hidden = false;
  for (const o of others) o.hidden = true;
}

/** field returns the value of the named input of form, trimmed unless it is a password. */
export function field(form: HTMLFormElement, name: string): string {
  const e = form.elements.namedItem(name);
  if (!(e instanceof HTMLInputElement)) return "";
  return e.type === "password" ? e.value : e.value.trim();
}

/** li makes a list item with text and data attributes. */
export function li(text: string, data: Record<string, string> = {}, cls = ""): HTMLLIElement {
  const e = document.createElement("li");
  e.textContent = text;
  if (cls !== "") e.className = cls;
  for (const [k, v] of Object.entries(data)) e.dataset[k] = v;
  return e;
}

/** button makes a button (type "button") with text and a title, calling onClick when clicked. */
export function button(text: string, title: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.title = title;
  b.addEventListener("click", onClick);
  return b;
}

/**
 * onTap calls fn for a click on el, and for a tap of a finger or a pen on
 * it (a press and release within 600 ms, moved less than 12 px), at once
 * from the pointer events rather than from the click a browser may or may
 * not make of the tap; the click that follows a tap it took is ignored.
 */
export function onTap(el: HTMLElement, fn: (clientX: number, clientY: number, shift: boolean) => void): void {
  let down: { id: number; x: number; y: number; t: number } | null = null;
  let tappedAt = -Infinity;
  el.addEventListener("pointerdown", (ev) => {
    if (ev.pointerType === "touch" || ev.pointerType === "pen") down = { id: ev.pointerId, x: ev.clientX, y: ev.clientY, t: ev.timeStamp };
  });
  el.addEventListener("pointercancel", () => (down = null));
  el.addEventListener("pointerup", (ev) => {
    const d = down;
    down = null;
    if (d === null || d.id !== ev.pointerId || ev.timeStamp - d.t > 600 || Math.hypot(ev.clientX - d.x, ev.clientY - d.y) >= 12) return;
    tappedAt = ev.timeStamp;
    fn(ev.clientX, ev.clientY, false);
  });
  el.addEventListener("click", (ev) => {
    if (ev.timeStamp - tappedAt < 800) return;
    fn(ev.clientX, ev.clientY, ev.shiftKey);
  });
}
