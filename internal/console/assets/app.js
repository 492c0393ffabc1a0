// connectd's web console: plain JavaScript over Kafka Connect's REST API
// (of this page's origin) and the console's /ui/api for consumer groups.
// Every text from the worker goes into the page as text, never as markup.
"use strict";

const view = document.getElementById("view");

// h builds an element: h("td", {class: "mono"}, "text", child, ...).
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "value") el.value = v;
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

function show(...kids) {
  view.replaceChildren(...kids);
}

function errorBox(err, testid) {
  return h("div", {class: "error", "data-testid": testid || "error"}, err.message || String(err));
}

// api calls the worker; a failure throws Kafka Connect's message.
async function api(method, path, body) {
  const opts = {method, headers: {Accept: "application/json"}};
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  const text = await res.text();
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch (e) { data = text; }
  }
  if (!res.ok) {
    const msg = data && data.message ? data.message : `${method} ${path}: HTTP ${res.status}`;
    const err = new Error(msg);
    err.status = res.status;
    throw err;
  }
  return data;
}

const enc = encodeURIComponent;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// later shows a page again after a change, unless the user went elsewhere
// meanwhile.
function later(page) {
  const hash = location.hash;
  setTimeout(() => { if (location.hash === hash) page().catch((err) => show(errorBox(err))); }, 800);
}

// canon is a JSON value's text with object keys sorted: the identity of a
// partition, and what two offsets are compared by.
function canon(v) {
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return "[" + v.map(canon).join(",") + "]";
  return "{" + Object.keys(v).sort().map((k) => JSON.stringify(k) + ":" + canon(v[k])).join(",") + "}";
}

function stateSpan(state) {
  return h("span", {class: "state " + (state || "")}, state || "-");
}

// ---- routing ----

async function route() {
  const hash = decodeURIComponent(location.hash || "#/");
  try {
    if (hash === "#/" || hash === "#") await connectorsPage();
    else if (hash === "#/new") await newConnectorPage();
    else if (hash === "#/groups") await groupsPage();
    else if (hash.startsWith("#/c/")) await connectorPage(hash.slice(4));
    else if (hash.startsWith("#/g/")) await groupPage(hash.slice(4));
    else show(h("p", {}, "Nothing here. "), h("a", {href: "#/"}, "Connectors"));
  } catch (err) {
    show(errorBox(err));
  }
}

// ---- connectors ----

async function connectorsPage() {
  const all = await api("GET", "/connectors?expand=status&expand=info");
  const names = Object.keys(all).sort();
  const rows = names.map((name) => {
    const e = all[name];
    const st = e.status || {connector: {}, tasks: []};
    const running = (st.tasks || []).filter((t) => t.state === "RUNNING").length;
    return h("tr", {"data-testid": "connector-row"},
      h("td", {}, h("a", {class: "row", href: "#/c/" + enc(name)}, name)),
      h("td", {}, (e.info && e.info.type) || st.type || "-"),
      h("td", {}, stateSpan(st.connector.state)),
      h("td", {}, `${running}/${(st.tasks || []).length}`),
      h("td", {class: "mono"}, (e.info && e.info.config["connector.class"]) || ""));
  });
  show(h("h2", {}, "Connectors"),
    names.length === 0 ? h("p", {class: "note"}, "No connectors yet. ", h("a", {href: "#/new"}, "Create one.")) :
      h("table", {"data-testid": "connectors"},
        h("thead", {}, h("tr", {}, ["Name", "Type", "State", "Tasks", "Class"].map((c) => h("th", {}, c)))),
        h("tbody", {}, rows)));
}

