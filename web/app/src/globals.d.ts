/** The engine's file in web/dist (engine-<hash>.wasm), set by web/cmd/bundle. */
declare const LEY_ENGINE: string;

/** Go's wasm_exec.js, from the toolchain that built the engine (web/cmd/bundle resolves it): it defines globalThis.Go. */
declare module "go:wasm_exec";
