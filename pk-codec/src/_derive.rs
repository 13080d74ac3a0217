//! The reference of `#[derive(PartitionKey)]` and its `#[pk(...)]` attributes.
//!
//! This module holds no items: it is the derive's documentation, here so that its examples run
//! as doc tests of this crate.
//!
//! # What the derive writes
//!
//! For a struct with named fields or a tuple struct:
//!
//! - `impl PartitionKey` ([`PartitionKey`](crate::PartitionKey)): `encode`, `encode_into`
//!   (appending to your buffer, allocation-free when it has room), `layout()` (the same layout as
//!   a runtime [`Layout`](crate::Layout), which writes the same bytes), `write_fields` (for nesting).
//! - `impl DecodeKey` ([`DecodeKey`](crate::DecodeKey)): `decode(&str)`, unless a field borrows
//!   (`&str`, `&[u8]`, a type with a lifetime): such keys encode only.
//! - Both forms from the one declaration: beside the text methods, `encode_binary`,
//!   `encode_binary_into` and `decode_binary` write and read the binary form (see
//!   [Binary keys](#binary-keys)).
//! - Typed range constructors, unless the key has a hash prefix (which scatters the order), for
//!   each field `f` in key order (`0`, `1`, ... in a tuple struct):
//!   - `ranges_f(<leading fields' values>, bounds)`: the keys whose leading fields equal the
//!     values and whose `f` lies within `bounds` (any `RangeBounds`: `15..100`, `..=9`, `(Bound,
//!     Bound)`), in value order also when `f` is descending;
//!   - `ranges_f_eq(<leading fields' values>, f)`: the keys whose fields up to `f` equal the values.
//!
//!   Both return `Result<Vec<KeyRange>>`: one [`KeyRange`](crate::KeyRange), or one per bucket for
//!   a bucketed key (just one when the modulo field is among the equal fields); merge the
//!   per-bucket reads with [`KeyShape::merge_buckets`](crate::KeyShape::merge_buckets). Values are
//!   taken by value for integers, `bool` and `char`, as `&str` for strings, `&[u8]` for byte
//!   strings and by reference otherwise; string bounds range over `&str` (`"a".."b"`).
//!
//! The generated `encode` is straight-line calls to [`KeyWriter`](crate::KeyWriter) with constant
//! [`FieldSpec`](crate::FieldSpec)s and a constant [`KeyShape`](crate::KeyShape): no runtime layout.
//!
//! ```
//! use pk_codec::{DecodeKey, PartitionKey};
//!
//! #[derive(PartitionKey, Debug, PartialEq)]
//! struct CardKey {
//!     #[pk(width = 6)]
//!     device_id: u32,
//!     seller_id: String,
//!     #[pk(width = 4)]
//!     card_id: u64,
//! }
//!
//! let key = CardKey { device_id: 54, seller_id: "a100".into(), card_id: 6777 };
//! assert_eq!(key.encode()?, "000054,a100,6777");
//! assert_eq!(CardKey::decode("000054,a100,6777")?, key);
//!
//! // All keys with a DeviceID in [15, 100), all keys of device 54, one seller of device 54:
//! let devices = CardKey::ranges_device_id(15..100)?;
//! assert_eq!((devices[0].start.as_str(), devices[0].end.as_deref()), ("000015", Some("000100")));
//! let device = CardKey::ranges_device_id_eq(54)?;
//! assert!(device[0].contains("000054,a100,6777") && !device[0].contains("000055,a100,6777"));
//! let seller = CardKey::ranges_seller_id_eq(54, "a100")?;
//! assert!(seller[0].contains("000054,a100,6777") && !seller[0].contains("000054,a1001,6777"));
//!
//! // The same layout at run time, for tools and comparisons:
//! assert_eq!(CardKey::layout().to_string(), "device_id: u32 width=6; seller_id: str; card_id: u64 width=4");
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! # Field types
//!
//! A field's form is decided by its type as written:
//!
//! | type | form |
//! |---|---|
//! | `u8`..`u128`, `usize`, `i8`..`i128`, `isize` | fixed-width decimal (signed types: a sign character first) |
//! | `String`, `&str` | the string as it is (checked against the delimiter), or escaped |
//! | `Vec<u8>`, `&[u8]` | lower-case hex |
//! | `bool`, `char` | `0`/`1`; an escaped one-character string |
//! | `f32`, `f64` | total-order bits as hex |
//! | `SystemTime`; `uuid::Uuid`, `time::OffsetDateTime`, `chrono::DateTime<Utc>` (features) | UTC timestamp text (`#[pk(precision = s \| ms \| us \| ns)]`, default `ms`); 32 hex digits |
//! | `Option<T>` of those | `None` sorts before every value (after, when descending) |
//! | any other type | what its [`KeyPart`](crate::KeyPart) impl says: a type alias (`type DeviceId = u32`) is the type it names; a struct that derives `PartitionKey` is spliced in as a nested key |
//!
//! Tuples, arrays, other `Vec`s and `Option<Option<T>>` are refused at compile time. Type parameters: see [Generics](#generics-and-borrowed-fields).
//!
//! # Field attributes
//!
//! ## `#[pk(width = N)]`
//!
//! An integer field's width in characters (default: the type's widest value, 10 for `u32`, 20
//! for `u64` and `i64`). Values that do not fit are an error at encode time, never a wrong key.
//! A width that can never hold a value (0, 1 for a signed type, over 40) is a compile error;
//! a width on a non-integer field too.
//!
//! ```
//! use pk_codec::PartitionKey;
//!
//! #[derive(PartitionKey)]
//! struct Order {
//!     #[pk(width = 8)]
//!     order_number: u64,
//!     #[pk(width = 4)]
//!     delta: i16,
//! }
//!
//! assert_eq!(Order { order_number: 123, delta: -1 }.encode()?, "00000123,-999");
//! assert!(Order { order_number: 123_456_789, delta: 0 }.encode().is_err());
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! ## `#[pk(desc)]`
//!
//! The field sorts descending: largest first, `None` last (newest-first timestamps).
//!
//! ```
//! use pk_codec::PartitionKey;
//!
//! #[derive(PartitionKey)]
//! struct Event {
//!     #[pk(width = 4)]
//!     device: u16,
//!     #[pk(desc, width = 13)]
//!     ts: u64,
//! }
//!
//! let newer = Event { device: 1, ts: 1_700_000_000_001 }.encode()?;
//! let older = Event { device: 1, ts: 1_700_000_000_000 }.encode()?;
//! assert!(newer < older);
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! ## `#[pk(escaped)]`
//!
//! A string field in the escaped form, which accepts any string (bytes up to `-` are written as
//! `-` and two hex digits). Plain string fields refuse, at encode time, a value holding a byte at
//! or below the delimiter.
//!
//! ```
//! use pk_codec::{DecodeKey, PartitionKey};
//!
//! #[derive(PartitionKey, Debug, PartialEq)]
//! struct Path {
//!     #[pk(escaped)]
//!     path: String,
//!     name: String,
//! }
//!
//! let p = Path { path: "a,b c".into(), name: "x".into() };
//! assert_eq!(p.encode()?, "a-2cb-20c,x");
//! assert_eq!(Path::decode("a-2cb-20c,x")?, p);
//! assert!(Path { path: "ok".into(), name: "a,b".into() }.encode().is_err());
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! # Struct attributes
//!
//! ## `#[pk(delimiter = ',')]`
//!
//! The delimiter between fields (default `,`). It must be ASCII, not a letter or digit, and sort
//! below every byte a variable-length field form can hold: `-` for escaped strings, chars and
//! optional signed integers, `0` for hex and optional unsigned integers and bools, `a` for
//! descending strings, bytes and chars. The derive checks this at compile time, for nested keys
//! too.
//!
//! ```
//! use pk_codec::PartitionKey;
//!
//! #[derive(PartitionKey)]
//! #[pk(delimiter = '#')]
//! struct Host {
//!     host: String,
//!     #[pk(width = 5)]
//!     port: u16,
//! }
//!
//! assert_eq!(Host { host: "10.10.0.1".into(), port: 443 }.encode()?, "10.10.0.1#00443");
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! ## `#[pk(max_len = N)]`
//!
//! The key's length limit in bytes, prefix included (default 1024, the stores' limit).
//!
//! ```
//! use pk_codec::{Error, PartitionKey};
//!
//! #[derive(PartitionKey)]
//! #[pk(max_len = 8)]
//! struct Tag {
//!     name: String,
//! }
//!
//! assert!(matches!(Tag { name: "too_long_a_tag".into() }.encode(), Err(Error::KeyTooLong { len: 14, limit: 8 })));
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! ## `#[pk(hash(ALG, len = N))]`, `#[pk(hash(ALG, len = N, separator))]`
//!
//! A hash prefix: the first `N` hex characters of `md5`, `xxh32`, `xxh64` or `xxh3` over the
//! natural key (its text in the text form, its bytes in the binary form, where the prefix is the
//! digest's first `⌈N / 2⌉` bytes), then the delimiter if `separator` is given (text form only). `N` is 1 up to the digest's length
//! (32, 8, 16, 16), checked at compile time. Spreads sequential keys; no range constructors.
//!
//! ```
//! use pk_codec::{DecodeKey, PartitionKey};
//!
//! #[derive(PartitionKey, Debug, PartialEq)]
//! #[pk(hash(md5, len = 4))]
//! struct OrderKey {
//!     #[pk(width = 6)]
//!     order_number: u64,
//! }
//!
//! assert_eq!(OrderKey { order_number: 200_001 }.encode()?, "ee8f200001");
//! assert_eq!(OrderKey::decode("ee8f200001")?.order_number, 200_001);
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! With `fields(A, B, ...)` the hash covers only those fields, which must lead the key: one
//! entity's keys stay together, and range constructors exist for the fields after them (taking
//! the hashed fields as equality values).
//!
//! ```
//! use pk_codec::PartitionKey;
//!
//! #[derive(PartitionKey)]
//! #[pk(hash(md5, len = 4, separator, fields(device_id)))]
//! struct Reading {
//!     #[pk(width = 6)]
//!     device_id: u32,
//!     #[pk(width = 13)]
//!     ts: u64,
//! }
//!
//! let key = Reading { device_id: 54, ts: 1_700_000_000_000 }.encode()?;
//! assert_eq!(key, "f953,000054,1700000000000");
//! // Device 54's first hour of readings: one range read.
//! let ranges = Reading::ranges_ts(54, 1_700_000_000_000..1_700_003_600_000)?;
//! assert_eq!(ranges.len(), 1);
//! assert!(ranges[0].contains(&key));
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! ## `#[pk(precision = P)]`
//!
//! The fraction digits of a timestamp field: `s`, `ms` (the default), `us` or `ns`.
//!
//! ```
//! use pk_codec::PartitionKey;
//! use std::time::{Duration, UNIX_EPOCH};
//!
//! #[derive(PartitionKey)]
//! struct Event {
//!     #[pk(precision = s)]
//!     day: std::time::SystemTime,
//!     #[pk(desc)]
//!     score: f64,
//! }
//!
//! let at = UNIX_EPOCH + Duration::from_secs(1_795_343_160);
//! assert_eq!(Event { day: at, score: 1.5 }.encode()?, "2026-11-22T10:26:00Z,4007ffffffffffff");
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! ## `#[pk(buckets(count = N, modulo = FIELD))]`, `#[pk(buckets(count = N, hash(FIELDS)))]`
//!
//! A bucket prefix `0..N`, zero-padded to the width of `N - 1`: `value % N` of one integer field
//! (`modulo = ts`; `modulo = 1` in a tuple struct), or XXH3 of some fields modulo `N` (their
//! text in the text form, their bytes in the binary form: see below)
//! (`hash(user, device)`, or `hash` alone for all fields). Add `separator` for a delimiter after
//! it. Range constructors return one range per bucket that can hold the keys, in bucket order:
//! one when the values they are given fix the bucket (the modulo field, or every hashed field),
//! the buckets of the values a modulo field's bounds leave (`ts` from 100 to 103: 4 of 16), and
//! every bucket otherwise.
//!
//! ```
//! use pk_codec::PartitionKey;
//!
//! #[derive(PartitionKey)]
//! #[pk(buckets(count = 16, modulo = ts, separator))]
//! struct Reading {
//!     #[pk(width = 13)]
//!     ts: u64,
//! }
//!
//! assert_eq!(Reading { ts: 1_700_000_000_017 }.encode()?, "01,1700000000017");
//! // Reading a time range takes one range read per bucket:
//! assert_eq!(Reading::ranges_ts(1_700_000_000_000..1_700_000_001_000)?.len(), 16);
//! // A narrow time range reads only its times' buckets:
//! assert_eq!(Reading::ranges_ts(100..=103)?.len(), 4);
//!
//! #[derive(PartitionKey)]
//! #[pk(buckets(count = 8, hash(user)))]
//! struct Visit {
//!     user: String,
//!     #[pk(width = 6)]
//!     seq: u32,
//! }
//!
//! let a = Visit { user: "alice".into(), seq: 1 }.encode()?;
//! let b = Visit { user: "alice".into(), seq: 2 }.encode()?;
//! assert_eq!(a[..1], b[..1]); // one user, one bucket
//! // So one user's visits are one range read, in that bucket:
//! let ranges = Visit::ranges_seq("alice", ..)?;
//! assert_eq!(ranges.len(), 1);
//! assert!(ranges[0].contains(&a));
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! ### What a bucket hash or a hash prefix digests
//!
//! The key's bytes in the form written: in the text form, the fields' text (the hashed fields
//! joined by the delimiter; the whole natural key for `hash` alone or a whole-key hash prefix);
//! in the binary form, the fields' binary bytes, one after another. The same value can so lie in
//! different buckets in the two forms (device 54 of 16 buckets: bucket 11 as text, 07 as
//! binary); each form is consistent with itself, and its range constructors read its own
//! buckets.
//!
//! ```
//! use pk_codec::PartitionKey;
//!
//! #[derive(PartitionKey)]
//! #[pk(buckets(count = 16, hash(device_id), separator))]
//! struct Reading {
//!     #[pk(width = 6)]
//!     device_id: u32,
//!     ts: u64,
//! }
//!
//! let r = Reading { device_id: 54, ts: 1 };
//! assert_eq!(&r.encode()?[..3], "11,"); // xxh3 of the text "000054"
//! assert_eq!(r.encode_binary()?[0], 7); // xxh3 of the bytes 00 00 00 36
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! ## `#[pk(form = text | binary)]`
//!
//! The form `layout()` answers ([`PartitionKey::FORM`](crate::PartitionKey::FORM); default `text`),
//! for code that reads keys through the runtime layout ([`Layout::encode_bytes`](crate::Layout::encode_bytes),
//! stores, the command line), and the form of the typed range constructors: a `binary` key's
//! answer `Vec<ByteRange>` of its binary keys, a `text` key's `Vec<KeyRange>` (the return type
//! says which). The key type writes both forms whatever it says; an unknown form is a compile
//! error on its name.
//!
//! ```
//! use pk_codec::{Form, PartitionKey, Value};
//!
//! #[derive(PartitionKey)]
//! #[pk(form = binary)]
//! struct Card {
//!     #[pk(width = 6)]
//!     device_id: u32,
//!     seller_id: String,
//! }
//!
//! let card = Card { device_id: 54, seller_id: "a100".into() };
//! assert_eq!(Card::layout().form(), Form::Binary);
//! assert_eq!(Card::layout().encode_bytes(&[54u32.into(), "a100".into()])?, card.encode_binary()?);
//! assert_eq!(card.encode()?, "000054,a100"); // the text form is still there
//! // Its range constructors answer byte ranges of its binary keys.
//! let ranges: Vec<pk_codec::ByteRange> = Card::ranges_seller_id(54, "a".."b")?;
//! assert!(ranges[0].contains(&card.encode_binary()?));
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! ## `#[pk(crate = "path")]`
//!
//! The path the generated code uses for this crate (default `::pk_codec`), for a crate that
//! re-exports pk-codec, as serde's `#[serde(crate = "...")]`.
//!
//! ```
//! mod db {
//!     pub use ::pk_codec as keys;
//! }
//!
//! #[derive(db::keys::PartitionKey)]
//! #[pk(crate = "db::keys")]
//! struct Id(u8);
//!
//! use db::keys::PartitionKey;
//! assert_eq!(Id(7).encode()?, "007");
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! # Binary keys
//!
//! Every derived key also writes the binary form ([`Form::Binary`](crate::Form::Binary)), for the
//! stores that take bytes: each field in its kind's binary form (the table on [`Kind`](crate::Kind): big-endian integers in the bytes their width needs, signs
//! bit flipped, escaped and terminated strings, ...), one
//! after another with no delimiter (every binary form is self-delimiting), after the prefix's
//! bytes (a hash prefix of `⌈len / 2⌉` digest bytes, a bucket number in one byte, or two above
//! 256 buckets; no separator). The keys sort bytewise as the values do, in both orders, and the
//! same attributes (widths, `desc`, prefixes, nested keys) apply: a value too wide for its field
//! is refused in both forms alike. The generated code is straight-line calls to
//! [`BinWriter`](crate::BinWriter) and [`BinReader`](crate::BinReader), as for text.
//!
//! ```
//! use pk_codec::{DecodeKey, Form, PartitionKey};
//!
//! #[derive(PartitionKey, Debug, PartialEq)]
//! #[pk(buckets(count = 16, modulo = card_id))]
//! struct CardKey {
//!     #[pk(width = 6)]
//!     device_id: u32,
//!     seller_id: String,
//!     #[pk(desc)]
//!     card_id: u64,
//! }
//!
//! let card = CardKey { device_id: 54, seller_id: "a100".into(), card_id: 6777 };
//! let key = card.encode_binary()?;
//! assert_eq!(key.len(), 1 + 3 + (4 + 2) + 8); // bucket, 6 digits' 3 bytes, "a100" and its end mark, u64
//! assert_eq!(key[0], (6777 % 16) as u8);
//! assert_eq!(CardKey::decode_binary(&key)?, card);
//! // The runtime layout writes the same bytes in its binary form.
//! let values = [54u32.into(), "a100".into(), 6777u64.into()];
//! assert_eq!(CardKey::layout().with_form(Form::Binary).encode_bytes(&values)?, key);
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! A key whose fields borrow (`&str`, `&[u8]`) encodes in both forms and decodes in neither:
//! it has no `decode`, so no `decode_binary` either (borrowed decoding, `decode_borrowed`, is
//! text only). The typed range constructors write text ranges.
//!
//! # Nested keys
//!
//! A field whose type is another key is spliced in inline, with the outer key's delimiter, so keys
//! compose. The nested key's own prefix, delimiter and length limit are not used when nested
//! (its field attributes are). In `layout()`, and in errors, its fields are named `outer.inner`.
//! `#[pk(desc)]`, `width` and `escaped` do not apply to a nested key as a whole.
//!
//! ```
//! use pk_codec::{DecodeKey, PartitionKey};
//!
//! #[derive(PartitionKey, Debug, PartialEq)]
//! struct Device {
//!     #[pk(width = 3)]
//!     region: u8,
//!     #[pk(width = 6)]
//!     id: u32,
//! }
//!
//! #[derive(PartitionKey, Debug, PartialEq)]
//! struct Sample(Device, #[pk(desc, width = 4)] u16);
//!
//! let s = Sample(Device { region: 7, id: 54 }, 1);
//! assert_eq!(s.encode()?, "007,000054,9998");
//! assert_eq!(Sample::decode("007,000054,9998")?, s);
//! assert_eq!(Sample::layout().to_string(), "_0.region: u8; _0.id: u32 width=6; _1: u16 width=4 desc");
//! let of_device = Sample::ranges_0_eq(&Device { region: 7, id: 54 })?;
//! assert!(of_device[0].contains("007,000054,9998"));
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! # Generics and borrowed fields
//!
//! A field whose type is a type parameter bounded by [`KeyField`](crate::KeyField) or
//! [`DecodeField`](crate::DecodeField) (in the parameter list or a `where` clause) is a scalar
//! field; a field of any other type parameter is a nested key. The derive adds the bounds the
//! fields need (`K: PartitionKey` to encode, `K: DecodeKey` to decode, `Option<T>: KeyField`...).
//! Borrowed fields encode without copying.
//!
//! ```
//! use pk_codec::{KeyField, PartitionKey};
//!
//! #[derive(PartitionKey)]
//! struct Versioned<V: KeyField, K> {
//!     version: V,
//!     key: K,
//! }
//!
//! #[derive(PartitionKey)]
//! struct Name<'a> {
//!     first: &'a str,
//!     last: &'a str,
//! }
//!
//! let key = Versioned { version: 1u8, key: Name { first: "ada", last: "lovelace" } };
//! assert_eq!(key.encode()?, "001,ada,lovelace");
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! # Borrowing decode
//!
//! A struct with one lifetime whose fields are `&'a str` (plain ascending strings), `Cow<'a, str>`
//! (any string form, borrowed unless escapes must be undone) or owned decodable types gets
//! [`BorrowDecodeKey`](crate::BorrowDecodeKey): `decode_borrowed(&key)` reads it without copying
//! plain strings. (A `&'a [u8]` field has no borrowed form, its text being hex: such a struct
//! encodes only.) Owned keys implement it too, through their owned decode.
//!
//! ```
//! use pk_codec::{BorrowDecodeKey, PartitionKey};
//!
//! #[derive(PartitionKey, Debug, PartialEq)]
//! struct SellerRef<'a> {
//!     seller_id: &'a str,
//!     #[pk(width = 4)]
//!     card_id: u64,
//! }
//!
//! let key = SellerRef { seller_id: "a100", card_id: 6777 }.encode()?;
//! assert_eq!(SellerRef::decode_borrowed(&key)?.seller_id, "a100");
//! # Ok::<(), pk_codec::Error>(())
//! ```
//!
//! A `&str` field that is escaped or descending has no text to borrow: the rulebook's
//! `borrowed-str-form` refuses it when `decode_borrowed` is used.
//!
//! ```compile_fail,E0080
//! use pk_codec::{BorrowDecodeKey, PartitionKey};
//!
//! #[derive(PartitionKey)]
//! struct Escaped<'a> {
//!     #[pk(escaped)]
//!     name: &'a str,
//! }
//!
//! let _ = Escaped::decode_borrowed("a-2cb");
//! ```
//!
//! With a prefix too, whose key `decode_borrowed` reads field by field:
//!
//! ```compile_fail,E0080
//! use pk_codec::{BorrowDecodeKey, PartitionKey};
//!
//! #[derive(PartitionKey)]
//! #[pk(hash(md5, len = 4))]
//! struct Escaped<'a> {
//!     #[pk(escaped)]
//!     name: &'a str,
//! }
//!
//! let _ = Escaped::decode_borrowed("2249a-2cb");
//! ```
//!
//! # Compile-time errors
//!
//! Two kinds. The derive itself reports what the syntax says: unknown, duplicate or misplaced
//! attributes; `desc`, `width` or `escaped` on a nested key; a bucket `modulo` or `hash` naming a
//! missing field; a hash and a bucket prefix together; enums, unions and structs without fields;
//! unsupported field types. All of these are reported at once, each on its attribute or field.
//!
//! The rules of the key format are not the derive's: the generated `SHAPE` constant calls the
//! [`rules`](crate::rules) that runtime [`Layout`](crate::Layout)s use, so a derived key and a
//! runtime layout accept exactly the same layouts. A broken rule is a compile error
//! (`evaluation panicked: pk-codec rule <name>: ...`) on the field or attribute concerned:
//! a width that can never hold a value or is too wide, `width` on a non-integer, `escaped` on a
//! non-string, a delimiter that is not ASCII, is a letter or digit, is `0x7f`, or does not sort
//! below a field's forms (nested keys and the `=` of an optional string included), a hash length
//! of 0 or beyond the digest, a bucket count of 0 or above [`MAX_BUCKETS`](crate::MAX_BUCKETS),
//! a modulo bucket over a non-integer or optional field, a bucket hash over more than eight runs
//! of fields, a `max_len` with no room after the prefix, and an `Option` of an `Option`.
//!
//! The rules see types through their [`KeyField`](crate::KeyField) impls, so they hold through
//! type parameters too; for a generic struct they are checked when an instance is built or
//! spliced into another key (a monomorphization error):
//!
//! ```compile_fail,E0080
//! use pk_codec::{KeyField, PartitionKey};
//!
//! #[derive(PartitionKey)]
//! struct Gen<V: KeyField> {
//!     a: Option<V>,
//!     b: u8,
//! }
//!
//! // `Option<Option<u32>>`: `None` and `Some(None)` would both be `,001`.
//! let _ = Gen::<Option<u32>> { a: None, b: 1 }.encode();
//! ```
//!
//! ```compile_fail,E0080
//! use pk_codec::PartitionKey;
//!
//! // `Some("")` is `=`: a delimiter at or above `=` cannot order it.
//! #[derive(PartitionKey)]
//! #[pk(delimiter = '|')]
//! struct Key {
//!     a: Option<String>,
//!     b: u16,
//! }
//! ```
