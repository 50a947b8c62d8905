//! Every problem type the service answers with: its status, its `type` slug and its texts.

use poem::http::StatusCode;

use super::i18n::Lang;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ValidationError,
    MalformedJson,
    AmbiguousApiVersion,
    UnsupportedApiVersion,
    Unauthorized,
    TenantForbidden,
    AdminRequired,
    NotFound,
    MethodNotAllowed,
    NotAcceptable,
    DuplicateEmail,
    PatchTestFailed,
    ConcurrentUpdate,
    IdempotencyInFlight,
    IdempotencyKeyReused,
    ApiVersionSunset,
    ApiVersionClosed,
    /// An acknowledgement of a sunset date that is not the version's current one.
    SunsetNotCurrent,
    /// A link sent by e-mail whose time ran out, or whose endpoint was replaced since.
    LinkExpired,
    /// An operation deprecated inside its version, past its sunset (or rehearsed).
    OperationRemoved,
    /// A parameter or field deprecated inside its version, past its sunset (or rehearsed).
    ElementRemoved,
    PreconditionFailed,
    PayloadTooLarge,
    UriTooLong,
    HeaderFieldsTooLarge,
    UnsupportedMediaType,
    InvalidPatchResult,
    InvalidUpload,
    ImportRejected,
    RateLimited,
    InternalError,
    ServiceUnavailable,
    Maintenance,
}

impl Kind {
    pub const ALL: [Kind; 33] = [
        Kind::ValidationError,
        Kind::MalformedJson,
        Kind::AmbiguousApiVersion,
        Kind::UnsupportedApiVersion,
        Kind::Unauthorized,
        Kind::TenantForbidden,
        Kind::AdminRequired,
        Kind::NotFound,
        Kind::MethodNotAllowed,
        Kind::NotAcceptable,
        Kind::DuplicateEmail,
        Kind::PatchTestFailed,
        Kind::ConcurrentUpdate,
        Kind::IdempotencyInFlight,
        Kind::IdempotencyKeyReused,
        Kind::ApiVersionSunset,
        Kind::ApiVersionClosed,
        Kind::SunsetNotCurrent,
        Kind::LinkExpired,
        Kind::OperationRemoved,
        Kind::ElementRemoved,
        Kind::PreconditionFailed,
        Kind::PayloadTooLarge,
        Kind::UriTooLong,
        Kind::HeaderFieldsTooLarge,
        Kind::UnsupportedMediaType,
        Kind::InvalidPatchResult,
        Kind::InvalidUpload,
        Kind::ImportRejected,
        Kind::RateLimited,
        Kind::InternalError,
        Kind::ServiceUnavailable,
        Kind::Maintenance,
    ];

    pub fn status(self) -> StatusCode {
        match self {
            Kind::ValidationError | Kind::MalformedJson | Kind::AmbiguousApiVersion | Kind::InvalidUpload => {
                StatusCode::BAD_REQUEST
            }
            // Only the media-type and URI sources have their own codes; they are set where raised.
            Kind::UnsupportedApiVersion => StatusCode::BAD_REQUEST,
            Kind::Unauthorized => StatusCode::UNAUTHORIZED,
            Kind::TenantForbidden | Kind::AdminRequired => StatusCode::FORBIDDEN,
            Kind::NotFound => StatusCode::NOT_FOUND,
            Kind::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            Kind::NotAcceptable => StatusCode::NOT_ACCEPTABLE,
            Kind::DuplicateEmail | Kind::PatchTestFailed | Kind::ConcurrentUpdate | Kind::IdempotencyInFlight => {
                StatusCode::CONFLICT
            }
            Kind::IdempotencyKeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            Kind::ApiVersionSunset | Kind::ApiVersionClosed => StatusCode::GONE,
            Kind::SunsetNotCurrent => StatusCode::CONFLICT,
            Kind::LinkExpired => StatusCode::GONE,
            Kind::OperationRemoved => StatusCode::GONE,
            Kind::ElementRemoved => StatusCode::BAD_REQUEST,
            Kind::PreconditionFailed => StatusCode::PRECONDITION_FAILED,
            Kind::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Kind::UriTooLong => StatusCode::URI_TOO_LONG,
            Kind::HeaderFieldsTooLarge => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            Kind::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Kind::InvalidPatchResult | Kind::ImportRejected => StatusCode::UNPROCESSABLE_ENTITY,
            Kind::InternalError => StatusCode::INTERNAL_SERVER_ERROR,
            Kind::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            Kind::ServiceUnavailable | Kind::Maintenance => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// The last segment of the problem `type` URI, `/problems/<slug>`.
    pub fn slug(self) -> &'static str {
        match self {
            Kind::ValidationError => "validation-error",
            Kind::MalformedJson => "malformed-json",
            Kind::AmbiguousApiVersion => "ambiguous-api-version",
            Kind::UnsupportedApiVersion => "unsupported-api-version",
            Kind::Unauthorized => "unauthorized",
            Kind::TenantForbidden => "tenant-forbidden",
            Kind::AdminRequired => "admin-required",
            Kind::NotFound => "not-found",
            Kind::MethodNotAllowed => "method-not-allowed",
            Kind::NotAcceptable => "not-acceptable",
            Kind::DuplicateEmail => "duplicate-email",
            Kind::PatchTestFailed => "patch-test-failed",
            Kind::ConcurrentUpdate => "concurrent-update",
            Kind::IdempotencyInFlight => "idempotency-in-flight",
            Kind::IdempotencyKeyReused => "idempotency-key-reused",
            Kind::ApiVersionSunset => "api-version-sunset",
            Kind::ApiVersionClosed => "api-version-closed",
            Kind::SunsetNotCurrent => "sunset-not-current",
            Kind::LinkExpired => "link-expired",
            Kind::OperationRemoved => "operation-removed",
            Kind::ElementRemoved => "element-removed",
            Kind::PreconditionFailed => "precondition-failed",
            Kind::PayloadTooLarge => "payload-too-large",
            Kind::UriTooLong => "uri-too-long",
            Kind::HeaderFieldsTooLarge => "request-header-fields-too-large",
            Kind::UnsupportedMediaType => "unsupported-media-type",
            Kind::InvalidPatchResult => "invalid-patch-result",
            Kind::InvalidUpload => "invalid-upload",
            Kind::ImportRejected => "import-rejected",
            Kind::InternalError => "internal-error",
            Kind::ServiceUnavailable => "service-unavailable",
            Kind::RateLimited => "rate-limited",
            Kind::Maintenance => "maintenance",
        }
    }

    pub fn from_slug(slug: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.slug() == slug)
    }

