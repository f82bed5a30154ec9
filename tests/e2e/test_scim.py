"""The SCIM 2.0 service (RFC 7643, RFC 7644) checked by a conformance checker nobody here wrote.

`scim2-tester <https://github.com/python-scim/scim2-tester>`_ (pinned in ``requirements.txt``,
with the client it drives, scim2-client on httpx2, and scim2-models) is pointed at
``{issuer}/scim/v2`` with a bearer credential of scope ``scim`` made through the admin API, as
a provisioning system would be. It reads ServiceProviderConfig, ResourceTypes and Schemas,
builds its models from what they publish, and then, for every resource type the server
advertises, creates, reads, lists, searches, replaces, deletes and PATCHes (add, remove,
replace) resources filled with random values. No check is left out: each one the checker runs
must pass, and the test lists every one that did not, with the checker's reason. A resource
type that ResourceTypes advertises is checked as soon as it is there (Users, once
``/scim/v2/Users`` stops answering 501).
"""

from __future__ import annotations

import httpx2
import requests
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import CheckResult, Status, check_server

from conftest import HTTP_TIMEOUT_S, admin

# What scim2-tester counts as conformant: a MUST kept (SUCCESS), a SHOULD kept (COMPLIANT), a
# MAY used reasonably (ACCEPTABLE). SKIPPED is its own finding that a check does not apply (no
# attribute of the kind to PATCH, say); the test could not run it either, so it is listed and
# not failed. Anything else (DEVIATION, ERROR, CRITICAL) fails the test.
PASSED = {Status.SUCCESS, Status.COMPLIANT, Status.ACCEPTABLE}


def describe(result: CheckResult) -> str:
    where = f"[{result.resource_type}] " if result.resource_type else ""
    return f"{where}{result.title}: {result.status.name}: {result.reason}"


def scim_credential(server) -> str:
    """A credential of scope ``scim``, as a provisioning system is given one (README,
    Provisioning): it opens the SCIM service and nothing else."""
    resp = admin(server, "POST", "/admin/credentials",
                 {"name": server.unique("scim2-tester"), "scopes": ["scim"]})
    assert resp.status_code == 201, f"POST /admin/credentials -> {resp.status_code} {resp.text}"
    return resp.json()["token"]


def test_scim2_tester_passes_every_check(start_authrim):
    # A server of its own: the checker fills the directory with groups of random names (and
    # deletes them, as best it can), which the session's other tests need not see.
    server = start_authrim("scim", {})
    base = server.issuer + "/scim/v2"
    bearer = {"Authorization": f"Bearer {scim_credential(server)}"}
    advertised = requests.get(base + "/ResourceTypes", headers=bearer, timeout=HTTP_TIMEOUT_S)
    assert advertised.status_code == 200, f"GET /ResourceTypes -> {advertised.status_code} {advertised.text}"
    advertised = sorted(rt["name"] for rt in advertised.json()["Resources"])

    with httpx2.Client(base_url=base, headers=bearer, timeout=HTTP_TIMEOUT_S) as http:
        # Nothing described beforehand: the checker discovers the service as a client would.
        results = check_server(SyncSCIMClient(http))

    report = "\n".join(describe(r) for r in results)
    print(f"scim2-tester ran {len(results)} checks:\n{report}")
    failed = [describe(r) for r in results if r.status not in PASSED | {Status.SKIPPED}]
    assert not failed, f"{len(failed)} of {len(results)} scim2-tester checks failed:\n" + "\n".join(failed)
    # Every advertised resource type was checked (the checker would stop before the resources if
    # discovery had failed, and that would have failed above).
    checked = sorted({r.resource_type for r in results if r.resource_type})
    assert checked == advertised, (checked, advertised)
