// make watch's page: it draws the state /api/stream sends (live) or
// /api/state?t= returns (replay). No framework, no build step: each
// render rebuilds the page from the state.
"use strict";

let state = null;
let selected = null; // the pod whose attempts are shown, "ns/name"

// h builds an element: h("div", {class: "x"}, "text", child, ...).
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

// since formats a time as seconds after the lane's start.
function since(lane, t) {
  if (!t || !lane.start) return "";
  const s = (new Date(t) - new Date(lane.start)) / 1000;
  return "+" + s.toFixed(3) + "s";
}

function percent(used, total) {
  return total > 0 ? Math.min(100, (100 * used) / total) : 0;
}

function bar(label, used, total, fmt) {
  return h("div", {class: "bar", title: `${label}: ${fmt(used)} of ${fmt(total)}`},
    h("span", {class: "bar-label"}, label),
    h("span", {class: "bar-track"}, h("span", {class: "bar-fill", style: `width:${percent(used, total)}%`})),
    h("span", {class: "bar-text"}, `${fmt(used)} / ${fmt(total)}`));
}

const cpu = (m) => (m >= 1000 && m % 1000 === 0 ? m / 1000 + "" : m + "m");
const mem = (b) => (b >= 1 << 30 ? (b / (1 << 30)).toFixed(1) + "Gi" : Math.round(b / (1 << 20)) + "Mi");
const count = (n) => String(n);

// What each lane's log gives, for the caption under its name.
function capabilities(lane) {
  const c = lane.capabilities;
  const have = [], lack = [];
  (c.queue ? have : lack).push("the queue");
  (c.filterVerdicts ? have : lack).push("Filter verdicts per node");
  (c.scores ? have : lack).push("scores");
  (c.rawScores ? have : lack).push("raw scores");
  if (!lane.chapter || lane.chapter >= 7 || lane.upstream) (c.backoffExpiry ? have : lack).push("backoff ends");
  if (c.preemption) have.push("preemption");
  if (c.podGroups) have.push("pod groups");
  return `Its log has shown ${have.join(", ") || "nothing yet"}` + (lack.length ? `; not (yet): ${lack.join(", ")}.` : ".");
}

const queues = [
  ["Pending", "pending"],
  ["Active", "activeQ"],
  ["Backoff", "backoffQ"],
  ["Unschedulable", "unschedulable pool"],
  ["Gated", "gated"],
  ["InFlight", "in flight"],
  ["Scheduled", "scheduled, not yet seen bound"],
];

// Chapters 02-05 have no queue: their pods wait, are tried, or are done.
const noQueue = new Set(["Pending", "InFlight", "Scheduled"]);

function podChip(lane, p) {
  const moves = p.moves || [];
  const last = moves.length ? moves[moves.length - 1] : null;
  const title = moves.map((m) => `${since(lane, m.at)} ${m.queue}${m.event ? " (" + m.event + ")" : ""}`).join("\n");
  const extra = [];
  if (p.queue === "Backoff" && p.backoffUntil) extra.push(h("small", {}, " until " + since(lane, p.backoffUntil)));
  if (p.queue === "Unschedulable" && p.unschedulablePlugins) extra.push(h("small", {class: "plugins"}, " " + p.unschedulablePlugins.join(", ")));
  if (p.queue === "Gated" && p.gatingPlugin) extra.push(h("small", {class: "plugins"}, " " + p.gatingPlugin));
  if (last && last.event && p.queue !== "InFlight") extra.push(h("small", {class: "event"}, " ← " + last.event));
  if (p.nominatedNode) extra.push(h("small", {}, " nominated to " + p.nominatedNode));
  return h("button", {type: "button", class: "pod" + (p.name === selected ? " selected" : ""), "data-pod": p.name, title,
    onclick: () => { selected = p.name; render(); }}, p.name.split("/")[1], extra);
}

