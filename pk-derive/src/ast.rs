//! A borrowed model of the derive input, keeping the syn nodes for spans.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, GenericArgument, Member, PathArguments, Type};

use crate::attr::{self, Container, FieldAttrs};
use crate::errors::Errors;

/// The struct being derived.
pub(crate) struct Input<'a> {
    pub(crate) original: &'a DeriveInput,
    pub(crate) attrs: Container,
    pub(crate) fields: Vec<Field<'a>>,
}

/// One field of the struct.
pub(crate) struct Field<'a> {
    /// `self.<member>`: a name or a tuple index.
    pub(crate) member: Member,
    /// The name in the runtime layout and in error values: the identifier, or `_0` for index 0.
    pub(crate) name: String,
    /// The name in generated method names: the identifier, or `0`.
    pub(crate) method_suffix: String,
    pub(crate) ty: &'a Type,
    pub(crate) attrs: FieldAttrs,
    pub(crate) form: Form,
}

/// How a field is written, decided from its type's syntax.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Form {
    /// A `KeyField` type: `kind` is known for the types named by syntax, `None` for others
    /// (e.g. `Option<T>` of a type parameter), which are checked by the trait system.
    Scalar {
        kind: Option<ScalarKind>,
        optional: bool,
    },
    /// Any other type: written through its `KeyPart` impl, which says whether it is a field (a
    /// type alias, a kind the macro does not name) or a whole key spliced in.
    Part,
    /// A type with no key form.
    Unsupported(&'static str),
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScalarKind {
    Uint,
    Int,
    Str,
    Bytes,
    Bool,
    Char,
    Float,
}

impl<'a> Input<'a> {
    pub(crate) fn from_syn(input: &'a DeriveInput, errors: &mut Errors) -> Option<Self> {
        let data = match &input.data {
            Data::Struct(data) => data,
            Data::Enum(e) => {
                errors.push(syn::Error::new(
                    e.enum_token.span,
                    "#[derive(PartitionKey)] needs a struct: an enum has no field-by-field key order; \
                     write a struct per variant, or an integer discriminant field",
                ));
                return None;
            }
            Data::Union(u) => {
                errors.push(syn::Error::new(
                    u.union_token.span,
                    "#[derive(PartitionKey)] needs a struct, not a union",
                ));
                return None;
            }
        };
        let attrs = attr::container(input, errors);
        let fields = match &data.fields {
            Fields::Named(named) => named.named.iter().collect::<Vec<_>>(),
            Fields::Unnamed(unnamed) => unnamed.unnamed.iter().collect(),
            Fields::Unit => Vec::new(),
        };
        if fields.is_empty() {
            errors.push(syn::Error::new(
                input.ident.span(),
                "#[derive(PartitionKey)] needs a struct with at least one field",
            ));
            return None;
        }
        let scalar_params = scalar_params(&input.generics);
        let fields = fields
            .into_iter()
            .enumerate()
            .map(|(i, field)| {
                let (member, name, method_suffix) = match &field.ident {
                    Some(ident) => {
                        let s = ident.to_string();
                        let s = s.strip_prefix("r#").unwrap_or(&s).to_owned();
                        (Member::Named(ident.clone()), s.clone(), s)
                    }
                    None => (
                        Member::Unnamed(syn::Index {
                            index: i as u32,
                            span: field.ty.span(),
                        }),
                        format!("_{i}"),
                        i.to_string(),
                    ),
                };
                Field {
                    member,
                    name,
                    method_suffix,
                    ty: &field.ty,
                    attrs: attr::field(field, errors),
                    form: match &field.ty {
                        Type::Path(p)
                            if p.qself.is_none()
                                && scalar_params.iter().any(|t| p.path.is_ident(t)) =>
                        {
                            Form::Scalar {
                                kind: None,
                                optional: false,
                            }
                        }
                        ty => classify(ty),
                    },
                }
            })
            .collect();
        Some(Self {
            original: input,
            attrs,
            fields,
        })
    }
}

/// The type parameters bounded by `KeyField` or `DecodeField` (in the parameter list or the where
/// clause): fields of such a type are scalars, not nested keys.
fn scalar_params(generics: &syn::Generics) -> Vec<syn::Ident> {
    let is_field_bound = |b: &syn::TypeParamBound| {
        matches!(b, syn::TypeParamBound::Trait(t)
            if t.path.segments.last().is_some_and(|s| s.ident == "KeyField" || s.ident == "DecodeField"))
    };
    let mut out: Vec<syn::Ident> = generics
        .type_params()
        .filter(|p| p.bounds.iter().any(is_field_bound))
        .map(|p| p.ident.clone())
        .collect();
    for pred in generics.where_clause.iter().flat_map(|w| &w.predicates) {
        if let syn::WherePredicate::Type(t) = pred
            && let Type::Path(p) = &t.bounded_ty
            && let Some(ident) = p.path.get_ident()
            && t.bounds.iter().any(is_field_bound)
            && generics.type_params().any(|tp| tp.ident == *ident)
        {
            out.push(ident.clone());
        }
    }
    out
}

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        _ => None,
    }
}

