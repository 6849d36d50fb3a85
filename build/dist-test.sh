#!/usr/bin/env bash
# `make dist-test`: checks what `make dist` put in dist/.
#   - every archive holds what it should, and every program in them prints
#     the same version (VERSION, from git describe);
#   - the .deb: installed with dpkg -i (as root), `switchboard version` and
#     `switchboard serve` run from /usr/bin, the daemon answers `status` and
#     stops on SIGINT, then dpkg -r removes it all;
#   - the NSIS installer, under Wine in a fresh prefix: a silent install puts
#     the programs, the Start-menu shortcut, the Run value and the uninstall
#     entry in place, the installed switchboard.exe answers `version` and
#     runs the daemon, and the uninstaller stops that daemon and removes what
#     the installer added.
# Wine processes are those of this script's own prefix, stopped with
# `wineserver -k` for that prefix only.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
: "${VERSION:?VERSION (git describe) is required}" "${DEB_VERSION:?DEB_VERSION is required}"
dist=$root/dist
work=$root/bin/dist-test
rm -rf "$work" && mkdir -p "$work"

fail() { echo "dist-test: FAIL: $*" >&2; exit 1; }
ok() { echo "dist-test: ok: $*"; }
# poll SECONDS COMMAND...: runs COMMAND until it succeeds, for at most SECONDS.
poll() {
	local until=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$until" ] || return 1
		sleep 0.2
	done
}

deb=$dist/switchboard_${VERSION}_linux_amd64.deb
tgz=$dist/switchboard_${VERSION}_linux_amd64.tar.gz
zip=$dist/switchboard_${VERSION}_windows_amd64.zip
setup=$dist/switchboard_${VERSION}_windows_amd64_setup.exe
for f in "$deb" "$tgz" "$zip" "$setup" "$dist/switchboard_${VERSION}_darwin_arm64.tar.gz" "$dist/switchboard_${VERSION}_darwin_amd64.tar.gz" "$dist/SHA256SUMS"; do
	[ -s "$f" ] || fail "$f is missing (run make dist)"
