// karta studio's page: the editors, a debounced evaluation on every change
// (POST /api/evaluate), and the panes drawn from its answer; the exports
// (POST /api/exports) while their tab is shown. Plain DOM: no framework,
// nothing fetched but this server's API.
"use strict";

const editors = ["karta", "objects", "pods", "revisions", "crd", "script"];
const $ = (id) => document.getElementById(id);
let builtins = [];
let current = null; // the picked built-in's texts
let seq = 0;        // the latest evaluation; older answers are dropped
let timer = null;
let exportSeq = 0;  // the latest exports' request, likewise

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid === undefined || kid === null || kid === false) continue;
    e.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return e;
}

// ---- editors: line numbers, problem marks, jumping to a line ----

function renderGutter(name, marks) {
  const ta = $(name), gutter = $(name + "-gutter");
  const n = ta.value.split("\n").length;
  gutter.replaceChildren();
  for (let i = 1; i <= n; i++) {
    const m = marks && marks.get(i);
    gutter.append(el("div", { class: m ? m.severity === "error" ? "err" : "warn" : null, title: m ? m.message : null, "data-line": i }, i));
  }
  gutter.scrollTop = ta.scrollTop;
}

function gotoLine(name, line, column) {
  const ta = $(name);
  const lines = ta.value.split("\n");
  let off = 0;
  for (let i = 0; i < line - 1 && i < lines.length; i++) off += lines[i].length + 1;
  const start = off + Math.max((column || 1) - 1, 0);
  const end = off + (lines[line - 1] || "").length;
  ta.focus();
  ta.setSelectionRange(start, end);
  ta.scrollTop = Math.max((line - 4) * 18, 0);
}

function where(p) {
  const parts = [];
  if (p.line) parts.push("line " + p.line + (p.column ? ":" + p.column : ""));
  if (p.document > 1) parts.push("document " + p.document);
  return parts.join(", ");
}

function showProblems(name, problems) {
  const marks = new Map();
  const list = $(name + "-problems");
  list.replaceChildren();
  for (const p of problems || []) {
    if (p.line && (!marks.has(p.line) || p.severity === "error")) marks.set(p.line, p);
    const text = [where(p), p.field, (p.severity === "warning" ? "warning: " : "") + p.message].filter(Boolean).join(": ");
    const btn = el("button", { type: "button", text, title: p.line ? "Go to line " + p.line : null });
    if (p.line) btn.addEventListener("click", () => gotoLine(name, p.line, p.column));
    list.append(el("li", { class: p.severity, "data-line": p.line || null }, btn));
  }
  renderGutter(name, marks);
}

// ---- the built-in picker ----

async function loadBuiltins() {
  const res = await fetch("api/builtins");
  builtins = await res.json();
  const sel = $("builtin");
  for (const b of builtins) sel.append(el("option", { value: b.name, text: b.name + " (" + b.kind.replace(", Kind=", " ") + ")" }));
}

async function pickBuiltin(name) {
  const state = $("state");
  state.replaceChildren(el("option", { value: "", text: "—" }));
  state.disabled = true;
  $("builtin-kind").textContent = "";
  if (!name) return;
  const res = await fetch("api/builtins/" + encodeURIComponent(name));
  if (!res.ok) { setBusy((await res.json()).error); return; }
  current = await res.json();
  const names = Object.keys(current.states).sort();
  for (const s of names) state.append(el("option", { value: s, text: s.replace(/\.yaml$/, "") }));
  state.disabled = names.length === 0;
  const preferred = names.includes("running.yaml") ? "running.yaml" : names[0] || "";
  state.value = preferred;
  $("karta").value = current.karta;
  $("script").value = current.script || "";
  $("objects").value = preferred ? current.states[preferred] : "";
  $("pods").value = current.pods || "";
  $("revisions").value = current.revisions || "";
  const b = builtins.find((x) => x.name === name);
  $("builtin-kind").textContent = b ? b.kind.replace(", Kind=", " ") : "";
  changed(0);
}

function pickState(s) {
  if (!current || !s) return;
  $("objects").value = current.states[s];
  changed(0);
}

// ---- evaluation ----

function setBusy(text) { $("busy").textContent = text; }

function changed(delay) {
  for (const name of editors) renderGutter(name, null);
  clearTimeout(timer);
  timer = setTimeout(evaluate, delay === undefined ? 350 : delay);
}

// inputs are the editors' texts, as every endpoint takes them.
function inputs() {
  return JSON.stringify({ karta: $("karta").value, script: $("script").value, crd: $("crd").value, objects: $("objects").value,
    pods: $("pods").value, revisions: $("revisions").value, revisionType: $("revision-type").value });
}

