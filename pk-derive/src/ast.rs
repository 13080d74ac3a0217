//! A borrowed model of the derive input: each field's name, attributes and form.

use proc_macro2::{Delimiter, Ident, TokenStream, TokenTree};
use quote::ToTokens;
use syn::spanned::Spanned;

use crate::attr::{self, Container, FieldAttrs};
use crate::errors::Errors;
use crate::input::{self, Data, DeriveInput, Member, Type, split_top_level};

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
    pub(crate) fn from_input(input: &'a DeriveInput, errors: &mut Errors) -> Option<Self> {
        let fields = match &input.data {
            Data::Struct(fields) => fields,
            Data::Enum(span) => {
                errors.push(syn::Error::new(
                    *span,
                    "#[derive(PartitionKey)] needs a struct: an enum has no field-by-field key order; \
                     write a struct per variant, or an integer discriminant field",
                ));
                return None;
            }
            Data::Union(span) => {
                errors.push(syn::Error::new(
                    *span,
                    "#[derive(PartitionKey)] needs a struct, not a union",
                ));
                return None;
            }
        };
        let attrs = attr::container(input, errors);
        if fields.is_empty() {
            errors.push(syn::Error::new(
                input.ident.span(),
                "#[derive(PartitionKey)] needs a struct with at least one field",
            ));
            return None;
        }
        let scalar_params = scalar_params(&input.generics);
        let fields = fields
            .iter()
            .enumerate()
            .map(|(i, field)| {
                let (member, name, method_suffix) = match &field.ident {
                    Some(ident) => {
                        let s = ident.to_string();
                        let s = s.strip_prefix("r#").unwrap_or(&s).to_owned();
                        (Member::Named(ident.clone()), s.clone(), s)
                    }
                    None => (
                        Member::Unnamed {
                            index: i as u32,
                            span: field.ty.span(),
                        },
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
                    form: match field.ty.0.as_slice() {
                        [TokenTree::Ident(t)] if scalar_params.contains(t) => Form::Scalar {
                            kind: None,
                            optional: false,
                        },
                        tokens => classify(tokens),
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
pub(crate) fn scalar_params(generics: &input::Generics) -> Vec<Ident> {
    let has_field_bound =
        |bounds: &[TokenTree]| split_top_level(bounds, '+').into_iter().any(is_field_bound);
    let mut out: Vec<Ident> = generics
        .type_params()
        .filter(|p| has_field_bound(&tokens(p.bounds.clone())))
        .filter_map(|p| p.type_ident().cloned())
        .collect();
    for pred in &generics.where_predicates {
        let pred = tokens(pred.clone());
        let pred = skip_binder(&pred);
        let parts = split_top_level(pred, ':');
        if let [TokenTree::Ident(ident)] = parts[0]
            && parts.len() > 1
            && has_field_bound(&pred[parts[0].len() + 1..])
            && generics
                .type_params()
                .any(|tp| tp.type_ident() == Some(ident))
        {
            out.push(ident.clone());
        }
    }
    out
}

fn tokens(stream: TokenStream) -> Vec<TokenTree> {
    stream.into_iter().collect()
}

/// The tokens after a leading `for<...>`.
fn skip_binder(tokens: &[TokenTree]) -> &[TokenTree] {
    match tokens {
        [TokenTree::Ident(i), rest @ ..] if i == "for" => match input::matching_angle(rest, 0) {
            Some(close) => &rest[close + 1..],
            None => tokens,
        },
        _ => tokens,
    }
}

/// Whether a bound is the trait `KeyField` or `DecodeField` (by its path's last segment).
fn is_field_bound(bound: &[TokenTree]) -> bool {
    let mut b = bound;
    if let [TokenTree::Group(g)] = b
        && g.delimiter() == Delimiter::Parenthesis
    {
        return is_field_bound(&tokens(g.stream()));
    }
    // Modifiers: `?Trait`, `~const Trait`, `const Trait`, `async Trait`.
    loop {
        match b {
            [TokenTree::Punct(p), rest @ ..] if matches!(p.as_char(), '?' | '~') => b = rest,
            [TokenTree::Ident(i), rest @ ..] if i == "const" || i == "async" => b = rest,
            _ => break,
        }
    }
    match path(skip_binder(b)) {
        Some(segments) => segments
            .last()
            .is_some_and(|s| s.ident == "KeyField" || s.ident == "DecodeField"),
        None => false,
    }
}

/// A type's syntax, as far as the derive reads it (syn's `Type`, read from the tokens).
enum Syntax {
    /// `(T)`, or a macro's `$t` (a group without delimiters): the type inside.
    Inner(Vec<TokenTree>),
    /// `&T`, `&'a mut T`: the referenced type.
    Reference(Vec<TokenTree>),
    /// `[T]`: the element type.
    Slice(Vec<TokenTree>),
    Array,
    Tuple,
    /// A path without a qualified self: its segments.
    Path(Vec<Segment>),
    /// `<T as Trait>::X`: a path whose segments the derive does not read.
    QualifiedPath,
    Other,
}

struct Segment {
    ident: Ident,
    /// The arguments in angle brackets, each as its tokens; empty for none or `(...)` ones.
    args: Vec<Vec<TokenTree>>,
    has_args: bool,
}

fn syntax(ty: &[TokenTree]) -> Syntax {
    match ty {
        [TokenTree::Group(g)] => {
            let inner = tokens(g.stream());
            match g.delimiter() {
                Delimiter::None => Syntax::Inner(inner),
                Delimiter::Parenthesis if split_top_level(&inner, ',').len() > 1 => Syntax::Tuple,
                Delimiter::Parenthesis if inner.is_empty() => Syntax::Tuple,
                Delimiter::Parenthesis => Syntax::Inner(inner),
                Delimiter::Bracket if split_top_level(&inner, ';').len() > 1 => Syntax::Array,
                Delimiter::Bracket => Syntax::Slice(inner),
                Delimiter::Brace => Syntax::Other,
            }
        }
        [TokenTree::Punct(p), rest @ ..] if p.as_char() == '&' => {
            let mut rest = rest;
            if let [TokenTree::Punct(q), TokenTree::Ident(_), after @ ..] = rest
                && q.as_char() == '\''
            {
                rest = after;
            }
            if let [TokenTree::Ident(m), after @ ..] = rest
                && m == "mut"
            {
                rest = after;
            }
            Syntax::Reference(rest.to_vec())
        }
        [TokenTree::Punct(p), ..] if p.as_char() == '<' => Syntax::QualifiedPath,
        _ => path(ty).map_or(Syntax::Other, Syntax::Path),
    }
}

/// The segments of a path that is the whole of `tokens` (`a::b::C<T>`, `Fn(A) -> B`), or `None`
/// for anything else: a qualified path, `dyn`/`impl` traits, function pointers, macros, a path
/// followed by `+ Bound`.
fn path(tokens: &[TokenTree]) -> Option<Vec<Segment>> {
    let is =
        |i: usize, c: char| matches!(tokens.get(i), Some(TokenTree::Punct(p)) if p.as_char() == c);
    let mut i = if is(0, ':') && is(1, ':') { 2 } else { 0 };
    let mut segments = Vec::new();
    loop {
        let Some(TokenTree::Ident(ident)) = tokens.get(i) else {
            return None;
        };
        if segments.is_empty()
            && ["dyn", "impl", "fn", "unsafe", "extern", "for", "_"]
                .iter()
                .any(|k| ident == k)
        {
            return None;
        }
        i += 1;
        if is(i, ':') && is(i + 1, ':') && is(i + 2, '<') {
            i += 2;
        }
        let mut segment = Segment {
            ident: ident.clone(),
            args: Vec::new(),
            has_args: false,
        };
        if is(i, '<') {
            let close = input::matching_angle(tokens, i)?;
            segment.args = split_top_level(&tokens[i + 1..close], ',')
                .into_iter()
                .filter(|a| !a.is_empty())
                .map(<[TokenTree]>::to_vec)
                .collect();
            segment.has_args = true;
            i = close + 1;
        } else if let Some(TokenTree::Group(g)) = tokens.get(i)
            && g.delimiter() == Delimiter::Parenthesis
        {
            // `Fn(A) -> B`: the return type is the rest.
            segment.has_args = true;
            i = if is(i + 1, '-') && is(i + 2, '>') {
                tokens.len()
            } else {
                i + 1
            };
        }
        segments.push(segment);
        if is(i, ':') && is(i + 1, ':') {
            i += 2;
        } else {
            break;
        }
    }
    (i == tokens.len()).then_some(segments)
}

/// Whether a generic argument is a type (not a lifetime, a constant, or an associated item's
/// binding or bound), as syn's `GenericArgument::Type`.
fn arg_is_type(arg: &[TokenTree]) -> bool {
    let is =
        |t: Option<&TokenTree>, c: char| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == c);
    match arg {
        [] | [TokenTree::Literal(_), ..] => false,
        [TokenTree::Punct(p), ..] if p.as_char() == '\'' => false,
        [TokenTree::Punct(p), TokenTree::Literal(_), ..] if p.as_char() == '-' => false,
        [TokenTree::Group(g), ..] if g.delimiter() == Delimiter::Brace => false,
        [TokenTree::Ident(i), ..] if i == "true" || i == "false" => false,
        [TokenTree::Ident(_), rest @ ..] => {
            let mut at = 0;
            if is(rest.first(), '<') {
                match input::matching_angle(rest, 0) {
                    Some(close) => at = close + 1,
                    None => return true,
                }
            }
            let binding =
                is(rest.get(at), '=') || (is(rest.get(at), ':') && !is(rest.get(at + 1), ':'));
            !binding
        }
        _ => true,
    }
}

fn last_segment(ty: &[TokenTree]) -> Option<Segment> {
    match syntax(ty) {
        Syntax::Path(mut segments) => segments.pop(),
        _ => None,
    }
}

/// The single type argument of `Name<T>`.
fn single_arg(seg: &Segment) -> Option<&[TokenTree]> {
    let mut types = seg.args.iter().filter(|a| arg_is_type(a));
    match (types.next(), types.next()) {
        (Some(t), None) => Some(t),
        _ => None,
    }
}

fn is_u8(ty: &[TokenTree]) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == "u8" && !s.has_args)
}

/// The scalar kind of a type named by syntax, if it is one.
fn scalar_kind(ty: &[TokenTree]) -> Option<ScalarKind> {
    match syntax(ty) {
        Syntax::Inner(inner) => scalar_kind(&inner),
        Syntax::Reference(elem) => match syntax(&elem) {
            Syntax::Slice(s) if is_u8(&s) => Some(ScalarKind::Bytes),
            // `&str`, `&core::primitive::str`: the last segment, as for the other scalars.
            Syntax::Path(segments)
                if segments
                    .last()
                    .is_some_and(|s| s.ident == "str" && !s.has_args) =>
            {
                Some(ScalarKind::Str)
            }
            _ => scalar_kind(&elem),
        },
        Syntax::Path(mut segments) => {
            let seg = segments.pop()?;
            let name = seg.ident.to_string();
            match name.as_str() {
                "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => Some(ScalarKind::Uint),
                "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => Some(ScalarKind::Int),
                "String" => Some(ScalarKind::Str),
                "bool" => Some(ScalarKind::Bool),
                "char" => Some(ScalarKind::Char),
                "f32" | "f64" => Some(ScalarKind::Float),
                "Vec" if single_arg(&seg).is_some_and(is_u8) => Some(ScalarKind::Bytes),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Decides a field's form from its type's syntax.
pub(crate) fn classify(ty: &[TokenTree]) -> Form {
    if let Some(kind) = scalar_kind(ty) {
        return Form::Scalar {
            kind: Some(kind),
            optional: false,
        };
    }
    match syntax(ty) {
        Syntax::Inner(inner) => classify(&inner),
        Syntax::Reference(_) => Form::Unsupported(
            "a reference field must be `&str` or `&[u8]` or a reference to another scalar; \
             a nested key is spliced in by value",
        ),
        Syntax::Path(mut segments) => {
            let Some(seg) = segments.pop() else {
                return Form::Part;
            };
            let name = seg.ident.to_string();
            match name.as_str() {
                "Option" => match single_arg(&seg) {
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
        Syntax::QualifiedPath => Form::Part,
        Syntax::Tuple => Form::Unsupported(
            "a tuple has no key form: use a struct that derives `PartitionKey`, which splices in",
        ),
        Syntax::Array | Syntax::Slice(_) => Form::Unsupported(
            "an array has no key form: use `Vec<u8>` for bytes, or one field per element",
        ),
        Syntax::Other => Form::Unsupported("this type has no key form"),
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
pub(crate) fn mentions_param(ty: &Type, params: &[&Ident]) -> bool {
    fn walk(tokens: TokenStream, params: &[&Ident]) -> bool {
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
        classify(&tokens(ty.parse().unwrap()))
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
        let ty = |s: &str| Type(tokens(s.parse().unwrap()));
        assert!(borrows(&ty("Option<&'a str>")));
        assert!(borrows(&ty("Inner<'a>")));
        assert!(!borrows(&ty("Option<String>")));
        let t = Ident::new("T", proc_macro2::Span::call_site());
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
