//! `tandem seed`: deterministic demo data. Row `i` is derived from `i` alone (a fixed-seed
//! hash), so the same command on the same starting data writes the same rows; a second run
//! continues after what the tenant already has. Customers go through the import path in
//! batches, so the counters are exact afterwards.

use std::{sync::Arc, time::Instant};

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use crate::{
    core::storage::{CustomerList, Freshness, ImportStart, NewUser, Store, Writes},
    core::{
        customer::{BranchCode, CustomerFilter, CustomerNumber, NewCustomer, Phone},
        import::{ImportReport, ImportStatus},
        listing::ListRequest,
        paging::PageRequest,
        user::{Age, Email, Name, UserFields, UserFilter},
        users::Users,
    },
};

const BATCH: u64 = 20_000;
const FIRST: [&str; 16] = [
    "Ada",
    "Grace",
    "Alan",
    "Edsger",
    "Barbara",
    "Donald",
    "Frances",
    "John",
    "Katherine",
    "Linus",
    "Margaret",
    "Niklaus",
    "Radia",
    "Tim",
    "Ken",
    "Hedy",
];
const LAST: [&str; 16] = [
    "Lovelace",
    "Hopper",
    "Turing",
    "Dijkstra",
    "Liskov",
    "Knuth",
    "Allen",
    "Backus",
    "Johnson",
    "Torvalds",
    "Hamilton",
    "Wirth",
    "Perlman",
    "Berners-Lee",
    "Thompson",
    "Lamarr",
];

/// splitmix64 over a fixed seed: the same `i`, the same row.
fn hash(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15).wrapping_mul(0x5EED_5EED);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

fn epoch() -> DateTime<Utc> {
    DateTime::from_timestamp(1_735_689_600, 0).expect("2025-01-01")
}

pub fn user(i: u64) -> NewUser {
    let h = hash(i);
    let name = format!("{} {}", FIRST[(h % 16) as usize], LAST[((h >> 8) % 16) as usize]);
    let fields = UserFields {
        name: Name::parse(&name).expect("seed names are valid"),
        email: Email::parse(&format!("user{i}@example.com")).expect("seed e-mails are valid"),
        age: Some(Age::parse(18 + (h >> 16) as i64 % 62).expect("seed ages are valid")),
    };
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&h.to_be_bytes());
    bytes[8..].copy_from_slice(&hash(h).to_be_bytes());
    let now = epoch() + Duration::seconds(i as i64);
    NewUser { uuid: uuid::Builder::from_random_bytes(bytes).into_uuid(), fields, now, idempotency: None }
}

pub fn customer(i: u64) -> NewCustomer {
    let h = hash(i ^ 0xC057);
    let name = format!(
        "{} {} {}",
        FIRST[(h % 16) as usize],
        LAST[((h >> 8) % 16) as usize],
        ["Ltd", "AG", "GmbH", "SA"][((h >> 12) % 4) as usize]
    );
    NewCustomer {
        customer_number: CustomerNumber::parse(&format!("{:010}", i + 1)).expect("digits"),
        name: Name::parse(&name).expect("seed names are valid"),
        email: Email::parse(&format!("customer{i}@example.com")).expect("seed e-mails are valid"),
        phone: Phone::parse(&format!("+41 44 {:03} {:02} {:02}", (h >> 20) % 1000, (h >> 30) % 100, (h >> 40) % 100))
            .expect("phone"),
        branch_code: BranchCode::parse(&format!("{:03}", (h >> 48) % 100 + 1)).expect("digits"),
        created_date: epoch() + Duration::minutes(i as i64),
    }
}

/// Adds `users` and `customers` rows to `tenant`, after what it already has.
pub async fn run(store: Arc<dyn Store>, tenant: &str, users: u64, customers: u64) -> anyhow::Result<()> {
    let started = Instant::now();
    let request = ListRequest::page(vec![], PageRequest { page: 0, size: 1 }, &[]);
    let existing_users = Users::new(store.clone(), Writes::Kept)
        .list(tenant, request, UserFilter::default(), Freshness::Latest)
        .await?
        .total
        .unwrap_or(0);
    for start in (existing_users..existing_users + users).step_by(BATCH as usize) {
        let end = (start + BATCH).min(existing_users + users);
        let batch: Vec<NewUser> = (start..end).map(user).collect();
        store.insert_users_bulk(tenant, &batch).await?;
    }
    if users > 0 {
        eprintln!("seeded {users} users in {:.1} s", started.elapsed().as_secs_f64());
    }

    let started = Instant::now();
    let counted = CustomerList::of(
        &ListRequest::page(Vec::new(), PageRequest { page: 0, size: 1 }, &[]),
        CustomerFilter::default(),
        Freshness::Latest,
    );
    let existing_customers = store.list_customers(tenant, &counted).await?.1.unwrap_or(0);
    for start in (existing_customers..existing_customers + customers).step_by(BATCH as usize) {
        let end = (start + BATCH).min(existing_customers + customers);
        let rows: Vec<NewCustomer> = (start..end).map(customer).collect();
        let (id, now) = (Uuid::now_v7(), Utc::now());
        let start = ImportStart { tenant, id, created_at: now, idempotency: None, writes: Writes::Kept };
        let mut import = store.begin_import(start).await?;
        import.write(&rows).await?;
        let (received, created, skipped) = (rows.len() as u64, rows.len() as u64, 0);
        let status = ImportStatus::Completed;
        let report = ImportReport { id, status, received, created, skipped, errors: vec![], created_at: now };
        import.commit(&report).await?;
    }
    if customers > 0 {
        eprintln!("seeded {customers} customers in {:.1} s", started.elapsed().as_secs_f64());
    }
    // The planner must know the tables grew, or it picks plans for empty ones.
    store.analyze().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_depend_on_their_index_only() {
        assert_eq!(user(7).uuid, user(7).uuid);
        assert_ne!(user(7).uuid, user(8).uuid);
        assert_eq!(customer(41), customer(41));
        let branches: std::collections::HashSet<String> =
            (0..5000).map(|i| customer(i).branch_code.as_str().to_string()).collect();
        assert_eq!(branches.len(), 100);
    }
}
