//! The README reads as a user's code and a user's terminal: its Rust blocks run as doc tests
//! (`pk_codec`'s `ReadmeDoctests`), so they may not lean on doctest-only lines, which rustdoc
//! hides but every other reader of the README sees as text.

#[test]
fn the_readmes_rust_blocks_have_no_doctest_only_lines() {
    let readme = include_str!("../../README.md");
    let mut in_rust = false;
    let mut blocks = 0;
    for (i, line) in readme.lines().enumerate() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            if in_rust {
                in_rust = false;
            } else if info.trim().starts_with("rust") {
                in_rust = true;
                blocks += 1;
            }
            continue;
        }
        if in_rust {
            assert!(
                !(trimmed == "#" || trimmed.starts_with("# ") || trimmed.starts_with("#!")),
                "README.md line {}: a doctest-only line shows as text outside rustdoc: {line:?}",
                i + 1
            );
        }
    }
    assert!(blocks >= 2, "the README's Rust examples were not found");
}
