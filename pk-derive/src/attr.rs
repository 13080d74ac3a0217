//! `#[pk(...)]` attributes, parsed with `meta.rs` (syn's `parse_nested_meta`). Checks that need one attribute only
//! happen here; checks across attributes and fields are in `valid.rs`.

use proc_macro2::Span;
use proc_macro2::TokenStream;
use quote::quote;
use syn::punctuated::Punctuated;
use syn::{LitChar, LitInt, LitStr, Token};

use crate::errors::Errors;
use crate::input::{Attribute, DeriveInput, Field, Member};
use crate::meta::{self, Meta};

const PK: &str = "pk";
// Container attributes.
const DELIMITER: &str = "delimiter";
const MAX_LEN: &str = "max_len";
const HASH: &str = "hash";
const BUCKETS: &str = "buckets";
const CRATE: &str = "crate";
const FORM: &str = "form";
// Inside `hash(...)`.
const LEN: &str = "len";
const SEPARATOR: &str = "separator";
// Inside `buckets(...)`.
const COUNT: &str = "count";
const FIELDS: &str = "fields";
const MODULO: &str = "modulo";
// Field attributes.
const WIDTH: &str = "width";
const DESC: &str = "desc";
const ESCAPED: &str = "escaped";
const PRECISION: &str = "precision";

/// A value with the span of the attribute that gave it.
pub(crate) struct WithSpan<T> {
    pub(crate) value: T,
    pub(crate) span: Span,
}

pub(crate) struct HashAttr {
    /// The algorithm's name, looked up by pk-codec (`HashAlg::from_name`) in generated code.
    pub(crate) alg: WithSpan<String>,
    pub(crate) len: WithSpan<u8>,
    pub(crate) separator: bool,
    /// The leading fields hashed (`fields(a, b)`); empty for the whole natural key.
    pub(crate) fields: Vec<Member>,
}

pub(crate) enum BucketBy {
    Modulo(Member),
    /// The fields hashed; empty for all of them.
    Hash(Vec<Member>),
}

pub(crate) struct Buckets {
    pub(crate) count: WithSpan<u32>,
    pub(crate) by: BucketBy,
    pub(crate) separator: bool,
}

/// The struct's attributes.
#[derive(Default)]
pub(crate) struct Container {
    pub(crate) delimiter: Option<WithSpan<char>>,
    pub(crate) max_len: Option<WithSpan<usize>>,
    pub(crate) hash: Option<WithSpan<HashAttr>>,
    pub(crate) buckets: Option<WithSpan<Buckets>>,
    /// The path of pk-codec in generated code.
    pub(crate) krate: Option<TokenStream>,
    /// The form's name (`#[pk(form = binary)]`), looked up by pk-codec (`__private::form`) in
    /// generated code.
    pub(crate) form: Option<WithSpan<String>>,
}

/// A field's attributes.
#[derive(Default)]
pub(crate) struct FieldAttrs {
    pub(crate) width: Option<WithSpan<u8>>,
    pub(crate) desc: Option<Span>,
    pub(crate) escaped: Option<Span>,
    /// The precision's name, looked up by pk-codec (`Precision::from_name`) in generated code.
    pub(crate) precision: Option<WithSpan<String>>,
}

fn duplicate(meta: &Meta<'_>, name: &str) -> syn::Error {
    meta.error(format!("duplicate #[pk({name})] attribute"))
}

/// Sets `slot` once, reporting a duplicate on the second attribute.
fn set<T>(slot: &mut Option<T>, value: T, meta: &Meta<'_>, name: &str) -> syn::Result<()> {
    if slot.is_some() {
        return Err(duplicate(meta, name));
    }
    *slot = Some(value);
    Ok(())
}

fn pk_attrs(attrs: &[Attribute]) -> impl Iterator<Item = &Attribute> {
    attrs.iter().filter(|a| a.is(PK))
}

