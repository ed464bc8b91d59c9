-- The nord theme: the default with its colours (see default.lua for what a theme holds).
return require("uji.themes.default"){
  name = "nord",
  colors = {
    text = "#d8dee9",
    muted = "#616e88",
    code = "#ebcb8b",
    accent = "#88c0d0",
    user_bg = "#3b4252",
    selected_bg = "#434c5e",
    cursor = "#eceff4",
    error = "#bf616a",
    notice = "#d08770",
    background = "#2e3440",
    diff = { added = "#a3be8c", removed = "#bf616a", hunk = "#81a1c1" },
  },
}
