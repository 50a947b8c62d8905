"""A client generated to send every parameter's documented default walks a cursor.

openapi-python-client writes each query parameter with its schema default as the function's
default, so every call of its `list_users` sends `page=0` (and `size=20`) whatever the caller
names. Such a client must still walk a keyset slice (`count=false`, `cursor`). Run by
tests/clients/run after the legacy client; reads CLIENTS_BASE, CLIENTS_TOKEN and CLIENTS_TENANT,
and the legacy client's users from the JSON file named by its one argument.
"""

import json
import os
import sys

from tandem_v2_defaults import AuthenticatedClient
from tandem_v2_defaults.api.users import list_users
from tandem_v2_defaults.types import UNSET


def fail(message):
    sys.exit(f"defaults_v2: FAIL: {message}")


def check(condition, message):
    if not condition:
        fail(message)


def main():
    sent = []
    client = AuthenticatedClient(
        base_url=f"{os.environ['CLIENTS_BASE']}/api/v2",
        token=os.environ["CLIENTS_TOKEN"],
        headers={"X-Tenant-ID": os.environ["CLIENTS_TENANT"]},
        httpx_args={"event_hooks": {"request": [lambda request: sent.append(request.url)]}},
    )
    legacy = json.load(open(sys.argv[1]))

    # Every user of the tenant, one offset page.
    page = list_users.sync_detailed(client=client, size=100)
    check(page.status_code == 200, f"page: {page.status_code} {page.content[:300]!r}")
    listed = [user["id"] for user in json.loads(page.content)["content"]]
    for user in legacy:
        check(user["uuid"] in listed, f"legacy user {user['uuid']} not listed")

    # The same users by cursor, one a slice: the generated call sends page=0 beside the cursor.
    walked, cursor = [], UNSET
    while True:
        answer = list_users.sync_detailed(client=client, count=False, size=1, cursor=cursor)
        check(answer.status_code == 200, f"slice after {cursor}: {answer.status_code} {answer.content[:300]!r}")
        body = json.loads(answer.content)
        walked += [user["id"] for user in body["content"]]
        if body["nextCursor"] is None:
            break
        cursor = body["nextCursor"]
        check(len(walked) <= len(listed), "the walk does not end")
    check(walked == listed, f"the walk read {walked}, the page {listed}")
    with_cursor = [url for url in sent if url.params.get("cursor")]
    check(len(with_cursor) == len(listed) - 1, f"{len(with_cursor)} calls with a cursor")
    check(all(url.params.get("page") == "0" for url in with_cursor), f"the generator sent no page=0: {with_cursor}")
    print(f"  defaults_v2: walked {len(walked)} users by cursor, page=0 sent on every call")


if __name__ == "__main__":
    main()
