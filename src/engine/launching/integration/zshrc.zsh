# winterm-mcp shell integration for zsh (see .zshenv beside it). Gives ZDOTDIR back to the
# user (shells started from this one read their files alone), reads their .zshrc, then adds the
# marks (see src/engine/output/marks.ts): D (with $?), P and W from the first precmd hook, A and B
# around PS1 and A;k=s (a continuation prompt: the line entered is not a whole command yet)
# before PS2 from the last one (wrapped again whenever a theme rewrote them), E (the command
# line) and C from the last preexec hook. Each hook's body sends its stderr nowhere: under
# `set -x` zsh would trace it into the command's output, the marks' nonce with it.
#
# zsh prints its PROMPT_SP mark (the inverse % or # after output without a final newline, and
# the blanks that move the prompt to a new line) before any precmd hook: it would end up in the
# command's output. So PROMPT_SP is switched off and the same is printed right after D.
if (( __winterm_user_zdotdir_set )); then ZDOTDIR=$__winterm_user_zdotdir; else unset ZDOTDIR; fi
if [[ -f ${ZDOTDIR:-$HOME}/.zshrc ]]; then builtin source ${ZDOTDIR:-$HOME}/.zshrc; fi
if [[ -n $__winterm_nonce ]]; then
  __winterm_zselect=0
  zmodload zsh/zselect 2>/dev/null && __winterm_zselect=1
  __winterm_prompt_sp=0
  if [[ -o prompt_sp && -o prompt_cr ]]; then
    __winterm_prompt_sp=1
    setopt no_prompt_sp
  fi
  __winterm_precmd() {
    {
      builtin local __winterm_status=$? __winterm_mark __winterm_plain
      builtin printf '\e]133;D;%s;%s\a' $__winterm_status $__winterm_nonce
      if (( __winterm_prompt_sp )); then
        __winterm_mark=${(%)${PROMPT_EOL_MARK-%B%S%#%s%b}}
        __winterm_plain=${(S)__winterm_mark//$'\e'\[*m/}
        builtin printf '%s%*s\r%*s\r' "$__winterm_mark" $(( COLUMNS - ${#__winterm_plain} )) '' ${#__winterm_plain} ''
      fi
      # Percent-encoded: a directory's name may hold any byte, the mark must not end early.
      builtin local __winterm_path="${PWD//\%/%25}"
      __winterm_path=${__winterm_path//$'\a'/%07}
      __winterm_path=${__winterm_path//$'\e'/%1B}
      __winterm_path=${__winterm_path//$'\n'/%0A}
      builtin printf '\e]133;P;enc:%s;%s\a' "$__winterm_path" $__winterm_nonce
      # W: whether input typed while the command ran waits, to be read at this prompt. zselect only
      # looks (zsh's `read -t` would take it).
      if (( __winterm_zselect )); then
        if zselect -t 0 -r 0 2>/dev/null; then
          builtin printf '\e]133;W;1;%s\a' $__winterm_nonce
        else
          builtin printf '\e]133;W;0;%s\a' $__winterm_nonce
        fi
      fi
    } 2>/dev/null
  }
  __winterm_wrap() {
    {
      if [[ $PS1 != ${__winterm_ps1-} ]]; then
        __winterm_ps1="%{"$'\e'"]133;A;$__winterm_nonce"$'\a'"%}$PS1%{"$'\e'"]133;B;$__winterm_nonce"$'\a'"%}"
        PS1=$__winterm_ps1
      fi
      if [[ $PS2 != ${__winterm_ps2-} ]]; then
        __winterm_ps2="%{"$'\e'"]133;A;k=s;$__winterm_nonce"$'\a'"%}$PS2"
        PS2=$__winterm_ps2
      fi
      # They hold the nonce: exported (an rc's `export PS1`, or `setopt allexport`), every child
      # would have it, and `env` would print marks.
      typeset -g +x PS1 PS2 __winterm_ps1 __winterm_ps2 __winterm_nonce
      precmd_functions=(${precmd_functions:#__winterm_wrap} __winterm_wrap)
    } 2>/dev/null
  }
  __winterm_preexec() {
    {
      builtin local __winterm_line=${1[1,1000]}
      __winterm_line=${__winterm_line//$'\e'/\\e}
      __winterm_line=${__winterm_line//$'\a'/\\a}
      __winterm_line=${__winterm_line//$'\n'/ }
      builtin printf '\e]133;E;%s;%s\a\e]133;C;%s\a' "$__winterm_line" $__winterm_nonce $__winterm_nonce
    } 2>/dev/null
  }
  precmd_functions=(__winterm_precmd ${precmd_functions:#__winterm_*} __winterm_wrap)
  preexec_functions=(${preexec_functions:#__winterm_preexec} __winterm_preexec)
fi
