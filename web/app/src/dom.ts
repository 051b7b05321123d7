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