async function evaluate() {
  const mine = ++seq;
  setBusy("evaluating…");
  const body = inputs();
  if (!$("pane-exports").hidden) exports();
  let answer;
  try {
    const res = await fetch("api/evaluate", { method: "POST", headers: { "Content-Type": "application/json" }, body });
    answer = await res.json();
    if (!res.ok) throw new Error(answer.error || res.statusText);
  } catch (e) {
    if (mine === seq) setBusy("error: " + e.message);
    return;
  }
  if (mine !== seq) return;
  render(answer);
  const errors = answer.problems.filter((p) => p.severity === "error").length;
  setBusy(errors ? errors + (errors === 1 ? " problem" : " problems") : "up to date");
}

function render(a) {
  const scriptProblems = a.problems.filter((p) => p.field === "script");
  // The CRD's schema findings are the Karta's, at their line, named so.
  const kartaProblems = a.problems.filter((p) => p.field !== "script").map((p) => p.check === "crd" ? { ...p, message: "schema: " + p.message } : p);
  if (a.compileError) kartaProblems.push({ severity: "error", line: 0, message: a.compileError });
  showProblems("karta", kartaProblems);
  showProblems("script", scriptProblems);
  showProblems("objects", a.objectProblems);
  showProblems("pods", a.podProblems);
  showProblems("revisions", a.revisionProblems);
  showProblems("crd", a.crdProblems);
  $("karta-count").textContent = a.kartas.map((k) => k.name + " → " + k.kind.replace(", Kind=", " ")).join("; ");
  $("lua").textContent = a.lua || "(no program: the Karta has errors)";
  const docs = a.documents;
  const none = () => el("p", { class: "empty", text: a.lua ? "No object to answer for: paste one, or pick an example state." : "Fix the Karta's problems to see its answers." });
  for (const [pane, draw] of [["status", statusOf], ["tree", treeOf], ["gangs", gangsOf], ["schedulers", schedulersOf], ["podspecs", podSpecsOf], ["revise", reviseOf]]) {
    const p = $("pane-" + pane);
    p.replaceChildren(...(docs.length ? docs.map((d) => docCard(d, draw(d), pane)) : [none()]));
  }
}

function docCard(d, body, pane) {
  const label = "document " + d.document + (d.item ? ", item " + d.item : "") + ", line " + d.line;
  const errs = Object.entries(d.errors || {}).filter(([hook]) => hook === "karta" || paneHooks[pane].includes(hook));
  return el("article", { class: "doc", "data-document": d.document },
    el("h3", {}, d.object || "(an object without a name)", " ", el("span", { class: "muted", text: label + (d.karta ? " · karta " + d.karta : "") })),
    errs.map(([hook, msg]) => el("div", { class: "error-box", text: hook + ": " + msg })),
    pane === "status" ? (d.warnings || []).map((w) => el("div", { class: "warning-box", text: w })) : null,
    body);
}

const paneHooks = { status: ["status"], tree: ["tree"], gangs: ["gangs"], schedulers: [], podspecs: ["pods"], revise: ["revise"] };

function statusOf(d) {
  const s = d.status;
  if (!s) return null;
  return el("div", {},
    el("p", {}, "Status ", el("span", { class: "badge status-badge s-" + s.status, text: s.status }), s.phase ? " · phase " + s.phase : ""),
    el("p", {}, "Matched rules: ", (s.matched || []).length ? s.matched.map((m) => el("span", { class: "chip" + (m === s.status ? " winner" : ""), text: m })) : el("span", { class: "muted", text: "none" })),
    s.message ? el("p", { text: "Message: " + s.message }) : null,
    (s.conditions || []).length ? el("table", {}, el("thead", {}, el("tr", {}, ["Type", "Status", "Reason", "Message"].map((h) => el("th", { text: h })))),
      el("tbody", {}, s.conditions.map((c) => el("tr", {}, [c.type, c.status, c.reason, c.message].map((v) => el("td", { text: v || "–" })))))) : el("p", { class: "muted", text: "No conditions." }));
}

// treeOf draws the workload and its components, instances, replicas and
// pods; the pods no component claims follow it in a row of their own, so
// that they do not widen the tree (the gangs pane has the groups).
function treeOf(d) {
  if (!d.tree) return null;
  const loose = d.tree.children.filter((c) => c.kind === "Pod");
  const root = { ...d.tree, children: d.tree.children.filter((c) => c.kind !== "Pod") };
  return el("div", {},
    el("div", { class: "tree", role: "tree", "aria-label": "Workload tree of " + d.object }, drawNode(root)),
    loose.length ? el("div", { class: "loose", role: "group", "aria-label": "Pods no component claims" },
      el("h4", { text: "Pods no component claims" }), loose.map(drawNode)) : null);
}

