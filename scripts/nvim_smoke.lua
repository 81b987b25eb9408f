-- Try `flake8-tensorcopy server` with Neovim's built-in LSP client (0.7 or later), headless:
--   nvim --headless -u NONE -c "luafile scripts/nvim_smoke.lua" fixtures/TEN204/bad.py
-- Prints the diagnostics of the file and the code actions offered on the first one's line; then, as a user
-- would, applies the preferred fix, types a new buggy function at the end of the buffer and silences its
-- finding with the noqa action, printing what the server publishes after each step. The buffer is never
-- written. Exit code 1 when a step gets no answer within 30 s.
local function say(text) io.stdout:write(text .. "\n") end
local WAIT = 30000

local buf = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = "flake8-tensorcopy",
  cmd = { "flake8-tensorcopy", "server" },
  root_dir = vim.fn.getcwd(),
})
vim.lsp.buf_attach_client(buf, client_id)

local function fail(why)
  say("FAILED: " .. why)
  vim.cmd("cquit 1")
end

local function code(d) return d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or "?" end

local function show(found)
  for _, d in ipairs(found) do
    say(string.format("diagnostic %d:%d-%d:%d %s %s: %s", d.lnum + 1, d.col, d.end_lnum + 1, d.end_col,
      d.source or "?", code(d), d.message))
  end
end

local function actions_on(line)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(buf) },
    range = { start = { line = line, character = 0 }, ["end"] = { line = line, character = 0 } },
    context = { diagnostics = {} },
  }
  local found = {}
  for _, reply in pairs(vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, WAIT) or {}) do
    for _, action in ipairs(reply.result or {}) do
      local edits = 0
      for _, list in pairs((action.edit or {}).changes or {}) do edits = edits + #list end
      say(string.format("action [%s]%s %s (%d edit%s)", action.kind or "?", action.isPreferred and " preferred" or "",
        action.title, edits, edits == 1 and "" or "s"))
      table.insert(found, action)
    end
  end
  return found
end

local function line_text(n) return vim.api.nvim_buf_get_lines(buf, n, n + 1, false)[1] end

vim.wait(WAIT, function() return #vim.diagnostic.get(buf) > 0 end, 100)
local found = vim.diagnostic.get(buf)
show(found)
if #found == 0 then fail("no diagnostics") end

local first = found[1]
local offered = actions_on(first.lnum)

-- 1. apply the preferred fix of the first finding
local preferred
for _, action in ipairs(offered) do if action.isPreferred then preferred = action break end end
if preferred then
  vim.lsp.util.apply_workspace_edit(preferred.edit, "utf-16")
  say(string.format("applied: %s -> line %d is now: %s", preferred.title, first.lnum + 1, line_text(first.lnum)))
  if not vim.wait(WAIT, function() return #vim.diagnostic.get(buf) == #found - 1 end, 100) then
    fail("the fixed finding's diagnostic stayed")
  end
  say(string.format("after the fix: %d diagnostics (was %d)", #vim.diagnostic.get(buf), #found))
end

-- 2. type a new buggy function at the end of the buffer
local before = #vim.diagnostic.get(buf)
local last = vim.api.nvim_buf_line_count(buf)
vim.api.nvim_buf_set_lines(buf, last, last, false, { "", "", "def _typed_in_nvim():",
  "    w = torch.nn.Parameter(torch.ones(3))", "    hidden = w * 2", "    return torch.tensor(hidden)" })
local typed = last + 5  -- 0-based line of `return torch.tensor(hidden)`
local function on_typed()
  for _, d in ipairs(vim.diagnostic.get(buf)) do if d.lnum == typed then return d end end
end
if not vim.wait(WAIT, function() return on_typed() ~= nil end, 100) then fail("no diagnostic on the typed line") end
say("after typing:")
show({ on_typed() })

-- 3. silence it with the noqa action
local noqa
for _, action in ipairs(actions_on(typed)) do if action.title:find("# noqa", 1, true) then noqa = action end end
if not noqa then fail("no noqa action on the typed line") end
vim.lsp.util.apply_workspace_edit(noqa.edit, "utf-16")
say(string.format("applied: %s -> line %d is now: %s", noqa.title, typed + 1, line_text(typed)))
if not vim.wait(WAIT, function() return on_typed() == nil end, 100) then fail("the noqa did not silence it") end
say(string.format("after the noqa: %d diagnostics (%d before typing)", #vim.diagnostic.get(buf), before))

vim.lsp.stop_client(client_id)
vim.cmd("qall!")
