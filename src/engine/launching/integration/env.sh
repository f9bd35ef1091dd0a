# winterm-mcp shell integration for POSIX sh (dash, ash, ksh): the file an interactive sh
# reads as $ENV. It reads the nonce (and unsets it), reads the user's own $ENV if they had one
# (and gives it back for shells started from this one), then puts every mark (see
# src/engine/output/marks.ts) into PS1, which these shells expand before each prompt: D with
# $?, P with $PWD, A, the user's prompt, B.
#
# How far sh allows: no hook runs before a command, so there is no C (the engine takes the end
# of the echo of the typed line as the start of the output), and every prompt carries a D (the
# engine counts it only after a command was entered). A shell that does not expand PS1 sends
# '$?' and '${PWD}' as they are, which count as no exit code and no directory.
__winterm_nonce=${WINTERM_SHELL_NONCE-}
unset WINTERM_SHELL_NONCE
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
  __winterm_e=$(printf '\033]133;')
  __winterm_a=$(printf '\007')
  PS1="$__winterm_e"'D;$?;'"$__winterm_nonce$__winterm_a$__winterm_e"'P;${PWD};'"$__winterm_nonce$__winterm_a$__winterm_e"'A;'"$__winterm_nonce$__winterm_a${PS1-}$__winterm_e"'B;'"$__winterm_nonce$__winterm_a"
  unset __winterm_e __winterm_a
fi
