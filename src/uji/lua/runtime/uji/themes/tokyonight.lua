-- The tokyonight theme: the default with its colours (see default.lua for what a theme holds).
return require("uji.themes.default"){
  name = "tokyonight",
  colors = {
    text = "#c0caf5",
    muted = "#565f89",
    code = "#e0af68",
    accent = "#7aa2f7",
    user_bg = "#292e42",
    selected_bg = "#33467c",
    cursor = "#c0caf5",
    error = "#f7768e",
    notice = "#ff9e64",
    background = "#1a1b26",
    diff = { added = "#9ece6a", removed = "#f7768e", hunk = "#7dcfff" },
  },
}
