//! Templates of the generated code: `quote!`'s syntax (`#name`, `#(...)*`, `#(...),*`) in a string,
//! read into tokens when the derive runs.
//!
//! `quote!` expands each token of a template into a call in pk-derive's own code, and pk-derive is
//! on the critical path of every fresh build of a derived key: its ~4,700 template tokens were
//! most of pk-derive's code to type-check, borrow-check and compile. A template here is one string
//! constant. The tokens read from it have `Span::call_site()`, as `quote!`'s do; a value keeps its
//! own spans. Spanned templates (`quote_spanned!`) stay `quote_spanned!`.

use proc_macro2::{Delimiter, Group, Punct, Spacing, TokenStream, TokenTree};
use quote::ToTokens;

/// A template's value: one, or a list that `#(...)` repeats over.
pub(crate) enum Value<'a> {
    One(&'a dyn ToTokens),
    Many(Vec<TokenStream>),
}

impl Value<'_> {
    pub(crate) fn many<T: ToTokens>(items: impl IntoIterator<Item = T>) -> Self {
        Value::Many(items.into_iter().map(|t| t.to_token_stream()).collect())
    }
}

/// `tpl!("template", one, two; list)`: the template with `#one`, `#two` and the repetitions over
/// `list`, named as the variables are.
macro_rules! tpl {
    ($template:literal $(, $name:ident)* $(; $($many:ident),*)? $(,)?) => {
        $crate::tpl::render($template, &[
            $( (stringify!($name), $crate::tpl::Value::One(&$name)), )*
            $($( (stringify!($many), $crate::tpl::Value::many($many.clone())), )*)?
        ])
    };
}
pub(crate) use tpl;

