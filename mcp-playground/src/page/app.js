// The playground page. No framework, no build step, nothing from the network.
//
// Rule: everything a server sent is data. It reaches the page only through
// `textContent` (the `el` helper below) or as the value of a form field;
// never through an HTML sink (the page's CSP requires Trusted Types, so one
// would throw). Images are `data:` URLs built from a checked MIME type and
// base64; other blobs are offered as downloads of type
// application/octet-stream. What is shown is bounded (see LIMITS).
"use strict";

const LIMITS = {
  events: 300,          // entries kept in the events list
  eventText: 2000,      // characters of one event's text
  shownText: 200000,    // characters of one text block or resource shown
  schemaDepth: 32,      // nesting followed when building forms and checking
  arrayItems: 1000,     // items of one array field
};

const state = {
  token: null,
  servers: [],
  // `seq` counts catalogue requests: only the newest one's answer is shown.
  catalog: { server: null, kind: "tools", cursor: null, next: null, items: [], seq: 0 },
  reviews: [],
  calls: new Map(),     // callId -> progress element
  refreshTimer: null,
};

// ---------- small DOM helpers (text only) ----------

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === "class") node.className = value;
    else if (name === "hidden") node.hidden = true;
    else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(visible(String(child))));
  }
  return node;
}

// Characters that would make a server's text read as something it is not,
// shown as `\u{…}` (as the CLI shows them): controls but newline, tab and
// carriage return; the direction controls, which reorder what follows them
// (`\u{202e}ohce` would read "echo"); and the invisible characters text has
// no use for, which make `ec\u{200b}ho` look like `echo` (zero-width space,
// word joiner, byte-order mark, fillers, tag characters).
const HIDDEN = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;

function visible(text) {
  return text.replace(HIDDEN, (c) => `\\u{${c.codePointAt(0).toString(16)}}`);
}

function clear(node) {
  while (node.firstChild) node.removeChild(node.firstChild);
  return node;
}

const $ = (id) => document.getElementById(id);

/// `text` cut to `max` characters, saying how much was left out.
function bounded(text, max) {
  const s = String(text);
  if (s.length <= max) return s;
  return s.slice(0, max) + `… (${s.length - max} more characters not shown)`;
}

function pretty(value) {
  try { return JSON.stringify(value, null, 2); } catch (e) { return String(value); }
}

/// `value` as JSON for a field the user edits: `pretty`, with the
/// characters `visible` shows written as JSON `\uXXXX` escapes, so a
/// direction override in a server's enum value cannot reorder the field's
/// text, and the JSON still means the same.
function editableJson(value) {
  return pretty(value).replace(HIDDEN, (c) => {
    let out = "";
    for (let i = 0; i < c.length; i++) out += "\\u" + c.charCodeAt(i).toString(16).padStart(4, "0");
    return out;
  });
}

/// A server's words, labelled as such.
function theirs(label, text, max) {
  return el("div", { class: "theirs" },
    el("span", { class: "label" }, label),
    el("pre", {}, bounded(text, max || LIMITS.shownText)));
}

function time(ms) {
  return new Date(ms).toLocaleTimeString();
}

function banner(text) {
  const b = $("banner");
  b.hidden = false;
  b.textContent = visible(text);
}

// ---------- the session ----------

const TOKEN_KEY = "mcp-playground-token";

async function openSession() {
  const hash = location.hash.startsWith("#") ? location.hash.slice(1) : "";
  const code = new URLSearchParams(hash).get("code");
  // The code leaves the address bar at once (and the history with it).
  if (code !== null) history.replaceState(null, "", location.pathname);
  if (code) {
    const res = await fetch("/api/session", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ code }),
      credentials: "same-origin",
    });
    if (res.ok) {
      const body = await res.json();
      state.token = body.token;
      localStorage.setItem(TOKEN_KEY, state.token);
      return true;
    }
    const why = await res.text();
    if (!localStorage.getItem(TOKEN_KEY)) {
      banner(`This link did not open a session: ${bounded(why, 300)}`);
      return false;
    }
  }
  state.token = localStorage.getItem(TOKEN_KEY);
  if (!state.token) {
    banner("No session: open the URL that `mcp playground` printed (it holds a one-time code).");
    return false;
  }
  return true;
}

/// One API request; resolves to the result, or throws an Error carrying
/// `hubError` (the hub's refusal or the server's failure) when there is one.
async function api(path, body) {
  const init = {
    method: body === undefined ? "GET" : "POST",
    headers: { "X-Playground-Token": state.token || "" },
    credentials: "same-origin",
  };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (res.status === 401) {
    banner("The session is not valid (the playground was restarted?). Open the new URL it printed.");
    throw new Error("no session");
  }
  const text = await res.text();
  let parsed = null;
  try { parsed = JSON.parse(text); } catch (e) { /* a plain-text refusal */ }
  if (!res.ok) {
    const err = new Error(parsed && parsed.error ? parsed.error.message : bounded(text, 300));
    err.hubError = parsed && parsed.error;
    throw err;
  }
  return parsed.result;
}

const UNPARSED_LABEL =
  "A line it sent that is not JSON-RPC (over stdio only protocol messages may go to stdout; logs belong on stderr):";

/// The hub's or server's error, ours and theirs apart.
function errorView(err) {
  const e = err.hubError;
  const box = el("div", { class: "result is-error" },
    el("div", { class: "ours-error" }, e ? `${e.kind}: ${e.message}` : String(err.message)));
  if (e && e.serverMessage) box.append(theirs("The server's message:", e.serverMessage));
  if (e && e.stderrTail) box.append(theirs("The server's stderr (last lines):", e.stderrTail));
  if (e && e.unparsedLine) box.append(theirs(UNPARSED_LABEL, e.unparsedLine));
  if (e && Array.isArray(e.urlElicitations)) {
    // Pages the server asks the user to open first (it did not run the
    // request): shown as text, never as links; the person calls again.
    box.append(el("div", { class: "pages" },
      el("p", {}, "The server asks you to open these pages first, then to call again. The playground does not open them: copy one into your browser only if you trust its host."),
      e.urlElicitations.slice(0, 8).map((p) => p.refused
        ? el("div", { class: "problem" }, `A page it listed is not shown: ${p.refused}`)
        : el("div", { class: "page" },
            theirs("The server's words:", String(p.message)),
            el("div", { class: "url" }, "page: ", el("code", {}, String(p.url))),
            el("div", { class: "url" }, "host: ", el("code", { class: "host" }, String(p.host))),
            p.punycode ? el("p", { class: "problem punycode" }, "The host is written in Punycode (xn--): in a browser it may show as letters of another script that imitate a name you know.") : null))));
  }
  return box;
}