function queueView(lane) {
  // A group in the queue is one entry with its members not yet bound;
  // they are not drawn again on their own.
  const queued = new Set(lane.groups.filter((g) => g.queue).map((g) => g.name));
  // A chapter's own queues: none before 06 (only what its log says),
  // no backoffQ before 07.
  let shown = lane.capabilities.queue ? queues : queues.filter(([q]) => noQueue.has(q));
  if (lane.chapter && lane.chapter < 7 && !lane.upstream) shown = shown.filter(([q]) => q !== "Backoff");
  const cols = shown.map(([q, label]) => {
    const entries = [];
    for (const g of lane.groups) {
      if (g.queue === q) {
        const members = lane.pods.filter((p) => p.podGroup === g.name && !p.deleted && p.queue !== "Bound");
        entries.push(h("div", {class: "group", "data-group": g.name}, h("b", {}, "group " + g.name.split("/")[1]), members.map((p) => podChip(lane, p))));
      }
    }
    for (const p of lane.pods) {
      if (p.deleted || p.queue !== q) continue;
      if (p.podGroup && queued.has(p.podGroup) && p.queue !== "Bound") continue;
      entries.push(podChip(lane, p));
    }
    return h("div", {class: "queue-col", "data-queue": q}, h("h4", {}, label, h("span", {class: "n"}, " " + entries.length)), entries);
  });
  return h("div", {class: "queue", style: `grid-template-columns: repeat(${shown.length}, minmax(0, 1fr))`}, cols);
}

// The scheduler's own count of its queue, from its /metrics
// (scheduler_pending_pods): what the columns below rebuild from its log,
// pod by pod.
function pendingView(lane) {
  const p = lane.pendingPods;
  if (!p) return null;
  const parts = ["active", "backoff", "unschedulable", "gated"].filter((q) => q in p).map((q) => `${q} ${p[q]}`);
  if (!parts.length) return null;
  return h("p", {class: "caps metrics"}, "scheduler_pending_pods on its /metrics: " + parts.join(", "));
}

function nodesView(lane) {
  return h("div", {class: "nodes"}, lane.nodes.map((n) =>
    h("div", {class: "node", "data-node": n.name},
      h("div", {class: "node-head"}, h("b", {}, n.name),
        state.mode === "live" ? h("button", {type: "button", class: "delete", title: "delete node " + n.name,
          onclick: () => act("DELETE", "/api/nodes/" + encodeURIComponent(n.name))}, "×") : null),
      bar("cpu", n.requested.milliCPU, n.allocatable.milliCPU, cpu),
      bar("memory", n.requested.memory, n.allocatable.memory, mem),
      bar("pods", n.requested.pods, n.allocatable.pods, count),
      h("div", {class: "on-node"}, (n.pods || []).map((name) => {
        const p = lane.pods.find((x) => x.name === name);
        return p ? podChip(lane, p) : name;
      })),
      h("details", {}, h("summary", {}, "labels and taints"),
        h("ul", {}, Object.entries(n.labels || {}).map(([k, v]) => h("li", {}, `${k}=${v}`)),
          (n.taints || []).map((t) => h("li", {class: "taint"}, "taint " + t))))
    )));
}

function eventsView(lane) {
  const events = lane.events.slice(-40).reverse();
  return h("ol", {class: "events"}, events.map((e) =>
    h("li", {class: e.source}, h("time", {}, since(lane, e.at)), " ", h("b", {}, e.reason), " ", e.object || "", e.message ? h("span", {class: "msg"}, " " + e.message) : null)));
}

// What kube-scheduler's log cannot give the page (docs/watch.md says
// where each fact comes from).
const upstreamNote = "kube-scheduler v1.37.1 logs no Filter verdict per node, no raw or normalized score (only the weighted ones, at -v=10) and not when a backoff ends; its moves into activeQ and backoffQ come at -v=5.";

function laneView(lane, i) {
  return h("section", {class: "lane", "data-lane": i},
    h("h2", {}, lane.name),
    state.caption ? h("p", {class: "caption"}, state.caption) : null,
    h("p", {class: "caps"}, capabilities(lane)),
    lane.upstream ? h("p", {class: "caps"}, upstreamNote) : null,
    h("h3", {}, "Queue"), pendingView(lane), queueView(lane),
    h("h3", {}, "Nodes"), nodesView(lane),
    h("h3", {}, "Events"), eventsView(lane));
}

// scoreCell shows raw → normalized × weight = weighted where the log has
// them; kube-scheduler logs the weighted score only.
function scoreCell(s) {
  if (!s) return h("td", {class: "none"}, "");
  if (s.raw !== undefined && s.raw !== null) {
    return h("td", {title: "raw → normalized × weight = weighted"}, `${s.raw} → ${s.normalized ?? "?"} × ${s.weight} = `, h("b", {}, s.weighted));
  }
  return h("td", {title: "weighted score"}, h("b", {}, s.weighted));
}

