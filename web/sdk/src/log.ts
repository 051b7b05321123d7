/**
 * Logging: the SDK reports what it drops and why through a Logger, the
 * console by default.
 *
 * @module
 */

/** Logger takes the SDK's log lines; fields carry the details. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** consoleLogger logs to the console with a "ley:" prefix. */
export const consoleLogger: Logger = {
  debug: (msg, fields) => console.debug(`ley: ${msg}`, fields ?? ""),
  info: (msg, fields) => console.info(`ley: ${msg}`, fields ?? ""),
  warn: (msg, fields) => console.warn(`ley: ${msg}`, fields ?? ""),
  error: (msg, fields) => console.error(`ley: ${msg}`, fields ?? ""),
};

/** silentLogger drops every line. */
export const silentLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};
