//! A debug build of pk-codec compiles only what a caller uses (ARCHITECTURE.md, "the hot paths"):
//! every function of the codec's default build with a body and no type or const parameters is
//! `#[inline]` in builds with debug assertions, because an unoptimized build instantiates an
//! `#[inline]` function only in a crate that calls it. A function without it is compiled in every
//! debug build of pk-codec with everything it calls (before the scheme: 238,560 lines of LLVM IR
//! in pk-codec's debug build, about 300 with it), so this test reads the sources and names each
//! one that lacks it.

use std::fs;
use std::path::{Path, PathBuf};

/// The functions kept out of line in debug builds on purpose: the one call of each hash crate, so
/// that its generic and `#[inline]` code is compiled once, in pk-codec, not in every crate that
/// encodes a key (`hash.rs`), and the streaming hash of several runs (`prefix.rs`).
const OUT_OF_LINE: &[&str] = &["xxh3_64", "xxh64", "xxh32", "md5_digest", "hash_runs"];

/// The attributes that make a function instantiated only where it is called, in a debug build.
fn lazy_in_debug(attrs: &[&str]) -> bool {
    attrs.iter().any(|a| {
        let a = a.trim();
        a == "#[cfg_attr(debug_assertions, inline)]" || a == "#[inline]" || a == "#[inline(always)]"
    })
}

/// The attribute and doc-comment lines above the item at `lines[i]`.
fn attrs_above<'a>(lines: &[&'a str], i: usize) -> Vec<&'a str> {
    lines[..i]
        .iter()
        .rev()
        .take_while(|l| {
            let l = l.trim_start();
            l.starts_with("#[") || l.starts_with("//") || l.starts_with(")]")
        })
        .copied()
        .collect()
}

/// The codec's sources in the default build: not the table model, the stores or the command line
/// (features of their own), not the layout's test module.
fn default_build_sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("pk-codec/src reads") {
        let path = entry.expect("a directory entry").path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            if !matches!(name, "table" | "store" | "bin") {
                default_build_sources(&path, out);
            }
        } else if name.ends_with(".rs") && !(name == "tests.rs" && dir.ends_with("layout")) {
            out.push(path);
        }
    }
}

/// `fn name` at the start of an item (after `pub`, `pub(crate)`, `const`, `unsafe`), with the
/// text after the name.
fn fn_item(line: &str) -> Option<(&str, &str)> {
    let mut rest = line.trim_start();
    for prefix in ["pub(crate) ", "pub(super) ", "pub ", "const ", "unsafe "] {
        rest = rest.strip_prefix(prefix).unwrap_or(rest);
    }
    let rest = rest.strip_prefix("fn ")?;
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    (end > 0).then(|| (&rest[..end], &rest[end..]))
}

/// Whether the signature starting at `lines[0]` ends in a body (`{`) rather than `;` (a trait's
/// required method), outside parentheses and brackets.
fn has_body(lines: &[&str]) -> bool {
    let mut depth = 0i32;
    for line in lines {
        let code = line.split("//").next().unwrap_or_default();
        for c in code.chars() {
            match c {
                '(' | '[' => depth += 1,
                ')' | ']' => depth -= 1,
                '{' if depth == 0 => return true,
                ';' if depth == 0 => return false,
                _ => {}
            }
        }
    }
    false
}

/// Type or const parameters (a generic function is instantiated where it is used anyway);
/// lifetimes alone are not.
fn has_type_params(after_name: &str) -> bool {
    let Some(params) = after_name.strip_prefix('<') else {
        return false;
    };
    let params = &params[..params.find('>').unwrap_or(params.len())];
    params.split(',').any(|p| !p.trim().starts_with('\''))
}

#[test]
fn every_codec_function_is_inline_in_debug_builds() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("pk-codec/src");
    let mut files = Vec::new();
    default_build_sources(&root, &mut files);
    files.sort();
    assert!(
        files.len() > 30,
        "found {} source files under {}",
        files.len(),
        root.display()
    );
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in &files {
        let text = fs::read_to_string(file).expect("a source file reads");
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            // A file's unit tests come last, in `#[cfg(test)] mod tests { ... }`.
            if line.starts_with("#[cfg(test)]")
                && lines
                    .get(i + 1)
                    .is_some_and(|l| l.starts_with("mod ") && l.ends_with('{'))
            {
                break;
            }
            let Some((name, after)) = fn_item(line) else {
                continue;
            };
            if name == "main" || has_type_params(after) || !has_body(&lines[i..]) {
                continue;
            }
            let attrs = attrs_above(&lines, i);
            checked += 1;
            if !lazy_in_debug(&attrs) && !OUT_OF_LINE.contains(&name) {
                let file = file.strip_prefix(&root).unwrap_or(file);
                missing.push(format!("{}:{} fn {name}", file.display(), i + 1));
            }
        }
    }
    assert!(checked > 500, "checked only {checked} functions");
    assert!(
        missing.is_empty(),
        "{} function(s) without #[cfg_attr(debug_assertions, inline)] (or #[inline]), compiled \
         in every debug build of pk-codec:\n{}",
        missing.len(),
        missing.join("\n")
    );
}

#[test]
fn the_out_of_line_digests_are_out_of_line() {
    // The exceptions exist and are still out of line in debug builds: an inline one would compile
    // the hash crates' code again in every crate that encodes a key.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("pk-codec/src");
    let sources = [
        fs::read_to_string(root.join("hash.rs")).expect("hash.rs reads"),
        fs::read_to_string(root.join("prefix.rs")).expect("prefix.rs reads"),
    ];
    for name in OUT_OF_LINE {
        let (text, i) = sources
            .iter()
            .find_map(|text| {
                let lines: Vec<&str> = text.lines().collect();
                let i = lines
                    .iter()
                    .position(|l| fn_item(l).is_some_and(|(n, _)| n == *name))?;
                Some((text, i))
            })
            .unwrap_or_else(|| panic!("fn {name} not found in hash.rs or prefix.rs"));
        let lines: Vec<&str> = text.lines().collect();
        let attrs = attrs_above(&lines, i);
        assert!(
            !lazy_in_debug(&attrs),
            "fn {name} is inline in debug builds: {attrs:?}"
        );
    }
}
