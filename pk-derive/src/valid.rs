//! Checks across attributes and fields, and the error collector.

use proc_macro2::Span;
use syn::Member;
use syn::spanned::Spanned;

use crate::ast::{Field, Form, Input, ScalarKind};
use crate::attr::{ALGORITHMS, BucketBy};

/// Every error found, reported together (serde's `Ctxt`).
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    pub(crate) fn at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    pub(crate) fn into_error(self) -> Option<syn::Error> {
        self.0
    }
}

/// The field named by `member`, if any.
pub(crate) fn find<'i, 'a>(
    input: &'i Input<'a>,
    member: &Member,
) -> Option<(usize, &'i Field<'a>)> {
    input
        .fields
        .iter()
        .enumerate()
        .find(|(_, f)| f.member == *member)
}

fn member_text(m: &Member) -> String {
    match m {
        Member::Named(i) => i.to_string(),
        Member::Unnamed(i) => i.index.to_string(),
    }
}

/// The lowest byte a variable-length form of a field with this kind can hold (mirrors
/// pk-codec's `FieldSpec::delimiter_floor`), with the form's name for messages.
fn delimiter_floor(
    kind: ScalarKind,
    optional: bool,
    desc: bool,
    escaped: bool,
) -> Option<(u8, &'static str)> {
    use ScalarKind::*;
    match kind {
        Uint | Bool if optional => Some((b'0', "an optional unsigned or bool field")),
        Int if optional => Some((b'-', "an optional signed field")),
        Uint | Int | Bool => None,
        _ if desc => Some((b'a', "a descending field")),
        Str if !escaped => None,
        Str => Some((b'-', "an escaped string")),
        Char => Some((b'-', "a char field (escaped)")),
        Bytes => Some((b'0', "a byte string (hex)")),
    }
}

pub(crate) fn check(input: &Input<'_>, errors: &mut Errors) {
    for field in &input.fields {
        check_field(field, errors);
    }
    check_delimiter(input, errors);
    check_prefix(input, errors);
    check_range_names(input, errors);
}

/// The range constructors `ranges_<field>` and `ranges_<field>_eq` of two fields must not clash
/// (fields `a` and `a_eq`).
fn check_range_names(input: &Input<'_>, errors: &mut Errors) {
    if input.attrs.hash.is_some() {
        return;
    }
    for (i, field) in input.fields.iter().enumerate() {
        let clash = input.fields.iter().take(i).find(|earlier| {
            field.method_suffix == format!("{}_eq", earlier.method_suffix)
                || earlier.method_suffix == format!("{}_eq", field.method_suffix)
        });
        if let Some(earlier) = clash {
            // The `_eq` method of the shorter name is the plain method of the longer one.
            let longer = if field.method_suffix.len() > earlier.method_suffix.len() {
                &field.method_suffix
            } else {
                &earlier.method_suffix
            };
            errors.push(syn::Error::new_spanned(
                &field.member,
                format!(
                    "fields `{}` and `{}` would both get a range constructor named `ranges_{}`; rename one",
                    earlier.name,
                    field.name,
                    longer
                ),
            ));
        }
    }
}

fn check_field(field: &Field<'_>, errors: &mut Errors) {
    let a = &field.attrs;
    if !field
        .name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_')
    {
        errors.push(syn::Error::new_spanned(
            &field.member,
            format!(
                "key field names are ASCII letters, digits and `_`, as in a runtime Layout; rename `{}`",
                field.name
            ),
        ));
    }
    match field.form {
        Form::Unsupported(why) => {
            errors.at(
                field.ty.span(),
                format!("unsupported key field type: {why}"),
            );
        }
        Form::Nested => {
            if let Some(w) = &a.width {
                errors.at(
                    w.span,
                    "#[pk(width)] needs an integer field, and this field is a nested key",
                );
            }
            if let Some(s) = a.desc {
                errors.at(
                    s,
                    "#[pk(desc)] does not apply to a nested key: mark the nested key's own fields #[pk(desc)]",
                );
            }
            if let Some(s) = a.escaped {
                errors.at(
                    s,
                    "#[pk(escaped)] needs a string field, and this field is a nested key",
                );
            }
        }
        Form::Scalar { kind, .. } => {
            if let Some(w) = &a.width {
                match kind.and_then(ScalarKind::width_range) {
                    Some((_, hi)) if w.value > hi => errors.at(
                        w.span,
                        format!(
                            "#[pk(width = {})] is too wide: an integer field takes at most {hi} characters \
                             (a u128 needs 39, an i128 40)",
                            w.value
                        ),
                    ),
                    Some((lo, _)) if w.value < lo => {
                        let why = if kind == Some(ScalarKind::Int) {
                            "a signed field takes 2 to 40 characters: a sign and at least one digit"
                        } else {
                            "an unsigned field takes 1 to 40 digits"
                        };
                        errors.at(
                            w.span,
                            format!("#[pk(width = {})] can never hold a value: {why}", w.value),
                        );
                    }
                    Some(_) => {}
                    None => errors.at(
                        w.span,
                        "#[pk(width)] needs an integer field (u8..u128, i8..i128, or an Option of one)",
                    ),
                }
            }
            if let Some(s) = a.escaped
                && kind != Some(ScalarKind::Str)
            {
                errors.at(
                    s,
                    "#[pk(escaped)] needs a string field (String, &str, or an Option of one); \
                     char fields are always escaped",
                );
            }
        }
    }
}

