/**
 * Shell integration for PowerShell (pwsh and Windows PowerShell): a `prompt` function that
 * wraps the one in place, run after the encoding prelude (`-NoExit -EncodedCommand`). Before
 * the prompt it sends `D` with the exit code and `P` with the cwd (FileSystem locations), `A`
 * before and `B` after the prompt's text; with PSReadLine (loaded in every interactive session
 * with a console), `C` once a command line has been read. Marks end with ST, not BEL (BEL is
 * swallowed by some consoles).
 *
 * The exit code: 0 when `$?` is true; else `$LASTEXITCODE` when a native program set it since
 * the last prompt (and it is not 0); else 1. A native program failing with the same code as
 * the previous one counts as 1.
 *
 * @module
 */

/** The script, with the terminal's nonce. */
export function powershellIntegration(nonce: string): string {
  return `$global:__winterm = @{ Nonce = '${nonce}'; Prompt = $function:prompt; Exit = $global:LASTEXITCODE }
function global:prompt {
  $ok = $?
  $state = $global:__winterm
  $code = if ($ok) { 0 } elseif ($global:LASTEXITCODE -is [int] -and $global:LASTEXITCODE -ne 0 -and $global:LASTEXITCODE -ne $state.Exit) { $global:LASTEXITCODE } else { 1 }
  $state.Exit = $global:LASTEXITCODE
  $e = [char]27
  $marks = "$e]133;D;$code;$($state.Nonce)$e\\"
  if ($PWD.Provider.Name -eq 'FileSystem') {
    $path = $PWD.ProviderPath.Replace('%', '%25').Replace([string][char]7, '%07').Replace([string]$e, '%1B').Replace("\`n", '%0A')
    $marks += "$e]133;P;enc:$path;$($state.Nonce)$e\\"
  }
  $marks += "$e]133;A;$($state.Nonce)$e\\"
  if (-not $ok) { Write-Error 'failure' -ErrorAction Ignore }
  $text = if ($state.Prompt) { & $state.Prompt } else { "PS $($PWD.Path)> " }
  return $marks + (-join $text) + "$e]133;B;$($state.Nonce)$e\\"
}
if (Get-Module PSReadLine) {
  $global:__winterm.ReadLine = $function:PSConsoleHostReadLine
  function global:PSConsoleHostReadLine {
    $line = & $global:__winterm.ReadLine
    [Console]::Write("$([char]27)]133;C;$($global:__winterm.Nonce)$([char]27)\\")
    $line
  }
}
`;
}
