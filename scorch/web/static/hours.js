// The hours on the technician's page: what the schedule holds now and does next, the cue
// list with its standby cue, and GO (a write action: the server refuses a read-only page).
"use strict";
const HOURS_EVERY_MS = 2000;

function hoursRow(label, text) {
  return `<span>${esc(label)} <b>${esc(text)}</b></span>`;
}

function drawHours(hours) {
  const sched = hours.schedule || {};
  const cues = hours.cues || {};
  const parts = [];
  if (sched.error || sched.problem) parts.push(hoursRow("schedule:", sched.error || sched.problem));
  const holds = (sched.holds || []).map((p) => p.entry).join(", ");
  parts.push(hoursRow("holds now:", holds || "nothing scheduled"));
  const next = (sched.next || []).map((p) => `${p.local.slice(11, 16)} ${p.entry}`);
  parts.push(hoursRow("next:", next.join(" · ") || "nothing in 24 h"));
  const list = cues.cues || [];
  const standby = list.find((c) => c.number === cues.standby);
  const fired = (sched.recent || []).filter((f) => f.label.startsWith("cue ")).pop();
  parts.push(hoursRow("standby:", standby ? `${standby.number} ${standby.name}`
    : cues.error || (list.length ? "end of the list" : "no cues")));
  parts.push(hoursRow("last fired:", fired ? fired.label : "–"));
  if ((cues.running || []).length) {
    parts.push(hoursRow("waiting:", cues.running.map((f) => f.cue).join(", ")));
  }
  $("hours-text").innerHTML = parts.join("");
  $("go").disabled = !standby;
  $("go").title = standby ? `GO: fire cue ${standby.number}` : "no cue on standby";
}

async function refreshHours() {
  const answer = await fetch("/api/hours");
  if (answer.ok) drawHours(await answer.json());
}

async function pollHours() {
  try {
    await refreshHours();
  } finally {
    setTimeout(pollHours, HOURS_EVERY_MS);
  }
}

$("go").addEventListener("click", () => {
  const cue = $("go").title.replace("GO: fire ", "");
  act("/api/go", `GO: fire ${cue} in every room?`).then(refreshHours);
});
pollHours();
