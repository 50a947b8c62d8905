//! How a version's changes are checked as it is built, on v1 and v2 themselves: here, in the
//! folder of the version they are about (no module outside a version's folder names one).

use crate::{
    changes::{Change, ChangeKind, Operation, Serving, Touches, moved_to},
    registry::Version,
};

const fn named(id: &'static str, touches: Touches, serving: Serving) -> Change {
    Change {
        id,
        kind: ChangeKind::BehaviourChanged,
        title: "t",
        description: "d",
        instruction: "i",
        touches,
        before: "b",
        after: "a",
        serving,
    }
}

const TYPO: &[Change] = &[named("typo", Touches::Only(&[Operation::get("/userz")]), Serving::NONE)];
const WRONG_METHOD: &[Change] = &[named("put", Touches::Only(&[Operation::put("/users")]), Serving::NONE)];
const NOWHERE: &[Change] = &[named("empty", Touches::Only(&[]), Serving::NONE)];
const TWICE: &[Change] = &[named("same", Touches::Every, Serving::NONE), named("same", Touches::Every, Serving::NONE)];
const MOVED_FROM_NOWHERE: &[Change] =
    &[named("move", Touches::Every, Serving { moves: &[("/people", "/userz")], ..Serving::NONE })];

#[test]
fn a_change_naming_what_the_version_lacks_refuses_to_build() {
    let v1 = super::version();
    let refused = |changes: &'static [Change]| Version::older(0, changes, &v1).err().unwrap().to_string();
    assert_eq!(refused(TYPO), "the change `typo` names GET /userz, which v0 does not have");
    assert_eq!(refused(WRONG_METHOD), "the change `put` names PUT /users, which v0 does not have");
    assert_eq!(refused(NOWHERE), "the change `empty` of v0 touches no operation");
    assert_eq!(refused(TWICE), "v0 declares the change `same` twice");
    assert_eq!(refused(MOVED_FROM_NOWHERE), "the change `move` moves /people, which v0 does not have");
    assert!(Version::older(0, &[], &v1).is_ok());
}

#[test]
fn every_operation_means_each_of_the_older_versions() {
    let v1 = super::version();
    let operations: Vec<_> = v1.routes().unwrap().operations().collect();
    let every = named("every", Touches::Every, Serving::NONE);
    assert_eq!(every.operations(&operations).len(), operations.len());
    assert_eq!(every.operations(&operations)[0], "GET /users", "in the document's order");
}

/// The admin policy is declared once, on v2's operations: each v1 operation has the policy
/// of the v2 operation it is served by, so a v1 caller never reaches what v2 closes.
#[test]
fn an_older_operation_has_the_admin_policy_of_the_one_it_reaches() {
    let v2 = crate::v2::version();
    let v1 = super::over(&v2);
    let (older, newer) = (v1.routes().unwrap(), v2.routes().unwrap());
    let mut admin = Vec::new();
    for (template, method) in older.operations() {
        let reached = moved_to(v1.changes, &template).unwrap_or(&template);
        let policy = older.entry(&template).unwrap().policy(&method);
        assert_eq!(policy.admin, newer.entry(reached).unwrap().policy(&method).admin, "{method} {template}");
        if policy.admin {
            admin.push(format!("{method} {template}"));
        }
    }
    assert_eq!(admin, ["DELETE /users/{id}", "POST /upload", "GET /imports/{id}"]);
}