function drawNode(n) {
  const f = n.fields || {};
  let detail = "";
  switch (n.kind) {
    case "Workload": detail = (f.kind || "") + (f.status ? " · " + f.status : ""); break;
    case "Instance": detail = [f.replicas !== undefined ? "replicas " + f.replicas : "", f.existing !== undefined ? f.existing + "/" + f.expected + " pods" : ""].filter(Boolean).join(" · "); break;
    case "Pod": detail = f.reason ? "unplaced" : f.phase || ""; break;
    case "Replica": detail = f.existing !== undefined ? f.existing + " pods" : ""; break;
  }
  const kids = (n.children || []).filter((c) => c.kind !== "Group");
  const unplaced = n.kind === "Pod" && f.reason;
  return el("div", { class: "node kind-" + n.kind + (unplaced ? " unplaced" : ""), role: "treeitem", "data-kind": n.kind, "data-name": n.name, "aria-label": n.kind + " " + (n.name || "(no id)") },
    el("div", { class: "box", title: [n.kind + " " + (n.name || "(no id)"), detail, f.style, f.group ? "gang " + f.group : "", f.reason].filter(Boolean).join("\n") }, el("span", { class: "k", text: n.kind }), el("span", { class: "n", text: n.name || "(no id)" }), detail ? el("span", { class: "d", text: detail }) : null),
    // Pods, the leaves, stack in a column under their instance or replica,
    // so that a tree of many pods stays as wide as its structure.
    kids.length ? el("div", { class: kids.every((c) => c.kind === "Pod") ? "kids leaves" : "kids", role: "group" }, kids.map(drawNode)) : null);
}

function gangsOf(d) {
  const g = d.gangs;
  if (!g) return null;
  const group = (x, sub) => el("section", { class: "gang" + (sub ? " sub" : ""), "data-group": x.name },
    el("h4", {}, (sub ? "Subgroup " : "Group ") + x.name + " ", el("span", { class: "muted", text: "minMember " + x.minMember + " · " + (x.pods || []).length + " pods" })),
    (x.pods || []).map((p) => el("span", { class: "chip", "data-pod": p, text: p })),
    (x.subGroups || []).map((s) => group(s, true)));
  return el("div", {},
    (g.groups || []).length ? g.groups.map((x) => group(x, false)) : el("p", { class: "muted", text: "No gang groups." }),
    (g.unmatched || []).length ? el("div", {}, el("h4", { text: "Unmatched pods" }), el("table", {}, el("tbody", {}, g.unmatched.map((u) => el("tr", { "data-pod": u.pod }, el("td", { text: u.pod }), el("td", { text: u.reason })))))) : null);
}

function schedulersOf(d) {
  if (!d.schedulers) return el("p", { class: "muted", text: "The Karta has no gangScheduling instructions: no scheduler objects." });
  return el("div", {}, d.schedulers.map((s) => el("section", { "data-target": s.target },
    el("h4", { text: s.target }),
    s.error ? el("div", { class: "error-box", text: s.error }) : null,
    s.result ? [
      (s.result.warnings || []).map((w) => el("div", { class: "warning-box", text: w })),
      el("p", { class: "muted", text: s.result.objects.length + " object(s): " + s.result.objects.map((o) => o.kind + " " + o.metadata.name).join(", ") + " · " + (s.result.links || []).length + " pod link(s)" }),
      el("details", {}, el("summary", { text: "objects" }), el("pre", { text: JSON.stringify(s.result.objects, null, 2) }))] : null)));
}

function podSpecsOf(d) {
  const p = d.pods;
  if (!p) return null;
  if (!(p.items || []).length) return el("p", { class: "muted", text: "No pod-bearing component is present." });
  return el("div", {}, el("table", {},
    el("thead", {}, el("tr", {}, ["Component", "Instance", "Style", "Replicas", "Min", "Max"].map((h) => el("th", { text: h })))),
    el("tbody", {}, p.items.map((it) => el("tr", {},
      [it.component, it.instance || "–", it.podTemplateSpec ? "podTemplateSpec" : it.podSpec ? "podSpec" : it.fragmented ? "fragmented" : "–",
        it.scale && it.scale.replicas != null ? it.scale.replicas : "–", it.scale && it.scale.minReplicas != null ? it.scale.minReplicas : "–", it.scale && it.scale.maxReplicas != null ? it.scale.maxReplicas : "–"]
        .map((v) => el("td", { text: v })))))),
    p.items.map((it) => el("details", {}, el("summary", { text: it.component + (it.instance ? " " + it.instance : "") }), el("pre", { text: JSON.stringify(it.podTemplateSpec || it.podSpec || it.fragmented, null, 2) }))));
}