pub(crate) fn container(input: &DeriveInput, errors: &mut Errors) -> Container {
    let mut c = Container::default();
    for attr in pk_attrs(&input.attrs) {
        let result = attr.parse_nested_meta(|meta| {
            let span = meta.path.span();
            if meta.path.is_ident(DELIMITER) {
                // #[pk(delimiter = ',')]
                let lit: LitChar = meta.value()?.parse()?;
                set(&mut c.delimiter, WithSpan { value: lit.value(), span: lit.span() }, &meta, DELIMITER)
            } else if meta.path.is_ident(MAX_LEN) {
                // #[pk(max_len = 1024)]
                let lit: LitInt = meta.value()?.parse()?;
                let value = saturating(&lit, usize::MAX)?;
                set(&mut c.max_len, WithSpan { value, span: lit.span() }, &meta, MAX_LEN)
            } else if meta.path.is_ident(HASH) {
                // #[pk(hash(md5, len = 4))], #[pk(hash(xxh3, len = 8, separator))]
                let hash = hash_attr(&meta)?;
                set(&mut c.hash, WithSpan { value: hash, span }, &meta, HASH)
            } else if meta.path.is_ident(BUCKETS) {
                // #[pk(buckets(count = 16, modulo = ts))], #[pk(buckets(count = 8, hash(a, b), separator))]
                let buckets = buckets_attr(&meta)?;
                set(&mut c.buckets, WithSpan { value: buckets, span }, &meta, BUCKETS)
            } else if meta.path.is_ident(CRATE) {
                // #[pk(crate = "my_reexport::pk_codec")]
                let lit: LitStr = meta.value()?.parse()?;
                let path = lit.parse_with(meta::parse_crate_path)?;
                set(&mut c.krate, path, &meta, CRATE)
            } else if meta.path.is_ident(FORM) {
                // #[pk(form = binary)]
                let ident: syn::Ident = meta.value()?.parse()?;
                let value = WithSpan { value: ident.to_string(), span: ident.span() };
                set(&mut c.form, value, &meta, FORM)
            } else if [WIDTH, DESC, ESCAPED, PRECISION].iter().any(|n| meta.path.is_ident(n)) {
                Err(meta.error(format!(
                    "#[pk({})] is a field attribute: put it on a field",
                    path_name(&meta)
                )))
            } else {
                Err(meta.error(format!(
                    "unknown #[pk({})] attribute on a struct; expected delimiter, max_len, hash, buckets, form or crate",
                    path_name(&meta)
                )))
            }
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    c
}

/// An integer attribute's value, `max` when it is larger: the rulebook, which bounds every such
/// value well below its type's largest, then refuses it by the rule's name (a width of 300 breaks
/// `width-range`, not the `u8` the derive holds it in).
fn saturating<T: TryFrom<u128>>(lit: &LitInt, max: T) -> syn::Result<T> {
    // Every digit string parses as a `u128` or overflows it: both are at least `max`.
    let value = lit.base10_parse::<u128>().unwrap_or(u128::MAX);
    Ok(T::try_from(value).unwrap_or(max))
}

fn path_name(meta: &Meta<'_>) -> String {
    meta.path.name()
}

fn hash_attr(meta: &Meta<'_>) -> syn::Result<HashAttr> {
    let mut alg: Option<WithSpan<String>> = None;
    let mut len: Option<WithSpan<u8>> = None;
    let mut separator: Option<()> = None;
    let mut fields: Option<Vec<Member>> = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident(FIELDS) {
            // hash(..., fields(device_id)): only the leading fields named
            let content;
            syn::parenthesized!(content in inner.input);
            let members: Vec<Member> = Punctuated::<Member, Token![,]>::parse_terminated(&content)?
                .into_iter()
                .collect();
            if members.is_empty() {
                // Not the whole key silently: that is `fields(...)` left out.
                return Err(inner.error(
                    "#[pk(hash(fields()))] names no field; name the leading fields hashed, or leave fields(...) out to hash the whole key",
                ));
            }
            set(&mut fields, members, &inner, "hash(fields)")
        } else if inner.path.is_ident(LEN) {
            // hash(..., len = 4)
            let lit: LitInt = inner.value()?.parse()?;
            let value = saturating(&lit, u8::MAX)?;
            set(&mut len, WithSpan { value, span: lit.span() }, &inner, "hash(len)")
        } else if inner.path.is_ident(SEPARATOR) {
            // hash(..., separator)
            set(&mut separator, (), &inner, "hash(separator)")
        } else if let Some(name) = inner.path.get_ident().filter(|_| inner.input.is_empty() || inner.input.peek(Token![,])) {
            // hash(md5, ...): the name is looked up by pk-codec in the generated code.
            let value = WithSpan { value: name.to_string(), span: name.span() };
            set(&mut alg, value, &inner, "hash(<algorithm>)")
        } else {
            Err(inner.error(format!(
                "unknown #[pk(hash({}))] parameter; expected an algorithm name (md5, xxh32, ...), len = N, separator or fields(...)",
                path_name(&inner)
            )))
        }
    })?;
    let Some(alg) = alg else {
        return Err(meta.error(
            "#[pk(hash)] needs an algorithm, e.g. #[pk(hash(md5, len = 4))]; one of md5, xxh32, xxh64, xxh3",
        ));
    };
    let Some(len) = len else {
        return Err(meta.error(
            "#[pk(hash)] needs a prefix length in hex characters, e.g. #[pk(hash(md5, len = 4))]",
        ));
    };
    Ok(HashAttr {
        alg,
        len,
        separator: separator.is_some(),
        fields: fields.unwrap_or_default(),
    })
}

fn buckets_attr(meta: &Meta<'_>) -> syn::Result<Buckets> {
    let mut count: Option<WithSpan<u32>> = None;
    let mut by: Option<BucketBy> = None;
    let mut separator: Option<()> = None;
    meta.parse_nested_meta(|inner| {
        if inner.path.is_ident(COUNT) {
            // buckets(count = 16, ...)
            let lit: LitInt = inner.value()?.parse()?;
            let value = saturating(&lit, u32::MAX)?;
            set(&mut count, WithSpan { value, span: lit.span() }, &inner, "buckets(count)")
        } else if inner.path.is_ident(MODULO) {
            // buckets(..., modulo = ts) or, in a tuple struct, modulo = 0
            let member: Member = inner.value()?.parse()?;
            if by.is_some() {
                return Err(inner.error("#[pk(buckets)] takes one of modulo = field or hash(...)"));
            }
            by = Some(BucketBy::Modulo(member));
            Ok(())
        } else if inner.path.is_ident(HASH) {
            // buckets(..., hash) for all fields, or buckets(..., hash(a, b))
            let members = if inner.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in inner.input);
                let members: Vec<Member> = Punctuated::<Member, Token![,]>::parse_terminated(&content)?
                    .into_iter()
                    .collect();
                if members.is_empty() {
                    // Not every field silently: that is `hash` alone.
                    return Err(inner.error(
                        "#[pk(buckets(hash()))] names no field; name the fields hashed, or write hash alone to hash every field",
                    ));
                }
                members
            } else {
                Vec::new()
            };
            if by.is_some() {
                return Err(inner.error("#[pk(buckets)] takes one of modulo = field or hash(...)"));
            }
            by = Some(BucketBy::Hash(members));
            Ok(())
        } else if inner.path.is_ident(SEPARATOR) {
            // buckets(..., separator)
            set(&mut separator, (), &inner, "buckets(separator)")
        } else {
            Err(inner.error(format!(
                "unknown #[pk(buckets({}))] parameter; expected count = N, modulo = field, hash(fields) or separator",
                path_name(&inner)
            )))
        }
    })?;
    let Some(count) = count else {
        return Err(meta
            .error("#[pk(buckets)] needs a count, e.g. #[pk(buckets(count = 16, modulo = ts))]"));
    };
    let Some(by) = by else {
        return Err(meta.error(
            "#[pk(buckets)] needs what picks the bucket: modulo = field, or hash(fields) / hash for all fields",
        ));
    };
    Ok(Buckets {
        count,
        by,
        separator: separator.is_some(),
    })
}

