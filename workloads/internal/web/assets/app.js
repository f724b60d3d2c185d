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
  async function seatsPage() {
    const msg = $("message"), turn = $("turn"), picker = $("picker"), sectionsEl = $("sections");
    const mapEl = $("seatmap"), asof = $("asof"), choice = $("choice"), holdBtn = $("hold");
    const held = $("held");
    const selected = new Set();
    let section = null, sectionInfo = {}, currency = "", refreshTimer = null;
    const access = store.get(K.access);

    function message(s) { text(msg, s); show(msg, !!s); }
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

    function seatLabel(id) {
      const p = id.split("-");
      return { section: p[0], row: p[1], seat: p[2] };
    }
    function updateChoice() {
      const ids = [...selected].sort();
      if (ids.length === 0) text(choice, "No seats chosen yet.");
      else {
        const price = sectionInfo[section] ? sectionInfo[section].price : "";
        text(choice, ids.map((s) => { const l = seatLabel(s); return "Section " + l.section + ", row " + l.row + ", seat " + l.seat; }).join("; ") +
          (price ? " — " + ids.length + " × " + price + " " + currency : ""));
      }
      holdBtn.disabled = ids.length === 0;
      text(holdBtn, ids.length > 1 ? "Hold these " + ids.length + " seats" : "Hold this seat");
      if (ids.length === 0) text(holdBtn, "Hold these seats");
    }

    function renderSections(list) {
      sectionsEl.querySelectorAll("label").forEach((l) => l.remove());
      for (const s of list) {
        sectionInfo[s.name] = s;
        const label = document.createElement("label");
        const input = document.createElement("input");
        input.type = "radio"; input.name = "section"; input.value = s.name;
        input.checked = s.name === section;
        input.addEventListener("change", () => { if (input.checked) chooseSection(s.name); });
        const span = document.createElement("span");
        span.textContent = "Section " + s.name + " · " + s.price + " " + currency + " · " + nf.format(s.available) + " available";
        label.append(input, span);
        sectionsEl.appendChild(label);
      }
    }

    // Seats a hold found taken: a cached map older than that answer (a CDN
    // or the service may serve one up to a refresh old) must not offer
    // them again. Forgotten after 30 s, whatever the clocks say.
    const takenAt = new Map();
    function renderSeats(seats, asOf) {
      const asOfMs = Date.parse(asOf || "") || 0;
      for (const [id, at] of takenAt) if (Date.now() - at > 30000) takenAt.delete(id);
      const byRow = new Map();
      for (const s of seats) {
        const l = seatLabel(s.id);
        if (!byRow.has(l.row)) byRow.set(l.row, []);
        byRow.get(l.row).push(s);
      }
      const existing = new Map([...mapEl.querySelectorAll("input")].map((i) => [i.value, i]));
      const sameLayout = existing.size === seats.length && seats.every((s) => existing.has(s.id));
      if (!sameLayout) {
        mapEl.textContent = "";
        existing.clear();
        for (const [row, list] of byRow) {
          const fs = document.createElement("fieldset");
          fs.className = "row";
          const lg = document.createElement("legend");
          lg.textContent = "Row " + row;
          fs.appendChild(lg);
          for (const s of list) {
            const l = seatLabel(s.id);
            const lab = document.createElement("label");
            lab.className = "seat";
            const input = document.createElement("input");
            input.type = "checkbox"; input.value = s.id; input.id = "seat-" + s.id;
            input.setAttribute("aria-label", "Row " + l.row + ", seat " + l.seat);
            input.addEventListener("change", () => toggle(input));
            const span = document.createElement("span");
            span.textContent = l.seat;
            lab.append(input, span);
            fs.appendChild(lab);
            existing.set(s.id, input);
          }
          mapEl.appendChild(fs);
        }
      }
      const lost = [];
      for (const s of seats) {
        const input = existing.get(s.id);
        const free = s.status === "AVAILABLE" && !(takenAt.has(s.id) && asOfMs <= takenAt.get(s.id));
        if (!free && selected.has(s.id)) { selected.delete(s.id); lost.push(s.id); }
        input.disabled = !free;
        input.checked = selected.has(s.id);
        input.title = free ? "available" : "taken";
        input.setAttribute("aria-label", "Row " + seatLabel(s.id).row + ", seat " + seatLabel(s.id).seat + (free ? "" : ", taken"));
      }
      if (lost.length) message("Just taken by someone else: " + lost.join(", ") + ". Please pick again.");
      updateChoice();
    }

    function toggle(input) {
      if (input.checked) {
        if (selected.size >= MAX_SEATS) {
          input.checked = false;
          message("You can choose at most " + MAX_SEATS + " seats.");
          return;
        }
        selected.add(input.value);
      } else selected.delete(input.value);
      message("");
      updateChoice();
    }

    // The compact seat map has one status string per row ('A' available,
    // 'H' held, 'S' sold, '-' no seat); expand it to {id, status}.
    const codes = { A: "AVAILABLE", H: "HELD", S: "SOLD" };
    function seatsOf(d) {
      const out = [];
      for (const row of d.rows || []) {
        for (let i = 0; i < row.seats.length; i++) {
          const st = codes[row.seats[i]];
          if (st) out.push({ id: row.section + "-" + row.row + "-" + (row.first + i), status: st });
        }
      }
      return out;
    }
    async function loadSection(name) {
      const r = await api("GET", "/events/" + eventId + "/seats?format=rows&section=" + encodeURIComponent(name), { cache: "default" });
      if (r.status !== 200) { message(errMsg(r)); return; }
      if (name !== section) return;
      currency = r.data.currency || currency;
      for (const s of r.data.sections || []) {
        sectionInfo[s.name] = s;
        const label = [...sectionsEl.querySelectorAll("input")].find((i) => i.value === s.name);
        if (label) text(label.nextSibling, "Section " + s.name + " · " + s.price + " " + currency + " · " + nf.format(s.available) + " available");
      }
      renderSeats(seatsOf(r.data), r.data.asOf);
      text(asof, "Availability as of " + new Date(r.data.asOf || Date.now()).toLocaleTimeString() + "; refreshed every few seconds.");
    }
    function chooseSection(name) {
      if (name !== section) { selected.clear(); mapEl.textContent = ""; }
      section = name;
      message("");
      loadSection(name);
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
        }
        message("Sorry, " + (gone.length === 1 ? "seat " + gone[0] + " was" : "seats " + gone.join(", ") + " were") + " just taken. Nothing was held; please pick again.");
        updateChoice();
        loadSection(section);
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
      show(held, true);
      text($("held-seats"), "Seats: " + h.seats.join(", "));
      text($("held-amount"), "Total " + h.amount + " " + h.currency);
      const pay = $("pay");
      pay.textContent = "Pay " + h.amount + " " + h.currency;
      pay.href = "/demo/pay/" + encodeURIComponent(h.orderId) + "?amount=" + encodeURIComponent(h.amount) +
        "&currency=" + encodeURIComponent(h.currency) + "&event=" + eventId +
        (h.payBy ? "&payBy=" + encodeURIComponent(h.payBy) : "");
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
      message("Your seats were released.");
      startPicker();
    });

    async function startPicker() {
      const r = await api("GET", "/events/" + eventId + "/seats?format=rows", { cache: "default" });
      if (r.status !== 200) { message(errMsg(r)); setTimeout(startPicker, 3000); return; }
      currency = r.data.currency || "";
      const secs = r.data.sections || [];
      if (!section && secs.length) section = (secs.find((s) => s.available > 0) || secs[0]).name;
      renderSections(secs);
      show(picker, true);
      const cur = seatsOf(r.data).filter((s) => seatLabel(s.id).section === section);
      renderSeats(cur, r.data.asOf);
      text($("limit"), "Choose up to " + MAX_SEATS + " seats. Use Tab and Space to choose with the keyboard.");
      text(asof, "Availability as of " + new Date(r.data.asOf || Date.now()).toLocaleTimeString() + "; refreshed every few seconds.");
      clearInterval(refreshTimer);
      refreshTimer = setInterval(() => { if (section) loadSection(section); }, 5000);
    }

    const h = store.get(K.hold);
    if (h && Date.parse(h.expiresAt) > Date.now()) showHold(h);
    else { store.del(K.hold); startPicker(); }
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
        h.textContent = "Section " + l.section + ", row " + l.row + ", seat " + l.seat;
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
          img.alt = "QR code of the ticket for section " + l.section + ", row " + l.row + ", seat " + l.seat;
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
    function seatLabel(id) { const p = String(id).split("-"); return { section: p[0], row: p[1], seat: p[2] }; }
    loadOrder();
  }

  const page = document.body.dataset.page;
  if (page === "wait") waitPage();
  else if (page === "seats") seatsPage();
  else if (page === "order") orderPage();
})();
