//! Parameter and field types whose OpenAPI schema states the rule the core enforces, taken from
//! the rule's own declaration (a core constant or a [`Pattern`](crate::core::pattern::Pattern)).
//!
//! A `Documented<T, R>` parses exactly as `T` does: the rule itself is checked by the core, which
//! reports every broken rule of a request at once (poem-openapi's validators would stop at the
//! first, with its own wording). The document and the check still come from one declaration.

use std::{borrow::Cow, marker::PhantomData, ops::Deref};

use poem_openapi::{
    registry::{MetaSchema, MetaSchemaRef, Registry},
    types::{ParseError, ParseFromJSON, ParseFromParameter, ParseResult, ToJSON, Type},
};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::core::{
    listing::SortField,
    pattern::{self, Pattern},
};

/// What a rule adds to the schema of the type it documents.
pub trait Rules: Send + Sync + 'static {
    /// Documented as required though `T` may be absent: the core reports it missing.
    const REQUIRED: bool = false;
    fn document(schema: &mut MetaSchema);
}

/// A `T` whose schema also states the rules `R`.
pub struct Documented<T, R>(pub T, PhantomData<R>);

impl<T, R> Documented<T, R> {
    pub fn new(value: T) -> Self {
        Self(value, PhantomData)
    }

    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T: std::fmt::Debug, R> std::fmt::Debug for Documented<T, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: std::fmt::Display, R> std::fmt::Display for Documented<T, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T, R> Deref for Documented<T, R> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Serialize, R> Serialize for Documented<T, R> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// `T`'s schema with `rules` applied; a referenced schema is wrapped in `allOf` to carry them.
fn schema_with(base: MetaSchemaRef, rules: fn(&mut MetaSchema)) -> MetaSchemaRef {
    let mut schema = match base {
        MetaSchemaRef::Inline(schema) => *schema,
        reference => MetaSchema { all_of: vec![reference], ..MetaSchema::ANY },
    };
    rules(&mut schema);
    MetaSchemaRef::Inline(Box::new(schema))
}

impl<T: Type, R: Rules> Type for Documented<T, R> {
    const IS_REQUIRED: bool = T::IS_REQUIRED || R::REQUIRED;
    type RawValueType = T::RawValueType;
    type RawElementValueType = T::RawElementValueType;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn schema_ref() -> MetaSchemaRef {
        schema_with(T::schema_ref(), R::document)
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        self.0.as_raw_value()
    }

    fn raw_element_iter<'a>(&'a self) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        self.0.raw_element_iter()
    }
}

impl<T: ParseFromParameter, R: Rules> ParseFromParameter for Documented<T, R> {
    fn parse_from_parameter(value: &str) -> ParseResult<Self> {
        T::parse_from_parameter(value).map(Self::new).map_err(ParseError::propagate)
    }

    fn parse_from_parameters<I: IntoIterator<Item = A>, A: AsRef<str>>(iter: I) -> ParseResult<Self> {
        T::parse_from_parameters(iter).map(Self::new).map_err(ParseError::propagate)
    }
}

impl<T: ParseFromJSON, R: Rules> ParseFromJSON for Documented<T, R> {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        T::parse_from_json(value).map(Self::new).map_err(ParseError::propagate)
    }
}

impl<T: ToJSON, R: Rules> ToJSON for Documented<T, R> {
    fn to_json(&self) -> Option<Value> {
        self.0.to_json()
    }
}

/// A field that is always present, `null` when it has no value (required and nullable).
#[derive(Debug)]
pub struct Nullable<T>(pub Option<T>);

impl<T> Deref for Nullable<T> {
    type Target = Option<T>;

    fn deref(&self) -> &Option<T> {
        &self.0
    }
}

impl<T: Serialize> Serialize for Nullable<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<T: Type> Type for Nullable<T> {
    const IS_REQUIRED: bool = true;
    type RawValueType = T::RawValueType;
    type RawElementValueType = T::RawElementValueType;

    fn name() -> Cow<'static, str> {
        format!("Nullable_{}", T::name()).into()
    }

    fn schema_ref() -> MetaSchemaRef {
        schema_with(T::schema_ref(), |schema| schema.nullable = true)
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn as_raw_value(&self) -> Option<&Self::RawValueType> {
        self.0.as_ref().and_then(Type::as_raw_value)
    }

    fn raw_element_iter<'a>(&'a self) -> Box<dyn Iterator<Item = &'a Self::RawElementValueType> + 'a> {
        match &self.0 {
            Some(value) => value.raw_element_iter(),
            None => Box::new(std::iter::empty()),
        }
    }
}

