# bash completion for warden: commands, subcommands, flags, and the values
# of some flags. Installed as share/bash-completion/completions/warden,
# which bash-completion loads the first time `warden` is completed; or
# `source` this file.
#
# The commands and flags are read from the warden being completed (`warden
# [COMMAND...] --help`, a few milliseconds each), so they are always those
# of that binary: nothing here lists them, and nothing can drift.
# tests/packaging/completion_test.py checks it in a real bash.

# Reads `BIN [COMMAND...] --help` into _warden_subs (subcommands),
# _warden_flags (every flag) and _warden_valued (the flags that take a value).
_warden_read_help() {
  _warden_subs=() _warden_flags=() _warden_valued=()
  local line section="" re_opt='^  (-[[:alnum:]],)?(--[[:alnum:]-]+)( [A-Z]+([:= ]|$))?'
  while IFS= read -r line; do
    case $line in
      Options:) section=options; continue ;;
      Subcommands:) section=subcommands; continue ;;
      [![:space:]]*) section=""; continue ;;
    esac
    if [[ $section == options && $line =~ $re_opt ]]; then
      _warden_flags+=("${BASH_REMATCH[2]}")
      [[ -n ${BASH_REMATCH[3]} ]] && _warden_valued+=("${BASH_REMATCH[2]}")
    elif [[ $section == subcommands && $line =~ ^\ \ ([[:alnum:]_-]+) ]]; then
      _warden_subs+=("${BASH_REMATCH[1]}")
    fi
  done < <("$@" --help 2>/dev/null)
}

_warden_in() {  # WORD LIST...: whether WORD is one of LIST
  local w=$1 x
  shift
  for x; do [[ $x == "$w" ]] && return 0; done
  return 1
}

_warden() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev="" bin=${COMP_WORDS[0]}
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  # shellcheck disable=SC2088  # a literal ~/ as typed, which bash has not expanded
  [[ $bin == "~/"* ]] && bin=$HOME/${bin#"~/"}
  COMPREPLY=()

  local _warden_subs _warden_flags _warden_valued
  _warden_read_help "$bin"
  # --db and --json may follow a command: the top level's flags count everywhere.
  local -a global_flags=("${_warden_flags[@]}") global_valued=("${_warden_valued[@]}")
  local -a path=()
  local i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${COMP_WORDS[i]}
    if _warden_in "$w" "${_warden_valued[@]}" "${global_valued[@]}"; then
      ((i++))  # its value
    elif [[ $w != -* ]] && _warden_in "$w" "${_warden_subs[@]}"; then
      path+=("$w")
      _warden_read_help "$bin" "${path[@]}"
    fi
  done

  if _warden_in "$prev" "${_warden_valued[@]}" "${global_valued[@]}"; then
    case $prev in
      --db | --config | --tls-cert | --tls-key)
        compopt -o filenames 2>/dev/null  # directories get their slash
        mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
      --state) mapfile -t COMPREPLY < <(compgen -W "scheduled available running succeeded retryable dead
                                         cancelled expired" -- "$cur") ;;
      --retry) mapfile -t COMPREPLY < <(compgen -W "none default forever" -- "$cur") ;;
      --log-level) mapfile -t COMPREPLY < <(compgen -W "error warn info debug" -- "$cur") ;;
      --log-format) mapfile -t COMPREPLY < <(compgen -W "text json" -- "$cur") ;;
      --scope) mapfile -t COMPREPLY < <(compgen -W "read enqueue operate admin" -- "$cur") ;;
    esac
    return 0
  fi
  # `config check FILE`: a file name.
  if [[ $cur != -* && ${path[*]} == "config check" ]]; then
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    return 0
  fi
  if [[ $cur == -* ]]; then
    local -A seen=()
    local -a flags=()
    for w in "${_warden_flags[@]}" "${global_flags[@]}"; do
      [[ -n ${seen[$w]:-} ]] || flags+=("$w")
      seen[$w]=1
    done
    mapfile -t COMPREPLY < <(compgen -W "${flags[*]}" -- "$cur")
  else
    mapfile -t COMPREPLY < <(compgen -W "${_warden_subs[*]}" -- "$cur")
  fi
  return 0
}

complete -F _warden warden
