#!/usr/bin/env bash
# Remove what install-linux.sh installed (your library and settings are kept).
set -euo pipefail
PREFIX="${PREFIX:-$HOME/.local}"
rm -f "$PREFIX/share/applications/app.margin.Margin.desktop" "$PREFIX/share/metainfo/app.margin.Margin.metainfo.xml" "$PREFIX/bin/margin"
find "$PREFIX/share/icons/hicolor" -name 'app.margin.Margin.*' -delete 2>/dev/null || true
echo "Margin was removed from the applications menu."