/// The single type argument of `Name<T>`.
fn single_arg(seg: &syn::PathSegment) -> Option<&Type> {
    let PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    let mut types = args.args.iter().filter_map(|a| match a {
        GenericArgument::Type(t) => Some(t),
        _ => None,
    });
    match (types.next(), types.next()) {
        (Some(t), None) => Some(t),
        _ => None,
    }
}

fn is_u8(ty: &Type) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == "u8" && s.arguments.is_empty())
}

/// The scalar kind of a type named by syntax, if it is one.
fn scalar_kind(ty: &Type) -> Option<ScalarKind> {
    match ty {
        Type::Paren(p) => scalar_kind(&p.elem),
        Type::Group(g) => scalar_kind(&g.elem),
        Type::Reference(r) => match &*r.elem {
            Type::Slice(s) if is_u8(&s.elem) => Some(ScalarKind::Bytes),
            // `&str`, `&core::primitive::str`: the last segment, as for the other scalars.
            ty @ Type::Path(_)
                if last_segment(ty).is_some_and(|s| s.ident == "str" && s.arguments.is_empty()) =>
            {
                Some(ScalarKind::Str)
            }
            other => scalar_kind(other),
        },
        _ => {
            let seg = last_segment(ty)?;
            let name = seg.ident.to_string();
            match name.as_str() {
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => Some(ScalarKind::Uint),
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => Some(ScalarKind::Int),
                "String" => Some(ScalarKind::Str),
                "bool" => Some(ScalarKind::Bool),
                "char" => Some(ScalarKind::Char),
                "f32" | "f64" => Some(ScalarKind::Float),
                "Vec" if single_arg(seg).is_some_and(is_u8) => Some(ScalarKind::Bytes),
                _ => None,
            }
        }
    }
}

/// Decides a field's form from its type's syntax.
pub(crate) fn classify(ty: &Type) -> Form {
    if let Some(kind) = scalar_kind(ty) {
        return Form::Scalar {
            kind: Some(kind),
            optional: false,
        };
    }
    match ty {
        Type::Paren(p) => classify(&p.elem),
        Type::Group(g) => classify(&g.elem),
        Type::Reference(_) => Form::Unsupported(
            "a reference field must be `&str` or `&[u8]` or a reference to another scalar; \
             a nested key is spliced in by value",
        ),
        Type::Path(_) => {
            let Some(seg) = last_segment(ty) else {
                return Form::Part;
            };
            let name = seg.ident.to_string();
            match name.as_str() {
                "Option" => match single_arg(seg) {
                    Some(inner) => match classify(inner) {
                        Form::Scalar {
                            optional: false,
                            kind,
                        } => Form::Scalar {
                            kind,
                            optional: true,
                        },
                        // `Option<Option<T>>`: refused by pk-codec's rulebook when the field's
                        // spec is built (`KeyField::OPTIONAL`), as it is through a type parameter.
                        Form::Scalar { optional: true, .. } => Form::Scalar {
                            kind: None,
                            optional: true,
                        },
                        Form::Unsupported(why) => Form::Unsupported(why),
                        // Checked by the trait system: `Option<T>: KeyField`.
                        Form::Part => Form::Scalar {
                            kind: None,
                            optional: true,
                        },
                    },
                    None => Form::Part,
                },
                "Vec" => Form::Unsupported(
                    "only `Vec<u8>` is a key field (as bytes); a list has no key form",
                ),
                _ => Form::Part,
            }
        }
        Type::Tuple(_) => Form::Unsupported(
            "a tuple has no key form: use a struct that derives `PartitionKey`, which splices in",
        ),
        Type::Array(_) | Type::Slice(_) => Form::Unsupported(
            "an array has no key form: use `Vec<u8>` for bytes, or one field per element",
        ),
        _ => Form::Unsupported("this type has no key form"),
    }
}

