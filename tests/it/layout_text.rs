//! The text form of a layout: any text parses to a layout or to an error whose position is a
//! character boundary inside the text; valid text with one character changed does the same.

use pk_codec::{Error, Layout};
use proptest::prelude::*;

use crate::support;

/// Checks the outcome of parsing `text`: a layout that prints back to text parsing to itself, or
/// an `InvalidSpec` pointing inside the text, or another refusal (a rule, a bad layout).
fn check(text: &str) -> Result<(), TestCaseError> {
    match text.parse::<Layout>() {
        Ok(layout) => {
            let printed = layout.to_string();
            let reparsed = printed.parse::<Layout>();
            prop_assert_eq!(reparsed, Ok(layout), "{}", printed);
        }
        Err(Error::InvalidSpec { position, reason }) => {
            prop_assert!(
                position <= text.len(),
                "{text:?}: position {position}: {reason}"
            );
            prop_assert!(
                text.is_char_boundary(position),
                "{text:?}: position {position} splits a character: {reason}"
            );
        }
        Err(_) => {}
    }
    Ok(())
}

const VALID: &[&str] = &[
    "device_id: u32 width=6; seller_id: str; card_id: u64 width=6",
    "a: str optional; b: u8 desc; delimiter='|'; max_len=64",
    "device_id: u32 width=6; ts: u64 width=13; hash=md5(device_id):4:sep",
    "ts: u64 width=13; n: i32; buckets=16:mod(ts):sep",
    "a: str escaped; b: bytes; c: bool; buckets=8:hash(a,b)",
    "t: timestamp precision=ms; f: f64; u: uuid; delimiter='\\x01'",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(support::cases(2000)))]

    #[test]
    fn any_text_parses_or_points_inside_it(text in "[a-z0-9:;=,'()\\\\ _.xé\t]{0,60}") {
        check(&text)?;
    }

    #[test]
    fn valid_text_with_one_change_parses_or_points_inside_it(
        base in prop::sample::select(VALID),
        at in any::<prop::sample::Index>(),
        change in prop_oneof![Just(None), any::<char>().prop_map(Some)],
    ) {
        let mut chars: Vec<char> = base.chars().collect();
        let i = at.index(chars.len());
        match change {
            None => {
                chars.remove(i);
            }
            Some(c) => chars.insert(i, c),
        }
        check(&chars.into_iter().collect::<String>())?;
    }
}

#[test]
fn positions_count_bytes_before_multibyte_characters() {
    // `é` takes two bytes: the unknown type after it starts at byte 4, not character 3.
    match "é: u33".parse::<Layout>() {
        Err(Error::InvalidSpec { position, reason }) => {
            assert_eq!(position, 4, "{reason}");
            assert!(reason.contains("unknown type"), "{reason}");
        }
        other => panic!("expected InvalidSpec, got {other:?}"),
    }
    match "a: u8 ;  é=1".parse::<Layout>() {
        Err(Error::InvalidSpec { position, reason }) => {
            assert_eq!(position, 9, "{reason}");
            assert!(reason.contains("unknown setting"), "{reason}");
        }
        other => panic!("expected InvalidSpec, got {other:?}"),
    }
}
