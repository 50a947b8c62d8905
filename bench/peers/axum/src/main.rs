//! Tandem's benchmark endpoints written the way a Rust team following "Zero to Production in
//! Rust" writes them: axum, an sqlx PgPool, jsonwebtoken in a middleware for the bearer token,
//! the redis crate's ConnectionManager for the Idempotency-Key, serde for the body. One process
//! on tokio's multi-thread runtime (a worker a core). The same SQL and answers as
//! bench/peers/fastify/server.js.

use std::{env, error::Error, sync::Arc};

use axum::{
    Extension, Json, Router,
    extract::{FromRequest, Path, Query, Request, State, rejection::JsonRejection},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::{get, post},
    serve::ListenerExt,
};
use chrono::{DateTime, SecondsFormat, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use redis::{AsyncTypedCommands, ExistenceCheck, SetExpiry, SetOptions, aio::ConnectionManager};
use serde::{Deserialize, Serialize, Serializer};
use sqlx::{FromRow, PgPool, postgres::PgPoolOptions};
use tokio::signal::unix::{SignalKind, signal};
use uuid::Uuid;

struct AppState {
    db: PgPool,
    redis: ConnectionManager,
    jwt_key: DecodingKey,
    jwt_validation: Validation,
}

type SharedState = Arc<AppState>;

#[tokio::main]
async fn main() -> Result<(), Box<dyn Error>> {
    let db = PgPoolOptions::new().max_connections(8).connect(&env::var("PEER_DATABASE_URL")?).await?;
    let redis = ConnectionManager::new(redis::Client::open(env::var("PEER_REDIS_URL")?)?).await?;
    // As @fastify/jwt checks by default: the HS256 signature, `exp` and `nbf` with no leeway, and
    // no audience (none is configured).
    let mut jwt_validation = Validation::new(Algorithm::HS256);
    jwt_validation.leeway = 0;
    jwt_validation.validate_nbf = true;
    jwt_validation.validate_aud = false;
    let jwt_key = DecodingKey::from_secret(env::var("PEER_JWT_SECRET")?.as_bytes());
    let state = Arc::new(AppState { db, redis, jwt_key, jwt_validation });

    let app = Router::new()
        .route("/api/v2/users/{id}", get(get_user))
        .route("/api/v2/customers", get(list_customers))
        .route("/users", post(create_user))
        .layer(middleware::from_fn_with_state(state.clone(), authenticate))
        .with_state(state);

    let port = env::var("PEER_PORT").map_or(Ok(18484), |port| port.parse())?;
    // TCP_NODELAY on every connection, as node sets it.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?.tap_io(|stream| {
        let _ = stream.set_nodelay(true);
    });
    let mut sigterm = signal(SignalKind::terminate())?;
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            sigterm.recv().await;
        })
        .await?;
    Ok(())
}

#[derive(Clone, Deserialize)]
struct Claims {
    sub: String,
}

/// Every request carries `Authorization: Bearer <token>`, else 401. The claims go on to the handlers.
async fn authenticate(
    State(state): State<SharedState>,
    mut request: Request,
    next: Next,
) -> Result<Response, ApiError> {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .ok_or(ApiError::Unauthorized)?;
    let claims = jsonwebtoken::decode::<Claims>(token, &state.jwt_key, &state.jwt_validation)
        .map_err(|_| ApiError::Unauthorized)?
        .claims;
    request.extensions_mut().insert(claims);
    Ok(next.run(request).await)
}

/// A user as GET /api/v2/users/{id} answers it: its public id is the row's uuid.
#[derive(FromRow, Serialize)]
#[serde(rename_all = "camelCase")]
struct User {
    #[sqlx(rename = "uuid")]
    id: Uuid,
    name: String,
    email: String,
    age: Option<i32>,
    #[serde(serialize_with = "stamp")]
    created_at: DateTime<Utc>,
    #[serde(serialize_with = "stamp")]
    updated_at: DateTime<Utc>,
    version: i64,
}

