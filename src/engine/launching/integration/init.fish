# winterm-mcp shell integration for fish, sourced by --init-command after the user's
# configuration (so their prompt is in place), with __winterm_nonce already set: E (the
# command line) and C on fish_preexec, D with $status on fish_postexec, P on fish_prompt, and
# A and B around the user's fish_prompt (which still sees the last $status).
#
# fish has no PS2: Enter on a line that is not a whole command yet (an open quote, bracket or
# block, a trailing | or \) makes its line editor insert a line break and read on, without a
# word. So Enter (\r and \n, in each mode where fish's own binding of it is plain `execute`, and
# the user has none of their own) runs __winterm_execute, which sends A;k=s (a continuation
# prompt) when fish is about to read on, and executes as before (terminal_run's line: see
# __winterm_run_line). The bindings are looked at before each prompt: fish sets its own up at
# the first prompt, and again when the key bindings change (vi mode).
function __winterm_preexec --on-event fish_preexec
    set -e __winterm_run_line
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
# terminal_run's line starts with ESC ^_ ESC ^_ (keys, no text; FISH_RUN_LINE_KEYS in mod.ts):
# one that is not a whole command is the server's to refuse, so fish drops it and draws its
# prompt again, rather than read on. (Ctrl+C, which the server would type, cuts short shell code
# that runs at that moment, and fish runs some right after Enter: the line stayed.)
function __winterm_run_line
    set -g __winterm_run_line 1
end
set -g __winterm_fish (status fish-path 2>/dev/null; or command -s fish)
# What fish's `execute` does: reads on when the line is incomplete (--is-valid: 2), or when it ends
# in a backslash that escapes the line break (--is-valid: 1, the token before the cursor, at the
# end of the line, ends in an odd number of backslashes; in a comment there is no token).
function __winterm_execute
    commandline --is-valid
    set -l valid $status
    set -l run_line (set -q __winterm_run_line; and echo 1)
    set -e __winterm_run_line
    if test $valid -eq 2
        or begin
            test $valid -eq 1
            and test (commandline -C) -eq (string length -- "$(commandline)")
            and string match -qr '(^|[^\\\\])(\\\\\\\\)*\\\\$' -- "$(commandline -ct)"
        end
        printf '\e]133;A;k=s;%s\a' $__winterm_nonce
        if test -n "$run_line"
            commandline -r ''
            commandline -f repaint
            return
        end
    else if test $valid -eq 1 -a -n "$run_line"
        # fish would say what is wrong, keep the line for editing and draw its prompt twice (a run
        # typed next was answered by the second, and appended to the line). A run's line is
        # answered with the same words, once, and dropped; nothing runs (--no-execute).
        echo
        $__winterm_fish --no-config --no-execute -c "$(commandline)" 2>&1
        commandline -r ''
        commandline -f repaint
        return
    end
    commandline -f execute
end
function __winterm_bind --on-event fish_prompt
    set -e __winterm_run_line
    for mode in default insert
        bind -M $mode \e\x1f\e\x1f __winterm_run_line
        for key in \r \n
            bind --user -M $mode $key >/dev/null 2>&1; and continue
            set -l preset (bind --preset -M $mode $key 2>/dev/null)
            set -l sets (string match -r -- '^bind --preset(?: -M \\S+)?(?: -m (\\S+))? \\S+ execute$' $preset)
            or continue
            if set -q sets[2]
                bind -M $mode -m $sets[2] $key __winterm_execute
            else
                bind -M $mode $key __winterm_execute
            end
        end
    end
end
