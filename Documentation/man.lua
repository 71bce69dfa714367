-- pandoc filter for the man pages (make man): section headings in capitals,
-- as man(7) has them, whatever case the Markdown page uses.
function Header(h)
  if h.level == 1 then
    return pandoc.walk_block(h, {
      Str = function(s) return pandoc.Str(s.text:upper()) end
    })
  end
end
