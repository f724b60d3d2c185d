// ticketfair gate page: scans ticket codes and checks them in. Online the
// tickets service decides. When it cannot be reached the page decides
// alone, from the signed code, the cached keys and gate list, and queues
// the scan for the service to reconcile once it answers again.
"use strict";
(function () {
  const m = location.pathname.match(/^\/gate\/(\d{1,18})\/$/);
  if (!m) return;
  const eventId = m[1];
  const eventNum = Number(eventId);
  const K = {
    gate: "tf.gate." + eventId, // {credential, name}
    keys: "tf.gate.keys", // the ticket keys' JWKS
    list: "tf.gate.list." + eventId, // the service's gate list
    local: "tf.gate.local." + eventId, // ticketId -> {gate, at}: admitted here offline
    queue: "tf.gate.queue." + eventId, // offline scans not yet synced
    problems: "tf.gate.problems." + eventId, // sync answers other than admitted
  };
  const ISSUER = "ticketfair-tickets";
  // A queue of people cannot wait on a dead network.
  const TIMEOUT_MS = 4000;
  const TICK_MS = 5000;
  const LIST_EVERY_TICKS = 12;
  const SYNC_BATCH = 100;
  const MAX_CODE = 2048; // the service refuses longer scans

  const store = {
    get(k) { try { return JSON.parse(localStorage.getItem(k)); } catch (e) { return null; } },
    set(k, v) { localStorage.setItem(k, JSON.stringify(v)); },
  };
  const $ = (id) => document.getElementById(id);
  const show = (el, on) => { el.hidden = !on; };
  const text = (el, s) => { el.textContent = s; };

  function when(iso) {
    const d = new Date(iso);
    if (isNaN(d)) return "";
    const t = d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    return d.toDateString() === new Date().toDateString() ? t : d.toLocaleDateString() + " " + t;
  }

  async function api(method, path, body) {
    const g = store.get(K.gate);
    const headers = { Accept: "application/json" };
    if (g && g.credential) headers.Authorization = "Bearer " + g.credential;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), TIMEOUT_MS);
    try {
      const res = await fetch(path, {
        method, headers, body: body === undefined ? undefined : JSON.stringify(body),
        cache: "no-store", credentials: "omit", signal: ctl.signal,
      });
      let data = null;
      try { data = await res.json(); } catch (e) { /* not JSON */ }
      return { status: res.status, data: data || {} };
    } catch (e) {
      return { status: 0, data: {} };
    } finally {
      clearTimeout(timer);
    }
  }
  // The edge answers 502 when the service is down: for the gate that is
  // the same as no network.
  const unreachable = (r) => r.status === 0 || r.status === 502 || r.status === 503 || r.status === 504;
  const errOf = (r) => (r.data && r.data.error) || {};

  // ---- the answer ----
  const answerEl = $("answer"), titleEl = $("answer-title"), detailEl = $("answer-detail");
  function answer(result, reason, title, detail) {
    answerEl.dataset.result = result;
    answerEl.dataset.reason = reason || "";
    titleEl.textContent = "";
    if (result === "admitted" || result === "refused") {
      const mark = document.createElement("span");
      mark.className = "mark";
      mark.setAttribute("aria-hidden", "true");
      mark.textContent = result === "admitted" ? "✓" : "✗";
      titleEl.append(mark);
    }
    titleEl.append(title);
    text(detailEl, detail);
  }
  const seatText = (section, seat) => [section ? "Section " + section : "", seat ? "seat " + seat : ""].filter(Boolean).join(", ");
  function admitted(section, seat, offline) {
    answer("admitted", "", "ADMITTED", (seatText(section, seat) || "Ticket valid") +
      (offline ? ". Checked on this device (offline); it will be synced." : "."));
  }
  const reasons = {
    already_used: "already used",
    revoked: "revoked",
    wrong_event: "wrong event",
    invalid: "invalid code",
  };
  function refused(reason, detail) {
    answer("refused", reason, "NOT ADMITTED: " + (reasons[reason] || "refused"), detail);
  }
  function refusal(reason, e, offline) {
    switch (reason) {
      case "already_used":
        if (e.firstGate || e.firstAt) {
          refused(reason, "Already used" + (e.firstGate ? " at gate " + e.firstGate : "") + (e.firstAt ? " at " + when(e.firstAt) : "") + ".");
        } else {
          refused(reason, "This ticket has already been used.");
        }
        break;
      case "revoked":
        refused(reason, "This ticket was revoked or transferred: only its newest code is valid.");
        break;
      case "wrong_event":
        refused(reason, "This ticket is for another event.");
        break;
      default:
        refused("invalid", offline ? "This is not a valid ticket code (checked on this device)." : (e.message || "This is not a valid ticket code."));
    }
  }

  // ---- setup ----
  function gate() { return store.get(K.gate); }
  // A credential reads "gate.<eventId>.<gate>.<mac>": it names its gate.
  function parseCredential(cred) {
    const p = cred.split(".");
    if (p.length !== 4 || p[0] !== "gate" || !/^[A-Za-z0-9_-]{1,64}$/.test(p[2])) return null;
    return { eventId: p[1], name: p[2] };
  }
  function showGateName() {
    const g = gate();
    text($("gate-name"), g && g.name ? g.name : "not set up");
  }
  function enterSetup() {
    stopCamera();
    const g = gate();
    $("credential").value = g ? g.credential : "";
    show($("setup"), true);
    show($("work"), false);
    $("setup-title").focus();
  }
  async function saveSetup(ev) {
    ev.preventDefault();
    const errEl = $("setup-error");
    show(errEl, false);
    const credential = $("credential").value.trim();
    const c = parseCredential(credential);
    const fail = (msg) => { text(errEl, msg); show(errEl, true); $("credential").focus(); };
    if (!c) { fail("This is not a gate credential: it reads gate.<event>.<gate>.<signature>."); return; }
    if (c.eventId !== eventId) { fail("This credential is for event " + c.eventId + ", not " + eventId + "."); return; }
    const before = gate();
    store.set(K.gate, { credential, name: c.name });
    const r = await api("GET", "/events/" + eventId + "/gate/list");
    if (r.status === 401 || r.status === 403 || r.status === 404) {
      if (before) store.set(K.gate, before); else localStorage.removeItem(K.gate);
      fail(r.status === 403 ? "This credential is for another event." : r.status === 404 ? "Check-in is not open for this event." : "The service does not accept this credential.");
      return;
    }
    if (r.status === 200) keepList(r.data);
    enterWork();
  }
  function enterWork() {
    showGateName();
    show($("setup"), false);
    show($("work"), true);
    renderConn();
    $("scan-title").focus();
  }

  // ---- what the gate knows offline ----
  let isOnline = navigator.onLine !== false;
  function setOnline(on) {
    if (isOnline !== on) { isOnline = on; renderConn(); }
  }
  function keepList(l) {
    if (l && Array.isArray(l.checkedIn)) store.set(K.list, Object.assign({ fetchedAt: new Date().toISOString() }, l));
  }
  async function refresh() {
    const k = await api("GET", "/.well-known/ticket-keys.json");
    if (k.status === 200 && Array.isArray(k.data.keys)) { store.set(K.keys, k.data); importedKeys.clear(); }
    if (!gate()) return;
    const l = await api("GET", "/events/" + eventId + "/gate/list");
    if (l.status === 200) { keepList(l.data); setOnline(true); }
    else if (unreachable(l)) setOnline(false);
    renderConn();
  }

  const b64u = (s) => {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    while (s.length % 4) s += "=";
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  };
  const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
  const utf8 = new TextEncoder();
  const importedKeys = new Map(); // kid -> CryptoKey

  async function publicKey(kid) {
    if (importedKeys.has(kid)) return importedKeys.get(kid);
    const set = store.get(K.keys);
    const jwk = set && (set.keys || []).find((k) => k.kid === kid && k.kty === "OKP" && k.crv === "Ed25519");
    if (!jwk) return null;
    // Only the key itself: WebCrypto refuses alg values it does not know.
    const key = await crypto.subtle.importKey("jwk", { kty: "OKP", crv: "Ed25519", x: jwk.x }, { name: "Ed25519" }, false, ["verify"]);
    importedKeys.set(kid, key);
    return key;
  }

  // claims returns a code's claims, unverified (for display), or null.
  function claims(code) {
    try { return JSON.parse(new TextDecoder().decode(b64u(code.split(".")[1]))); } catch (e) { return null; }
  }

  // verify checks the code as the service would: signature, issuer, and a
  // ticket id that matches its order and seat. It returns the claims, or
  // null for a code that does not verify.
  async function verify(code) {
    const p = code.split(".");
    if (p.length !== 3) return null;
    try {
      const header = JSON.parse(new TextDecoder().decode(b64u(p[0])));
      const c = JSON.parse(new TextDecoder().decode(b64u(p[1])));
      if (header.alg !== "EdDSA" || typeof header.kid !== "string") return null;
      const key = await publicKey(header.kid);
      if (!key) return null;
      const ok = await crypto.subtle.verify({ name: "Ed25519" }, key, b64u(p[2]), utf8.encode(p[0] + "." + p[1]));
      if (!ok || c.iss !== ISSUER || typeof c.sub !== "string") return null;
      const sum = await crypto.subtle.digest("SHA-256", utf8.encode(c.oid + "\0" + c.seat));
      if (c.sub !== "tkt_" + hex(sum.slice(0, 12))) return null;
      return c;
    } catch (e) {
      return null;
    }
  }

  async function checkOffline(code, scannedAt) {
    if (!store.get(K.keys)) {
      answer("refused", "unverifiable", "CANNOT CHECK", "No connection, and this device has never loaded the ticket keys. Call a supervisor.");
      return;
    }
    const c = await verify(code);
    if (!c) { refusal("invalid", {}, true); return; }
    if (c.eid !== eventNum) { refusal("wrong_event", {}, true); return; }
    const list = store.get(K.list) || { checkedIn: [], revoked: [] };
    const rv = (list.revoked || []).find((x) => x.ticketId === c.sub);
    // A newer generation than the list knows may be a transfer since the
    // list was fetched: the signature vouches for it.
    if (rv && (rv.cancelled || (Number(c.gen) || 0) < rv.generation)) { refusal("revoked", {}, true); return; }
    const local = store.get(K.local) || {};
    if (local[c.sub]) { refusal("already_used", { firstGate: local[c.sub].gate, firstAt: local[c.sub].at }, true); return; }
    if ((list.checkedIn || []).includes(c.sub)) { refusal("already_used", {}, true); return; }
    const g = gate();
    local[c.sub] = { gate: g ? g.name : "", at: scannedAt };
    store.set(K.local, local);
    const q = store.get(K.queue) || [];
    q.push({ code, scannedAt, offline: true });
    store.set(K.queue, q);
    admitted(c.sec, c.seat, true);
    renderConn();
  }

  // ---- checking a scan ----
  let busy = false;
  async function check(raw) {
    const code = String(raw || "").trim();
    if (!code || busy) return;
    if (code.length > MAX_CODE) { refusal("invalid", {}, false); return; }
    busy = true;
    answer("checking", "", "Checking…", "");
    const scannedAt = new Date().toISOString();
    try {
      let r = null;
      if (navigator.onLine !== false) {
        // The service must hear of this gate's offline admissions before
        // it rules on a new scan, which may be one of them.
        let reachable = true;
        if ((store.get(K.queue) || []).length) { await sync(); reachable = isOnline; }
        // Online the service times the scan itself.
        if (reachable) r = await api("POST", "/events/" + eventId + "/checkins", { code });
      }
      if (r && !unreachable(r)) {
        setOnline(true);
        serverAnswer(r, code);
        return;
      }
      setOnline(false);
      await checkOffline(code, scannedAt);
    } finally {
      busy = false;
    }
  }
  function serverAnswer(r, code) {
    const d = r.data;
    if (r.status === 200 && d.result === "admitted") {
      const g = gate();
      if (d.gate && g && g.name !== d.gate) { g.name = d.gate; store.set(K.gate, g); showGateName(); }
      // Offline this device then knows the ticket is in, gate list or not.
      const c = claims(code);
      if (c && typeof c.sub === "string") {
        const local = store.get(K.local) || {};
        local[c.sub] = { gate: d.gate || (g ? g.name : ""), at: d.at || new Date().toISOString() };
        store.set(K.local, local);
      }
      admitted(d.section, d.seatId, false);
      return;
    }
    const e = errOf(r);
    if (r.status === 401 || r.status === 403) {
      answer("refused", "credential", "GATE NOT SET UP", r.status === 403 ? "This gate's credential is for another event." : "The service refused this gate's credential: use Change gate.");
      return;
    }
    if (reasons[e.code]) { refusal(e.code, e, false); return; }
    answer("refused", "error", "CANNOT CHECK", e.message || "Unexpected answer from the service (" + r.status + "). Try again.");
  }

  // ---- syncing the offline scans ----
  let syncing = null;
  function sync() {
    if (!syncing) syncing = syncQueue().finally(() => { syncing = null; renderConn(); });
    return syncing;
  }
  let syncError = "";
  async function syncQueue() {
    if (!gate()) return;
    for (;;) {
      const batch = (store.get(K.queue) || []).slice(0, SYNC_BATCH);
      if (!batch.length) break;
      const r = await api("POST", "/events/" + eventId + "/checkins/sync", { scans: batch });
      if (unreachable(r)) { setOnline(false); return; }
      if (r.status !== 200 || !Array.isArray(r.data.results) || !r.data.results.length) {
        syncError = "The service refused the sync: " + (errOf(r).message || "answer " + r.status) + ".";
        return;
      }
      syncError = "";
      setOnline(true);
      const results = r.data.results.slice(0, batch.length);
      const problems = store.get(K.problems) || [];
      results.forEach((res, i) => {
        if (res.result === "admitted") return;
        const c = claims(batch[i].code) || {};
        problems.push(Object.assign({ scannedAt: batch[i].scannedAt, seat: c.seat || "", section: c.sec || "" }, res));
      });
      store.set(K.problems, problems);
      // Scans queued while the request was out stay for the next round.
      store.set(K.queue, (store.get(K.queue) || []).slice(results.length));
    }
    refresh();
  }

  function renderConn() {
    if (!gate()) return;
    const list = store.get(K.list);
    const known = list && list.fetchedAt ? " Offline checks use the list of " + when(list.fetchedAt) + "." : " No gate list loaded yet.";
    text($("conn"), isOnline ? "Online: the service checks each ticket." : "Offline: tickets are checked on this device." + known);
    const n = (store.get(K.queue) || []).length;
    text($("queued"), (n ? n + (n === 1 ? " scan" : " scans") + " waiting to sync." : "All scans are synced.") + (syncError ? " " + syncError : ""));
    $("sync").disabled = n === 0;
    const problems = store.get(K.problems) || [];
    show($("conflicts"), problems.length > 0);
    const conflicts = problems.filter((p) => p.result === "conflict").length;
    text($("conflict-count"), conflicts + (conflicts === 1 ? " conflict" : " conflicts") + " after sync" +
      (problems.length > conflicts ? ", " + (problems.length - conflicts) + " other refused" : "") + ":");
    const ul = $("conflict-list");
    ul.textContent = "";
    for (const p of problems) {
      const li = document.createElement("li");
      li.dataset.result = p.result;
      const seat = seatText(p.section, p.seat) || p.ticketId || "a ticket";
      const elsewhere = (p.firstGate ? " at gate " + p.firstGate : "") + (p.firstAt ? " at " + when(p.firstAt) : "");
      li.textContent = p.result === "conflict"
        ? seat + ": let in here at " + when(p.scannedAt) + " while offline, but already admitted" + (elsewhere || " elsewhere") + "."
        : seat + ": let in here at " + when(p.scannedAt) + " while offline; the service says " + (reasons[p.result] || p.result) + (p.message ? " (" + p.message + ")" : "") + ".";
      ul.appendChild(li);
    }
  }

  // ---- scanning ----
  const video = $("video"), camBtn = $("camera"), scanErr = $("scan-error");
  let camera = null;
  let last = { code: "", at: 0 };
  function scanError(msg) { text(scanErr, msg); show(scanErr, !!msg); }
  function onScan(code) {
    // The camera sees the same code many times a second.
    const now = Date.now();
    if (code === last.code && now - last.at < 4000) return;
    last = { code, at: now };
    check(code);
  }
  function stopCamera() {
    if (camera) { camera.reset(); camera = null; }
    show(video, false);
    camBtn.setAttribute("aria-pressed", "false");
    text(camBtn, "Start camera");
  }
  function toggleCamera() {
    scanError("");
    if (camera) { stopCamera(); return; }
    if (!window.ZXing || !navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      scanError("This browser offers no camera to this page; scan a photo or type the code.");
      return;
    }
    camera = new ZXing.BrowserQRCodeReader(200);
    camera.hints = new Map([[ZXing.DecodeHintType.TRY_HARDER, true]]);
    show(video, true);
    camBtn.setAttribute("aria-pressed", "true");
    text(camBtn, "Stop camera");
    camera.decodeFromVideoDevice(null, video, (result) => { if (result) onScan(result.getText()); })
      .catch((e) => { stopCamera(); scanError("Could not start the camera: " + (e && e.message ? e.message : e) + "."); });
  }
  // decodePicture reads the QR code in a picture. The decoder misses some
  // clean codes at one size or orientation and reads them at another, so
  // it tries a few; each try takes milliseconds.
  async function decodePicture(url) {
    const img = new Image();
    img.src = url;
    await img.decode(); // rejects for a file that is no picture
    const reader = new ZXing.QRCodeReader();
    const tryHarder = new Map([[ZXing.DecodeHintType.TRY_HARDER, true]]);
    const pure = new Map([[ZXing.DecodeHintType.PURE_BARCODE, true]]);
    const big = Math.max(img.naturalWidth, img.naturalHeight);
    const canvas = document.createElement("canvas");
    const ctx = canvas.getContext("2d", { willReadFrequently: true });
    const sizes = [...new Set([Math.min(big, 1000), Math.min(big, 400), Math.min(big, 300)])];
    for (const size of sizes) {
      const w = Math.round(img.naturalWidth * size / big), h = Math.round(img.naturalHeight * size / big);
      for (const quarter of [0, 2, 1, 3]) {
        canvas.width = quarter % 2 ? h : w;
        canvas.height = quarter % 2 ? w : h;
        ctx.fillStyle = "#fff";
        ctx.fillRect(0, 0, canvas.width, canvas.height);
        ctx.setTransform(1, 0, 0, 1, canvas.width / 2, canvas.height / 2);
        ctx.rotate(quarter * Math.PI / 2);
        ctx.drawImage(img, -w / 2, -h / 2, w, h);
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        for (const hints of [tryHarder, pure]) {
          try {
            const bitmap = new ZXing.BinaryBitmap(new ZXing.HybridBinarizer(new ZXing.HTMLCanvasElementLuminanceSource(canvas)));
            return reader.decode(bitmap, hints).getText();
          } catch (e) {
            reader.reset();
          }
        }
      }
    }
    return "";
  }
  async function scanFile() {
    const input = $("file");
    const f = input.files && input.files[0];
    input.value = "";
    if (!f) return;
    scanError("");
    if (!window.ZXing) { scanError("The QR decoder did not load; type the code."); return; }
    const url = URL.createObjectURL(f);
    let code = "";
    try {
      code = await decodePicture(url);
    } catch (e) {
      // not a picture
    } finally {
      URL.revokeObjectURL(url);
    }
    if (!code) { scanError("No QR code found in this picture."); return; }
    await check(code);
  }

  $("setup-form").addEventListener("submit", saveSetup);
  $("reset").addEventListener("click", enterSetup);
  camBtn.addEventListener("click", toggleCamera);
  $("file").addEventListener("change", scanFile);
  $("manual").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const input = $("code");
    const v = input.value;
    input.value = "";
    input.focus();
    check(v);
  });
  $("sync").addEventListener("click", () => sync());
  $("clear-conflicts").addEventListener("click", () => { store.set(K.problems, []); renderConn(); $("sync-title").focus(); });
  window.addEventListener("online", () => { setOnline(true); sync(); refresh(); });
  window.addEventListener("offline", () => setOnline(false));

  let ticks = 0;
  setInterval(() => {
    if ((store.get(K.queue) || []).length) sync();
    if (++ticks % LIST_EVERY_TICKS === 0) refresh();
  }, TICK_MS);

  if (gate()) enterWork(); else enterSetup();
  refresh();
  if ((store.get(K.queue) || []).length) sync();
})();
