//! Key designs through time: a live bucket-count change from 16 to 64 on a table of
//! student-card purchases (`rekey.rs`).
//!
//! ```text
//! cargo run --release --example hot_cold
//! ```

mod rekey;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    rekey::run()
}
