//! Typed access: rows put, got and range-read by a derived key type or a runtime [`Layout`] of
//! either [`Form`](crate::Form) (a layout's keys are its [`Layout::encode_bytes`]), values
//! through serde in the [value format](super::value) (exact, checked on write), bucketed keys
//! read back in natural order through [`scan_ranges`].

use std::fmt;
use std::ops::ControlFlow;

use serde::de::DeserializeOwned;

use super::value::{self, Storable, ValueError};
use super::{BulkWriter, PrefixLen, RangeStore, ScanCursor, StoreError, scan_ranges, show_key};
use crate::{DecodeKey, Form, KeyBounds, Layout, PartitionKey, Value};

/// Why a typed operation failed.
#[derive(Debug)]
#[non_exhaustive]
pub enum TypedError {
    /// The store refused.
    Store(StoreError),
    /// A key could not be encoded.
    Key(crate::Error),
    /// A key read from the store did not decode: it is not this layout's (another layout's keys
    /// share the range read).
    StoredKey {
        /// The key as stored.
        key: Vec<u8>,
        /// Why it did not decode.
        error: crate::Error,
    },
    /// A value could not be stored (it does not serialize, or would not read back exactly:
    /// see [`value`](super::value)), or the stored value [`Typed::get`] read is not of the type
    /// asked for. Nothing was written.
    Value(ValueError),
    /// A stored value a scan read is not of the type asked for.
    StoredValue {
        /// The key of the row that holds it.
        key: Vec<u8>,
        /// Why it did not read.
        error: ValueError,
    },
    /// A [`Timeline`](crate::timeline::Timeline) refused a row's time, values or key
    /// ([`TypedTimeline`](super::TypedTimeline)).
    Timeline(crate::timeline::TimelineError),
}

impl fmt::Display for TypedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Store(e) => e.fmt(f),
            Self::Key(e) => e.fmt(f),
            Self::StoredKey { key, error } => {
                write!(
                    f,
                    "the stored key {} is not this layout's: {error}",
                    show_key(key)
                )
            }
            Self::Value(e) => write!(f, "value: {e}"),
            Self::StoredValue { key, error } => {
                write!(
                    f,
                    "the value stored at {} is not of the type read: {error}",
                    show_key(key)
                )
            }
            Self::Timeline(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for TypedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Store(e) => Some(e),
            Self::Key(e) | Self::StoredKey { error: e, .. } => Some(e),
            Self::Value(e) | Self::StoredValue { error: e, .. } => Some(e),
            Self::Timeline(e) => Some(e),
        }
    }
}

impl From<StoreError> for TypedError {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
    }
}

impl From<crate::Error> for TypedError {
    fn from(e: crate::Error) -> Self {
        Self::Key(e)
    }
}

impl From<crate::timeline::TimelineError> for TypedError {
    fn from(e: crate::timeline::TimelineError) -> Self {
        Self::Timeline(e)
    }
}

impl From<ValueError> for TypedError {
    fn from(e: ValueError) -> Self {
        Self::Value(e)
    }
}

/// The bytes typed access stores a value as ([`value::to_bytes`]). Every typed write goes
/// through here ([`Typed::put`], [`Typed::put_values`], [`BulkWriter::add_typed`],
/// [`BulkWriter::add_values`]), and every typed read through [`value::from_bytes`].
fn value_bytes<V: Storable + ?Sized>(value: &V) -> Result<Vec<u8>, TypedError> {
    Ok(value::to_bytes(value)?)
}

/// The value a scan read at `key`, or an error naming the key.
fn stored_value<V: DeserializeOwned>(key: &[u8], value: &[u8]) -> Result<V, TypedError> {
    value::from_bytes(value).map_err(|error| TypedError::StoredValue {
        key: key.to_vec(),
        error,
    })
}

/// A stored key decoded by `decode`, or an error naming the key.
fn stored_key<T>(
    key: &[u8],
    decode: impl FnOnce(&[u8]) -> crate::Result<T>,
) -> Result<T, TypedError> {
    decode(key).map_err(|error| TypedError::StoredKey {
        key: key.to_vec(),
        error,
    })
}

/// A derived key as it is stored: in its [`PartitionKey::FORM`] (text keys as their UTF-8 bytes).
fn stored_bytes<K: PartitionKey>(key: &K) -> crate::Result<Vec<u8>> {
    match K::FORM {
        Form::Text => key.encode().map(String::into_bytes),
        Form::Binary => key.encode_binary(),
    }
}