done
(cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not match"
ok "every artefact is there and matches SHA256SUMS"

# --- archives -------------------------------------------------------------
want_in() { # want_in LISTING NAME...
	local listing=$1
	shift
	for n in "$@"; do grep -qx "$n" <<<"$listing" || fail "$n is not in the archive:"$'\n'"$listing"; done
}
top=switchboard_${VERSION}_linux_amd64
want_in "$(tar -tzf "$tgz")" "$top/switchboard" "$top/switchboard-window" "$top/switchboard-tray" \
	"$top/switchboard.desktop" "$top/switchboard.png" "$top/README.md"
mkdir -p "$work/tgz" && tar -C "$work/tgz" -xzf "$tgz"
for p in switchboard switchboard-tray switchboard-window; do
	got=$("$work/tgz/$top/$p" version)
	[ "$got" = "switchboard $VERSION" ] || fail "$p version in the .tar.gz says '$got', want 'switchboard $VERSION'"
done
ok ".tar.gz: three programs, launcher, icon; each says 'switchboard $VERSION'"
for a in arm64 amd64; do
	top=switchboard_${VERSION}_darwin_$a
	want_in "$(tar -tzf "$dist/$top.tar.gz")" "$top/switchboard" "$top/README.md"
	tar -C "$work" -xzf "$dist/$top.tar.gz" "$top/switchboard"
	file=$(od -An -tx1 -N4 "$work/$top/switchboard" | tr -d ' ')
	[ "$file" = cffaedfe ] || fail "darwin $a binary is not Mach-O 64 (magic $file)"
	grep -aq "$VERSION" "$work/$top/switchboard" || fail "darwin $a binary does not carry $VERSION"
done
ok "darwin arm64 and amd64: Mach-O binaries carrying $VERSION"
zipl=$(unzip -Z1 "$zip")
want_in "$zipl" switchboard.exe switchboard-tray.exe switchboard-window.exe switchboard.ico README.md
ok ".zip: switchboard.exe, -tray.exe, -window.exe, icon, README"

# --- .deb -----------------------------------------------------------------
[ "$(dpkg-deb -f "$deb" Version)" = "$DEB_VERSION" ] || fail ".deb Version $(dpkg-deb -f "$deb" Version), want $DEB_VERSION"
debl=$(dpkg-deb -c "$deb" | awk '{print $6}')
want_in "$debl" ./usr/bin/switchboard ./usr/bin/switchboard-window ./usr/bin/switchboard-tray \
	./usr/share/applications/switchboard.desktop ./usr/share/icons/hicolor/1024x1024/apps/switchboard.png
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo -n"
if dpkg -s switchboard >/dev/null 2>&1; then
	fail "a switchboard package is installed already; not touching it"
fi
serve_pid=""
cleanup_deb() {
	[ -z "$serve_pid" ] || kill "$serve_pid" 2>/dev/null || true
	if dpkg -s switchboard >/dev/null 2>&1; then $sudo dpkg -r switchboard >/dev/null || true; fi
}
trap cleanup_deb EXIT
$sudo dpkg -i "$deb" >"$work/dpkg-i.log" 2>&1 || { cat "$work/dpkg-i.log" >&2; fail "dpkg -i"; }
for p in switchboard switchboard-tray switchboard-window; do
	got=$(/usr/bin/$p version)
	[ "$got" = "switchboard $VERSION" ] || fail "/usr/bin/$p version says '$got', want 'switchboard $VERSION'"
done
ok "dpkg -i: /usr/bin/switchboard version says 'switchboard $VERSION' (so do -tray and -window)"
home=$work/deb-home
mkdir -p "$home"
HOME=$home /usr/bin/switchboard --home "$home/data" serve --listen 127.0.0.1:0 >"$work/serve.log" 2>&1 &
serve_pid=$!
poll 60 grep -q "is running" "$work/serve.log" || { cat "$work/serve.log" >&2; fail "switchboard serve from /usr/bin did not start"; }
HOME=$home /usr/bin/switchboard --home "$home/data" status >"$work/status.log" 2>&1 || { cat "$work/status.log" >&2; fail "status against the installed daemon"; }
kill -INT "$serve_pid"
rc=0
wait "$serve_pid" || rc=$?
serve_pid=""
[ "$rc" = 0 ] || { cat "$work/serve.log" >&2; fail "the installed daemon exited $rc on SIGINT"; }
[ ! -e "$home/data/daemon.json" ] || fail "daemon.json left after the daemon stopped"
ok "/usr/bin/switchboard serve ran, answered status, stopped on SIGINT"
$sudo dpkg -r switchboard >"$work/dpkg-r.log" 2>&1 || { cat "$work/dpkg-r.log" >&2; fail "dpkg -r"; }
for f in /usr/bin/switchboard /usr/bin/switchboard-tray /usr/bin/switchboard-window /usr/share/applications/switchboard.desktop; do
	[ ! -e "$f" ] || fail "$f is still there after dpkg -r"
done
ok "dpkg -r removed it"
trap - EXIT

# --- NSIS installer under Wine --------------------------------------------
wine=$(command -v wine64 || echo /usr/lib/wine/wine64)
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
[ -x "$wine" ] && [ -x "$wineserver" ] || fail "wine64 is not installed"
export GOCACHE="$(go env GOCACHE)"
export HOME=$work/wine-home WINEPREFIX=$work/prefix WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY WAYLAND_DISPLAY
mkdir -p "$HOME"
wine_pid=""
cleanup_wine() {
	[ -z "$wine_pid" ] || kill "$wine_pid" 2>/dev/null || true
	"$wineserver" -k >/dev/null 2>&1 || true
}
trap cleanup_wine EXIT
"$wine" wineboot -i >"$work/wineboot.log" 2>&1
x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
	build/wine/bcryptprimitives.c build/wine/bcryptprimitives.def -ladvapi32
"$wine" "$setup" /S >"$work/setup.log" 2>&1 || { cat "$work/setup.log" >&2; fail "the installer exited non-zero"; }
users=$WINEPREFIX/drive_c/users/$(id -un)
inst=$users/AppData/Local/Programs/Switchboard
for f in switchboard.exe switchboard-tray.exe switchboard-window.exe switchboard.ico uninstall.exe; do
	[ -s "$inst/$f" ] || fail "the installer did not put $f in %LOCALAPPDATA%\\Programs\\Switchboard"
done
lnk="$users/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Switchboard.lnk"
[ -s "$lnk" ] || fail "no Start-menu shortcut ($lnk)"
runkey='HKCU\Software\Microsoft\Windows\CurrentVersion\Run'
uninstkey='HKCU\Software\Microsoft\Windows\CurrentVersion\Uninstall\Switchboard'
"$wine" reg query "$runkey" /v io.switchboard.tray 2>/dev/null | grep -q 'switchboard-tray.exe' || fail "no Run value for start at login"
"$wine" reg query "$uninstkey" /v DisplayVersion 2>/dev/null | grep -q "$VERSION" || fail "the uninstall entry does not carry $VERSION"
got=$("$wine" "$inst/switchboard.exe" version | tr -d '\r')
[ "$got" = "switchboard $VERSION" ] || fail "installed switchboard.exe version says '$got', want 'switchboard $VERSION'"
ok "NSIS under Wine: installed per-user (programs, shortcut, Run value, uninstall entry); switchboard.exe version says 'switchboard $VERSION'"

# The installed daemon runs; the uninstaller stops it before removing files.
"$wine" "$inst/switchboard.exe" --home 'C:\sbhome' serve --listen 127.0.0.1:0 >"$work/wine-serve.log" 2>&1 &
wine_pid=$!
poll 90 grep -q "is running" "$work/wine-serve.log" || { cat "$work/wine-serve.log" >&2; fail "the installed switchboard.exe serve did not start"; }
"$wine" "$inst/uninstall.exe" /S >"$work/uninstall.log" 2>&1 || true
gone() { ! kill -0 "$wine_pid" 2>/dev/null && [ ! -e "$inst/switchboard.exe" ] && [ ! -e "$inst/uninstall.exe" ] && [ ! -e "$lnk" ]; }
poll 90 gone || fail "after the uninstaller: daemon $(kill -0 "$wine_pid" 2>/dev/null && echo running || echo stopped), files: $(ls "$inst" 2>/dev/null | tr '\n' ' ')"
wine_pid=""
if "$wine" reg query "$runkey" /v io.switchboard.tray >/dev/null 2>&1; then fail "the Run value is left after uninstall"; fi
if "$wine" reg query "$uninstkey" >/dev/null 2>&1; then fail "the uninstall entry is left after uninstall"; fi
[ -d "$WINEPREFIX/drive_c/sbhome" ] || fail "the uninstaller removed the user's data directory"
ok "NSIS uninstaller under Wine: stopped the running daemon, removed programs, shortcut, Run value and entry, kept the data"
echo "dist-test: all passed"
