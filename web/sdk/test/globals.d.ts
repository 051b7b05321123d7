/** Go's wasm_exec.js, from the toolchain that built the engine (web/bundle resolves it): it defines globalThis.Go. */
declare module "go:wasm_exec";
