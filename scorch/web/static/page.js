// The technician's page: one EventSource; "change" as each change of the rooms is
// published (a node's params are shown at once), "view" soon after a change and once a
// second, "meters" at the meters' rate. Actions POST to /api/...; the server refuses them to a read-only page.
"use strict";
const ROLE = document.body.dataset.role;
const FLOOR = -60;  // dB at the left end of a meter and the bottom of a sparkline
const SPARK_SECONDS = 300;
const cards = new Map();
const seen = new Map();  // room -> [[state, time shown (ms)]] of the last SEEN_SECONDS
const SEEN_SECONDS = 10;
const taken = new Map();  // MIDI input -> [messages taken, when that count last moved (ms)]
const ACTIVE_MS = 2000;
const trees = new Map();  // room -> timer of its open tree drawing
let lastView = null;

const esc = (s) => String(s ?? "").replace(/[&<>"']/g,
  (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c]));
const $ = (id) => document.getElementById(id);

function duration(s) {
  if (s == null) return "–";
  s = Math.floor(s);
  if (s < 60) return s + " s";
  if (s < 3600) return Math.floor(s / 60) + " min";
  return Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
}
const ago = (s) => s < 1 ? "now" : s < 60 ? Math.round(s) + " s ago" : duration(s) + " ago";
const pct = (db) => Math.max(0, Math.min(100, (db - FLOOR) / -FLOOR * 100));

async function act(path, question) {
  if (!window.confirm(question)) return;
  const buttons = document.querySelectorAll("button.act");
  buttons.forEach((b) => { b.disabled = true; });
  try {
    const answer = await fetch(path, {method: "POST", headers: {"Content-Type": "application/json"}});
    const body = await answer.json().catch(() => ({error: answer.statusText}));
    if (!answer.ok) window.alert(body.error || answer.statusText);
    else notice(path, body);
  } finally {
    buttons.forEach((b) => { b.disabled = false; });
  }
}

// What an action did, in a line under the header (the answer of the operation).
function notice(path, body) {
  const what = path.split("?")[0].split("/").pop();
  const text = what === "panic"
    ? `panic: ${body.released ?? 0} voice(s) released, all notes off sent`
    : what === "restart" ? "restart asked: the room comes back by itself"
    : what === "release" ? "node stopped"
    : what === "gain" ? "master gain fading"
    : what === "go" ? (body.counted === false ? "double GO: counted once"
      : "GO: cue " + (body.fired || []).map((f) => f.cue).join(", ")) : what + " done";
  $("notice").textContent = new Date().toLocaleTimeString() + " " + text;
  $("notice").dataset.action = what;
}

function card(room) {
  let el = cards.get(room);
  if (el) return el;
  el = document.createElement("article");
  el.className = "room";
  el.id = "room-" + room;
  el.dataset.room = room;
  el.innerHTML = `<div class="room-head"><h2>${esc(room)}</h2><span class="state"></span></div>
    <div class="reason"></div><div class="facts"></div>
    <div class="meters"></div><div class="meter-db"></div>
    <svg class="spark" viewBox="0 0 300 36" preserveAspectRatio="none" role="img"
         aria-label="level of the last five minutes"></svg>
    <ul class="nodes"></ul>
    <div class="row"><button class="act danger restart">Restart</button>
      <button class="tree-toggle">Node tree</button></div>
    <div class="tree" hidden></div>`;
  el.querySelector(".restart").addEventListener("click", () =>
    act(`/api/restart?room=${encodeURIComponent(room)}`,
        `Restart room ${room}? Its sound stops for a moment; named nodes come back.`));
  el.querySelector(".tree-toggle").addEventListener("click", () => toggleTree(room));
  el.querySelector(".facts").addEventListener("click", (e) => {
    const stage = e.target.closest && e.target.closest(".stage");
    if (stage) askGain(room, stage.dataset.gain);
  });
  el.querySelector(".nodes").addEventListener("click", (e) => {
    const node = e.target.dataset && e.target.dataset.node;
    if (node) act(`/api/release?room=${encodeURIComponent(room)}&node=${encodeURIComponent(node)}`,
                  `Stop node ${node} in ${room}? It fades out and is forgotten.`);
  });
  $("rooms").appendChild(el);
  cards.set(room, el);
  return el;
}

