// The playground page: compiles the editor's text as you type (debounced),
// shows the outputs in tabs and the errors as underlines, and runs the
// kernel on the server's GPU with the inputs of the Run tab.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  presets: [],          // from /api/presets
  params: [],           // the chosen kernel's parameters
  inputs: {},           // the run form's values, by parameter name
  compileSeq: 0,        // the latest compile request (older answers are dropped)
  timer: null,
  lastOk: false,
};

// ---- the editor ------------------------------------------------------------

const editor = OKEditor.create($("editor"), "", () => scheduleCompile());
const SAVED = "onekernel-playground-source";

function scheduleCompile() {
  try { localStorage.setItem(SAVED, editor.getText()); } catch (e) { /* private mode */ }
  clearTimeout(state.timer);
  setStatus("editing…", "");
  state.timer = setTimeout(compileNow, 300);
}

function setStatus(text, cls) {
  const s = $("status");
  s.textContent = text;
  s.className = "status " + cls;
}

async function postJson(url, body) {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  let json = null;
  try { json = await r.json(); } catch (e) { json = { error: "the server's answer is not JSON" }; }
  return { status: r.status, json };
}

// ---- compiling -------------------------------------------------------------

async function compileNow() {
  const seq = ++state.compileSeq;
  const source = editor.getText();
  setStatus("compiling…", "");
  const started = performance.now();
  let answer;
  try {
    answer = await postJson("/api/compile", { source, kernel: $("kernel").value || null, consts: $("consts").value || null });
  } catch (e) {
    if (seq === state.compileSeq) setStatus("the server did not answer", "error");
    return;
  }
  if (seq !== state.compileSeq) return; // a newer edit is being compiled
  const ms = Math.round(performance.now() - started);
  const { status, json } = answer;
  if (status !== 200) {
    setStatus(json.error || ("error " + status), "error");
    return;
  }
  fillKernelMenu(json.kernels);
  showErrors(json.errors || []);
  if (json.view) showView(json.view);
  state.lastOk = json.ok;
  document.body.dataset.compiled = String(seq); // for tests: a compile has finished
  if (json.ok && json.view.consts_error && json.view.consts.length > 0) setStatus(json.view.consts_error, "error");
  else if (json.ok) setStatus(`compiled in ${ms} ms${json.view.specialised ? ", specialised: " + json.view.specialised : ""}`, "ok");
  else setStatus(`${json.errors.length} error${json.errors.length === 1 ? "" : "s"}`, "error");
}

function fillKernelMenu(names) {
  const menu = $("kernel");
  const current = menu.value;
  const same = names.length === menu.options.length && names.every((n, i) => menu.options[i].value === n);
  if (same) return;
  menu.innerHTML = "";
  for (const n of names) menu.add(new Option(n, n));
  if (names.includes(current)) menu.value = current;
}

function showErrors(errors) {
  const list = [];
  const problems = $("problems");
  problems.innerHTML = "";
  for (const e of errors) {
    let from = 0, to = 0;
    if (e.start && e.end) {
      from = editor.offset(e.start.line, e.start.column);
      to = editor.offset(e.end.line, e.end.column);
    }
    if (to <= from) to = Math.min(from + 1, editor.getText().length);
    let message = e.message;
    if (e.label) message += ` (${e.label})`;
    for (const n of e.notes) message += `\nnote: ${n}`;
    if (e.help) message += `\nhelp: ${e.help}`;
    list.push({ from, to, severity: "error", message });
    const pre = document.createElement("pre");
    pre.textContent = e.rendered;
    pre.className = "problem";
    if (e.start) pre.dataset.line = e.start.line;
    pre.onclick = () => {
      editor.view.dispatch({ selection: { anchor: from }, scrollIntoView: true });
      editor.view.focus();
    };
    problems.appendChild(pre);
  }
  editor.setDiagnostics(list);
}

function showView(v) {
  $("wgsl").textContent = v.wgsl;
  $("spirv").textContent = v.spirv;
  $("naga").textContent = v.naga;
  $("bindings").innerHTML = "";
  $("bindings").appendChild(markdownTable(v.bindings));
  showExplain(v.explain);
  updateInputs(v.params, v.workgroup_size);
  showConsts(v);
}

