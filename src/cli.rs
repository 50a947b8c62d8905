//! The `tandem` command: `serve` (default), `migrate`, `token`, `seed`, `export-openapi`,
//! `export-reference`, `config`, `sunset-check`.

use std::{path::PathBuf, process::ExitCode};

use clap::{CommandFactory, Parser, Subcommand};

use crate::{
    Application, Settings,
    auth::{
        dev_secret::{self, KeySource},
        jwt::{self, TokenRequest},
    },
    settings::{self, DatabaseSettings, Loaded},
    store,
    telemetry::{self, export::ExportSettings},
};

#[derive(Parser)]
#[command(name = "tandem", version, about = "One JSON API, two versions, one core.")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Start the HTTP server (the default). Applies migrations first.
    Serve,
    /// Apply database migrations and exit.
    Migrate,
    /// Print a signed JWT for local use (HS256, with the configured or dev secret).
    Token {
        /// The token's subject (`sub`).
        #[arg(long)]
        sub: String,
        /// A role; repeat for several (`--role admin`).
        #[arg(long = "role")]
        roles: Vec<String>,
        /// Bind the token to one tenant.
        #[arg(long)]
        tenant: Option<String>,
        /// Lifetime: `90s`, `15m`, `1h`, `7d`.
        #[arg(long, default_value = "1h")]
        ttl: String,
    },
    /// Fill the store with deterministic demo data (continuing after what the tenant has).
    Seed {
        /// Users to add.
        #[arg(long, default_value_t = 0)]
        users: u64,
        /// Customers to add.
        #[arg(long, default_value_t = 0)]
        customers: u64,
        /// The tenant they belong to (1 to 63 of a-z, 0-9, -).
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// Write each version's OpenAPI document to `versions/v<N>/openapi.json`, and the document of
    /// the routes outside the versions to `versions/operations/openapi.json`.
    ExportOpenapi {
        /// The folder the documents go into.
        #[arg(long, default_value = "versions")]
        dir: PathBuf,
    },
    /// Write the book's reference pages (settings, CLI, error codes, metrics, headers) from the
    /// code into `docs/src/reference/`.
    ExportReference {
        /// The folder the pages go into.
        #[arg(long, default_value = "docs/src/reference")]
        dir: PathBuf,
    },
    /// Print the effective settings as TOML, each with where its value came from; exit non-zero
    /// with `serve`'s message when they cannot start. Connects to nothing.
    Config,
    /// Whether version N (or one element deprecated inside a version) can be turned off
    /// without breaking a client that called it (used it) within the window, from the database
    /// the settings name: exit 0 when ready, 1 when not, 2 when it cannot tell (the book's
    /// "Deciding a sunset").
    SunsetCheck {
        /// The version asked about.
        #[arg(long, required_unless_present = "deprecation", conflicts_with = "deprecation")]
        version: Option<u16>,
        /// The id of an element deprecated inside its version, in place of `--version`.
        #[arg(long)]
        deprecation: Option<String>,
        /// Days looked back over, today included (1 to 90).
        #[arg(long, default_value_t = crate::workbench::readiness::DEFAULT_WINDOW)]
        window: u32,
        /// `text` for a person, `json` for a program.
        #[arg(long, value_enum, default_value_t = ReportFormat::Text)]
        format: ReportFormat,
    },
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ReportFormat {
    Text,
    Json,
}

/// Refuses a PostgreSQL URL the store cannot honour, naming the variable and the parameter.
fn postgres_urls(database: &crate::settings::DatabaseSettings) -> anyhow::Result<()> {
    if database.database_url.is_postgres() {
        store::check_postgres_url(database.database_url.expose(), false)?;
    }
    match &database.database_replica_url {
        Some(replica) if replica.is_postgres() => store::check_postgres_url(replica.expose(), true),
        _ => Ok(()),
    }
}

/// How long a stopping server waits for its last spans to reach the collector.
const TRACE_FLUSH: std::time::Duration = std::time::Duration::from_secs(3);

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Serve);
    let loaded = match Settings::load_sourced() {
        Ok(loaded) => loaded,
        Err(err) => {
            eprintln!("tandem: invalid settings: {err:#}");
            return ExitCode::from(2);
        }
    };
    // The OpenTelemetry SDK's own variables (the book's operators/traces.md), checked as strictly
    // as ours.
    let traces = match ExportSettings::from_env(|name| std::env::var(name).ok()) {
        Ok(traces) => traces,
        Err(err) => {
            eprintln!("tandem: invalid settings: {err:#}");
            return ExitCode::from(2);
        }
    };
    // The PostgreSQL URLs' hosts and parameters, as the store reads them (the book's
    // operators/postgres-ha.md): what it cannot honour refuses here, for `config` as for `serve`.
    if let Err(err) = postgres_urls(&loaded.settings.database) {
        eprintln!("tandem: invalid settings: {err:#}");
        return ExitCode::from(2);
    }
    if matches!(command, Command::Config) {
        return config(&loaded);
    }
    if let Command::ExportReference { dir } = &command {
        return export_reference(dir);
    }
    let settings = loaded.settings;
    let sink = if matches!(command, Command::Serve) { telemetry::Sink::Stdout } else { telemetry::Sink::Stderr };
    telemetry::init(settings.logging.log_format, &settings.logging.log, sink);
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("tandem: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    if let Command::SunsetCheck { version, deprecation, window, format } = command {
        return runtime.block_on(sunset_check(settings, (version, deprecation), window, format));
    }
    let result = runtime.block_on(run(command, settings, traces));
    telemetry::flush();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("tandem: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `tandem export-reference`: the book's reference pages, written from the code.
fn export_reference(dir: &std::path::Path) -> ExitCode {
    match crate::reference::export(dir, Cli::command()) {
        Ok(()) => {
            eprintln!("wrote the reference pages to {}", dir.display());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("tandem: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// `tandem config`: the settings `serve` would start with, or the error it would stop with.
fn config(loaded: &Loaded) -> ExitCode {
    let shown = crate::app::preflight(&loaded.settings).and_then(|()| settings::show::render(loaded));
    match shown {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("tandem: {err:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(command: Command, settings: Settings, traces: Option<ExportSettings>) -> anyhow::Result<()> {
    match command {
        Command::Config | Command::ExportReference { .. } => unreachable!("answered before the runtime starts"),
        Command::SunsetCheck { .. } => unreachable!("answered with its own exit code"),
        Command::Serve => {
            // Handlers first: a SIGTERM that arrives while starting must stop us gracefully too.
            let stop = shutdown_signal()?;
            let exporting = traces.as_ref().map(telemetry::export::start).transpose()?;
            let app = Application::build(settings).await?;
            app.run_until_stopped(stop).await?;
            if let Some(exporting) = exporting {
                exporting.flush(TRACE_FLUSH).await;
            }
            tracing::info!("stopped");
            Ok(())
        }
        Command::Migrate => {
            store::connect(connection(&settings.database), None, true).await?;
            eprintln!("migrations applied");
            Ok(())
        }
        Command::Seed { users, customers, tenant } => {
            anyhow::ensure!(crate::auth::tenant::is_valid(&tenant), "--tenant must be 1 to 63 of a-z, 0-9, -");
            let store = store::connect(connection(&settings.database), None, true).await?;
            crate::seed::run(store, &tenant, users, customers).await
        }
        Command::Token { sub, roles, tenant, ttl } => {
            let KeySource::Secret(secret) = dev_secret::key_source(&settings.tokens, &settings.database)? else {
                anyhow::bail!(
                    "tandem token signs with an HS256 secret; with a public key or a key set, mint tokens with your identity provider"
                )
            };
            let request =
                TokenRequest { subject: &sub, roles: &roles, tenant: tenant.as_deref(), ttl: jwt::parse_ttl(&ttl)? };
            println!("{}", jwt::mint(&secret, &request, &settings.tokens, chrono::Utc::now().timestamp())?);
            Ok(())
        }
        Command::ExportOpenapi { dir } => {
            let operations = ("operations".to_string(), crate::app::operations_document(&settings.lifecycle)?);
            let versions =
                crate::app::documents().into_iter().map(|(number, document)| (format!("v{number}"), document));
            for (name, document) in versions.chain(std::iter::once(operations)) {
                let folder = dir.join(name);
                std::fs::create_dir_all(&folder)?;
                let pretty = serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(&document)?)?;
                std::fs::write(folder.join("openapi.json"), pretty + "\n")?;
                eprintln!("wrote {}", folder.join("openapi.json").display());
            }
            for (name, content) in crate::app::change_records()? {
                std::fs::write(dir.join(&name), content)?;
                eprintln!("wrote {}", dir.join(name).display());
            }
            Ok(())
        }
    }
}

/// `tandem sunset-check`: the readiness answer of a version or of one deprecated element, from
/// the database alone; 2 with the reason on stderr when it cannot tell.
async fn sunset_check(
    settings: Settings,
    (version, deprecation): (Option<u16>, Option<String>),
    window: u32,
    format: ReportFormat,
) -> ExitCode {
    use crate::{
        wire::described::json_of,
        workbench::readiness::{self, Question, element},
    };
    let answer = async {
        let registry = crate::registry::Registry::new(&crate::versions::all(), &settings.lifecycle)?;
        let store = store::connect(connection(&settings.database), None, false).await?;
        let now = chrono::Utc::now();
        let limit = match format {
            ReportFormat::Text => readiness::REPORTED,
            ReportFormat::Json => crate::workbench::routes::page::DEFAULT_LIMIT,
        };
        let cannot_tell = |why: &dyn std::fmt::Display| anyhow::anyhow!("{why}");
        // (the answer as JSON, as text, whether it is ready)
        let told: (String, String, bool) = match (version, deprecation.as_deref()) {
            (_, Some(id)) => {
                let question = element::Question { deprecation: id, window, limit, now };
                let answer = element::answer(store.as_ref(), None, &registry, question).await?;
                let answer = answer.map_err(|why| cannot_tell(&why))?;
                (json_of(&answer).to_string(), readiness::report_element(&answer), answer.ready)
            }
            (version, None) => {
                let version = version.ok_or_else(|| anyhow::anyhow!("name --version or --deprecation"))?;
                let answer =
                    readiness::answer(store.as_ref(), None, &registry, Question { version, window, limit, now })
                        .await?;
                let answer = answer.map_err(|why| cannot_tell(&why))?;
                (json_of(&answer).to_string(), readiness::report(&answer), answer.ready)
            }
        };
        anyhow::Ok(told)
    };
    match answer.await {
        Ok((json, text, ready)) => {
            match format {
                ReportFormat::Json => println!("{json}"),
                ReportFormat::Text => print!("{text}"),
            }
            if ready { ExitCode::SUCCESS } else { ExitCode::from(1) }
        }
        Err(err) => {
            eprintln!("tandem sunset-check: cannot tell: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn connection(database: &DatabaseSettings) -> store::Connection<'_> {
    store::Connection {
        url: database.database_url.expose(),
        timeout: database.db_timeout(),
        pool_size: database.db_pool_size,
    }
}

/// Registers SIGTERM and SIGINT now; the future completes on the first of them.
fn shutdown_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        // Which one arrived tells an operator who stopped the instance (an orchestrator, a terminal).
        let signal = tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
        };
        tracing::info!(signal, "shutting down: finishing in-flight requests");
    })
}
