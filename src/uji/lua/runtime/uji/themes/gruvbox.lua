-- The gruvbox theme: the default with its colours (see default.lua for what a theme holds).
return require("uji.themes.default"){
  name = "gruvbox",
  colors = {
    text = "#ebdbb2",
    muted = "#928374",
    code = "#fabd2f",
    accent = "#83a598",
    user_bg = "#3c3836",
    selected_bg = "#504945",
    cursor = "#ebdbb2",
    error = "#fb4934",
    notice = "#fe8019",
    background = "#282828",
    diff = { added = "#b8bb26", removed = "#fb4934", hunk = "#8ec07c" },
  },
}