pub(crate) fn field(field: &Field, errors: &mut Errors) -> FieldAttrs {
    let mut f = FieldAttrs::default();
    for attr in pk_attrs(&field.attrs) {
        let result = attr.parse_nested_meta(|meta| {
            let span = meta.path.span();
            if meta.path.is_ident(WIDTH) {
                // #[pk(width = 6)]
                let lit: LitInt = meta.value()?.parse()?;
                let value = saturating(&lit, u8::MAX)?;
                set(
                    &mut f.width,
                    WithSpan {
                        value,
                        span: span.join(lit.span()).unwrap_or(span),
                    },
                    &meta,
                    WIDTH,
                )
            } else if meta.path.is_ident(DESC) {
                // #[pk(desc)]
                set(&mut f.desc, span, &meta, DESC)
            } else if meta.path.is_ident(ESCAPED) {
                // #[pk(escaped)]
                set(&mut f.escaped, span, &meta, ESCAPED)
            } else if meta.path.is_ident(PRECISION) {
                // #[pk(precision = ms)]
                let ident: syn::Ident = meta.value()?.parse()?;
                let value = WithSpan { value: ident.to_string(), span: ident.span() };
                set(&mut f.precision, value, &meta, PRECISION)
            } else if [DELIMITER, MAX_LEN, HASH, BUCKETS, FORM]
                .iter()
                .any(|n| meta.path.is_ident(n))
            {
                Err(meta.error(format!(
                    "#[pk({})] is a struct attribute: put it on the struct",
                    path_name(&meta)
                )))
            } else {
                Err(meta.error(format!(
                    "unknown #[pk({})] attribute on a field; expected width = N, desc, escaped or precision = P",
                    path_name(&meta)
                )))
            }
        });
        if let Err(e) = result {
            errors.push(e);
        }
    }
    f
}

/// The path of pk-codec for a stub impl: `#[pk(crate = "...")]` if it parses, else `::pk_codec`.
pub(crate) fn crate_path(input: &DeriveInput) -> TokenStream {
    let mut path = None;
    for attr in pk_attrs(&input.attrs) {
        let _ = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident(CRATE) {
                let lit: LitStr = meta.value()?.parse()?;
                path = Some(lit.parse_with(meta::parse_crate_path)?);
            } else if let Ok(value) = meta.value() {
                // Skip `name = value` of other attributes.
                meta::skip_value(value)?;
            } else if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                content.parse::<TokenStream>()?;
            }
            Ok(())
        });
    }
    path.unwrap_or_else(|| quote!(::pk_codec))
}