// ---------- servers ----------

let serversSeq = 0;

async function loadServers() {
  const seq = ++serversSeq;
  const result = await api("/api/servers");
  if (seq !== serversSeq) return;
  state.servers = result.servers;
  $("dropped").textContent = result.droppedEvents ? `${result.droppedEvents} hub events dropped` : "";
  renderServers();
  renderServerSelect();
}

function renderServers() {
  const box = clear($("servers"));
  for (const s of state.servers) {
    const info = s.serverInfo || {};
    const card = el("div", { class: "server", "data-server": s.name },
      el("h3", {},
        el("span", { class: "name" }, s.name),
        el("span", { class: `badge status ${s.status}` }, s.status),
        s.era ? el("span", { class: "badge era" }, s.era) : null,
        s.protocolVersion ? el("span", { class: "badge version" }, s.protocolVersion) : null),
      el("dl", {},
        s.serverInfo ? [el("dt", {}, "server info"),
          el("dd", { class: "info" }, `${info.title || info.name || ""} ${info.version || ""}`.trim())] : null,
        s.tools !== null && s.tools !== undefined ? [el("dt", {}, "tools"), el("dd", {}, String(s.tools))] : null,
        s.restarts ? [el("dt", {}, "restarts"), el("dd", {}, String(s.restarts))] : null,
        s.nextAttemptAt ? [el("dt", {}, "next attempt"), el("dd", { class: "next-attempt" }, time(s.nextAttemptAt))] : null,
        s.pendingGeneration ? [el("dt", {}, "review"), el("dd", {}, `tool listing ${s.pendingGeneration} waits for review`)] : null));
    if (s.instructions) card.append(theirs("Instructions (the server's words):", s.instructions, 4000));
    if (s.error) {
      card.append(el("div", { class: "ours-error error-message" }, s.error.message));
      if (s.error.serverMessage) card.append(theirs("The server's message:", s.error.serverMessage));
      if (s.error.stderrTail) {
        const t = theirs("The server's stderr (last lines):", s.error.stderrTail);
        t.classList.add("stderr");
        card.append(t);
      }
      if (s.error.unparsedLine) card.append(theirs(UNPARSED_LABEL, s.error.unparsedLine));
    }
    if (s.capabilities) {
      card.append(el("details", {}, el("summary", {}, "capabilities"),
        el("pre", { class: "capabilities" }, bounded(pretty(s.capabilities), 20000))));
    }
    card.append(el("div", { class: "row" },
      el("button", { type: "button", class: "restart", onclick: () => restart(s.name) }, "Restart")));
    box.append(card);
  }
}

function renderServerSelect() {
  const select = $("catalog-server");
  const current = state.catalog.server || select.value;
  const names = state.servers.map((s) => s.name);
  const same = select.options.length === names.length && names.every((n, i) => select.options[i].value === n);
  // The options are updated in place (an open list stays open).
  if (!same) {
    clear(select);
    for (const name of names) select.append(el("option", { value: name }));
  }
  state.servers.forEach((s, i) => { select.options[i].textContent = `${s.name} (${s.status})`; });
  if (current && names.includes(current)) select.value = current;
  if (!state.catalog.server && select.value) {
    state.catalog.server = select.value;
    loadCatalog(null);
  }
}

async function restart(server) {
  try { await api("/api/restart", { server }); } catch (err) { showDetail(errorView(err)); }
}

// ---------- discovery ----------

async function loadCatalog(cursor) {
  const c = state.catalog;
  if (!c.server) return;
  const status = $("catalog-status");
  const seq = ++c.seq;
  status.textContent = "loading…";
  clear($("catalog"));
  $("next-page").hidden = true;
  try {
    const page = await api("/api/catalog", { server: c.server, kind: c.kind, cursor: cursor || undefined });
    if (seq !== c.seq) return;
    c.cursor = cursor;
    c.next = page.nextCursor || null;
    c.items = page.items || [];
    status.textContent = c.items.length ? "" : "(nothing on this page)";
    renderCatalog();
  } catch (err) {
    if (seq !== c.seq) return;
    status.textContent = "";
    clear($("catalog")).append(el("li", {}, errorView(err)));
    c.next = null;
  }
  $("next-page").hidden = !c.next;
  $("cursor").textContent = c.cursor ? `page at cursor ${visible(bounded(c.cursor, 80))}` : "first page";
}

function itemKey(kind, item) {
  if (kind === "resources") return item.uri;
  if (kind === "resource-templates") return item.uriTemplate;
  return item.name;
}

function renderCatalog() {
  const c = state.catalog;
  const list = clear($("catalog"));
  for (const item of c.items) {
    const key = String(itemKey(c.kind, item));
    const li = el("li", { class: "item", "data-name": key, onclick: () => {
      for (const other of list.children) other.classList.remove("selected");
      li.classList.add("selected");
      openItem(c.server, c.kind, item);
    } },
      el("div", { class: "name" }, bounded(item.title ? `${item.title} (${key})` : key, 300)),
      item.description ? el("div", { class: "desc" }, bounded(item.description, 500)) : null);
    list.append(li);
  }
}

function showDetail(...nodes) {
  append(clear($("detail")), nodes);
}

function openItem(server, kind, item) {
  if (kind === "tools") return openTool(server, item);
  if (kind === "resources") return openResource(server, item);
  if (kind === "prompts") return openPrompt(server, item);
  showDetail(el("h3", {}, String(item.uriTemplate)),
    item.description ? el("p", {}, bounded(item.description, 2000)) : null,
    el("pre", {}, bounded(pretty(item), 20000)));
}

// ---------- tools: a form from the input schema ----------

