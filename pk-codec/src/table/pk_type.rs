//! The types a primary-key column can have: at the bottom of the table model, named by its
//! errors and its schema alike.

use std::fmt;

use serde::Serialize;

/// The type of a primary-key column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum PkType {
    /// UTF-8 text, compared bytewise.
    String,
    /// 64-bit signed integer, compared numerically.
    Integer,
    /// Bytes, compared bytewise.
    Binary,
}

impl fmt::Display for PkType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Binary => "binary",
        })
    }
}
