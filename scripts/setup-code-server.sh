#!/usr/bin/env bash
# Installs code-server (the real VS Code 1.100.3 workbench + a Node extension host) into a cache
# directory outside the project, so Vox can run and be tested end to end on a machine whose only
# network is the npm registry and Debian's apt. Idempotent: a second run checks and exits in ~1 s.
#
#   scripts/setup-code-server.sh            # install (or verify) and print the binary path
#   VOX_CODE_SERVER_DIR=/opt/cs scripts/setup-code-server.sh
#   VOX_SKIP_APT=1 ...                      # do not touch apt (packages must already be there)
#   VOX_SKIP_CHROMIUM=1 ...                 # do not install Debian chromium (only needed by tests)
#
# Two runs at once (two terminals running `npm start`, or tests): the second waits on a lock
# ($CS_DIR.lock, flock: released by the kernel when the holder exits, even killed) and then finds
# the install done, instead of installing into the same folder at the same time.
#
# The last line printed on stdout is the absolute path of the code-server binary.
#
# Why the tricks (docs/TESTING.md, "Installing it offline"):
#  1. apt libkrb5-dev: the `kerberos` native module in VS Code's server deps needs gssapi.h.
#  2. @vscode/ripgrep's postinstall downloads rg from GitHub, but first looks for the release
#     tarball in $TMPDIR/vscode-ripgrep-cache-<pkg version>/. We put a tarball holding Debian's
#     /usr/bin/rg (apt ripgrep) there. The version and the asset name are read from the packages
#     themselves (code-server's lib/vscode/npm-shrinkwrap.json and ripgrep's postinstall.js).
#  3. npm_config_yes=true: node-pty's postinstall runs `npx node-gyp`, and this machine's npmrc
#     says yes=false, so npx would refuse to prompt and fail.
#  Plus npm_config_unsafe_perm=true (code-server's postinstall refuses to run as root without it).
set -euo pipefail

CS_VERSION="${VOX_CODE_SERVER_VERSION:-4.100.3}"
CS_DIR="${VOX_CODE_SERVER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vox/code-server-$CS_VERSION}"
CS_BIN="$CS_DIR/node_modules/.bin/code-server"
CS_PKG="$CS_DIR/node_modules/code-server"
MARKER="$CS_DIR/.vox-install-complete"
T0=$(date +%s)

log() { printf '[setup-code-server] %s\n' "$*" >&2; }
elapsed() { echo "$(( $(date +%s) - T0 )) s"; }
# A download or install step that failed: say so, and that running again resumes.
download_failed() {
  log "$1 failed (a download from the npm registry, or a native build, did not finish)."
  log "Nothing is marked installed; check the network and run it again: npm start (or scripts/setup-code-server.sh)."
  exit 1
}

mkdir -p "$(dirname "$CS_DIR")"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$CS_DIR.lock"
  if ! flock -n 9; then
    log "another setup is installing code-server into $CS_DIR; waiting for it to finish"
    flock 9
  fi
else
  log "flock not found: two setups at the same time would race (install util-linux)"
fi

installed_ok() {
  [ -f "$MARKER" ] || return 1
  [ -x "$CS_BIN" ] || return 1
  [ -x "$CS_PKG/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] || return 1
  [ "$(cs_version)" = "$CS_VERSION" ]
}

# `code-server --version` writes ~/.config/code-server/config.yaml and a log dir on first run:
# give it a HOME of its own inside the cache dir so the user's HOME stays untouched.
cs_version() {
  mkdir -p "$CS_DIR/.home"
  HOME="$CS_DIR/.home" XDG_CONFIG_HOME="$CS_DIR/.home/.config" XDG_DATA_HOME="$CS_DIR/.home/.local/share" \
    "$CS_BIN" --version 2>/dev/null | grep -Eo "^[0-9]+\.[0-9]+\.[0-9]+" | sed -n 1p
}

if installed_ok; then
  log "code-server $CS_VERSION already installed in $CS_DIR (checked in $(elapsed))"
  echo "$CS_BIN"
  exit 0
fi

# ---- Node: code-server 4.100.x requires Node 20 exactly (its postinstall checks).
NODE_MAJOR="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$NODE_MAJOR" != "20" ]; then
  log "code-server $CS_VERSION needs Node 20; this is Node $(node --version)."
  exit 1
fi