function renderRoom(r) {
  const el = card(r.name);
  const state = el.querySelector(".state");
  state.textContent = r.state;
  state.className = "state state-" + r.state;
  el.dataset.state = r.state;
  // Every state shown lately: a restart over within a second still says it happened.
  // The times (this machine's clock, ms) each state was first shown are kept in
  // data-seen-at: what a test measures a restart on the page with.
  const now = Date.now();
  const states = (seen.get(r.name) || []).filter(([, t]) => now - t < SEEN_SECONDS * 1000);
  if (!states.length || states[states.length - 1][0] !== r.state) states.push([r.state, now]);
  seen.set(r.name, states);
  el.dataset.seen = [...new Set(states.map(([s]) => s))].join(" ");
  el.dataset.seenAt = JSON.stringify(states);
  const was = states.filter(([s]) => s !== "READY").map(([s]) => s);
  el.querySelector(".reason").textContent = r.state !== "READY" ? (r.reason || "")
    : was.length ? `back after ${[...new Set(was)].join(", ")}` : "";
  // scsynth's own process; its /status CPU is JACK's whole DSP load (in the summary).
  const cpu = r.scsynth_cpu == null ? "–" : r.scsynth_cpu.toFixed(1) + " %";
  el.querySelector(".facts").innerHTML =
    `<span>up <b>${duration(r.uptime)}</b></span><span>restarts <b>${r.restarts}</b></span>` +
    `<span title="scsynth's own process, % of one core">CPU <b class="cpu">${cpu}</b></span>` +
    `<span>synths <b>${r.synths ?? "–"}</b></span>` +
    `<span>scsynth <b class="pid">${r.pids.scsynth ?? "–"}</b></span>` +
    `<span>sclang <b>${esc(r.sclang)}</b></span>` + stageFacts(r.stage) + soundFact(r.sound);
  const items = r.nodes.map((n) => {
    const params = Object.entries(n.params).slice(0, 6)
      .map(([k, v]) => `${esc(k)} ${+Number(v).toPrecision(4)}`).join(", ");
    return `<li><b>${esc(n.name)}</b><span class="dim">${esc(n.synthdef)}</span>` +
      `<span class="params">${params}</span>` +
      `<button class="act small danger" data-node="${esc(n.name)}">stop</button></li>`;
  }).concat(r.patterns.map((p) => {
    const params = Object.entries(p.params).map(([k, v]) => `${esc(k)} ${esc(v)}`).join(", ");
    const last = p.last_event == null ? "" : `, last event ${ago(lastView.time - p.last_event)}`;
    return `<li class="pattern" data-pattern="${esc(p.name)}" data-playing="${p.playing}" ` +
      `data-mute="${esc(p.mute)}"><b>${esc(p.name)}</b><span class="dim">${esc(p.kind)}</span>` +
      `<span class="params">${p.playing ? "playing" : "stopped"}${p.mute ? ", " + esc(p.mute) : ""}` +
      `${last}${params ? "; " + params : ""}</span></li>`;
  })).concat(r.patterns_more ? [`<li class="dim">and ${r.patterns_more} more patterns</li>`] : []);
  el.querySelector(".nodes").innerHTML = items.join("");
  spark(el.querySelector(".spark"), r.history, lastView.time);
}

// What the sound watch hears: a fault (silent, limiting, dc, howl, nan) is trouble, pointed out.
function soundFact(sound) {
  if (!sound) return "";
  const bad = sound !== "ok";
  return `<span class="sound${bad ? " trouble" : ""}" title="the sound watch">sound ` +
    `<b>${esc(sound)}</b></span>`;
}

// The safety stage: switched off is trouble, pointed out; on, its gain and last limiting.
function stageFacts(stage) {
  if (!stage) return "";
  if (!stage.enabled) {
    return `<span class="trouble no-stage" title="a config line switched it off: code ` +
      `reaches the loudspeakers unguarded">no safety stage</span>`;
  }
  const cut = stage.reduction_db ? ` limiting <b>${stage.reduction_db.toFixed(1)} dB</b>` : "";
  return `<span class="stage" data-gain="${stage.gain_db}" title="safety stage: ceiling ` +
    `${stage.ceiling_dbfs} dBFS${stage.max_lufs == null ? "" : ", " + stage.max_lufs + " LUFS"}` +
    ` (click to change the master gain)">gain ` +
    `<b>${+stage.gain_db.toFixed(1)} dB</b>${cut}</span>`;
}

// The master gain, asked for in dB and faded to over 2 s (the operation checks the number).
function askGain(room, current) {
  const db = window.prompt(`Master gain of ${room} in dB (-120: silent, 0: as played, up ` +
                           `to 12); it fades over 2 s:`, current ?? "0");
  if (db === null || db.trim() === "") return;
  act(`/api/gain?room=${encodeURIComponent(room)}&db=${encodeURIComponent(db.trim())}&fade=2`,
      `Fade the master gain of ${room} to ${db.trim()} dB?`);
}

