"""The UI port (`port.Ui`): what the Lua bridge needs of a frontend — keymap, composer
input, questions, notices — with the key syntax and keymap (`keys`) and the
implementation without a screen (`headless`). The terminal UI implements it in
`uji.tui.host`. Nothing here imports a UI toolkit."""