/// Whether the type borrows (holds a reference or a lifetime), so cannot be decoded into.
///
/// Read from the type's tokens (syn's `visit` feature, a visitor over every syntax node, cost
/// every build of a derived key more than this walk): a lifetime anywhere, or a `&` outside a
/// const expression's braces (where it is an operator, not a reference).
pub(crate) fn borrows(ty: &Type) -> bool {
    fn walk(tokens: TokenStream) -> bool {
        tokens.into_iter().any(|t| match t {
            TokenTree::Punct(p) => p.as_char() == '&' || p.as_char() == '\'',
            TokenTree::Group(g) => g.delimiter() != Delimiter::Brace && walk(g.stream()),
            _ => false,
        })
    }
    walk(ty.to_token_stream())
}

/// Whether the type mentions one of the struct's type parameters (so needs a where-clause bound):
/// a path anywhere in it, const expressions included, whose first segment is one of `params`.
/// Read from the type's tokens, as [`borrows`]: an identifier that is a parameter's name and not
/// a later segment of a path (after `::`), a lifetime's name (after `'`) or a field (after `.`).
pub(crate) fn mentions_param(ty: &Type, params: &[&syn::Ident]) -> bool {
    fn walk(tokens: TokenStream, params: &[&syn::Ident]) -> bool {
        let mut after: Option<char> = None;
        for t in tokens {
            match &t {
                TokenTree::Ident(i) => {
                    if !matches!(after, Some(':' | '\'' | '.')) && params.contains(&i) {
                        return true;
                    }
                    after = None;
                }
                TokenTree::Group(g) => {
                    if walk(g.stream(), params) {
                        return true;
                    }
                    after = None;
                }
                TokenTree::Punct(p) => after = Some(p.as_char()),
                TokenTree::Literal(_) => after = None,
            }
        }
        false
    }
    walk(ty.to_token_stream(), params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(ty: &str) -> Form {
        classify(&syn::parse_str(ty).unwrap())
    }

    fn scalar(kind: ScalarKind, optional: bool) -> Form {
        Form::Scalar {
            kind: Some(kind),
            optional,
        }
    }

    #[test]
    fn scalar_types_are_known_by_syntax() {
        assert!(form("u32") == scalar(ScalarKind::Uint, false));
        assert!(form("isize") == scalar(ScalarKind::Int, false));
        assert!(form("std::string::String") == scalar(ScalarKind::Str, false));
        assert!(form("&'a str") == scalar(ScalarKind::Str, false));
        assert!(form("&[u8]") == scalar(ScalarKind::Bytes, false));
        assert!(form("Vec<u8>") == scalar(ScalarKind::Bytes, false));
        assert!(form("Option<char>") == scalar(ScalarKind::Char, true));
        assert!(form("Option<&'a str>") == scalar(ScalarKind::Str, true));
    }

    #[test]
    fn other_paths_are_nested_keys_and_options_of_them_go_to_the_trait_system() {
        assert!(form("CardKey") == Form::Part);
        assert!(form("T") == Form::Part);
        assert!(
            form("Option<T>")
                == Form::Scalar {
                    kind: None,
                    optional: true
                }
        );
    }

    #[test]
    fn types_without_a_key_form_are_unsupported() {
        for ty in ["(u32, u32)", "[u8; 4]", "Vec<u32>", "&CardKey", "fn()"] {
            assert!(matches!(form(ty), Form::Unsupported(_)), "{ty}");
        }
    }

    #[test]
    fn borrowing_and_type_parameters_are_found_anywhere_in_a_type() {
        let ty = |s: &str| -> Type { syn::parse_str(s).unwrap() };
        assert!(borrows(&ty("Option<&'a str>")));
        assert!(borrows(&ty("Inner<'a>")));
        assert!(!borrows(&ty("Option<String>")));
        let t: syn::Ident = syn::parse_str("T").unwrap();
        assert!(mentions_param(&ty("Option<T>"), &[&t]));
        assert!(mentions_param(&ty("T"), &[&t]));
        assert!(!mentions_param(&ty("Tx"), &[&t]));
        // As syn's visitor of paths found them: the first segment of any path, a qualified
        // self, a const argument's expression; not a later segment, a lifetime or a binding.
        assert!(mentions_param(&ty("<T as Trait>::Assoc"), &[&t]));
        assert!(mentions_param(&ty("Wrap<{ T::N }>"), &[&t]));
        assert!(mentions_param(&ty("Box<dyn Iterator<Item = T>>"), &[&t]));
        assert!(!mentions_param(&ty("crate::T"), &[&t]));
        assert!(!mentions_param(&ty("Wrap<'T>"), &[&t]));
        assert!(!mentions_param(&ty("Box<dyn Iterator<T2 = u8>>"), &[&t]));
        assert!(borrows(&ty("Box<dyn Fn() + 'static>")));
        assert!(borrows(&ty("Wrap<[&str; 2]>")));
        assert!(!borrows(&ty("Wrap<{ A & B }>")));
    }
}