/// The const parameters' field: shown for a kernel that has them, with
/// their names and types, and what the values made (or why not).
function showConsts(v) {
  const form = $("consts-form");
  form.hidden = v.consts.length === 0;
  $("consts-names").textContent = v.consts.map((c) => `${c.name}: ${c.ty}`).join(", ") + " =";
  const input = $("consts");
  // A kernel without const parameters (another one chosen from the menu):
  // the hidden field's values were for the other kernel.
  if (v.consts.length === 0) input.value = "";
  if (v.consts_error && v.consts.length > 0) {
    input.classList.add("invalid");
    input.title = v.consts_error;
  } else {
    input.classList.remove("invalid");
    input.title = v.specialised ? `specialised: ${v.specialised}` : "no values: the WGSL keeps its overrides";
  }
}

/// The binding table (Markdown) as an HTML table.
function markdownTable(md) {
  const table = document.createElement("table");
  const rows = md.trim().split("\n").filter((l) => l.startsWith("|") && !/^\|[-| ]+\|$/.test(l));
  rows.forEach((line, i) => {
    const tr = table.insertRow();
    for (const cell of line.slice(1, -1).split("|")) {
      const td = document.createElement(i === 0 ? "th" : "td");
      td.textContent = cell.trim().replace(/`/g, "");
      tr.appendChild(td);
    }
  });
  return table;
}

// ---- the explain view ------------------------------------------------------

function showExplain(rows) {
  const table = $("explain");
  table.innerHTML = "";
  for (const row of rows) {
    const tr = table.insertRow();
    const num = tr.insertCell();
    num.className = "num";
    num.textContent = row.line ?? "";
    const rust = tr.insertCell();
    rust.className = row.line ? "rust" : "rust support";
    rust.textContent = row.rust;
    const wgsl = tr.insertCell();
    wgsl.className = "wgsl";
    wgsl.textContent = row.wgsl.join("\n");
    if (row.line) tr.dataset.line = row.line;
    // Pointing at either side lights up the other one and the editor's line.
    const on = () => { rust.classList.add("hot"); wgsl.classList.add("hot"); editor.markLine(row.line ?? null); };
    const off = () => { rust.classList.remove("hot"); wgsl.classList.remove("hot"); editor.markLine(null); };
    tr.addEventListener("mouseenter", on);
    tr.addEventListener("mouseleave", off);
  }
}

// Pointing at a line in the editor lights up its explain row.
$("editor").addEventListener("mousemove", (ev) => {
  const pos = editor.view.posAtCoords({ x: ev.clientX, y: ev.clientY });
  const line = pos == null ? null : editor.lineAt(pos);
  for (const tr of $("explain").rows) {
    const hot = line != null && tr.dataset.line === String(line);
    for (const td of [tr.cells[1], tr.cells[2]]) td.classList.toggle("hot", hot);
  }
});

// ---- tabs ------------------------------------------------------------------

function showTab(name) {
  for (const b of document.querySelectorAll(".tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const p of document.querySelectorAll(".panel")) p.classList.toggle("active", p.id === "panel-" + name);
}
for (const b of document.querySelectorAll(".tabs button")) b.onclick = () => showTab(b.dataset.tab);

// ---- the run form ----------------------------------------------------------

function defaultInput(p) {
  if (p.kind === "scalar") return { value: 1 };
  if (p.kind === "read") return { len: 1024, formula: "i" };
  return { len: 1024 };
}

/// Rebuilds the inputs table when the parameters change, keeping the
/// values already typed for parameters of the same name.
function updateInputs(params, workgroupSize) {
  const same = params.length === state.params.length &&
    params.every((p, i) => p.name === state.params[i].name && p.kind === state.params[i].kind && p.ty === state.params[i].ty);
  state.params = params;
  if (same && $("inputs").rows.length) return;
  readInputs();
  const table = $("inputs");
  table.innerHTML = "";
  for (const p of params) {
    const input = state.inputs[p.name] || defaultInput(p);
    state.inputs[p.name] = input;
    const tr = table.insertRow();
    tr.dataset.param = p.name;
    tr.insertCell().innerHTML = `<b>${escapeHtml(p.name)}</b>`;
    const ty = tr.insertCell();
    ty.className = "ty";
    ty.textContent = (p.kind === "scalar" ? "" : p.kind === "read" ? "&[" : "&mut [") + p.ty + (p.kind === "scalar" ? "" : "]");
    const cell = tr.insertCell();
    if (!p.supported) {
      cell.textContent = "(the playground makes scalar values only)";
      continue;
    }
    if (p.kind === "scalar") {
      cell.innerHTML = `value <input type="text" class="small" data-field="value" value="${input.value ?? input.formula ?? 1}">`;
      continue;
    }
    const mode = input.random ? "random" : input.formula != null ? "formula" : "zeros";
    const shape = input.shape ? input.shape.join(" x ") : "";
    const r = input.random || { seed: 1, min: 0, max: 1 };
    cell.innerHTML =
      `len <input type="number" class="small" data-field="len" value="${input.len ?? (input.shape ? input.shape[0] * input.shape[1] : 1024)}"> ` +
      `shape <input type="text" class="small" data-field="shape" placeholder="rows x cols" value="${shape}"> ` +
      `<select data-field="mode"><option value="formula">formula</option><option value="random">random</option><option value="zeros">zeros</option></select> ` +
      `<input type="text" data-field="formula" value="${escapeHtml(input.formula ?? "i")}"> ` +
      `<span data-field="random-box">seed <input type="number" class="small" data-field="seed" value="${r.seed}"> ` +
      `min <input type="number" class="small" data-field="min" value="${r.min}"> max <input type="number" class="small" data-field="max" value="${r.max}"></span>`;
    const select = cell.querySelector("[data-field=mode]");
    select.value = mode;
    const sync = () => {
      cell.querySelector("[data-field=formula]").style.display = select.value === "formula" ? "" : "none";
      cell.querySelector("[data-field=random-box]").style.display = select.value === "random" ? "" : "none";
    };
    select.onchange = sync;
    sync();
  }
  if (workgroupSize && !state.gridFromPreset) {
    // 2-D workgroups suggest a 2-D grid.
    $("grid-y").value = workgroupSize[1] > 1 ? Math.max(+$("grid-y").value, 64) : $("grid-y").value;
  }
}

function escapeHtml(s) {
  return String(s).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" }[c]));
}

/// Reads the inputs table back into `state.inputs` (request form).
function readInputs() {
  for (const tr of $("inputs").rows) {
    const name = tr.dataset.param;
    const field = (f) => tr.querySelector(`[data-field=${f}]`);
    if (!field("value") && !field("len")) continue;
    if (field("value")) {
      const text = field("value").value.trim();
      state.inputs[name] = isFinite(Number(text)) && text !== "" ? { value: Number(text) } : { formula: text };
      continue;
    }
    const input = {};
    const shape = field("shape").value.split(/[x×, ]+/).filter(Boolean).map(Number);
    if (shape.length === 2 && shape.every((n) => Number.isInteger(n) && n > 0)) input.shape = shape;
    else input.len = Number(field("len").value);
    const mode = field("mode").value;
    if (mode === "formula") input.formula = field("formula").value;
    if (mode === "random") input.random = { seed: Number(field("seed").value), min: Number(field("min").value), max: Number(field("max").value) };
    state.inputs[name] = input;
  }
}

function gridRequest() {
  const dims = ["x", "y", "z"].map((a) => Number($("grid-" + a).value));
  while (dims.length > 1 && dims[dims.length - 1] === 1) dims.pop();
  return { [$("grid-kind").value]: dims };
}

async function runNow() {
  readInputs();
  const inputs = {};
  for (const p of state.params) if (state.inputs[p.name] && p.supported) inputs[p.name] = state.inputs[p.name];
  const body = { source: editor.getText(), kernel: $("kernel").value || null, consts: $("consts").value || null, grid: gridRequest(), inputs };
  const status = $("run-status");
  status.className = "";
  status.textContent = "running…";
  $("run-info").textContent = "";
  $("outputs").innerHTML = "";
  showPrints(null);
  $("run-button").disabled = true;
  showTab("run");
  try {
    const { status: code, json } = await postJson("/api/run", body);
    if (code !== 200) {
      status.className = "error";
      status.textContent = json.error || ("error " + code);
    } else if (!json.ok) {
      status.className = "error";
      const e = json.error;
      let text = e.message;
      if (e.help) text += "\nhelp: " + e.help;
      if (e.errors) text += "\n\n" + e.errors.map((x) => x.rendered).join("\n");
      status.textContent = text;
      if (e.line) editor.markLine(e.line);
      showPrints(json);
    } else {
      showResult(json);
      showPrints(json);
    }
  } catch (e) {
    status.className = "error";
    status.textContent = "the server did not answer: " + e;
  } finally {
    $("run-button").disabled = false;
    document.body.dataset.runs = String(Number(document.body.dataset.runs || 0) + 1); // for tests
  }
}
$("run-button").onclick = runNow;
// Ctrl+Enter (⌘+Enter) runs from anywhere, the editor included.
document.addEventListener("keydown", (ev) => {
  if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); runNow(); }
}, true);

function showResult(r) {
  $("run-status").textContent = `ran on ${r.device}`;
  const g = r.grid;
  const asked = g.threads ? `threads [${g.threads.join(", ")}]` : `blocks [${g.blocks.join(", ")}]`;
  $("run-info").innerHTML =
    `<div>grid: ${asked} → <b>${g.workgroups.join(" × ")}</b> workgroups of ${g.workgroup_size.join(" × ")} = <b>${g.invocations}</b> invocations</div>` +
    `<div>kernel time: <b id="kernel-time">${formatTime(r.time_us)}</b> (${escapeHtml(r.clock)}; the checked module, with loop budget ${r.loop_budget})</div>`;
  for (const out of r.outputs) $("outputs").appendChild(outputView(out));
}

// The lines the kernel's `println!`s printed (its first launch), in the
// runtime's order: by invocation, each prefixed `[kernel (x, y, z)]`.
function showPrints(r) {
  const box = $("prints");
  const lines = (r && r.prints) || [];
  box.hidden = lines.length === 0;
  box.innerHTML = "";
  if (lines.length === 0) return;
  const h = document.createElement("h3");
  h.textContent = `printed: ${lines.length + (r.prints_more || 0)} line${lines.length + (r.prints_more || 0) === 1 ? "" : "s"}`;
  const pre = document.createElement("pre");
  pre.id = "printed";
  for (const l of lines) {
    const span = document.createElement("span");
    if (l.stderr) span.className = "stderr";
    span.textContent = l.text + "\n";
    pre.appendChild(span);
  }
  if (r.prints_more) pre.appendChild(document.createTextNode(`… ${r.prints_more} more lines not shown\n`));
  box.append(h, pre);
}

function formatTime(us) {
  return us >= 1000 ? (us / 1000).toFixed(3) + " ms" : us.toFixed(1) + " µs";
}

function formatValue(v) {
  if (typeof v !== "number") return String(v);
  if (Number.isInteger(v)) return String(v);
  return String(Number(v.toPrecision(6)));
}

function outputView(out) {
  const div = document.createElement("div");
  div.className = "output";
  const shape = out.shape && out.shape[0] > 1 ? out.shape : null;
  div.innerHTML = `<h3>${escapeHtml(out.name)}: ${out.len} × ${out.ty}${shape ? ` (${shape[0]} rows × ${shape[1]} columns)` : ""}` +
    `${out.truncated ? ` (first ${out.values.length} shown)` : ""}</h3>`;
  const numbers = out.values.map((v) => (typeof v === "number" ? v : NaN));
  div.appendChild(shape ? heatmap(numbers, shape) : linePlot(numbers));
  // The table: 2-D data as rows and columns, 1-D data 8 to a row.
  const cols = shape ? Math.min(shape[1], 16) : 8;
  const rows = shape ? Math.min(shape[0], 16) : Math.min(Math.ceil(out.values.length / 8), 64);
  const stride = shape ? shape[1] : 8;
  const table = document.createElement("table");
  table.className = "values";
  const head = table.insertRow();
  head.appendChild(document.createElement("th"));
  for (let c = 0; c < cols; c++) { const th = document.createElement("th"); th.textContent = shape ? c : "+" + c; head.appendChild(th); }
  for (let r = 0; r < rows; r++) {
    const tr = table.insertRow();
    const th = document.createElement("th");
    th.textContent = shape ? r : r * stride;
    tr.appendChild(th);
    for (let c = 0; c < cols; c++) {
      const i = r * stride + c;
      if (i >= out.values.length) break;
      const td = tr.insertCell();
      td.dataset.output = out.name;
      td.dataset.i = i;
      td.textContent = formatValue(out.values[i]);
    }
  }
  div.appendChild(table);
  return div;
}

/// The smallest and largest finite values ([Infinity, -Infinity] if none).
function range(values) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) if (Number.isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; }
  return [lo, hi];
}

function linePlot(values) {
  const canvas = document.createElement("canvas");
  canvas.width = 600; canvas.height = 160;
  const ctx = canvas.getContext("2d");
  let [lo, hi] = range(values);
  if (lo > hi) return canvas; // nothing finite
  if (lo === hi) { lo -= 1; hi += 1; }
  const pad = 14, w = canvas.width - 2 * pad, h = canvas.height - 2 * pad;
  ctx.fillStyle = "#666"; ctx.font = "11px sans-serif";
  ctx.fillText(formatValue(hi), 2, 10); ctx.fillText(formatValue(lo), 2, canvas.height - 2);
  ctx.strokeStyle = "#1565c0"; ctx.lineWidth = 1.2; ctx.beginPath();
  const n = values.length;
  for (let i = 0; i < n; i++) {
    const x = pad + (n === 1 ? w / 2 : (i / (n - 1)) * w);
    const y = pad + h - ((values[i] - lo) / (hi - lo)) * h;
    if (!Number.isFinite(y)) continue;
    if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
  }
  ctx.stroke();
  return canvas;
}

function heatmap(values, [rows, cols]) {
  const canvas = document.createElement("canvas");
  const scale = Math.max(1, Math.floor(Math.min(600 / cols, 300 / rows)));
  canvas.width = cols * scale; canvas.height = rows * scale;
  const ctx = canvas.getContext("2d");
  let [lo, hi] = range(values);
  if (!(hi > lo)) { lo -= 1; hi += 1; }
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = values[r * cols + c];
      if (v === undefined) continue;
      const t = Number.isFinite(v) ? (v - lo) / (hi - lo) : 0;
      ctx.fillStyle = `hsl(${240 - 240 * t}, 70%, ${30 + 35 * t}%)`;
      ctx.fillRect(c * scale, r * scale, scale, scale);
    }
  }
  return canvas;
}

// ---- presets ---------------------------------------------------------------

function loadPreset(id) {
  const p = state.presets.find((x) => x.id === id);
  if (!p) return;
  state.inputs = {};
  state.params = [];
  $("consts").value = "";
  $("inputs").innerHTML = "";
  for (const [name, input] of Object.entries(p.run.inputs || {})) state.inputs[name] = input;
  const grid = p.run.grid || { threads: [1024] };
  const kind = grid.threads ? "threads" : "blocks";
  const dims = grid[kind];
  $("grid-kind").value = kind;
  ["x", "y", "z"].forEach((a, i) => ($("grid-" + a).value = dims[i] ?? 1));
  state.gridFromPreset = true;
  $("kernel").innerHTML = "";
  $("kernel").add(new Option(p.kernel, p.kernel));
  editor.setText(p.source);
  clearTimeout(state.timer);
  compileNow();
}

$("preset").onchange = () => loadPreset($("preset").value);
$("kernel").onchange = () => { state.params = []; compileNow(); };
$("consts").oninput = () => { clearTimeout(state.timer); state.timer = setTimeout(compileNow, 300); };

async function start() {
  const [info, presets] = await Promise.all([fetch("/api/info").then((r) => r.json()), fetch("/api/presets").then((r) => r.json())]);
  const device = info.device ? info.device : "no GPU: " + info.device_error;
  $("device").textContent = "runs on: " + device;
  $("run-device").textContent = device;
  state.presets = presets;
  const groups = {};
  for (const p of presets) {
    if (!groups[p.group]) {
      groups[p.group] = document.createElement("optgroup");
      groups[p.group].label = p.group;
      $("preset").appendChild(groups[p.group]);
    }
    groups[p.group].appendChild(new Option(p.title, p.id));
  }
  // A preset named in the address, else the text of the last visit, else
  // the first step of the learning path.
  const asked = new URLSearchParams(location.search).get("preset");
  let saved = null;
  try { saved = localStorage.getItem(SAVED); } catch (e) { /* private mode */ }
  if (!asked && saved && saved.trim()) {
    $("preset").value = "";
    editor.setText(saved);
    clearTimeout(state.timer);
    compileNow();
  } else {
    $("preset").value = asked || "map";
    loadPreset(asked || "map");
  }
}
start();