async function connectorPage(name) {
  const [info, status, offsets] = await Promise.all([
    api("GET", "/connectors/" + enc(name)),
    api("GET", "/connectors/" + enc(name) + "/status").catch(() => ({connector: {state: "UNASSIGNED"}, tasks: []})),
    api("GET", "/connectors/" + enc(name) + "/offsets").catch((err) => ({error: err})),
  ]);
  const msg = h("div", {"data-testid": "action-result"});
  const act = (label, method, suffix, cls) => h("button", {class: cls, "data-testid": "action-" + label.toLowerCase(), onclick: async () => {
    msg.replaceChildren();
    try {
      if (label === "Delete" && !confirm(`Delete connector ${name}? Its offsets stay (Kafka Connect keeps them).`)) return;
      await api(method, "/connectors/" + enc(name) + suffix);
      if (label === "Delete") { location.hash = "#/"; return; }
      await sleep(300);
      await connectorPage(name);
    } catch (err) { msg.replaceChildren(errorBox(err)); }
  }}, label);
  const tasks = (status.tasks || []).map((t) => h("tr", {},
    h("td", {}, String(t.id)), h("td", {}, stateSpan(t.state)), h("td", {class: "mono"}, t.worker_id || ""),
    h("td", {}, t.trace ? h("details", {}, h("summary", {}, "trace"), h("pre", {class: "trace", "data-testid": "trace"}, t.trace)) : "")));
  const config = Object.keys(info.config).sort().map((k) => h("tr", {}, h("td", {class: "mono"}, k), h("td", {class: "mono"}, info.config[k])));
  const editor = h("div", {"data-testid": "offsets-editor"});
  show(
    h("h2", {}, "Connector ", h("span", {"data-testid": "connector-name"}, name)),
    h("p", {}, stateSpan(status.connector.state), " · ", info.type || status.type || "", " · ", h("span", {class: "mono"}, status.connector.worker_id || "")),
    status.connector.trace ? h("pre", {class: "trace"}, status.connector.trace) : "",
    h("div", {},
      act("Pause", "PUT", "/pause"), act("Resume", "PUT", "/resume"), act("Stop", "PUT", "/stop"),
      act("Restart", "POST", "/restart?includeTasks=true&onlyFailed=false"), act("Delete", "DELETE", "", "danger")),
    msg,
    h("h3", {}, "Tasks"),
    tasks.length ? h("table", {}, h("thead", {}, h("tr", {}, ["Task", "State", "Worker", "Failure"].map((c) => h("th", {}, c)))), h("tbody", {}, tasks)) : h("p", {class: "note"}, "No tasks."),
    h("h3", {}, "Offsets"),
    offsets.error ? errorBox(offsets.error) : offsetsTable(offsets.offsets, "offsets"),
    offsets.error ? "" : h("div", {},
      h("button", {class: "primary", "data-testid": "change-offsets", onclick: () => openEditor(name, offsets.offsets, editor)}, "Change offsets"),
      h("button", {"data-testid": "show-history", onclick: () => showHistory(name, editor)}, "History and undo")),
    editor,
    h("h3", {}, "Config"),
    h("table", {"data-testid": "config"}, h("tbody", {}, config)));
}

function offsetsTable(offsets, testid) {
  if (!offsets || offsets.length === 0) return h("p", {class: "note", "data-testid": testid}, "No offsets.");
  return h("table", {"data-testid": testid},
    h("thead", {}, h("tr", {}, h("th", {}, "Partition"), h("th", {}, "Offset"))),
    h("tbody", {}, offsets.map((o) => h("tr", {}, h("td", {class: "mono"}, canon(o.partition)), h("td", {class: "mono"}, canon(o.offset))))));
}

// diff compares offsets by partition: the partitions that change.
function diff(before, after) {
  const b = new Map(before.map((o) => [canon(o.partition), o]));
  const a = new Map(after.map((o) => [canon(o.partition), o]));
  const out = [];
  for (const [k, o] of a) {
    const old = b.get(k);
    if (!old || canon(old.offset) !== canon(o.offset)) out.push({partition: o.partition, before: old ? old.offset : null, after: o.offset});
  }
  for (const [k, o] of b) if (!a.has(k)) out.push({partition: o.partition, before: o.offset, after: null});
  return out.sort((x, y) => canon(x.partition).localeCompare(canon(y.partition)));
}

