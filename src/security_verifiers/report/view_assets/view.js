// sv view: lists, filters and expands the rollouts embedded in this page (the JSON block with id "sv-data").
// Every string from the run (transcripts, item ids, error messages, outcome values) reaches the page as a text
// node (append / textContent), never as HTML: a model reply holding markup is shown, not run.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("sv-data").textContent);
  const texts = data.texts;
  const rollouts = data.rollouts;
  const PAGE = 200;         // rows rendered at a time ("show more" adds as many)
  const MAX_CHOICES = 40;   // an outcome field with at most this many distinct values gets a filter
  const LONG_MESSAGE = 1500; // system messages longer than this start folded

  rollouts.forEach(function (r, i) { r.index = i; r.key = r.item + "#" + (r.sample || 0); });

  // -- a large run's conversations, in parts beside the page (view_files/part-00001.js...) ----------------------
  // Each part is a script that calls svViewPart(n, {texts, rollouts}); it is loaded when one of its rollouts is
  // opened, or every part at once for a search of the transcripts. Its texts join this page's table.
  const parts = data.parts || null;
  const partState = {};  // n -> "loading" | "loaded" | "failed"
  const partWaiting = {};
  function partName(n) { return "part-" + String(n).padStart(5, "0") + ".js"; }
  function partUrl(n) { return encodeURIComponent(parts.dir) + "/" + partName(n); }
  function partDone(n, state) {
    partState[n] = state;
    const waiting = partWaiting[n] || [];
    delete partWaiting[n];
    waiting.forEach(function (f) { f(); });
    const loaded = Object.keys(partState).filter(function (k) { return partState[k] === "loaded"; }).length;
    document.body.setAttribute("data-parts-loaded", String(loaded));
  }
  window.svViewPart = function (n, payload) {
    if (!parts || partState[n] === "loaded") return;
    const base = texts.length;
    payload.texts.forEach(function (t) { texts.push(t); });
    for (const i in payload.rollouts) {
      const r = rollouts[Number(i)], p = payload.rollouts[i];
      if (!r) continue;
      r.messages = (p.messages || []).map(function (m) { return Object.assign({}, m, { text: m.text + base }); });
      if (p.outcome) r.outcome = p.outcome;
      r.hay = undefined;
    }
    partDone(n, "loaded");
  };
  function needsPart(r) { return !!parts && r.messages === undefined && partState[r.part] !== "failed"; }
  function loadPart(n, then) {
    if (partState[n] === "loaded" || partState[n] === "failed") { then(); return; }
    (partWaiting[n] = partWaiting[n] || []).push(then);
    if (partState[n] === "loading") return;
    partState[n] = "loading";
    const script = document.createElement("script");
    script.setAttribute("src", partUrl(n));  // a file beside the page, never another address
    script.onerror = function () { partDone(n, "failed"); };
    script.onload = function () { if (partState[n] === "loading") partDone(n, "failed"); };
    document.body.append(script);
  }

  // -- small helpers ------------------------------------------------------------------------------------
  function el(tag, attrs) {
    const node = document.createElement(tag);
    for (const name in attrs || {}) {
      if (name === "text") node.textContent = attrs[name];
      else if (name === "class") node.className = attrs[name];
      else node.setAttribute(name, attrs[name]);
    }
    for (let i = 2; i < arguments.length; i++) {
      const kid = arguments[i];
      if (kid !== null && kid !== undefined) node.append(kid); // strings become text nodes
    }
    return node;
  }
  function num(x, digits) {
    return (x === null || x === undefined) ? "n/a" : (typeof x === "number" ? x.toFixed(digits === undefined ? 4 : digits) : String(x));
  }
  function show(v) {
    if (v === null || v === undefined) return "n/a";
    if (typeof v === "number") return Number.isInteger(v) ? String(v) : v.toFixed(4);
    if (typeof v === "string") return v;
    return JSON.stringify(v);
  }
  function isError(r) { return !!r.error; }
  function isParseFailure(r) { return !r.error && r.parse !== undefined && r.parse !== "ok"; }
  function statusOf(r) {
    if (r.error) return el("span", { class: "tag error", text: "error: " + r.error.kind });
    if (isParseFailure(r)) return el("span", { class: "tag parse", text: "parse: " + r.parse });
    return el("span", { class: "tag ok", text: "scored" });
  }

  // -- what the filters offer, read from the data ------------------------------------------------------------
  const rewards = rollouts.map(function (r) { return r.reward; }).filter(function (x) { return typeof x === "number"; });
  const rewardMin = rewards.length ? Math.min.apply(null, rewards) : 0;
  const rewardMax = rewards.length ? Math.max.apply(null, rewards) : 1;
  const errorKinds = {}, parseStatuses = {};
  rollouts.forEach(function (r) {
    if (r.error) errorKinds[r.error.kind] = (errorKinds[r.error.kind] || 0) + 1;
    if (isParseFailure(r)) parseStatuses[r.parse] = (parseStatuses[r.parse] || 0) + 1;
  });
  // Outcome fields with few distinct values that name a class (a label, a family, a platform), flags and 0/1
  // indicators become filters; counts and scores (other numbers) do not, nor do lists.
  const categorical = (function () {
    const seen = {};
    rollouts.forEach(function (r) {
      for (const k in r.outcome || {}) {
        const v = r.outcome[k];
        if (seen[k] === false) continue;
        const plain = v === null || typeof v === "string" || typeof v === "boolean" || v === 0 || v === 1;
        if (!plain) { seen[k] = false; continue; }
        seen[k] = seen[k] || {};
        seen[k][JSON.stringify(v)] = (seen[k][JSON.stringify(v)] || 0) + 1;
        if (Object.keys(seen[k]).length > MAX_CHOICES) seen[k] = false;
      }
    });
    const out = [];
    for (const k in seen) {
      if (!seen[k] || Object.keys(seen[k]).length < 2) continue;
      const values = Object.keys(seen[k]).map(JSON.parse);
      // names (strings) and 0/1 labels are shown in each row; flags only as filters, the row would be too long
      out.push({ key: k, values: seen[k], inRow: !values.every(function (v) { return typeof v === "boolean" || v === null; }) });
    }
    return out;
  })();
  const showSample = rollouts.some(function (r) { return r.sample; });

  // -- state, kept in the address's #fragment so a filtered view can be linked --------------------------------
  const state = { q: "", status: "all", min: "", max: "", sort: "file", cats: {}, open: {} };
  (function readHash() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    params.forEach(function (value, name) {
      if (name.indexOf("o.") === 0) state.cats[name.slice(2)] = value;
      else if (name === "open") value.split(",").forEach(function (k) { if (k) state.open[k] = true; });
      else if (["q", "status", "min", "max", "sort"].indexOf(name) >= 0) state[name] = value;
    });
  })();
  function writeHash() {
    const params = new URLSearchParams();
    ["q", "status", "min", "max", "sort"].forEach(function (k) {
      if (state[k] && !(k === "status" && state[k] === "all") && !(k === "sort" && state[k] === "file")) params.set(k, state[k]);
    });
    for (const k in state.cats) if (state.cats[k] !== "") params.set("o." + k, state.cats[k]);
    const open = Object.keys(state.open);
    if (open.length) params.set("open", open.join(","));
    const hash = params.toString();
    try {
      history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
    } catch (e) {
      // a browser that refuses to rewrite a file:// address: the view works the same, only the link is not kept
    }
  }

  // -- filtering --------------------------------------------------------------------------------------------
  function haystack(r) {
    if (r.hay === undefined) {
      const parts = [r.item, r.split, JSON.stringify(r.outcome || {}), JSON.stringify(r.components || {})];
      if (r.error) parts.push(r.error.kind, r.error.message);
      (r.messages || []).forEach(function (m) {
        parts.push(texts[m.text]);
        (m.tool_calls || []).forEach(function (c) { parts.push(c.name, c.arguments); });
      });
      r.hay = parts.join("\n").toLowerCase();
    }
    return r.hay;
  }
  function matches(r) {
    const s = state.status;
    if (s === "scored" && r.error) return false;
    if (s === "errors" && !isError(r)) return false;
    if (s === "parse" && !isParseFailure(r)) return false;
    if (s === "cached" && !r.cached) return false;
    if (s.indexOf("error:") === 0 && !(r.error && r.error.kind === s.slice(6))) return false;
    if (s.indexOf("parse:") === 0 && !(isParseFailure(r) && r.parse === s.slice(6))) return false;
    if (state.min !== "" || state.max !== "") {
      if (typeof r.reward !== "number") return false;
      if (state.min !== "" && r.reward < parseFloat(state.min)) return false;
      if (state.max !== "" && r.reward > parseFloat(state.max)) return false;
    }
    for (const k in state.cats) {
      if (state.cats[k] === "") continue;
      if (JSON.stringify((r.outcome || {})[k] === undefined ? null : r.outcome[k]) !== state.cats[k]) return false;
    }
    if (state.q && haystack(r).indexOf(state.q.toLowerCase()) < 0) return false;
    return true;
  }
  function sorted(list) {
    const by = {
      file: function (a, b) { return a.index - b.index; },
      "reward-asc": function (a, b) { return rewardOr(a, Infinity) - rewardOr(b, Infinity) || a.index - b.index; },
      "reward-desc": function (a, b) { return rewardOr(b, -Infinity) - rewardOr(a, -Infinity) || a.index - b.index; },
      "latency-desc": function (a, b) { return b.latency_s - a.latency_s || a.index - b.index; },
      item: function (a, b) { return a.item < b.item ? -1 : a.item > b.item ? 1 : (a.sample || 0) - (b.sample || 0); },
    }[state.sort] || function (a, b) { return a.index - b.index; };
    return list.slice().sort(by);
  }
  function rewardOr(r, missing) { return typeof r.reward === "number" ? r.reward : missing; }

  // -- controls ---------------------------------------------------------------------------------------------
  const controls = document.getElementById("controls");
  function labelled(text, input) { return el("label", {}, text, input); }
  function select(options, value, onChange, id) {
    const node = el("select", { id: id });
    options.forEach(function (o) { node.append(el("option", { value: o[0], text: o[1] })); });
    node.value = value;
    node.addEventListener("change", function () { onChange(node.value); });
    return node;
  }
  const search = el("input", { type: "search", id: "search", placeholder: "item id, reply text, error, outcome…" });
  search.value = state.q;
  let typing = null;
  search.addEventListener("input", function () {
    clearTimeout(typing);
    typing = setTimeout(function () { state.q = search.value; update(true); }, 150);
  });
  controls.append(labelled("search", search));
  const statusOptions = [["all", "all rollouts"], ["scored", "scored (no error)"], ["errors", "errors (not scored)"],
    ["parse", "parse failures (scored at minimum)"], ["cached", "answered from the cache"]];
  Object.keys(errorKinds).sort().forEach(function (k) { statusOptions.push(["error:" + k, "error: " + k + " (" + errorKinds[k] + ")"]); });
  Object.keys(parseStatuses).sort().forEach(function (k) { statusOptions.push(["parse:" + k, "parse: " + k + " (" + parseStatuses[k] + ")"]); });
  controls.append(labelled("outcome", select(statusOptions, state.status, function (v) { state.status = v; update(true); }, "filter-status")));
  function rewardInput(which) {
    const input = el("input", { type: "number", step: "any", id: "reward-" + which,
      placeholder: num(which === "min" ? rewardMin : rewardMax, 3) });
    input.value = state[which];
    input.addEventListener("input", function () { state[which] = input.value.trim(); update(true); });
    return input;
  }
  controls.append(labelled("reward ≥", rewardInput("min")), labelled("reward ≤", rewardInput("max")));
  categorical.forEach(function (c) {
    const options = [["", "any"]];
    Object.keys(c.values).sort().forEach(function (v) { options.push([v, show(JSON.parse(v)) + " (" + c.values[v] + ")"]); });
    const current = state.cats[c.key] || "";
    controls.append(labelled(c.key, select(options, current, function (v) { state.cats[c.key] = v; update(true); }, "filter-o-" + c.key)));
  });
  controls.append(labelled("sort", select([["file", "as run"], ["reward-asc", "reward, lowest first"],
    ["reward-desc", "reward, highest first"], ["latency-desc", "slowest first"], ["item", "item id"]],
    state.sort, function (v) { state.sort = v; update(true); }, "sort")));
  const reset = el("button", { type: "button", id: "reset", text: "reset" });
  reset.addEventListener("click", function () {
    state.q = ""; state.status = "all"; state.min = ""; state.max = ""; state.sort = "file"; state.cats = {}; state.open = {};
    search.value = "";
    controls.querySelectorAll("select").forEach(function (s) { s.selectedIndex = 0; });
    controls.querySelectorAll("input[type=number]").forEach(function (i) { i.value = ""; });
    update(true);
  });
  controls.append(reset);

  // -- counts over the whole run ----------------------------------------------------------------------------
  (function counts() {
    const nErr = rollouts.filter(isError).length, nParse = rollouts.filter(isParseFailure).length;
    const kinds = Object.keys(errorKinds).sort().map(function (k) { return k + " " + errorKinds[k]; }).join(", ");
    let text = rollouts.length + " rollouts: " + (rollouts.length - nErr) + " scored, " + nErr + " errors" +
      (kinds ? " (" + kinds + ")" : "") + " kept out of the metrics, " + nParse + " parse failures scored at the minimum";
    const cached = rollouts.filter(function (r) { return r.cached; }).length;
    if (cached) text += ", " + cached + " answered from the cache";
    const counts = document.getElementById("counts");
    counts.textContent = text + ".";
    if (parts) {
      counts.append(" The transcripts are in " + parts.count + " parts in " + parts.dir +
        "/ beside this page, loaded when a rollout is opened. ");
      const all = el("button", { type: "button", id: "load-all", text: "load every transcript (to search them)" });
      all.addEventListener("click", function () {
        all.disabled = true;
        let left = parts.count;
        for (let n = 1; n <= parts.count; n++) {
          loadPart(n, function () { left -= 1; if (left === 0) { all.textContent = "every transcript loaded"; update(false); } });
        }
      });
      counts.append(all);
    }
  })();

  // -- the table --------------------------------------------------------------------------------------------
  const thead = document.querySelector("#rollouts thead");
  const tbody = document.querySelector("#rollouts tbody");
  const headers = ["#", "item"].concat(showSample ? ["sample"] : []).concat(["split", "reward", "components", "status", "outcome / error"]);
  thead.append(el("tr", {}, ...headers.map(function (h) { return el("th", { text: h }); })));
  const rowKeys = categorical.filter(function (c) { return c.inRow; }).map(function (c) { return c.key; });
  function finalReply(r) {
    if (r.messages === undefined && r.reply !== undefined) return r.reply;  // a large run's row, part not loaded
    const messages = r.messages || [];
    for (let i = messages.length - 1; i >= 0; i--) if (messages[i].role === "assistant") return texts[messages[i].text];
    return "";
  }
  function clip(text, n) { text = text.replace(/\s+/g, " ").trim(); return text.length > n ? text.slice(0, n) + "…" : text; }

  function rewardCell(r) {
    const td = el("td", { class: "num", text: num(r.reward) });
    if (typeof r.reward === "number" && rewardMax > rewardMin) {
      const t = (r.reward - rewardMin) / (rewardMax - rewardMin);
      td.style.background = "hsl(" + Math.round(120 * t) + ", 70%, 88%)";
    }
    return td;
  }
  function row(r) {
    const tr = el("tr", { class: "row" + (state.open[r.key] ? " open" : ""), "data-key": r.key });
    tr.append(el("td", { class: "num", text: String(r.index + 1) }), el("td", { class: "item mono", text: r.item }));
    if (showSample) tr.append(el("td", { class: "num", text: String(r.sample || 0) }));
    tr.append(el("td", { text: r.split }), rewardCell(r));
    const comps = Object.keys(r.components || {}).map(function (k) { return k + " " + num(r.components[k], 3); }).join(" · ");
    tr.append(el("td", { class: "mono", text: comps }), el("td", {}, statusOf(r)));
    let last;
    if (r.error) last = el("td", { class: "msgline", text: clip(r.error.message, 240) });
    else {
      last = el("td", { class: "outcome-cell", text: rowKeys.filter(function (k) { return r.outcome && k in r.outcome; })
        .map(function (k) { return k + "=" + show(r.outcome[k]); }).join(" · ") });
      if (isParseFailure(r)) last.append(el("div", { class: "mono", text: "reply: " + (clip(finalReply(r), 160) || "(empty)") }));
    }
    tr.append(last);
    tr.addEventListener("click", function () {
      if (state.open[r.key]) delete state.open[r.key]; else state.open[r.key] = true;
      const next = tr.nextSibling;
      if (next && next.classList && next.classList.contains("detail")) { next.remove(); tr.classList.remove("open"); }
      else {
        const shown = detail(r);
        tr.after(shown); tr.classList.add("open");
        if (needsPart(r)) loadPart(r.part, function () { if (shown.parentNode) shown.replaceWith(detail(r)); });
      }
      writeHash();
    });
    return tr;
  }
  function kv(obj) {
    const table = el("table", { class: "kv" });
    Object.keys(obj).forEach(function (k) { table.append(el("tr", {}, el("td", { text: k }), el("td", { class: "mono", text: show(obj[k]) }))); });
    return table;
  }
  function message(m) {
    const text = texts[m.text];
    const li = el("li", { class: "msg " + m.role });
    li.append(el("div", { class: "role", text: m.role + (m.tool_call_id ? " · answer to " + m.tool_call_id : "") }));
    const body = el("pre", { text: text });
    if (m.role === "system" && text.length > LONG_MESSAGE) {
      li.append(el("details", {}, el("summary", { text: "system prompt (" + text.length.toLocaleString("en") + " characters)" }), body));
    } else if (text) li.append(body);
    (m.tool_calls || []).forEach(function (c) {
      let args = c.arguments;
      try { args = JSON.stringify(JSON.parse(c.arguments), null, 2); } catch (e) { /* shown as the model wrote it */ }
      li.append(el("div", { class: "call" }, el("span", { class: "name mono", text: "→ " + c.name }),
        el("span", { class: "note mono", text: "  " + c.id }), el("pre", { text: args })));
    });
    return li;
  }
  function detail(r) {
    const grid = el("div", { class: "detail-grid" });
    if (r.error) grid.append(el("section", {}, el("h3", { text: "error (not scored)" }),
      el("pre", { class: "error-box", text: r.error.kind + ": " + r.error.message })));
    const facts = { item: r.item, sample: r.sample || 0, split: r.split, reward: r.reward, parse: r.parse === undefined ? null : r.parse,
      "prompt tokens": r.tokens[0], "completion tokens": r.tokens[1], "latency (s)": r.latency_s, cached: !!r.cached };
    for (const k in r.components || {}) facts["component " + k] = r.components[k];
    grid.append(el("section", {}, el("h3", { text: "rollout" }), kv(facts)));
    if (r.outcome) grid.append(el("section", {}, el("h3", { text: "outcome (what the metrics read)" }), kv(r.outcome)));
    const messages = r.messages || [];
    const list = el("ol", { class: "transcript" }, ...messages.map(message));
    let missing = "no transcript recorded";
    if (parts && r.messages === undefined) {
      missing = partState[r.part] === "failed"
        ? "the transcript is in " + parts.dir + "/" + partName(r.part) + ", which could not be loaded: keep the " +
          parts.dir + " folder next to this page"
        : "loading the transcript from " + parts.dir + "/" + partName(r.part) + "…";
    }
    const td = el("td", { colspan: String(headers.length) }, grid,
      el("h3", { text: "transcript (" + (r.messages === undefined && parts ? "not loaded" : messages.length + " messages") + ")" }),
      messages.length ? list : el("p", { class: "note", text: missing }));
    return el("tr", { class: "detail" }, td);
  }

  // -- rendering --------------------------------------------------------------------------------------------
  let limit = PAGE, matching = [];
  const shown = document.getElementById("shown");
  const more = document.getElementById("more");
  more.addEventListener("click", function () { limit += PAGE; render(); });
  function render() {
    tbody.replaceChildren();
    const fragment = document.createDocumentFragment();
    matching.slice(0, limit).forEach(function (r) {
      fragment.append(row(r));
      if (state.open[r.key]) {
        fragment.append(detail(r));
        if (needsPart(r)) loadPart(r.part, render);  // drawn again once its part is here
      }
    });
    tbody.append(fragment);
    const scored = matching.filter(function (r) { return typeof r.reward === "number"; });
    const mean = scored.length ? scored.reduce(function (s, r) { return s + r.reward; }, 0) / scored.length : null;
    let text = "Showing " + Math.min(limit, matching.length) + " of " + matching.length + " matching rollouts (" +
      rollouts.length + " in the run); mean reward of the matching scored ones: " + num(mean) + ".";
    if (parts && state.q) {
      const loaded = Object.keys(partState).filter(function (k) { return partState[k] === "loaded"; }).length;
      if (loaded < parts.count) text += " The search read the transcripts of " + loaded + " of " + parts.count + " parts.";
    }
    shown.textContent = text;
    more.hidden = matching.length <= limit;
    more.textContent = "show " + Math.min(PAGE, matching.length - limit) + " more";
  }
  function update(fromControl) {
    matching = sorted(rollouts.filter(matches));
    limit = PAGE;
    // an expanded rollout named in the address is brought into the rendered rows
    matching.forEach(function (r, i) { if (state.open[r.key] && i >= limit) limit = i + 1; });
    render();
    if (fromControl) writeHash();
  }
  update(false);
  document.body.setAttribute("data-rendered", String(rollouts.length));
})();
