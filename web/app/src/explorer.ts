/**
 * The console's API explorer: the director's own OpenAPI document
 * (GET /v1/openapi.json) as a list of operations, each with a form for
 * its path and query parameters and its JSON body, sent with the admin's
 * session. Reading operations go at once; an operation that changes the
 * realm (POST, PUT, DELETE) asks on its first click, as the console's
 * other acts do. The answer is shown as it came: status and JSON.
 *
 * @module
 */

/** The parts of an OpenAPI 3.1 document the explorer reads. */
interface Param {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  description?: string;
  $ref?: string;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: Param[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
  $ref?: string;
}

interface Doc {
  paths: Record<string, Record<string, Operation | Param[]>>;
  components?: { parameters?: Record<string, Param>; schemas?: Record<string, Schema> };
}

/** An operation of the document, flattened. */
export interface Op {
  method: string;
  path: string;
  op: Operation;
  params: Param[];
  body: Schema | null;
}

const METHODS = ["get", "post", "put", "delete", "patch"];

/** operations lists the document's operations, path by path in its order, with their parameters resolved. */
export function operations(doc: Doc): Op[] {
  const out: Op[] = [];
  const param = (p: Param): Param => {
    if (p.$ref === undefined) return p;
    const name = p.$ref.split("/").pop() ?? "";
    return doc.components?.parameters?.[name] ?? p;
  };
  for (const [path, item] of Object.entries(doc.paths)) {
    const shared = ((item["parameters"] as Param[] | undefined) ?? []).map(param);
    for (const m of METHODS) {
      const op = item[m] as Operation | undefined;
      if (op === undefined) continue;
      const params = [...shared, ...(op.parameters ?? []).map(param)];
      const body = op.requestBody?.content?.["application/json"]?.schema ?? null;
      out.push({ method: m.toUpperCase(), path, op, params, body: body === null ? null : resolve(doc, body) });
    }
  }
  return out;
}

function resolve(doc: Doc, s: Schema): Schema {
  if (s.$ref === undefined) return s;
  return doc.components?.schemas?.[s.$ref.split("/").pop() ?? ""] ?? s;
}

/** skeleton is a body to start from: each required property of the schema with a value of its type. */
export function skeleton(doc: Doc, s: Schema | null): string {
  if (s === null) return "";
  const out: Record<string, unknown> = {};
  for (const name of s.required ?? Object.keys(s.properties ?? {})) {
    const p = resolve(doc, s.properties?.[name] ?? {});
    const t = Array.isArray(p.type) ? p.type[0] : p.type;
    out[name] = p.enum !== undefined ? p.enum[0] : t === "integer" || t === "number" ? 0 : t === "boolean" ? false : t === "array" ? [] : t === "object" ? {} : "";
  }
  return JSON.stringify(out, null, 2);
}

/** target puts the parameters' values into the path and the query; a required one left empty is an error naming it. */
export function target(o: Op, values: Record<string, string>): string {
  let path = o.path;
  const q = new URLSearchParams();
  for (const p of o.params) {
    const v = (values[p.name] ?? "").trim();
    if (v === "") {
      if (p.required === true || p.in === "path") throw new Error(`${p.name} is required`);
      continue;
    }
    if (p.in === "path") path = path.replace(`{${p.name}}`, encodeURIComponent(v));
    else if (p.in === "query") q.set(p.name, v);
  }
  const qs = q.toString();
  return qs === "" ? path : `${path}?${qs}`;
}

/** An answer as the explorer shows it. */
export interface Answer {
  status: number;
  text: string;
}

/** send sends one request with the session's token and returns the answer, its JSON pretty-printed. */
export async function send(method: string, url: string, token: string, body: string): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token !== "") headers["Authorization"] = `Bearer ${token}`;
  const init: RequestInit = { method, headers };
  if (body.trim() !== "") {
    headers["Content-Type"] = "application/json";
    init.body = body;
  }
  const resp = await fetch(url, init);
  const raw = await resp.text();
  let text = raw;
  try {
    if (raw !== "") text = JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    // not JSON: shown as it came
  }
  return { status: resp.status, text };
}

export type { Doc };