function diffTable(changes) {
  return h("table", {"data-testid": "diff"},
    h("thead", {}, h("tr", {}, h("th", {}, "Partition"), h("th", {}, "Before"), h("th", {}, "After"))),
    h("tbody", {}, changes.map((c) => h("tr", {class: "changed"},
      h("td", {class: "mono"}, canon(c.partition)),
      h("td", {class: "mono"}, c.before ? canon(c.before) : "(none)"),
      h("td", {class: "mono"}, c.after ? canon(c.after) : "(removed)")))));
}

// openEditor edits the offsets as the PATCH list, then shows the change
// and the steps that will make it.
function openEditor(name, current, box) {
  const text = h("textarea", {"data-testid": "offsets-json", spellcheck: "false"});
  text.value = JSON.stringify(current, null, 2);
  const out = h("div");
  box.replaceChildren(h("div", {class: "panel"},
    h("p", {class: "note"}, "Edit the offsets: each entry is {\"partition\": {...}, \"offset\": {...}}. A partition left out loses its offset; an empty list resets the connector."),
    text,
    h("button", {class: "primary", "data-testid": "review", onclick: () => {
      out.replaceChildren();
      let target;
      try {
        target = JSON.parse(text.value);
        if (!Array.isArray(target) || target.some((o) => !o || typeof o.partition !== "object" || o.partition === null || typeof o.offset !== "object")) {
          throw new Error("want a list of {\"partition\": {...}, \"offset\": {...}}");
        }
      } catch (err) {
        out.replaceChildren(errorBox(new Error("The offsets are not valid: " + err.message)));
        return;
      }
      target = target.filter((o) => o.offset !== null);
      reviewChange(name, current, target, out, "change");
    }}, "Review change"),
    h("button", {onclick: () => box.replaceChildren()}, "Cancel"),
    out));
}

const STEPS = [
  ["stop", "Stop the connector (its offsets change only while it is stopped)"],
  ["save", "Save the offsets it has now in this browser's history, for undo"],
  ["apply", "Apply the change"],
  ["verify", "Read the offsets back and check them"],
  ["restore", "Bring the connector back to its state"],
];

// reviewChange shows the change and its steps, and makes it on Apply;
// onDone runs once it is made.
function reviewChange(name, current, target, out, op, onDone) {
  const changes = diff(current, target);
  if (changes.length === 0) {
    out.replaceChildren(h("p", {"data-testid": "no-change"}, "The offsets are already as asked: nothing to change."));
    return;
  }
  const steps = h("ol", {class: "steps", "data-testid": "steps"}, STEPS.map(([id, text]) => h("li", {"data-step": id}, text)));
  const result = h("div");
  const apply = h("button", {class: "primary", "data-testid": "apply", onclick: async () => {
    apply.disabled = true;
    try {
      await safeChange(name, target, op, steps);
      if (onDone) onDone();
      result.replaceChildren(h("p", {"data-testid": "change-done"}, `The offsets of ${name} were changed and verified.`));
      later(() => connectorPage(name));
    } catch (err) {
      result.replaceChildren(errorBox(err, "change-error"));
    }
  }}, "Apply");
  out.replaceChildren(h("h3", {}, "The change"), diffTable(changes), h("h3", {}, "The steps"), steps, apply, result);
}

function mark(steps, id, cls) {
  const li = steps.querySelector(`[data-step="${id}"]`);
  if (li) li.className = cls;
}

