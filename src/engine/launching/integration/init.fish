# winterm-mcp shell integration for fish, sourced by --init-command after the user's
# configuration (so their prompt is in place), with __winterm_nonce already set: E (the
# command line) and C on fish_preexec, D with $status on fish_postexec, P on fish_prompt, and
# A and B around the user's fish_prompt (which still sees the last $status).
function __winterm_preexec --on-event fish_preexec
    set -l line (string replace -ar '[\x00-\x1f]' ' ' -- "$argv[1]" | string sub -l 1000)
    printf '\e]133;E;%s;%s\a\e]133;C;%s\a' "$line" $__winterm_nonce $__winterm_nonce
end
function __winterm_postexec --on-event fish_postexec
    printf '\e]133;D;%s;%s\a' $status $__winterm_nonce
end
function __winterm_cwd --on-event fish_prompt
    # Percent-encoded: a directory's name may hold any byte, the mark must not end early.
    printf '\e]133;P;enc:%s;%s\a' (string escape --style=url -- $PWD) $__winterm_nonce
end
function __winterm_status
    return $argv[1]
end
if functions -q fish_prompt
    functions -c fish_prompt __winterm_user_prompt
else
    function __winterm_user_prompt
        printf '> '
    end
end
function fish_prompt
    set -l last $status
    printf '\e]133;A;%s\a' $__winterm_nonce
    __winterm_status $last
    __winterm_user_prompt
    printf '\e]133;B;%s\a' $__winterm_nonce
end
