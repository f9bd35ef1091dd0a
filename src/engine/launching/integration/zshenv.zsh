# winterm-mcp shell integration for zsh: ZDOTDIR points at this file's directory, so zsh
# reads this .zshenv and then its .zshrc. This one reads the nonce (and unsets it), reads the
# user's own .zshenv with ZDOTDIR set back to theirs (or unset: HOME), remembers where their
# ZDOTDIR ended, and points zsh back here for .zshrc.
__winterm_nonce=${WINTERM_SHELL_NONCE-}
unset WINTERM_SHELL_NONCE
__winterm_zdotdir=$ZDOTDIR
if (( ${+WINTERM_USER_ZDOTDIR} )); then ZDOTDIR=$WINTERM_USER_ZDOTDIR; else unset ZDOTDIR; fi
unset WINTERM_USER_ZDOTDIR
if [[ -f ${ZDOTDIR:-$HOME}/.zshenv && ${ZDOTDIR:-$HOME} != $__winterm_zdotdir ]]; then
  builtin source ${ZDOTDIR:-$HOME}/.zshenv
fi
__winterm_user_zdotdir_set=${+ZDOTDIR}
__winterm_user_zdotdir=${ZDOTDIR-}
ZDOTDIR=$__winterm_zdotdir