// reviseOf shows karta revise's answer: the diff from the object to the
// revised one, the RFC 6902 patch, and the revised object whole.
function reviseOf(d) {
  const r = d.revise;
  if (!r) return d.errors && d.errors.revise ? null : el("p", { class: "muted", text: "No revisions: write karta revise's list in the Revisions editor." });
  return el("div", {},
    (r.warnings || []).map((w) => el("div", { class: "warning-box", text: w })),
    r.diff ? diffOf(r.diff) : el("p", { class: "muted", text: "The revisions change nothing." }),
    el("details", {}, el("summary", { text: "JSON Patch (" + r.patch.length + " operations, karta revise -o patch)" }), el("pre", { text: JSON.stringify(r.patch, null, 2) })),
    el("details", {}, el("summary", { text: "Revised object (karta revise)" }), el("pre", { text: r.after })));
}

// diffOf draws a unified diff, each line marked as added, removed, a hunk
// header or context.
function diffOf(text) {
  const kind = (l) => l.startsWith("@@") ? "hunk" : l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : "ctx";
  return el("pre", { class: "diff", "aria-label": "Diff from the object to the revised object" },
    text.replace(/\n$/, "").split("\n").map((l) => el("span", { class: kind(l) }, l + "\n")));
}

// ---- exports: Karmada's and Argo CD's, their answers beside karta's ----

async function exports() {
  const mine = ++exportSeq;
  const pane = $("pane-exports");
  pane.setAttribute("aria-busy", "true");
  let a;
  try {
    const res = await fetch("api/exports", { method: "POST", headers: { "Content-Type": "application/json" }, body: inputs() });
    a = await res.json();
    if (!res.ok) throw new Error(a.error || res.statusText);
  } catch (e) {
    if (mine === exportSeq) { pane.replaceChildren(el("div", { class: "error-box", text: "exports: " + e.message })); pane.removeAttribute("aria-busy"); }
    return;
  }
  if (mine !== exportSeq) return;
  pane.removeAttribute("aria-busy");
  if (!a.exports.length) { pane.replaceChildren(el("p", { class: "empty", text: "Fix the Karta's problems to see its exports." })); return; }
  pane.replaceChildren(...a.exports.map(exportOf),
    ...(a.documents.length ? a.documents.map(exportAnswersOf) : [el("p", { class: "empty", text: "No object to run the exports on: paste one, or pick an example state." })]));
}

function exportOf(x) {
  const lines = (t) => t.split("\n").length - 1 + " lines";
  return el("section", { class: "export", "data-karta": x.karta },
    el("h3", {}, "Exports of karta " + x.karta),
    el("div", { class: "export-row" },
      el("div", { "data-export": "karmada" }, el("h4", { text: "Karmada (karta karmada export)" }),
        x.karmadaError ? el("div", { class: "error-box", text: x.karmadaError }) :
          el("details", {}, el("summary", { text: "ResourceInterpreterCustomization · " + lines(x.karmada) }), el("pre", { text: x.karmada }))),
      el("div", { "data-export": "argo" }, el("h4", { text: "Argo CD (karta argo export)" }),
        x.argoError ? el("div", { class: "error-box", text: x.argoError }) :
          Object.keys(x.argo).sort().map((f) => el("details", {}, el("summary", { text: f + " · " + lines(x.argo[f]) }), el("pre", { text: x.argo[f] }))))));
}

