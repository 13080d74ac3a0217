//! Checks across attributes and fields.

use syn::spanned::Spanned;

use crate::ast::{Field, Form, Input};
use crate::attr::BucketBy;
use crate::errors::Errors;
use crate::input::Member;

/// The field named by `member`, if any.
pub(crate) fn find<'i, 'a>(
    input: &'i Input<'a>,
    member: &Member,
) -> Option<(usize, &'i Field<'a>)> {
    input
        .fields
        .iter()
        .enumerate()
        .find(|(_, f)| same_member(&f.member, member))
}

/// Whether two members name one field: `r#ts` and `ts` are one identifier.
fn same_member(a: &Member, b: &Member) -> bool {
    use syn::ext::IdentExt;
    match (a, b) {
        (Member::Named(a), Member::Named(b)) => a.unraw() == b.unraw(),
        (Member::Unnamed { index: a, .. }, Member::Unnamed { index: b, .. }) => a == b,
        _ => false,
    }
}

fn member_text(m: &Member) -> String {
    match m {
        Member::Named(i) => i.to_string(),
        Member::Unnamed { index, .. } => index.to_string(),
    }
}

pub(crate) fn check(input: &Input<'_>, errors: &mut Errors) {
    for field in &input.fields {
        check_field(field, errors);
    }
    check_prefix(input, errors);
    check_range_names(input, errors);
}

/// The range constructors `ranges_<field>` and `ranges_<field>_eq` of two fields must not clash
/// (fields `a` and `a_eq`).
fn check_range_names(input: &Input<'_>, errors: &mut Errors) {
    if input
        .attrs
        .hash
        .as_ref()
        .is_some_and(|h| h.value.fields.is_empty())
    {
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

/// What the syntax alone says is wrong with a field. The rules of the key format (widths, which
/// options apply to which kind, attributes on nested keys, delimiter floors, names) are not
/// checked here: the generated code
/// checks them at compile time by calling pk-codec's rulebook (`pk_codec::rules`).
fn check_field(field: &Field<'_>, errors: &mut Errors) {
    match field.form {
        Form::Unsupported(why) => {
            errors.at(
                field.ty.span(),
                format!("unsupported key field type: {why}"),
            );
        }
        Form::Scalar { .. } | Form::Part => {}
    }
}

/// The prefix attributes name fields that exist, once each, and one prefix at most. Their values
/// (hash lengths, bucket counts, the fields' kinds, the length limit) are checked by the
/// generated code against pk-codec's rulebook.
fn check_prefix(input: &Input<'_>, errors: &mut Errors) {
    let c = &input.attrs;
    if let (Some(_), Some(b)) = (&c.hash, &c.buckets) {
        errors.at(
            b.span,
            "#[pk(buckets)] and #[pk(hash)] cannot be combined: a key has one prefix",
        );
    }
    if let Some(h) = &c.hash {
        check_members(input, &h.value.fields, "hash(fields(...))", errors);
    }
    let Some(b) = &c.buckets else {
        return;
    };
    match &b.value.by {
        BucketBy::Modulo(m) => {
            if find(input, m).is_none() {
                errors.at(
                    m.span(),
                    format!(
                        "#[pk(buckets(modulo = {}))] names no field of this struct",
                        member_text(m)
                    ),
                );
            }
        }
        BucketBy::Hash(members) => check_members(input, members, "buckets(hash(...))", errors),
    }
}

/// The fields an attribute names exist, once each.
fn check_members(input: &Input<'_>, members: &[Member], attribute: &str, errors: &mut Errors) {
    for (i, m) in members.iter().enumerate() {
        if find(input, m).is_none() {
            errors.at(
                m.span(),
                format!(
                    "#[pk({attribute})] names `{}`, which is no field of this struct",
                    member_text(m)
                ),
            );
        } else if members[..i].iter().any(|earlier| same_member(earlier, m)) {
            errors.at(
                m.span(),
                format!("#[pk({attribute})] names `{}` twice", member_text(m)),
            );
        }
    }
}
