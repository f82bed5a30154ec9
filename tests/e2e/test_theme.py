"""A theme of a logo and two colours (issue 36: a colours-only ``assets/style.css`` used to
replace the built-in style sheet and leave the pages unstyled).

``test_a_colours_and_logo_theme_keeps_the_layout`` writes the README's example theme
(``assets/logo.svg`` and an ``assets/style.css`` that sets ``--accent`` and ``--bg``) and
starts three servers: without a theme, with it, and with it and ``AUTHRIM_THEME_CSS=replace``.
``browser/theme.mjs`` opens the sign-in page of each on a desktop and a phone. The themed page
loads ``/assets/style.css`` then ``/assets/theme.css``, shows the theme's logo and colours (the
page's background, the button's) and has the plain page's layout to the pixel (card, heading,
fields, button; the card's corners and width); the replaced one loads only the theme's file
(no layout: the card without its width limit). The themed server's log says which theme was
loaded and what it changed; no CSP violation or console error. Screenshots go to
``target/e2e-artifacts/theme/``.
"""

from __future__ import annotations

import json
from pathlib import Path

from conftest import REPO_ROOT, TIME_SCALE, run_browser_program
from test_browser import needs_browser
from test_passkeys import check_browser_clean

PROGRAM = Path(__file__).resolve().parent / "browser" / "theme.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "theme"
# The README's example, as it is there.
THEME_CSS = ":root { --accent: #0b7a55; --bg: #eef6f1; }\n"
LOGO = ('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32" width="32" height="32">'
        '<circle cx="16" cy="16" r="15" fill="#0b7a55"/></svg>\n')


def test_a_colours_and_logo_theme_keeps_the_layout(start_authrim, tmp_path):
    needs_browser()
    theme = tmp_path / "theme"
    (theme / "assets").mkdir(parents=True)
    (theme / "assets" / "logo.svg").write_text(LOGO)
    (theme / "assets" / "style.css").write_text(THEME_CSS)
    servers = {
        "plain": start_authrim("theme-plain", {}),
        "themed": start_authrim("theme-themed", {"AUTHRIM_THEME_DIR": str(theme)}),
        "replaced": start_authrim("theme-replaced", {"AUTHRIM_THEME_DIR": str(theme), "AUTHRIM_THEME_CSS": "replace"}),
    }
    env = dict(SERVERS=json.dumps({k: s.issuer for k, s in servers.items()}), WAIT_MS="10000")
    seen = run_browser_program(PROGRAM, env, tmp_path, ARTIFACTS, timeout=90 * TIME_SCALE)
    report = json.dumps(seen["measured"], indent=1)

    for screen in ("desktop", "phone"):
        plain, themed, replaced = (seen["measured"][f"{s}-{screen}"] for s in ("plain", "themed", "replaced"))
        for m in (plain, themed, replaced):
            assert (m["status"], m["path"]) == (200, "/authorize"), (screen, report)
        assert plain["sheets"] == ["/assets/style.css"], report
        assert themed["sheets"] == ["/assets/style.css", "/assets/theme.css"], report
        # The built-in layout, to the pixel; the theme's colours and logo.
        assert themed["geometry"] == plain["geometry"], (screen, report)
        assert themed["card"] == plain["card"] and plain["card"]["radius"] == "10px", (screen, report)
        assert plain["colours"]["body"] == "rgb(243, 244, 248)" and plain["colours"]["button"] == "rgb(59, 91, 219)", report
        assert themed["colours"] == {"body": "rgb(238, 246, 241)", "button": "rgb(11, 122, 85)",
                                     "card": plain["colours"]["card"]}, (screen, report)
        assert themed["logo"]["path"] == "/assets/logo.svg" and themed["logo"]["svg"] == LOGO, report
        assert plain["logo"]["svg"] != LOGO, report
        # A phone does not scroll sideways, themed or not.
        assert plain["scroll_width"] == themed["scroll_width"] == 390 if screen == "phone" else True, report
        # theme_css = replace: the theme's file instead of ours: no layout left.
        assert replaced["sheets"] == ["/assets/style.css"] and replaced["card"]["max_width"] == "none", (screen, report)
        assert replaced["geometry"] != plain["geometry"], report

    # The log says which theme and what it changed; the plain server's says nothing of one.
    def theme_lines(server):
        lines = [json.loads(line) for line in server.log_path.read_text().splitlines() if line.startswith("{")]
        fields = [line.get("fields", line) for line in lines]
        return [f for f in fields if str(f.get("message", "")).startswith("theme")]
    [loaded] = theme_lines(servers["themed"])
    assert loaded["message"] == "theme loaded" and loaded["theme_dir"] == str(theme), loaded
    assert loaded["assets"] == "logo.svg (replaces the built-in), theme.css (added after style.css)", loaded
    assert (loaded["templates"], loaded["mail_templates"], loaded["locales"]) == ("none", "none", "none"), loaded
    [replacing] = theme_lines(servers["replaced"])
    assert replacing["assets"] == "logo.svg (replaces the built-in), style.css (replaces the built-in)", replacing
    assert theme_lines(servers["plain"]) == []
    check_browser_clean(seen, report, set())
