-- The dracula theme: the default with its colours (see default.lua for what a theme holds).
return require("uji.themes.default"){
  name = "dracula",
  colors = {
    text = "#f8f8f2",
    muted = "#6272a4",
    code = "#f1fa8c",
    accent = "#bd93f9",
    user_bg = "#44475a",
    selected_bg = "#44475a",
    cursor = "#f8f8f2",
    error = "#ff5555",
    notice = "#ffb86c",
    background = "#282a36",
    diff = { added = "#50fa7b", removed = "#ff5555", hunk = "#8be9fd" },
  },
}
