/*
Copyright 2026 The ticketfair Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package queue

import "github.com/redis/go-redis/v9"

// Scripts run atomically in Redis. Every script reads the clock with TIME,
// so opening, expiry and the booking service's session check all follow
// one clock. A customer's record in the customers hash is
// "state|arrivalSeq|score|sessionId" with state w (waiting), a (admitted,
// token not yet claimed), c (claimed) or l (left).
//
// Every place comes from one sequence, the arrival counter: before opening
// a new customer's arrival number (the place is that number when the
// pre-queue is FIFO, a random key when it is shuffled), after opening
// postOpenBase plus the next number. So a customer who joined after
// opening and still waits needs no record: the queue's score is the place
// and the score less postOpenBase the arrival number. The joins of the
// opening spike write the queue's sorted set alone, not a hash entry too,
// which halves their writes in Redis. Records are written when a place
// has to remember more: a pre-queue place, admission, leaving, and a new
// place for a customer who had one. Places after opening are above 2^52:
// the scripts print them with '%d', exact below 2^53 and far cheaper than
// a floating-point format.

// joinScript gives the customer a place, or returns the place they have.
// KEYS: customers, queue, arrival, active, generation.
// ARGV: customer, salesOpenMs, preQueue (shuffle|fifo), randomKey, postOpenBase, newGeneration.
// Returns {created 0|1, state, arrivalSeq, score, generation}. The
// generation names this Redis's copy of the queue: a Redis that lost its
// data has none until the next join sets a new one, so places handed out
// before the loss can be told apart from places that exist.
var joinScript = redis.NewScript(joinSource)

const joinSource = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local base = tonumber(ARGV[5])
local gen = redis.call('GET', KEYS[5])
if not gen then
  gen = ARGV[6]
  redis.call('SET', KEYS[5], gen)
end
local rec = redis.call('HGET', KEYS[1], ARGV[1])
local arr
if rec then
  local st, a, sc, sid = string.match(rec, '^(%a)|(%d+)|(%d+)|(.*)$')
  arr = a
  if st == 'w' then return {0, st, a, sc, gen} end
  if st == 'a' or st == 'c' then
    local exp = redis.call('ZSCORE', KEYS[4], sid)
    if exp and tonumber(exp) > now then return {0, st, a, sc, gen} end
  end
else
  local sc = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if sc then
    sc = tonumber(sc)
    return {0, 'w', string.format('%d', sc - base), string.format('%d', sc), gen}
  end
end
local seq = redis.call('INCR', KEYS[3])
local score
if now < tonumber(ARGV[2]) then
  arr = arr or string.format('%d', seq)
  if ARGV[3] == 'fifo' then score = arr else score = ARGV[4] end
else
  score = string.format('%d', base + seq)
end
redis.call('ZADD', KEYS[2], score, ARGV[1])
if arr then
  redis.call('HSET', KEYS[1], ARGV[1], 'w|' .. arr .. '|' .. score .. '|')
else
  arr = string.format('%d', seq)
end
return {1, 'w', arr, score, gen}
`

// joinManyScript is joinScript for several customers in one call: the
// joins of a pod coalesced, applied in order, so FIFO among them is the
// order they arrived in and a customer twice in one batch gets one place
// (the repeat answers created 0). It is one pass over the batch, with one
// call each for the records (HMGET), the numbers (INCRBY), the places
// (ZADD NX) and the records that places need (HSET, none for places after
// opening). A customer without a record may still wait (joined after
// opening): ZADD NX keeps that place, and only when it added fewer members
// than it was given does the script read which places it kept (ZMSCORE).
// Such a repeat used a number: numbers may skip, never repeat or go back.
// KEYS: as joinScript. ARGV: salesOpenMs, preQueue, postOpenBase,
// newGeneration, n, then the n customers, then their n randomKeys when the
// pre-queue is shuffled and may still take places (NOKEYS asks for them
// when they were left out but are needed). Returns {created, state, score}
// per customer, flattened, then the generation.
var joinManyScript = redis.NewScript(joinManySource)

const joinManySource = `
local n = tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local open = now >= tonumber(ARGV[1])
local shuffled = ARGV[2] ~= 'fifo'
if not open and shuffled and #ARGV < 5 + 2 * n then
  return redis.error_reply('NOKEYS places before opening need the random keys')
end
local base = tonumber(ARGV[3])
local gen = redis.call('GET', KEYS[5])
if not gen then
  gen = ARGV[4]
  redis.call('SET', KEYS[5], gen)
end
-- One HMGET reads every record, one INCRBY takes a number for each join
-- (the unused ones are given back at the end).
local recs = redis.call('HMGET', KEYS[1], unpack(ARGV, 6, 5 + n))
local seq = redis.call('INCRBY', KEYS[3], n) - n
local top = seq + n
local first, out, zadd, hset = {}, {}, {'NX'}, {}
local o, z, h = 0, 1, 0
for k = 1, n do
  local c = ARGV[5 + k]
  local f = first[c]
  if f then
    -- A repeat in the batch: the answer of its first occurrence.
    out[o + 1], out[o + 2], out[o + 3] = 0, out[f + 2], out[f + 3]
  else
    first[c] = o
    local rec, arr = recs[k], nil
    local keep = false
    if rec then
      local s, a, scr, sid = string.match(rec, '^(%a)|(%d+)|(%d+)|(.*)$')
      arr, keep = a, s == 'w'
      if (s == 'a' or s == 'c') and sid ~= '' then
        local exp = redis.call('ZSCORE', KEYS[4], sid)
        keep = exp and tonumber(exp) > now
      end
      if keep then out[o + 1], out[o + 2], out[o + 3] = 0, s, scr end
    end
    if not keep then
      seq = seq + 1
      local score
      if open then
        score = string.format('%d', base + seq)
      else
        arr = arr or string.format('%d', seq)
        if shuffled then score = ARGV[5 + n + k] else score = arr end
      end
      zadd[z + 1], zadd[z + 2] = score, c
      z = z + 2
      if arr then
        hset[h + 1], hset[h + 2] = c, 'w|' .. arr .. '|' .. score .. '|'
        h = h + 2
      end
      out[o + 1], out[o + 2], out[o + 3] = 1, 'w', score
    end
  end
  o = o + 3
end
if seq < top then redis.call('DECRBY', KEYS[3], top - seq) end
if z > 1 and redis.call('ZADD', KEYS[2], unpack(zadd)) < (z - 1) / 2 then
  -- Some already wait without a record: they keep the place they have,
  -- their repeats in the batch answer it too, and they get no record.
  local names = {}
  for i = 3, z, 2 do names[#names + 1] = zadd[i] end
  local had = redis.call('ZMSCORE', KEYS[2], unpack(names))
  local kept = {}
  for i, c in ipairs(names) do
    local s = tonumber(had[i])
    local f = first[c]
    if s ~= tonumber(out[f + 3]) then
      kept[c] = true
      out[f + 1], out[f + 3] = 0, string.format('%d', s)
    end
  end
  o = 0
  for k = 1, n do
    local f = first[ARGV[5 + k]]
    if f ~= o then out[o + 1], out[o + 3] = 0, out[f + 3] end
    o = o + 3
  end
  local rest, r = {}, 0
  for i = 1, h, 2 do
    if not kept[hset[i]] then
      rest[r + 1], rest[r + 2] = hset[i], hset[i + 1]
      r = r + 2
    end
  end
  hset, h = rest, r
end
if h > 0 then redis.call('HSET', KEYS[1], unpack(hset)) end
out[o + 1] = gen
return out
`

// admitScript is one admitter tick: fence, drop expired sessions, admit
// min(free, batch) from the front. The epoch key keeps the highest fencing
// number seen: a lower one is fenced off, a higher one takes over. A
// failover that loses the latest writes can lower the key, never the
// admitters' numbers (they come from the Lease), so two admitters never
// share one and the newer fences the older again with its next tick.
//
// It admits no more people than the seats still free can serve: each
// active session without a hold (booking's published "holds" counts the
// orders holding seats) is someone choosing, who takes one seat at least.
// So once every seat is sold or held nobody is let in to find none, and
// the seats that abandoned holds return go to about as many people. At
// least one person per tick is let in while a seat is free.
//
// Only recent sessions count as choosing: those still in their claim
// window and those that picked up their token within the selection window
// (a session's score is its expiry: admission + claimMs before the claim,
// the claim + tokenTtlMs after it). Someone who claimed longer ago and
// holds nothing has most likely walked away, after a failed payment say;
// counted as choosing until their token expired, a few dozen of them held
// the last seats of a sale to one admission a tick for minutes. booking
// counts holds, not whose they are, so the people choosing are the
// smaller of two bounds: the recent sessions, and the active sessions
// less the holds. A session in the last claimMs of its token counts as
// recent too: it cannot be told from one in its claim window.
// KEYS: epoch, active, queue, customers, remaining, prerank, watermark, admitted, admitlog, inventory,
// and with several queues: wrr, admittedq, then per queue its ZSET, prerank and watermark.
// ARGV: epoch, maxActive, batch, claimMs, paused 0|1, salesOpenMs, sessionNonce, postOpenBase,
// tokenTtlMs, selectionMs, and with several queues: q, DefaultQueue, then per queue its
// name, weight and opening (ms). salesOpenMs is then the first queue's opening. The
// admission log's entries of a queue other than DefaultQueue end in "|queue".
// Returns {admitted (-1 when fenced), active, reason[, choosing]}; reason
// 0 ok, 1 paused, 2 not open, 3 sold out, 4 every unsold seat held;
// choosing, on a tick that admits, is the people it counted as choosing
// (-1 without booking's inventory).
var admitScript = redis.NewScript(`
local fence = tonumber(ARGV[1])
local seen = tonumber(redis.call('GET', KEYS[1]) or '0')
if fence < seen then return {-1, 0, 0} end
if fence > seen then redis.call('SET', KEYS[1], ARGV[1]) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local active = redis.call('ZCARD', KEYS[2])
if ARGV[5] == '1' then return {0, active, 1} end
if now < tonumber(ARGV[6]) then return {0, active, 2} end
local remaining = tonumber(redis.call('GET', KEYS[5]) or '')
if remaining == 0 then return {0, active, 3} end
local n = math.min(tonumber(ARGV[2]) - active, tonumber(ARGV[3]))
if n <= 0 then return {0, active, 0} end
local inv = redis.call('HMGET', KEYS[10], 'held', 'holds')
local choosing = -1
if remaining and inv[1] and inv[2] then
  local free = remaining - tonumber(inv[1])
  if free <= 0 then return {0, active, 4} end
  local claimMs, ttl, window = tonumber(ARGV[4]), tonumber(ARGV[9]), tonumber(ARGV[10])
  local recent = active
  if claimMs < ttl - window then
    recent = redis.call('ZCOUNT', KEYS[2], '(' .. now, now + claimMs) +
      redis.call('ZCOUNT', KEYS[2], now + ttl - window, '+inf')
  end
  choosing = math.max(math.min(recent, active - tonumber(inv[2])), 0)
  n = math.min(n, math.max(free - choosing, 1))
end
local exp = now + tonumber(ARGV[4])
local base = tonumber(ARGV[8])
local count = 0
-- admit lets m in from the front of one queue (its ZSET, pre-queue rank
-- counter and watermark; a queue name suffixes its log entries).
local function admit(qk, prk, wmk, suffix, m)
  local popped = redis.call('ZPOPMIN', qk, m)
  local last
  for i = 1, #popped, 2 do
    local c, sc = popped[i], popped[i + 1]
    local rec = redis.call('HGET', KEYS[4], c)
    local arr
    if rec then arr = string.match(rec, '^%a|(%d+)|') or '0' else arr = string.format('%d', tonumber(sc) - base) end
    count = count + 1
    local sid = ARGV[7] .. '-' .. count
    local qs, cohort
    if tonumber(sc) < base then
      qs, cohort = string.format('%d', redis.call('INCR', prk)), 'p'
    else
      qs, cohort = string.format('%.0f', tonumber(sc) - base), 'f'
    end
    redis.call('ZADD', KEYS[2], exp, sid)
    redis.call('HSET', KEYS[4], c, 'a|' .. arr .. '|' .. sc .. '|' .. sid)
    redis.call('RPUSH', KEYS[9], c .. '|' .. arr .. '|' .. qs .. '|' .. cohort .. suffix)
    last = sc
  end
  if last then redis.call('SET', wmk, last) end
  return #popped / 2
end
local q = tonumber(ARGV[11] or '0')
if q == 0 then
  admit(KEYS[3], KEYS[6], KEYS[7], '', n)
else
  -- Several queues: a smooth weighted round robin over the open queues
  -- with people waiting deals the n places (each queue's credit, kept in
  -- Redis, grows by its weight per place dealt and the queue dealt one
  -- loses the total), so every queue gets its share within one round of
  -- the weights and none starves; within a queue the order is the ZSET's.
  local names, weight, waiting, take = {}, {}, {}, {}
  for i = 1, q do
    names[i], weight[i], take[i] = ARGV[10 + 3 * i], tonumber(ARGV[11 + 3 * i]), 0
    waiting[i] = 0
    if now >= tonumber(ARGV[12 + 3 * i]) then waiting[i] = redis.call('ZCARD', KEYS[10 + 3 * i]) end
  end
  local credit = redis.call('HMGET', KEYS[11], unpack(names))
  for i = 1, q do credit[i] = tonumber(credit[i] or '0') end
  for _ = 1, n do
    local total, best = 0, nil
    for i = 1, q do
      if take[i] < waiting[i] then
        credit[i] = credit[i] + weight[i]
        total = total + weight[i]
        if not best or credit[i] > credit[best] then best = i end
      end
    end
    if not best then break end
    credit[best] = credit[best] - total
    take[best] = take[best] + 1
  end
  local hs = {}
  for i = 1, q do
    hs[#hs + 1], hs[#hs + 2] = names[i], credit[i]
    if take[i] > 0 then
      local suffix = ''
      if names[i] ~= ARGV[12] then suffix = '|' .. names[i] end
      local got = admit(KEYS[10 + 3 * i], KEYS[11 + 3 * i], KEYS[12 + 3 * i], suffix, take[i])
      redis.call('HINCRBY', KEYS[12], names[i], got)
    end
  end
  redis.call('HSET', KEYS[11], unpack(hs))
end
if count > 0 then
  redis.call('INCRBY', KEYS[8], count)
end
return {count, active + count, 0, choosing}
`)

// claimScript is the first poll after admission (and any later one): it
// returns the session, moving it from the claim window to the token TTL
// the first time.
// KEYS: customers, active, queue. ARGV: customer, score, tokenTTLms.
// Returns {status, sessionId, expiryMs}; status is waiting, admitted,
// expired, left or none (not this customer's place).
var claimScript = redis.NewScript(`
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then
  -- Joined after opening and waiting: the place is the record.
  local sc = redis.call('ZSCORE', KEYS[3], ARGV[1])
  if sc and tonumber(sc) == tonumber(ARGV[2]) then return {'waiting'} end
  return {'none'}
end
local st, a, sc, sid = string.match(rec, '^(%a)|(%d+)|(%d+)|(.*)$')
if tonumber(sc) ~= tonumber(ARGV[2]) then return {'none'} end
if st == 'w' then return {'waiting'} end
if st == 'l' then return {'left'} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local exp = redis.call('ZSCORE', KEYS[2], sid)
if not exp or tonumber(exp) <= now then return {'expired'} end
exp = tonumber(exp)
if st == 'a' then
  exp = now + tonumber(ARGV[3])
  redis.call('ZADD', KEYS[2], 'XX', exp, sid)
  redis.call('HSET', KEYS[1], ARGV[1], 'c|' .. a .. '|' .. sc .. '|' .. sid)
end
return {'admitted', sid, string.format('%.0f', exp)}
`)

// leaveScript leaves the queue or ends the admitted session, freeing its
// slot at once. KEYS: customers, queue, active. ARGV: customer, score,
// postOpenBase. Returns 1, or 0 when the place is not this customer's.
var leaveScript = redis.NewScript(`
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then
  -- Joined after opening and waiting: the place is the record.
  local sc = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if not sc or tonumber(sc) ~= tonumber(ARGV[2]) then return 0 end
  rec = 'w|' .. string.format('%d', tonumber(sc) - tonumber(ARGV[3])) .. '|' .. string.format('%d', tonumber(sc)) .. '|'
end
local st, a, sc, sid = string.match(rec, '^(%a)|(%d+)|(%d+)|(.*)$')
if tonumber(sc) ~= tonumber(ARGV[2]) then return 0 end
if st == 'w' then redis.call('ZREM', KEYS[2], ARGV[1]) end
if (st == 'a' or st == 'c') and sid ~= '' then redis.call('ZREM', KEYS[3], sid) end
redis.call('HSET', KEYS[1], ARGV[1], 'l|' .. a .. '|' .. sc .. '|')
return 1
`)

// sampleSource is the sampling both snapshot scripts share, prepended to
// each: sample appends to out up to samples+1 (rank, score) pairs of the
// ZSET key of n members, evenly spaced from the front and always ending
// with the last, as the waiting views interpolate positions from them.
const sampleSource = `
local function sample(out, key, n, samples)
  if n == 0 then return end
  local step = math.max(1, math.ceil(n / samples))
  local r = 0
  while true do
    local e = redis.call('ZRANGE', key, r, r, 'WITHSCORES')
    if #e == 2 then
      table.insert(out, r)
      table.insert(out, e[2])
    end
    if r == n - 1 then break end
    r = math.min(r + step, n - 1)
  end
end
`

// snapshotScript reads what polls and the stats are answered from: queue
// length, active sessions, admissions, inventory (remaining, held, sold),
// the admission watermark and up to ARGV[1]+1 (rank, score) samples of the
// queue.
// KEYS: queue, active, admitted, remaining, watermark, inventory, generation.
// Returns {waiting, active, admitted, remaining or empty, watermark or empty, nowMs,
// held or empty, sold or empty, generation or empty, rank1, score1, ...}.
var snapshotScript = redis.NewScript(sampleSource + `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = redis.call('ZCARD', KEYS[1])
local active = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local inv = redis.call('HMGET', KEYS[6], 'held', 'sold')
local out = {n, active, redis.call('GET', KEYS[3]) or '0', redis.call('GET', KEYS[4]) or '', redis.call('GET', KEYS[5]) or '', string.format('%.0f', now),
  inv[1] or '', inv[2] or '', redis.call('GET', KEYS[7]) or ''}
sample(out, KEYS[1], n, tonumber(ARGV[1]))
return out
`)

// joinQueuesScript is joinManyScript for an event with several queues, or
// for joins that carry an access code or a proof-of-work challenge: one
// call for a batch, in order, and still one place per customer per event
// whatever the queue. A record for a place in a queue other than
// DefaultQueue always exists and names the queue in its last field (a
// waiting place has no session), so the one HMGET finds every place but
// those of DefaultQueue after opening, which one ZMSCORE finds.
//
// Per join, in order: its challenge id is marked used until its expiry (SET
// NX PXAT: a second use is refused challenge_used); a customer who holds a
// place keeps it (a code they bring is not spent); otherwise the code, when
// there is one, is redeemed (HSETNX sha256(code) -> customer: single use,
// bound to its first customer, who may redeem it again) or refused
// code_used; then the place is given in the join's queue: before the
// queue's opening the pre-queue's (its random key, or its arrival number
// when FIFO), after it postOpenBase plus the next arrival number.
// KEYS: customers, arrival, active, generation, codes, DefaultQueue's
// queue, then the q queues' ZSETs.
// ARGV: preQueue, postOpenBase, newGeneration, n, q, challengePrefix, the q
// openings (ms), the q queue names ("" for DefaultQueue), the n customers,
// the n joins "queueIndex|codeHash|challengeId|challengeExpiryMs", then the
// n random keys when a queue may still take pre-queue places (NOKEYS when
// they are needed and missing).
// Returns {created (1, 0, or -1 refused), state or refusal, score, queue}
// per customer, flattened, then the generation.
var joinQueuesScript = redis.NewScript(joinQueuesSource)

const joinQueuesSource = `
local n, q = tonumber(ARGV[4]), tonumber(ARGV[5])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local shuffled = ARGV[1] ~= 'fifo'
local base = tonumber(ARGV[2])
local open, names, closed = {}, {}, false
for i = 1, q do
  open[i] = now >= tonumber(ARGV[6 + i])
  names[i] = ARGV[6 + q + i]
  closed = closed or not open[i]
end
local c0 = 6 + 2 * q
if closed and shuffled and #ARGV < c0 + 3 * n then
  return redis.error_reply('NOKEYS places before opening need the random keys')
end
local gen = redis.call('GET', KEYS[4])
if not gen then
  gen = ARGV[3]
  redis.call('SET', KEYS[4], gen)
end
local recs = redis.call('HMGET', KEYS[1], unpack(ARGV, c0 + 1, c0 + n))
local bare = {}
for k = 1, n do
  if not recs[k] then bare[#bare + 1] = ARGV[c0 + k] end
end
local waits = {}
if #bare > 0 then
  local sc = redis.call('ZMSCORE', KEYS[6], unpack(bare))
  for i, c in ipairs(bare) do
    if sc[i] then waits[c] = string.format('%d', tonumber(sc[i])) end
  end
end
local seq = redis.call('INCRBY', KEYS[2], n) - n
local top = seq + n
local first, out, zadd, hset = {}, {}, {}, {}
local h = 0
for k = 1, n do
  local c = ARGV[c0 + k]
  local qi, code, cid, cexp = string.match(ARGV[c0 + n + k], '^(%d+)|(%x*)|([^|]*)|(%d*)$')
  qi = tonumber(qi)
  local o = 4 * (k - 1)
  local f = first[c]
  if cid ~= '' and not redis.call('SET', ARGV[6] .. cid, c, 'NX', 'PXAT', cexp) then
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = -1, 'challenge_used', 0, ''
  elseif f then
    -- A repeat in the batch: the answer of its first occurrence.
    out[o + 1], out[o + 2], out[o + 3], out[o + 4] = math.min(out[f + 1], 0), out[f + 2], out[f + 3], out[f + 4]
  else
    first[c] = o
    local rec, arr, keep = recs[k], nil, false
    if rec then
      local s, a, scr, sid = string.match(rec, '^(%a)|(%d+)|(%d+)|(.*)$')
      arr, keep = a, s == 'w'
      if (s == 'a' or s == 'c') and sid ~= '' then
        local exp = redis.call('ZSCORE', KEYS[3], sid)
        keep = exp and tonumber(exp) > now
      end
      if keep then
        if s ~= 'w' then sid = '' end
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 0, s, scr, sid
      end
    elseif waits[c] then
      keep = true
      out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 0, 'w', waits[c], ''
    end
    if not keep then
      if code ~= '' and redis.call('HSETNX', KEYS[5], code, c) == 0 and redis.call('HGET', KEYS[5], code) ~= c then
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = -1, 'code_used', 0, ''
      else
        seq = seq + 1
        local score
        if open[qi] then
          score = string.format('%d', base + seq)
        else
          arr = arr or string.format('%d', seq)
          if shuffled then score = ARGV[c0 + 2 * n + k] else score = arr end
        end
        local z = zadd[qi]
        if not z then z = {}; zadd[qi] = z end
        z[#z + 1], z[#z + 2] = score, c
        if names[qi] ~= '' then arr = arr or string.format('%d', seq) end
        if arr then
          hset[h + 1], hset[h + 2] = c, 'w|' .. arr .. '|' .. score .. '|' .. names[qi]
          h = h + 2
        end
        out[o + 1], out[o + 2], out[o + 3], out[o + 4] = 1, 'w', score, names[qi]
      end
    end
  end
end
if seq < top then redis.call('DECRBY', KEYS[2], top - seq) end
for i, z in pairs(zadd) do redis.call('ZADD', KEYS[6 + i], unpack(z)) end
if h > 0 then redis.call('HSET', KEYS[1], unpack(hset)) end
out[4 * n + 1] = gen
return out
`

// queueSnapshotScript is snapshotScript's read of one more queue: its
// length, its watermark, its admissions and up to ARGV[1]+1 (rank, score)
// samples. KEYS: queue, watermark, admittedq. ARGV: samples, queue name.
// Returns {waiting, watermark or empty, admitted, rank1, score1, ...}.
var queueSnapshotScript = redis.NewScript(sampleSource + `
local n = redis.call('ZCARD', KEYS[1])
local out = {n, redis.call('GET', KEYS[2]) or '', redis.call('HGET', KEYS[3], ARGV[2]) or '0'}
sample(out, KEYS[1], n, tonumber(ARGV[1]))
return out
`)
