#!/usr/bin/env bash
# Smoke test of a built bundle: its size (at most MAX_BUNDLE_MB, 220), its own checks (every
# module imports, search by meaning, PDF, images, keyring: packaging/bundle_selftest.py), then
# start it headless with no network and no key: a PDF, an EPUB, a comic (CBZ) and the dark
# theme, each with a screenshot; then the same under Xvfb when it is installed.
# Usage: packaging/smoke.sh [path/to/Margin]
set -euo pipefail
cd "$(dirname "$0")/.."
APP=${1:-dist/Margin/Margin}
BOOK=${SMOKE_BOOK:-}
for dir in "${MARGIN_FIXTURES:-}" tests/fixtures; do  # the repository's own books
  if [ -z "$BOOK" ] && [ -n "$dir" ] && [ -f "$dir/pdf/pdflatex-4-pages.pdf" ]; then BOOK="$dir/pdf/pdflatex-4-pages.pdf"; fi
done
if [ -z "$BOOK" ]; then  # no fixtures here: a book of our own
  BOOK="$(pwd)/resources/welcome/Welcome to Margin.md"
fi
DIR=$(dirname "$APP")
MAX_MB=${MAX_BUNDLE_MB:-180}
size=$(du -sm "$DIR" | cut -f1)
echo "bundle: ${size} MB (at most ${MAX_MB}); largest files:"
find "$DIR" -type f -printf '%s\t%P\n' | sort -n | tail -15 | awk -F'\t' '{printf "  %6.1f MB  %s\n", $1 / 1048576, $2}'
echo "largest folders:"
(cd "$DIR" && du -m --max-depth=2 . | sort -n | tail -8 | awk '{printf "  %6d MB  %s\n", $1, $2}')
if [ "$size" -gt "$MAX_MB" ]; then echo "the bundle is ${size} MB, more than ${MAX_MB} MB"; exit 1; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# a clean environment: no key, no MARGIN_HOME, a fresh home; data must go to the user folders
run() {
  env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$tmp/home" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" \
    MARGIN_STARTUP_TIMING=1 QT_QPA_PLATFORM="$1" ${DISPLAY:+DISPLAY=$DISPLAY} ${XAUTHORITY:+XAUTHORITY=$XAUTHORITY} "${@:2}"
}

mkdir -p "$tmp/home"
LANG=C.UTF-8 "$APP" --version
run offscreen "$APP" --bundle-self-test "$BOOK"
# start-up as a user waits for it: from launching the process to the window's first paint
# (the app prints the wall-clock time of that paint; its own timer starts too late)
t0=$(date +%s%N)
run offscreen "$APP" --exit-after-shown 2> "$tmp/shown.log"
t1=$(date +%s%N)
painted=$(grep -o 'first paint at [0-9]* ns' "$tmp/shown.log" | grep -o '[0-9]*' || true)
if [ -z "$painted" ]; then echo "the window was never painted"; cat "$tmp/shown.log"; exit 1; fi
echo "launch to first painted window: $(( (painted - t0) / 1000000 )) ms; process wall time $(( (t1 - t0) / 1000000 )) ms"
run offscreen "$APP" --open "$BOOK" --page 2 --screenshot "$tmp/offscreen.png"
test "$(stat -c %s "$tmp/offscreen.png")" -gt 10000
test -d "$tmp/data/Margin" || { echo "the bundle did not use the user data folder"; exit 1; }
echo "offscreen screenshot OK"
EPUB=$(dirname "$(dirname "$BOOK")")/books/metamorphosis.epub
THEMED=("$BOOK" --page 2)  # the book the theme check compares light and dark on
LIGHT="$tmp/offscreen.png"
if [ -f "$EPUB" ]; then
  run offscreen "$APP" --open "$EPUB" --page 3 --screenshot "$tmp/epub.png"
  test "$(stat -c %s "$tmp/epub.png")" -gt 10000
  echo "EPUB screenshot OK"
  THEMED=("$EPUB" --page 3) LIGHT="$tmp/epub.png"
fi
run offscreen "$APP" --bundle-self-test --write-comic "$tmp/comic.cbz"
run offscreen "$APP" --open "$tmp/comic.cbz" --page 2 --screenshot "$tmp/comic.png"
share=$(run offscreen "$APP" --bundle-self-test --comic-share "$tmp/comic.png")
if [ "$share" -lt 15 ]; then echo "the comic's page is not on screen ($share % of the window)"; exit 1; fi
echo "CBZ screenshot OK (its page fills $share % of the window)"
# the dark theme: the same book, the window must come out dark (the light one bright)
light=$(run offscreen "$APP" --bundle-self-test --luminance "$LIGHT")
mkdir -p "$tmp/config/Margin"
printf '[General]\ntheme=dark\n' > "$tmp/config/Margin/window.ini"
run offscreen "$APP" --open "${THEMED[@]}" --screenshot "$tmp/dark.png"
dark=$(run offscreen "$APP" --bundle-self-test --luminance "$tmp/dark.png")
echo "mean lightness: light theme $light, dark theme $dark"
if [ "$dark" -gt 90 ] || [ "$light" -lt 150 ]; then echo "the themes do not look right"; exit 1; fi
rm -f "$tmp/config/Margin/window.ini"
if [ -n "${SMOKE_SHOTS:-}" ]; then mkdir -p "$SMOKE_SHOTS" && cp "$tmp"/*.png "$SMOKE_SHOTS"/; fi
# the API key in the system keyring (SecretService over D-Bus, as on a Linux desktop), when
# this machine has gnome-keyring: saved, read back, deleted, all inside a private session
if command -v gnome-keyring-daemon >/dev/null && command -v dbus-run-session >/dev/null; then
  cat > "$tmp/keyring.sh" <<SCRIPT
#!/usr/bin/env bash
set -euo pipefail
echo -n smoke | gnome-keyring-daemon --unlock --components=secrets >/dev/null
echo sk-ant-smoke-test | "$APP" key set
"$APP" key status | grep -q "API key: set"
"$APP" key delete >/dev/null
"$APP" key status | grep -q "API key: not set"
SCRIPT
  chmod +x "$tmp/keyring.sh"
  env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$tmp/home" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" \
    dbus-run-session -- "$tmp/keyring.sh" 2>/dev/null
  echo "keyring: the key was saved, read back and deleted"
fi
if command -v xvfb-run >/dev/null; then
  cat > "$tmp/under-x.sh" <<SCRIPT
#!/usr/bin/env bash
exec env -i PATH=/usr/bin:/bin LANG=C.UTF-8 HOME="$tmp/home" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" \\
  DISPLAY="\$DISPLAY" XAUTHORITY="\$XAUTHORITY" QT_QPA_PLATFORM=xcb "\$@"
SCRIPT
  chmod +x "$tmp/under-x.sh"
  xvfb-run -a "$tmp/under-x.sh" "$APP" --open "$BOOK" --screenshot "$tmp/xvfb.png"
  test "$(stat -c %s "$tmp/xvfb.png")" -gt 10000
  echo "Xvfb screenshot OK"
fi
echo "smoke test passed"
