//! The derive input read from its tokens: attributes, visibility, name, generics and fields.
//!
//! syn's `derive` feature (its syntax tree of structs, types, generics, paths and expressions)
//! about doubles syn's build, and syn is on the critical path of every fresh build of a derived
//! key. A derive's input is an item rustc has already parsed, so only valid syntax reaches here
//! and little of that tree is needed: a field's type stays its tokens (`Type`, read by
//! `ast::classify`), a generic parameter its name and bounds as tokens. What the derive reads of
//! its own attributes goes through syn's parsing (`meta.rs`), with syn's messages and spans.

use proc_macro2::{Delimiter, Group, Ident, Literal, Punct, Spacing, Span, TokenStream, TokenTree};
use quote::{ToTokens, TokenStreamExt};

/// The struct (or enum, or union) the derive is applied to.
pub(crate) struct DeriveInput {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) vis: TokenStream,
    pub(crate) ident: Ident,
    pub(crate) generics: Generics,
    pub(crate) data: Data,
}

pub(crate) enum Data {
    /// A struct's fields: none for a unit struct.
    Struct(Vec<Field>),
    /// An enum, with the span of its `enum` keyword.
    Enum(Span),
    /// A union, with the span of its `union` keyword.
    Union(Span),
}

/// A field of the struct: named (`ident`) or of a tuple struct.
pub(crate) struct Field {
    pub(crate) attrs: Vec<Attribute>,
    pub(crate) ident: Option<Ident>,
    pub(crate) ty: Type,
}

/// An outer attribute: its bracketed group (`[pk(...)]`).
pub(crate) struct Attribute {
    pub(crate) group: Group,
}

impl Attribute {
    /// Whether the attribute's path is the single identifier `name` (`#[pk(...)]`, not
    /// `#[pk::x]`).
    pub(crate) fn is(&self, name: &str) -> bool {
        let mut tokens = flatten_none(self.group.stream()).into_iter();
        matches!(tokens.next(), Some(TokenTree::Ident(i)) if i == name)
            && !matches!(tokens.next(), Some(TokenTree::Punct(p)) if p.as_char() == ':')
    }
}

/// A field's type, as its tokens.
#[derive(Clone)]
pub(crate) struct Type(pub(crate) Vec<TokenTree>);

impl ToTokens for Type {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        tokens.extend(self.0.iter().cloned());
    }
}

/// `self.<member>`: a field's name, or a tuple struct's field index.
#[derive(Clone)]
pub(crate) enum Member {
    Named(Ident),
    Unnamed { index: u32, span: Span },
}

impl Member {
    pub(crate) fn span(&self) -> Span {
        match self {
            Self::Named(ident) => ident.span(),
            Self::Unnamed { span, .. } => *span,
        }
    }
}

impl ToTokens for Member {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            Self::Named(ident) => ident.to_tokens(tokens),
            Self::Unnamed { index, span } => {
                let mut lit = Literal::u32_unsuffixed(*index);
                lit.set_span(*span);
                tokens.append(lit);
            }
        }
    }
}

/// The struct's generic parameters and where clause.
#[derive(Clone, Default)]
pub(crate) struct Generics {
    pub(crate) params: Vec<GenericParam>,
    /// The where clause's predicates, each as its tokens.
    pub(crate) where_predicates: Vec<TokenStream>,
}

#[derive(Clone)]
pub(crate) struct GenericParam {
    /// What the parameter is, with its name.
    pub(crate) kind: ParamKind,
    /// Its attributes (`#[cfg(...)]`), kept in impls.
    pub(crate) attrs: TokenStream,
    /// The bounds after `:` (for a constant, its type), without the `:`.
    pub(crate) bounds: TokenStream,
}

#[derive(Clone)]
pub(crate) enum ParamKind {
    /// `'a`, as its tokens.
    Lifetime(TokenStream),
    Type(Ident),
    /// A constant's name (without `const`).
    Const(Ident),
}

impl GenericParam {
    /// The parameter's name as the type's arguments write it: `'a`, `T`, `N`.
    pub(crate) fn name(&self) -> TokenStream {
        match &self.kind {
            ParamKind::Lifetime(lifetime) => lifetime.clone(),
            ParamKind::Type(ident) | ParamKind::Const(ident) => ident.to_token_stream(),
        }
    }

    /// A type parameter's name, to compare with the identifiers of field types.
    pub(crate) const fn type_ident(&self) -> Option<&Ident> {
        match &self.kind {
            ParamKind::Type(ident) => Some(ident),
            _ => None,
        }
    }

