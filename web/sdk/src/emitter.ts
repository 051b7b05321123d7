/**
 * A small typed event emitter: `on(name, fn)` with the payload type of
 * each event checked by the compiler.
 *
 * @module
 */

/** A listener of events of payload type T. */
export type Listener<T> = (payload: T) => void;

/**
 * Emitter delivers events of the map E (event name to payload type). A
 * listener that throws is reported to onListenerError and does not stop
 * the others.
 */
export class Emitter<E extends object> {
  private readonly listeners = new Map<keyof E, Set<Listener<never>>>();

  constructor(private readonly onListenerError: (event: string, err: unknown) => void = () => {}) {}

  /** on adds a listener of event name and returns a function that removes it. */
  on<K extends keyof E>(name: K, fn: Listener<E[K]>): () => void {
    let set = this.listeners.get(name);
    if (set === undefined) {
      set = new Set();
      this.listeners.set(name, set);
    }
    set.add(fn as Listener<never>);
    return () => this.off(name, fn);
  }

  /** once adds a listener that runs at most once. */
  once<K extends keyof E>(name: K, fn: Listener<E[K]>): () => void {
    const off = this.on(name, (p) => {
      off();
      fn(p);
    });
    return off;
  }

  /** off removes a listener. */
  off<K extends keyof E>(name: K, fn: Listener<E[K]>): void {
    this.listeners.get(name)?.delete(fn as Listener<never>);
  }

  /** emit delivers payload to the listeners of name, in the order they were added. */
  emit<K extends keyof E>(name: K, payload: E[K]): void {
    const set = this.listeners.get(name);
    if (set === undefined) return;
    for (const fn of [...set]) {
      try {
        (fn as Listener<E[K]>)(payload);
      } catch (err) {
        this.onListenerError(String(name), err);
      }
    }
  }
}