async fn get_user(State(state): State<SharedState>, Path(id): Path<i64>) -> Result<Json<User>, ApiError> {
    sqlx::query_as::<_, User>(
        "SELECT id, uuid, name, email, age, created_at, updated_at, version
         FROM users WHERE tenant = 'default' AND id = $1",
    )
    .bind(id)
    .fetch_optional(&state.db)
    .await?
    .map(Json)
    .ok_or(ApiError::NotFound)
}

#[derive(Deserialize)]
struct PageQuery {
    page: Option<i64>,
    size: Option<i64>,
}

#[derive(FromRow, Serialize)]
#[serde(rename_all = "camelCase")]
struct Customer {
    id: i64,
    customer_number: String,
    name: String,
    email: String,
    phone: String,
    branch_code: String,
    #[serde(serialize_with = "stamp")]
    created_date: DateTime<Utc>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Page {
    content: Vec<Customer>,
    pageable: Pageable,
    total_elements: i64,
    total_pages: Option<i64>,
    size: i64,
    number: i64,
    number_of_elements: usize,
    first: bool,
    last: bool,
    sort: Vec<String>,
    empty: bool,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Pageable {
    page_number: i64,
    page_size: i64,
    sort: Vec<String>,
    offset: i64,
    paged: bool,
    unpaged: bool,
}

async fn list_customers(
    State(state): State<SharedState>,
    Query(query): Query<PageQuery>,
) -> Result<Json<Page>, ApiError> {
    let page = query.page.unwrap_or(0);
    let size = query.size.unwrap_or(20);
    let (content, total) = tokio::try_join!(
        sqlx::query_as::<_, Customer>(
            "SELECT id, customer_number, name, email, phone, branch_code, created_date FROM customers
             WHERE tenant = 'default' ORDER BY id LIMIT $1 OFFSET $2",
        )
        .bind(size)
        .bind(page * size)
        .fetch_all(&state.db),
        sqlx::query_scalar::<_, i64>("SELECT n FROM customer_counts WHERE tenant = 'default' AND branch_code = ''")
            .fetch_one(&state.db),
    )?;
    // Math.ceil(total / size), the size ≥ 0 here (the database refuses a negative LIMIT). None
    // for size=0, written as null, as server.js writes its Infinity.
    let pages = (total + size - 1).checked_div(size);
    Ok(Json(Page {
        pageable: Pageable {
            page_number: page,
            page_size: size,
            sort: Vec::new(),
            offset: page * size,
            paged: true,
            unpaged: false,
        },
        total_elements: total,
        total_pages: pages,
        size,
        number: page,
        number_of_elements: content.len(),
        first: page == 0,
        last: pages.is_some_and(|pages| page >= pages - 1),
        sort: Vec::new(),
        empty: content.is_empty(),
        content,
    }))
}

/// The body of POST /users, checked as server.js's JSON schema checks it.
#[derive(Deserialize)]
struct NewUser {
    name: String,
    email: String,
    age: Option<i32>,
}

impl NewUser {
    fn validate(&self) -> Result<(), &'static str> {
        if !(1..=200).contains(&self.name.chars().count()) {
            return Err("body/name must be 1 to 200 characters");
        }
        if self.email.chars().count() > 254 || !is_email(&self.email) {
            return Err("body/email must be an e-mail address of at most 254 characters");
        }
        if self.age.is_some_and(|age| age < 18) {
            return Err("body/age must be 18 or more");
        }
        Ok(())
    }
}

/// server.js's pattern `^[^@\s]+@[^@\s]+\.[^@\s]+$`: one @, no white space, a dot inside the domain.
fn is_email(email: &str) -> bool {
    let Some((local, domain)) = email.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && !email.contains(char::is_whitespace)
        && domain.char_indices().any(|(at, c)| c == '.' && at > 0 && at + 1 < domain.len())
}

impl<S: Send + Sync> FromRequest<S> for NewUser {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<Self, ApiError> {
        let Json(user) = Json::<NewUser>::from_request(request, state).await?;
        user.validate().map_err(|why| ApiError::Invalid(why.to_string()))?;
        Ok(user)
    }
}

/// A created user's answer, and what a keyed POST keeps in Redis to replay it (as server.js keeps it).
#[derive(Serialize, Deserialize)]
struct Created {
    body: CreatedUser,
    location: String,
}

#[derive(Serialize, Deserialize)]
struct CreatedUser {
    id: i64,
    name: String,
}

async fn create_user(
    State(state): State<SharedState>,
    Extension(claims): Extension<Claims>,
    headers: HeaderMap,
    user: NewUser,
) -> Result<Response, ApiError> {
    let mut redis = state.redis.clone();
    let key = headers
        .get("idempotency-key")
        .filter(|key| !key.is_empty())
        .map(|key| format!("peer:idem:{}:{}", claims.sub, String::from_utf8_lossy(key.as_bytes())));
    if let Some(key) = key.as_deref() {
        let claim = SetOptions::default().conditional_set(ExistenceCheck::NX).with_expiration(SetExpiry::PX(60_000));
        if redis.set_options(key, "inflight", claim).await?.is_none() {
            return match redis.get(key).await? {
                Some(stored) if stored != "inflight" => Ok(created(serde_json::from_str(&stored)?, true)),
                _ => Err(ApiError::InFlight),
            };
        }
    }
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO users (uuid, tenant, name, email, email_key, age, created_at, updated_at)
         VALUES (gen_random_uuid(), 'default', $1, $2, lower($2), $3, now(), now()) RETURNING id",
    )
    .bind(&user.name)
    .bind(&user.email)
    .bind(user.age)
    .fetch_one(&state.db)
    .await?;
    let answer = Created { body: CreatedUser { id, name: user.name }, location: format!("/users/{id}") };
    if let Some(key) = key.as_deref() {
        let keep = SetOptions::default().with_expiration(SetExpiry::PX(86_400_000));
        redis.set_options(key, serde_json::to_string(&answer)?, keep).await?;
    }
    Ok(created(answer, false))
}

