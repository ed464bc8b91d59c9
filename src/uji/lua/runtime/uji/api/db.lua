-- uji.db.open(path): a SQLite database with :exec, :query, :transaction and :close.
local uji, host, lib = ...
local call, check, clean = lib.call, lib.check, lib.clean

local Db = {}
Db.__index = Db

local function sql_args(self, sql, params, name)
  check(self._conn ~= nil, name .. ": the database is closed")
  check(type(sql) == "string", name .. " expects SQL text")
  check(params == nil or type(params) == "table", name .. ": params must be a list or a table")
end

-- Runs SQL (several statements when there are no params); the number of rows changed.
function Db:exec(sql, params)
  sql_args(self, sql, params, "db:exec")
  return call(host.db_exec, self._conn, clean(sql), params and clean(params))
end

-- Runs a query; its rows as tables of column = value.
function Db:query(sql, params)
  sql_args(self, sql, params, "db:query")
  return call(host.db_query, self._conn, clean(sql), params and clean(params))
end

-- Runs fn(db) in a transaction: committed if it returns, rolled back if it raises.
function Db:transaction(fn)
  check(lib.is_callable(fn), "db:transaction expects a function")
  self:exec("BEGIN")
  local r = lib.pack(pcall(fn, self))
  if not r[1] then
    self:exec("ROLLBACK")
    error(r[2], 0)
  end
  self:exec("COMMIT")
  return lib.unpack(r, 2, r.n)
end

function Db:close()
  if self._conn ~= nil then host.db_close(self._conn) end
  self._conn = nil
end

uji.db = {
  null = lib.null,
  open = function(path)
    check(type(path) == "string" and path ~= "", "uji.db.open expects a path (or \":memory:\")")
    local conn, err = host.db_open(clean(path))
    if conn == nil then return nil, err end
    return setmetatable({ _conn = conn }, Db)
  end,
}
