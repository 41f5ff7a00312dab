// visiongate playground: plain JavaScript, no build step, nothing loaded from elsewhere.
// Every figure on the page comes from the server, which answers with what `lint`, `explain`,
// `diff`, `test`, `decide --explain` and `route` would say; this file only draws it.
"use strict";

(() => {
  const token = new URLSearchParams(location.search).get("token") || "";
  const $ = (id) => document.getElementById(id);
  const DEBOUNCE_MS = 40; // a keystroke pause: short, so lint and the table follow typing
  const TESTS_AFTER_MS = 400;

  // What the page measures, for the browser test and for the curious (see README).
  const probe = { timings: [], analyzed: 0, tests: 0, routed: 0, saved: 0, shared: "" };
  window.playground = probe;

  const state = {
    file: "policy.yaml",
    saveTarget: null,
    baseline: "loaded",
    baselineText: null,
    sent: 0,
    lastInput: 0,
    overwrite: false,
    uncovered: new Set(),
    cells: [],
  };

  // -- small helpers ------------------------------------------------------------------------

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else if (name.startsWith("data-")) node.dataset[camel(name.slice(5))] = value;
      else node.setAttribute(name, value === true ? "" : value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  function camel(name) {
    return name.replace(/-([a-z])/g, (_, letter) => letter.toUpperCase());
  }

  async function post(path, body) {
    let response;
    try {
      response = await fetch(path, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-Playground-Token": token },
        body: JSON.stringify(body),
      });
    } catch (error) {
      return { error: `the playground server does not answer (${error.message}): is it still running?` };
    }
    try {
      return await response.json();
    } catch (error) {
      return { error: `the server answered ${response.status} without a readable body` };
    }
  }

  function say(text, problem) {
    const status = $("status");
    status.textContent = text;
    status.classList.toggle("problem", Boolean(problem));
  }

  function texts() {
    return { policy: $("policy-text").value, config: $("config-text").value };
  }

  // -- editors: line numbers, marks at the diagnostics' lines and columns ---------------------

  const editors = {
    policy: { area: $("policy-text"), diagnostics: [] },
    config: { area: $("config-text"), diagnostics: [] },
  };

  function drawEditor(name) {
    const editor = editors[name];
    const box = editor.area.closest(".editor");
    const gutter = box.querySelector(".gutter");
    const mirror = box.querySelector(".mirror");
    const lines = editor.area.value.split("\n");
    const byLine = new Map();
    for (const found of editor.diagnostics) {
      const line = Math.max(1, found.line || 1);
      if (!byLine.has(line)) byLine.set(line, []);
      byLine.get(line).push(found);
    }
    gutter.replaceChildren();
    mirror.replaceChildren();
    lines.forEach((text, index) => {
      const number = index + 1;
      const found = byLine.get(number);
      const worst = found ? worstSeverity(found) : null;
      gutter.append(
        el("span", {
          class: worst ? `has-${worst}` : null,
          "data-line": String(number),
          title: found ? found.map((d) => `${d.severity}[${d.code}]: ${d.message}`).join("\n") : null,
        }, worst ? `${worst === "error" ? "✖" : "▲"} ${number}` : String(number)),
        "\n",
      );
      mirror.append(mirrorLine(text, found, worst), "\n");
    });
    syncScroll(name);
  }

  function mirrorLine(text, found, worst) {
    if (!found) return document.createTextNode(text);
    const column = Math.max(1, Math.min(...found.map((d) => d.column || 1))) - 1;
    const rest = text.slice(column);
    const word = rest.match(/^\S+/);
    const length = word ? word[0].length : Math.max(1, rest.length);
    return el("span", { class: `line-${worst}`, "data-line": "" },
      text.slice(0, column), el("mark", {}, text.slice(column, column + length) || " "),
      text.slice(column + length));
  }

  function worstSeverity(found) {
    for (const level of ["error", "warning", "info"]) {
      if (found.some((d) => d.severity === level)) return level;
    }
    return "info";
  }

  function syncScroll(name) {
    const area = editors[name].area;
    const box = area.closest(".editor");
    box.querySelector(".mirror").scrollTop = area.scrollTop;
    box.querySelector(".mirror").scrollLeft = area.scrollLeft;
    box.querySelector(".gutter").scrollTop = area.scrollTop;
  }

  function goTo(name, line, column) {
    selectTab(name);
    const area = editors[name].area;
    const lines = area.value.split("\n");
    let offset = 0;
    for (let i = 0; i < Math.min(line - 1, lines.length); i++) offset += lines[i].length + 1;
    offset += Math.max(0, (column || 1) - 1);
    area.focus();
    area.setSelectionRange(offset, offset);
    area.scrollTop = Math.max(0, (line - 4) * 20);
    syncScroll(name);
  }

  function drawDiagnostics(name, report) {
    editors[name].diagnostics = report.diagnostics;
    drawEditor(name);
    const list = $(`${name}-diagnostics`);
    list.replaceChildren();
    for (const found of report.diagnostics) {
      const where = `${report.file}:${found.line}:${found.column}`;
      list.append(el("li", { class: found.severity, "data-line": String(found.line), "data-code": found.code },
        el("button", { type: "button", class: "where", onclick: () => goTo(name, found.line, found.column),
          "aria-label": `go to line ${found.line}, column ${found.column}` }, where),
        " ", el("span", { class: "severity" }, found.severity), "[",
        el("a", { href: `/rule/${encodeURIComponent(found.code)}?token=${encodeURIComponent(token)}`,
          target: "_blank", rel: "noopener" }, found.code),
        "]: ", found.message,
        found.help ? el("div", { class: "help" }, `help: ${found.help}`) : null));
    }
    const counts = { error: 0, warning: 0, info: 0 };
    for (const found of report.diagnostics) counts[found.severity] += 1;
    const what = name === "policy" ? "lint" : "the agent config";
    $(`${name}-summary`).textContent = report.diagnostics.length
      ? `${what}: ${counts.error} error(s), ${counts.warning} warning(s), ${counts.info} info`
      : `${what}: no findings`;
  }

  // -- the grid ------------------------------------------------------------------------------

  function factKey(facts, names) {
    return names.map((name) => `${name}=${facts[name]}`).join(" ");
  }

  function drawGrid(cells, stale) {
    const grid = $("grid");
    grid.classList.toggle("stale", Boolean(stale));
    if (!cells || !cells.length) {
      if (!state.cells.length) grid.replaceChildren(el("p", {}, "no table yet: the policy has not loaded since the page opened"));
      return;
    }
    state.cells = cells;
    const names = Object.keys(cells[0].facts);
    const rowNames = names.slice(0, names.length / 2);
    const columnNames = names.slice(names.length / 2);
    const rows = [...new Set(cells.map((c) => factKey(c.facts, rowNames)))];
    const columns = [...new Set(cells.map((c) => factKey(c.facts, columnNames)))];
    const focused = document.activeElement && document.activeElement.dataset.cell;
    grid.replaceChildren();
    grid.append(el("div", { role: "row", class: "contents" },
      el("span", { class: "head", role: "columnheader" }, rowNames.join(" · ")),
      ...columns.map((column) => el("span", { class: "head", role: "columnheader" },
        ...column.split(" ").map((part) => {
          const [fact, value] = part.split("=");
          return el("span", {}, `${fact} `, el("b", {}, value));
        })))));
    rows.forEach((row, rowIndex) => {
      const inRow = cells.filter((c) => factKey(c.facts, rowNames) === row);
      grid.append(el("div", { role: "row", class: "contents" },
        el("span", { class: "row-head", role: "rowheader" }, row),
        ...inRow.map((cell, columnIndex) => drawCell(cell, rowIndex, columnIndex, columnNames))));
    });
    const again = focused && grid.querySelector(`[data-cell="${focused}"]`);
    const first = again || grid.querySelector(".cell");
    first.tabIndex = 0;
    if (again) again.focus();
  }

  function describe(cell) {
    const facts = Object.entries(cell.facts).map(([n, v]) => `${n}=${v}`).join(", ");
    let said = `${facts}: ${cell.lane}, decided by ${cell.rule || "(default)"}`;
    if (cell.change === "lane") said += ` (was ${cell.was_lane}, decided by ${cell.was_rule || "(default)"})`;
    if (cell.change === "rule") said += ` (same lane, was decided by ${cell.was_rule || "(default)"})`;
    if (state.uncovered.has(cell.cell)) said += "; no test covers it";
    return said;
  }

  function drawCell(cell, row, column, columnNames) {
    const classes = ["cell", cell.lane];
    if (cell.change) classes.push(`changed-${cell.change}`);
    const node = el("button", {
      type: "button", role: "gridcell", class: classes.join(" "), tabindex: "-1",
      "data-cell": cell.cell, "data-lane": cell.lane, "data-rule": cell.rule || "(default)",
      "data-change": cell.change, "data-row": String(row), "data-column": String(column),
      "aria-label": describe(cell), title: `${describe(cell)}\n${cell.reason}`,
      onfocus: () => showCell(cell), onmouseenter: () => showCell(cell), onkeydown: moveInGrid,
    },
      el("span", { class: "facts" }, factKey(cell.facts, columnNames)),
      el("span", { class: "lane" }, cell.lane),
      el("span", { class: "rule" }, cell.rule || "(default)"),
      cell.change === "lane" ? el("span", { class: "was" }, `was ${cell.was_lane}`) : null,
      cell.change === "rule" ? el("span", { class: "was" }, `was ${cell.was_rule || "(default)"}`) : null,
      state.uncovered.has(cell.cell) ? el("span", { class: "untested" }, "untested") : null);
    return node;
  }

  function moveInGrid(event) {
    const steps = { ArrowLeft: [0, -1], ArrowRight: [0, 1], ArrowUp: [-1, 0], ArrowDown: [1, 0] };
    const step = steps[event.key];
    if (!step) return;
    event.preventDefault();
    const here = event.currentTarget;
    const row = Number(here.dataset.row) + step[0];
    const column = Number(here.dataset.column) + step[1];
    const next = $("grid").querySelector(`.cell[data-row="${row}"][data-column="${column}"]`);
    if (!next) return;
    here.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
  }

  function showCell(cell) {
    const rows = [
      ["cell", cell.cell], ["lane", cell.lane], ["rule", cell.rule || "(default: no rule matched)"],
      ["reason", cell.reason], ["matched", cell.matched.join(", ") || "none"],
    ];
    if (cell.change) rows.push(["changed", `was ${cell.was_lane}, decided by ${cell.was_rule || "(default)"}`]);
    if (state.uncovered.has(cell.cell)) rows.push(["tests", "no test covers this cell"]);
    $("cell-detail").replaceChildren(factsTable(rows));
  }

  function factsTable(rows) {
    return el("table", { class: "facts-table" },
      el("tbody", {}, ...rows.map(([name, value, extra]) =>
        el("tr", {}, el("th", { scope: "row" }, name), el("td", {}, value),
          extra !== undefined ? el("td", {}, extra) : null))));
  }

  // -- analyze: lint, the table and diff, as the person types -------------------------------

  async function analyze() {
    const number = ++state.sent;
    const started = performance.now();
    const body = { ...texts(), baseline: state.baseline };
    if (state.baseline === "other" && state.baselineText !== null) body.baseline_text = state.baselineText;
    const answer = await post("/api/analyze", body);
    if (number !== state.sent) return; // a newer text is on its way
    if (answer.error) {
      say(answer.error, true);
      $("status").classList.toggle("cut-off", Boolean(answer.cut_off));
      return;
    }
    drawDiagnostics("policy", answer.lint);
    drawDiagnostics("config", answer.config);
    if (answer.compiled) {
      drawGrid(answer.cells, false);
      $("diff-summary").textContent = answer.diff.summary;
      const policy = answer.policy;
      say(`${policy.name} ${policy.version}: ${answer.cells.filter((c) => c.lane === "native").length} cell(s) native, `
        + `${answer.cells.filter((c) => c.lane === "text").length} text`);
      scheduleTests();
    } else {
      drawGrid(null, true);
      say("the policy does not load: the table shows the last version that did", true);
    }
    const now = performance.now();
    probe.timings.push({ pause_to_update_ms: now - state.lastInput, request_ms: now - started });
    probe.analyzed = number;
    document.body.dataset.analyzed = String(number);
  }

  let analyzeTimer = 0;
  function edited(name) {
    state.lastInput = performance.now();
    drawEditor(name);
    clearTimeout(analyzeTimer);
    analyzeTimer = setTimeout(analyze, DEBOUNCE_MS);
  }

  // -- tests ---------------------------------------------------------------------------------

  let testsTimer = 0;
  function scheduleTests() {
    clearTimeout(testsTimer);
    testsTimer = setTimeout(runTests, TESTS_AFTER_MS);
  }

  async function runTests() {
    const sent = state.sent;
    const answer = await post("/api/tests", texts());
    if (sent !== state.sent) return;
    const box = $("tests");
    if (answer.error) {
      box.replaceChildren(el("p", { class: "problem" }, answer.error));
      return;
    }
    state.uncovered = new Set(answer.uncovered);
    if (!answer.files.length) {
      box.replaceChildren(el("p", {}, "no *.test.yaml beside this policy names it"));
    } else {
      const all = answer.files.flatMap((f) => f.cases);
      const failing = all.filter((c) => c.status !== "pass");
      box.replaceChildren(
        el("p", { "data-passed": String(all.length - failing.length), "data-failed": String(failing.length) },
          `${answer.files.map((f) => f.file).join(", ")}: ${all.length - failing.length} passed, ${failing.length} failed`),
        el("ul", { class: "tests-list" }, ...failing.map((c) => el("li", { class: c.status },
          `${c.status}: line ${c.line}: ${c.name}`, el("div", { class: "help" }, c.problems.join("\n"))))),
        ...answer.files.flatMap((f) => f.problems.map((p) => el("p", { class: "problem" }, p))),
        el("p", {}, answer.uncovered.length
          ? `cells no test covers (${answer.uncovered.length}): ${answer.uncovered.join("; ")}`
          : "every cell is covered by a test"));
    }
    drawGrid(state.cells, $("grid").classList.contains("stale"));
    probe.tests += 1;
  }

  // -- try a route ---------------------------------------------------------------------------

  async function tryRoute(event) {
    event.preventDefault();
    const box = $("route");
    box.replaceChildren(el("p", {}, "deciding…"));
    const answer = await post("/api/route", { ...texts(), provider: $("provider").value, model: $("model").value });
    probe.routed += 1;
    if (answer.error) {
      box.replaceChildren(el("p", { class: "problem" }, answer.error));
      return;
    }
    const record = answer.decision;
    const facts = Object.entries(record.facts).map(([name, value]) => [name, value, record.provenance[name] || ""]);
    box.replaceChildren(
      el("p", { class: `lane-chip lane-${record.lane}`, "data-lane": record.lane },
        `lane ${record.lane}: ${record.lane === "native" ? "the pixels are attached" : "the model gets a path or a description"}`),
      el("p", {}, `rule ${record.rule || "(default: no rule matched)"}: ${record.reason}`),
      record.warnings.length ? el("ul", { class: "warnings" }, ...record.warnings.map((w) => el("li", {}, w))) : null,
      ...answer.config_errors.map((e) => el("p", { class: "problem" }, e)),
      el("table", { class: "facts-table" },
        el("thead", {}, el("tr", {}, el("th", {}, "fact"), el("th", {}, "value"), el("th", {}, "provenance"))),
        el("tbody", {}, ...facts.map(([n, v, p]) => el("tr", {}, el("th", { scope: "row" }, n), el("td", {}, v), el("td", {}, p))))),
      el("p", {}, `catalog: ${answer.catalog}`),
      el("ol", { class: "explanation" }, ...record.explanation.map((r) =>
        el("li", {}, `${r.rule}: ${r.status === "wins" ? `WINS -> ${r.lane}` : r.status === "matches" ? `matches (-> ${r.lane}) but another rule comes first` : `no match: ${r.why_not}`}`))),
      el("p", {}, `payload (${answer.payload.summary.api}, ${answer.payload.summary.images_sent} image(s) attached):`),
      el("pre", { class: "payload", tabindex: "0" }, JSON.stringify(answer.payload.body, null, 2)));
  }

  // -- save and share ------------------------------------------------------------------------

  async function save() {
    const status = $("save-status");
    if (!state.saveTarget) {
      status.textContent = "nothing to save to: start the playground with --policy FILE";
      return;
    }
    const answer = await post("/api/save", { ...texts(), overwrite: state.overwrite ? "yes" : "no" });
    state.overwrite = false;
    if (answer.error) {
      state.overwrite = Boolean(answer.conflict);
      status.textContent = answer.error + (answer.errors ? `: ${answer.errors.map((e) => `line ${e.line}: ${e.message}`).join("; ")}` : "");
      status.classList.add("problem");
      return;
    }
    status.classList.remove("problem");
    const area = $("policy-text");
    if (area.value !== answer.text) {
      const at = area.selectionStart;
      area.value = answer.text;
      area.setSelectionRange(at, at);
      edited("policy");
    }
    status.textContent = `saved ${answer.saved} (as fmt lays it out, comments kept)`;
    probe.saved += 1;
  }

  function shared() {
    return { v: 1, ...texts(), provider: $("provider").value, model: $("model").value };
  }

  async function encode(document) {
    const bytes = new TextEncoder().encode(JSON.stringify(document));
    const packed = await new Response(new Blob([bytes]).stream().pipeThrough(new CompressionStream("deflate-raw"))).arrayBuffer();
    let binary = "";
    for (const byte of new Uint8Array(packed)) binary += String.fromCharCode(byte);
    return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  async function decode(text) {
    const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
    const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
    const plain = await new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"))).text();
    return JSON.parse(plain);
  }

  async function share() {
    const fragment = `#share=${await encode(shared())}`;
    const link = `${location.origin}${location.pathname}${location.search}${fragment}`;
    $("share-box").hidden = false;
    $("share-link").value = link;
    $("share-link").focus();
    $("share-link").select();
    probe.shared = link;
  }

  function download() {
    const blob = new Blob([JSON.stringify(shared(), null, 2)], { type: "application/json" });
    const link = el("a", { href: URL.createObjectURL(blob), download: "visiongate-playground.json" });
    document.body.append(link);
    link.click();
    link.remove();
  }

  function apply(document, where) {
    if (typeof document !== "object" || document === null || document.v !== 1) {
      say(`${where} is not a playground share (version 1)`, true);
      return;
    }
    if (typeof document.policy === "string") $("policy-text").value = document.policy;
    if (typeof document.config === "string") $("config-text").value = document.config;
    if (typeof document.provider === "string") $("provider").value = document.provider;
    if (typeof document.model === "string") $("model").value = document.model;
    say(`loaded from ${where}; Save still writes only to the file the playground was started with`);
    drawEditor("config");
    edited("policy");
  }

  async function readFile(input) {
    const file = input.files && input.files[0];
    return file ? await file.text() : null;
  }

  // -- tabs and start ------------------------------------------------------------------------

  function selectTab(name) {
    for (const other of ["policy", "config"]) {
      const tab = $(`tab-${other}`);
      const chosen = other === name;
      tab.setAttribute("aria-selected", String(chosen));
      tab.tabIndex = chosen ? 0 : -1;
      $(`panel-${other}`).hidden = !chosen;
    }
    drawEditor(name);
  }

  function wire() {
    for (const name of ["policy", "config"]) {
      const area = editors[name].area;
      area.addEventListener("input", () => edited(name));
      area.addEventListener("scroll", () => syncScroll(name));
      const tab = $(`tab-${name}`);
      tab.addEventListener("click", () => selectTab(name));
      tab.addEventListener("keydown", (event) => {
        if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
          const next = name === "policy" ? "config" : "policy";
          selectTab(next);
          $(`tab-${next}`).focus();
        }
      });
    }
    document.addEventListener("keydown", (event) => {
      if ((event.ctrlKey || event.metaKey) && event.key === "s") {
        event.preventDefault();
        save();
      }
    });
    $("save").addEventListener("click", save);
    $("share").addEventListener("click", share);
    $("share-download").addEventListener("click", download);
    $("open-shared").addEventListener("change", async (event) => {
      const text = await readFile(event.target);
      if (text === null) return;
      try {
        apply(JSON.parse(text), "the shared file");
      } catch (error) {
        say(`the shared file is not JSON: ${error.message}`, true);
      }
    });
    $("route-form").addEventListener("submit", tryRoute);
    $("baseline").addEventListener("change", (event) => {
      state.baseline = event.target.value;
      $("baseline-file").hidden = state.baseline !== "other";
      if (state.baseline === "other" && state.baselineText === null) $("baseline-file").focus();
      else analyze();
    });
    $("baseline-file").addEventListener("change", async (event) => {
      state.baselineText = await readFile(event.target);
      analyze();
    });
  }

  async function start() {
    wire();
    const answer = await post("/api/state", {});
    if (answer.error) {
      say(answer.error, true);
      return;
    }
    state.file = answer.file;
    state.saveTarget = answer.save_target;
    $("where").textContent = answer.save_target
      ? `editing ${answer.file} (Save writes it, once it lints clean)`
      : `${answer.file}, read only: start with --policy FILE to save`;
    $("save").disabled = !answer.save_target;
    if (!answer.save_target) $("save").title = "nothing to save to: start the playground with --policy FILE";
    const select = $("baseline");
    for (const name of answer.bundled) select.append(el("option", { value: `bundled:${name}` }, `bundled ${name}`));
    select.append(el("option", { value: "other" }, "another file…"));
    $("policy-text").value = answer.policy;
    $("config-text").value = answer.config;
    drawEditor("config");
    if (location.hash.startsWith("#share=")) {
      try {
        apply(await decode(location.hash.slice(7)), "a shared link");
        return;
      } catch (error) {
        say(`the shared link cannot be read: ${error.message}`, true);
      }
    }
    state.lastInput = performance.now();
    drawEditor("policy");
    analyze();
  }

  start();
})();
