#!/usr/bin/env python3
"""Write authrim.example.toml from docs/configuration.md's table: every setting, commented
out, with its default and meaning. Run after changing the table; a unit test
(config::tests) checks that every setting the server reads is in the file."""
import re
from pathlib import Path

root = Path(__file__).resolve().parent.parent
doc = (root / "docs" / "configuration.md").read_text()
rows = [l for l in doc.splitlines() if l.startswith("| `AUTHRIM_")]

def plain(cell):
    return re.sub(r"`([^`]*)`", r"\1", cell).strip()

out = [
    "# Authrim's configuration: every setting, commented out, at its default.",
    "# Generated from docs/configuration.md's table by scripts/example-config.py; copy what you change.",
    "# Load it with `authrim --config FILE` (or AUTHRIM_CONFIG=FILE); environment variables",
    "# (named in each comment) override it.",
    "",
]
for row in rows:
    cells = [c.strip() for c in row.strip().strip("|").split("|")]
    envs, keys, default, meaning = cells[0], cells[1], cells[2], "|".join(cells[3:])
    keys = [k.strip(" `") for k in keys.split(",")]
    envs = [e.strip(" `") for e in envs.split(",")]
    for key, env in zip(keys, envs):
        out.append(f"# {plain(meaning)}")
        out.append(f"# ({env}; default: {plain(default)})")
        d = plain(default)
        if d in ("unset", ""):
            value = '"…"'  # no default: a value of the kind the meaning describes
        elif re.fullmatch(r"-?[0-9_]+", d) or d in ("true", "false"):
            value = d
        elif " " in d:
            value = "…  # see the default above"
        else:
            value = f'"{d}"'
        out.append(f"# {key} = {value}")
        out.append("")
out += [
    "# Resource servers (RFC 8707 resources and their scopes; see docs/agents-and-mcp.md):",
    "# [[resource_servers]]",
    '# uri = "https://mcp.example.com/mcp"',
    '# name = "Example MCP server"',
    '# scopes = { "mcp:tools" = "use the example tools" }',
    "",
    "# Issuers whose assertions (ID-JAGs, and with accept naming jwt-bearer generic RFC 7523",
    "# assertions) are grants here (see docs/agents-and-mcp.md); accept naming login-hint-token",
    "# trusts their tokens as CIBA login_hint_token (see docs/api.md):",
    "# [[trusted_issuers]]",
    '# issuer = "https://idp.example.com"',
    '# accept = ["id-jag"]',
    "",
    "# LDAP or Active Directory directories users sign in against (see docs/ldap.md for every",
    "# member and its default):",
    "# [[ldap_directories]]",
    '# id = "corp"',
    '# url = "ldaps://ldap.corp.example"',
    '# bind_dn = "cn=authrim,ou=services,dc=corp,dc=example"',
    '# bind_password = "…"',
    '# base_dn = "ou=people,dc=corp,dc=example"',
    '# user_filter = "(&(objectClass=inetOrgPerson)(uid={username}))"',
    '# subject_attribute = "entryUUID"',
    "",
]
(root / "authrim.example.toml").write_text("\n".join(out))
print(f"wrote authrim.example.toml ({len(rows)} rows)")
