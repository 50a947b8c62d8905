//! An identity provider the tests control: OpenID discovery and a JWK Set on a port of this
//! machine, with the faults a real one has (slow, down, garbage), and tokens signed with the
//! fixture keys (`tests/fixtures/jwks_keys.json`: `rsa-1`, `rsa-2`, `ec-1`).

use std::{
    net::SocketAddr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicU64, Ordering},
    },
    time::Duration,
};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use poem::{
    EndpointExt, Route, Server, get, handler,
    listener::{Acceptor, Listener, TcpListener},
    web::{Data, Json},
};
use serde_json::{Value, json};

/// How the provider answers its key set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Normal,
    /// Answers after this long.
    Slow(Duration),
    /// Answers 500.
    Down,
    /// Answers 200 with a body that is no key set.
    Garbage,
}

struct State {
    keys: Mutex<Vec<&'static str>>,
    mode: Mutex<Mode>,
    reads: AtomicU64,
    issuer: String,
}

pub struct Provider {
    pub issuer: String,
    state: Arc<State>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

/// The fixture keys' public halves, by `kid`.
fn published(kid: &str) -> Value {
    let all: Value = serde_json::from_str(include_str!("../../fixtures/jwks_keys.json")).unwrap();
    all[kid].clone()
}

#[handler]
fn discovery(state: Data<&Arc<State>>) -> Json<Value> {
    Json(json!({"issuer": state.issuer, "jwks_uri": format!("{}/jwks", state.issuer)}))
}

#[handler]
async fn jwks(state: Data<&Arc<State>>) -> poem::Response {
    state.reads.fetch_add(1, Ordering::SeqCst);
    let mode = *state.mode.lock().unwrap();
    match mode {
        Mode::Slow(pause) => tokio::time::sleep(pause).await,
        Mode::Down => return poem::Response::builder().status(poem::http::StatusCode::INTERNAL_SERVER_ERROR).finish(),
        Mode::Garbage => {
            return poem::Response::builder().content_type("application/json").body("{\"keys\": \"none\"}");
        }
        Mode::Normal => {}
    }
    let keys: Vec<Value> = state.keys.lock().unwrap().iter().map(|kid| published(kid)).collect();
    poem::Response::builder().content_type("application/jwk-set+json").body(json!({"keys": keys}).to_string())
}

impl Provider {
    /// Starts on a free port, publishing `keys`.
    pub async fn start(keys: &[&'static str]) -> Provider {
        Self::start_at("127.0.0.1:0".parse().unwrap(), keys).await
    }

    /// Starts on `addr` (a port a service was told of before the provider came up).
    pub async fn start_at(addr: SocketAddr, keys: &[&'static str]) -> Provider {
        let acceptor = TcpListener::bind(addr).into_acceptor().await.unwrap();
        let addr = acceptor.local_addr()[0].as_socket_addr().copied().unwrap();
        let issuer = format!("http://{addr}");
        let state = Arc::new(State {
            keys: Mutex::new(keys.to_vec()),
            mode: Mutex::new(Mode::Normal),
            reads: AtomicU64::new(0),
            issuer: issuer.clone(),
        });
        let app = Route::new()
            .at("/.well-known/openid-configuration", get(discovery))
            .at("/jwks", get(jwks))
            .data(state.clone());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(Server::new_with_acceptor(acceptor).run_with_graceful_shutdown(
            app,
            async move {
                let _ = stopped.await;
            },
            Some(Duration::from_millis(100)),
        ));
        Provider { issuer, state, stop: Some(stop) }
    }

    pub fn jwks_url(&self) -> String {
        format!("{}/jwks", self.issuer)
    }

    pub fn publish(&self, keys: &[&'static str]) {
        *self.state.keys.lock().unwrap() = keys.to_vec();
    }

    pub fn set_mode(&self, mode: Mode) {
        *self.state.mode.lock().unwrap() = mode;
    }

    /// How many times the key set was asked for.
    pub fn reads(&self) -> u64 {
        self.state.reads.load(Ordering::SeqCst)
    }

    /// A token for `sub` signed with the fixture key `kid` (its header names `header_kid`).
    pub fn token(&self, kid: &str, header_kid: Option<&str>, claims: Value) -> String {
        let (algorithm, key) = match kid {
            "rsa-1" => (Algorithm::RS256, EncodingKey::from_rsa_pem(include_bytes!("../../fixtures/rsa_private.pem"))),
            "rsa-2" => (Algorithm::RS256, EncodingKey::from_rsa_pem(include_bytes!("../../fixtures/rsa2_private.pem"))),
            "ec-1" => (Algorithm::ES256, EncodingKey::from_ec_pem(include_bytes!("../../fixtures/ec_private.pem"))),
            other => panic!("no fixture key {other}"),
        };
        let mut header = Header::new(algorithm);
        header.kid = header_kid.map(str::to_string);
        let mut all = json!({"iss": self.issuer, "exp": super::tokens::now() + 3600});
        all.as_object_mut().unwrap().extend(claims.as_object().unwrap().clone());
        jsonwebtoken::encode(&header, &all, &key.unwrap()).unwrap()
    }

    /// A token with its own `kid` in the header.
    pub fn signed(&self, kid: &str, sub: &str, roles: &[&str]) -> String {
        self.token(kid, Some(kid), json!({"sub": sub, "roles": roles}))
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}