/// A derived key's stored key, decoded in its [`PartitionKey::FORM`].
fn decode_stored<K: DecodeKey>(key: &[u8]) -> crate::Result<K> {
    match K::FORM {
        Form::Text => decode_text_key(key),
        Form::Binary => K::decode_binary(key),
    }
}

/// A derived key's stored text key (UTF-8), decoded.
fn decode_text_key<K: DecodeKey>(key: &[u8]) -> crate::Result<K> {
    let text = std::str::from_utf8(key).map_err(|e| {
        crate::Error::malformed(
            None,
            e.valid_up_to(),
            "a text key is UTF-8, and this one is not",
        )
    })?;
    K::decode(text)
}

/// A [`RangeStore`] seen through key types: no key string is built by hand.
///
/// # Examples
///
/// ```
/// use std::ops::ControlFlow;
/// use pk_codec::PartitionKey;
/// use pk_codec::store::{MemoryStore, Typed};
///
/// #[derive(PartitionKey, Debug, PartialEq)]
/// #[pk(buckets(count = 16, modulo = ts, separator))]
/// struct Event {
///     #[pk(width = 13)]
///     ts: u64,
///     device: u32,
/// }
///
/// let store = MemoryStore::default();
/// let typed = Typed::new(&store);
/// for ts in 1_700_000_000_000..1_700_000_000_100u64 {
///     typed.put(&Event { ts, device: 7 }, &format!("reading {ts}"))?;
/// }
/// assert_eq!(typed.get::<_, String>(&Event { ts: 1_700_000_000_042, device: 7 })?.as_deref(), Some("reading 1700000000042"));
/// // A time range: one range per bucket, read in parallel, merged back in time order.
/// let ranges = Event::ranges_ts(1_700_000_000_010..1_700_000_000_020)?;
/// let mut times = Vec::new();
/// typed.scan(&ranges, 100, None, |e: Event, _: String| {
///     times.push(e.ts);
///     ControlFlow::Continue(())
/// })?;
/// assert_eq!(times, (1_700_000_000_010..1_700_000_000_020).collect::<Vec<_>>());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Typed<'s, S: ?Sized> {
    store: &'s S,
}

impl<'s, S: RangeStore + ?Sized> Typed<'s, S> {
    /// Typed access to `store`.
    #[must_use]
    pub const fn new(store: &'s S) -> Self {
        Self { store }
    }

    /// Writes `value` at `key`, in the [value format](super::value): it reads back exactly, or
    /// is refused before anything is written.
    ///
    /// # Errors
    ///
    /// The key's encoding error; [`TypedError::Value`] for a value that does not serialize or
    /// would not read back exactly (nothing is written); the store's refusal.
    pub fn put<K: PartitionKey, V: Storable + ?Sized>(
        &self,
        key: &K,
        value: &V,
    ) -> Result<(), TypedError> {
        self.store.put(&stored_bytes(key)?, &value_bytes(value)?)?;
        Ok(())
    }

    /// The value at `key`, if any.
    ///
    /// # Errors
    ///
    /// As [`Typed::put`], and a stored value that does not read as a `V`.
    pub fn get<K: PartitionKey, V: DeserializeOwned>(
        &self,
        key: &K,
    ) -> Result<Option<V>, TypedError> {
        match self.store.get(&stored_bytes(key)?)? {
            Some(bytes) => Ok(Some(value::from_bytes(&bytes)?)),
            None => Ok(None),
        }
    }

    /// Deletes `key`; whether it was there.
    ///
    /// # Errors
    ///
    /// As [`Typed::put`].
    pub fn delete<K: PartitionKey>(&self, key: &K) -> Result<bool, TypedError> {
        Ok(self.store.delete(&stored_bytes(key)?)?)
    }

