-- uji's defaults. They load before your init.lua, which can change any of them.
--
-- The rules below are the rule set named "defaults": your own uji.tool.policy calls add
-- to them (a deny here still denies whatever your rules allow). To drop them for a tool,
-- replace that tool's rules in this set, e.g. keep run_command's shipped deny out with
--   uji.tool.policy({ run_command = {} }, { name = "defaults" })
--
-- Rules for run_command match each command of a line in normal form (quotes, escapes,
-- leading assignments and redirections removed, words joined by one space), so one
-- rule for a forced recursive rm also stops `\rm -fr x`, `{ sudo rm -r -f x; }` and
-- `/bin/rm x --recursive --force`. `rm -r x`, `rm -f x` and `echo rm -rf` are not
-- matched; like any command without an allow rule, they ask.
local rm = "^(\\S*/)?rm(?=\\s)" -- rm, /bin/rm, …
local recursive = "(?=.*\\s(-[a-zA-Z]*[rR][a-zA-Z]*|--r[ecursiv]*)(\\s|$))" -- -r, -R, -rf, --recursive
local force = "(?=.*\\s(-[a-zA-Z]*f[a-zA-Z]*|--f[orce]*)(\\s|$))" -- -f, -fr, --force

uji.tool.policy({
  run_command = {
    deny = { "/" .. rm .. recursive .. force .. "/" },
  },
}, { name = "defaults" })

-- Flags that make a read command write files or run programs. An allow rule written for
-- the command (`git diff*`, `find *`, `rg *`) does not cover a part carrying one: it asks
-- (`uji run` refuses it under `--on-ask deny`), unless you allowed that exact part when it
-- asked. Each value lists, for a command (or a command and its subcommand):
--   "--long"  the option, `--long=value`, or an abbreviation of it (`--outp=x`)
--   "-x"      the one-letter option, also in a cluster or with its value attached (`-ni`)
--   "-word"   a single-dash word exactly (find's `-delete`)
--   "word"    a word anywhere in the arguments (`git bisect run`)
--   "/re/"    a regular expression searched in the command's normal form
--   true      any use of the command
-- Call uji.tool.write_flags with your own table to replace this one (read it with
-- `uji.tool.write_flags()`, change it, and pass it back).
-- `xargs`, `find -exec`, `env`, `sudo`… need no entry: the command they run is judged as a
-- part of its own (and xargs's asks, since xargs adds words read from its input).
local sed = {
  "-i", "--in-place", -- edits the files in place
  "-f", "--file", -- the script is in a file, unseen
  -- The `w file`, `W file` and `e command` commands (the file may follow with no space:
  -- `wout`), and the `w` and `e` flags of `s///`: at the start of the script, after a
  -- separator or a line address, after an address regex, as flags of `s`.
  "/^\\S*sed(\\s+-\\S+)*\\s+(-e\\s*|--expression=)?[wWe]/",
  "/([;{}!\\n]|\\d|\\$)\\s*[wWe]/",
  "/(^|\\s|[;{}!,])\\/[^/]*\\/[wWe]/",
  "/s(.)((?!\\1).)*\\1((?!\\1).)*\\1[gpIiMm0-9]*[wWe]/",
}
local awk = {
  "-f", "--file", "-E", "--exec", -- the program is in a file, unseen
  "-i", "--include", "-l", "--load", "/@(load|include)/", -- gawk loads code or a library
  "/system\\s*\\(/", -- runs a command
  "/(^|[^|])\\|($|[^|])/", -- `print | "cmd"`, `"cmd" | getline`
  "/printf?[^;}]*>/", -- `print > "file"`
}
uji.tool.write_flags({
  git = {
    "-c", "--config-env", -- sets any configuration: core.pager, diff.external… run programs
    "--exec-path", "--git-dir", "--work-tree", -- git's helpers, or another repository's config
    "--output", -- diff, log, show: writes the output to a file
    "--ext-diff", "--textconv", -- runs the configured diff and text-conversion programs
    "-O", "--open-files-in-pager", -- git grep: runs a pager program
    "--upload-pack", "--receive-pack", "--exec", -- fetch, push, archive, rebase: run a program
  },
  ["git rebase"] = { "-x" }, -- runs a command after each commit
  ["git difftool"] = { "-x", "--extcmd", "-t", "--tool" },
  ["git mergetool"] = { "-t", "--tool" },
  ["git bisect"] = { "run" },
  ["git submodule"] = { "foreach" },
  ["git archive"] = { "-o" },
  ["git format-patch"] = { "-o", "--output-directory" },
  find = {
    "-exec", "-execdir", "-ok", "-okdir", -- run a command
    "-delete", -- deletes what it finds
    "-fprint", "-fprint0", "-fprintf", "-fls", -- write to a file
  },
  fd = { "-x", "--exec", "-X", "--exec-batch" },
  fdfind = { "-x", "--exec", "-X", "--exec-batch" },
  rg = {
    "--pre", -- runs a program on every file searched
    "--hostname-bin", -- runs a program to get the host name
    "-z", "--search-zip", -- runs decompression programs
  },
  sed = sed,
  gsed = sed,
  awk = awk,
  gawk = awk,
  mawk = awk,
  nawk = awk,
  sort = { "-o", "--output", "--compress-program" },
  tee = true, -- writes every file it names
  uniq = { "/^\\S*uniq(\\s+-\\S+)*(\\s+[^-\\s]\\S*){2}/" }, -- `uniq in out` writes out
  tar = {
    "--to-command", "--checkpoint-action", "--info-script", "--new-volume-script", "-F",
    "--use-compress-program", "-I", "--rsh-command", "--rmt-command",
  },
  less = {
    "-o", "-O", "--log-file", "--LOG-FILE", -- copy the input to a file
    "-k", "--lesskey-file", "--lesskey-src", "--lesskey-content", -- key bindings, shell commands
    "/\\s\\+/", -- `+cmd`: commands to run at the start (`+!cmd` runs a shell command)
  },
  man = { "-P", "--pager", "-H", "--html", "-C", "--config-file" },
  tree = { "-o" },
  file = { "-C", "--compile" },
  base64 = { "-o", "--output" },
  yq = { "-i", "--inplace" },
  curl = {
    "-o", "--output", "-O", "--remote-name", "--remote-name-all", "--output-dir",
    "-D", "--dump-header", "-c", "--cookie-jar", "--trace", "--trace-ascii", "--libcurl",
    "--stderr", "--etag-save", "--hsts", "--alt-svc",
    "-K", "--config", -- options read from a file, unseen
  },
})