function openTool(server, tool) {
  const schema = isObject(tool.inputSchema) ? tool.inputSchema : { type: "object" };
  const form = objectFields(schema, "", 0);
  const raw = el("textarea", { id: "raw-json", hidden: true, spellcheck: "false" });
  const errors = el("div", { id: "form-errors", class: "errors" });
  const result = el("div", { id: "result" });
  let rawMode = false;
  const toggle = el("button", { type: "button", id: "raw-toggle", onclick: () => {
    rawMode = !rawMode;
    if (rawMode) {
      const { value } = form.read();
      raw.value = editableJson(value === undefined ? {} : value);
    }
    raw.hidden = !rawMode;
    fields.hidden = rawMode;
    toggle.textContent = rawMode ? "Use the form" : "Raw JSON";
  } }, "Raw JSON");
  const fields = el("div", { id: "tool-form" }, form.node);
  const call = el("button", { type: "button", id: "call", class: "primary", onclick: async () => {
    clear(errors);
    let args;
    const problems = [];
    if (rawMode) {
      try { args = JSON.parse(raw.value); } catch (e) { problems.push("the raw JSON does not parse"); }
      if (!problems.length && !isObject(args)) problems.push("the arguments must be a JSON object");
    } else {
      const read = form.read();
      args = read.value === undefined ? {} : read.value;
      problems.push(...read.errors);
    }
    if (!problems.length) validate(args, schema, "arguments", problems, 0);
    if (problems.length) {
      for (const p of problems) errors.append(el("div", { class: "problem" }, p));
      return;
    }
    const callId = `c${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    const progress = el("div", { class: "call-progress", "data-call": callId }, "calling…");
    state.calls.set(callId, progress);
    clear(result).append(progress);
    call.disabled = true;
    try {
      const r = await api("/api/call", { server, tool: tool.name, arguments: args, callId });
      clear(result).append(toolResult(r));
    } catch (err) {
      clear(result).append(errorView(err));
    } finally {
      call.disabled = false;
      state.calls.delete(callId);
    }
  } }, "Call");
  showDetail(
    el("h3", { "data-tool": tool.name }, bounded(tool.title ? `${tool.title} (${tool.name})` : tool.name, 300)),
    tool.description ? el("p", {}, bounded(tool.description, 4000)) : null,
    el("details", {}, el("summary", {}, "input schema"), el("pre", { class: "schema" }, bounded(pretty(tool.inputSchema), 40000))),
    tool.outputSchema ? el("details", {}, el("summary", {}, "output schema"), el("pre", { class: "schema" }, bounded(pretty(tool.outputSchema), 40000))) : null,
    tool.annotations ? el("details", {}, el("summary", {}, "annotations (the server's hints, not policy)"), el("pre", {}, bounded(pretty(tool.annotations), 4000))) : null,
    fields, raw, errors,
    el("div", { class: "row" }, call, toggle),
    result);
}

function isObject(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function typeOf(schema) {
  if (!isObject(schema)) return null;
  if (Array.isArray(schema.enum) && schema.enum.length) return "enum";
  const t = Array.isArray(schema.type) ? schema.type.filter((x) => x !== "null") : [schema.type];
  if (t.length !== 1) return isObject(schema.properties) ? "object" : null;
  if (["string", "number", "integer", "boolean", "array", "object"].includes(t[0])) return t[0];
  return isObject(schema.properties) ? "object" : null;
}

/// A field for `schema` at `path`: { node, read() -> { value, errors } }.
/// `value` is undefined when the field is left empty.
function field(schema, path, depth) {
  const kind = depth > LIMITS.schemaDepth ? null : typeOf(schema);
  if (kind === "object") return objectFields(schema, path, depth + 1);
  if (kind === "array") return arrayField(schema, path, depth + 1);
  if (kind === "enum") {
    const select = el("select", { "data-path": path },
      el("option", { value: "" }, "(not set)"),
      schema.enum.slice(0, 500).map((v, i) => el("option", { value: String(i) }, typeof v === "string" ? v : JSON.stringify(v))));
    return { node: select, read: () => ({ value: select.value === "" ? undefined : schema.enum[Number(select.value)], errors: [] }) };
  }
  if (kind === "boolean") {
    const select = el("select", { "data-path": path },
      el("option", { value: "" }, "(not set)"), el("option", { value: "true" }, "true"), el("option", { value: "false" }, "false"));
    return { node: select, read: () => ({ value: select.value === "" ? undefined : select.value === "true", errors: [] }) };
  }
  if (kind === "number" || kind === "integer") {
    const input = el("input", { type: "number", step: kind === "integer" ? "1" : "any", "data-path": path });
    return { node: input, read: () => {
      if (input.value.trim() === "") return { value: undefined, errors: [] };
      const n = Number(input.value);
      return Number.isFinite(n) ? { value: n, errors: [] } : { value: undefined, errors: [`${path}: not a number`] };
    } };
  }
  if (kind === "string") {
    const input = el("input", { type: "text", "data-path": path });
    return { node: input, read: () => ({ value: input.value === "" ? undefined : input.value, errors: [] }) };
  }
  // Anything the form cannot draw (no type, oneOf, $ref …): JSON as text.
  const area = el("textarea", { "data-path": path, placeholder: "JSON", spellcheck: "false" });
  return { node: area, read: () => {
    if (area.value.trim() === "") return { value: undefined, errors: [] };
    try { return { value: JSON.parse(area.value), errors: [] }; } catch (e) { return { value: undefined, errors: [`${path}: not JSON`] }; }
  } };
}

function objectFields(schema, path, depth) {
  const props = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const parts = [];
  const box = el(path ? "fieldset" : "div", { "data-path": path || undefined });
  if (path) box.append(el("legend", {}, path));
  for (const [name, sub] of Object.entries(props).slice(0, 200)) {
    const sub_path = path ? `${path}.${name}` : name;
    const f = field(sub, sub_path, depth);
    parts.push([name, f]);
    const hint = isObject(sub) && (sub.description || sub.title);
    box.append(el("div", { class: "field" },
      el("span", { class: "label" }, name + (required.has(name) ? " *" : "")),
      f.node,
      hint ? el("span", { class: "hint" }, bounded(hint, 500)) : null));
  }
  return { node: box, read: () => {
    const value = {};
    const errors = [];
    let any = false;
    for (const [name, f] of parts) {
      const r = f.read();
      errors.push(...r.errors);
      if (r.value !== undefined) { value[name] = r.value; any = true; }
    }
    // The top level is always an object; a nested optional one only when filled.
    return { value: any || !path ? value : undefined, errors };
  } };
}

function arrayField(schema, path, depth) {
  const items = [];
  const list = el("div", { class: "array", "data-path": path });
  const add = el("button", { type: "button", "data-add": path, onclick: () => {
    if (items.length >= LIMITS.arrayItems) return;
    const f = field(schema.items, `${path}[${items.length}]`, depth);
    const row = el("div", { class: "array-item" }, f.node);
    const entry = { f, row };
    row.append(el("button", { type: "button", onclick: () => {
      items.splice(items.indexOf(entry), 1);
      row.remove();
    } }, "remove"));
    items.push(entry);
    list.insertBefore(row, add);
  } }, "add item");
  list.append(add);
  return { node: list, read: () => {
    if (!items.length) return { value: undefined, errors: [] };
    const errors = [];
    const value = items.map(({ f }) => { const r = f.read(); errors.push(...r.errors); return r.value === undefined ? null : r.value; });
    return { value, errors };
  } };
}

/// Checks `value` against the parts of JSON Schema a form can get wrong.
/// (The session checks the whole schema again before anything is sent.)
function validate(value, schema, path, problems, depth) {
  if (!isObject(schema) || depth > LIMITS.schemaDepth || problems.length > 50) return;
  const types = schema.type === undefined ? [] : Array.isArray(schema.type) ? schema.type : [schema.type];
  if (types.length && !types.some((t) => hasType(value, t))) {
    problems.push(`${path}: should be ${types.join(" or ")}`);
    return;
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    problems.push(`${path}: should be one of ${bounded(schema.enum.map((e) => JSON.stringify(e)).join(", "), 300)}`);
  }
  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && value.length < schema.minLength) problems.push(`${path}: at least ${schema.minLength} characters`);
    if (typeof schema.maxLength === "number" && value.length > schema.maxLength) problems.push(`${path}: at most ${schema.maxLength} characters`);
  }
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) problems.push(`${path}: at least ${schema.minimum}`);
    if (typeof schema.maximum === "number" && value > schema.maximum) problems.push(`${path}: at most ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === "number" && value <= schema.exclusiveMinimum) problems.push(`${path}: more than ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === "number" && value >= schema.exclusiveMaximum) problems.push(`${path}: less than ${schema.exclusiveMaximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === "number" && value.length < schema.minItems) problems.push(`${path}: at least ${schema.minItems} items`);
    if (typeof schema.maxItems === "number" && value.length > schema.maxItems) problems.push(`${path}: at most ${schema.maxItems} items`);
    if (isObject(schema.items)) value.forEach((v, i) => validate(v, schema.items, `${path}[${i}]`, problems, depth + 1));
  }
  if (isObject(value)) {
    const props = isObject(schema.properties) ? schema.properties : {};
    for (const name of Array.isArray(schema.required) ? schema.required : []) {
      if (!(name in value)) problems.push(`${path}.${name}: required`);
    }
    for (const [name, v] of Object.entries(value)) {
      if (isObject(props[name])) validate(v, props[name], `${path}.${name}`, problems, depth + 1);
      else if (schema.additionalProperties === false) problems.push(`${path}.${name}: not a property of this tool`);
    }
  }
}

function hasType(value, type) {
  switch (type) {
    case "string": return typeof value === "string";
    case "number": return typeof value === "number";
    case "integer": return Number.isInteger(value);
    case "boolean": return typeof value === "boolean";
    case "array": return Array.isArray(value);
    case "object": return isObject(value);
    case "null": return value === null;
    default: return true;
  }
}

// ---------- results ----------

function toolResult(r) {
  const box = el("div", { class: r.isError ? "result is-error" : "result" });
  if (r.isError) box.append(el("div", { class: "flag" }, "The tool reported an error (isError); its words follow."));
  for (const block of Array.isArray(r.content) ? r.content : []) box.append(contentBlock(block));
  if (r.structuredContent !== undefined) {
    box.append(el("div", { class: "block structured" },
      el("div", { class: "kind" }, "structuredContent"),
      el("pre", {}, bounded(pretty(r.structuredContent), LIMITS.shownText))));
  }
  return box;
}

const IMAGE_TYPE = /^image\/(png|jpeg|gif|webp|bmp|svg\+xml|avif)$/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function base64Bytes(b64) {
  const s = String(b64).replace(/\s+/g, "");
  const pad = s.endsWith("==") ? 2 : s.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor(s.length / 4) * 3 - pad);
}

function image(b64, mime) {
  const data = String(b64).replace(/\s+/g, "");
  if (!IMAGE_TYPE.test(String(mime)) || !BASE64.test(data)) return null;
  return el("img", { src: `data:${String(mime).toLowerCase()};base64,${data}`, alt: "an image the server sent" });
}

function download(b64, mime, name) {
  const data = String(b64).replace(/\s+/g, "");
  const size = base64Bytes(data);
  if (!BASE64.test(data)) return el("div", { class: "errors" }, "the blob is not valid base64");
  const link = el("a", { class: "download", download: safeName(name) }, `Download (${size} bytes, ${mime || "no type given"})`);
  link.addEventListener("click", () => {
    const bin = atob(data);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    // Always octet-stream: a blob URL of a server's "text/html" would run
    // in our origin if opened.
    const url = URL.createObjectURL(new Blob([bytes], { type: "application/octet-stream" }));
    link.href = url;
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  });
  return link;
}

function safeName(name) {
  const base = String(name || "download").split(/[\\/]/).pop().replace(/[^A-Za-z0-9._-]/g, "_");
  return base.slice(0, 100) || "download";
}

function contentBlock(block) {
  if (!isObject(block)) return el("pre", {}, bounded(pretty(block), 2000));
  const kind = String(block.type);
  const box = el("div", { class: `block block-${kind.replace(/[^a-z_]/gi, "")}` }, el("div", { class: "kind" }, kind));
  switch (kind) {
    case "text": box.append(el("pre", { class: "text" }, bounded(block.text, LIMITS.shownText))); break;
    case "image": box.append(image(block.data, block.mimeType) || download(block.data, block.mimeType, "image")); break;
    case "audio": box.append(download(block.data, block.mimeType, "audio")); break;
    case "resource_link":
      box.append(el("div", {}, `link to ${bounded(block.uri, 500)}`), block.name ? el("div", { class: "note" }, bounded(block.name, 200)) : null); break;
    case "resource":
      if (isObject(block.resource)) box.append(resourceContents(block.resource)); break;
    default: box.append(el("pre", {}, bounded(pretty(block), 20000)));
  }
  return box;
}

function resourceContents(c) {
  const box = el("div", { class: "block contents" },
    el("div", { class: "kind" }, `${bounded(c.uri, 500)}${c.mimeType ? ` (${bounded(c.mimeType, 100)})` : ""}`));
  if (typeof c.text === "string") {
    box.append(el("pre", { class: "text" }, bounded(c.text, LIMITS.shownText)));
  } else if (typeof c.blob === "string") {
    const img = image(c.blob, c.mimeType);
    if (img) box.append(img, el("div", { class: "note" }, `${base64Bytes(c.blob)} bytes`));
    else box.append(download(c.blob, c.mimeType, String(c.uri)));
  }
  return box;
}

// ---------- resources and prompts ----------

function openResource(server, resource) {
  const result = el("div", { id: "result" });
  const read = el("button", { type: "button", id: "read", class: "primary", onclick: async () => {
    clear(result).append("reading…");
    try {
      const r = await api("/api/read", { server, uri: resource.uri });
      const box = el("div", { class: "result" });
      for (const c of Array.isArray(r.contents) ? r.contents : []) box.append(resourceContents(c));
      clear(result).append(box);
    } catch (err) {
      clear(result).append(errorView(err));
    }
  } }, "Read");
  const follow = el("button", { type: "button", id: "follow", onclick: async () => {
    try {
      await api("/api/subscribe", { server, uri: resource.uri });
      follow.disabled = true;
      follow.textContent = "Following (changes show in the events)";
    } catch (err) {
      clear(result).append(errorView(err));
    }
  } }, "Follow changes");
  showDetail(
    el("h3", {}, bounded(resource.name || resource.uri, 300)),
    el("div", { class: "note" }, bounded(resource.uri, 1000)),
    resource.description ? el("p", {}, bounded(resource.description, 4000)) : null,
    resource.mimeType ? el("div", { class: "note" }, `type ${bounded(resource.mimeType, 100)}`) : null,
    el("div", { class: "row" }, read, follow),
    result);
}

function openPrompt(server, prompt) {
  const args = Array.isArray(prompt.arguments) ? prompt.arguments.slice(0, 100) : [];
  const inputs = args.map((a) => [a, el("input", { type: "text", "data-path": String(a.name) })]);
  const errors = el("div", { id: "form-errors", class: "errors" });
  const result = el("div", { id: "result" });
  const get = el("button", { type: "button", id: "get-prompt", class: "primary", onclick: async () => {
    clear(errors);
    const values = {};
    for (const [a, input] of inputs) {
      if (input.value !== "") values[String(a.name)] = input.value;
      else if (a.required) errors.append(el("div", { class: "problem" }, `${a.name}: required`));
    }
    if (errors.childElementCount) return;
    clear(result).append("getting…");
    try {
      const r = await api("/api/prompt", { server, name: prompt.name, arguments: values });
      const box = el("div", { class: "result" });
      if (r.description) box.append(el("p", {}, bounded(r.description, 4000)));
      for (const m of Array.isArray(r.messages) ? r.messages : []) {
        box.append(el("div", { class: "message" }, el("div", { class: "kind" }, `role: ${bounded(m.role, 50)}`), contentBlock(m.content)));
      }
      clear(result).append(box);
    } catch (err) {
      clear(result).append(errorView(err));
    }
  } }, "Get prompt");
  showDetail(
    el("h3", {}, bounded(prompt.title || prompt.name, 300)),
    prompt.description ? el("p", {}, bounded(prompt.description, 4000)) : null,
    inputs.map(([a, input]) => el("div", { class: "field" },
      el("span", { class: "label" }, String(a.name) + (a.required ? " *" : "")), input,
      a.description ? el("span", { class: "hint" }, bounded(a.description, 500)) : null)),
    errors, el("div", { class: "row" }, get), result);
}

// ---------- the namespace ----------

/// Loads run concurrently (a tab click, an event): only the newest answer
/// is drawn, and the old contents go only when it is there.
const loads = { namespace: 0, reviews: 0 };

async function loadNamespace() {
  const seq = ++loads.namespace;
  let ns;
  let failure = null;
  try { ns = await api("/api/namespace"); } catch (err) { failure = err; }
  if (seq !== loads.namespace) return;
  const box = clear($("namespace"));
  if (failure) { box.append(errorView(failure)); return; }
  box.append(el("p", { class: "note" }, `namespace generation ${ns.generation}: ${ns.tools.length} names exposed`));
  box.append(el("table", { id: "namespace-tools" },
    el("thead", {}, el("tr", {}, ["exposed name", "aliases", "server", "its tool", ""].map((h) => el("th", {}, h)))),
    el("tbody", {}, ns.tools.map((t) => el("tr", { "data-name": t.name },
      el("td", {}, t.name), el("td", {}, [...t.aliases, t.providerName ? `${t.providerName} (for LLM providers)` : null].filter(Boolean).join(", ")),
      el("td", {}, t.server), el("td", {}, t.tool), el("td", { class: "note" }, t.helper ? "context helper" : ""))))));
  if (ns.collisions.length) {
    box.append(el("h4", {}, "Shared names, and how the policy exposed them"));
    box.append(el("ul", { id: "collisions" }, ns.collisions.map((c) => el("li", { "data-tool": c.tool },
      `${c.tool}: ${c.exposedAs.map((e) => `${e.server} as ${e.name}`).join(", ")}`))));
  }
  if (ns.notes.length) {
    box.append(el("h4", {}, "Notes"));
    box.append(el("ul", {}, ns.notes.map((n) => el("li", {}, noteText(n)))));
  }
  box.append(el("h4", {}, "Hidden by the authority"));
  box.append(ns.hidden.length
    ? el("ul", { id: "hidden" }, ns.hidden.map((h) => el("li", { "data-name": `${h.server}/${h.tool}` }, `${h.server}/${h.tool}: ${h.why}`)))
    : el("p", { class: "note" }, "nothing"));
}

function noteText(n) {
  switch (n.kind) {
    case "shadowed": return `${n.server}'s ${n.tool} is reachable only qualified: ${n.keptBy} keeps the bare name`;
    case "refused": return `${n.server} is refused: its ${n.tool} collides with ${n.existing}`;
    case "conflict": return `${n.name} is claimed by ${n.servers.join(", ")}: exposed under neither`;
    case "reserved": return `${n.server}'s ${n.tool} lies in ${n.owner}'s qualified space: exposed only qualified`;
    case "helperSkipped": return `${n.server}'s helper ${n.helper} is left out: a tool has its name`;
    default: return pretty(n);
  }
}

// ---------- reviews ----------

async function loadReviews() {
  const seq = ++loads.reviews;
  let result;
  let failure = null;
  try { result = await api("/api/reviews"); } catch (err) { failure = err; }
  if (seq !== loads.reviews) return;
  const box = clear($("reviews"));
  if (failure) { box.append(errorView(failure)); return; }
  state.reviews = result.reviews;
  $("review-count").textContent = state.reviews.length ? `(${state.reviews.length})` : "";
  if (!state.reviews.length) { box.append(el("p", { class: "note" }, "No tool listing waits for review.")); return; }
  for (const r of state.reviews) {
    const status = el("span", { class: "note" });
    const decide = (decision) => async () => {
      try { await api("/api/review", { server: r.server, generation: r.generation, decision }); status.textContent = `${decision}d`; scheduleRefresh(); } catch (err) { box.append(errorView(err)); }
    };
    box.append(el("div", { class: "review diff", "data-server": r.server },
      el("h4", {}, `${r.server}: tool listing ${r.generation}`),
      r.added.map((t) => el("div", { class: "added" }, el("strong", {}, `+ added ${t.name}`), el("pre", {}, bounded(pretty(t), 20000)))),
      r.removed.map((t) => el("div", { class: "removed" }, el("strong", {}, `− removed ${t.name}`))),
      r.changed.map((c) => el("div", { class: "changed" }, el("strong", {}, `~ changed ${c.name}`), lineDiff(c.before, c.after))),
      el("div", { class: "row" },
        el("button", { type: "button", class: "approve primary", onclick: decide("approve") }, "Approve"),
        el("button", { type: "button", class: "reject", onclick: decide("reject") }, "Reject"), status)));
  }
}

/// Before and after side by side, lines only on one side marked.
function lineDiff(before, after) {
  const a = bounded(pretty(before), 20000).split("\n");
  const b = bounded(pretty(after), 20000).split("\n");
  const inB = new Set(b);
  const inA = new Set(a);
  return el("div", { class: "side" },
    el("pre", {}, a.map((l) => el("span", { class: inB.has(l) ? "" : "line-old" }, l + "\n"))),
    el("pre", {}, b.map((l) => el("span", { class: inA.has(l) ? "" : "line-new" }, l + "\n"))));
}

// ---------- questions from servers ----------

let questionsSeq = 0;

async function loadQuestions() {
  const seq = ++questionsSeq;
  let list;
  try { list = await api("/api/questions"); } catch (err) { return; }
  if (seq !== questionsSeq) return;
  const box = clear($("questions"));
  $("questions-panel").hidden = !list.length;
  for (const q of list) box.append(questionCard(q));
}

/// Sends an answer, then reads the list again (the question leaves it).
async function answerQuestion(status, body) {
  try {
    await api("/api/answer", body);
  } catch (err) {
    clear(status).append(errorView(err));
    if (!(err.hubError && err.hubError.kind === "gone")) return;
  }
  loadQuestions();
}

function questionCard(q) {
  const status = el("div", { class: "answer-status" });
  const card = el("div", { class: "question", "data-question": String(q.id), "data-kind": String(q.kind) });
  const said = (t) => t ? bounded(t.text, LIMITS.shownText) + (t.bytes ? `… (${t.bytes} bytes in all)` : "") : "";
  const answer = (action, extra) => () => answerQuestion(status, Object.assign({ id: q.id, action }, extra || {}));
  const button = (label, cls, onclick) => el("button", { type: "button", class: cls, onclick }, label);
  if (q.kind === "form") {
    const form = questionForm(q.schema, q.order);
    const errors = el("div", { class: "errors" });
    card.append(el("h3", {}, `${q.server} asks you to fill in a form`),
      theirs("The server's words:", said(q.message)),
      el("p", { class: "note" }, "Never give passwords, keys or tokens in a form: a server may not ask for them there."),
      form.node, errors,
      el("div", { class: "row" },
        button("Send", "primary send", () => {
          clear(errors);
          const read = form.read();
          if (read.errors.length) { for (const p of read.errors) errors.append(el("div", { class: "problem" }, p)); return; }
          answerQuestion(status, { id: q.id, action: "accept", content: read.value });
        }),
        button("Decline", "decline", answer("decline")),
        button("Cancel", "cancel", answer("cancel"))),
      status);
  } else if (q.kind === "url") {
    card.append(el("h3", {}, `${q.server} asks you to open a web page`),
      theirs("The server's words:", said(q.message)),
      el("div", { class: "url" }, "page: ", el("code", {}, said(q.url))),
      el("div", { class: "url" }, "host: ", el("code", { class: "host" }, String(q.host))),
      q.punycode ? el("p", { class: "problem punycode" }, "The host is written in Punycode (xn--): in a browser it may show as letters of another script that imitate a name you know.") : null,
      el("p", { class: "note" }, "The playground does not open it. Copy it into your browser yourself, only if you trust that host."),
      el("div", { class: "row" },
        button("I will open it", "primary send", answer("accept")),
        button("Decline", "decline", answer("decline"))),
      status);
  } else if (q.kind === "sampling") {
    const reply = el("textarea", { class: "reply", spellcheck: "false", placeholder: "the reply, in the model's place" });
    card.append(el("h3", {}, `${q.server} asks for a model's reply (sampling): you write it in the model's place`),
      q.systemPrompt ? theirs("System prompt:", said(q.systemPrompt)) : null,
      q.earlier ? el("p", { class: "note" }, `(${q.earlier} earlier messages not shown)`) : null,
      (q.messages || []).map((m) => theirs(`${m.role}:`, (m.content || []).map((b) =>
        b.type === "text" ? said(b.text) : `[${b.type}${b.mimeType ? ` ${b.mimeType.text}` : ""}${b.base64Bytes ? `, ${b.base64Bytes} bytes of base64` : ""}]`).join("\n") +
        (m.moreBlocks ? `\n(${m.moreBlocks} more blocks not shown)` : ""))),
      el("p", { class: "note" }, `At most ${q.maxTokens} tokens.`),
      reply,
      el("div", { class: "row" },
        button("Send reply", "primary send", () => answerQuestion(status, { id: q.id, action: "accept", reply: reply.value })),
        button("Decline", "decline", answer("decline"))),
      status);
  }
  return card;
}

/// The fields of an elicitation form (a flat object of strings, numbers,
/// booleans and choices): { node, read() -> { value, errors } }.
function questionForm(schema, order) {
  const props = isObject(schema) && isObject(schema.properties) ? schema.properties : {};
  const required = new Set(isObject(schema) && Array.isArray(schema.required) ? schema.required : []);
  const parts = [];
  const box = el("div", { class: "question-form" });
  // In the order the server sent the fields.
  const names = Array.isArray(order) ? order.filter((n) => Object.hasOwn(props, n)) : Object.keys(props);
  for (const [name, f] of names.slice(0, 64).map((n) => [n, props[n]])) {
    const label = isObject(f) && typeof f.title === "string" ? `${f.title} (${name})` : name;
    const input = questionInput(isObject(f) ? f : {}, name);
    parts.push([name, input]);
    box.append(el("div", { class: "field" },
      el("span", { class: "label" }, label + (required.has(name) ? " *" : "")),
      input.node,
      isObject(f) && typeof f.description === "string" ? el("span", { class: "hint" }, bounded(f.description, 500)) : null));
  }
  return { node: box, read: () => {
    const value = {};
    const errors = [];
    for (const [name, input] of parts) {
      const r = input.read();
      if (r.error) errors.push(`${name}: ${r.error}`);
      else if (r.value !== undefined) value[name] = r.value;
      else if (required.has(name)) errors.push(`${name}: required`);
    }
    return { value, errors };
  } };
}

/// Choices of a field: [value, shown] pairs (`enum` with `enumNames`,
/// `oneOf` / `anyOf` of const and title).
function choicesOf(f) {
  const titled = (list) => list.filter(isObject).map((o) => [String(o.const), typeof o.title === "string" ? o.title : String(o.const)]);
  if (Array.isArray(f.oneOf)) return titled(f.oneOf);
  if (Array.isArray(f.enum)) return f.enum.map((v, i) => [String(v), Array.isArray(f.enumNames) && typeof f.enumNames[i] === "string" ? f.enumNames[i] : String(v)]);
  return null;
}

function questionInput(f, name) {
  const attrs = { "data-field": name };
  if (f.type === "array" && isObject(f.items)) {
    const choices = (Array.isArray(f.items.anyOf) ? choicesOf({ oneOf: f.items.anyOf }) : choicesOf(f.items) || []).slice(0, 256);
    const chosen = new Set(Array.isArray(f.default) ? f.default.map(String) : []);
    const boxes = choices.map(([value, shown]) => {
      const box = el("input", { type: "checkbox", "data-value": value });
      box.checked = chosen.has(value);
      return [value, el("label", {}, box, shown), box];
    });
    return { node: el("span", Object.assign({ class: "choices" }, attrs), boxes.map((b) => b[1])), read: () => {
      const value = boxes.filter((b) => b[2].checked).map((b) => b[0]);
      if (typeof f.minItems === "number" && value.length < f.minItems) return { error: `choose at least ${f.minItems}` };
      if (typeof f.maxItems === "number" && value.length > f.maxItems) return { error: `choose at most ${f.maxItems}` };
      return { value: value.length ? value : undefined };
    } };
  }
  const choices = choicesOf(f);
  if (choices) {
    const select = el("select", attrs, el("option", { value: "" }, "(not set)"),
      choices.slice(0, 256).map(([value, shown]) => el("option", { value }, shown)));
    if (typeof f.default === "string") select.value = f.default;
    return { node: select, read: () => ({ value: select.value === "" ? undefined : select.value }) };
  }
  if (f.type === "boolean") {
    const select = el("select", attrs, el("option", { value: "" }, "(not set)"),
      el("option", { value: "true" }, "yes"), el("option", { value: "false" }, "no"));
    if (typeof f.default === "boolean") select.value = String(f.default);
    return { node: select, read: () => ({ value: select.value === "" ? undefined : select.value === "true" }) };
  }
  if (f.type === "number" || f.type === "integer") {
    const input = el("input", Object.assign({ type: "number", step: f.type === "integer" ? "1" : "any" }, attrs));
    if (typeof f.default === "number") input.value = String(f.default);
    return { node: input, read: () => {
      if (input.value.trim() === "") return {};
      const n = Number(input.value);
      if (!Number.isFinite(n)) return { error: "not a number" };
      if (f.type === "integer" && !Number.isInteger(n)) return { error: "not an integer" };
      if (typeof f.minimum === "number" && n < f.minimum) return { error: `less than the minimum, ${f.minimum}` };
      if (typeof f.maximum === "number" && n > f.maximum) return { error: `more than the maximum, ${f.maximum}` };
      return { value: n };
    } };
  }
  const input = el("input", Object.assign({ type: "text" }, attrs));
  // A default that hides or reorders characters would show, in the field,
  // a text other than the one sent: it is shown escaped, not filled in.
  let node = input;
  if (typeof f.default === "string" && visible(f.default) !== f.default) {
    node = el("span", {}, input, el("span", { class: "hint hidden-default" },
      `its default is not filled in, as it holds characters that hide or reorder text: ${bounded(f.default, 200)}`));
  } else if (typeof f.default === "string") {
    input.value = f.default;
  }
  return { node, read: () => {
    if (input.value === "") return {};
    const n = [...input.value].length;
    if (typeof f.minLength === "number" && n < f.minLength) return { error: `at least ${f.minLength} characters` };
    if (typeof f.maxLength === "number" && n > f.maxLength) return { error: `at most ${f.maxLength} characters` };
    return { value: input.value };
  } };
}

// ---------- live events ----------

async function followEvents() {
  let delay = 1000;
  for (;;) {
    try {
      const res = await fetch("/api/events", { headers: { "X-Playground-Token": state.token }, credentials: "same-origin" });
      if (res.status === 401) { live(false, "no session"); return; }
      if (!res.ok || !res.body) throw new Error(`status ${res.status}`);
      live(true);
      delay = 1000;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        if (buffer.length > 1 << 20) buffer = ""; // an event is bounded far below this
        let end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = frame.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
          if (data) { try { onEvent(JSON.parse(data)); } catch (e) { /* not ours to show */ } }
        }
      }
    } catch (e) { /* reconnect below */ }
    live(false, "reconnecting");
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 30000);
  }
}

