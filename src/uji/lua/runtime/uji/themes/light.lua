-- The light theme: the default with its colours (see default.lua for what a theme holds).
return require("uji.themes.default"){
  name = "light",
  colors = {
    text = "#383a42",
    muted = "#a0a1a7",
    code = "#986801",
    accent = "#0184bc",
    user_bg = "#e5e5e6",
    selected_bg = "#d0d0d8",
    cursor = "black",
    error = "#e45649",
    notice = "#c18401",
    background = "#fafafa",
    diff = { added = "#50a14f", removed = "#e45649", hunk = "#0184bc" },
  },
}
