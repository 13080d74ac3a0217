//! What the property tests share: how many cases a property runs.

/// The cases a property runs: `default`, or `default` times `PK_SOAK` when the environment sets
/// it, for a soak run (`PK_SOAK=100 cargo test --release --workspace`; README, "Tests"). An
/// unreadable `PK_SOAK` fails the run rather than quietly running the default.
pub(crate) fn cases(default: u32) -> u32 {
    match std::env::var("PK_SOAK") {
        Err(std::env::VarError::NotPresent) => default,
        Ok(text) => match text.trim().parse::<u32>() {
            Ok(factor) if factor > 0 => default.saturating_mul(factor),
            _ => panic!(
                "PK_SOAK must be a positive whole number (a factor on every property's cases), not {text:?}"
            ),
        },
        Err(e) => panic!("PK_SOAK is not readable: {e}"),
    }
}