function live(on, why) {
  const b = $("live");
  b.className = `badge ${on ? "ok" : "off"}`;
  b.textContent = on ? "events: live" : `events: ${why}`;
}

const REFRESHING = new Set(["starting", "ready", "failed", "restarting", "stopped", "repeatedFailures",
  "toolsAdopted", "toolsPending", "toolsRejected", "namespace"]);

function onEvent(e) {
  if (!isObject(e)) return;
  addEvent(e);
  if (e.kind === "progress" && e.callId && state.calls.has(e.callId)) {
    const node = clear(state.calls.get(e.callId));
    node.append(el("progress", e.total ? { max: String(e.total), value: String(e.progress) } : {}),
      ` ${e.progress}${e.total ? ` / ${e.total}` : ""}`, e.message ? ` — ${bounded(e.message, 300)}` : "");
  }
  if (REFRESHING.has(e.kind)) scheduleRefresh();
  if (e.kind === "questions") loadQuestions();
}

function scheduleRefresh() {
  if (state.refreshTimer) return;
  state.refreshTimer = setTimeout(async () => {
    state.refreshTimer = null;
    try { await Promise.all([loadServers(), loadNamespace(), loadReviews()]); } catch (err) { /* shown by each */ }
  }, 250);
}

function describe(e) {
  switch (e.kind) {
    case "progress": return `${e.server}${e.tool ? ` ${e.tool}` : ""}${e.uri ? ` ${e.uri}` : ""}: ${e.progress}${e.total ? ` / ${e.total}` : ""}${e.message ? ` — ${e.message}` : ""}`;
    case "log": return `${e.server} [${e.level}]${e.logger ? ` ${e.logger}` : ""}: ${e.data === null || e.data === undefined ? `(${e.bytes} bytes, over the bound)` : typeof e.data === "string" ? e.data : pretty(e.data)}`;
    case "ready": return `${e.server} ready: ${e.protocolVersion} (${e.era} era), ${e.tools === null ? "?" : e.tools} tools`;
    case "starting": return `${e.server} starting${e.attempt ? ` (restart ${e.attempt})` : ""}`;
    case "failed": return `${e.server} failed: ${e.error && e.error.message}`;
    case "restarting": return `${e.server} restarts in ${e.delayMs} ms (attempt ${e.attempt})`;
    case "repeatedFailures": return `${e.server} failed ${e.consecutive} times in a row`;
    case "stopped": return `${e.server} stopped`;
    case "sessionReestablished": return `${e.server} had forgotten our session (did it restart?): a new one is established`;
    case "toolsPending": return `${e.server}: a changed tool listing (${e.generation}) waits for review: +${e.diff.added.length} −${e.diff.removed.length} ~${e.diff.changed.length}`;
    case "toolsAdopted": return `${e.server}: tool listing ${e.generation} adopted`;
    case "toolsRejected": return `${e.server}: tool listing ${e.generation} rejected`;
    case "namespace": return `namespace ${e.generation}: ${e.tools} names`;
    case "resourceUpdated": return `${e.server} ${e.uri} (${e.reason}): ${(e.contents || []).map((c) => typeof c.text === "string" ? c.text + (c.cut ? ` … (${c.bytes} bytes in all)` : "") : `${c.blobBytes} bytes`).join(" | ")}`;
    case "dropped": return `${e.count} events were dropped (this page fell behind)`;
    case "tooLarge": return `a ${e.of} event of ${e.bytes} bytes was over the bound`;
    case "questions": return `${e.waiting} question${e.waiting === 1 ? "" : "s"} from servers waiting`;
    default: return pretty(e);
  }
}

