//! Test vectors from the key-design facts (filled in with the codec).
