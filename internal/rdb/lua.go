package rdb

// luaNow is the prelude that sets `now` to the server time in
// milliseconds, then luaLib.
const luaNow = `
local __t = redis.call('TIME')
local now = tonumber(__t[1]) * 1000 + math.floor(tonumber(__t[2]) / 1000)
` + luaLib

// luaLib is the prelude of every script. It defines the variadic helpers,
// which every script that passes a list of its own making to a command
// uses, and the type check that lets a script check before it writes:
//
// callk(cmd, key, list[, i, j]) is redis.call(cmd, key, list[i..j]...) sent
// in chunks of at most luaChunk values, because Lua's unpack fails past
// about 8,000 values (LUAI_MAXCSTACK), which a script must never reach
// after it has written. Only commands whose effect is the same in chunks
// use it (HSET, HDEL, HMGET, ZADD, ZREM, SADD, SREM, LPUSH, ...). It
// returns the concatenated replies of a command that answers with an array
// (HMGET: one value per field, false for a missing one) and the sum of the
// integer replies of the others.
//
// calln(cmd, list) is the same for a command without a key argument of
// its own (DEL, MGET).
//
// want_type(key, type) fails the script with a WRONGTYPE error when key
// holds a value of another type: a script checks each key it will write
// before its first write.
const luaLib = `
local function __callv(cmd, key, list, i, j)
  i, j = i or 1, j or #list
  local out, sum = {}, 0
  while i <= j do
    local e = math.min(i + ` + luaChunk + ` - 1, j)
    local r
    if key then r = redis.call(cmd, key, unpack(list, i, e)) else r = redis.call(cmd, unpack(list, i, e)) end
    if type(r) == 'table' then
      for k = 1, #r do out[#out + 1] = r[k] end
    elseif type(r) == 'number' then
      sum = sum + r
    end
    i = e + 1
  end
  return out, sum
end
local function callk(cmd, key, list, i, j) return __callv(cmd, key, list, i, j) end
local function calln(cmd, list) return __callv(cmd, nil, list) end
local function want_type(key, t)
  local have = redis.call('TYPE', key).ok
  if have ~= t and have ~= 'none' then
    error({err = 'WRONGTYPE ' .. key .. ' holds a ' .. have .. ', not a ' .. t})
  end
end
`

// luaChunk is how many values callk and calln pass to one command: even
// (field/value and score/member pairs stay whole) and well under Lua's
// unpack bound.
const luaChunk = "4000"

// luaHistory is the prelude that defines push_history(key, record, limit,
// age_ms) and push_history_many(key, records, limit, age_ms): LPUSH the
// records (oldest first, so the newest ends at the head, in one call),
// trim to limit, drop records older than age from the tail (at most 16 a
// call) and let the whole list expire after age without writes; they
// return false, writing nothing, when the key holds another type (a
// foreign value), so the rest of the script still runs. It also
// defines incr(key, field, n), an HINCRBY that resets a counter holding
// garbage to n instead of failing the script: a script that fails half way
// keeps its earlier writes (Redis does not roll back), so one corrupt
// counter must not stop the claims of every other task. Every redis.call
// costs a script about as much as the command itself, so these make as few
// as they can: the LPUSH's error stands for a TYPE check, and its length
// tells whether LTRIM has anything to do and whether the list was just
// created, whose tail is then a record in hand: its age is checked without
// the LINDEX. A record's age is its end_ms (or fire, in a record without
// end_ms), read with a string match of the number (hist_ms; cjson.decode
// only for a record the match does not read: a foreign or odd one). A
// limit under 1 keeps no history: they write nothing and return true.
const luaHistory = `
local function incr(key, field, n)
  local r = redis.pcall('HINCRBY', key, field, n)
  if type(r) == 'table' and r.err then redis.pcall('HSET', key, field, n) end
end
local function hist_ms(rec)
  local v = string.match(rec, '"end_ms":(%-?%d+)[,}]')
  if not v and not string.find(rec, '"end_ms"', 1, true) then v = string.match(rec, '"fire":(%-?%d+)[,}]') end
  if v then return tonumber(v) end
  local ok, r = pcall(cjson.decode, rec)
  if ok and type(r) == 'table' then return tonumber(r.end_ms or r.fire) end
  return nil
end
local function push_history_many(key, records, limit, age)
  if limit < 1 then return true end -- no history kept (WithHistory 0): nothing written
  local n = #records
  local len = redis.pcall('LPUSH', key, unpack(records))
  if type(len) ~= 'number' then return false end -- WRONGTYPE: nothing written
  if len == n then
    -- A new list: it holds records[n - kept + 1 .. n] once trimmed, its
    -- tail first, in hand; one LTRIM (or DEL) trims by count and age.
    local kept = math.min(len, limit)
    local old = 0
    while old < 16 and old < kept do
      local ms = hist_ms(records[n - kept + 1 + old])
      if ms and ms >= now - age then break end
      old = old + 1
    end
    if old == kept then redis.call('DEL', key) return true end
    if kept - old < len then redis.call('LTRIM', key, 0, kept - old - 1) end
  else
    if len > limit then redis.call('LTRIM', key, 0, limit - 1) end
    for _ = 1, 16 do
      local tail = redis.call('LINDEX', key, -1)
      if not tail then break end
      local ms = hist_ms(tail)
      if ms and ms >= now - age then break end
      redis.call('RPOP', key)
    end
  end
  redis.call('PEXPIRE', key, age)
  return true
end
local function push_history(key, record, limit, age) return push_history_many(key, {record}, limit, age) end
`

// luaOwner defines owner_split(v): the claim and the due time (a string of
// digits, or nil for a bare claim id) of a jobs:owner value (OwnerValue).
const luaOwner = `
local function owner_split(v)
  local i = string.find(v, '|%d+$')
  if i then return string.sub(v, 1, i - 1), string.sub(v, i + 1) end
  return v, nil
end
`
