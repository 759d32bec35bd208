// longfair dashboard: a small single-page app over the JSON/HTTP API.
// Every data call carries the token the user logged in with, so the API
// decides what the user sees; this file holds no authority of its own.
"use strict";
(function () {
  const TOKEN = "longfair.token";
  const main = document.getElementById("main");
  const stale = document.getElementById("stale");
  const charts = {};
  let poll = null, readAt = null, readNote = "";
  window.longfairCharts = charts; // read by the browser tests

  function esc(s) {
    return String(s ?? "").replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
  }
  function token() { return sessionStorage.getItem(TOKEN) || ""; }

  // api calls the JSON API; a refusal throws an Error whose message is the
  // API's own (the gRPC status message), prefixed with the HTTP status.
  async function api(path) {
    const r = await fetch(path, { headers: { Authorization: "Bearer " + token() } });
    const text = await r.text();
    let body = null;
    try { body = text ? JSON.parse(text) : {}; } catch (e) { body = { message: text }; }
    if (!r.ok) {
      const err = new Error("HTTP " + r.status + ": " + (body && body.message ? body.message : text));
      err.status = r.status;
      throw err;
    }
    readAt = new Date();
    return body;
  }

  function showStale() {
    if (!readAt) { stale.textContent = ""; return; }
    const age = Math.round((Date.now() - readAt) / 1000);
    stale.textContent = "Data read " + age + " s ago from " + location.host +
      " (any server answers; a follower may lag the leader)" + (readNote ? "; " + readNote : "");
  }
  setInterval(showStale, 1000);

  function errorPage(err) {
    main.innerHTML = '<section class="error" id="error"><h1>Not shown</h1><p id="error-message">' +
      esc(err.message) + '</p><p>Log in with a token allowed to see this: <a href="#/login">log in</a>.</p></section>';
  }

  function fmtSU(micro) { return micro === undefined ? "" : (Number(micro) / 1e6).toFixed(2); }
  function fmtMap(m) { return Object.entries(m || {}).map(([k, v]) => k + "=" + (+v).toPrecision(4)).join(" "); }
  function fmtDur(d) { return d || ""; }
  function table(cols, rows, id) {
    return '<div class="scroll"><table' + (id ? ' id="' + id + '"' : "") + "><thead><tr>" +
      cols.map(c => "<th>" + esc(c) + "</th>").join("") + "</tr></thead><tbody>" +
      rows.map(r => "<tr>" + r.map(c => "<td>" + c + "</td>").join("") + "</tr>").join("") +
      "</tbody></table></div>";
  }

  // rowOf turns one account's numbers (a history sample's or the live
  // report's) into what the charts draw.
  function sum(m) { return Object.values(m || {}).reduce((x, y) => x + y, 0); }
  function rowOf(a) {
    return { beta: a.has_beta ? a.beta : null, usage: sum(a.usage), baseline: sum(a.baseline), share: sum(a.share),
      su: Number(a.su_available_micro_su || 0) / 1e6 };
  }

  // series reads the servers' recorded fairness history since the given
  // time (GET /v1/fairness/history: from committed commands, the same on
  // every server) and ends it with the live report's numbers.
  async function series(report, since) {
    // Up to the report's time, so the server picks the finest tier that
    // covers exactly the range asked for.
    const h = await api("/v1/fairness/history?since=" + encodeURIComponent(new Date(since * 1000).toISOString()) +
      "&until=" + encodeURIComponent(report.at));
    const rows = (h.samples || []).map(s => {
      const r = { t: Date.parse(s.at) / 1000, a: {} };
      for (const a of s.accounts || []) r.a[a.account] = rowOf(a);
      return r;
    });
    const now = { t: Date.parse(report.at) / 1000, a: {} };
    for (const a of report.accounts || []) now.a[a.account] = rowOf(a);
    if (!rows.length || rows[rows.length - 1].t < now.t) rows.push(now);
    return { rows: rows, step: h.step || "" };
  }

  // goDuration reads a Go duration ("720h0m0s") in seconds; 0 for none.
  function goDuration(d) {
    let secs = 0;
    for (const m of String(d || "").matchAll(/([0-9.]+)(h|ms|m|s)/g)) secs += parseFloat(m[1]) * { h: 3600, m: 60, s: 1, ms: 0.001 }[m[2]];
    return secs;
  }

  const RANGES = { hour: 3600, day: 86400, week: 7 * 86400 };
  let range = "hour";

  function chart(id, title, accounts, samples, field) {
    const el = document.getElementById(id);
    if (!el) return;
    if (charts[id]) { charts[id].destroy(); delete charts[id]; }
    el.innerHTML = "";
    const rows = samples;
    const xs = rows.map(r => r.t);
    const data = [xs];
    const series = [{}];
    const palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"];
    accounts.forEach((name, i) => {
      data.push(rows.map(r => (r.a[name] ? r.a[name][field] : null)));
      series.push({ label: name, stroke: palette[i % palette.length], width: 2, points: { show: true } });
    });
    const width = Math.max(280, el.clientWidth - 10);
    charts[id] = new uPlot({ title: title, width: width, height: 220, series: series, scales: { x: { time: true } } }, data, el);
    el.dataset.series = String(accounts.length);
  }

  async function accountsPage() {
    const report = await api("/v1/fairness");
    readNote = "fairness computed at " + (report.at || "?");
    const accounts = (report.accounts || []).map(a => a.account);
    const rows = (report.accounts || []).map(a => [
      '<a href="#/jobs/' + encodeURIComponent(a.account) + '">' + esc(a.account) + "</a>",
      a.has_beta ? (+a.beta).toFixed(3) : "–", esc(fmtMap(a.usage)), esc(fmtMap(a.baseline)),
      esc(fmtMap(a.share)), esc(a.pending_tasks || 0), esc(a.running_tasks || 0), fmtSU(a.su_available_micro_su), esc(a.group || ""),
    ]);
    main.innerHTML = "<h1>Accounts</h1><p>Policy <b id=\"policy\">" + esc(report.policy) + "</b>, window <b>" + esc(report.window) +
      "</b>, capacity " + esc(fmtMap(report.capacity)) + "</p>" +
      table(["account", "β", "Ü (usage)", "baseline", "share", "pending", "running", "SU available", "group"], rows, "accounts") +
      '<h2>Over time</h2><p class="ranges">' + Object.keys(RANGES).concat(["window"]).map(k =>
        '<button data-range="' + k + '"' + (k === range ? ' class="on"' : "") + ">last " + k + "</button>").join(" ") +
      '</p><div class="charts"><div class="chart" id="chart-beta"></div><div class="chart" id="chart-usage"></div>' +
      '<div class="chart" id="chart-baseline"></div>' +
      '<div class="chart" id="chart-share"></div><div class="chart" id="chart-su"></div></div>';
    const windowSecs = goDuration(report.window) || RANGES.week;
    const span = range === "window" ? windowSecs : RANGES[range];
    const hist = await series(report, Date.parse(report.at) / 1000 - span + 1);
    readNote += "; history step " + hist.step + ", " + hist.rows.length + " points";
    chart("chart-beta", "β (sharing degree)", accounts, hist.rows, "beta");
    chart("chart-usage", "Ü (accumulated usage)", accounts, hist.rows, "usage");
    chart("chart-baseline", "baseline (what the share accrues)", accounts, hist.rows, "baseline");
    chart("chart-share", "share", accounts, hist.rows, "share");
    chart("chart-su", "SU available", accounts, hist.rows, "su");
    main.querySelectorAll("button[data-range]").forEach(b => b.onclick = () => { range = b.dataset.range; route(); });
  }

  async function jobsPage(account) {
    const q = account ? "?account=" + encodeURIComponent(account) : "";
    const r = await api("/v1/jobs" + q);
    readNote = "";
    const rows = (r.jobs || []).map(j => [
      '<a href="#/job/' + esc(j.id) + '">' + esc(j.id) + "</a>", esc(j.account), esc(j.user), esc(j.name),
      esc((j.state || "").replace("JOB_STATE_", "")), esc(j.tasks), fmtSU(j.hold_micro_su),
    ]);
    main.innerHTML = "<h1>Jobs" + (account ? " of " + esc(account) : "") + "</h1>" +
      '<form id="jobform"><input id="jobid" placeholder="job id" size="10"> <button>Open</button></form>' +
      table(["id", "account", "user", "name", "state", "tasks", "hold SU"], rows, "jobs");
    document.getElementById("jobform").onsubmit = e => { e.preventDefault(); location.hash = "#/job/" + document.getElementById("jobid").value.trim(); };
  }

  const WAITS = {
    JOB_WAIT_NO_NODES: "no node of its class is up",
    JOB_WAIT_NO_NODE_HOLDS: "no node can hold one of its tasks",
    JOB_WAIT_NO_ROOM: "no room now: the nodes that could hold it are busy",
    JOB_WAIT_ROOM: "there is room; it waits for its turn",
  };

  async function jobPage(id) {
    const job = await api("/v1/jobs/" + encodeURIComponent(id));
    let ex = null, exErr = null, tasks = [];
    try { ex = await api("/v1/jobs/" + encodeURIComponent(id) + "/explanation"); } catch (e) { exErr = e; }
    try { tasks = (await api("/v1/jobs/" + encodeURIComponent(id) + "/tasks")).tasks || []; } catch (e) { tasks = []; }
    readNote = "";
    const cost = tasks.reduce((x, t) => x + Number(t.charged_micro_su || 0), 0);
    let reason = "";
    if (ex) {
      const parts = [];
      if (ex.wait) parts.push(WAITS[ex.wait] || ex.wait);
      if (ex.lacking) parts.push("lacking " + ex.lacking);
      if (ex.starving) parts.push("starving: waited past its timeout");
      reason = parts.join("; ") || "not waiting";
    }
    const kv = [
      ["state", esc((job.state || "").replace("JOB_STATE_", ""))], ["account", esc(job.account)], ["user", esc(job.user)],
      ["name", esc(job.name)], ["tasks", esc(job.tasks)], ["demand", esc(fmtMap(job.demand))], ["walltime", esc(fmtDur(job.walltime))],
      ["submitted", esc(job.submitted_at)], ["hold (SU)", fmtSU(job.hold_micro_su || 0)], ["cost so far (SU)", fmtSU(cost)],
    ];
    if (ex) {
      kv.push(["waits for", '<span id="reason">' + esc(reason) + "</span>"],
        ["rank", esc(ex.rank) + " of " + esc(ex.ranked_accounts) + " accounts (" + esc(ex.rank_rule) + ")"],
        ["β", ex.has_beta ? (+ex.beta).toFixed(3) : "–"], ["tasks ahead", esc(ex.ahead_tasks || 0)],
        ["forecast start", esc(ex.forecast_start || "not known")], ["policy", esc(ex.policy)]);
    } else if (exErr) {
      kv.push(["explain", esc(exErr.message)]);
    }
    main.innerHTML = "<h1>Job " + esc(job.id) + "</h1><dl class=\"kv\" id=\"job\">" +
      kv.map(([k, v]) => "<dt>" + esc(k) + "</dt><dd>" + v + "</dd>").join("") + "</dl><h2>Tasks</h2>" +
      table(["index", "attempt", "state", "node", "started", "exit", "charged SU"], tasks.map(t => [
        esc(t.index || 0), esc(t.attempt || 0), esc((t.state || "").replace("TASK_STATE_", "")), esc(t.node), esc(t.started_at), esc(t.exit_code || 0), fmtSU(t.charged_micro_su || 0),
      ]), "tasks");
  }

  // upDown lists a node's last ups and downs, newest first, each with the
  // tasks it lost going down; the whole history is in the cell's title.
  function upDown(history) {
    const items = (history || []).slice().reverse().map(h =>
      (h.up ? "up " : "down ") + (h.at || "") + (h.lost_tasks ? " (" + h.lost_tasks + " task" + (h.lost_tasks > 1 ? "s" : "") + " lost)" : ""));
    return '<span class="history" title="' + esc(items.join("\n")) + '">' + esc(items.slice(0, 3).join(" · ")) +
      (items.length > 3 ? " · …" : "") + "</span>";
  }

  async function nodesPage() {
    const r = await api("/v1/nodes");
    readNote = "";
    main.innerHTML = "<h1>Nodes</h1>" + table(["node", "up", "since", "class", "account", "capacity", "free", "running tasks", "confinement", "up/down history"],
      (r.nodes || []).map(n => [esc(n.id), n.up ? '<span class="ok">up</span>' : '<span class="bad">down</span>', esc(n.since), esc(n.class),
        esc(n.account), esc(fmtMap(n.capacity)), esc(fmtMap(n.free)), esc(n.running_tasks || 0), esc(n.confinement), upDown(n.history)]), "nodes");
  }

  async function bookPage() {
    const report = await api("/v1/fairness");
    const hist = await series(report, Date.parse(report.at) / 1000 - RANGES.week);
    const accounts = (report.accounts || []).map(a => a.account);
    const balances = await Promise.all(accounts.map(a => api("/v1/accounts/" + encodeURIComponent(a) + "/balance").catch(e => ({ account: a, error: e.message }))));
    let grants = [], verify = null, verifyErr = "";
    try { grants = (await api("/v1/grants")).grants || []; } catch (e) { grants = []; }
    try { verify = await api("/v1/ledger/verify"); } catch (e) { verifyErr = e.message; }
    // The journal's head: its last entry's hash, which the verify above
    // checked the chain up to.
    let head = null;
    if (verify) {
      let after = "0";
      for (let i = 0; i < 1000; i++) {
        const page = await api("/v1/journal?page_size=1000&after_seq=" + after);
        const es = page.entries || [];
        if (es.length) head = es[es.length - 1];
        if (!page.next_after_seq || page.next_after_seq === "0" || !es.length) break;
        after = page.next_after_seq;
      }
    }
    const hex = b64 => Array.from(atob(b64 || ""), c => c.charCodeAt(0).toString(16).padStart(2, "0")).join("");
    readNote = "";
    // Burn-down: the SU available now, over the rate it fell across the
    // last week's history.
    function burn(name) {
      const pts = hist.rows.filter(r => r.a[name]).map(r => [r.t, r.a[name].su]);
      if (pts.length < 2) return "no history yet";
      const [t0, s0] = pts[0], [t1, s1] = pts[pts.length - 1];
      const rate = (s0 - s1) / (t1 - t0);
      if (!(rate > 0)) return "not burning";
      return "empty in " + (s1 / rate / 86400).toFixed(1) + " days";
    }
    main.innerHTML = "<h1>SU book</h1>" +
      table(["account", "granted", "charged", "held", "expired", "available", "burn-down"], balances.map(b => b.error ?
        [esc(b.account), esc(b.error), "", "", "", "", ""] :
        [esc(b.account), fmtSU(b.granted_micro_su || 0), fmtSU(b.charged_micro_su || 0), fmtSU(b.held_micro_su || 0), fmtSU(b.expired_micro_su || 0), fmtSU(b.available_micro_su || 0), esc(burn(b.account))]), "balances") +
      "<h2>Grants</h2>" + table(["id", "account", "SU", "granted", "expires", "note"], grants.map(g =>
        [esc(g.id), esc(g.account), fmtSU(g.amount_micro_su), esc(g.granted_at), esc(g.expires_at || "never"), esc(g.note)]), "grants") +
      "<h2>Ledger verify</h2>" + (verify ? '<dl class="kv" id="verify"><dt>result</dt><dd class="' + (verify.ok ? "ok" : "bad") + '">' + (verify.ok ? "ok" : "FAILED") +
        "</dd><dt>entries</dt><dd>" + esc(verify.entries || 0) + "</dd><dt>accounts</dt><dd>" + esc(verify.accounts || 0) +
        "</dd><dt>message</dt><dd>" + esc(verify.message) + "</dd><dt>journal head</dt><dd id=\"head\">" +
        (head ? "seq " + esc(head.seq) + ", hash " + esc(hex(head.hash)) : "empty") + "</dd></dl>" : "<p>" + esc(verifyErr) + "</p>");
  }

  async function adminPage() {
    // Every server's own Raft state, asked of it by the server this page
    // reached (a second at most each).
    const peers = await api("/v1/peers?with_status=true");
    let leader = {};
    try { leader = await api("/v1/leader"); } catch (e) { leader = { error: e.message }; }
    readNote = "";
    const list = peers.peers || [];
    const leaderCommit = Math.max(0, ...list.filter(p => p.status && p.status.state === "leader").map(p => Number(p.status.commit_index || 0)));
    main.innerHTML = "<h1>Raft group</h1><dl class=\"kv\" id=\"leader\">" +
      Object.entries(leader).map(([k, v]) => "<dt>" + esc(k) + "</dt><dd>" + esc(typeof v === "object" ? JSON.stringify(v) : v) + "</dd>").join("") + "</dl>" +
      table(["server", "raft address", "gRPC address", "suffrage", "state", "term", "commit index", "applied index", "behind the leader", "last heard the leader"], list.map(p => {
        const s = p.status || {};
        if (s.error) return [esc(p.id), esc(p.raft_address), esc(p.grpc_address), esc(p.suffrage), '<span class="bad">' + esc(s.error) + "</span>", "", "", "", "", ""];
        return [esc(p.id), esc(p.raft_address), esc(p.grpc_address), esc(p.suffrage), esc(s.state), esc(s.term || 0),
          esc(s.commit_index || 0), esc(s.applied_index || 0), esc(leaderCommit ? Math.max(0, leaderCommit - Number(s.applied_index || 0)) + " entries" : "no leader"),
          esc(s.since_last_contact || (s.state === "leader" ? "(leads)" : ""))];
      }), "peers") +
      "<h2>This server (" + esc(location.host) + ")</h2>" + await serverMetrics() +
      '<p>Scheduling pass times are each server\'s own, on its HTTP listener (<a href="/metrics">/metrics</a>).</p>';
  }

  // serverMetrics reads this server's Prometheus metrics: its Raft
  // indexes (the commit index it knows against what it applied: its lag)
  // and the scheduling pass times.
  async function serverMetrics() {
    let text = "";
    try {
      const r = await fetch("/metrics");
      if (!r.ok) return "<p>This server's /metrics cannot be read here (HTTP " + r.status + "): a proxy may hide it.</p>";
      text = await r.text();
    } catch (e) { return "<p>" + esc(e.message) + "</p>"; }
    const get = (name) => {
      const m = text.match(new RegExp("^" + name + "(?:\\{[^}]*\\})? ([-0-9.e+]+)$", "m"));
      return m ? Number(m[1]) : null;
    };
    const commit = get("longfair_raft_commit_index"), applied = get("longfair_raft_applied_index");
    const passN = get("longfair_sched_pass_seconds_count"), passSum = get("longfair_sched_pass_seconds_sum");
    const rows = [
      ["Raft state", esc(((text.match(/^longfair_raft_state\{state="([a-z]+)"\} 1$/m)) || [])[1] || "unknown")], ["commit index", esc(commit)], ["applied index", esc(applied)],
      ["lag (commit − applied)", commit !== null && applied !== null ? esc(commit - applied) : ""],
      ["scheduling passes", esc(passN)],
      ["mean pass time", passN ? esc((passSum / passN * 1000).toFixed(2) + " ms") : "no pass yet"],
    ];
    return '<dl class="kv" id="server-metrics">' + rows.map(([k, v]) => "<dt>" + esc(k) + "</dt><dd>" + v + "</dd>").join("") + "</dl>";
  }

  function loginPage(msg) {
    document.getElementById("nav").hidden = true;
    main.innerHTML = '<form class="login" id="login"><h1>Log in</h1>' + (msg ? '<p class="bad">' + esc(msg) + "</p>" : "") +
      '<label>Token<input id="token" type="password" autocomplete="off"></label><button>Log in</button>' +
      "<p>The token stays in this tab only (sessionStorage).</p></form>";
    document.getElementById("login").onsubmit = async e => {
      e.preventDefault();
      sessionStorage.setItem(TOKEN, document.getElementById("token").value.trim());
      // A changed hash routes by itself (hashchange); the same one does not.
      if (location.hash === "#/accounts") route(); else location.hash = "#/accounts";
    };
  }

  async function route() {
    if (poll) { clearTimeout(poll); poll = null; }
    const parts = location.hash.replace(/^#\/?/, "").split("/");
    const page = parts[0] || "accounts";
    if (page === "logout") { sessionStorage.clear(); location.hash = "#/login"; return; }
    if (!token() || page === "login") { loginPage(); return; }
    document.getElementById("nav").hidden = false;
    try {
      const me = await api("/v1/whoami");
      document.getElementById("who").textContent = (me.user || me.name || "") + " (" + String(me.role || "").replace("TOKEN_ROLE_", "").toLowerCase() + ")";
      document.getElementById("nav-admin").hidden = !/ADMIN|OPERATOR/.test(String(me.role || ""));
      switch (page) {
        case "accounts": await accountsPage(); poll = setTimeout(route, 10000); break;
        case "jobs": await jobsPage(parts[1] ? decodeURIComponent(parts[1]) : ""); break;
        case "job": await jobPage(parts[1]); break;
        case "nodes": await nodesPage(); break;
        case "book": await bookPage(); break;
        case "admin": await adminPage(); break;
        default: throw new Error("no page " + page);
      }
      main.dataset.page = page;
    } catch (e) {
      errorPage(e);
      main.dataset.page = "error";
    }
    showStale();
  }

  window.addEventListener("hashchange", route);
  route();
})();