    pub fn title(self, lang: Lang) -> &'static str {
        lang.pick(match self {
            Kind::ValidationError => ("Validation failed", "Validierung fehlgeschlagen", "Échec de la validation"),
            Kind::MalformedJson => ("Malformed JSON", "Fehlerhaftes JSON", "JSON mal formé"),
            Kind::AmbiguousApiVersion => ("Ambiguous API version", "Mehrdeutige API-Version", "Version d'API ambiguë"),
            Kind::UnsupportedApiVersion => {
                ("Unsupported API version", "Nicht unterstützte API-Version", "Version d'API non prise en charge")
            }
            Kind::Unauthorized => {
                ("Authentication required", "Authentifizierung erforderlich", "Authentification requise")
            }
            Kind::TenantForbidden => ("Wrong tenant", "Falscher Mandant", "Mauvais locataire"),
            Kind::AdminRequired => ("Admin role required", "Admin-Rolle erforderlich", "Rôle admin requis"),
            Kind::NotFound => ("Not found", "Nicht gefunden", "Introuvable"),
            Kind::MethodNotAllowed => ("Method not allowed", "Methode nicht erlaubt", "Méthode non autorisée"),
            Kind::NotAcceptable => ("Not acceptable", "Nicht annehmbar", "Non acceptable"),
            Kind::DuplicateEmail => ("Duplicate e-mail address", "Doppelte E-Mail-Adresse", "Adresse e-mail en double"),
            Kind::PatchTestFailed => ("Patch test failed", "Patch-Test fehlgeschlagen", "Échec du test du correctif"),
            Kind::ConcurrentUpdate => ("Concurrent update", "Gleichzeitige Änderung", "Modification concurrente"),
            Kind::IdempotencyInFlight => ("Request in progress", "Anfrage läuft noch", "Requête en cours"),
            Kind::IdempotencyKeyReused => {
                ("Idempotency-Key reused", "Idempotency-Key wiederverwendet", "Idempotency-Key réutilisée")
            }
            Kind::ApiVersionSunset => ("API version retired", "API-Version eingestellt", "Version d'API retirée"),
            Kind::ApiVersionClosed => (
                "API version closed to new clients",
                "API-Version für neue Clients geschlossen",
                "Version d'API fermée aux nouveaux clients",
            ),
            Kind::SunsetNotCurrent => {
                ("Sunset date not current", "Abschaltdatum nicht aktuell", "Date de retrait non actuelle")
            }
            Kind::LinkExpired => ("Link expired", "Link abgelaufen", "Lien expiré"),
            Kind::OperationRemoved => ("Operation removed", "Operation entfernt", "Opération retirée"),
            Kind::ElementRemoved => {
                ("Parameter or field removed", "Parameter oder Feld entfernt", "Paramètre ou champ retiré")
            }
            Kind::PreconditionFailed => {
                ("Precondition failed", "Vorbedingung fehlgeschlagen", "Échec de la précondition")
            }
            Kind::PayloadTooLarge => ("Payload too large", "Anfrage zu groß", "Requête trop volumineuse"),
            Kind::UriTooLong => ("URI too long", "URI zu lang", "URI trop longue"),
            Kind::HeaderFieldsTooLarge => {
                ("Request header fields too large", "Kopfzeilen zu groß", "Champs d'en-tête trop grands")
            }
            Kind::UnsupportedMediaType => {
                ("Unsupported media type", "Nicht unterstützter Medientyp", "Type de média non pris en charge")
            }
            Kind::InvalidPatchResult => {
                ("Invalid patch result", "Ungültiges Patch-Ergebnis", "Résultat de correctif invalide")
            }
            Kind::InvalidUpload => ("Unreadable upload", "Unlesbarer Upload", "Téléversement illisible"),
            Kind::ImportRejected => ("Import rejected", "Import abgelehnt", "Import refusé"),
            Kind::InternalError => ("Internal error", "Interner Fehler", "Erreur interne"),
            Kind::ServiceUnavailable => ("Service unavailable", "Dienst nicht verfügbar", "Service indisponible"),
            Kind::RateLimited => ("Too many requests", "Zu viele Anfragen", "Trop de requêtes"),
            Kind::Maintenance => ("Down for maintenance", "Wartungsarbeiten", "Maintenance en cours"),
        })
    }

    /// The detail text; `{}` is replaced by the error's detail argument.
    pub fn detail(self, lang: Lang) -> &'static str {
        lang.pick(match self {
            Kind::ValidationError => ("{} input(s) are invalid", "{} Eingabe(n) ungültig", "{} entrée(s) invalide(s)"),
            Kind::MalformedJson => (
                "The body is not valid JSON: {}",
                "Der Inhalt ist kein gültiges JSON: {}",
                "Le corps n'est pas un JSON valide : {}",
            ),
            Kind::AmbiguousApiVersion => (
                "The request names more than one API version: {}",
                "Die Anfrage nennt mehr als eine API-Version: {}",
                "La requête indique plusieurs versions d'API : {}",
            ),
            Kind::UnsupportedApiVersion => {
                ("Supported versions: {}", "Unterstützte Versionen: {}", "Versions prises en charge : {}")
            }
            Kind::Unauthorized => (
                "A valid bearer token is required",
                "Ein gültiges Bearer-Token ist erforderlich",
                "Un jeton porteur valide est requis",
            ),
            Kind::TenantForbidden => (
                "The token may act only in its own tenant",
                "Das Token darf nur in seinem eigenen Mandanten handeln",
                "Le jeton ne peut agir que dans son propre locataire",
            ),
            Kind::AdminRequired => (
                "This action needs the admin role",
                "Diese Aktion erfordert die Admin-Rolle",
                "Cette action nécessite le rôle admin",
            ),
            Kind::NotFound => {
                ("The resource does not exist", "Die Ressource existiert nicht", "La ressource n'existe pas")
            }
            Kind::MethodNotAllowed => ("Allowed methods: {}", "Erlaubte Methoden: {}", "Méthodes autorisées : {}"),
            Kind::NotAcceptable => {
                ("This service produces: {}", "Dieser Dienst liefert: {}", "Ce service produit : {}")
            }
            Kind::DuplicateEmail => (
                "Another user already has this e-mail address",
                "Ein anderer Benutzer hat diese E-Mail-Adresse bereits",
                "Un autre utilisateur a déjà cette adresse e-mail",
            ),
            Kind::PatchTestFailed => (
                "A test operation of the patch did not hold",
                "Eine Test-Operation des Patches traf nicht zu",
                "Une opération test du correctif a échoué",
            ),
            Kind::ConcurrentUpdate => (
                "The resource changed while this request ran; read it again and retry",
                "Die Ressource wurde währenddessen geändert; erneut lesen und wiederholen",
                "La ressource a changé entre-temps ; relisez-la puis réessayez",
            ),
            Kind::IdempotencyInFlight => (
                "A request with this Idempotency-Key is still running; retry after it",
                "Eine Anfrage mit diesem Idempotency-Key läuft noch; danach erneut versuchen",
                "Une requête avec cette Idempotency-Key est en cours ; réessayez ensuite",
            ),
            Kind::IdempotencyKeyReused => (
                "This Idempotency-Key was used for a different request (method, path, version or body)",
                "Dieser Idempotency-Key wurde für eine andere Anfrage verwendet (Methode, Pfad, Version oder Inhalt)",
                "Cette Idempotency-Key a servi à une autre requête (méthode, chemin, version ou corps)",
            ),
            Kind::ApiVersionClosed => (
                "Version {} of this API is deprecated and takes no new clients; use its successor (see the Link header)",
                "Version {} dieser API ist veraltet und nimmt keine neuen Clients an; bitte die Nachfolgeversion nutzen (siehe Link-Header)",
                "La version {} de cette API est dépréciée et n'accepte plus de nouveaux clients ; utilisez la version suivante (voir l'en-tête Link)",
            ),
            Kind::ApiVersionSunset => (
                "Version {} of this API is retired; move to its successor (see the Link header)",
                "Version {} dieser API ist eingestellt; bitte zur Nachfolgeversion wechseln (siehe Link-Header)",
                "La version {} de cette API est retirée ; passez à la version suivante (voir l'en-tête Link)",
            ),
            Kind::LinkExpired => (
                "This link has expired or its address was replaced; set the address again for a new one",
                "Dieser Link ist abgelaufen oder seine Adresse wurde ersetzt; die Adresse erneut setzen für einen neuen",
                "Ce lien a expiré ou son adresse a été remplacée ; définissez l'adresse à nouveau pour en obtenir un nouveau",
            ),
            Kind::SunsetNotCurrent => (
                "The version's sunset is now {}; acknowledge that date",
                "Das Abschaltdatum der Version ist jetzt {}; bitte dieses Datum bestätigen",
                "La date de retrait de la version est désormais {} ; confirmez cette date",
            ),
            Kind::OperationRemoved => (
                "This operation was removed at its sunset (see the Link header); instead: {}",
                "Diese Operation wurde zu ihrem Abschaltdatum entfernt (siehe Link-Header); stattdessen: {}",
                "Cette opération a été retirée à sa date de retrait (voir l'en-tête Link) ; à la place : {}",
            ),
            Kind::ElementRemoved => (
                "The request sends what was removed at its sunset (see the Link header); instead: {}",
                "Die Anfrage sendet, was zum Abschaltdatum entfernt wurde (siehe Link-Header); stattdessen: {}",
                "La requête envoie ce qui a été retiré à sa date de retrait (voir l'en-tête Link) ; à la place : {}",
            ),
            Kind::PreconditionFailed => (
                "The resource does not match If-Match",
                "Die Ressource entspricht nicht If-Match",
                "La ressource ne correspond pas à If-Match",
            ),
            Kind::PayloadTooLarge => {
                ("The body exceeds {} bytes", "Der Inhalt überschreitet {} Bytes", "Le corps dépasse {} octets")
            }
            Kind::UriTooLong => {
                ("The URI exceeds {} bytes", "Die URI überschreitet {} Bytes", "L'URI dépasse {} octets")
            }
            Kind::HeaderFieldsTooLarge => (
                "The request's header fields exceed {}",
                "Die Kopfzeilen der Anfrage überschreiten {}",
                "Les champs d'en-tête de la requête dépassent {}",
            ),
            Kind::UnsupportedMediaType => ("Send one of: {}", "Erlaubt sind: {}", "Types acceptés : {}"),
            Kind::InvalidPatchResult => (
                "The patched resource would be invalid in {} field(s)",
                "Die gepatchte Ressource wäre in {} Feld(ern) ungültig",
                "La ressource corrigée serait invalide dans {} champ(s)",
            ),
            Kind::InvalidUpload => (
                "The upload is not a CSV file of customers with a header row: {}",
                "Der Upload ist keine CSV-Datei mit Kunden und Kopfzeile: {}",
                "Le fichier n'est pas un CSV de clients avec ligne d'en-tête : {}",
            ),
            Kind::ImportRejected => (
                "{} row(s) are invalid; nothing was written",
                "{} Zeile(n) ungültig; nichts wurde geschrieben",
                "{} ligne(s) invalide(s) ; rien n'a été écrit",
            ),
            Kind::InternalError => (
                "Unexpected error; quote the correlation id when reporting it",
                "Unerwarteter Fehler; bitte die Korrelations-ID angeben",
                "Erreur inattendue ; indiquez l'identifiant de corrélation",
            ),
            Kind::RateLimited => (
                "Over the rate limit for this tenant and token; retry after Retry-After seconds",
                "Ratenlimit für diesen Mandanten und dieses Token überschritten; nach Retry-After Sekunden erneut versuchen",
                "Limite de débit dépassée pour ce locataire et ce jeton ; réessayez après Retry-After secondes",
            ),
            Kind::Maintenance => (
                "The service is down for maintenance; retry after Retry-After seconds",
                "Der Dienst wird gewartet; nach Retry-After Sekunden erneut versuchen",
                "Le service est en maintenance ; réessayez après Retry-After secondes",
            ),
            Kind::ServiceUnavailable => (
                "Temporarily unavailable; retry later",
                "Vorübergehend nicht verfügbar; später erneut versuchen",
                "Temporairement indisponible ; réessayez plus tard",
            ),
        })
    }
}
