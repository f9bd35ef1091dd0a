# winterm-mcp shell integration for bash, read instead of ~/.bashrc (bash --init-file).
#
# It reads the nonce (and unsets it, so no child inherits it), runs what an interactive bash
# runs by itself (/etc/bash.bashrc where it exists, ~/.bashrc), then adds the marks (see
# src/engine/output/marks.ts; at the first prompt if Ctrl+C cut the startup files short):
# - D (with $?) and P (the cwd) first thing in PROMPT_COMMAND, whose earlier entries (a string
#   or, in bash 5.1+, an array) then run as before, with $? as they expect it; with
#   bash-preexec, which owns PROMPT_COMMAND and the DEBUG trap, through its precmd_functions;
# - W after them: whether input typed while the command ran waits, to be read at the prompt;
# - A and B around PS1, wrapped again whenever something (a prompt framework) rewrites it;
# - A;k=s (a continuation prompt) before PS2, which bash prints when the line entered is not a
#   whole command yet (an open quote, a trailing | or \, a here-document): the shell reads on;
# - C at the end of PS0, which bash 4.4+ prints after reading a command and before running it,
#   never for an empty line or a comment. No DEBUG trap is set: the user's keeps working as it
#   was, and loops pay nothing per command. Older bash (macOS's 3.2) has no PS0: no C there.
__winterm_nonce=${WINTERM_SHELL_NONCE-}
builtin unset WINTERM_SHELL_NONCE
if [ -n "$__winterm_nonce" ] && [ -z "${__winterm_ps0-}" ]; then
  __winterm_ps0="\e]133;C;$__winterm_nonce\a"
  __winterm_set_status() { builtin return "$1"; }
  __winterm_report() {
    builtin printf '\e]133;D;%s;%s\a' "$1" "$__winterm_nonce"
    # Percent-encoded: a directory's name may hold any byte, the mark must not end early.
    builtin local path="${PWD//\%/%25}"
    path=${path//$'\a'/%07} path=${path//$'\e'/%1B} path=${path//$'\n'/%0A}
    builtin printf '\e]133;P;enc:%s;%s\a' "$path" "$__winterm_nonce"
    # W: whether input typed while the command ran waits in the terminal, to be read at this
    # prompt (what is typed from now on, the engine sees itself). `read -t 0` only looks.
    if builtin read -t 0 2>/dev/null; then
      builtin printf '\e]133;W;1;%s\a' "$__winterm_nonce"
    else
      builtin printf '\e]133;W;0;%s\a' "$__winterm_nonce"
    fi
  }
  __winterm_wrap() {
    if [ "$PS1" != "${__winterm_ps1-}" ]; then
      __winterm_ps1="\[\e]133;A;$__winterm_nonce\a\]$PS1\[\e]133;B;$__winterm_nonce\a\]"
      PS1=$__winterm_ps1
    fi
    if [ "${PS2-}" != "${__winterm_ps2-}" ]; then
      __winterm_ps2="\[\e]133;A;k=s;$__winterm_nonce\a\]${PS2-}"
      PS2=$__winterm_ps2
    fi
    case ${PS0-} in
      *"$__winterm_ps0"*) ;;
      *) PS0=${PS0-}$__winterm_ps0 ;;
    esac
    # They hold the nonce: exported (an rc's `export PS1`, or `set -a`), every child would have
    # it, and a nested `bash --norc` would send marks as this shell.
    builtin export -n PS1 PS0 PS2 __winterm_ps1 __winterm_ps0 __winterm_ps2 __winterm_nonce \
      __winterm_last __winterm_flags
  }
  # Puts the marks in place over what the startup files set up.
  __winterm_install() {
    if [ -n "${bash_preexec_imported-}${__bp_imported-}" ]; then
      __winterm_precmd() { __winterm_report "$?"; }
      precmd_functions=(__winterm_precmd ${precmd_functions[@]+"${precmd_functions[@]}"} __winterm_wrap)
    else
      builtin local entry
      __winterm_prompt_commands=()
      for entry in ${PROMPT_COMMAND[@]+"${PROMPT_COMMAND[@]}"}; do
        entry=${entry//__winterm_first_prompt;/} entry=${entry//__winterm_first_prompt/}
        [ -n "${entry//[[:space:];]/}" ] && __winterm_prompt_commands+=("$entry")
      done
      # Under `set -x` bash would trace the hook into the command's output, before its end
      # mark, nonce included: the hook turns tracing off first, its own trace sent nowhere, and
      # back on at its end (the startup files' entries run untraced).
      __winterm_prompt_command() {
        builtin local __winterm_status=$__winterm_last __winterm_entry
        __winterm_report "$__winterm_status"
        for __winterm_entry in ${__winterm_prompt_commands[@]+"${__winterm_prompt_commands[@]}"}; do
          __winterm_set_status "$__winterm_status"
          builtin eval "$__winterm_entry"
        done
        __winterm_wrap
        case $__winterm_flags in *x*) builtin set -x ;; esac
      }
      builtin unset PROMPT_COMMAND
      PROMPT_COMMAND='{ __winterm_last=$? __winterm_flags=$-; builtin set +x; } 2>/dev/null; __winterm_prompt_command'
    fi
  }
  # Ctrl+C in a startup file makes bash skip the rest of it, and of this file: the first prompt
  # puts the marks in place then (else the shell had none, for good). The first entry of the
  # array, which bash before 5.1 runs alone (a file's string prepended or appended keeps it),
  # and its last, which a file's string assigned leaves in place (bash 5.1+ runs every entry).
  __winterm_first_prompt() {
    builtin local status=$?
    [ -n "${__winterm_pending-}" ] || builtin return 0
    builtin unset __winterm_pending
    __winterm_install
    __winterm_report "$status"
    __winterm_wrap
  }
  PROMPT_COMMAND=(__winterm_first_prompt ${PROMPT_COMMAND[@]+"${PROMPT_COMMAND[@]}"}
    __winterm_first_prompt)
  __winterm_pending=1
fi
if [ -r /etc/bash.bashrc ]; then builtin . /etc/bash.bashrc; fi
if [ -r ~/.bashrc ]; then builtin . ~/.bashrc; fi
if [ -n "${__winterm_pending-}" ]; then
  builtin unset __winterm_pending
  __winterm_install
fi