impl<T: ParseFromJSON> ParseFromJSON for Nullable<T> {
    fn parse_from_json(value: Option<Value>) -> ParseResult<Self> {
        match value {
            None | Some(Value::Null) => Ok(Self(None)),
            value => T::parse_from_json(value).map(|v| Self(Some(v))).map_err(ParseError::propagate),
        }
    }
}

impl<T: ToJSON> ToJSON for Nullable<T> {
    fn to_json(&self) -> Option<Value> {
        Some(self.0.as_ref().and_then(ToJSON::to_json).unwrap_or(Value::Null))
    }
}

// The rules. Each states one constraint; tuples combine them.

impl<A: Rules, B: Rules> Rules for (A, B) {
    const REQUIRED: bool = A::REQUIRED || B::REQUIRED;
    fn document(schema: &mut MetaSchema) {
        A::document(schema);
        B::document(schema);
    }
}

impl<A: Rules, B: Rules, C: Rules> Rules for (A, B, C) {
    const REQUIRED: bool = A::REQUIRED || B::REQUIRED || C::REQUIRED;
    fn document(schema: &mut MetaSchema) {
        A::document(schema);
        B::document(schema);
        C::document(schema);
    }
}

/// `minimum` and `maximum`, both inclusive.
pub struct Range<const MIN: i64, const MAX: i64>;

impl<const MIN: i64, const MAX: i64> Rules for Range<MIN, MAX> {
    fn document(schema: &mut MetaSchema) {
        schema.minimum = Some(MIN as f64);
        schema.maximum = Some(MAX as f64);
    }
}

/// `maxLength`, in characters.
pub struct MaxLength<const N: usize>;

impl<const N: usize> Rules for MaxLength<N> {
    fn document(schema: &mut MetaSchema) {
        schema.max_length = Some(N);
    }
}

/// `maxItems`.
pub struct MaxItems<const N: usize>;

impl<const N: usize> Rules for MaxItems<N> {
    fn document(schema: &mut MetaSchema) {
        schema.max_items = Some(N);
    }
}

/// The value the service uses when the client sends none.
pub struct Default<const N: i64>;

impl<const N: i64> Rules for Default<N> {
    fn document(schema: &mut MetaSchema) {
        schema.default = Some(Value::from(N));
    }
}

/// Required, though the core is the one to say it is missing, with the other errors.
pub struct Required;

impl Rules for Required {
    const REQUIRED: bool = true;
    fn document(_: &mut MetaSchema) {}
}

/// Rules that set one keyword. `|schema| …` names the schema the keyword is set on.
macro_rules! rules {
    ($($(#[$doc:meta])* $name:ident: |$schema:ident| $set:expr;)*) => {$(
        $(#[$doc])*
        pub struct $name;

        impl Rules for $name {
            fn document($schema: &mut MetaSchema) {
                $set;
            }
        }
    )*};
}

/// A core pattern, as the schema's `pattern`.
fn matching(pattern: &Pattern) -> Option<String> {
    Some(pattern.source.to_string())
}

rules! {
    /// Set by the service; a client never sends it.
    ReadOnly: |schema| schema.read_only = true;
    /// RFC 3339, as the service writes it: UTC with `Z`.
    DateTime: |schema| schema.format = Some("date-time");
    /// A UTC day: `2026-12-03`.
    Date: |schema| schema.format = Some("date");
    /// A JSON object of any shape.
    AnObject: |schema| schema.ty = "object";
    Email: |schema| schema.format = Some("email");
    UuidFormat: |schema| schema.format = Some("uuid");
    UserRef: |schema| schema.pattern = matching(&pattern::USER_REF);
    PositiveId: |schema| schema.pattern = matching(&pattern::POSITIVE_ID);
    HyphenatedUuid: |schema| schema.pattern = matching(&pattern::UUID);
    NotBlank: |schema| schema.pattern = matching(&pattern::NOT_BLANK);
    NoNul: |schema| schema.pattern = matching(&pattern::NO_NUL);
    IdempotencyKey: |schema| schema.pattern = matching(&pattern::IDEMPOTENCY_KEY);
    Tenant: |schema| schema.pattern = matching(&pattern::TENANT);
    BranchCode: |schema| schema.pattern = matching(&pattern::BRANCH_CODE);
    CustomerNumber: |schema| schema.pattern = matching(&pattern::CUSTOMER_NUMBER);
    EmailShape: |schema| schema.pattern = matching(&pattern::EMAIL_SHAPE);
}

/// One of the sortable fields of `F`, by wire name.
pub struct SortFieldName<F>(PhantomData<F>);

impl<F: SortField> Rules for SortFieldName<F> {
    fn document(schema: &mut MetaSchema) {
        schema.enum_items = F::ALL.iter().map(|f| Value::from(f.name())).collect();
    }
}
