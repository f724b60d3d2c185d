// ticketfair pages: waiting room, seat selection, order. Plain JavaScript,
// same-origin requests only (the edge proxies the services).
"use strict";
(function () {
  const m = location.pathname.match(/^\/sale\/(\d{1,18})(?:\/|$)/);
  if (!m) return;
  const eventId = m[1];
  const base = "/sale/" + eventId + "/";
  const K = {
    identity: "tf.identity",
    queue: "tf.queue." + eventId,
    access: "tf.access." + eventId,
    hold: "tf.hold." + eventId,
  };
  const store = {
    get(k) { try { return JSON.parse(localStorage.getItem(k)); } catch (e) { return null; } },
    set(k, v) { localStorage.setItem(k, JSON.stringify(v)); },
    del(k) { localStorage.removeItem(k); },
  };
  const $ = (id) => document.getElementById(id);
  const nf = new Intl.NumberFormat();
  const show = (el, on) => { el.hidden = !on; };
  const text = (el, s) => { el.textContent = s; };

  async function api(method, path, opts) {
    opts = opts || {};
    const headers = Object.assign({ Accept: "application/json" }, opts.headers || {});
    let body;
    if (opts.body !== undefined) {
      headers["Content-Type"] = "application/json";
      body = JSON.stringify(opts.body);
    }
    let res;
    try {
      res = await fetch(path, { method, headers, body, cache: opts.cache || "no-store", credentials: "same-origin" });
    } catch (e) {
      return { status: 0, data: { error: { code: "network", message: "The connection failed; trying again." } }, headers: new Headers() };
    }
    let data = null;
    try { data = await res.json(); } catch (e) { /* not JSON */ }
    return { status: res.status, data: data || {}, headers: res.headers };
  }
  const errMsg = (r) => (r.data && r.data.error && r.data.error.message) || "Unexpected answer from the server (" + r.status + ").";
  const errCode = (r) => (r.data && r.data.error && r.data.error.code) || "";

  // seconds the server asks us to wait: Retry-After, else the body's hint.
  function advised(r, fallback) {
    const h = parseInt(r.headers.get("Retry-After") || "", 10);
    if (h > 0) return h;
    const b = r.data && r.data.pollAfterSeconds;
    if (b > 0) return b;
    return fallback;
  }

  function mmss(ms) {
    if (ms < 0) ms = 0;
    const s = Math.ceil(ms / 1000);
    const h = Math.floor(s / 3600), mm = Math.floor((s % 3600) / 60), ss = s % 60;
    const two = (n) => String(n).padStart(2, "0");
    return (h > 0 ? h + ":" + two(mm) : String(mm)) + ":" + two(ss);
  }
  function aboutWait(sec) {
    if (!(sec >= 0)) return "";
    if (sec < 60) return "less than a minute";
    const min = Math.round(sec / 60);
    if (min < 90) return "about " + min + " minute" + (min === 1 ? "" : "s");
    return "about " + Math.round(min / 60) + " hours";
  }

  // The identity token. In the local sale the edge's simulated identity
  // provider issues it; a real deployment signs people in elsewhere.
  async function identity(fresh) {
    const id = store.get(K.identity);
    if (!fresh && id && id.token && Date.parse(id.expiresAt) > Date.now() + 60000) return id;
    const r = await api("POST", "/demo/login");
    if (r.status !== 200 && r.status !== 201) {
      throw new Error(r.status === 404 ? "Sign-in is not available on this site." : errMsg(r));
    }
    store.set(K.identity, r.data);
    return r.data;
  }
  const bearer = (id) => ({ Authorization: "Bearer " + id.token });

  // ---- waiting room ----
  async function waitPage() {
    const title = $("status-title"), headline = $("headline"), detail = $("detail");
    const progressWrap = $("progress-wrap"), progress = $("progress"), countdown = $("countdown");
    const updated = $("updated"), errorEl = $("error"), rejoin = $("rejoin");
    const phaseEl = $("phase"), codeForm = $("code-form"), codeInput = $("code");
    // An access code comes from the link (?code=) or the form, shown when
    // a join is refused for want of one.
    let accessCode = new URLSearchParams(location.search).get("code") || "";
    let id, q = store.get(K.queue), timer = null, opensAt = null, tick = null, stopped = false;
    // The per-person endpoint is asked only when the public state says the
    // admission watermark has passed our place, and otherwise every five
    // minutes (queueapi.Heartbeat).
    const HEARTBEAT_MS = 300000;
    let lastPersonal = 0;

    function state(s, h, d) {
      title.dataset.state = s;
      text(title, {
        waiting: "You are in the queue", prequeue: "You are in the pre-queue", admitted: "It is your turn",
        paused: "The sale is paused", sold_out: "Sold out", expired: "Your place has expired",
        closed: "The sale has closed", loading: "Finding your place…", error: "Something went wrong",
      }[s] || s);
      text(headline, h);
      text(detail, d || "");
    }
    function fail(msg) { text(errorEl, msg); show(errorEl, !!msg); }
    function schedule(sec) {
      clearTimeout(timer);
      if (!stopped) timer = setTimeout(watch, sec * 1000);
    }
    function runCountdown() {
      clearInterval(tick);
      if (!opensAt) { show(countdown, false); return; }
      const draw = () => {
        const left = opensAt - Date.now();
        text(countdown, left > 0 ? "Sales open in " + mmss(left) : "Sales are opening…");
      };
      draw();
      show(countdown, true);
      tick = setInterval(draw, 1000);
    }

    // showPhase names the sale phase and the queue of the place, when the
    // sale has phases.
    function showPhase(phase, queue) {
      const label = { general: "general sale" }[queue] || queue;
      text(phaseEl, phase ? "Phase: " + phase + (queue ? " · queue: " + label : "") : "");
      show(phaseEl, !!phase);
    }
    function render(d) {
      fail("");
      if (d.phase || (q && q.phase)) showPhase(d.phase || q.phase, d.queue || (q && q.queue));
      text(updated, "Last updated " + new Date().toLocaleTimeString());
      if (d.salesOpenAt) opensAt = Date.parse(d.salesOpenAt) || opensAt;
      const pre = d.status === "waiting" && (d.preQueue === true || d.salesOpen === false ||
        (opensAt && opensAt > Date.now()));
      show(progressWrap, d.status === "waiting" && !pre);
      if (!pre) { opensAt = null; }
      runCountdown();
      switch (d.status) {
        case "waiting": {
          if (pre) {
            state("prequeue", "Sales open soon.", "You are in the pre-queue; places are drawn at random when sales open, so there is no need to hurry or to reload.");
            break;
          }
          const ahead = Math.max(0, d.ahead | 0);
          if (q && !(q.firstAhead >= ahead)) { q.firstAhead = ahead; store.set(K.queue, q); }
          const first = (q && q.firstAhead) || ahead;
          const pct = first > 0 ? Math.round(100 * (first - ahead) / first) : 100;
          progress.value = pct;
          text(progress, pct + "%");
          state("waiting", ahead === 0 ? "You are at the front." : "About " + nf.format(ahead) + (ahead === 1 ? " person" : " people") + " ahead of you.",
            d.estimatedWaitSeconds >= 0 ? "Estimated wait: " + aboutWait(d.estimatedWaitSeconds) + "." : "");
          break;
        }
        case "admitted":
          state("admitted", "It is your turn. Taking you to seat selection…");
          break;
        case "paused":
          state("paused", "Nobody is being let in right now.", "You keep your place. This page continues by itself as soon as the sale resumes.");
          break;
        case "sold_out":
          state("sold_out", "All tickets have been sold.", "We are sorry: there are no seats left for this event.");
          break;
        case "expired":
          state("expired", "Your turn has ended: it was not claimed in time, a hold ran out unpaid, or its time was up.", "You can join the queue again; you will be placed at the end.");
          break;
        case "closed":
          state("closed", "This sale has closed.");
          break;
        default:
          state(d.status || "waiting", "Status: " + d.status);
      }
      const terminal = d.status === "sold_out" || d.status === "expired" || d.status === "closed";
      show(rejoin, d.status === "expired");
      if (terminal) { stopped = true; clearTimeout(timer); }
    }

    // A sale may ask for a proof of work at join (403 pow_required): the
    // page fetches a challenge and solves it in a Web Worker (pow.js), and
    // the next join carries the solution, once.
    let powSolution = null, powTries = 0;
    async function solvePow() {
      const c = await api("GET", "/events/" + eventId + "/queue/challenge", { headers: bearer(id) });
      if (c.status !== 200) return false;
      state("loading", "Checking your browser…", "A short computation the sale asks of every visitor; it takes a few seconds at most.");
      const res = await new Promise((resolve) => {
        const w = new Worker(document.body.dataset.powWorker);
        w.onmessage = (e) => { w.terminate(); resolve(e.data || {}); };
        w.onerror = () => { w.terminate(); resolve({ error: "The browser check could not run." }); };
        w.postMessage({ challenge: c.data.challenge, difficulty: c.data.difficulty });
      });
      if (res.error) { fail(res.error); return false; }
      powSolution = { challenge: c.data.challenge, nonce: res.nonce };
      return true;
    }

    async function join() {
      const body = {};
      if (powSolution) { body.pow = powSolution; powSolution = null; }
      if (accessCode) body.code = accessCode;
      const r = await api("POST", "/events/" + eventId + "/queue", { headers: bearer(id), body: Object.keys(body).length ? body : undefined });
      if (r.status === 403 && /^pow_/.test(errCode(r)) && powTries < 3) {
        powTries++;
        if (await solvePow()) return join();
        return schedule(advised(r, 5));
      }
      if (r.status === 401) { id = await identity(true); return schedule(1); }
      const refusal = errCode(r);
      if (/^(code_|not_eligible|phase_not_open)/.test(refusal || "")) {
        // Not now, or not without a (valid) code: say so and offer the form.
        state("error", errMsg(r));
        show(codeForm, true);
        stopped = true;
        return;
      }
      if (r.status !== 200 && r.status !== 201) {
        if (r.status === 404) { state("error", "There is no sale with this number."); stopped = true; return; }
        fail(errMsg(r));
        return schedule(advised(r, 5));
      }
      powTries = 0;
      show(codeForm, false);
      q = { queueId: r.data.queueId, customer: id.customerId, firstAhead: r.data.ahead, place: r.data.place || 0,
        queue: r.data.queue || "", phase: r.data.phase || "" };
      store.set(K.queue, q);
      lastPersonal = Date.now();
      return handle(r);
    }
    // How many wait before place, from the state's sampled [rank, place]
    // points (the queue's own interpolation).
    function aheadOf(samples, place, waiting) {
      if (!samples || samples.length === 0) return 0;
      const i = samples.findIndex((s) => s[1] >= place);
      if (i === 0) return 0;
      if (i < 0) return waiting;
      const lo = samples[i - 1], hi = samples[i];
      if (hi[1] === lo[1]) return hi[0];
      return lo[0] + Math.floor((place - lo[1]) / (hi[1] - lo[1]) * (hi[0] - lo[0]));
    }
    // The queue's own spacing: 2 s near the front, up to 15 s far back.
    function pollAfter(wait) {
      if (wait < 10) return 2;
      if (wait < 60) return 5;
      return Math.min(Math.max(Math.floor(wait / 10), 5), 15);
    }
    // watch reads the public state, which a CDN answers for everyone, and
    // computes our position from it and the place our queueId carries.
    async function watch() {
      if (!q) return join();
      const r = await api("GET", "/events/" + eventId + "/queue/state", { cache: "default" });
      if (r.status !== 200) { fail(errMsg(r)); return schedule(advised(r, 5)); }
      let s = r.data;
      if (s.soldOut) return render({ status: "sold_out" });
      // A sale with phases: our own queue's figures and opening.
      const mine = q.queue && (s.queues || []).find((x) => x.name === q.queue);
      if (mine) {
        s = { ...s, salesOpen: mine.open, salesOpenAt: mine.opensAt, watermark: mine.watermark, waiting: mine.waiting,
          samples: mine.samples, admissionRate: mine.admissionRate };
      }
      if (!s.salesOpen) {
        render({ status: "waiting", salesOpen: false, salesOpenAt: s.salesOpenAt });
        const left = (Date.parse(s.salesOpenAt) - Date.now()) / 1000;
        return schedule(Math.min(Math.max(left || 1, 1), 15));
      }
      if (!q.place || s.watermark >= q.place || Date.now() - lastPersonal >= HEARTBEAT_MS) return poll();
      const ahead = aheadOf(s.samples, q.place, s.waiting);
      const wait = ahead / Math.max(s.admissionRate, 0.1);
      render({ status: s.paused ? "paused" : "waiting", salesOpen: true, ahead, estimatedWaitSeconds: Math.floor(wait) });
      schedule(pollAfter(wait));
    }
    async function poll() {
      if (!q) return join();
      lastPersonal = Date.now();
      const r = await api("GET", "/events/" + eventId + "/queue/" + encodeURIComponent(q.queueId), { headers: bearer(id) });
      if (r.status === 404 || r.status === 400) { store.del(K.queue); q = null; return join(); }
      if (r.status === 401) { id = await identity(true); store.del(K.queue); q = null; return schedule(1); }
      if (r.status !== 200) { fail(errMsg(r)); return schedule(advised(r, 5)); }
      return handle(r);
    }
    function handle(r) {
      const d = r.data;
      if (q && d.place && q.place !== d.place) { q.place = d.place; store.set(K.queue, q); }
      render(d);
      if (d.status === "admitted" && d.accessToken) {
        store.set(K.access, { token: d.accessToken, expiresAt: d.accessTokenExpiresAt, queueId: q.queueId });
        stopped = true;
        location.assign(base + "seats");
        return;
      }
      if (d.status === "admitted") {
        // another tab holds the token; follow it if we have it.
        const a = store.get(K.access);
        if (a && a.queueId === q.queueId) { stopped = true; location.assign(base + "seats"); return; }
      }
      schedule(advised(r, 5));
    }

    codeForm.addEventListener("submit", (e) => {
      e.preventDefault();
      accessCode = codeInput.value.trim();
      stopped = false;
      state("loading", "Joining the queue…");
      join();
    });
    rejoin.addEventListener("click", () => {
      store.del(K.queue); q = null; stopped = false; show(rejoin, false);
      state("loading", "Joining the queue again…");
      join();
    });
    // A second tab that gets admitted first takes this one along.
    window.addEventListener("storage", (e) => {
      if (e.key === K.access && e.newValue) { stopped = true; location.assign(base + "seats"); }
    });

    try { id = await identity(false); } catch (e) { state("error", e.message); return; }
    if (q && q.customer !== id.customerId) { store.del(K.queue); q = null; }
    // The pre-queue countdown appears when the queue's answers carry
    // salesOpenAt.
    if (q) poll(); else join();
  }

  // ---- seat selection ----
  const MAX_SEATS = 4;
  // The SVG namespace, as the HTML parser gives it: the pages carry no
  // absolute URLs (TestAssetsAndCaching checks), not even a namespace's.
  const SVGNS = (() => { const t = document.createElement("template"); t.innerHTML = "<svg></svg>"; return t.content.firstChild.namespaceURI; })();
  // Cents of a price "89.50", and back: sums without floating point.
  const cents = (p) => { const [w, f] = String(p || "0").split("."); return parseInt(w, 10) * 100 + parseInt(((f || "") + "00").slice(0, 2), 10); };
  const money = (c) => Math.floor(c / 100) + "." + String(c % 100).padStart(2, "0");
  async function seatsPage() {
    const msg = $("message"), turn = $("turn"), picker = $("picker"), sectionsEl = $("sections");
    const mapEl = $("seatmap"), drawnEl = $("drawn"), asof = $("asof"), choice = $("choice"), holdBtn = $("hold");
    const held = $("held"), statusEl = $("status"), offer = $("offer");
    const form = $("best-form"), qtyEl = $("quantity"), catsEl = $("categories"), togetherEl = $("together");
    const wheelEl = $("wheelchair"), wheelField = $("wheelchair-field"), findBtn = $("find"), listBtn = $("as-list");
    const selected = new Set();
    let section = null, currency = "", refreshTimer = null, lastMap = null, split = null, builtFor = null;
    // The venue's layout (GET /events/{id}/venue): static, so fetched once
    // and cached. Rows are found by the seat map's row number and by name.
    let venue = null;
    const rowAt = new Map(), rowNamed = new Map(), priceOf = {};
    const access = store.get(K.access);

    function message(s) { text(msg, s); show(msg, !!s); }
    function announce(s) { text(statusEl, ""); setTimeout(() => text(statusEl, s), 50); }
    function goBack(why) {
      message(why);
      show(picker, false);
      const a = document.createElement("a");
      a.href = base; a.textContent = "Back to the waiting room";
      const p = document.createElement("p"); p.appendChild(a);
      msg.after(p);
    }
    if (!access || !access.token || Date.parse(access.expiresAt) <= Date.now()) {
      goBack("It is not your turn yet, or your turn has ended.");
      return;
    }
    const qt = { "X-Queue-Token": access.token };
    const turnEnds = Date.parse(access.expiresAt);
    const drawTurn = () => text(turn, "Your turn ends in " + mmss(turnEnds - Date.now()) + ".");
    drawTurn();
    setInterval(drawTurn, 1000);

    async function loadVenue() {
      const r = await api("GET", "/events/" + eventId + "/venue", { cache: "default" });
      if (r.status !== 200) { message(errMsg(r)); return false; }
      venue = r.data;
      currency = venue.currency || "";
      for (const c of venue.categories || []) priceOf[c.name] = c.price;
      for (const s of venue.sections || []) {
        for (const row of s.rows || []) {
          rowAt.set(s.name + "/" + row.number, { sec: s, row });
          rowNamed.set(s.name + "/" + row.name, { sec: s, row });
        }
      }
      return true;
    }
    const seated = () => (venue.sections || []).filter((s) => s.kind !== "standing");
    const standing = () => (venue.sections || []).filter((s) => s.kind === "standing");

    // A place from its id: "<section>-<row>-<seat>", or a standing area's
    // "<area>-<n>".
    function placeOf(id) {
      const p = String(id).split("-");
      if (p.length === 2) return { id, section: p[0], kind: "standing", category: ((venue.sections || []).find((s) => s.name === p[0]) || {}).category };
      const at = rowNamed.get(p[0] + "/" + p[1]);
      return { id, section: p[0], row: p[1], seat: parseInt(p[2], 10), kind: "seat", category: at ? at.row.category : "" };
    }
    function placeText(p) {
      if (p.kind === "standing") return "Standing, " + p.section;
      return "Section " + p.section + ", row " + p.row + ", seat " + p.seat + (p.category ? ", category " + p.category : "");
    }
    const priceText = (p) => (priceOf[p.category] ? priceOf[p.category] + " " + currency : "");
    function placeItem(p) {
      const li = document.createElement("li");
      li.className = "place";
      li.dataset.id = p.id; li.dataset.section = p.section; li.dataset.kind = p.kind;
      li.dataset.category = p.category || "";
      if (p.kind !== "standing") { li.dataset.row = p.row; li.dataset.seat = p.seat; }
      const price = priceText(p);
      li.textContent = placeText(p) + (price ? " · " + price : "") + (p.kind === "standing" ? "" : " (" + p.id + ")");
      return li;
    }

    // ---- best available: how many, which category ----
    function left(n, what) { return n === 0 ? "sold out" : nf.format(n) + " " + what + (n === 1 ? "" : "s") + " left"; }
    // Places left per category (seated rows) and per standing area, from
    // the compact seat map: a standing area is a section of its own.
    function counts(map) {
      const cat = {}, area = {};
      for (const s of map.sections || []) area[s.name] = s.available;
      for (const row of map.rows || []) {
        const at = rowAt.get(row.section + "/" + row.row);
        if (!at) continue;
        let n = 0;
        for (const ch of row.seats) if (ch === "A") n++;
        cat[at.row.category] = (cat[at.row.category] || 0) + n;
      }
      return { cat, area };
    }
    function wants() {
      const out = [];
      const cats = new Set();
      for (const s of seated()) for (const r of s.rows || []) cats.add(r.category);
      for (const c of venue.categories || []) {
        if (cats.has(c.name)) out.push({ value: "c-" + c.name, kind: "category", name: c.name, price: c.price });
      }
      for (const s of standing()) out.push({ value: "s-" + s.name, kind: "standing", name: s.name, price: priceOf[s.category] });
      return out;
    }
    function renderBest(map) {
      const c = counts(map);
      const first = !catsEl.querySelector("input");
      let checked = catsEl.querySelector("input:checked");
      for (const w of wants()) {
        const n = w.kind === "standing" ? (c.area[w.name] || 0) : (c.cat[w.name] || 0);
        const label = (w.kind === "standing" ? "Standing, " + w.name : "Category " + w.name) + " · " +
          (w.price || "") + " " + currency + " · " + left(n, w.kind === "standing" ? "place" : "seat");
        if (first) {
          const lab = document.createElement("label");
          const input = document.createElement("input");
          input.type = "radio"; input.name = "want"; input.value = w.value; input.id = "want-" + w.value;
          input.addEventListener("change", wantChanged);
          const span = document.createElement("span");
          lab.append(input, span);
          catsEl.appendChild(lab);
          if (!checked && n > 0) { input.checked = true; checked = input; }
        }
        const input = $("want-" + w.value);
        if (input) text(input.nextSibling, label);
      }
      if (first) {
        if (!checked) { const i = catsEl.querySelector("input"); if (i) i.checked = true; }
        wantChanged();
      }
    }
    function wantChanged() {
      const w = catsEl.querySelector("input:checked");
      const isStanding = !!w && w.value.startsWith("s-");
      show($("seated-options"), !isStanding);
      drawWheelchair();
    }
    function drawWheelchair() {
      // Offered only where the venue has wheelchair places.
      const any = seated().some((s) => (s.rows || []).some((r) => (r.wheelchair || []).length > 0));
      show(wheelField, any);
      const q = parseInt(qtyEl.value, 10) || 1, was = parseInt(wheelEl.value || "0", 10);
      wheelEl.textContent = "";
      for (let k = 0; 2 * k <= q; k++) {
        const o = document.createElement("option");
        o.value = String(k);
        o.textContent = k === 0 ? "None" : k + " wheelchair place" + (k === 1 ? "" : "s") + " with companion seat" + (k === 1 ? "" : "s");
        o.selected = k === Math.min(was, Math.floor(q / 2));
        wheelEl.appendChild(o);
      }
    }
    for (let n = 1; n <= MAX_SEATS; n++) {
      const o = document.createElement("option");
      o.value = String(n); o.textContent = n + (n === 1 ? " ticket" : " tickets");
      o.selected = n === 2;
      qtyEl.appendChild(o);
    }
    qtyEl.addEventListener("change", drawWheelchair);

    async function askHold(body, what) {
      const r = await api("POST", "/events/" + eventId + "/holds", { headers: qt, body });
      if (r.status === 201 || r.status === 200) {
        r.data.asked = true;
        store.set(K.hold, r.data);
        showHold(r.data);
        return true;
      }
      if (r.status === 409 && errCode(r) === "no_seats_together") {
        showOffer(r.data.error.split || []);
        return false;
      }
      if (r.status === 409 && errCode(r) === "not_enough_places") {
        const n = r.data.error.available | 0;
        message(n === 0 ? "Sorry, " + what + " is sold out. Nothing was held; please choose another."
          : "Sorry, only " + n + " left in " + what + ". Nothing was held; ask for fewer or choose another.");
        refresh();
        return false;
      }
      if (r.status === 409 && errCode(r) === "seats_unavailable") {
        message("Sorry, those seats were just taken. Nothing was held; please ask again.");
        refresh();
        return false;
      }
      if (r.status === 401 || (r.status === 403 && errCode(r) !== "section_not_in_phase")) {
        goBack(errMsg(r) + " Your turn may have ended.");
        return false;
      }
      message(errMsg(r));
      return false;
    }
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const w = catsEl.querySelector("input:checked");
      if (!w) { message("Choose a category first."); return; }
      const q = parseInt(qtyEl.value, 10);
      const name = w.value.slice(2);
      const body = { quantity: q };
      let what;
      if (w.value.startsWith("s-")) {
        body.section = name;
        what = "standing, " + name;
      } else {
        body.category = name;
        body.together = togetherEl.checked;
        const k = parseInt(wheelEl.value || "0", 10);
        if (!wheelField.hidden && k > 0) body.wheelchair = k;
        what = "category " + name;
      }
      message("");
      show(offer, false);
      findBtn.disabled = true;
      text(findBtn, "Finding seats…");
      await askHold(body, what);
      findBtn.disabled = false;
      text(findBtn, "Find the best seats");
    });

    // No block together: the best split, to take or leave.
    function showOffer(ids) {
      split = ids;
      const list = $("offer-places");
      list.textContent = "";
      for (const id of ids) list.appendChild(placeItem(placeOf(id)));
      show(offer, true);
      $("offer-title").focus();
      announce("No " + ids.length + " seats are free together. " + ids.length + " seats apart are offered.");
    }
    $("take-split").addEventListener("click", async () => {
      if (!split || split.length === 0) return;
      $("take-split").disabled = true;
      const ok = await askHold({ seats: split }, "these seats");
      $("take-split").disabled = false;
      if (!ok) show(offer, false);
      split = null;
    });
    $("offer-back").addEventListener("click", () => { show(offer, false); split = null; qtyEl.focus(); });

    // ---- picking seats on the map ----
    function sectionPrices(s) {
      const ps = [...new Set((s.rows || []).map((r) => priceOf[r.category]).filter(Boolean))].sort((a, b) => cents(a) - cents(b));
      if (ps.length === 0) return "";
      return (ps.length > 1 ? "from " : "") + ps[0] + " " + currency;
    }
    function renderSections(map) {
      const avail = {};
      for (const s of map.sections || []) avail[s.name] = s.available;
      for (const s of seated()) {
        let input = sectionsEl.querySelector("input[value='" + s.name + "']");
        if (!input) {
          const label = document.createElement("label");
          input = document.createElement("input");
          input.type = "radio"; input.name = "section"; input.value = s.name;
          input.addEventListener("change", () => { if (input.checked) chooseSection(s.name); });
          label.append(input, document.createElement("span"));
          sectionsEl.appendChild(label);
        }
        input.checked = s.name === section;
        text(input.nextSibling, "Section " + s.name + " · " + sectionPrices(s) + " · " + nf.format(avail[s.name] || 0) + " available");
      }
    }

    // Seats a hold found taken: a cached map older than that answer (a CDN
    // or the service may serve one up to a refresh old) must not offer
    // them again. Forgotten after 30 s, whatever the clocks say.
    const takenAt = new Map();
    const codes = { A: "AVAILABLE", H: "HELD", S: "SOLD" };
    // statesOf: seat id → status of the section's seats in the compact map
    // (one character per seat number from first on).
    function statesOf(map, name) {
      const st = new Map();
      for (const row of map.rows || []) {
        if (row.section !== name) continue;
        const at = rowAt.get(row.section + "/" + row.row);
        if (!at) continue;
        for (let i = 0; i < row.seats.length; i++) {
          const c = codes[row.seats[i]];
          if (c) st.set(name + "-" + at.row.name + "-" + (row.first + i), c);
        }
      }
      return st;
    }
    // The seats of section s, left to right per row: position (counting a
    // gap as one), number, and what the venue says of them.
    function seatsOfSection(s) {
      const rows = [];
      for (const row of s.rows || []) {
        const seats = [];
        let gaps = 0;
        row.seats.forEach((n, i) => {
          if (i > 0 && (row.gaps || []).includes(i)) gaps++;
          const has = (k) => (row[k] || []).includes(n);
          seats.push({ id: s.name + "-" + row.name + "-" + n, section: s.name, row: row.name, seat: n, kind: "seat",
            category: row.category, at: i + gaps, gapBefore: i > 0 && (row.gaps || []).includes(i),
            blocked: has("blocked"), wheelchair: has("wheelchair"), companion: has("companion"),
            restricted: has("restrictedView"), aisle: has("aisle") });
        });
        rows.push({ row, seats });
      }
      return rows;
    }
    function seatName(p, free) {
      const extra = [p.wheelchair && "wheelchair place", p.companion && "companion seat", p.restricted && "restricted view"].filter(Boolean);
      return placeText(p) + ", " + priceText(p) + (extra.length ? ", " + extra.join(", ") : "") + ", " + (free ? "available" : "taken");
    }
    const drawable = (s) => s.x != null && s.y != null && (s.rows || []).length > 0 && s.rows.every((r) => r.x != null && r.y != null);

    // build draws section s: a checkbox per seat grouped per row (the
    // list, and the map of a section without coordinates), and an SVG
    // from the venue's coordinates when it has them.
    function build(s) {
      builtFor = s.name;
      mapEl.textContent = "";
      drawnEl.textContent = "";
      const rows = seatsOfSection(s);
      for (const { row, seats } of rows) {
        const fs = document.createElement("fieldset");
        fs.className = "row";
        const lg = document.createElement("legend");
        lg.textContent = "Row " + row.name;
        fs.appendChild(lg);
        for (const p of seats) {
          if (p.gapBefore) { const g = document.createElement("span"); g.className = "gap"; g.setAttribute("aria-hidden", "true"); fs.appendChild(g); }
          if (p.blocked) continue;
          const lab = document.createElement("label");
          lab.className = "seat" + (p.wheelchair ? " wc" : "") + (p.restricted ? " rv" : "");
          const input = document.createElement("input");
          input.type = "checkbox"; input.value = p.id; input.id = "seat-" + p.id;
          input.addEventListener("change", () => toggle(p.id, input.checked));
          const span = document.createElement("span");
          span.textContent = p.seat;
          lab.append(input, span);
          fs.appendChild(lab);
        }
        mapEl.appendChild(fs);
      }
      const svg = drawable(s) ? drawSVG(s, rows) : null;
      show($("view-toggle"), !!svg);
      listView(!svg);
    }
    function listView(on) {
      show(mapEl, on);
      show(drawnEl, !on && drawnEl.firstChild !== null);
      listBtn.setAttribute("aria-expanded", on ? "true" : "false");
      text(listBtn, on ? "Show the seat map" : "Show the seats as a list");
    }
    listBtn.addEventListener("click", () => listView(mapEl.hidden));

    // drawSVG places the seats at the venue's coordinates, scaled so that
    // neighbours are 30 px apart: every seat a target of at least 26 px.
    function drawSVG(s, rows) {
      let step = Infinity;
      const pts = [];
      for (const { row, seats } of rows) {
        const dx = row.dx != null ? row.dx : 1, dy = row.dy != null ? row.dy : 0;
        const len = Math.hypot(dx, dy);
        if (len > 0) step = Math.min(step, len);
        seats.forEach((p, i) => pts.push({ p, x: s.x + row.x + p.at * dx, y: s.y + row.y + p.at * dy, first: i === 0 ? row.name : "" }));
      }
      if (!pts.length || !isFinite(step)) return null;
      // Room on the left for the row names.
      const scale = 30 / step, pad = 16, padL = 40;
      const minX = Math.min(...pts.map((q) => q.x)), minY = Math.min(...pts.map((q) => q.y));
      const w = Math.ceil((Math.max(...pts.map((q) => q.x)) - minX) * scale + pad + padL);
      const h = Math.ceil((Math.max(...pts.map((q) => q.y)) - minY) * scale + 2 * pad);
      const svg = document.createElementNS(SVGNS, "svg");
      svg.setAttribute("width", w); svg.setAttribute("height", h);
      svg.setAttribute("viewBox", "0 0 " + w + " " + h);
      svg.setAttribute("role", "group");
      svg.setAttribute("aria-label", "Seat map of section " + s.name);
      for (const { p, x, y, first } of pts) {
        const cx = (x - minX) * scale + padL, cy = (y - minY) * scale + pad;
        if (first) {
          // The seats' names say their row: the label is for the eye.
          const t = document.createElementNS(SVGNS, "text");
          t.setAttribute("x", cx - 18); t.setAttribute("y", cy + 4);
          t.setAttribute("text-anchor", "end");
          t.setAttribute("class", "row-label");
          t.setAttribute("aria-hidden", "true");
          t.textContent = first;
          svg.appendChild(t);
        }
        const g = document.createElementNS(SVGNS, "g");
        const c = document.createElementNS(SVGNS, "circle");
        c.setAttribute("cx", cx); c.setAttribute("cy", cy); c.setAttribute("r", 13);
        g.appendChild(c);
        if (p.blocked) {
          g.setAttribute("class", "svg-seat blocked");
          g.setAttribute("aria-hidden", "true");
        } else {
          g.setAttribute("class", "svg-seat" + (p.wheelchair ? " wc" : ""));
          g.setAttribute("role", "checkbox");
          g.setAttribute("tabindex", "0");
          g.setAttribute("aria-checked", "false");
          g.id = "svg-" + p.id;
          g.dataset.id = p.id;
          const t = document.createElementNS(SVGNS, "text");
          t.setAttribute("x", cx); t.setAttribute("y", cy + 4);
          t.setAttribute("text-anchor", "middle");
          t.setAttribute("aria-hidden", "true");
          t.textContent = p.seat;
          g.appendChild(t);
          const flip = () => { if (g.getAttribute("aria-disabled") !== "true") toggle(p.id, !selected.has(p.id)); };
          g.addEventListener("click", flip);
          g.addEventListener("keydown", (e) => { if (e.key === " " || e.key === "Enter") { e.preventDefault(); flip(); } });
        }
        svg.appendChild(g);
      }
      drawnEl.appendChild(svg);
      return svg;
    }

    // paint shows each seat's state: a checkbox disabled when taken, the
    // drawn seat's aria-checked, aria-disabled and colour.
    function paint(map) {
      const s = seated().find((x) => x.name === section);
      if (!s) return;
      if (builtFor !== s.name) build(s);
      const st = statesOf(map, s.name);
      const asOfMs = Date.parse(map.asOf || "") || 0;
      for (const [id, at] of takenAt) if (Date.now() - at > 30000) takenAt.delete(id);
      const lost = [];
      for (const { seats } of seatsOfSection(s)) {
        for (const p of seats) {
          if (p.blocked) continue;
          const free = st.get(p.id) === "AVAILABLE" && !(takenAt.has(p.id) && asOfMs <= takenAt.get(p.id));
          if (!free && selected.has(p.id)) { selected.delete(p.id); lost.push(p.id); }
          const name = seatName(p, free);
          const input = $("seat-" + p.id);
          if (input) {
            input.disabled = !free;
            input.checked = selected.has(p.id);
            input.title = free ? "available" : "taken";
            input.setAttribute("aria-label", name);
          }
          const g = $("svg-" + p.id);
          if (g) {
            g.setAttribute("aria-label", name);
            g.setAttribute("aria-checked", selected.has(p.id) ? "true" : "false");
            g.setAttribute("aria-disabled", free ? "false" : "true");
            g.setAttribute("tabindex", free ? "0" : "-1");
            g.classList.toggle("taken", !free);
            g.classList.toggle("mine", selected.has(p.id));
          }
        }
      }
      if (lost.length) message("Just taken by someone else: " + lost.join(", ") + ". Please pick again.");
      updateChoice();
    }

    function toggle(id, on) {
      if (on && !selected.has(id) && selected.size >= MAX_SEATS) {
        message("You can choose at most " + MAX_SEATS + " seats.");
        on = false;
      } else message("");
      if (on) selected.add(id); else selected.delete(id);
      const input = $("seat-" + id);
      if (input) input.checked = on;
      const g = $("svg-" + id);
      if (g) { g.setAttribute("aria-checked", on ? "true" : "false"); g.classList.toggle("mine", on); }
      updateChoice();
    }
    function updateChoice() {
      const ids = [...selected].sort();
      if (ids.length === 0) text(choice, "No seats chosen yet.");
      else {
        const places = ids.map(placeOf);
        const total = places.reduce((sum, p) => sum + cents(priceOf[p.category]), 0);
        text(choice, places.map(placeText).join("; ") + " — " + ids.length + (ids.length === 1 ? " seat, " : " seats, ") + money(total) + " " + currency);
      }
      holdBtn.disabled = ids.length === 0;
      text(holdBtn, ids.length > 1 ? "Hold these " + ids.length + " seats" : ids.length === 1 ? "Hold this seat" : "Hold these seats");
      // Kept in view only while there is a choice to hold: it would cover
      // the form above otherwise.
      choice.closest("section").classList.toggle("sticky", ids.length > 0);
    }

    function chooseSection(name) {
      if (name !== section) { selected.clear(); builtFor = null; }
      section = name;
      message("");
      if (lastMap) paint(lastMap);
    }

    // refresh reads the whole compact map: the categories' places left and
    // the current section's seats come from the same answer.
    async function refresh() {
      const r = await api("GET", "/events/" + eventId + "/seats?format=rows", { cache: "default" });
      if (r.status !== 200) { message(errMsg(r)); return false; }
      lastMap = r.data;
      renderBest(r.data);
      renderSections(r.data);
      paint(r.data);
      text(asof, "Availability as of " + new Date(r.data.asOf || Date.now()).toLocaleTimeString() + "; refreshed every few seconds.");
      return true;
    }

    holdBtn.addEventListener("click", async () => {
      const seats = [...selected].sort();
      if (seats.length === 0) return;
      holdBtn.disabled = true;
      const r = await api("POST", "/events/" + eventId + "/holds", { headers: qt, body: { seats } });
      if (r.status === 201 || r.status === 200) {
        store.set(K.hold, r.data);
        selected.clear();
        showHold(r.data);
        return;
      }
      if (r.status === 409 && errCode(r) === "seats_unavailable") {
        const gone = (r.data.error.unavailable || []);
        for (const s of gone) {
          takenAt.set(s, Date.now());
          selected.delete(s);
          const i = $("seat-" + s);
          if (i) { i.checked = false; i.disabled = true; }
          const g = $("svg-" + s);
          if (g) { g.setAttribute("aria-checked", "false"); g.setAttribute("aria-disabled", "true"); g.classList.add("taken"); g.classList.remove("mine"); }
        }
        message("Sorry, " + (gone.length === 1 ? "seat " + gone[0] + " was" : "seats " + gone.join(", ") + " were") + " just taken. Nothing was held; please pick again.");
        updateChoice();
        refresh();
        return;
      }
      if (r.status === 401 || r.status === 403) {
        goBack(errMsg(r) + " Your turn may have ended.");
        return;
      }
      message(errMsg(r));
      updateChoice();
    });

    let holdTick = null;
    function showHold(h) {
      clearInterval(refreshTimer);
      show(picker, false);
      show(offer, false);
      show(held, true);
      const places = (h.places && h.places.length) ? h.places : (h.seats || []).map(placeOf);
      const list = $("held-places");
      list.textContent = "";
      for (const p of places) list.appendChild(placeItem(p));
      text($("held-title"), h.asked ? "We found these for you" : "Seats held for you");
      text($("held-amount"), "Total " + h.amount + " " + h.currency);
      const pay = $("pay");
      pay.textContent = (h.asked ? "Accept and pay " : "Pay ") + h.amount + " " + h.currency;
      pay.href = "/demo/pay/" + encodeURIComponent(h.orderId) + "?amount=" + encodeURIComponent(h.amount) +
        "&currency=" + encodeURIComponent(h.currency) + "&event=" + eventId +
        (h.payBy ? "&payBy=" + encodeURIComponent(h.payBy) : "");
      text($("release"), h.asked ? "Try again" : "Release seats");
      const ends = Date.parse(h.expiresAt);
      const draw = () => {
        const left = ends - Date.now();
        if (left <= 0) {
          clearInterval(holdTick);
          store.del(K.hold);
          show(held, false);
          // An unpaid hold that runs out ends the turn (booking releases the
          // session), so the slot goes to the next person in the queue.
          goBack("Your hold expired and the seats were released, which ends your turn.");
          return;
        }
        text($("held-countdown"), "Held for you for another " + mmss(left) + ".");
      };
      draw();
      clearInterval(holdTick);
      holdTick = setInterval(draw, 1000);
      announce((h.asked ? "Found and held: " : "Held: ") + places.map(placeText).join("; ") + ". Total " + h.amount + " " + h.currency + ".");
      pay.focus();
    }

    $("release").addEventListener("click", async () => {
      const h = store.get(K.hold);
      if (!h) return;
      const r = await api("DELETE", "/events/" + eventId + "/holds/" + encodeURIComponent(h.orderId), { headers: qt });
      if (r.status !== 200 && r.status !== 204 && r.status !== 404) { message(errMsg(r)); return; }
      clearInterval(holdTick);
      store.del(K.hold);
      show(held, false);
      message(h.asked ? "Those seats were released. Change your choice if you like, and find seats again." : "Your seats were released.");
      await startPicker();
      if (h.asked) qtyEl.focus();
    });

    async function startPicker() {
      if (!venue && !(await loadVenue())) { setTimeout(startPicker, 3000); return; }
      if (!(await refresh())) { setTimeout(startPicker, 3000); return; }
      if (!section) {
        const avail = {};
        for (const s of lastMap.sections || []) avail[s.name] = s.available;
        const s = seated().find((x) => avail[x.name] > 0) || seated()[0];
        if (s) { section = s.name; renderSections(lastMap); paint(lastMap); }
      }
      show(picker, true);
      text($("limit"), "Choose up to " + MAX_SEATS + " seats. Use Tab and Space to choose with the keyboard.");
      clearInterval(refreshTimer);
      refreshTimer = setInterval(refresh, 5000);
    }

    const h = store.get(K.hold);
    if (h && Date.parse(h.expiresAt) > Date.now()) {
      await loadVenue(); // for the places' categories; the hold shows without them
      showHold(h);
    } else { store.del(K.hold); startPicker(); }
  }

  // ---- order and tickets ----
  async function orderPage() {
    const om = location.pathname.match(/\/orders\/([^/]{1,128})$/);
    const orderId = om ? decodeURIComponent(om[1]) : "";
    const statusEl = $("order-status"), detail = $("order-detail"), errorEl = $("error");
    text($("order-id"), orderId);
    $("back").href = base;
    let id;
    try { id = await identity(false); } catch (e) { text(errorEl, e.message); show(errorEl, true); return; }
    const access = store.get(K.access);
    const headers = Object.assign({}, bearer(id), access && access.token ? { "X-Queue-Token": access.token } : {});

    async function loadOrder() {
      const r = await api("GET", "/orders/" + encodeURIComponent(orderId), { headers });
      if (r.status !== 200) {
        text(statusEl, r.status === 404 ? "We could not find this order." : "Could not load the order.");
        text(errorEl, errMsg(r)); show(errorEl, r.status !== 404);
        if (r.status >= 500 || r.status === 0) setTimeout(loadOrder, advised(r, 3) * 1000);
        return;
      }
      show(errorEl, false);
      const o = r.data;
      text(detail, "Seats " + (o.seats || []).join(", ") + " · " + o.amount + " " + o.currency);
      switch (o.status) {
        case "PAID":
          statusEl.className = "big ok";
          text(statusEl, "Paid. Thank you!");
          store.del(K.hold);
          loadTickets();
          break;
        case "PENDING":
          text(statusEl, "Waiting for the payment to be confirmed…");
          setTimeout(loadOrder, 2000);
          break;
        case "EXPIRED":
          text(statusEl, "This hold expired before it was paid; the seats were released.");
          break;
        case "REFUND_REQUIRED":
          text(statusEl, "The payment arrived after the seats were released; it will be refunded.");
          break;
        case "CANCELLED":
          text(statusEl, "This order was cancelled.");
          break;
        default:
          text(statusEl, "Order status: " + o.status);
      }
    }
    async function loadTickets() {
      const r = await api("GET", "/orders/" + encodeURIComponent(orderId) + "/tickets", { headers: bearer(id) });
      const card = $("tickets-card"), list = $("tickets");
      show(card, true);
      if (r.status !== 200) {
        list.textContent = "";
        const li = document.createElement("li");
        li.textContent = r.status === 404 ? "Your tickets are being issued…" : errMsg(r);
        list.appendChild(li);
        setTimeout(loadTickets, 2000);
        return;
      }
      list.textContent = "";
      for (const t of r.data.tickets || []) {
        const l = seatLabel(t.seatId);
        const li = document.createElement("li");
        li.className = "ticket";
        const h = document.createElement("p");
        h.className = "big";
        h.textContent = l.text;
        const code = document.createElement("code");
        code.className = "code";
        code.textContent = t.code;
        code.setAttribute("aria-label", "Ticket code for seat " + t.seatId);
        // Only an inline PNG: the CSP allows data: images and nothing else
        // from outside the origin. The text stays one tap away, for a gate
        // that types it in.
        if (typeof t.qr === "string" && t.qr.startsWith("data:image/png;base64,")) {
          const img = document.createElement("img");
          img.className = "qr";
          img.src = t.qr;
          img.alt = "QR code of the ticket for " + l.text;
          const more = document.createElement("details");
          const sum = document.createElement("summary");
          sum.textContent = "Show the code as text";
          more.append(sum, code);
          li.append(h, img, more);
        } else {
          li.append(h, code);
        }
        list.appendChild(li);
      }
    }
    // A seat "<section>-<row>-<seat>", or a standing area's "<area>-<n>".
    function seatLabel(id) {
      const p = String(id).split("-");
      return { text: p.length === 2 ? "Standing, " + p[0] : "Section " + p[0] + ", row " + p[1] + ", seat " + p[2] };
    }
    loadOrder();
  }

  const page = document.body.dataset.page;
  if (page === "wait") waitPage();
  else if (page === "seats") seatsPage();
  else if (page === "order") orderPage();
})();
