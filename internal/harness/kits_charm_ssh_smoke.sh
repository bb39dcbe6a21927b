# SSH session smoke: starts the repository's SSH server on a free loopback
# port, opens one session with the system ssh client in batch mode (a
# throwaway key and a known_hosts of this run only, both in a temporary
# directory), records what the session printed and compares the screen
# with harness/ssh/baselines/session.txt.
#
#   sh gates/ssh-smoke.sh --server 'COMMAND' [--update-baselines]
#
# COMMAND starts the server in the foreground and must make it listen on
# $SSH_HOST:$SSH_PORT (also given as $HOST and $PORT), 127.0.0.1 and a
# port the gate chose. How your server is started cannot be read from the
# repository: write the command into the ssh-smoke entry of
# harness/manifest.json. Main packages found (candidates only, they may
# not read $SSH_PORT): @CANDIDATES@.
# The session's stdin is harness/ssh/session.keys: the keys sent to the
# app ("q" quits most Bubble Tea programs).
#
# Exit 0: the screen matches its baseline. 1: it differs, the server did
# not listen, or the session failed or printed nothing. 77 (not evidence):
# no server command, no ssh client, or no baseline yet: review the screen
# the run leaves in the evidence directory and record it with
# --update-baselines.
server=""
update=0
while [ $# -gt 0 ]; do
  case "$1" in
    --server)
      [ $# -ge 2 ] || { echo "ssh-smoke: --server needs a command" >&2; exit 2; }
      server=$2
      shift 2
      ;;
    --update-baselines) update=1; shift ;;
    *) echo "ssh-smoke: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$server" ]; then
  echo "ssh-smoke: no server command: set --server in the ssh-smoke entry of harness/manifest.json; nothing was checked"
  exit 77
fi
for tool in ssh ssh-keygen ssh-keyscan; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "ssh-smoke: $tool not found: nothing was checked"
    exit 77
  fi
done
baseline=harness/ssh/baselines/session.txt
keys=harness/ssh/session.keys
[ -f "$keys" ] || keys=/dev/null
evidence=${CRYSTALLIZE_EVIDENCE_DIR:-harness/ssh/last-run}
mkdir -p "$evidence"
work=$(mktemp -d)
pid=""
# The server command may start the server as a grandchild (sh -c, go
# run): stopping it means stopping every process under it, deepest first.
descendants() {
  for child in $(ps -A -o pid= -o ppid= | awk -v p="$1" '$2 == p { print $1 }'); do
    descendants "$child"
    echo "$child"
  done
}
stop_server() {
  if [ -n "$pid" ]; then
    kill $(descendants "$pid") "$pid" 2>/dev/null || true
    pid=""
  fi
}
cleanup() {
  stop_server
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
ssh-keygen -q -t ed25519 -N '' -C crystallize-harness -f "$work/id" >/dev/null

# A port where an SSH server already answers belongs to someone else; a
# server that exits at once most likely found its port taken, so a few
# other ports are tried before giving up.
started=0
attempt=0
taken=0
while [ "$attempt" -lt 5 ] && [ "$started" = 0 ]; do
  attempt=$((attempt + 1))
  port=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 40000))
  ssh-keyscan -T 2 -p "$port" 127.0.0.1 >"$work/known_hosts" 2>/dev/null || true
  if [ -s "$work/known_hosts" ]; then
    taken=$((taken + 1))
    continue
  fi
  (SSH_HOST=127.0.0.1 SSH_PORT=$port HOST=127.0.0.1 PORT=$port; export SSH_HOST SSH_PORT HOST PORT; exec sh -c "$server") >>"$evidence/ssh-server.log" 2>&1 &
  pid=$!
  i=0
  while [ "$i" -lt "${SSH_SMOKE_START_SECONDS:-60}" ]; do
    ssh-keyscan -T 2 -p "$port" 127.0.0.1 >"$work/known_hosts" 2>/dev/null || true
    if [ -s "$work/known_hosts" ]; then started=1; break; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 1
    i=$((i + 1))
  done
  if [ "$started" = 0 ] && kill -0 "$pid" 2>/dev/null; then
    echo "ssh-smoke: the server runs but no SSH server answered on 127.0.0.1:$port; does the command read \$SSH_PORT? see $evidence/ssh-server.log"
    exit 1
  fi
  [ "$started" = 1 ] || stop_server
done
if [ "$started" = 0 ] && [ "$taken" = "$attempt" ]; then
  echo "ssh-smoke: an SSH server already answered on every port tried; the session would not reach yours: nothing was checked"
  exit 77
fi
if [ "$started" = 0 ]; then
  echo "ssh-smoke: the server exited without listening; see $evidence/ssh-server.log"
  exit 1
fi

limit=""
command -v timeout >/dev/null 2>&1 && limit="timeout ${SSH_SMOKE_SESSION_SECONDS:-30}"
code=0
$limit ssh -F /dev/null -tt -p "$port" -i "$work/id" \
  -o BatchMode=yes -o IdentitiesOnly=yes -o StrictHostKeyChecking=yes \
  -o UserKnownHostsFile="$work/known_hosts" -o GlobalKnownHostsFile=/dev/null \
  -o ConnectTimeout=10 -o LogLevel=ERROR \
  "${SSH_SMOKE_USER:-harness}@127.0.0.1" <"$keys" >"$evidence/ssh-session.raw" 2>"$evidence/ssh-client.log" || code=$?
if [ "$code" != 0 ]; then
  echo "ssh-smoke: the session exited $code; see $evidence/ssh-client.log"
  exit 1
fi

# The screen is the session's text without carriage returns and terminal
# control sequences, so a baseline reads as what the user saw.
esc=$(printf '\033')
bel=$(printf '\007')
tr -d '\r' <"$evidence/ssh-session.raw" |
  sed -e "s/${esc}\[[0-9;?<=>]*[ -\/]*[@-~]//g" -e "s/${esc}\][^${bel}]*${bel}//g" -e "s/${esc}[()][0-9A-Za-z]//g" -e "s/${esc}[=>]//g" >"$evidence/ssh-screen.txt"
if ! grep -q '[^[:space:]]' "$evidence/ssh-screen.txt"; then
  echo "ssh-smoke: the session printed nothing: an empty screen is not evidence of a working server"
  exit 1
fi
if [ "$update" = 1 ]; then
  mkdir -p "$(dirname "$baseline")"
  cp "$evidence/ssh-screen.txt" "$baseline"
  echo "ssh-smoke: recorded $baseline; review and commit it. This run compared nothing: not evidence"
  exit 77
fi
if [ ! -f "$baseline" ]; then
  echo "ssh-smoke: no baseline $baseline: review $evidence/ssh-screen.txt and record it with --update-baselines"
  exit 77
fi
if cmp -s "$baseline" "$evidence/ssh-screen.txt"; then
  echo "ssh-smoke: the session's screen matches $baseline"
  exit 0
fi
diff -u "$baseline" "$evidence/ssh-screen.txt" >"$evidence/ssh-screen.diff" || true
echo "ssh-smoke: the session's screen differs from $baseline:"
head -n 40 "$evidence/ssh-screen.diff"
exit 1
