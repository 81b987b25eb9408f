-- Try `flake8-tensorcopy server` with Neovim's built-in LSP client (0.7 or later), headless:
--   nvim --headless -u NONE -c "luafile scripts/nvim_smoke.lua" fixtures/TEN204/bad.py
-- Prints the diagnostics of the file and the code actions offered on the first one's line, then quits
-- (exit code 1 when no diagnostic came within 30 s).
local function say(text) io.stdout:write(text .. "\n") end

local buf = vim.api.nvim_get_current_buf()
local client_id = vim.lsp.start_client({
  name = "flake8-tensorcopy",
  cmd = { "flake8-tensorcopy", "server" },
  root_dir = vim.fn.getcwd(),
})
vim.lsp.buf_attach_client(buf, client_id)

vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 100)
local found = vim.diagnostic.get(buf)
for _, d in ipairs(found) do
  say(string.format("diagnostic %d:%d-%d:%d %s %s: %s", d.lnum + 1, d.col, d.end_lnum + 1, d.end_col,
    d.source or "?", d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or "?", d.message))
end
if #found == 0 then
  say("no diagnostics")
  vim.cmd("cquit 1")
end

local first = found[1]
local params = {
  textDocument = { uri = vim.uri_from_bufnr(buf) },
  range = { start = { line = first.lnum, character = 0 }, ["end"] = { line = first.lnum, character = 0 } },
  context = { diagnostics = {} },
}
local replies = vim.lsp.buf_request_sync(buf, "textDocument/codeAction", params, 30000) or {}
for _, reply in pairs(replies) do
  for _, action in ipairs(reply.result or {}) do
    local edits = 0
    for _, list in pairs((action.edit or {}).changes or {}) do edits = edits + #list end
    say(string.format("action [%s]%s %s (%d edit%s)", action.kind or "?", action.isPreferred and " preferred" or "",
      action.title, edits, edits == 1 and "" or "s"))
  end
end
vim.lsp.stop_client(client_id)
vim.cmd("qall!")