// exportAnswersOf shows each operation's two answers side by side: the
// exported script's and karta's in process, marked = or ≠.
function exportAnswersOf(d) {
  const label = "document " + d.document + (d.item ? ", item " + d.item : "") + ", line " + d.line;
  const rows = [...(d.karmada || []).map((c) => ["Karmada", c]), ...(d.argo ? [["Argo CD", d.argo]] : [])];
  const answer = (cls, v, err) => err ? el("div", { class: cls + " error-box", text: err }) : el("pre", { class: cls, text: JSON.stringify(v, null, 2) });
  const disagree = rows.filter(([, c]) => !c.agree && !c.notExported).length;
  const refused = rows.filter(([, c]) => c.notExported).length;
  const verdict = (c) => c.notExported ? ["refused", "–", "not exported:"] : c.agree ? ["agree", "=", "same answer:"] : ["disagree", "≠", "different answers:"];
  return el("article", { class: "doc", "data-document": d.document },
    el("h3", {}, d.object || "(an object without a name)", " ", el("span", { class: "muted", text: label + (d.karta ? " · karta " + d.karta : "") })),
    d.error ? el("div", { class: "error-box", text: d.error }) : null,
    rows.length ? el("p", { class: disagree ? "disagree-note" : "muted", text: disagree ? disagree + " of " + rows.length + " answers disagree: marked ≠" :
      refused === rows.length ? "Not exported: karta's answers alone." : "The exports answer as karta does in process" + (refused ? " (" + refused + " not exported: marked –)." : ".") }) : null,
    rows.map(([who, c]) => el("section", { class: "cmp " + verdict(c)[0], "data-operation": who + " " + c.operation },
      el("h4", {}, el("span", { class: "verdict", "aria-label": verdict(c)[2], text: verdict(c)[1] }), " " + who + " " + c.operation),
      el("div", { class: "cmp-row" },
        el("div", {}, el("h5", { text: "Exported script" }), c.notExported ? el("p", { class: "muted exported", text: "Not exported (the export's error is above)." }) : answer("exported", c.exported, c.exportedError)),
        el("div", {}, el("h5", { text: "In process" }), answer("in-process", c.inProcess, c.inProcessError))))));
}

// ---- tabs: arrow keys move between them (WAI-ARIA tabs) ----

function selectTab(tab, focus) {
  for (const t of document.querySelectorAll("[role=tab]")) {
    const on = t === tab;
    t.setAttribute("aria-selected", on);
    t.tabIndex = on ? 0 : -1;
    $(t.getAttribute("aria-controls")).hidden = !on;
  }
  if (tab.id === "tab-exports") exports();
  if (focus) tab.focus();
}

function initTabs() {
  const tabs = [...document.querySelectorAll("[role=tab]")];
  for (const t of tabs) {
    t.addEventListener("click", () => selectTab(t, false));
    t.addEventListener("keydown", (e) => {
      const i = tabs.indexOf(t);
      const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
      if (next === undefined) return;
      e.preventDefault();
      selectTab(tabs[(next + tabs.length) % tabs.length], true);
    });
  }
}

function download() {
  save(new Blob([$("karta").value], { type: "application/yaml" }), (current ? current.name : "karta") + ".yaml");
}

// bundle downloads a zip of a folder that karta test passes on: the inputs,
// a karta_test.yaml that expects the answers shown, and their goldens.
async function bundle() {
  const res = await fetch("api/bundle", { method: "POST", headers: { "Content-Type": "application/json" }, body: inputs() });
  if (!res.ok) { setBusy("error: " + (await res.json()).error); return; }
  const name = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") || "");
  save(await res.blob(), name ? name[1] : "karta.zip");
}

function save(blob, file) {
  const a = el("a", { href: URL.createObjectURL(blob), download: file });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

async function readCRD(file) {
  $("crd").value = await file.text();
  changed(0);
}

function init() {
  for (const name of editors) {
    const ta = $(name);
    ta.addEventListener("input", () => changed());
    ta.addEventListener("scroll", () => { $(name + "-gutter").scrollTop = ta.scrollTop; });
    renderGutter(name, null);
  }
  $("builtin").addEventListener("change", (e) => pickBuiltin(e.target.value));
  $("state").addEventListener("change", (e) => pickState(e.target.value));
  $("download").addEventListener("click", download);
  $("bundle").addEventListener("click", bundle);
  $("revision-type").addEventListener("change", () => changed(0));
  // A CRD comes by paste, by a file picked (the keyboard's way) or by a
  // file dropped on its editor: read here, in the page, and sent as text.
  $("crd-file").addEventListener("change", (e) => { if (e.target.files[0]) readCRD(e.target.files[0]); });
  const drop = $("crd-drop");
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("dropping"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("dropping"));
  drop.addEventListener("drop", (e) => {
    drop.classList.remove("dropping");
    if (!e.dataTransfer.files.length) return;
    e.preventDefault();
    readCRD(e.dataTransfer.files[0]);
  });
  initTabs();
  loadBuiltins().then(() => {
    const want = new URLSearchParams(location.search).get("builtin");
    if (want) { $("builtin").value = want; pickBuiltin(want); }
  });
  changed(0);
}

document.addEventListener("DOMContentLoaded", init);
