//! The derive reads its input from tokens (`input.rs`, `meta.rs`, `ast.rs`) where it used syn's
//! syntax tree. These properties hold it to syn (with its `full` feature, a dev-dependency only)
//! over generated structs: the same fields, types, generics and where clauses, the same form of
//! every field type, the same items and errors from `#[pk(...)]` attributes.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use proptest::prelude::*;
use quote::ToTokens;

use crate::ast::{self, Form, ScalarKind};
use crate::input;

/// The form of a type as pk-derive decided it with syn's `Type` (its code before `input.rs`).
mod oracle {
    use super::*;
    use syn::{GenericArgument, PathArguments, Type};

    fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
        match ty {
            Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
            _ => None,
        }
    }

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

    fn scalar_kind(ty: &Type) -> Option<ScalarKind> {
        match ty {
            Type::Paren(p) => scalar_kind(&p.elem),
            Type::Group(g) => scalar_kind(&g.elem),
            Type::Reference(r) => match &*r.elem {
                Type::Slice(s) if is_u8(&s.elem) => Some(ScalarKind::Bytes),
                ty @ Type::Path(_)
                    if last_segment(ty)
                        .is_some_and(|s| s.ident == "str" && s.arguments.is_empty()) =>
                {
                    Some(ScalarKind::Str)
                }
                other => scalar_kind(other),
            },
            _ => {
                let seg = last_segment(ty)?;
                match seg.ident.to_string().as_str() {
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

    pub(super) fn classify(ty: &Type) -> Form {
        if let Some(kind) = scalar_kind(ty) {
            return Form::Scalar {
                kind: Some(kind),
                optional: false,
            };
        }
        match ty {
            Type::Paren(p) => classify(&p.elem),
            Type::Group(g) => classify(&g.elem),
            Type::Reference(_) => Form::Unsupported("reference"),
            Type::Path(_) => {
                let Some(seg) = last_segment(ty) else {
                    return Form::Part;
                };
                match seg.ident.to_string().as_str() {
                    "Option" => match single_arg(seg) {
                        Some(inner) => match classify(inner) {
                            Form::Scalar {
                                optional: false,
                                kind,
                            } => Form::Scalar {
                                kind,
                                optional: true,
                            },
                            Form::Scalar { optional: true, .. } | Form::Part => Form::Scalar {
                                kind: None,
                                optional: true,
                            },
                            Form::Unsupported(why) => Form::Unsupported(why),
                        },
                        None => Form::Part,
                    },
                    "Vec" => Form::Unsupported("vec"),
                    _ => Form::Part,
                }
            }
            Type::Tuple(_) => Form::Unsupported("tuple"),
            Type::Array(_) | Type::Slice(_) => Form::Unsupported("array"),
            _ => Form::Unsupported("other"),
        }
    }

    /// The type parameters bounded by `KeyField` or `DecodeField`.
    pub(super) fn scalar_params(generics: &syn::Generics) -> Vec<String> {
        let is_field_bound = |b: &syn::TypeParamBound| {
            matches!(b, syn::TypeParamBound::Trait(t)
                if t.path.segments.last().is_some_and(|s| s.ident == "KeyField" || s.ident == "DecodeField"))
        };
        let mut out: Vec<String> = generics
            .type_params()
            .filter(|p| p.bounds.iter().any(is_field_bound))
            .map(|p| p.ident.to_string())
            .collect();
        for pred in generics.where_clause.iter().flat_map(|w| &w.predicates) {
            if let syn::WherePredicate::Type(t) = pred
                && let Type::Path(p) = &t.bounded_ty
                && let Some(ident) = p.path.get_ident()
                && t.bounds.iter().any(is_field_bound)
                && generics.type_params().any(|tp| tp.ident == *ident)
            {
                out.push(ident.to_string());
            }
        }
        out
    }
}

/// The reason of an unsupported form is this crate's text; the kind of form is what must agree.
fn same_form(a: Form, b: Form) -> bool {
    match (a, b) {
        (Form::Unsupported(_), Form::Unsupported(_)) => true,
        (a, b) => a == b,
    }
}

/// Tokens of `text`, or of a group without delimiters around them (as a macro's `$t:ty` gives).
fn tokens(text: &str, invisible: bool) -> TokenStream {
    let stream: TokenStream = text.parse().expect("generated text lexes");
    if invisible {
        TokenTree::Group(Group::new(Delimiter::None, stream)).into()
    } else {
        stream
    }
}

/// Rust types: scalars, paths, references, options, slices, arrays, tuples, qualified paths,
/// trait objects, function pointers, macros and parentheses, nested.
fn ty() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        prop::sample::select(vec![
            "u8",
            "u16",
            "u32",
            "u64",
            "u128",
            "usize",
            "i8",
            "i64",
            "isize",
            "String",
            "bool",
            "char",
            "f32",
            "f64",
            "str",
            "T",
            "U",
            "CardKey",
            "Self",
            "crate::Inner",
            "std::string::String",
            "core::primitive::u8",
            "::std::primitive::str",
            "r#u8",
            "Vec::<u8>",
            "_",
            "!",
            "fn()",
            "dyn Send",
            "impl Send",
            "m!(u8)",
            "Tx",
        ])
        .prop_map(str::to_owned),
    ];
    leaf.prop_recursive(4, 24, 2, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| format!("Option<{t}>")),
            inner
                .clone()
                .prop_map(|t| format!("std::option::Option<{t}>")),
            inner.clone().prop_map(|t| format!("Vec<{t}>")),
            inner.clone().prop_map(|t| format!("Box<{t}>")),
            inner.clone().prop_map(|t| format!("&{t}")),
            inner.clone().prop_map(|t| format!("&'a {t}")),
            inner.clone().prop_map(|t| format!("&'a mut {t}")),
            inner.clone().prop_map(|t| format!("&mut {t}")),
            inner.clone().prop_map(|t| format!("[{t}]")),
            inner.clone().prop_map(|t| format!("[{t}; 4]")),
            inner.clone().prop_map(|t| format!("({t})")),
            inner.clone().prop_map(|t| format!("({t},)")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a}, {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("Map<{a}, {b}>")),
            inner.clone().prop_map(|t| format!("<{t} as Trait>::Assoc")),
            inner.clone().prop_map(|t| format!("Wrap<'a, {t}>")),
            inner.clone().prop_map(|t| format!("Wrap<{t}, 3>")),
            inner
                .clone()
                .prop_map(|t| format!("Wrap<{t}, {{ N + 1 }}>")),
            inner.clone().prop_map(|t| format!("Wrap<{t}, -1>")),
            inner.clone().prop_map(|t| format!("Wrap<{t}, true>")),
            inner.clone().prop_map(|t| format!("Vec<Item = {t}>")),
            inner
                .clone()
                .prop_map(|t| format!("Option<Item: Into<{t}>>")),
            inner
                .clone()
                .prop_map(|t| format!("Option<Item<'a> = {t}>")),
            inner
                .clone()
                .prop_map(|t| format!("Box<dyn Fn({t}) -> u8>")),
            inner
                .clone()
                .prop_map(|t| format!("Box<dyn Send + Fn({t}) -> {t}>")),
            inner.clone().prop_map(|t| format!("fn({t}) -> {t}")),
            inner.clone().prop_map(|t| format!("*const {t}")),
            inner.clone().prop_map(|t| format!("a::Option<{t}>")),
            inner.clone().prop_map(|t| format!("Option::<{t}>")),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Every type gets the form syn's tree gave it, bare or in a group without delimiters.
    #[test]
    fn a_field_type_gets_the_form_syn_gave_it(text in ty(), invisible in any::<bool>()) {
        let stream = tokens(&text, invisible);
        let parsed = syn::parse2::<syn::Type>(stream.clone()).unwrap_or_else(|e| panic!("{text}: {e}"));
        let expected = oracle::classify(&parsed);
        let got = ast::classify(&stream.into_iter().collect::<Vec<_>>());
        prop_assert!(same_form(got, expected), "{text}: {:?} != {:?}", show(got), show(expected));
    }

    /// Whole structs: the name, visibility, generics (as the impl, the type and the where clause
    /// print), the parameters bounded by `KeyField`/`DecodeField`, each field's name, type and
    /// attributes.
    #[test]
    fn a_struct_reads_as_syn_reads_it(item in item()) {
        let stream: TokenStream = item.parse().expect("generated item lexes");
        let theirs: syn::DeriveInput = syn::parse2(stream.clone()).unwrap_or_else(|e| panic!("{item}: {e}"));
        let ours = input::parse(stream).expect("the derive reads the item");
        prop_assert_eq!(ours.ident.to_string(), theirs.ident.to_string());
        prop_assert_eq!(flat(&ours.vis), flat(&theirs.vis));
        let (ig, tg, wc) = theirs.generics.split_for_impl();
        let (oig, otg, owc) = ours.generics.split_for_impl();
        prop_assert_eq!(flat(oig), flat(ig), "{}", item);
        prop_assert_eq!(flat(otg), flat(tg), "{}", item);
        prop_assert_eq!(flat(owc), flat(wc), "{}", item);
        let mut ours_scalar: Vec<String> = ast::scalar_params(&ours.generics).iter().map(ToString::to_string).collect();
        let mut theirs_scalar = oracle::scalar_params(&theirs.generics);
        ours_scalar.sort();
        theirs_scalar.sort();
        prop_assert_eq!(ours_scalar, theirs_scalar, "{}", item);
        let outer_pk = theirs.attrs.iter().filter(|a| a.path().is_ident("pk")).count();
        prop_assert_eq!(ours.attrs.iter().filter(|a| a.is("pk")).count(), outer_pk);
        let (input::Data::Struct(fields), syn::Data::Struct(data)) = (&ours.data, &theirs.data) else {
            return Err(TestCaseError::fail("a struct"));
        };
        prop_assert_eq!(fields.len(), data.fields.len());
        for (ours, theirs) in fields.iter().zip(&data.fields) {
            prop_assert_eq!(ours.ident.as_ref().map(ToString::to_string), theirs.ident.as_ref().map(ToString::to_string));
            prop_assert_eq!(flat(&ours.ty), flat(&theirs.ty));
            let pk = theirs.attrs.iter().filter(|a| a.path().is_ident("pk")).count();
            prop_assert_eq!(ours.attrs.iter().filter(|a| a.is("pk")).count(), pk);
        }
    }

    /// A `#[pk(...)]` attribute gives the items syn's `parse_nested_meta` gave, or its error.
    #[test]
    fn an_attribute_gives_syns_items_or_error(args in meta_args()) {
        let text = format!("#[pk{args}] struct S {{ a: u8 }}");
        let stream: TokenStream = text.parse().expect("lexes");
        let theirs: syn::DeriveInput = syn::parse2(stream.clone()).expect("syn parses the item");
        let ours = input::parse(stream).expect("the derive reads the item");
        let mut seen_theirs = Vec::new();
        let r_theirs = theirs.attrs[0].parse_nested_meta(|m| walk_syn(m, &mut seen_theirs, 0));
        let mut seen_ours = Vec::new();
        let r_ours = ours.attrs[0].parse_nested_meta(|m| walk_ours(m, &mut seen_ours, 0));
        prop_assert_eq!(seen_ours, seen_theirs, "{}", text);
        prop_assert_eq!(r_ours.map_err(|e| e.to_string()), r_theirs.map_err(|e| e.to_string()), "{}", text);
    }
}

/// Tokens as text without spaces (`>>` and `> >` print apart).
fn flat(tokens: impl ToTokens) -> String {
    tokens.to_token_stream().to_string().replace(' ', "")
}

fn show(form: Form) -> String {
    match form {
        Form::Scalar { kind, optional } => {
            let kind = kind.map(|k| k as u8);
            format!("Scalar({kind:?}, optional {optional})")
        }
        Form::Part => "Part".into(),
        Form::Unsupported(_) => "Unsupported".into(),
    }
}

/// A walker that records each item: its path, and `= value` (a literal or an identifier), `(...)`
/// read as items, `(...)` read as members, or nothing; one text for syn's `ParseNestedMeta` and
/// the derive's `Meta`.
macro_rules! walker {
    ($name:ident, $meta:ty, $member:ty, $path:expr) => {
        fn $name(meta: $meta, seen: &mut Vec<String>, depth: usize) -> syn::Result<()> {
            let path: fn(&$meta) -> String = $path;
            seen.push(format!("{depth} {}", path(&meta)));
            if meta.path.is_ident("fields") {
                let content;
                syn::parenthesized!(content in meta.input);
                let members =
                    syn::punctuated::Punctuated::<$member, syn::Token![,]>::parse_terminated(&content)?;
                for m in members {
                    seen.push(format!("member {}", m.to_token_stream()));
                }
                Ok(())
            } else if meta.input.peek(syn::token::Paren) {
                meta.parse_nested_meta(|m| $name(m, seen, depth + 1))
            } else if meta.input.peek(syn::Token![=]) {
                let value = meta.value()?;
                let lit: TokenTree = value.parse()?;
                seen.push(format!("= {lit}"));
                if meta.path.is_ident("bad") {
                    return Err(meta.error("bad item"));
                }
                Ok(())
            } else {
                Ok(())
            }
        }
    };
}

walker!(walk_syn, syn::meta::ParseNestedMeta<'_>, syn::Member, |m| {
    let path: Vec<String> = m
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    path.join("::")
});
walker!(walk_ours, crate::meta::Meta<'_>, input::Member, |m| m
    .path
    .name());

