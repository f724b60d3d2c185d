package queue

import "github.com/redis/go-redis/v9"

// Scripts run atomically in Redis. Every script reads the clock with TIME,
// so opening, expiry and the booking service's session check all follow
// one clock. A customer's record in the customers hash is
// "state|arrivalSeq|score|sessionId" with state w (waiting), a (admitted,
// token not yet claimed), c (claimed) or l (left). Places after opening
// are above 2^52 (postOpenBase): the join scripts print them with '%d',
// exact below 2^53 and far cheaper than a floating-point format.

// joinScript gives the customer a place, or returns the place they have.
// KEYS: customers, queue, arrival, fifo, active, generation.
// ARGV: customer, salesOpenMs, preQueue (shuffle|fifo), randomKey, postOpenBase, newGeneration.
// Returns {created 0|1, state, arrivalSeq, score, generation}. The
// generation names this Redis's copy of the queue: a Redis that lost its
// data has none until the next join sets a new one, so places handed out
// before the loss can be told apart from places that exist.
var joinScript = redis.NewScript(joinSource)

const joinSource = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local gen = redis.call('GET', KEYS[6])
if not gen then
  gen = ARGV[6]
  redis.call('SET', KEYS[6], gen)
end
local rec = redis.call('HGET', KEYS[1], ARGV[1])
local arr
if rec then
  local st, a, sc, sid = string.match(rec, '^(%a)|(%d+)|(%d+)|(.*)$')
  arr = a
  if st == 'w' then return {0, st, a, sc, gen} end
  if st == 'a' or st == 'c' then
    local exp = redis.call('ZSCORE', KEYS[5], sid)
    if exp and tonumber(exp) > now then return {0, st, a, sc, gen} end
  end
else
  arr = string.format('%d', redis.call('INCR', KEYS[3]))
end
local score
if now < tonumber(ARGV[2]) then
  if ARGV[3] == 'fifo' then score = arr else score = ARGV[4] end
else
  score = string.format('%d', tonumber(ARGV[5]) + redis.call('INCR', KEYS[4]))
end
redis.call('ZADD', KEYS[2], score, ARGV[1])
redis.call('HSET', KEYS[1], ARGV[1], 'w|' .. arr .. '|' .. score .. '|')
return {1, 'w', arr, score, gen}
`

// joinManyScript is joinScript for several customers in one call: the
// joins of a pod coalesced, applied in order, so FIFO among them is the
// order they arrived in and a customer twice in one batch gets one place
// (the repeat answers created 0). Sequences are taken with one INCRBY and
// the places written with one ZADD and one HSET for the whole batch.
// KEYS: as joinScript. ARGV: salesOpenMs, preQueue, postOpenBase,
// newGeneration, then the n customers, then their n randomKeys. Returns
// {created, state, score} per customer, flattened, then the generation.
var joinManyScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local open = now >= tonumber(ARGV[1])
local fifoMode = ARGV[2] == 'fifo'
local base = tonumber(ARGV[3])
local gen = redis.call('GET', KEYS[6])
if not gen then
  gen = ARGV[4]
  redis.call('SET', KEYS[6], gen)
end
-- Pass 1: who keeps a place, who is new; repeats in the batch follow the
-- first occurrence.
local n = (#ARGV - 4) / 2
local kind, arr, sc, st = {}, {}, {}, {}
local first = {}
local newCount, placeCount = 0, 0
-- One HMGET reads every customer's record (one call into Redis, not n).
local recs = redis.call('HMGET', KEYS[1], unpack(ARGV, 5, 4 + n))
for k = 1, n do
  local c = ARGV[4 + k]
  if first[c] then
    kind[k] = 'dup'
  else
    first[c] = k
    local rec = recs[k]
    if rec then
      local s, a, scr, sid = string.match(rec, '^(%a)|(%d+)|(%d+)|(.*)$')
      arr[k] = a
      local keep = s == 'w'
      if (s == 'a' or s == 'c') and sid ~= '' then
        local exp = redis.call('ZSCORE', KEYS[5], sid)
        keep = exp and tonumber(exp) > now
      end
      if keep then kind[k], sc[k], st[k] = 'keep', scr, s else kind[k] = 'place' end
    else
      kind[k] = 'new'
      newCount = newCount + 1
    end
    if kind[k] ~= 'keep' then placeCount = placeCount + 1 end
  end
end
-- Pass 2: number the new arrivals and the FIFO places in batch order with
-- one INCRBY each, and write all places with one ZADD and one HSET.
local nextArr = 0
if newCount > 0 then nextArr = redis.call('INCRBY', KEYS[3], newCount) - newCount end
local nextFifo = 0
if open and placeCount > 0 then nextFifo = redis.call('INCRBY', KEYS[4], placeCount) - placeCount end
local zadd, hset, out = {}, {}, {}
local z, o = 0, 0
for k = 1, n do
  local c = ARGV[4 + k]
  local kk = kind[k]
  if kk == 'new' then
    nextArr = nextArr + 1
    arr[k] = string.format('%d', nextArr)
  end
  if kk == 'new' or kk == 'place' then
    local score
    if not open then
      if fifoMode then score = arr[k] else score = ARGV[4 + n + k] end
    else
      nextFifo = nextFifo + 1
      score = string.format('%d', base + nextFifo)
    end
    sc[k], st[k] = score, 'w'
    zadd[z + 1], zadd[z + 2] = score, c
    hset[z + 1], hset[z + 2] = c, 'w|' .. arr[k] .. '|' .. score .. '|'
    z = z + 2
    out[o + 1] = 1
  elseif kk == 'keep' then
    out[o + 1] = 0
  else
    local f = first[c]
    arr[k], sc[k], st[k] = arr[f], sc[f], st[f]
    out[o + 1] = 0
  end
  out[o + 2], out[o + 3] = st[k], sc[k]
  o = o + 3
end
if z > 0 then
  redis.call('ZADD', KEYS[2], unpack(zadd))
  redis.call('HSET', KEYS[1], unpack(hset))
end
out[o + 1] = gen
return out
`)

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
// least one person per tick is let in while a seat is free, so sessions
// of people who left without saying so cannot stall the end of a sale.
// KEYS: epoch, active, queue, customers, remaining, prerank, watermark, admitted, admitlog, inventory.
// ARGV: epoch, maxActive, batch, claimMs, paused 0|1, salesOpenMs, sessionNonce, postOpenBase.
// Returns {admitted (-1 when fenced), active, reason}; reason 0 ok,
// 1 paused, 2 not open, 3 sold out, 4 every unsold seat held.
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
if remaining and inv[1] and inv[2] then
  local free = remaining - tonumber(inv[1])
  if free <= 0 then return {0, active, 4} end
  local choosing = math.max(active - tonumber(inv[2]), 0)
  n = math.min(n, math.max(free - choosing, 1))