# ---- apt packages
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else SUDO="__none__"; fi
fi
APT_PKGS=(libkrb5-dev ripgrep)
[ "${VOX_SKIP_CHROMIUM:-}" = 1 ] || APT_PKGS+=(chromium)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  if [ "${VOX_SKIP_APT:-}" = 1 ] || [ "$SUDO" = "__none__" ]; then
    log "missing apt packages: ${missing[*]} (install them as root: apt-get install -y ${missing[*]})"
    exit 1
  fi
  log "apt-get install ${missing[*]}"
  # Update the package lists when apt does not know a candidate for one of the packages yet.
  if ! apt-cache policy "${missing[@]}" 2>/dev/null | grep -q 'Candidate: [0-9]'; then
    $SUDO apt-get update -qq >&2
  fi
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 \
    || { $SUDO apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; }
  log "apt done at $(elapsed)"
fi
command -v rg >/dev/null || { log "rg not found after installing ripgrep"; exit 1; }

# ---- Seed @vscode/ripgrep's download cache with Debian's rg.
WORK="$(mktemp -d "${TMPDIR:-/tmp}/vox-cs-setup.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
log "reading the @vscode/ripgrep version from code-server@$CS_VERSION"
(cd "$WORK" && npm pack --silent "code-server@$CS_VERSION" >/dev/null) || download_failed "npm pack code-server@$CS_VERSION"
tar -xzf "$WORK/code-server-$CS_VERSION.tgz" -C "$WORK" package/lib/vscode/npm-shrinkwrap.json
RG_PKG_VERSION="$(node -e '
  const s = require(process.argv[1]);
  const p = s.packages && s.packages["node_modules/@vscode/ripgrep"];
  if (!p || !p.version) { console.error("no @vscode/ripgrep in shrinkwrap"); process.exit(1); }
  console.log(p.version);' "$WORK/package/lib/vscode/npm-shrinkwrap.json")"
(cd "$WORK" && npm pack --silent "@vscode/ripgrep@$RG_PKG_VERSION" >/dev/null) || download_failed "npm pack @vscode/ripgrep@$RG_PKG_VERSION"
tar -xzf "$WORK/vscode-ripgrep-$RG_PKG_VERSION.tgz" -C "$WORK" package/lib/postinstall.js
RG_ASSET_VERSION="$(sed -n "s/^const VERSION = '\([^']*\)'.*/\1/p" "$WORK/package/lib/postinstall.js")"
[ -n "$RG_ASSET_VERSION" ] || { log "could not read VERSION from @vscode/ripgrep postinstall.js"; exit 1; }
case "$(uname -m)" in
  x86_64) RG_TARGET=x86_64-unknown-linux-musl ;;
  aarch64) RG_TARGET=aarch64-unknown-linux-musl ;;
  *) log "unsupported arch $(uname -m)"; exit 1 ;;
esac
RG_CACHE_DIR="${TMPDIR:-/tmp}/vscode-ripgrep-cache-$RG_PKG_VERSION"
RG_TARBALL="$RG_CACHE_DIR/ripgrep-$RG_ASSET_VERSION-$RG_TARGET.tar.gz"
mkdir -p "$RG_CACHE_DIR" "$WORK/rg"
cp "$(command -v rg)" "$WORK/rg/rg"
tar -czf "$RG_TARBALL" -C "$WORK/rg" rg
log "seeded $RG_TARBALL with $(command -v rg) ($(rg --version 2>/dev/null | sed -n 1p))"

# ---- npm install
mkdir -p "$CS_DIR"
# allowScripts: npm 11 warns about (and future npm blocks) dependency install scripts that the
# root package.json has not approved. These two must run: code-server's postinstall installs
# VS Code's server dependencies; argon2 compiles its native module.
cat > "$CS_DIR/package.json" <<JSON
{
  "name": "vox-code-server-cache",
  "private": true,
  "allowScripts": { "code-server@$CS_VERSION": true, "argon2": true }
}
JSON
rm -f "$MARKER"
log "npm install code-server@$CS_VERSION into $CS_DIR (a few minutes: native modules compile)"
(
  cd "$CS_DIR"
  export npm_config_yes=true
  # code-server's postinstall refuses to run as root unless npm_config_unsafe_perm=true. npm 11
  # no longer knows the option (`--unsafe-perm` only earns a warning) but scripts inherit the env.
  export npm_config_unsafe_perm=true
  export TMPDIR="${TMPDIR:-/tmp}"
  npm install --no-audit --no-fund --save-exact "code-server@$CS_VERSION" >&2
) || download_failed "npm install code-server@$CS_VERSION"

# ---- Verify
[ -x "$CS_PKG/lib/vscode/node_modules/@vscode/ripgrep/bin/rg" ] || { log "ripgrep binary missing after install"; exit 1; }
v="$(cs_version)"
[ "$v" = "$CS_VERSION" ] || { log "installed code-server reports version '$v', expected $CS_VERSION"; exit 1; }
touch "$MARKER"
log "code-server $CS_VERSION installed in $CS_DIR ($(du -sh "$CS_DIR" | cut -f1)) in $(elapsed)"
echo "$CS_BIN"
