//! The organisation's SMTP relay (the book's clients/email.md), read from the settings at start and
//! refused there when it cannot work: `smtps://host:port` (implicit TLS),
//! `smtp://host:port?tls=required` (STARTTLS, never falling back to clear text), or a plain
//! `smtp://host:port` only to a host on loopback or in `TANDEM_NOTICES_ALLOW_HOSTS`; credentials as
//! the URL's user information. It is dialled as webhooks are: its name is resolved as each message
//! is sent and an internal address is never dialled unless its host is allow-listed, or the relay
//! is this host's own (loopback, which then reaches only loopback).

use std::{
    net::{IpAddr, SocketAddr},
    time::Duration,
};

use lettre::{
    AsyncSmtpTransport, Tokio1Executor,
    transport::smtp::{
        authentication::Credentials,
        client::{Tls, TlsParameters},
        extension::ClientId,
    },
};
use url::Url;

use crate::{core::mailbox::Mailbox, notices::address, settings::NoticeSettings};

/// How the relay's connection is protected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Security {
    /// TLS from the first byte (`smtps`, port 465 by default).
    Implicit,
    /// STARTTLS, required (`smtp://…?tls=required`, port 587 by default).
    StartTls,
    /// Clear text (`smtp`, port 25 by default): only to loopback or an allow-listed host.
    Plain,
}

/// Where e-mail goes out, from whom, and the base of the links messages carry.
pub struct Relay {
    host: String,
    port: u16,
    security: Security,
    credentials: Option<Credentials>,
    /// The `From` of every message.
    pub from: Mailbox,
    /// `TANDEM_PUBLIC_URL` without a trailing slash: the base of every link.
    pub public: String,
    /// The public URL's host: the right side of `Message-ID` and `List-Id`, and the `EHLO` name.
    pub domain: String,
    allow: address::AllowList,
    /// Written as a loopback address or `localhost`: this host's own relay.
    loopback: bool,
}

