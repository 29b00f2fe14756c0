-- jqlua's portable runtime: the J table of jqlua/runtime*.go written in plain Lua,
-- for chunks that run where no Go runtime exists (Karmada's interpreter). Every
-- primitive computes what gojq computes, error messages included (see
-- portable.go). It needs only Lua 5.1's base library and string, table and
-- math: no metatables (Karmada's sandbox cannot set them), and no string
-- repetition or substitution, which karta's export leaves out.
--
-- Values: null is J.null; booleans, numbers and strings are Lua's; arrays and
-- objects are plain tables. Tables this runtime makes are recorded in KIND; a
-- table it did not make (Karmada's decoding of an object) is an array when
-- t[1] is set and an object otherwise, so an empty one reads as an empty
-- object, except that a number index, a slice, a number key of has and array
-- operands treat it as an empty array. An absent member reads as null.
--
-- jq errors are raised as tables marked with ERR (JX.message reads them); any
-- other Lua error passes through J.try. Raising closes gopher-lua's open
-- upvalues when no error handler is set (issue #448): generated code
-- therefore keeps every variable a closure writes in a table.
local J, JX = (function()
  local J, JX = {}, {}
  local NULL, KIND, ERR = {}, {}, {}
  local ARRAY, OBJECT = "array", "object"
  local zero = 0
  local NEGZERO = -zero
  local LIMIT = 10000
  local TWO63 = 2 ^ 63
  local EXACT = 2 ^ 53
  local MAXFLOAT = (2 - 2 ^ -52) * 2 ^ 1023
  local INF = 1 / zero
  local MAXREPEAT = 2 ^ 31 - 1
  local floor, ceil, abs, fmod = math.floor, math.ceil, math.abs, math.fmod
  local sbyte, schar, ssub, sformat, sfind, smatch = string.byte, string.char, string.sub, string.format, string.find, string.match
  local concat, sort = table.concat, table.sort
  local type, pairs, next, pcall, error, tonumber, select = type, pairs, next, pcall, error, tonumber, select

  J.null = NULL
  J.negzero = NEGZERO

  local function newArray() local t = {}; KIND[t] = ARRAY; return t end
  local function newObject() local t = {}; KIND[t] = OBJECT; return t end

  -- kindOf is the jq type of a value.
  local function kindOf(v)
    local t = type(v)
    if t == "table" then
      if v == NULL then return "null" end
      return KIND[v] or v[1] ~= nil and ARRAY or OBJECT
    elseif t == "string" or t == "number" or t == "boolean" then return t
    elseif t == "nil" then return "null" end
    error("jq: a " .. t .. " is not a JSON value", 0)
  end

  -- blank reports a table Karmada decoded from an empty array or object.
  local function blank(v) return KIND[v] == nil and next(v) == nil end

  -- arrayLike is kindOf(v) == "array", blank tables included.
  local function arrayLike(v, k)
    return k == ARRAY or k == OBJECT and blank(v)
  end

  local function orNull(x) if x == nil then return NULL end return x end

  local function raise(msg, value, hasValue) error({[ERR] = true, msg = msg, value = value, hv = hasValue}, 0) end

  -- UTF-8, as Go's unicode/utf8 reads it: an invalid byte is a rune of one
  -- byte.
  local function runeSize(s, i)
    local c, c1 = sbyte(s, i, i + 1)
    if c < 0x80 then return 1, true end
    -- a lead byte from C2 to F4; the second byte within 80..BF, less
    -- after E0, ED, F0 and F4 (overlong forms, surrogates, past U+10FFFF)
    local n = c >= 0xF0 and 4 or c >= 0xE0 and 3 or 2
    local lo, hi = c == 0xE0 and 0xA0 or c == 0xF0 and 0x90 or 0x80, c == 0xED and 0x9F or c == 0xF4 and 0x8F or 0xBF
    if c < 0xC2 or c > 0xF4 or c1 == nil or c1 < lo or c1 > hi then return 1, false end
    for j = i + 2, i + n - 1 do
      local cj = sbyte(s, j)
      if cj == nil or cj < 0x80 or cj > 0xBF then return 1, false end
    end
    return n, true
  end

  -- runeStarts returns the byte position of each rune of s, and #s + 1.
  local function runeStarts(s)
    local starts, i, n = {}, 1, #s
    while i <= n do
      starts[#starts + 1] = i
      i = i + runeSize(s, i)
    end
    starts[#starts + 1] = n + 1
    return starts
  end

  local function runeCount(s)
    local count, i, n = 0, 1, #s
    while i <= n do
      i = i + runeSize(s, i)
      count = count + 1
    end
    return count
  end

  local REPLACEMENT = "\239\191\189"

  -- Numbers. A number is a gojq int exactly when it is int-like: integral,
  -- within ±2^53 and not -0 (see doc.go).
  local function intLike(f) return f == floor(f) and f >= -EXACT and f <= EXACT and not (f == 0 and 1 / f < 0) end

  -- trunc is gojq's floatToInt: truncation, clamped to the int range.
  local function trunc(x)
    if x >= -TWO63 and x < TWO63 then
      if x >= 0 then return floor(x) end
      return -floor(-x)
    end
    if x > 0 then return TWO63 end
    return -TWO63
  end

  local function clampIndex(i, lo, hi)
    if i < 0 then i = i + hi end
    if i < lo then return lo elseif i < hi then return i end
    return hi
  end

  -- decimal reads a number text as Go's strconv.ParseFloat: gopher-lua's
  -- tonumber wants a point before an exponent and no '+'.
  local function decimal(s)
    local neg = sbyte(s, 1) == 45
    if neg or sbyte(s, 1) == 43 then s = ssub(s, 2) end
    local m, e = smatch(s, "^([^eE]*)[eE](.*)$")
    if m == nil then m, e = s, "0" end
    if sbyte(e, 1) == 43 then e = ssub(e, 2) end
    if not sfind(m, ".", 1, true) then m = m .. "." end
    local n = tonumber(m .. "e" .. e)
    if n == nil then
      -- out of range: ±Inf, or 0 for a zero mantissa or a large negative exponent
      if not sfind(m, "[1-9]") or sbyte(e, 1) == 45 then n = 0 else n = INF end
    end
    if neg then n = -n end
    return n
  end

  -- formatNumber is gojq's encoding of a number: an int-like one as an
  -- integer, any other in the shortest digits that read back, in 'f'
  -- notation, or 'e' notation below 1e-6 and from 1e21 with no leading zero
  -- in its exponent (1e-7). Those digits are Go's %g (gopher-lua's
  -- string.format is Go's fmt), which chooses 'e' notation by other bounds
  -- (beyond these too): its 'f' notation (-0 too) is gojq's.
  -- ZEROS: 'f' notation pads at most 20.
  local ZEROS = "00000000000000000000"
  local function formatNumber(f)
    if intLike(f) then return sformat("%d", f) elseif f ~= f then return "null" end
    f = f > MAXFLOAT and MAXFLOAT or f < -MAXFLOAT and -MAXFLOAT or f
    local s, ax = sformat("%g", f), abs(f)
    local sign, digit, rest, e = smatch(s, "^(-?)(%d)%.?(%d*)e(.*)$")
    if sign == nil then return s end
    if ax < 1e-6 or ax >= 1e21 then
      local es, ed = smatch(e, "^(.)0?(%d+)$")
      return sign .. digit .. (rest ~= "" and "." .. rest or "") .. "e" .. es .. ed
    end
    local digits, exp = digit .. rest, tonumber(e)
    if exp >= #digits - 1 then return sign .. digits .. ssub(ZEROS, 1, exp - #digits + 1) end
    if exp >= 0 then return sign .. ssub(digits, 1, exp + 1) .. "." .. ssub(digits, exp + 2) end
    return sign .. "0." .. ssub(ZEROS, 1, -exp - 1) .. digits
  end

  local function sortedKeys(t)
    local ks = {}
    for k in pairs(t) do ks[#ks + 1] = k end
    sort(ks)
    return ks
  end

  -- JSON, as gojq's encoder writes it: ESCAPES are the bytes it escapes by
  -- name; it writes any other control byte and DEL as \u00XX, and a byte of
  -- invalid UTF-8 as \ufffd.
  local ESCAPES = {[34] = '\\"', [92] = "\\\\", [8] = "\\b", [12] = "\\f", [10] = "\\n", [13] = "\\r", [9] = "\\t"}

  local function quote(s)
    local buf, start, i = {'"'}, 1, 1
    while i <= #s do
      local b, size, ok = sbyte(s, i), 1, true
      if b >= 0x80 then size, ok = runeSize(s, i) end
      if b < 32 or b == 34 or b == 92 or b == 127 or not ok then
        buf[#buf + 1] = ssub(s, start, i - 1) .. (ESCAPES[b] or ok and sformat("\\u%04x", b) or "\\ufffd")
        start = i + 1
      end
      i = i + size
    end
    return concat(buf) .. ssub(s, start) .. '"'
  end

  -- put appends s to the buffer b and reports whether b is full: b.n
  -- counts its bytes, and encoding stops at b.limit (Preview's 32).
  local function put(b, s)
    b[#b + 1], b.n = s, b.n + #s
    return b.n >= b.limit
  end

  -- encode writes v's JSON to b, object keys sorted; true means b is full
  -- and writing stopped. A scalar's JSON is one string; an empty array or
  -- object, whose loop writes nothing, is its brackets.
  local function encode(v, b)
    local k, keys, sep, close = kindOf(v), nil, "[", "]"
    if k == OBJECT then keys, sep, close = sortedKeys(v), "{", "}"
    elseif k ~= ARRAY then
      return put(b, k == "string" and quote(v) or k == "number" and formatNumber(v) or k == "null" and k or tostring(v))
    end
    for i = 1, keys and #keys or #v do
      local x = v[i]
      if keys then sep, x = sep .. quote(keys[i]) .. ":", v[keys[i]] end
      if put(b, sep) or encode(x, b) then return true end
      sep = ","
    end
    if sep ~= "," then close = sep .. close end
    return put(b, close)
  end

  local function tojson(v) local b = {n = 0, limit = INF}; encode(v, b); return concat(b) end

  -- preview is gojq's Preview: v's JSON, when longer than 30 bytes cut to
  -- fit a trailing " ..." (closed as v's kind is) at a rune boundary: the
  -- JSON is valid UTF-8, so the cut steps back over continuation bytes.
  local TRAILING = {string = ' ..."', array = " ...]", object = " ...}"}
  local function preview(v)
    local b = {n = 0, limit = 32}
    encode(v, b)
    local s, trailing = concat(b), TRAILING[kindOf(v)] or " ..."
    if #s <= 30 then return s end
    local cut = 30 - #trailing
    while sbyte(s, cut + 1) >= 0x80 and sbyte(s, cut + 1) < 0xC0 do cut = cut - 1 end
    return ssub(s, 1, cut) .. trailing
  end

  -- typeName is gojq's TypeOf.
  local function typeName(v) return kindOf(v) end

  -- tep is gojq's typeErrorPreview: `number (1)`, or `null`.
  local function tep(v)
    local k = kindOf(v)
    return k == "null" and k or k .. " (" .. preview(v) .. ")"
  end

  -- tepKind is tep as an export words a refused value, its kind alone
  -- (`number`, `null`): ShakePortable puts it in tep's place, so that a
  -- script carries the JSON encoder only where its jq encodes (tojson).
  local function tepKind(v) return kindOf(v) end

  local function binopError(name, l, r)
    raise("cannot " .. name .. ": " .. tep(l) .. " and " .. tep(r))
  end

  local function func0Error(name, v)
    raise(name .. " cannot be applied to: " .. tep(v))
  end

  local function func1Error(name, v, x)
    raise(name .. "(" .. preview(x) .. ") cannot be applied to: " .. tep(v))
  end

  -- compare is gojq.Compare: jq's order within a type and null < false <
  -- true < numbers < strings < arrays < objects across types.
  local compare

  -- ORDER ranks the types; false is 1 and true 2.
  local ORDER = {null = 0, boolean = 1, number = 3, string = 4, array = 5, object = 6}

  -- compareValues is compare for anything but two numbers or two
  -- strings: by type, then arrays element by element and objects by their
  -- sorted keys, then by the values of those keys.
  local function compareValues(a, b)
    local ka, kb = kindOf(a), kindOf(b)
    if ka ~= kb then
      if ka == OBJECT and kb == ARRAY and blank(a) then ka = ARRAY
      elseif kb == OBJECT and ka == ARRAY and blank(b) then kb = ARRAY end
    end
    local oa, ob = a == true and 2 or ORDER[ka], b == true and 2 or ORDER[kb]
    if oa ~= ob then return oa < ob and -1 or 1 end
    if ka == ARRAY or ka == OBJECT then
      local ak, bk = a, b
      if ka == OBJECT then ak, bk = sortedKeys(a), sortedKeys(b) end
      for i = 1, #ak do
        if bk[i] == nil then return 1 end
        local c = compare(ak[i], bk[i])
        if c ~= 0 then return c end
      end
      if #ak < #bk then return -1 end
      if ka == OBJECT then
        for _, key in ipairs(ak) do
          local c = compare(a[key], b[key])
          if c ~= 0 then return c end
        end
      end
    end
    -- null, or one boolean
    return 0
  end

  compare = function(a, b)
    -- Two numbers or two strings, the common case, compare as Lua's.
    local ta = type(a)
    if ta ~= type(b) or ta ~= "number" and ta ~= "string" then return compareValues(a, b) end
    if a < b or a ~= a then return -1 elseif a == b then return 0 end
    return 1
  end

  function J.eq(a, b) return compare(a, b) == 0 end
  function J.ne(a, b) return compare(a, b) ~= 0 end
  function J.lt(a, b) return compare(a, b) < 0 end
  function J.le(a, b) return compare(a, b) <= 0 end
  function J.gt(a, b) return compare(a, b) > 0 end
  function J.ge(a, b) return compare(a, b) >= 0 end

  -- cmpn is compare(v, n) for a number n (a comparison with a number
  -- literal), without compareValues: null and booleans are below every
  -- number, strings, arrays and objects above.
  function J.cmpn(v, n)
    if type(v) == "number" then
      if v < n or v ~= v then return -1 elseif v == n then return 0 end
      return 1
    end
    local k = kindOf(v)
    if k == "null" or k == "boolean" then return -1 end
    return 1
  end

  -- Indexing.
  local function indexString(s, i)
    local starts = runeStarts(s)
    local l = #starts - 1
    i = clampIndex(i, -1, l)
    if i >= 0 and i < l then
      local size, ok = runeSize(s, starts[i + 1])
      if not ok then return REPLACEMENT end
      return ssub(s, starts[i + 1], starts[i + 1] + size - 1)
    end
    return NULL
  end

  -- indices is gojq's indices of the subarray xs in vs.
  local function indices(vs, xs)
    local out, m = newArray(), #xs
    if m == 0 then return out end
    for i = 0, #vs - m do
      local same = true
      for j = 1, m do
        if compare(vs[i + j], xs[j]) ~= 0 then same = false; break end
      end
      if same then out[#out + 1] = i end
    end
    return out
  end

  -- sliceBounds reads a slice's start (rounded down) and end (rounded up)
  -- into [0, n]; err names a bound that is not a number.
  local function sliceBounds(n, from, to)
    local start, stop = 0, n
    if from ~= NULL and from ~= nil then
      if type(from) ~= "number" then return nil, nil, from end
      start = clampIndex(trunc(floor(from)), 0, n)
    end
    if to ~= NULL and to ~= nil then
      if type(to) ~= "number" then return nil, nil, to end
      local e
      if to > -1 and to < 0 or to ~= to then e = TWO63 else e = trunc(ceil(to)) end
      stop = clampIndex(e, start, n)
    end
    return start, stop
  end

  -- slice returns v[from:to], or nil and gojq's message.
  local function slice(v, from, to)
    local k = kindOf(v)
    if k == "null" then return NULL end
    if arrayLike(v, k) then
      local start, stop, bad = sliceBounds(#v, from, to)
      if start == nil then return nil, "expected a number for indexing an array but got: " .. tep(bad) end
      local out = newArray()
      for i = start + 1, stop do out[#out + 1] = v[i] end
      return out
    elseif k == "string" then
      local starts = runeStarts(v)
      local start, stop, bad = sliceBounds(#starts - 1, from, to)
      if start == nil then return nil, "expected a number for indexing a string but got: " .. tep(bad) end
      return ssub(v, starts[start + 1], starts[stop + 1] - 1)
    end
    return nil, "expected an array but got: " .. tep(v)
  end

  -- index returns v[k] as gojq's _index, or nil and gojq's message.
  local function index(v, k)
    local kk, vk = kindOf(k), kindOf(v)
    if kk == "string" then
      if vk == "null" then return NULL end
      if vk == OBJECT then return orNull(v[k]) end
      return nil, "expected an object but got: " .. tep(v)
    elseif kk == "number" then
      if vk == "null" then return NULL end
      if arrayLike(v, vk) then
        local n = #v
        local i = clampIndex(trunc(k), -1, n)
        if i >= 0 and i < n then return v[i + 1] end
        return NULL
      end
      if vk == "string" then return indexString(v, trunc(k)) end
      return nil, "expected an array but got: " .. tep(v)
    elseif kk == ARRAY then
      if vk == "null" then return NULL end
      if arrayLike(v, vk) then return indices(v, k) end
      return nil, "expected an array but got: " .. tep(v)
    elseif kk == OBJECT then
      if vk == "null" then return NULL end
      local from, to = k.start, k["end"]
      if from == nil or to == nil then return nil, 'expected "start" and "end" for slicing but got: ' .. tep(k) end
      return slice(v, from, to)
    end
    if arrayLike(v, vk) then return nil, "expected a number for indexing an array but got: " .. tep(k) end
    if vk == "string" then return nil, "expected a number for indexing a string but got: " .. tep(k) end
    return nil, "expected a string for object key but got: " .. tep(k)
  end


  -- J.field(v, k) is J.index(v, k) for a string k: what portable
  -- accessors call for a constant key (.a, ."a", .["a"]), so that a chunk
  -- that reads only by name carries none of the number, slice and array
  -- indexing index does. It decides what index decides for a string key
  -- without index's calls.
  function J.field(v, k)
    if v == nil or v == NULL then return NULL end
    -- kv is false for a value that is not a table
    local kv = type(v) == "table" and KIND[v]
    if kv == OBJECT or kv == nil and v[1] == nil then
      local x = v[k]
      if x == nil then return NULL end
      return x
    end
    raise("expected an object but got: " .. tep(v))
  end

  function J.index(v, k)
    -- A string key, the common case, is J.field's.
    if type(k) == "string" then return J.field(v, k) end
    local x, err = index(v, k)
    if err ~= nil then raise(err) end
    return x
  end

  function J.index_opt(v, k) return (index(v, k)) end

  function J.slice(v, from, to)
    local x, err = slice(v, from, to)
    if err ~= nil then raise(err) end
    return x
  end

  function J.slice_opt(v, from, to) return (slice(v, from, to)) end

  -- Iteration: for _, x in J.each(v) do … end.
  local function iterArray(t, i)
    i = i + 1
    local x = t[i]
    if x == nil then return nil end
    return i, x
  end

  local function iterKeyed(st, i)
    i = i + 1
    local key = st.keys[i]
    if key == nil then return nil end
    return i, orNull(st.obj[key])
  end

  local function iterNone() return nil end

  local function each(v, opt)
    local k = kindOf(v)
    if k == ARRAY then return iterArray, v, 0 end
    if k == OBJECT then return iterKeyed, {keys = sortedKeys(v), obj = v}, 0 end
    if not opt then raise("cannot iterate over: " .. tep(v)) end
    return iterNone, nil, 0
  end

  function J.each(v) return each(v, false) end
  function J.each_opt(v) return each(v, true) end

  -- members returns the values of an array, or the values of an object in
  -- key order with the keys; nil for anything else.
  local function members(v)
    local k = kindOf(v)
    if k == ARRAY then
      local vals = {}
      for i = 1, #v do vals[i] = v[i] end
      return vals
    elseif k == OBJECT then
      local keys, vals = sortedKeys(v), {}
      for i, key in ipairs(keys) do vals[i] = v[key] end
      return vals, keys
    end
    return nil
  end

  -- Construction, outputs and errors.
  J.array = newArray
  J.object = newObject

  -- J.object_of makes a Lua table an object: the accessors build one of
  -- constant keys as a constructor, J.object_of({path = p, replicas = 1}).
  function J.object_of(t) KIND[t] = OBJECT; return t end

  -- J.array_of makes a Lua sequence an array: the accessors build one of
  -- items of one output each as a constructor, J.array_of({a, "spec"}).
  function J.array_of(t) KIND[t] = ARRAY; return t end

  function J.make_object(...)
    local args = {...}
    local obj = newObject()
    for i = select("#", ...) - 1, 1, -2 do
      local key = args[i]
      if type(key) ~= "string" then raise("expected a string for object key but got: " .. tep(key)) end
      if obj[key] == nil then obj[key] = args[i + 1] end
    end
    return obj
  end

  function J.emit(out, x)
    local n = #out
    if n >= LIMIT then raise("too many outputs (limit 10000)") end
    out[n + 1] = x
  end

  -- The end of a compact accessor of one output (NewCompactPortableUnit):
  -- called without out, it returns x; else x is its output.
  function J.one(out, x)
    if out == nil then return x end
    J.emit(out, x)
  end

  function J.collect(acc, v)
    local out = newArray()
    acc(v, out)
    return out
  end

  function J.try(fn, v)
    local outs = {}
    local ok, e = pcall(fn, v, outs)
    if ok then return outs end
    if type(e) ~= "table" or not e[ERR] then error(e, 0) end
    if e.hv then return outs, e.value end
    return outs, e.msg
  end

  -- J.error_string is error of a value the translator knows is a string
  -- (`error("bad: " + .x)`): J.error without the encoder of other values.
  function J.error_string(v) raise("error: " .. v, v, true) end

  function J.error(v)
    if type(v) == "string" then J.error_string(v) end
    raise("error: " .. tojson(v), v, true)
  end

  -- Arithmetic, as gojq's operators on every type pair.
  local function repeatString(s, n)
    if n < 0 or n ~= n then return NULL end
    local c = n
    if c > MAXREPEAT then c = MAXREPEAT end
    c = trunc(c)
    if #s * c >= MAXREPEAT then raise("repeat string result too large: " .. preview(s) .. " * " .. preview(n)) end
    local parts, piece = {}, s
    while c > 0 do
      if c % 2 == 1 then parts[#parts + 1] = piece end
      c = floor(c / 2)
      if c > 0 then piece = piece .. piece end
    end
    return concat(parts)
  end

  local function splitString(s, sep)
    local out = newArray()
    if s == "" then return out end
    if sep == "" then
      local i = 1
      while i <= #s do
        local size = runeSize(s, i)
        out[#out + 1] = ssub(s, i, i + size - 1)
        i = i + size
      end
      return out
    end
    local init = 1
    while true do
      local a, b = sfind(s, sep, init, true)
      if a == nil then break end
      out[#out + 1] = ssub(s, init, a - 1)
      init = b + 1
    end
    out[#out + 1] = ssub(s, init)
    return out
  end

  local function plusArrays(a, b)
    if #a == 0 then return b end
    if #b == 0 then return a end
    local out = newArray()
    for i = 1, #a do out[i] = a[i] end
    for i = 1, #b do out[#out + 1] = b[i] end
    return out
  end

  local function plus(a, b)
    if type(a) == "number" and type(b) == "number" then return a + b end
    local ka, kb = kindOf(a), kindOf(b)
    if ka == "string" and kb == "string" then return a .. b end
    if ka == "null" then return b end
    if kb == "null" then return a end
    if arrayLike(a, ka) and arrayLike(b, kb) and (ka == ARRAY or kb == ARRAY) then ka, kb = ARRAY, ARRAY end
    if ka == ARRAY and kb == ARRAY then return plusArrays(a, b) end
    if ka == OBJECT and kb == OBJECT then
      if next(a) == nil then return b end
      if next(b) == nil then return a end
      local out = newObject()
      for key, x in pairs(a) do out[key] = x end
      for key, x in pairs(b) do out[key] = x end
      return out
    end
    binopError("add", a, b)
  end

  function J.plus(a, b) return plus(a, b) end

  -- J.plus_string is + where the translator knows one operand is a string
  -- (`"/" + .name`): plus's answer for it, the concatenation, the other
  -- operand when that is null, else plus's error, without plus's number,
  -- array and object cases. A script whose sums all have a string side
  -- carries none of them.
  function J.plus_string(a, b)
    if type(a) == "string" and type(b) == "string" then return a .. b end
    if a == NULL or a == nil then return b end
    if b == NULL or b == nil then return a end
    binopError("add", a, b)
  end

  -- J.plus_arrays is + of two arrays the accessor built (`[…] + […]`):
  -- plus's concatenation, which is all it can be.
  J.plus_arrays = plusArrays

  function J.minus(a, b)
    if type(a) == "number" and type(b) == "number" then return a - b end
    local ka, kb = kindOf(a), kindOf(b)
    if arrayLike(a, ka) and arrayLike(b, kb) and (ka == ARRAY or kb == ARRAY) then
      local out = newArray()
      for i = 1, #a do
        local keep = true
        for j = 1, #b do
          if compare(a[i], b[j]) == 0 then keep = false; break end
        end
        if keep then out[#out + 1] = a[i] end
      end
      return out
    end
    binopError("subtract", a, b)
  end

  local function deepMerge(l, r)
    local out = newObject()
    for key, x in pairs(l) do out[key] = x end
    for key, x in pairs(r) do
      local mine = out[key]
      if mine ~= nil and kindOf(mine) == OBJECT and kindOf(x) == OBJECT then x = deepMerge(mine, x) end
      out[key] = x
    end
    return out
  end

  function J.times(a, b)
    local ta, tb = type(a), type(b)
    if ta == "number" and tb == "number" then
      local res = a * b
      if res == 0 and intLike(a) and intLike(b) then return 0 end
      return res
    end
    if ta == "string" and tb == "number" then return repeatString(a, b) end
    if ta == "number" and tb == "string" then return repeatString(b, a) end
    if kindOf(a) == OBJECT and kindOf(b) == OBJECT then return deepMerge(a, b) end
    binopError("multiply", a, b)
  end

  function J.divide(a, b)
    local ta, tb = type(a), type(b)
    if ta == "number" and tb == "number" then
      if b == 0 then raise("cannot divide " .. tep(a) .. " by: " .. tep(b)) end
      local res = a / b
      if res == 0 and intLike(a) and intLike(b) then return 0 end
      return res
    end
    if ta == "string" and tb == "string" then return splitString(a, b) end
    binopError("divide", a, b)
  end

  function J.modulo(a, b)
    if type(a) == "number" and type(b) == "number" then
      if a ~= a or b ~= b then return zero / zero end
      local d = trunc(b)
      if d == 0 then raise("cannot modulo " .. tep(a) .. " by: " .. tep(b)) end
      local res = fmod(trunc(a), d)
      if res == 0 then return 0 end
      return res
    end
    binopError("modulo", a, b)
  end

  function J.negate(a)
    if type(a) == "number" then
      if a == 0 and intLike(a) then return 0 end
      return -a
    end
    raise("cannot negate: " .. tep(a))
  end

  function J.unary_plus(a)
    if type(a) == "number" then return a end
    raise("cannot plus: " .. tep(a))
  end

  -- Builtins.
  function J.length(v)
    local k = kindOf(v)
    if k == "null" then return 0
    elseif k == "number" then return abs(v)
    elseif k == "string" then return runeCount(v)
    elseif k == ARRAY then return #v
    elseif k == OBJECT then
      local n = 0
      for _ in pairs(v) do n = n + 1 end
      return n
    end
    func0Error("length", v)
  end

  function J.keys(v)
    local k = kindOf(v)
    local out = newArray()
    if k == ARRAY then
      for i = 1, #v do out[i] = i - 1 end
    elseif k == OBJECT then
      for i, key in ipairs(sortedKeys(v)) do out[i] = key end
    else
      func0Error("keys", v)
    end
    return out
  end

  function J.has(v, key)
    local k, kk = kindOf(v), kindOf(key)
    if k == "null" then return false end
    if arrayLike(v, k) and kk == "number" then
      local i = trunc(key)
      return i >= 0 and i < #v
    end
    if k == OBJECT and kk == "string" then return v[key] ~= nil end
    func1Error("has", v, key)
  end

  function J.to_entries(v)
    local vals, keys = members(v)
    if vals == nil then func0Error("keys", v) end
    local out = newArray()
    for i, x in ipairs(vals) do
      local e = newObject()
      if keys ~= nil then e.key = keys[i] else e.key = i - 1 end
      e.value = x
      out[i] = e
    end
    return out
  end

  -- sum adds values with +, skipping nulls, as gojq's add does.
  local function sum(vals)
    local acc = NULL
    for _, x in ipairs(vals) do
      if x ~= NULL then acc = plus(acc, x) end
    end
    return acc
  end

  function J.add(v)
    local vals = members(v)
    if vals == nil then func0Error("add", v) end
    return sum(vals)
  end

  function J.join(v, sep)
    local vals = members(v)
    if vals == nil then func1Error("join", v, sep) end
    if #vals == 0 then return "" end
    local seq = {}
    for i, x in ipairs(vals) do
      if i == 1 then seq[#seq + 1] = "" else seq[#seq + 1] = sep end
      local t = type(x)
      if t == "boolean" or t == "number" then x = tojson(x) end
      seq[#seq + 1] = x
    end
    return sum(seq)
  end

  local function tostr(v)
    local t = type(v)
    if t == "string" then return v end
    if t == "boolean" then
      if v then return "true" end
      return "false"
    end
    return tojson(v)
  end

  J.tostring = tostr

  -- J.tostring_key is tostring of a key of an array or an object, which
  -- the translator knows (`keys[] as $i | … ($i | tostring)`): the key
  -- itself, or gojq's text of the index, without tostring's encoder.
  function J.tostring_key(k)
    if type(k) == "string" then return k end
    return formatNumber(k)
  end
  J.tojson = tojson

  -- validNumber is gojq's lexer test of a tonumber text: a sign, then
  -- digits with at most one dot and a digit first or after the dot, then
  -- an exponent, e or E, a sign and digits. Two patterns rather than a
  -- scanner: a quarter of the bytes in every script that calls tonumber.
  local function validNumber(s)
    local m = smatch(s, "^[%+%-]?([0-9.]+)$") or smatch(s, "^[%+%-]?([0-9.]+)[eE][%+%-]?[0-9]+$")
    return m ~= nil and sfind(m, "^%.?[0-9]") ~= nil and not sfind(m, "%..*%.")
  end

  function J.tonumber(v)
    local t = type(v)
    if t == "number" then return v end
    if t ~= "string" then func0Error("tonumber", v) end
    if not validNumber(v) then raise("tonumber cannot be applied to " .. preview(v) .. ": invalid number") end
    local n = decimal(v)
    -- an integer text is a gojq int, which has no -0
    if n == 0 and not sfind(v, "[.eE]") then return 0 end
    return n
  end

  J.type = typeName

  local function extremum(name, v, isMin)
    if kindOf(v) ~= ARRAY then
      if kindOf(v) == OBJECT and blank(v) then return NULL end
      func0Error(name, v)
    end
    local n = #v
    if n == 0 then return NULL end
    local x = v[1]
    for i = 2, n do
      if (compare(x, v[i]) > 0) == isMin then x = v[i] end
    end
    return x
  end

  function J.min(v) return extremum("min", v, true) end
  function J.max(v) return extremum("max", v, false) end

  -- asciiMap maps the bytes from..to by delta, as gojq's strings.Map
  -- (which also replaces invalid UTF-8 with U+FFFD).
  local function asciiMap(s, from, to, delta)
    local out, i, n = {}, 1, #s
    while i <= n do
      local b = sbyte(s, i)
      if b < 0x80 then
        if b >= from and b <= to then b = b + delta end
        out[#out + 1] = schar(b)
        i = i + 1
      else
        local size, ok = runeSize(s, i)
        if ok then out[#out + 1] = ssub(s, i, i + size - 1) else out[#out + 1] = REPLACEMENT end
        i = i + size
      end
    end
    return concat(out)
  end

  function J.ascii_downcase(v)
    if type(v) ~= "string" then func0Error("ascii_downcase", v) end
    return asciiMap(v, 65, 90, 32)
  end

  function J.ascii_upcase(v)
    if type(v) ~= "string" then func0Error("ascii_upcase", v) end
    return asciiMap(v, 97, 122, -32)
  end

  local function strings2(name, v, x)
    if type(v) ~= "string" or type(x) ~= "string" then func1Error(name, v, x) end
  end

  function J.startswith(v, x)
    strings2("startswith", v, x)
    return ssub(v, 1, #x) == x
  end

  function J.endswith(v, x)
    strings2("endswith", v, x)
    return #x <= #v and ssub(v, #v - #x + 1) == x
  end

  function J.ltrimstr(v, x)
    strings2("ltrimstr", v, x)
    if ssub(v, 1, #x) == x then return ssub(v, #x + 1) end
    return v
  end

  function J.rtrimstr(v, x)
    strings2("rtrimstr", v, x)
    if #x <= #v and ssub(v, #v - #x + 1) == x then return ssub(v, 1, #v - #x) end
    return v
  end

  function J.split(v, x)
    strings2("split", v, x)
    return splitString(v, x)
  end

  -- JX is the boundary of the runtime: what the code around generated
  -- accessors needs, and no primitive of theirs.
  JX.kind = kindOf

  -- JX.number is gojq's text of a number (J.tostring of one) without the
  -- JSON encoder J.tostring carries for arrays and objects: an instance id
  -- that is a number is named by it, and an export that encodes nothing
  -- else then carries no encoder.
  JX.number = formatNumber

  -- JX.message returns the message of a jq error value, or nil.
  function JX.message(e) if type(e) == "table" and e[ERR] then return e.msg end end

  -- JX.plain turns a value into what Karmada's own decoding would give:
  -- null members and elements left out, and every table a new one. A table
  -- of the input placed twice ({a: .x, b: .x}) would otherwise be one Lua
  -- table reached twice in the result, which Karmada's JSON encoder refuses
  -- ("cannot encode recursively nested tables"); a copy is a tree of its own.
  local function plain(v)
    if v == NULL then return nil end
    if type(v) ~= "table" then return v end
    local out = {}
    if KIND[v] == ARRAY then
      for i = 1, #v do out[#out + 1] = plain(v[i]) end
    else
      for key, x in pairs(v) do out[key] = plain(x) end
    end
    return out
  end
  JX.plain = plain

  return J, JX
end)()