fn check_delimiter(input: &Input<'_>, errors: &mut Errors) {
    let Some(d) = &input.attrs.delimiter else {
        return;
    };
    let c = d.value;
    if !c.is_ascii() {
        errors.at(
            d.span,
            format!("#[pk(delimiter = {c:?})] must be an ASCII character"),
        );
        return;
    }
    if c.is_ascii_alphanumeric() {
        errors.at(
            d.span,
            format!(
                "#[pk(delimiter = {c:?})] is a letter or digit, which field values hold, so keys would not sort \
                 field by field; use punctuation below `-`, such as ','"
            ),
        );
        return;
    }
    for field in &input.fields {
        let Form::Scalar {
            kind: Some(kind),
            optional,
        } = field.form
        else {
            continue;
        };
        let a = &field.attrs;
        if let Some((floor, what)) =
            delimiter_floor(kind, optional, a.desc.is_some(), a.escaped.is_some())
            && (c as u8) >= floor
        {
            errors.at(
                d.span,
                format!(
                    "#[pk(delimiter = {c:?})] cannot order field `{}`: {what} can hold {:?}, which does not sort \
                     above the delimiter, so a shorter value would not sort before a longer one; use a \
                     delimiter below {:?}, such as ','",
                    field.name,
                    char::from(floor),
                    char::from(floor)
                ),
            );
        }
    }
}

fn check_prefix(input: &Input<'_>, errors: &mut Errors) {
    let c = &input.attrs;
    let mut prefix_len = 0usize;
    if let (Some(_), Some(b)) = (&c.hash, &c.buckets) {
        errors.at(
            b.span,
            "#[pk(buckets)] and #[pk(hash)] cannot be combined: a key has one prefix",
        );
    }
    if let Some(h) = &c.hash {
        let (name, _, max) = ALGORITHMS[h.value.alg];
        let len = h.value.len.value;
        if len == 0 || len > max {
            errors.at(
                h.value.len.span,
                format!(
                    "#[pk(hash({name}, len = {len}))] is out of range: a {name} digest has {max} hex characters, \
                     so the prefix takes 1 to {max}"
                ),
            );
        }
        prefix_len = usize::from(len) + usize::from(h.value.separator);
    }
    if let Some(b) = &c.buckets {
        let count = b.value.count.value;
        if count == 0 {
            errors.at(
                b.value.count.span,
                "#[pk(buckets(count = 0))]: a bucket prefix needs at least 1 bucket",
            );
        }
        prefix_len = (count.max(1) - 1).to_string().len() + usize::from(b.value.separator);
        match &b.value.by {
            BucketBy::Modulo(m) => match find(input, m) {
                None => errors.at(
                    m.span(),
                    format!(
                        "#[pk(buckets(modulo = {}))] names no field of this struct",
                        member_text(m)
                    ),
                ),
                Some((_, f)) => {
                    if !matches!(
                        f.form,
                        Form::Scalar {
                            kind: Some(ScalarKind::Uint | ScalarKind::Int),
                            optional: false
                        }
                    ) || matches!(f.ty, syn::Type::Reference(_))
                    {
                        errors.at(
                            m.span(),
                            format!(
                                "#[pk(buckets(modulo = {}))] needs an integer field (u8..u128, i8..i128), not optional",
                                member_text(m)
                            ),
                        );
                    }
                }
            },
            BucketBy::Hash(members) => {
                if members.len() > 8 {
                    errors.at(b.span, "#[pk(buckets(hash(...)))] covers at most 8 fields");
                }
                for (i, m) in members.iter().enumerate() {
                    if find(input, m).is_none() {
                        errors.at(
                            m.span(),
                            format!("#[pk(buckets(hash(...)))] names `{}`, which is no field of this struct", member_text(m)),
                        );
                    } else if members[..i].contains(m) {
                        errors.at(
                            m.span(),
                            format!("#[pk(buckets(hash(...)))] names `{}` twice", member_text(m)),
                        );
                    }
                }
            }
        }
    }
    if let Some(m) = &c.max_len
        && m.value <= prefix_len
    {
        errors.at(
            m.span,
            format!(
                "#[pk(max_len = {})] leaves no room for the fields after the {prefix_len}-byte prefix",
                m.value
            ),
        );
    }
}