end
local popped = redis.call('ZPOPMIN', KEYS[3], n)
local exp = now + tonumber(ARGV[4])
local base = tonumber(ARGV[8])
local count = 0
local last
for i = 1, #popped, 2 do
  local c, sc = popped[i], popped[i + 1]
  local rec = redis.call('HGET', KEYS[4], c)
  local arr = string.match(rec or '', '^%a|(%d+)|') or '0'
  count = count + 1
  local sid = ARGV[7] .. '-' .. count
  local qs, cohort
  if tonumber(sc) < base then
    qs, cohort = string.format('%d', redis.call('INCR', KEYS[6])), 'p'
  else
    qs, cohort = string.format('%.0f', tonumber(sc) - base), 'f'
  end
  redis.call('ZADD', KEYS[2], exp, sid)
  redis.call('HSET', KEYS[4], c, 'a|' .. arr .. '|' .. sc .. '|' .. sid)
  redis.call('RPUSH', KEYS[9], c .. '|' .. arr .. '|' .. qs .. '|' .. cohort)
  last = sc
end
if count > 0 then
  redis.call('SET', KEYS[7], last)
  redis.call('INCRBY', KEYS[8], count)
end
return {count, active + count, 0}
`)

// claimScript is the first poll after admission (and any later one): it
// returns the session, moving it from the claim window to the token TTL
// the first time.
// KEYS: customers, active. ARGV: customer, score, tokenTTLms.
// Returns {status, sessionId, expiryMs}; status is waiting, admitted,
// expired, left or none (not this customer's place).
var claimScript = redis.NewScript(`
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return {'none'} end
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
// slot at once. KEYS: customers, queue, active. ARGV: customer, score.
// Returns 1, or 0 when the place is not this customer's.
var leaveScript = redis.NewScript(`
local rec = redis.call('HGET', KEYS[1], ARGV[1])
if not rec then return 0 end
local st, a, sc, sid = string.match(rec, '^(%a)|(%d+)|(%d+)|(.*)$')
if tonumber(sc) ~= tonumber(ARGV[2]) then return 0 end
if st == 'w' then redis.call('ZREM', KEYS[2], ARGV[1]) end
if (st == 'a' or st == 'c') and sid ~= '' then redis.call('ZREM', KEYS[3], sid) end
redis.call('HSET', KEYS[1], ARGV[1], 'l|' .. a .. '|' .. sc .. '|')
return 1
`)

// snapshotScript reads what polls and the stats are answered from: queue
// length, active sessions, admissions, inventory (remaining, held, sold),
// the admission watermark and up to ARGV[1]+1 (rank, score) samples of the
// queue.
// KEYS: queue, active, admitted, remaining, watermark, inventory, generation.
// Returns {waiting, active, admitted, remaining or empty, watermark or empty, nowMs,
// held or empty, sold or empty, generation or empty, rank1, score1, ...}.
var snapshotScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = redis.call('ZCARD', KEYS[1])
local active = redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf')
local inv = redis.call('HMGET', KEYS[6], 'held', 'sold')
local out = {n, active, redis.call('GET', KEYS[3]) or '0', redis.call('GET', KEYS[4]) or '', redis.call('GET', KEYS[5]) or '', string.format('%.0f', now),
  inv[1] or '', inv[2] or '', redis.call('GET', KEYS[7]) or ''}
if n > 0 then
  local samples = tonumber(ARGV[1])
  local step = math.max(1, math.ceil(n / samples))
  local r = 0
  while true do
    local e = redis.call('ZRANGE', KEYS[1], r, r, 'WITHSCORES')
    if #e == 2 then
      table.insert(out, r)
      table.insert(out, e[2])
    end
    if r == n - 1 then break end
    r = math.min(r + step, n - 1)
  end
end
return out
`)
