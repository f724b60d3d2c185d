// ticketfair proof-of-work solver, run in a Web Worker so the page stays
// responsive. Given {challenge, difficulty} it finds the decimal nonce n,
// counting from 0, such that SHA-256(challenge || n) starts with at least
// difficulty zero bits (the queue's pow package checks the same), and
// answers {nonce, hashes (computed), ms}, or {error} without WebCrypto.
"use strict";
// WebCrypto's digest is asynchronous: one at a time, the wait for each
// answer costs more than the hash. Batches of digests in flight together
// keep the worker busy.
const BATCH = 256;

function zeroBits(h) {
  let n = 0;
  for (let i = 0; i < h.length; i++) {
    if (h[i] === 0) { n += 8; continue; }
    return n + Math.clz32(h[i]) - 24;
  }
  return n;
}

async function solve(challenge, difficulty) {
  const prefix = new TextEncoder().encode(challenge);
  const start = performance.now();
  for (let base = 0; ; base += BATCH) {
    const inputs = [];
    for (let n = base; n < base + BATCH; n++) {
      const s = String(n);
      const buf = new Uint8Array(prefix.length + s.length);
      buf.set(prefix);
      for (let i = 0; i < s.length; i++) buf[prefix.length + i] = s.charCodeAt(i);
      inputs.push(crypto.subtle.digest("SHA-256", buf));
    }
    const sums = await Promise.all(inputs);
    for (let i = 0; i < sums.length; i++) {
      if (zeroBits(new Uint8Array(sums[i])) >= difficulty) {
        // hashes: those computed, the whole last batch included.
        return { nonce: String(base + i), hashes: base + BATCH, ms: performance.now() - start };
      }
    }
  }
}

self.onmessage = async (e) => {
  const { challenge, difficulty } = e.data || {};
  if (!self.crypto || !crypto.subtle) {
    self.postMessage({ error: "This browser cannot compute the check the sale asks for (WebCrypto is missing)." });
    return;
  }
  try {
    self.postMessage(await solve(String(challenge), Number(difficulty) || 0));
  } catch (err) {
    self.postMessage({ error: String(err && err.message || err) });
  }
};
