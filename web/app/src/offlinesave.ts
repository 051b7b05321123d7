/**
 * The offline save: the offline Area's state (what OfflineRealm's save
 * and onSave give), kept in this browser's IndexedDB, in one database
 * (ley-offline), one store (saves), under one key (home). It is the
 * browser's own and never the realm's: nothing made offline reaches the
 * realm.
 *
 * Every failure comes as a {@link SaveError} whose message says, in
 * words for people, what could not be done and why.
 */

const DB_NAME = "ley-offline";
const DB_VERSION = 1;
const STORE = "saves";
const KEY = "home";

/** SaveError: the offline save could not be read or kept; the message says why. */
export class SaveError extends Error {
  override name = "SaveError";
}

/** why names the cause of an IndexedDB failure. */
function why(e: unknown): string {
  if (e instanceof DOMException) return e.message === "" ? e.name : e.message;
  if (e instanceof Error) return e.message;
  return e === null || e === undefined ? "the browser gave no reason" : String(e);
}

/** The open database, once asked for (null: not yet, or the last open failed or was closed). */
let opened: Promise<IDBDatabase> | null = null;

/** open opens the database once per page, making its store the first time. */
function open(): Promise<IDBDatabase> {
  if (opened !== null) return opened;
  const p = new Promise<IDBDatabase>((resolve, reject) => {
    if (typeof indexedDB === "undefined") {
      reject(new SaveError("This browser keeps no offline save (it has no IndexedDB)."));
      return;
    }
    const req = indexedDB.open(DB_NAME, DB_VERSION);
    req.onupgradeneeded = () => req.result.createObjectStore(STORE);
    req.onsuccess = () => {
      const db = req.result;
      // Another tab deleting or upgrading the database: let it, and open
      // it again at the next load or store.
      db.onversionchange = () => {
        db.close();
        opened = null;
      };
      resolve(db);
    };
    req.onerror = () => reject(new SaveError(`The offline save cannot be opened in this browser: ${why(req.error)}.`));
  });
  opened = p;
  p.catch(() => {
    if (opened === p) opened = null; // a failed open may be tried again
  });
  return p;
}

/** loadSave reads the offline save: undefined when there is none yet. */
export async function loadSave(): Promise<Uint8Array | undefined> {
  const db = await open();
  return new Promise((resolve, reject) => {
    const fail = (e: unknown): void => reject(new SaveError(`The offline save cannot be read: ${why(e)}.`));
    try {
      const req = db.transaction(STORE, "readonly").objectStore(STORE).get(KEY);
      req.onsuccess = () => {
        const v: unknown = req.result;
        if (v === undefined) resolve(undefined);
        else if (v instanceof Uint8Array) resolve(v);
        else reject(new SaveError("The offline save holds something that is not a save."));
      };
      req.onerror = () => fail(req.error);
    } catch (e) {
      fail(e); // the database closed under us
    }
  });
}

/** storeSave keeps save as the offline save, replacing the one before; it resolves once the browser has written it. */
export async function storeSave(save: Uint8Array): Promise<void> {
  const db = await open();
  return new Promise((resolve, reject) => {
    const fail = (e: unknown): void => reject(new SaveError(`The offline save could not be kept: ${why(e)}.`));
    try {
      const tx = db.transaction(STORE, "readwrite");
      tx.objectStore(STORE).put(save, KEY);
      tx.oncomplete = () => resolve();
      tx.onabort = () => fail(tx.error ?? "the browser abandoned the write");
    } catch (e) {
      fail(e); // the database closed under us
    }
  });
}