function addEvent(e) {
  const list = $("events");
  const item = el("li", { class: "event", "data-kind": String(e.kind) },
    el("span", { class: "when" }, typeof e.time === "number" ? time(e.time) : ""),
    el("span", { class: "what" }, String(e.kind)),
    bounded(describe(e), LIMITS.eventText));
  if (e.callId) item.setAttribute("data-call", String(e.callId));
  list.prepend(item);
  while (list.childElementCount > LIMITS.events) list.lastElementChild.remove();
}

// ---------- wiring ----------

function wire() {
  for (const tab of document.querySelectorAll("button.tab")) {
    tab.addEventListener("click", () => {
      for (const t of document.querySelectorAll("button.tab")) t.classList.toggle("active", t === tab);
      for (const body of document.querySelectorAll(".tab-body")) body.hidden = body.id !== `tab-${tab.dataset.tab}`;
      if (tab.dataset.tab === "namespace") loadNamespace();
      if (tab.dataset.tab === "reviews") loadReviews();
    });
  }
  for (const kind of document.querySelectorAll("button.kind")) {
    kind.addEventListener("click", () => {
      for (const k of document.querySelectorAll("button.kind")) k.classList.toggle("active", k === kind);
      state.catalog.kind = kind.dataset.kind;
      clear($("detail"));
      loadCatalog(null);
    });
  }
  $("catalog-server").addEventListener("change", (ev) => {
    state.catalog.server = ev.target.value;
    clear($("detail"));
    loadCatalog(null);
  });
  $("next-page").addEventListener("click", () => loadCatalog(state.catalog.next));
}

async function main() {
  wire();
  if (!(await openSession())) return;
  try {
    await loadServers();
    await Promise.all([loadNamespace(), loadReviews(), loadQuestions()]);
  } catch (err) { /* the banner says why */ }
  followEvents();
  document.body.setAttribute("data-ready", "true");
}

main();
