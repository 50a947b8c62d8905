//! Error texts in English, German and French, chosen by `Accept-Language`.

use crate::core::fields::Rule;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    De,
    Fr,
}

impl Lang {
    /// The first supported language in `Accept-Language` by quality, else English.
    pub fn negotiate(header: Option<&str>) -> Self {
        let Some(header) = header else { return Lang::En };
        let mut best: Option<(f32, Lang)> = None;
        for range in header.split(',') {
            let mut parts = range.split(';');
            let tag = parts.next().unwrap_or("").trim();
            let quality =
                parts.find_map(|p| p.trim().strip_prefix("q=")).and_then(|q| q.parse::<f32>().ok()).unwrap_or(1.0);
            let primary = tag.split('-').next().unwrap_or("");
            let lang = match primary.to_ascii_lowercase().as_str() {
                "en" => Lang::En,
                "de" => Lang::De,
                "fr" => Lang::Fr,
                _ => continue,
            };
            if quality > 0.0 && best.is_none_or(|(q, _)| quality > q) {
                best = Some((quality, lang));
            }
        }
        best.map_or(Lang::En, |(_, lang)| lang)
    }

    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::De => "de",
            Lang::Fr => "fr",
        }
    }

    /// Picks this language's text from an (en, de, fr) triple.
    pub fn pick(self, texts: (&'static str, &'static str, &'static str)) -> &'static str {
        match self {
            Lang::En => texts.0,
            Lang::De => texts.1,
            Lang::Fr => texts.2,
        }
    }
}

/// The stable code of a rule, as clients match on it.
pub fn rule_code(rule: &Rule) -> &'static str {
    match rule {
        Rule::Required => "required",
        Rule::Blank => "blank",
        Rule::TooLong { .. } => "too_long",
        Rule::Email => "email",
        Rule::Min { .. } => "min",
        Rule::Max { .. } => "max",
        Rule::ExpectedString | Rule::ExpectedInteger | Rule::ExpectedObject => "type",
        Rule::UnknownField => "unknown_field",
        Rule::DuplicateKey => "duplicate_key",
        Rule::ReadOnly => "read_only",
        Rule::Digits => "digits",
        Rule::InvalidId => "invalid_id",
        Rule::ExpectedUuid => "type",
        Rule::Unique => "unique",
        Rule::DuplicateOf { .. } => "duplicate",
        Rule::AlreadyExists => "exists",
        Rule::NotUtf8 => "not_utf8",
        Rule::NulByte => "nul_byte",
        Rule::NoHeader => "no_header",
        Rule::OneOf(_) => "one_of",
        Rule::OtherQuery => "cursor_mismatch",
        Rule::NotWithCursor => "not_with_cursor",
        Rule::HttpsRequired => "https_required",
        Rule::InternalAddress => "internal_address",
        Rule::Unresolvable => "unresolvable",
        Rule::EmailNotConfigured => "email_not_configured",
        Rule::Removed => "removed",
        Rule::Invalid => "invalid",
    }
}