impl Relay {
    /// The relay the settings name (`None` without `TANDEM_SMTP_URL`), or why it cannot work.
    pub fn from_settings(settings: &NoticeSettings) -> anyhow::Result<Option<Relay>> {
        let Some(raw) = &settings.smtp_url else {
            anyhow::ensure!(
                settings.notices_from.is_none(),
                "TANDEM_NOTICES_FROM is set but TANDEM_SMTP_URL is not: no e-mail can be sent"
            );
            return Ok(None);
        };
        let url = Url::parse(raw.expose()).map_err(|_| anyhow::anyhow!("TANDEM_SMTP_URL is not a URL"))?;
        let allow = address::AllowList::parse(settings.notices_allow_hosts.as_deref());
        let host =
            url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| anyhow::anyhow!("TANDEM_SMTP_URL names no host"))?;
        let host = host.trim_matches(['[', ']']).to_string();
        let tls = url.query_pairs().find(|(k, _)| k == "tls").map(|(_, v)| v.into_owned());
        anyhow::ensure!(
            url.query_pairs().all(|(k, _)| k == "tls") && url.path().trim_matches('/').is_empty(),
            "TANDEM_SMTP_URL takes a host, a port, user information and `?tls=required`, nothing else"
        );
        let (security, default_port) = match (url.scheme(), tls.as_deref()) {
            ("smtps", None) => (Security::Implicit, 465),
            ("smtp", Some("required")) => (Security::StartTls, 587),
            ("smtp", None) => (Security::Plain, 25),
            ("smtp" | "smtps", Some(other)) => {
                anyhow::bail!("TANDEM_SMTP_URL: tls={other} is not known; use tls=required")
            }
            (scheme, _) => anyhow::bail!("TANDEM_SMTP_URL: {scheme} is not smtps:// or smtp://"),
        };
        // `smtp` is no scheme the URL standard knows: its host is kept as text, read here.
        let ip = host.parse::<IpAddr>().ok();
        let loopback = ip.is_some_and(|ip| ip.is_loopback()) || host.eq_ignore_ascii_case("localhost");
        anyhow::ensure!(
            security != Security::Plain || loopback || allow.allows(&host),
            "TANDEM_SMTP_URL sends in clear text to {host}, which is neither loopback nor in TANDEM_NOTICES_ALLOW_HOSTS; \
             use smtps:// or smtp://…?tls=required"
        );
        let internal = ip.is_some_and(address::refused);
        anyhow::ensure!(
            !internal || loopback || allow.allows(&host),
            "TANDEM_SMTP_URL's host {host} is an internal address notices are never sent to; \
             list it in TANDEM_NOTICES_ALLOW_HOSTS"
        );
        let credentials = match (url.username(), url.password()) {
            ("", None) => None,
            (user, Some(password)) if !user.is_empty() => Some(Credentials::new(decoded(user), decoded(password))),
            _ => anyhow::bail!("TANDEM_SMTP_URL's user information needs both a user and a password"),
        };
        let from = settings.notices_from.as_deref().ok_or_else(|| {
            anyhow::anyhow!("TANDEM_SMTP_URL is set but TANDEM_NOTICES_FROM is not: messages need a From address")
        })?;
        let from = Mailbox::parse(from)
            .ok_or_else(|| anyhow::anyhow!("TANDEM_NOTICES_FROM is not one plain address (name@domain)"))?;
        let public = settings.public_url.as_deref().ok_or_else(|| {
            anyhow::anyhow!("TANDEM_SMTP_URL is set but TANDEM_PUBLIC_URL is not: messages link back to this service")
        })?;
        let public_url = Url::parse(public).ok().filter(|u| u.scheme() == "https" && u.host_str().is_some());
        let public_url = public_url.ok_or_else(|| anyhow::anyhow!("TANDEM_PUBLIC_URL must be an https:// URL"))?;
        anyhow::ensure!(
            public_url.query().is_none() && public_url.fragment().is_none() && public_url.username().is_empty(),
            "TANDEM_PUBLIC_URL is a base URL: no query, fragment or user information"
        );
        Ok(Some(Relay {
            port: url.port().unwrap_or(default_port),
            host,
            security,
            credentials,
            from,
            public: public_url.as_str().trim_end_matches('/').to_string(),
            domain: public_url.host_str().unwrap_or_default().to_string(),
            allow,
            loopback,
        }))
    }

    /// The relay's host, as a log may show it.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// A transport to the relay, dialling an address it may reach, or why there is none.
    pub async fn transport(&self, timeout: Duration) -> Result<AsyncSmtpTransport<Tokio1Executor>, String> {
        let address = self.dial().await?;
        let tls = |required: bool| {
            let parameters = TlsParameters::new(self.host.clone()).map_err(|e| format!("TLS: {e}"))?;
            Ok::<_, String>(if required { Tls::Required(parameters) } else { Tls::Wrapper(parameters) })
        };
        let tls = match self.security {
            Security::Implicit => tls(false)?,
            Security::StartTls => tls(true)?,
            Security::Plain => Tls::None,
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(address.ip().to_string())
            .port(address.port())
            .tls(tls)
            .timeout(Some(timeout))
            .hello_name(ClientId::Domain(self.domain.clone()));
        if let Some(credentials) = &self.credentials {
            builder = builder.credentials(credentials.clone());
        }
        Ok(builder.build())
    }

    /// The first address of the relay's that notices may reach.
    async fn dial(&self) -> Result<SocketAddr, String> {
        let found = tokio::net::lookup_host((self.host.as_str(), self.port))
            .await
            .map_err(|_| "the relay's host does not resolve".to_string())?;
        let allowed = self.allow.allows(&self.host);
        let mut permitted =
            found.filter(|a| allowed || !address::refused(a.ip()) || (self.loopback && a.ip().is_loopback()));
        permitted.next().ok_or_else(|| "the relay resolves to no address notices may reach".to_string())
    }
}

fn decoded(part: &str) -> String {
    percent_encoding::percent_decode_str(part).decode_utf8_lossy().into_owned()
}