function spark(svg, history, now) {
  if (!history.length) { svg.innerHTML = ""; return; }
  // The last five minutes once there are; until then the last minute or what there is.
  const span = Math.min(SPARK_SECONDS, Math.max(60, now - history[0][0]));
  const y = (db) => 36 - pct(db) * 0.34 - 1;
  const x = (t) => 300 - (now - t) * (300 / span);
  const peak = history.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ");
  const rms = history.map((p) => `${x(p[0]).toFixed(1)},${y(p[2]).toFixed(1)}`);
  const area = `M${x(history[0][0]).toFixed(1)},36 L${rms.join(" L")} ` +
    `L${x(history[history.length - 1][0]).toFixed(1)},36 Z`;
  svg.innerHTML = `<path d="${area}" fill="#2f81f7" fill-opacity="0.35" stroke="none"/>` +
    `<polyline points="${peak}" fill="none" stroke="#9cc3ff" stroke-width="1"/>` +
    `<text x="4" y="11" fill="#8a949e" font-size="9">${Math.round(span / 60)} min</text>`;
}

function renderMeters(meters) {
  for (const [room, m] of Object.entries(meters)) {
    const el = cards.get(room);
    if (!el) continue;
    const box = el.querySelector(".meters");
    const text = el.querySelector(".meter-db");
    if (!m) { box.innerHTML = ""; text.textContent = "no level"; el.dataset.peak = ""; continue; }
    while (box.children.length < m.peak.length) {
      const bar = document.createElement("div");
      bar.className = "meter";
      bar.innerHTML = '<div class="rms"></div><div class="peak"></div>';
      box.appendChild(bar);
    }
    while (box.children.length > m.peak.length) box.lastChild.remove();
    m.peak.forEach((peak, i) => {
      const bar = box.children[i];
      bar.querySelector(".rms").style.width = pct(m.rms[i]) + "%";
      bar.querySelector(".peak").style.left = `calc(${pct(peak)}% - 2px)`;
    });
    const loudest = Math.max(...m.peak);
    el.dataset.peak = String(loudest);
    text.textContent = "peak " + m.peak.map((p) => p.toFixed(1)).join(" / ") + " dB";
  }
}

// What the rooms' scsynths report as CPU (/status) is jack_cpu_load: the JACK server's DSP
// load, the same for every room on it, so it is shown once.
function dsp(v) {
  const loads = v.rooms.map((r) => r.cpu).filter((c) => c != null);
  if (!loads.length) return "";
  return `<span id="dsp" title="the JACK server's DSP load (% of each audio period), as the ` +
    `rooms' scsynths report it">JACK DSP load <b>${Math.max(...loads).toFixed(1)} %</b></span>`;
}

function renderSummary(v) {
  const t = v.tempo;
  const now = Date.now();
  const inputs = v.midi ? Object.entries(v.midi.inputs || {}).map(([port, n]) => {
    const [was, moved] = taken.get(port) || [n, 0];
    const at = n !== was ? now : moved;
    taken.set(port, [n, at]);
    return `<span class="input${now - at < ACTIVE_MS ? " active" : ""}" data-port="${esc(port)}" ` +
      `data-taken="${n}" title="messages taken from this input">${esc(port)} <b>${n}</b></span>`;
  }).join(", ") || "no input" : "off";
  const parts = [
    `rooms <b>${v.rooms.filter((r) => r.state === "READY").length}/${v.rooms.length}</b> READY`,
    t ? `<span id="tempo" data-bpm="${t.bpm}" data-playing="${t.playing}">tempo ` +
      `<b>${t.bpm.toFixed(1)}</b> bpm, bar <b>${t.bar}</b> ${t.playing ? "▶ playing" : "■ stopped"}` +
      "</span>" : "",
    `MIDI ${inputs}` + (v.midi ? `, voices <b id="voices">${v.midi.voices ?? 0}</b>` : ""),
    dsp(v),
    `<span id="xruns" title="the JACK server's xruns in the last minute: every room shares ` +
      `the server, scsynth counts none of its own">JACK xruns, last minute ` +
      `<b>${v.xruns_last_minute}</b></span>`,
    v.hosts.length ? "hosts " + v.hosts.map((h) => `<b class="host" data-host="${esc(h.name)}">` +
      `${esc(h.name)}</b>` + (h.state ?
      ` <span class="${h.state === "CONNECTED" ? "" : "trouble"}" title="${esc(h.reason || "")}">` +
      `${esc(h.state)}</span>` : "")).join(", ") +
      (v.this_host ? ` (this: ${esc(v.this_host)})` : "") : "",
    v.audio ? esc(v.audio) : "",
  ];
  $("summary").innerHTML = parts.filter(Boolean).map((p) => `<span>${p}</span>`).join("");
  $("config").textContent = v.config || "";
}