/// The template's tokens with the values in place.
///
/// # Panics
///
/// When a template does not lex or names a value it was not given: a defect of pk-derive's own
/// templates (every one is rendered by the derive tests), never of the user's input.
pub(crate) fn render(template: &str, values: &[(&str, Value<'_>)]) -> TokenStream {
    let tokens: TokenStream = template
        .parse()
        .unwrap_or_else(|e| panic!("pk-derive template does not lex: {e}"));
    let mut out = TokenStream::new();
    expand(tokens, values, None, &mut out);
    out
}

fn value<'v>(values: &'v [(&str, Value<'v>)], name: &str) -> &'v Value<'v> {
    values
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v)
        .unwrap_or_else(|| panic!("pk-derive template names `#{name}`, which it was not given"))
}

/// The length of the lists a repetition names (all of one length, as `quote!` requires).
fn repetitions(tokens: &TokenStream, values: &[(&str, Value<'_>)]) -> Option<usize> {
    let mut len = None;
    let mut after_hash = false;
    for t in tokens.clone() {
        match &t {
            TokenTree::Ident(i) if after_hash => {
                if let Value::Many(list) = value(values, &i.to_string()) {
                    assert!(
                        len.is_none_or(|n| n == list.len()),
                        "repeated lists differ in length"
                    );
                    len = Some(list.len());
                }
            }
            TokenTree::Group(g) => {
                if let Some(n) = repetitions(&g.stream(), values) {
                    len = Some(n);
                }
            }
            _ => {}
        }
        after_hash = matches!(&t, TokenTree::Punct(p) if p.as_char() == '#');
    }
    len
}

fn expand(
    tokens: TokenStream,
    values: &[(&str, Value<'_>)],
    index: Option<usize>,
    out: &mut TokenStream,
) {
    let mut iter = tokens.into_iter().peekable();
    while let Some(token) = iter.next() {
        match token {
            TokenTree::Punct(p) if p.as_char() == '#' => match iter.peek() {
                Some(TokenTree::Ident(name)) => {
                    match value(values, &name.to_string()) {
                        Value::One(v) => v.to_tokens(out),
                        Value::Many(list) => {
                            let i = index.expect("a list outside a repetition");
                            out.extend(list[i].clone());
                        }
                    }
                    iter.next();
                }
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    let inner = g.stream();
                    iter.next();
                    let separator = match iter.next() {
                        Some(TokenTree::Punct(star)) if star.as_char() == '*' => None,
                        Some(TokenTree::Punct(sep)) => {
                            assert!(
                                matches!(iter.next(), Some(TokenTree::Punct(star)) if star.as_char() == '*'),
                                "a repetition ends with `*`"
                            );
                            Some(sep)
                        }
                        _ => panic!("a repetition ends with `*`"),
                    };
                    let n = repetitions(&inner, values).expect("a repetition names a list");
                    for i in 0..n {
                        if i > 0
                            && let Some(sep) = &separator
                        {
                            // Lexed joint to the `*`; alone between the items, as `quote!` puts it.
                            let mut alone = Punct::new(sep.as_char(), Spacing::Alone);
                            alone.set_span(sep.span());
                            out.extend([TokenTree::Punct(alone)]);
                        }
                        expand(inner.clone(), values, Some(i), out);
                    }
                }
                _ => out.extend([TokenTree::Punct(p)]),
            },
            TokenTree::Group(g) => {
                let mut inner = TokenStream::new();
                expand(g.stream(), values, index, &mut inner);
                let mut group = Group::new(g.delimiter(), inner);
                group.set_span(g.span());
                out.extend([TokenTree::Group(group)]);
            }
            other => out.extend([other]),
        }
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::{Ident, Span};
    use quote::quote;

    /// A template gives the tokens `quote!` gives for the same text and values.
    #[test]
    fn a_template_renders_as_quote_does() {
        let krate = quote!(::pk_codec);
        let name = Ident::new("CardKey", Span::call_site());
        let fields = vec![quote!(a: u8), quote!(b: String)];
        let params = vec![
            Ident::new("x", Span::call_site()),
            Ident::new("y", Span::call_site()),
        ];
        let types = vec![quote!(u32), quote!(&str)];
        let doc = "a doc \"quoted\"";
        let n = 3usize;
        let ours = tpl!(
            r#"#[doc = #doc] impl #krate::PartitionKey for #name {
                fn f(#(#params: #types,)*) -> [u8; #n] { let _ = (#(#params),*); }
                struct S { #(#fields),* }
                const E: () = { #(#fields)* };
            }"#,
            doc, krate, name, n; params, types, fields
        );
        let theirs = quote! {
            #[doc = #doc] impl #krate::PartitionKey for #name {
                fn f(#(#params: #types,)*) -> [u8; #n] { let _ = (#(#params),*); }
                struct S { #(#fields),* }
                const E: () = { #(#fields)* };
            }
        };
        assert_eq!(ours.to_string(), theirs.to_string());
    }

    /// Every template of `expand.rs` lexes and is given exactly the values it names, so none can
    /// fail at expansion, whether or not a derive test reaches it.
    #[test]
    fn every_template_of_the_derive_is_given_what_it_names() {
        let source = include_str!("expand.rs");
        let mut seen = 0;
        for (at, _) in source.match_indices("tpl!(") {
            let rest = source[at + 5..].trim_start();
            let Some(rest) = rest.strip_prefix('r') else {
                continue; // the macro's own definition, not a use
            };
            let hashes = rest.len() - rest.trim_start_matches('#').len();
            let close = format!("\"{}", "#".repeat(hashes));
            let body_start = hashes + 1;
            let body_end = body_start + rest[body_start..].find(&close).expect("a closed template");
            let template = &rest[body_start..body_end];
            let args_text = &rest[body_end + close.len()..];
            let args_text = &args_text[..args_text.find(')').expect("closed arguments")];
            let mut given: Vec<&str> = args_text
                .split([',', ';'])
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .collect();
            given.sort_unstable();
            let mut named: Vec<&str> = Vec::new();
            for (i, _) in template.match_indices('#') {
                let name: &str = &template[i + 1..];
                let len = name
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(name.len());
                if len > 0 && !named.contains(&&name[..len]) {
                    named.push(&name[..len]);
                }
            }
            named.sort_unstable();
            assert_eq!(named, given, "template at byte {at} of expand.rs");
            assert!(
                template.parse::<proc_macro2::TokenStream>().is_ok(),
                "template at byte {at} lexes"
            );
            seen += 1;
        }
        assert!(seen > 80, "read {seen} templates");
    }

    #[test]
    fn an_empty_list_repeats_nothing() {
        let items: Vec<proc_macro2::TokenStream> = Vec::new();
        assert_eq!(
            tpl!("f(#(#items),*)"; items).to_string(),
            quote!(f()).to_string()
        );
    }
}