    const fn is_lifetime(&self) -> bool {
        matches!(self.kind, ParamKind::Lifetime(_))
    }
}

impl Generics {
    pub(crate) fn lifetimes(&self) -> impl Iterator<Item = &GenericParam> {
        self.params.iter().filter(|p| p.is_lifetime())
    }

    pub(crate) fn type_params(&self) -> impl Iterator<Item = &GenericParam> {
        self.params.iter().filter(|p| p.type_ident().is_some())
    }

    pub(crate) fn const_params(&self) -> impl Iterator<Item = &GenericParam> {
        self.params
            .iter()
            .filter(|p| matches!(p.kind, ParamKind::Const(_)))
    }

    /// The same generics with a lifetime parameter named `name` (no bounds) first.
    pub(crate) fn with_lifetime_first(&self, name: &str) -> Self {
        let mut out = self.clone();
        let lifetime = lifetime_tokens(name, Span::call_site());
        out.params.insert(
            0,
            GenericParam {
                kind: ParamKind::Lifetime(lifetime),
                attrs: TokenStream::new(),
                bounds: TokenStream::new(),
            },
        );
        out
    }

    /// The impl's parameters (bounds, no defaults), the type's arguments and the where clause,
    /// as syn's `Generics::split_for_impl` prints them.
    pub(crate) fn split_for_impl(&self) -> (TokenStream, TokenStream, TokenStream) {
        if self.params.is_empty() {
            return (TokenStream::new(), TokenStream::new(), self.where_clause());
        }
        // Lifetimes first, as Rust requires.
        let ordered = self
            .lifetimes()
            .chain(self.params.iter().filter(|p| !p.is_lifetime()));
        let mut impl_params = Vec::new();
        let mut type_args = Vec::new();
        for p in ordered {
            let (attrs, name, bounds) = (&p.attrs, p.name(), &p.bounds);
            impl_params.push(match p.kind {
                ParamKind::Const(_) => quote::quote!(#attrs const #name: #bounds),
                _ if bounds.is_empty() => quote::quote!(#attrs #name),
                _ => quote::quote!(#attrs #name: #bounds),
            });
            type_args.push(name);
        }
        (
            quote::quote!(<#(#impl_params),*>),
            quote::quote!(<#(#type_args),*>),
            self.where_clause(),
        )
    }

    /// The where clause as written: `where` and the predicates, or nothing.
    pub(crate) fn where_clause(&self) -> TokenStream {
        where_clause(&self.where_predicates)
    }
}

/// `where` and `preds`, or nothing when there are none.
pub(crate) fn where_clause(preds: &[TokenStream]) -> TokenStream {
    if preds.is_empty() {
        TokenStream::new()
    } else {
        quote::quote!(where #(#preds),*)
    }
}

/// `'name` as tokens.
pub(crate) fn lifetime_tokens(name: &str, span: Span) -> TokenStream {
    let mut apostrophe = Punct::new('\'', Spacing::Joint);
    apostrophe.set_span(span);
    let ident = Ident::new(name.trim_start_matches('\''), span);
    [TokenTree::Punct(apostrophe), TokenTree::Ident(ident)]
        .into_iter()
        .collect()
}

/// Reads the derive input. Only an item rustc parsed reaches a derive, so a failure here means a
/// form of item this reader does not know: an error, never a panic.
pub(crate) fn parse(input: TokenStream) -> syn::Result<DeriveInput> {
    let tokens: Vec<TokenTree> = input.into_iter().collect();
    let mut r = Reader {
        tokens: &tokens,
        at: 0,
    };
    let attrs = r.attributes();
    let vis = r.visibility();
    let keyword = r.ident().ok_or_else(|| r.error("expected `struct`"))?;
    let ident = r
        .ident()
        .ok_or_else(|| r.error("expected the item's name"))?;
    let mut generics = Generics {
        params: r.generic_params()?,
        where_predicates: Vec::new(),
    };
    let data = if keyword == "enum" {
        Data::Enum(keyword.span())
    } else if keyword == "union" {
        Data::Union(keyword.span())
    } else if keyword == "struct" {
        generics.where_predicates = r.where_clause();
        let fields = match r.next() {
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Brace => fields(g, true)?,
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                let fields = fields(g, false)?;
                generics.where_predicates = r.where_clause();
                fields
            }
            _ => Vec::new(),
        };
        Data::Struct(fields)
    } else {
        return Err(syn::Error::new(keyword.span(), "expected `struct`"));
    };
    Ok(DeriveInput {
        attrs,
        vis,
        ident,
        generics,
        data,
    })
}

/// The fields in a struct's braces (`named`: `attrs vis name: Type`) or parentheses
/// (`attrs vis Type`).
fn fields(group: &Group, named: bool) -> syn::Result<Vec<Field>> {
    let tokens: Vec<TokenTree> = group.stream().into_iter().collect();
    let mut fields = Vec::new();
    for part in split_top_level(&tokens, ',') {
        if part.is_empty() {
            continue;
        }
        let mut r = Reader {
            tokens: part,
            at: 0,
        };
        let attrs = r.attributes();
        r.visibility();
        let ident = if named {
            let ident = r
                .ident()
                .ok_or_else(|| r.error("expected a field's name"))?;
            if !r.punct(':') {
                return Err(r.error("expected `:`"));
            }
            Some(ident)
        } else {
            None
        };
        fields.push(Field {
            attrs,
            ident,
            ty: Type(r.rest().to_vec()),
        });
    }
    Ok(fields)
}

/// A cursor over a slice of tokens.
struct Reader<'t> {
    tokens: &'t [TokenTree],
    at: usize,
}

impl<'t> Reader<'t> {
    fn peek(&self) -> Option<&'t TokenTree> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<&'t TokenTree> {
        let t = self.tokens.get(self.at);
        self.at += usize::from(t.is_some());
        t
    }

    fn rest(&self) -> &'t [TokenTree] {
        &self.tokens[self.at.min(self.tokens.len())..]
    }

    fn error(&self, message: &str) -> syn::Error {
        let span = self.peek().map_or_else(Span::call_site, TokenTree::span);
        syn::Error::new(span, message)
    }

    fn ident(&mut self) -> Option<Ident> {
        match self.peek() {
            Some(TokenTree::Ident(i)) => {
                self.at += 1;
                Some(i.clone())
            }
            _ => None,
        }
    }

    fn punct(&mut self, c: char) -> bool {
        let found = matches!(self.peek(), Some(TokenTree::Punct(p)) if p.as_char() == c);
        self.at += usize::from(found);
        found
    }

    /// Outer attributes: `#` and a bracketed group each.
    fn attributes(&mut self) -> Vec<Attribute> {
        let mut attrs = Vec::new();
        while let (Some(TokenTree::Punct(p)), Some(TokenTree::Group(g))) =
            (self.peek(), self.tokens.get(self.at + 1))
        {
            if p.as_char() != '#' || g.delimiter() != Delimiter::Bracket {
                break;
            }
            attrs.push(Attribute { group: g.clone() });
            self.at += 2;
        }
        attrs
    }

    /// `pub`, `pub(crate)`, `pub(in path)`, ... or nothing; a `$vis` of a macro (a group without
    /// delimiters) too. A parenthesized group after `pub` is a restriction only when it holds
    /// `crate`, `self` or `super` alone, or starts with `in`, as rustc and syn read it: in
    /// `struct S(pub (u8, u8))` it is the field's type.
    fn visibility(&mut self) -> TokenStream {
        let start = self.at;
        match self.peek() {
            Some(TokenTree::Ident(i)) if i == "pub" => {
                self.at += 1;
                if let Some(TokenTree::Group(g)) = self.peek()
                    && g.delimiter() == Delimiter::Parenthesis
                {
                    let inner: Vec<TokenTree> = g.stream().into_iter().collect();
                    let restricted = match inner.as_slice() {
                        [TokenTree::Ident(i)] => i == "crate" || i == "self" || i == "super",
                        [TokenTree::Ident(i), ..] => i == "in",
                        _ => false,
                    };
                    self.at += usize::from(restricted);
                }
            }
            Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::None => {
                let first = flatten_none(g.stream()).into_iter().next();
                if first.is_none_or(|t| matches!(&t, TokenTree::Ident(i) if i == "pub")) {
                    self.at += 1;
                }
            }
            _ => {}
        }
        self.tokens[start..self.at].iter().cloned().collect()
    }

    /// `<...>` after the item's name, read into parameters.
    fn generic_params(&mut self) -> syn::Result<Vec<GenericParam>> {
        if !matches!(self.peek(), Some(TokenTree::Punct(p)) if p.as_char() == '<') {
            return Ok(Vec::new());
        }
        let open = self.at;
        let close = matching_angle(self.tokens, open)
            .ok_or_else(|| self.error("unclosed generic parameters"))?;
        self.at = close + 1;
        let inner = &self.tokens[open + 1..close];
        split_top_level(inner, ',')
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(generic_param)
            .collect()
    }

    /// `where` and its predicates up to the body (or `;`), if there is one.
    fn where_clause(&mut self) -> Vec<TokenStream> {
        if !matches!(self.peek(), Some(TokenTree::Ident(i)) if i == "where") {
            return Vec::new();
        }
        self.at += 1;
        let start = self.at;
        while let Some(t) = self.peek() {
            match t {
                TokenTree::Group(g) if g.delimiter() == Delimiter::Brace => break,
                TokenTree::Punct(p) if p.as_char() == ';' => break,
                _ => self.at += 1,
            }
        }
        split_top_level(&self.tokens[start..self.at], ',')
            .into_iter()
            .filter(|p| !p.is_empty())
            .map(|p| p.iter().cloned().collect())
            .collect()
    }
}

fn generic_param(tokens: &[TokenTree]) -> syn::Result<GenericParam> {
    let mut r = Reader { tokens, at: 0 };
    r.attributes();
    let start = r.at;
    let attrs: TokenStream = tokens[..start].iter().cloned().collect();
    let kind = match r.next() {
        Some(TokenTree::Punct(p)) if p.as_char() == '\'' => {
            r.ident()
                .ok_or_else(|| r.error("expected a lifetime's name"))?;
            ParamKind::Lifetime(tokens[start..r.at].iter().cloned().collect())
        }
        Some(TokenTree::Ident(i)) if i == "const" => {
            ParamKind::Const(r.ident().ok_or_else(|| r.error("expected a name"))?)
        }
        Some(TokenTree::Ident(i)) => ParamKind::Type(i.clone()),
        _ => return Err(r.error("expected a generic parameter")),
    };
    let bounds = if r.punct(':') {
        // Up to a default (`= ...`) at the top level.
        let rest = r.rest();
        let end = split_top_level(rest, '=').first().map_or(0, |p| p.len());
        rest[..end].iter().cloned().collect()
    } else {
        TokenStream::new()
    };
    Ok(GenericParam {
        kind,
        attrs,
        bounds,
    })
}

/// The index of the `>` closing the `<` at `open`: angle brackets counted, a `->` not one.
pub(crate) fn matching_angle(tokens: &[TokenTree], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, t) in tokens.iter().enumerate().skip(open) {
        if let TokenTree::Punct(p) = t {
            match p.as_char() {
                '<' => depth += 1,
                '>' if !is_arrow_head(tokens, i) => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(i);
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// Whether the `>` at `i` ends a `->`.
fn is_arrow_head(tokens: &[TokenTree], i: usize) -> bool {
    i > 0
        && matches!(&tokens[i - 1], TokenTree::Punct(p)
            if p.as_char() == '-' && p.spacing() == Spacing::Joint)
}

/// Splits at `sep` (`,`, `:` or `=`) outside angle brackets (groups are single tokens already).
/// A `:` of `::` is no separator, nor is an `=` of `==` or `=>` (outside braces, a type or bound
/// has no other operator with `=`: in `T: Into<u8>= u8` the `>` closes the brackets).
pub(crate) fn split_top_level(tokens: &[TokenTree], sep: char) -> Vec<&[TokenTree]> {
    let punct = |i: usize| match tokens.get(i) {
        Some(TokenTree::Punct(p)) => Some(p),
        _ => None,
    };
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, t) in tokens.iter().enumerate() {
        let TokenTree::Punct(p) = t else { continue };
        let c = p.as_char();
        if c == '<' {
            depth += 1;
        } else if c == '>' && !is_arrow_head(tokens, i) {
            depth = depth.saturating_sub(1);
        } else if c == sep && depth == 0 {
            let joint = p.spacing() == Spacing::Joint;
            let prev_joint = i
                .checked_sub(1)
                .and_then(punct)
                .filter(|q| q.spacing() == Spacing::Joint)
                .map(Punct::as_char);
            let compound = match sep {
                ':' => {
                    (joint && punct(i + 1).is_some_and(|q| q.as_char() == ':'))
                        || prev_joint == Some(':')
                }
                '=' => {
                    (joint && punct(i + 1).is_some_and(|q| matches!(q.as_char(), '=' | '>')))
                        || prev_joint == Some('=')
                }
                _ => false,
            };
            if !compound {
                parts.push(&tokens[start..i]);
                start = i + 1;
            }
        }
    }
    parts.push(&tokens[start..]);
    parts
}

/// The tokens with every group without delimiters (a macro's `$x` substituted) replaced by its
/// contents.
pub(crate) fn flatten_none(tokens: TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    for t in tokens {
        match t {
            TokenTree::Group(g) if g.delimiter() == Delimiter::None => {
                out.extend(flatten_none(g.stream()));
            }
            other => out.extend([other]),
        }
    }
    out
}
