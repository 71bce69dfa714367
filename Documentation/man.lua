-- pandoc filter for the man pages (make man): section headings in capitals,
-- as man(7) has them, whatever case the Markdown page uses.
function Header(h)
  if h.level == 1 then
    return pandoc.walk_block(h, {
      Str = function(s) return pandoc.Str(s.text:upper()) end
    })
  end
end

-- Tables as tbl(1) draws them do not fit 80 columns ("table wider than line
-- width", "cannot adjust line"): in the man page each row is a definition,
-- its first cell the term, the other cells "Header: text" paragraphs under
-- it. A one-column table is a list.
local function cell_inlines(blocks)
  local out = pandoc.List()
  for i, b in ipairs(blocks) do
    if i > 1 then out:insert(pandoc.Space()) end
    if b.content then out:extend(b.content) end
  end
  return out
end

function Table(t)
  local s = pandoc.utils.to_simple_table(t)
  local heads = {}
  for i, h in ipairs(s.headers) do heads[i] = pandoc.utils.stringify(h) end
  local items = pandoc.List()
  for _, row in ipairs(s.rows) do
    local defs = pandoc.List()
    for i = 2, #row do
      local text = cell_inlines(row[i])
      if #text > 0 then
        local para = pandoc.List()
        if #row > 2 and heads[i] and heads[i] ~= "" then
          para:insert(pandoc.Emph({ pandoc.Str(heads[i] .. ":") }))
          para:insert(pandoc.Space())
        end
        para:extend(text)
        defs:insert(pandoc.Para(para))
      end
    end
    items:insert({ cell_inlines(row[1]), { defs } })
  end
  local out = pandoc.List()
  if #s.caption > 0 then out:insert(pandoc.Para(s.caption)) end
  if heads[1] and heads[1] ~= "" then
    out:insert(pandoc.Para({ pandoc.Strong({ pandoc.Str(table.concat(heads, " | ")) }) }))
  end
  out:insert(pandoc.DefinitionList(items))
  return out
end

-- A long code span (a folded stack) is one word troff cannot break ("cannot
-- adjust line"): break points (\:) after its ; and / separators.
function Code(c)
  if #c.text <= 60 then return nil end
  local t = c.text:gsub("\\", "\\[rs]"):gsub("%-", "\\-"):gsub("([;/])", "%1\\:")
  return pandoc.RawInline("man", "\\f[V]\\%" .. t .. "\\f[R]")
end

-- ... and such a paragraph is not justified: a line of a code span broken
-- there has no space to stretch.
function Para(p)
  local long = false
  for _, i in ipairs(p.content) do
    -- Code() ran first (inlines before their blocks): its raw span
    if i.t == "RawInline" and i.text:find("\\:", 1, true) then long = true end
  end
  if not long then return nil end
  p.content:insert(1, pandoc.RawInline("man", ".na\n"))
  p.content:insert(pandoc.RawInline("man", "\n.ad\n"))
  return p
end