    /// Reads the rows of `ranges` (a derived key's typed range constructors give them, in the
    /// key's own form: `KeyRange`s for a text key, `ByteRange`s for a `#[pk(form = binary)]`
    /// key; one per bucket for a bucketed key) in `K`'s natural order, `page` rows per store read, the ranges
    /// read in parallel ([`scan_ranges`]); `visit` gets each key and value, and may stop the
    /// read, which then returns the cursor to resume from. `Ok(None)` means the scan is done:
    /// every range was read to its end, or `visit` stopped on the last row there was.
    ///
    /// # Errors
    ///
    /// The store's refusal; a stored key that is not `K`'s ([`TypedError::StoredKey`]), or a
    /// value that is not a `V` ([`TypedError::StoredValue`]), each naming its key.
    pub fn scan<K: DecodeKey, V: DeserializeOwned, R: KeyBounds>(
        &self,
        ranges: &[R],
        page: usize,
        cursor: Option<&ScanCursor>,
        mut visit: impl FnMut(K, V) -> ControlFlow<()>,
    ) -> Result<Option<ScanCursor>, TypedError> {
        let mut failed = None;
        let cursor = scan_ranges(
            self.store,
            PrefixLen::of(K::SHAPE.prefix(), K::FORM),
            ranges,
            page,
            cursor,
            |k, v| match stored_key(k, decode_stored::<K>)
                .and_then(|key| Ok((key, stored_value::<V>(k, v)?)))
            {
                Ok((key, value)) => visit(key, value),
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            },
        )?;
        match failed {
            Some(e) => Err(e),
            None => Ok(cursor),
        }
    }

    /// Writes `value` at the key `layout` makes of `values`, in the layout's form
    /// ([`Layout::encode_bytes`]: text or binary).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::ops::ControlFlow;
    /// use pk_codec::{ByteRange, Form, Layout};
    /// use pk_codec::store::{MemoryStore, Typed};
    ///
    /// let layout = "device_id: u32; ts: u64".parse::<Layout>()?.with_form(Form::Binary);
    /// let store = MemoryStore::default();
    /// let typed = Typed::new(&store);
    /// for ts in [3u64, 1, 2] {
    ///     typed.put_values(&layout, &[54u32.into(), ts.into()], &ts)?;
    /// }
    /// assert_eq!(typed.get_values::<u64>(&layout, &[54u32.into(), 2u64.into()])?, Some(2));
    /// let mut times = Vec::new();
    /// typed.scan_values(&layout, &[ByteRange::starting_with(&[])], 10, None, |key, _: u64| {
    ///     times.push(key[1].as_u64().unwrap());
    ///     ControlFlow::Continue(())
    /// })?;
    /// assert_eq!(times, [1, 2, 3]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Typed::put`].
    pub fn put_values<V: Storable + ?Sized>(
        &self,
        layout: &Layout,
        values: &[Value],
        value: &V,
    ) -> Result<(), TypedError> {
        self.store
            .put(&layout.encode_bytes(values)?, &value_bytes(value)?)?;
        Ok(())
    }

    /// The value at the key `layout` makes of `values`.
    ///
    /// # Errors
    ///
    /// As [`Typed::get`].
    pub fn get_values<V: DeserializeOwned>(
        &self,
        layout: &Layout,
        values: &[Value],
    ) -> Result<Option<V>, TypedError> {
        match self.store.get(&layout.encode_bytes(values)?)? {
            Some(bytes) => Ok(Some(value::from_bytes(&bytes)?)),
            None => Ok(None),
        }
    }

    /// Deletes the key `layout` makes of `values`; whether it was there.
    ///
    /// # Errors
    ///
    /// As [`Typed::put`].
    ///
    /// # Examples
    ///
    /// ```
    /// use pk_codec::{Form, Layout};
    /// use pk_codec::store::{MemoryStore, Typed};
    ///
    /// let layout = "id: u64".parse::<Layout>()?.with_form(Form::Binary);
    /// let store = MemoryStore::default();
    /// let typed = Typed::new(&store);
    /// typed.put_values(&layout, &[7u64.into()], "seven")?;
    /// assert!(typed.delete_values(&layout, &[7u64.into()])?);
    /// assert!(!typed.delete_values(&layout, &[7u64.into()])?);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn delete_values(&self, layout: &Layout, values: &[Value]) -> Result<bool, TypedError> {
        Ok(self.store.delete(&layout.encode_bytes(values)?)?)
    }

    /// [`Typed::scan`] for a runtime layout of either form: `visit` gets each key's decoded
    /// values ([`Layout::decode_bytes`]), the ranges' rows merged past the prefix of the
    /// layout's form. A binary layout's ranges are [`ByteRange`](crate::ByteRange)s.
    ///
    /// # Errors
    ///
    /// As [`Typed::scan`].
    pub fn scan_values<V: DeserializeOwned, R: KeyBounds>(
        &self,
        layout: &Layout,
        ranges: &[R],
        page: usize,
        cursor: Option<&ScanCursor>,
        mut visit: impl FnMut(Vec<Value>, V) -> ControlFlow<()>,
    ) -> Result<Option<ScanCursor>, TypedError> {
        let mut failed = None;
        let cursor = scan_ranges(
            self.store,
            layout,
            ranges,
            page,
            cursor,
            |k, v| match stored_key(k, |k| layout.decode_bytes(k))
                .and_then(|key| Ok((key, stored_value::<V>(k, v)?)))
            {
                Ok((key, value)) => visit(key, value),
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            },
        )?;
        match failed {
            Some(e) => Err(e),
            None => Ok(cursor),
        }
    }
}