/// The localized message of a rule.
pub fn rule_message(rule: &Rule, lang: Lang) -> String {
    let with = |texts, value: &dyn std::fmt::Display| lang.pick(texts).replace("{}", &value.to_string());
    match rule {
        Rule::Required => lang.pick(("is required", "ist erforderlich", "est obligatoire")).into(),
        Rule::Blank => lang.pick(("must not be blank", "darf nicht leer sein", "ne doit pas être vide")).into(),
        Rule::TooLong { max } => with(
            (
                "must be at most {} characters long",
                "darf höchstens {} Zeichen lang sein",
                "doit contenir au plus {} caractères",
            ),
            max,
        ),
        Rule::Email => lang
            .pick((
                "must be a valid e-mail address",
                "muss eine gültige E-Mail-Adresse sein",
                "doit être une adresse e-mail valide",
            ))
            .into(),
        Rule::Min { min } => with(("must be at least {}", "muss mindestens {} sein", "doit être au moins {}"), min),
        Rule::Max { max } => with(("must be at most {}", "darf höchstens {} sein", "doit être au plus {}"), max),
        Rule::ExpectedString => {
            lang.pick(("must be a string", "muss eine Zeichenkette sein", "doit être une chaîne de caractères")).into()
        }
        Rule::ExpectedInteger => {
            lang.pick(("must be an integer", "muss eine ganze Zahl sein", "doit être un entier")).into()
        }
        Rule::ExpectedObject => {
            lang.pick(("must be a JSON object", "muss ein JSON-Objekt sein", "doit être un objet JSON")).into()
        }
        Rule::UnknownField => {
            lang.pick(("is not a known field", "ist kein bekanntes Feld", "n'est pas un champ connu")).into()
        }
        Rule::DuplicateKey => lang
            .pick((
                "is given more than once in its object",
                "kommt in seinem Objekt mehr als einmal vor",
                "figure plus d'une fois dans son objet",
            ))
            .into(),
        Rule::ReadOnly => lang
            .pick((
                "cannot be set by the client",
                "kann vom Client nicht gesetzt werden",
                "ne peut pas être modifié par le client",
            ))
            .into(),
        Rule::Digits => lang
            .pick(("must contain only digits", "darf nur Ziffern enthalten", "ne doit contenir que des chiffres"))
            .into(),
        Rule::InvalidId => lang
            .pick((
                "must be an integer or a UUID",
                "muss eine ganze Zahl oder eine UUID sein",
                "doit être un entier ou un UUID",
            ))
            .into(),
        Rule::ExpectedUuid => lang.pick(("must be a UUID", "muss eine UUID sein", "doit être un UUID")).into(),
        Rule::Unique => lang.pick(("is already taken", "ist bereits vergeben", "est déjà utilisé")).into(),
        Rule::DuplicateOf { line } => with(
            ("repeats the value of line {}", "wiederholt den Wert aus Zeile {}", "répète la valeur de la ligne {}"),
            line,
        ),
        Rule::NotUtf8 => lang.pick(("is not UTF-8 text", "ist kein UTF-8-Text", "n'est pas du texte UTF-8")).into(),
        Rule::NulByte => lang.pick(("contains a NUL byte", "enthält ein NUL-Byte", "contient un octet NUL")).into(),
        Rule::NoHeader => lang.pick(("has no header row", "hat keine Kopfzeile", "n'a pas de ligne d'en-tête")).into(),
        Rule::AlreadyExists => lang.pick(("already exists", "existiert bereits", "existe déjà")).into(),
        Rule::OneOf(allowed) => {
            with(("must be one of: {}", "muss einer der Werte sein: {}", "doit être l'une des valeurs : {}"), allowed)
        }
        Rule::NotWithCursor => lang
            .pick((
                "cannot be combined with cursor",
                "kann nicht mit cursor kombiniert werden",
                "ne peut pas être combiné avec cursor",
            ))
            .into(),
        Rule::OtherQuery => lang
            .pick((
                "belongs to another sort or filter; start again without it",
                "gehört zu einer anderen Sortierung oder Filterung; ohne Cursor neu beginnen",
                "appartient à un autre tri ou filtre ; recommencez sans curseur",
            ))
            .into(),
        Rule::HttpsRequired => lang
            .pick(("must be an https URL", "muss eine https-URL sein", "doit être une URL https"))
            .into(),
        Rule::InternalAddress => lang
            .pick((
                "reaches an address notices may not be sent to (loopback, private, link-local or reserved)",
                "erreicht eine Adresse, an die keine Benachrichtigungen gehen dürfen (Loopback, privat, link-lokal oder reserviert)",
                "atteint une adresse à laquelle aucune notification ne peut être envoyée (boucle locale, privée, lien local ou réservée)",
            ))
            .into(),
        Rule::Unresolvable => lang
            .pick((
                "names a host that resolves to no address",
                "nennt einen Host ohne Adresse",
                "nomme un hôte qui ne se résout en aucune adresse",
            ))
            .into(),
        Rule::EmailNotConfigured => lang
            .pick((
                "is an e-mail address, and this service sends no e-mail (TANDEM_SMTP_URL is not set)",
                "ist eine E-Mail-Adresse, und dieser Dienst versendet keine E-Mail (TANDEM_SMTP_URL ist nicht gesetzt)",
                "est une adresse e-mail, et ce service n'envoie pas d'e-mail (TANDEM_SMTP_URL n'est pas défini)",
            ))
            .into(),
        Rule::Removed => lang
            .pick(("was removed at its sunset", "wurde zum Abschaltdatum entfernt", "a été retiré à sa date de retrait"))
            .into(),
        Rule::Invalid => lang.pick(("is invalid", "ist ungültig", "n'est pas valide")).into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negotiation_follows_quality() {
        assert_eq!(Lang::negotiate(None), Lang::En);
        assert_eq!(Lang::negotiate(Some("de-CH")), Lang::De);
        assert_eq!(Lang::negotiate(Some("it, fr;q=0.8, de;q=0.9")), Lang::De);
        assert_eq!(Lang::negotiate(Some("fr;q=0, es")), Lang::En);
    }

    #[test]
    fn messages_carry_their_bound() {
        assert_eq!(rule_message(&Rule::Min { min: 18 }, Lang::Fr), "doit être au moins 18");
        assert_eq!(rule_message(&Rule::TooLong { max: 200 }, Lang::De), "darf höchstens 200 Zeichen lang sein");
    }
}

/// One rule of each kind, with example values, for the book's reference of field codes.
pub fn one_of_each_rule() -> Vec<Rule> {
    vec![
        Rule::Required,
        Rule::Blank,
        Rule::TooLong { max: crate::core::user::NAME_MAX },
        Rule::Email,
        Rule::Min { min: crate::core::user::AGE_MIN },
        Rule::Max { max: crate::core::user::AGE_MAX },
        Rule::ExpectedString,
        Rule::ExpectedInteger,
        Rule::ExpectedObject,
        Rule::UnknownField,
        Rule::DuplicateKey,
        Rule::ReadOnly,
        Rule::Digits,
        Rule::InvalidId,
        Rule::ExpectedUuid,
        Rule::Unique,
        Rule::DuplicateOf { line: 2 },
        Rule::AlreadyExists,
        Rule::NotUtf8,
        Rule::NulByte,
        Rule::NoHeader,
        Rule::OneOf("met, none".into()),
        Rule::OtherQuery,
        Rule::NotWithCursor,
        Rule::HttpsRequired,
        Rule::InternalAddress,
        Rule::Unresolvable,
        Rule::EmailNotConfigured,
        Rule::Removed,
        Rule::Invalid,
    ]
}

#[cfg(test)]
mod every_rule {
    use super::*;

    /// Each rule's place in [`one_of_each_rule`]; the match has no wildcard, so a rule added
    /// later stops this compiling until it is given a place (and the list an example).
    fn place(rule: &Rule) -> usize {
        match rule {
            Rule::Required => 0,
            Rule::Blank => 1,
            Rule::TooLong { .. } => 2,
            Rule::Email => 3,
            Rule::Min { .. } => 4,
            Rule::Max { .. } => 5,
            Rule::ExpectedString => 6,
            Rule::ExpectedInteger => 7,
            Rule::ExpectedObject => 8,
            Rule::UnknownField => 9,
            Rule::DuplicateKey => 10,
            Rule::ReadOnly => 11,
            Rule::Digits => 12,
            Rule::InvalidId => 13,
            Rule::ExpectedUuid => 14,
            Rule::Unique => 15,
            Rule::DuplicateOf { .. } => 16,
            Rule::AlreadyExists => 17,
            Rule::NotUtf8 => 18,
            Rule::NulByte => 19,
            Rule::NoHeader => 20,
            Rule::OneOf(_) => 21,
            Rule::OtherQuery => 22,
            Rule::NotWithCursor => 23,
            Rule::HttpsRequired => 24,
            Rule::InternalAddress => 25,
            Rule::Unresolvable => 26,
            Rule::EmailNotConfigured => 27,
            Rule::Removed => 28,
            Rule::Invalid => 29,
        }
    }

    #[test]
    fn the_reference_lists_every_rule() {
        let places: Vec<usize> = one_of_each_rule().iter().map(place).collect();
        assert_eq!(places, (0..30).collect::<Vec<_>>());
    }
}