fn created(answer: Created, replayed: bool) -> Response {
    let mut response = (StatusCode::CREATED, [(header::LOCATION, answer.location)], Json(answer.body)).into_response();
    if replayed {
        response.headers_mut().insert("idempotent-replayed", HeaderValue::from_static("true"));
    }
    response
}

/// RFC 3339 to the second, as server.js writes it: `2024-05-01T12:00:00Z`.
fn stamp<S: Serializer>(at: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&at.to_rfc3339_opts(SecondsFormat::Secs, true))
}

enum ApiError {
    Unauthorized,
    NotFound,
    InFlight,
    Invalid(String),
    Internal(Box<dyn Error + Send + Sync>),
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, error) = match self {
            Self::Unauthorized => (StatusCode::UNAUTHORIZED, "unauthorized".to_string()),
            Self::NotFound => (StatusCode::NOT_FOUND, "not found".to_string()),
            Self::InFlight => (StatusCode::CONFLICT, "in flight".to_string()),
            Self::Invalid(why) => (StatusCode::BAD_REQUEST, why),
            Self::Internal(err) => {
                eprintln!("{err}");
                (StatusCode::INTERNAL_SERVER_ERROR, "internal server error".to_string())
            }
        };
        (status, Json(serde_json::json!({ "error": error }))).into_response()
    }
}

/// A body that is not JSON of the shape asked for is a 400, as in server.js (axum's own answer
/// would be 415 without a JSON Content-Type, 422 for the wrong shape).
impl From<JsonRejection> for ApiError {
    fn from(rejection: JsonRejection) -> Self {
        Self::Invalid(rejection.body_text())
    }
}

macro_rules! internal_errors {
    ($($error:ty),*) => {$(
        impl From<$error> for ApiError {
            fn from(err: $error) -> Self {
                Self::Internal(err.into())
            }
        }
    )*};
}

internal_errors!(sqlx::Error, redis::RedisError, serde_json::Error);