// safeChange changes a connector's offsets to target as connectctl does:
// stop, save, apply, verify, restore. Each step is marked as it passes.
async function safeChange(name, target, op, steps) {
  const base = "/connectors/" + enc(name);
  const st = await api("GET", base + "/status");
  const state = st.connector.state;
  if (state !== "STOPPED") {
    await api("PUT", base + "/stop");
    const deadline = Date.now() + 60000;
    for (;;) {
      const s = await api("GET", base + "/status");
      const active = (s.tasks || []).some((t) => ["RUNNING", "PAUSED", "RESTARTING"].includes(t.state));
      if (s.connector.state === "STOPPED" && !active) break;
      if (Date.now() > deadline) { mark(steps, "stop", "failed"); throw new Error(`Connector ${name} did not stop within 60 s`); }
      await sleep(200);
    }
    mark(steps, "stop", "done");
  } else {
    mark(steps, "stop", "skipped done");
  }
  // What it committed until it stopped is what the change replaces.
  const before = (await api("GET", base + "/offsets")).offsets;
  saveHistory(name, {time: new Date().toISOString(), op, state, offsets: before});
  mark(steps, "save", "done");
  const changes = diff(before, target);
  try {
    for (const deadline = Date.now() + 30000; ;) {
      try {
        if (target.length === 0) await api("DELETE", base + "/offsets");
        else if (changes.length > 0) await api("PATCH", base + "/offsets", {offsets: changes.map((c) => ({partition: c.partition, offset: c.after}))});
        break;
      } catch (err) {
        // The tasks may still be shutting down, or the cluster rebalancing.
        const busy = err.status === 409 || /haven't stopped completely yet/.test(err.message);
        if (!busy || Date.now() > deadline) throw err;
        await sleep(500);
      }
    }
  } catch (err) {
    mark(steps, "apply", "failed");
    throw new Error(err.message + `\nConnector ${name} was left STOPPED.`);
  }
  mark(steps, "apply", "done");
  for (const deadline = Date.now() + 15000; ;) {
    const got = (await api("GET", base + "/offsets")).offsets;
    if (diff(got, target).length === 0) break;
    if (Date.now() > deadline) { mark(steps, "verify", "failed"); throw new Error("The offsets read back differ from the ones written; undo puts the previous ones back."); }
    await sleep(200);
  }
  mark(steps, "verify", "done");
  if (["RUNNING", "UNASSIGNED", "RESTARTING"].includes(state)) await api("PUT", base + "/resume");
  else if (state === "PAUSED") await api("PUT", base + "/pause");
  mark(steps, "restore", "done");
}

// The history of changes made from this console, per worker and
// connector, in the browser's local storage.
function historyKey(name) {
  return "connectd-console:history:" + location.origin + ":" + name;
}

function loadHistory(name) {
  try { return JSON.parse(localStorage.getItem(historyKey(name))) || []; } catch (e) { return []; }
}

function saveHistory(name, entry) {
  const all = loadHistory(name);
  all.push(entry);
  localStorage.setItem(historyKey(name), JSON.stringify(all.slice(-50)));
}

async function showHistory(name, box) {
  const all = loadHistory(name);
  const entries = all.map((e, i) => ({e, i})).filter(({e}) => !e.undone).reverse();
  const out = h("div");
  if (entries.length === 0) {
    box.replaceChildren(h("div", {class: "panel", "data-testid": "history"}, h("p", {class: "note"}, "No changes made from this console to undo.")));
    return;
  }
  const current = (await api("GET", "/connectors/" + enc(name) + "/offsets")).offsets;
  const newest = entries[0];
  box.replaceChildren(h("div", {class: "panel", "data-testid": "history"},
    h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Saved"), h("th", {}, "Before"), h("th", {}, "Partitions"))),
      h("tbody", {}, entries.map(({e}) => h("tr", {}, h("td", {}, new Date(e.time).toLocaleString()), h("td", {}, e.op), h("td", {}, String(e.offsets.length)))))),
    h("button", {class: "primary", "data-testid": "undo", onclick: () => {
      reviewChange(name, current, newest.e.offsets, out, "undo", () => {
        const saved = loadHistory(name);
        if (saved[newest.i]) { saved[newest.i].undone = true; localStorage.setItem(historyKey(name), JSON.stringify(saved)); }
      });
    }}, "Undo the last change"),
    out));
}

// ---- new connector ----