/// Typed bulk writes: rows by key type or runtime layout, values stored exactly as [`Typed`]
/// stores them, so [`Typed::get`] and [`Typed::scan`] read them back.
impl BulkWriter {
    /// Queues `value` at `key`, as [`Typed::put`] would write it (the key encoded, the value in
    /// the [value format](super::value), checked to read back exactly); waits while the key's worker's queue is full. The row is reported and counted as
    /// [`BulkWriter::add`]'s are.
    ///
    /// # Errors
    ///
    /// The key's encoding error ([`TypedError::Key`]) or a value that does not serialize or
    /// would not read back exactly ([`TypedError::Value`]), before anything is queued; [`BulkWriter::add`]'s error
    /// ([`TypedError::Store`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use pk_codec::PartitionKey;
    /// use pk_codec::store::{BulkOptions, BulkWriter, MemoryStore, Typed};
    ///
    /// #[derive(PartitionKey, Debug, PartialEq)]
    /// #[pk(buckets(count = 16, hash(device_id), separator))]
    /// struct Reading {
    ///     #[pk(width = 6)]
    ///     device_id: u32,
    ///     #[pk(width = 13)]
    ///     ts: u64,
    /// }
    ///
    /// let store = Arc::new(MemoryStore::default());
    /// let writer = BulkWriter::new(Arc::clone(&store), BulkOptions::default())?;
    /// for ts in 1_700_000_000_000..1_700_000_000_100u64 {
    ///     let celsius = 20.0 + (ts % 10) as f64 / 10.0;
    ///     writer.add_typed(&Reading { device_id: 54, ts }, &celsius)?;
    /// }
    /// assert_eq!(writer.close().rows_written, 100);
    /// let typed = Typed::new(&*store);
    /// let read: Option<f64> = typed.get(&Reading { device_id: 54, ts: 1_700_000_000_042 })?;
    /// assert_eq!(read, Some(20.2));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_typed<K: PartitionKey, V: Storable + ?Sized>(
        &self,
        key: &K,
        value: &V,
    ) -> Result<(), TypedError> {
        Ok(self.add(stored_bytes(key)?, value_bytes(value)?)?)
    }

    /// Queues `value` at the key `layout` makes of `values` (in the layout's form, text or
    /// binary), as [`Typed::put_values`] would write it.
    ///
    /// # Errors
    ///
    /// As [`BulkWriter::add_typed`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::Arc;
    /// use pk_codec::Layout;
    /// use pk_codec::store::{BulkOptions, BulkWriter, MemoryStore, Typed};
    ///
    /// let layout: Layout =
    ///     "device_id: u32 width=6; ts: u64 width=13; buckets=16:hash(device_id):sep".parse()?;
    /// let key = [54u32.into(), 1_700_000_000_000u64.into()];
    /// let store = Arc::new(MemoryStore::default());
    /// let writer = BulkWriter::new(Arc::clone(&store), BulkOptions::default())?;
    /// writer.add_values(&layout, &key, "21.5 C")?;
    /// assert_eq!(writer.close().rows_written, 1);
    /// let read: Option<String> = Typed::new(&*store).get_values(&layout, &key)?;
    /// assert_eq!(read.as_deref(), Some("21.5 C"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn add_values<V: Storable + ?Sized>(
        &self,
        layout: &Layout,
        values: &[Value],
        value: &V,
    ) -> Result<(), TypedError> {
        Ok(self.add(layout.encode_bytes(values)?, value_bytes(value)?)?)
    }
}