function attemptView(lane, p, a, n) {
  const nodes = new Set(lane.nodes.map((x) => x.name));
  for (const k of Object.keys(a.filter || {})) nodes.add(k);
  for (const k of Object.keys(a.scores || {})) nodes.add(k);
  const plugins = new Set();
  for (const per of Object.values(a.scores || {})) for (const k of Object.keys(per)) plugins.add(k);
  const pluginList = [...plugins].sort();
  const rows = [...nodes].sort().map((node) => {
    const v = (a.filter || {})[node];
    let verdict;
    if (v === undefined) verdict = h("td", {class: "none"}, a.filter ? "not evaluated" : "");
    else if (!v.plugin) verdict = h("td", {class: "pass"}, "✓ passed");
    else verdict = h("td", {class: "fail"}, "✗ " + v.plugin + (v.reason ? ": " + v.reason : ""));
    const scores = (a.scores || {})[node] || {};
    const total = (a.totals || {})[node];
    return h("tr", {class: node === a.node ? "chosen" : "", "data-node": node},
      h("th", {}, node, node === a.node ? " ← chosen" : ""), verdict,
      pluginList.map((pl) => scoreCell(scores[pl])),
      h("td", {class: "total"}, total ?? ""));
  });
  const table = h("table", {class: "verdicts"},
    h("thead", {}, h("tr", {}, h("th", {}, "node"), h("th", {}, "Filter"), pluginList.map((pl) => h("th", {}, pl)), h("th", {}, "total"))),
    h("tbody", {}, rows));
  const pre = a.preemption;
  const preemption = pre ? h("div", {class: "preemption"},
    h("b", {}, "Preemption: "),
    pre.node ? `chose ${pre.node}` : (pre.result || "no candidate"),
    pre.candidates ? h("ul", {}, Object.entries(pre.candidates).map(([node, victims]) => h("li", {}, `candidate ${node}: victims ${victims.join(", ")}`))) : null,
    pre.victims ? h("div", {}, "deleted: " + pre.victims.join(", ")) : null,
    p.nominatedNode ? h("div", {}, "nominated to " + p.nominatedNode) : null) : null;
  const dur = a.end ? ((new Date(a.end) - new Date(a.start)) / 1000).toFixed(3) + "s" : "running";
  return h("div", {class: "attempt " + (a.result || "running")},
    h("h4", {}, `Attempt ${n} at ${since(lane, a.start)}: ${a.result || "in flight"}`, a.node ? " on " + a.node : "", ` (${dur}`,
      a.evaluatedNodes ? `, ${a.evaluatedNodes} ${a.evaluatedNodes === 1 ? "node" : "nodes"} evaluated, ${a.feasibleNodes} feasible` : "", ")"),
    a.message ? h("p", {class: "msg"}, a.message) : null,
    lane.capabilities.filterVerdicts ? null : h("p", {class: "hint"}, "This log has no per-node Filter verdict (kube-scheduler v1.37.1 logs none; the message above counts the reasons)."),
    table, preemption);
}

function attemptsView() {
  const box = document.getElementById("attempt-lanes");
  box.replaceChildren();
  document.getElementById("selected").textContent = selected || "";
  if (!selected) return;
  state.lanes.forEach((lane) => {
    const p = lane.pods.find((x) => x.name === selected);
    const col = h("div", {class: "attempt-lane"}, h("h3", {}, lane.name), state.caption ? h("p", {class: "caption"}, state.caption) : null);
    if (!p) {
      col.append(h("p", {}, "no such pod here"));
    } else {
      if (state.mode === "live" && !p.deleted) {
        const [ns, name] = p.name.split("/");
        col.append(h("button", {type: "button", class: "delete", onclick: () => act("DELETE", `/api/pods/${encodeURIComponent(ns)}/${encodeURIComponent(name)}`)}, "delete pod"));
      }
      if (p.condition) col.append(h("p", {class: "msg"}, "PodScheduled=False " + p.condition));
      const moves = p.moves || [];
      col.append(h("details", {}, h("summary", {}, `${moves.length} moves`),
        h("ol", {class: "moves"}, moves.map((m) => h("li", {}, `${since(lane, m.at)} ${m.queue}${m.event ? " ← " + m.event : ""}`)))));
      (p.attempts || []).forEach((a, i) => col.append(attemptView(lane, p, a, i + 1)));
    }
    box.append(col);
  });
}