async function newConnectorPage() {
  const plugins = await api("GET", "/connector-plugins?connectorsOnly=true");
  const select = h("select", {"data-testid": "plugin"}, h("option", {value: ""}, "choose a connector class"),
    plugins.map((p) => h("option", {value: p.class}, `${p.class} (${p.type})`)));
  const nameInput = h("input", {"data-testid": "connector-name-input", placeholder: "name"});
  const form = h("div");
  const result = h("div");
  show(h("h2", {}, "New connector"),
    h("div", {class: "field required"}, h("label", {}, "name"), nameInput),
    h("div", {class: "field required"}, h("label", {}, "connector.class"), select),
    form, result);
  let keys = [];
  let timer = null;
  const inputs = new Map();
  const create = h("button", {class: "primary", "data-testid": "create", disabled: true, onclick: async () => {
    try {
      await api("POST", "/connectors", {name: nameInput.value, config: configOf()});
      location.hash = "#/c/" + enc(nameInput.value);
    } catch (err) { result.replaceChildren(errorBox(err, "create-error")); }
  }}, "Create");
  function configOf() {
    const cfg = {"connector.class": select.value};
    for (const [k, input] of inputs) if (input.value !== "") cfg[k] = input.value;
    if (nameInput.value) cfg.name = nameInput.value;
    return cfg;
  }
  // validate asks the worker, as the user types, what is wrong.
  async function validate() {
    if (!select.value) return;
    try {
      const res = await api("PUT", "/connector-plugins/" + enc(select.value) + "/config/validate", configOf());
      const other = [];
      for (const c of res.configs) {
        const errs = c.value.errors || [];
        const msg = form.querySelector(`[data-msg="${CSS.escape(c.value.name)}"]`);
        if (msg) msg.textContent = errs.join(" ");
        else if (errs.length && c.value.name !== "name" && c.value.name !== "connector.class") other.push(`${c.value.name}: ${errs.join(" ")}`);
      }
      const summary = form.querySelector('[data-testid="validation"]');
      summary.textContent = res.error_count === 0 ? "The config is valid." : `${res.error_count} error(s).` + (other.length ? " " + other.join(" ") : "");
      summary.className = res.error_count === 0 ? "note" : "error";
      create.disabled = res.error_count !== 0 || !nameInput.value;
    } catch (err) {
      result.replaceChildren(errorBox(err));
    }
  }
  const soon = () => { clearTimeout(timer); timer = setTimeout(validate, 250); };
  nameInput.addEventListener("input", soon);
  select.addEventListener("change", async () => {
    form.replaceChildren();
    inputs.clear();
    if (!select.value) return;
    keys = await api("GET", "/connector-plugins/" + enc(select.value) + "/config");
    const shown = keys.filter((k) => k.name !== "name" && k.name !== "connector.class")
      .sort((a, b) => (b.required - a.required) || a.order - b.order || a.name.localeCompare(b.name));
    form.replaceChildren(...shown.map((k) => {
      const input = h("input", {"data-key": k.name, placeholder: k.default_value || "", title: k.documentation || ""});
      input.addEventListener("input", soon);
      inputs.set(k.name, input);
      return h("div", {class: "field" + (k.required ? " required" : "")}, h("label", {title: k.documentation || ""}, k.name), input, h("div", {class: "msg", "data-msg": k.name}));
    }), h("p", {"data-testid": "validation", class: "note"}), create);
    validate();
  });
}

// ---- consumer groups ----

async function groupsPage() {
  let groups;
  try {
    groups = await api("GET", "/ui/api/groups");
  } catch (err) {
    show(h("h2", {}, "Consumer groups"), errorBox(err));
    return;
  }
  show(h("h2", {}, "Consumer groups"),
    groups.length === 0 ? h("p", {class: "note"}, "No consumer groups.") :
      h("table", {"data-testid": "groups"},
        h("thead", {}, h("tr", {}, ["Group", "State", "Members", "Lag"].map((c) => h("th", {}, c)))),
        h("tbody", {}, groups.map((g) => h("tr", {"data-testid": "group-row"},
          h("td", {}, h("a", {class: "row", href: "#/g/" + enc(g.group)}, g.group)),
          h("td", {}, stateSpan(g.state)), h("td", {}, String(g.members)), h("td", {}, g.lag === null ? "-" : String(g.lag)))))));
}