/// An attribute's delimited arguments: items well formed and not (literals where a name goes,
/// missing commas, `::` paths, keywords, members with suffixes), or none, or `= value`.
fn meta_args() -> impl Strategy<Value = String> {
    let item = prop::sample::select(vec![
        "width = 6",
        "desc",
        "hash(md5, len = 4)",
        "fields(a, 0, r#b)",
        "fields(1u8)",
        "fields()",
        "fields(a b)",
        "fields(type)",
        "a::b",
        "::c",
        "type",
        "r#type = 1",
        "bad = 'x'",
        "\"lit\"",
        "1",
        "x = ",
        "x(y = (1))",
        "p(q(r))",
        "= 3",
        ",",
        "x y",
        "x = a b",
        "fields(a,)",
    ]);
    let items = prop::collection::vec(item, 0..5);
    (items, any::<bool>(), 0..4usize).prop_map(|(items, trailing, delimiter)| {
        let mut inner = items.join(", ");
        if trailing && !inner.is_empty() {
            inner.push(',');
        }
        match delimiter {
            0 => format!("({inner})"),
            1 => format!("[{inner}]"),
            2 => format!(" = {inner:?}"),
            _ => String::new(),
        }
    })
}

/// A struct: attributes, visibility, generics (lifetimes, bounded types with defaults, constants,
/// attributes on parameters), where clauses, named, tuple or unit fields with their own
/// attributes and visibility.
fn item() -> impl Strategy<Value = String> {
    let vis = prop::sample::select(vec![
        "",
        "pub ",
        "pub(crate) ",
        "pub(super) ",
        "pub(in crate::m) ",
    ]);
    let param = prop::sample::select(vec![
        "'a",
        "'b: 'a",
        "T",
        "T: KeyField",
        "T: ::pk_codec::KeyField + Clone",
        "T: ?Sized",
        "T: Into<u8> = u8",
        "T: for<'x> Fn(&'x u8) -> u8",
        "T: (DecodeField)",
        "T: KeyField<X = u8>",
        "T: Iterator<Item = u8> + KeyField",
        "const N: usize",
        "const N: usize = 3",
        "#[cfg(all())] T: KeyField",
        "U: pk_codec::DecodeField",
        "U = Vec<u8>",
    ]);
    let pred = prop::sample::select(vec![
        "T: KeyField",
        "for<'x> T: DecodeField",
        "Vec<T>: Clone",
        "'a: 'b",
        "T: (KeyField)",
        "U: Clone + pk_codec::KeyField",
        "T::Assoc: KeyField",
        "<T as X>::Y: KeyField",
        "V: KeyField",
    ]);
    let field_attr = prop::sample::select(vec![
        "",
        "#[pk(width = 6)] ",
        "/// doc\n",
        "#[serde(skip)] #[pk(desc)] ",
    ]);
    let field = (field_attr, vis.clone(), ty());
    (
        prop::sample::select(vec![
            "",
            "/// doc\n",
            "#[pk(delimiter = ',')] ",
            "#[pk::x] #[pk(form = binary)] ",
        ]),
        vis,
        prop::collection::vec(param, 0..4),
        prop::collection::vec(pred, 0..3),
        prop::collection::vec(field, 0..4),
        0..3usize,
    )
        .prop_filter_map(
            "lifetimes first, names once",
            |(attrs, vis, params, preds, fields, shape)| {
                // Rust wants lifetimes first and each name once; keep what is valid.
                let mut names = Vec::new();
                let mut ordered: Vec<&str> = params
                    .iter()
                    .filter(|p| p.starts_with('\''))
                    .copied()
                    .collect();
                ordered.extend(params.iter().filter(|p| !p.starts_with('\'')));
                for p in &ordered {
                    let name = p
                        .trim_start_matches("#[cfg(all())] ")
                        .trim_start_matches("const ");
                    let name: String = name
                        .chars()
                        .take_while(|c| *c == '\'' || c.is_alphanumeric())
                        .collect();
                    if names.contains(&name) {
                        return None;
                    }
                    names.push(name);
                }
                let generics = if ordered.is_empty() {
                    String::new()
                } else {
                    format!("<{}>", ordered.join(", "))
                };
                let where_clause = if preds.is_empty() {
                    String::new()
                } else {
                    format!(" where {}", preds.join(", "))
                };
                Some(match shape {
                    0 => {
                        let fields: Vec<String> = fields
                            .iter()
                            .enumerate()
                            .map(|(i, (a, v, t))| format!("{a}{v}f{i}: {t}"))
                            .collect();
                        format!(
                            "{attrs}{vis}struct S{generics}{where_clause} {{ {} }}",
                            fields.join(", ")
                        )
                    }
                    1 => {
                        let fields: Vec<String> = fields
                            .iter()
                            .map(|(a, v, t)| format!("{a}{v}{t}"))
                            .collect();
                        format!(
                            "{attrs}{vis}struct S{generics}({}){where_clause};",
                            fields.join(", ")
                        )
                    }
                    _ => format!("{attrs}{vis}struct S{generics}{where_clause};"),
                })
            },
        )
}