// compareView lines up, side by side, where each lane placed each pod, or
// where the pod waits; a row whose lanes differ is marked.
function compareView() {
  const box = document.getElementById("compare");
  box.replaceChildren();
  if (state.lanes.length < 2) return;
  const names = [...new Set(state.lanes.flatMap((l) => l.pods.filter((p) => !p.deleted).map((p) => p.name)))].sort();
  const rows = names.map((name) => {
    const cells = state.lanes.map((l) => {
      const p = l.pods.find((x) => x.name === name);
      return p ? (p.node || p.queue) : "";
    });
    const differ = new Set(cells).size > 1;
    return h("tr", {class: differ ? "differ" : "", "data-pod": name},
      h("th", {}, h("button", {type: "button", class: "pod", onclick: () => { selected = name; render(); }}, name)), cells.map((c) => h("td", {}, c)));
  });
  box.append(h("h2", {}, "Side by side: where each placed each pod"),
    h("table", {class: "verdicts"}, h("thead", {}, h("tr", {}, h("th", {}, "pod"), state.lanes.map((l) => h("th", {}, l.name)))), h("tbody", {}, rows)));
}

function render() {
  if (!state) return;
  compareView();
  document.getElementById("mode").textContent = state.mode === "live" ? "live" : "replay";
  const warning = document.getElementById("warning");
  warning.hidden = !state.warning;
  warning.textContent = state.warning || "";
  document.getElementById("controls").hidden = state.mode !== "live";
  document.getElementById("lanes").replaceChildren(...state.lanes.map(laneView));
  document.getElementById("lanes").style.setProperty("--lanes", state.lanes.length);
  if (state.mode === "replay") {
    document.getElementById("caption").textContent = state.caption || "";
    document.getElementById("clock").textContent = ((new Date(state.at) - new Date(state.from)) / 1000).toFixed(2) + "s of " + ((new Date(state.to) - new Date(state.from)) / 1000).toFixed(2) + "s";
  }
  attemptsView();
}

async function act(method, url, body) {
  const msg = document.getElementById("message");
  msg.textContent = "…";
  msg.className = "";
  const res = await fetch(url, {method, headers: body ? {"Content-Type": "application/json"} : {}, body: body ? JSON.stringify(body) : undefined});
  if (res.ok) {
    msg.textContent = "done";
    msg.className = "ok";
  } else {
    msg.textContent = await res.text();
    msg.className = "error";
  }
}

function formJSON(form) {
  const out = {};
  for (const [k, v] of new FormData(form)) {
    if (v === "") continue;
    out[k] = k === "priority" ? Number(v) : v;
  }
  return out;
}

function live() {
  const es = new EventSource("api/stream");
  es.onmessage = (e) => { state = JSON.parse(e.data); render(); };
  document.getElementById("pod-form").addEventListener("submit", (e) => { e.preventDefault(); act("POST", "api/pods", formJSON(e.target)); });
  document.getElementById("node-form").addEventListener("submit", (e) => { e.preventDefault(); act("POST", "api/nodes", formJSON(e.target)); });
  document.getElementById("example-form").addEventListener("submit", (e) => { e.preventDefault(); act("POST", "api/examples", formJSON(e.target)); });
  fetch("api/examples").then((r) => r.json()).then((names) => {
    document.getElementById("examples").replaceChildren(...names.map((n) => h("option", {value: n}, n)));
  });
}

async function replay(first) {
  state = first;
  const slider = document.getElementById("slider");
  document.getElementById("replay").hidden = false;
  const span = new Date(first.to) - new Date(first.from);
  slider.max = String(span);
  slider.value = String(span);
  let pending = null;
  const show = async () => {
    const t = slider.value;
    pending = t;
    const st = await (await fetch("api/state?t=" + t)).json();
    if (pending === t) { state = st; render(); }
  };
  slider.addEventListener("input", show);
  let timer = null;
  document.getElementById("play").addEventListener("click", () => {
    if (timer) { clearInterval(timer); timer = null; return; }
    if (Number(slider.value) >= span) slider.value = "0";
    timer = setInterval(() => {
      slider.value = String(Math.min(span, Number(slider.value) + 100));
      show();
      if (Number(slider.value) >= span) { clearInterval(timer); timer = null; }
    }, 100);
  });
  render();
}

// A pod to show at once, ?pod=ns/name, and in a replay a time, ?t=ms: the
// screenshots use them, and wait for body[data-ready] before they shoot.
selected = new URLSearchParams(location.search).get("pod");
async function start() {
  const st = await (await fetch("api/state")).json();
  if (st.mode === "replay") {
    await replay(st);
    const t = new URLSearchParams(location.search).get("t");
    if (t !== null) {
      state = await (await fetch("api/state?t=" + t)).json();
      document.getElementById("slider").value = t;
      render();
    }
  } else {
    state = st;
    render();
    live();
  }
  document.body.dataset.ready = "true";
}
start();