async function groupPage(name) {
  const g = await api("GET", "/ui/api/groups/" + enc(name));
  const topics = [...new Set(g.partitions.map((p) => p.topic))].sort();
  const topic = h("select", {"data-testid": "reset-topic"}, h("option", {value: ""}, "every partition with an offset"), topics.map((t) => h("option", {value: t}, t)));
  const to = h("select", {"data-testid": "reset-to"}, ["earliest", "latest", "offset", "shift", "datetime", "current"].map((v) => h("option", {value: v}, v)));
  const value = h("input", {"data-testid": "reset-value", placeholder: "offset, shift or 2026-07-10T14:30:00"});
  const out = h("div");
  const request = (dryRun) => {
    const body = {topic: topic.value, to: to.value, dry_run: dryRun};
    if (to.value === "offset") body.offset = Number(value.value);
    if (to.value === "shift") body.shift = Number(value.value);
    if (to.value === "datetime") body.datetime = value.value;
    return api("POST", "/ui/api/groups/" + enc(name) + "/reset", body);
  };
  const preview = h("button", {"data-testid": "reset-preview", onclick: async () => {
    out.replaceChildren();
    try {
      const res = await request(true);
      const apply = h("button", {class: "primary", "data-testid": "reset-apply", disabled: res.changes.length === 0, onclick: async () => {
        apply.disabled = true;
        try {
          const done = await request(false);
          out.append(h("p", {"data-testid": "reset-done"}, done.verified ? `The offsets of ${name} were changed and verified.` : "The offsets were changed, but did not read back as written."));
          later(() => groupPage(name));
        } catch (err) { out.append(errorBox(err, "reset-error")); }
      }}, "Reset");
      out.replaceChildren(
        res.warnings.length ? h("p", {class: "warnings"}, res.warnings.join(" ")) : "",
        res.changes.length === 0 ? h("p", {"data-testid": "no-change"}, "Nothing to change.") :
          h("table", {"data-testid": "reset-diff"},
            h("thead", {}, h("tr", {}, ["Topic", "Partition", "Current", "New"].map((c) => h("th", {}, c)))),
            h("tbody", {}, res.changes.map((c) => h("tr", {class: "changed"}, h("td", {}, c.topic), h("td", {}, String(c.partition)),
              h("td", {}, c.before === null ? "-" : String(c.before)), h("td", {}, String(c.after)))))),
        res.state !== "Empty" && res.state !== "Dead" ? h("p", {class: "error"}, `The group is ${res.state} with ${res.members} member(s): Kafka takes no offsets from outside while it has members. Stop its consumers first.`) : "",
        apply);
    } catch (err) { out.replaceChildren(errorBox(err, "reset-error")); }
  }}, "Preview");
  show(h("h2", {}, "Consumer group ", h("span", {"data-testid": "group-name"}, name)),
    h("p", {}, stateSpan(g.state), ` · ${g.members} member(s)`),
    h("table", {"data-testid": "group-partitions"},
      h("thead", {}, h("tr", {}, ["Topic", "Partition", "Current offset", "Log end", "Lag", "Consumer"].map((c) => h("th", {}, c)))),
      h("tbody", {}, g.partitions.map((p) => h("tr", {},
        h("td", {}, p.topic), h("td", {}, String(p.partition)), h("td", {}, p.current_offset === null ? "-" : String(p.current_offset)),
        h("td", {}, p.log_end_offset === null ? "-" : String(p.log_end_offset)), h("td", {}, p.lag === null ? "-" : String(p.lag)),
        h("td", {class: "mono"}, p.client_id || "-"))))),
    h("h3", {}, "Reset offsets"),
    h("div", {class: "row-inline"}, topic, to, value, preview),
    out);
}

// ---- start ----

api("GET", "/ui/api/info").then((info) => {
  document.getElementById("target").textContent = "worker: " + (info.target || location.host);
}).catch(() => {});
window.addEventListener("hashchange", route);
route();
