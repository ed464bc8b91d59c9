-- The solarized theme: the default with its colours (see default.lua for what a theme holds).
return require("uji.themes.default"){
  name = "solarized",
  colors = {
    text = "#839496",
    muted = "#586e75",
    code = "#b58900",
    accent = "#268bd2",
    user_bg = "#073642",
    selected_bg = "#073642",
    cursor = "#93a1a1",
    error = "#dc322f",
    notice = "#cb4b16",
    background = "#002b36",
    diff = { added = "#859900", removed = "#dc322f", hunk = "#2aa198" },
  },
}
