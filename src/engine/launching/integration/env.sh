# winterm-mcp shell integration for POSIX sh (dash, ash, ksh): the file an interactive sh
# reads as $ENV. It reads the nonce (and unsets it), reads the user's own $ENV if they had one
# (and gives it back for shells started from this one), then puts every mark (see
# src/engine/output/marks.ts) into PS1, which these shells expand before each prompt: D with
# $?, P with $PWD (encoded by a command substitution), A, the user's prompt, B. PS2, which they
# print when the line entered is not a whole command yet (an open quote, a trailing | or \, a
# here-document), starts with A;k=s (a continuation prompt), as bytes: no expansion needed
# (dash 0.5.12 expands PS2; older ones print it as it is, which serves as well).
#
# How far sh allows: no hook runs before a command, so there is no C (the engine takes the end
# of the echo of the typed line as the start of the output), and every prompt carries a D (the
# engine counts it only after a command was entered). A shell that does not expand PS1 sends
# '$?' and '$(__winterm_pwd)' as they are, which count as no exit code and no directory.
__winterm_nonce=${WINTERM_SHELL_NONCE-}
unset WINTERM_SHELL_NONCE
# The prompts of the environment, not exported (see shellIntegration).
if [ -n "${WINTERM_USER_PS1+set}" ]; then
  PS1=$WINTERM_USER_PS1
  unset WINTERM_USER_PS1
fi
if [ -n "${WINTERM_USER_PS2+set}" ]; then
  PS2=$WINTERM_USER_PS2
  unset WINTERM_USER_PS2
fi
if [ -n "${WINTERM_USER_ENV-}" ]; then
  ENV=$WINTERM_USER_ENV
  export ENV
  unset WINTERM_USER_ENV
  eval "__winterm_env=\"$ENV\""
  if [ -r "$__winterm_env" ]; then . "$__winterm_env"; fi
  unset __winterm_env
else
  unset ENV
fi
if [ -n "$__winterm_nonce" ]; then
  __winterm_bel=$(printf '\007')
  __winterm_esc=$(printf '\033')
  __winterm_nl='
'
  # $PWD percent-encoded (%, BEL, ESC, LF): a directory's name may hold any byte, the mark must
  # not end early. Run in the prompt's command substitution (a subshell: nothing leaks).
  __winterm_pwd() {
    case $PWD in
      *%* | *"$__winterm_bel"* | *"$__winterm_esc"* | *"$__winterm_nl"*) ;;
      *) printf '%s' "$PWD"; return ;;
    esac
    __winterm_rest=$PWD
    while [ -n "$__winterm_rest" ]; do
      __winterm_tail=${__winterm_rest#?}
      __winterm_char=${__winterm_rest%"$__winterm_tail"}
      case $__winterm_char in
        %) printf '%%25' ;;
        "$__winterm_bel") printf '%%07' ;;
        "$__winterm_esc") printf '%%1B' ;;
        "$__winterm_nl") printf '%%0A' ;;
        *) printf '%s' "$__winterm_char" ;;
      esac
      __winterm_rest=$__winterm_tail
    done
  }
  __winterm_e="$__winterm_esc]133;"
  __winterm_a=$__winterm_bel
  # They hold the nonce: unset first, so that they are not exported if the user's ENV exported
  # them (every child would have it; dash keeps exporting it all the same).
  __winterm_ps1=${PS1-}
  __winterm_ps2=${PS2-> }
  unset PS1 PS2
  PS1="$__winterm_e"'D;$?;'"$__winterm_nonce$__winterm_a$__winterm_e"'P;enc:$( { __winterm_pwd; } 2>/dev/null);'"$__winterm_nonce$__winterm_a$__winterm_e"'A;'"$__winterm_nonce$__winterm_a$__winterm_ps1$__winterm_e"'B;'"$__winterm_nonce$__winterm_a"
  PS2="$__winterm_e"'A;k=s;'"$__winterm_nonce$__winterm_a$__winterm_ps2"
  unset __winterm_e __winterm_a __winterm_ps1 __winterm_ps2
fi