/// A tuple struct's field whose type is parenthesized right after `pub` is the type, not a
/// visibility; `pub(crate)` before it is.
#[test]
fn a_parenthesized_type_after_pub_is_the_fields_type() {
    for text in [
        "struct S(pub (u8, u8));",
        "struct S(pub (crate::A));",
        "struct S(pub(crate) (u8));",
    ] {
        let stream: TokenStream = text.parse().unwrap();
        let theirs: syn::DeriveInput = syn::parse2(stream.clone()).unwrap();
        let ours = input::parse(stream).unwrap();
        let (input::Data::Struct(fields), syn::Data::Struct(data)) = (&ours.data, &theirs.data)
        else {
            panic!("a struct");
        };
        let field = data.fields.iter().next().unwrap();
        assert_eq!(flat(&fields[0].ty), flat(&field.ty), "{text}");
    }
}

/// What a `macro_rules!` macro substitutes arrives in groups without delimiters (`$vis:vis`,
/// `$t:ty`, `$m:meta`): the reader sees through them where syn does.
#[test]
fn a_macros_substituted_pieces_read_as_syns() {
    let none = |text: &str| -> TokenTree {
        TokenTree::Group(Group::new(Delimiter::None, text.parse().unwrap()))
    };
    let mut attr = TokenStream::new();
    attr.extend([none("pk(width = 6, desc)")]);
    let mut item: TokenStream = "#".parse().unwrap();
    item.extend([TokenTree::Group(Group::new(Delimiter::Bracket, attr))]);
    item.extend([none("pub(crate)")]);
    item.extend("struct S".parse::<TokenStream>().unwrap());
    let mut body: TokenStream = TokenStream::new();
    body.extend([none("pub")]);
    body.extend("a:".parse::<TokenStream>().unwrap());
    body.extend([none("Option<u8>")]);
    body.extend(",".parse::<TokenStream>().unwrap());
    body.extend([none("")]);
    body.extend("b: String".parse::<TokenStream>().unwrap());
    item.extend([TokenTree::Group(Group::new(Delimiter::Brace, body))]);

    let theirs: syn::DeriveInput = syn::parse2(item.clone()).unwrap();
    let ours = input::parse(item).unwrap();
    let (input::Data::Struct(fields), syn::Data::Struct(data)) = (&ours.data, &theirs.data) else {
        panic!("a struct");
    };
    assert_eq!(fields.len(), data.fields.len());
    for (ours, theirs) in fields.iter().zip(&data.fields) {
        assert_eq!(
            ours.ident.as_ref().map(ToString::to_string),
            theirs.ident.as_ref().map(ToString::to_string)
        );
        let expected = oracle::classify(&theirs.ty);
        let got = ast::classify(&ours.ty.0);
        assert!(
            same_form(got, expected),
            "{}: {}",
            flat(&theirs.ty),
            show(got)
        );
    }
    assert!(theirs.attrs[0].path().is_ident("pk"));
    assert!(ours.attrs[0].is("pk"));
    let mut seen_theirs = Vec::new();
    theirs.attrs[0]
        .parse_nested_meta(|m| walk_syn(m, &mut seen_theirs, 0))
        .unwrap();
    let mut seen_ours = Vec::new();
    ours.attrs[0]
        .parse_nested_meta(|m| walk_ours(m, &mut seen_ours, 0))
        .unwrap();
    assert_eq!(seen_ours, seen_theirs);
    assert_eq!(seen_ours, ["0 width", "= 6", "0 desc"]);
}
