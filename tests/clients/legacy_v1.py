"""The legacy client: creates and lists users through the Python client generated from v1's document.

Run by tests/clients/run. Reads CLIENTS_BASE, CLIENTS_TOKEN, CLIENTS_TENANT and CLIENTS_RUN from the
environment and writes what it created to the JSON file named by its one argument, for the v2 client
(v2_client.ts) to read back. Any mismatch exits non-zero with a message.
"""

import json
import os
import sys

import tandem_v1
import tandem_v2
from tandem_v1.exceptions import ApiException


def fail(message):
    sys.exit(f"legacy_v1: FAIL: {message}")


def check(condition, message):
    if not condition:
        fail(message)


def header(answer, name):
    """A response header, by any case (the generated ApiResponse keeps them in a plain dict)."""
    return next((v for k, v in (answer.headers or {}).items() if k.lower() == name.lower()), None)


def client(module, version):
    config = module.Configuration(host=f"{os.environ['CLIENTS_BASE']}/api/v{version}",
                                  access_token=os.environ["CLIENTS_TOKEN"])
    api = module.ApiClient(config)
    # A fresh tenant per run, so reruns on a shared PostgreSQL never see each other's users.
    api.set_default_header("X-Tenant-ID", os.environ["CLIENTS_TENANT"])
    return module.UsersApi(api)


def main():
    handoff = sys.argv[1]
    run = os.environ["CLIENTS_RUN"]
    users = client(tandem_v1, 1)

    # Create: v1 takes age as optional; the last user has none (v2 must show it as null).
    created = []
    for i in range(5):
        body = tandem_v1.UserInput(name=f"Legacy User {i}", email=f"legacy{i}-{run}@example.com",
                                   age=None if i == 4 else 30 + i)
        answer = users.create_user_with_http_info(body)
        check(answer.status_code == 201, f"create {i}: status {answer.status_code}")
        user = answer.data
        check(isinstance(user.id, int) and user.name == body.name, f"create {i}: body {user!r}")
        check(header(answer, "Location") == f"/api/v1/users/{user.id}",
              f"create {i}: Location {header(answer, 'Location')!r}")
        created.append({"id": user.id, "name": body.name, "email": body.email, "age": body.age})

    # List every page of two, in id order, with the total in X-Total-Count.
    listed = []
    for page in range(3):
        answer = users.list_users_with_http_info(page=page, size=2)
        check(answer.status_code == 200, f"list page {page}: status {answer.status_code}")
        check(header(answer, "X-Total-Count") == "5",
              f"list page {page}: X-Total-Count {header(answer, 'X-Total-Count')!r}, want 5")
        link = header(answer, "Link") or ""
        check('rel="last"' in link, f"list page {page}: Link without last: {link!r}")
        check(('rel="next"' in link) == (page < 2), f"list page {page}: Link next wrong: {link!r}")
        listed += [(u.id, u.name) for u in answer.data]
    check(listed == [(u["id"], u["name"]) for u in created],
          f"listed {listed} differs from created {[(u['id'], u['name']) for u in created]}")

    # Read one back by id.
    one = users.get_user(str(created[0]["id"]))
    check((one.id, one.name) == (created[0]["id"], created[0]["name"]), f"get: {one!r}")

    # A legacy error: the v1 body shape with every failed field, through the generated model.
    # model_construct skips the generated model's own checks (the document's pattern refuses a
    # blank name before sending), so the server is the one that answers.
    try:
        users.create_user(tandem_v1.UserInput.model_construct(name=" ", email="nope"))
        fail("blank name and bad email were accepted")
    except ApiException as error:
        check(error.status == 400, f"invalid create: status {error.status}")
        body = tandem_v1.Error.from_json(error.body)
        pointers = sorted(e.pointer for e in body.errors)
        check(pointers == ["/email", "/name"], f"invalid create: pointers {pointers}")

    # One call through the generated v2 client too: find each user's UUID by e-mail.
    users_v2 = client(tandem_v2, 2)
    for user in created:
        page = users_v2.list_users(email=user["email"])
        check(page.total_elements == 1 and len(page.content) == 1,
              f"v2 by email {user['email']}: {page.total_elements} found")
        check(page.content[0].name == user["name"] and page.content[0].age == user["age"],
              f"v2 by email: {page.content[0]!r} differs from {user!r}")
        user["uuid"] = str(page.content[0].id)

    with open(handoff, "w") as out:
        json.dump(created, out, indent=1)
    print(f"legacy_v1: ok: created {len(created)} users through v1, listed 3 pages, "
          f"checked a 400, found their UUIDs through v2")


if __name__ == "__main__":
    main()