function renderEvents(v) {
  const select = $("log-room");
  for (const r of v.rooms) {
    if (![...select.options].some((o) => o.value === r.name)) select.add(new Option(r.name, r.name));
  }
  const room = select.value;
  const trouble = $("log-trouble").checked;
  const shown = v.events.filter((e) => (!room || e.room === room) && (!trouble || e.trouble));
  $("events").innerHTML = shown.reverse().map((e) =>
    `<li class="${e.trouble ? "trouble" : ""}" data-kind="${esc(e.kind)}" data-room="${esc(e.room)}">` +
    `${new Date(e.time * 1000).toLocaleTimeString()} <span class="kind">${esc(e.kind)}</span>` +
    `${esc(e.room)}: ${esc(e.message)}</li>`).join("");
}

function render(v) {
  lastView = v;
  renderSummary(v);
  v.rooms.forEach(renderRoom);
  for (const [room, el] of cards) {
    if (!v.rooms.some((r) => r.name === room)) { el.remove(); cards.delete(room); }
  }
  renderEvents(v);
}

async function drawTree(room) {
  const box = cards.get(room).querySelector(".tree");
  const answer = await fetch(`/api/tree/${encodeURIComponent(room)}`);
  if (!answer.ok) { box.textContent = "no tree: " + answer.statusText; return; }
  const found = ((await answer.json()).rooms[0] || {}).tree || [];
  const nodes = found.some((n) => n.id === 0) ? found
    : [{id: 0, parent: -1, synthdef: null, owner: "root"}, ...found];
  const depth = new Map([[0, -1]]);
  const rows = nodes.map((n, i) => {
    const d = n.id === 0 ? 0 : (depth.get(n.parent) ?? 0) + 1;
    depth.set(n.id, d);
    return {...n, d, i};
  });
  const index = new Map(rows.map((r) => [r.id, r]));
  const h = rows.length * 22 + 8;
  const width = Math.max(300, ...rows.map((r) => r.d * 18 + 260));
  const parts = rows.map((r) => {
    const x = r.d * 18 + 10, y = r.i * 22 + 14;
    const parent = index.get(r.parent);
    const edge = parent && r.id !== 0
      ? `<path d="M${parent.d * 18 + 10},${parent.i * 22 + 14} V${y} H${x}"/>` : "";
    const mark = r.synthdef == null
      ? `<rect class="group" x="${x - 5}" y="${y - 5}" width="10" height="10" rx="2"/>`
      : `<circle class="synth" cx="${x}" cy="${y}" r="5"/>`;
    const label = r.synthdef == null ? "group" : esc(r.synthdef);
    return `${edge}${mark}<text x="${x + 10}" y="${y + 4}">${label} ${r.id}` +
      ` <tspan class="owner">${esc(r.owner)}</tspan></text>`;
  });
  box.innerHTML = `<svg width="${width}" height="${h}" viewBox="0 0 ${width} ${h}" ` +
    `role="img" aria-label="node tree of ${esc(room)}">${parts.join("")}</svg>`;
}

function toggleTree(room) {
  const box = cards.get(room).querySelector(".tree");
  if (trees.has(room)) {
    clearInterval(trees.get(room));
    trees.delete(room);
    box.hidden = true;
    return;
  }
  box.hidden = false;
  drawTree(room);
  trees.set(room, setInterval(() => drawTree(room), 2000));
}

function connect() {
  const source = new EventSource("/api/stream");
  source.addEventListener("open", () => { $("link").textContent = "live"; });
  source.addEventListener("error", () => { $("link").textContent = "reconnecting"; });
  source.addEventListener("view", (e) => render(JSON.parse(e.data)));
  source.addEventListener("meters", (e) => renderMeters(JSON.parse(e.data)));
  source.addEventListener("change", (e) => changed(JSON.parse(e.data)));
}

// One change from the bus: a node's new params are drawn now; the rest comes with the
// view built after it. The last seq shown is kept in data-seq.
function changed(c) {
  document.body.dataset.seq = c.seq;
  if (c.change !== "ParamsChanged" || !lastView) return;
  const room = lastView.rooms.find((r) => r.name === c.room);
  const node = room && room.nodes.find((n) => n.name === c.node);
  if (!node) return;
  Object.assign(node.params, c.params);
  renderRoom(room);
}

$("role").textContent = ROLE === "read" ? "read-only" : "technician";
$("panic").addEventListener("click", () =>
  act("/api/panic", "Panic: release every MIDI voice and send all-notes-off everywhere?"));
$("log-room").addEventListener("change", () => lastView && renderEvents(lastView));
$("log-trouble").addEventListener("change", () => lastView && renderEvents(lastView));
connect();
