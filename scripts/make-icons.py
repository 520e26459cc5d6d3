"""Render the panel's PNG icons from its SVGs (admin/icons/), with Debian's Chromium.

The PNGs are committed; run this again after changing an SVG:
    .venv/bin/python scripts/make-icons.py
Home screens want PNGs (192 and 512 pixels, a maskable one whose picture stays inside the
safe circle, and a 180-pixel apple-touch-icon); browsers use the SVG where they can."""

from __future__ import annotations

import base64
from pathlib import Path

from playwright.sync_api import sync_playwright

ICONS = Path(__file__).resolve().parents[1] / "admin" / "icons"
# (source SVG, size in pixels, PNG)
RENDERS = [
    ("icon.svg", 192, "icon-192.png"),
    ("icon.svg", 512, "icon-512.png"),
    ("maskable.svg", 512, "maskable-512.png"),
    ("maskable.svg", 180, "apple-touch-icon.png"),
]


def main() -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        for source, size, target in RENDERS:
            page = browser.new_page(viewport={"width": size, "height": size})
            page.set_content(
                "<style>html,body{margin:0;background:transparent}img{display:block}</style>"
                f'<img src="data:image/svg+xml;base64,{_base64(ICONS / source)}" width="{size}" height="{size}">'
            )
            page.locator("img").screenshot(path=str(ICONS / target), omit_background=True)
            page.close()
            print(f"{target}: {size}x{size} from {source}")
        browser.close()


def _base64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


if __name__ == "__main__":
    main()
