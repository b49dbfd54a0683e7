#!/usr/bin/env bash
# Put Margin in the applications menu: the .desktop entry (with file associations), the icons
# and the AppStream metadata, for the current user.
# Usage: packaging/install-linux.sh [path/to/dist/Margin]   (PREFIX defaults to ~/.local)
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
BUNDLE="$(cd "${1:-$HERE/dist/Margin}" && pwd)"
PREFIX="${PREFIX:-$HOME/.local}"
test -x "$BUNDLE/Margin" || { echo "No Margin bundle at $BUNDLE: build it first with 'make package'." >&2; exit 1; }
RES="$HERE/resources"
[ -d "$RES" ] || RES="$BUNDLE/_internal/resources"
install -d "$PREFIX/share/applications" "$PREFIX/share/metainfo" "$PREFIX/bin"
sed "s|^Exec=.*|Exec=\"$BUNDLE/Margin\" %F|" "$RES/linux/app.margin.Margin.desktop" > "$PREFIX/share/applications/app.margin.Margin.desktop"
install -m 644 "$RES/linux/app.margin.Margin.metainfo.xml" "$PREFIX/share/metainfo/"
for size in 16 24 32 48 64 128 256 512; do
  install -d "$PREFIX/share/icons/hicolor/${size}x${size}/apps"
  install -m 644 "$RES/icons/margin-$size.png" "$PREFIX/share/icons/hicolor/${size}x${size}/apps/app.margin.Margin.png"
done
install -d "$PREFIX/share/icons/hicolor/scalable/apps"
install -m 644 "$RES/icons/margin.svg" "$PREFIX/share/icons/hicolor/scalable/apps/app.margin.Margin.svg"
ln -sf "$BUNDLE/Margin" "$PREFIX/bin/margin"
command -v update-desktop-database >/dev/null && update-desktop-database -q "$PREFIX/share/applications" || true
command -v gtk-update-icon-cache >/dev/null && gtk-update-icon-cache -q -t "$PREFIX/share/icons/hicolor" || true
echo "Installed Margin for $(whoami): look for it in your applications menu."
