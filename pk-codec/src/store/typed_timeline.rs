//! [`TypedTimeline`]: typed rows of a [`Timeline`] over any [`RangeStore`]s: a row put by its
//! values (its key placed by the timeline, in its period's table and form), got back, and read
//! across periods with [`scan_timeline`], each value in the [value format](super::value), so
//! nobody copies the format by hand.

use std::ops::ControlFlow;

use serde::de::DeserializeOwned;

use super::timeline::{TimelineCursor, scan_timeline};
use super::typed::TypedError;
use super::value::{self, Storable};
use super::{RangeStore, StoreError, StoreErrorKind};
use crate::kinds::Value;
use crate::timeline::{Placed, Timeline, Visit};

/// Typed rows of a [`Timeline`]: each row put at its time (or by its time field,
/// [`Timeline::with_time_field`]) into the table of the period in force then, its value in the
/// [value format](super::value); read back one by one or across periods in typed order. The
/// tables are any [`RangeStore`]s, found by name through `stores`.
///
/// # Examples
///
/// ```
/// use std::ops::Bound::Unbounded;
/// use std::ops::ControlFlow;
/// use pk_codec::{Layout, Value, timeline::{Period, Timeline}};
/// use pk_codec::store::{MemoryStore, TypedTimeline};
///
/// let text: Layout = "card: u32; ts: u64".parse()?;
/// let binary: Layout = "card: u32; ts: u64; buckets=4:hash(card); form=binary".parse()?;
/// let timeline = Timeline::new(vec![Period::new(0, "old", text), Period::new(100, "new", binary)])?
///     .with_time_field("ts")?;
/// let (old, new) = (MemoryStore::default(), MemoryStore::default());
/// let rows = TypedTimeline::new(&timeline, |table: &str| match table {
///     "old" => Some(&old),
///     "new" => Some(&new),
///     _ => None,
/// });
/// for ts in [150u64, 50, 120] {
///     rows.put(&[Value::from(7u32), Value::from(ts)], &(ts as f64 / 10.0))?;
/// }
/// assert_eq!(rows.get::<f64>(&[Value::from(7u32), Value::from(120u64)])?, Some(12.0));
/// let visits = timeline.ranges(0..200, &[Value::from(7u32)], Unbounded, Unbounded)?;
/// let mut seen = Vec::new();
/// rows.scan::<f64>(&visits, 10, None, |values, reading| {
///     seen.push((values[1].as_u64().unwrap(), reading));
///     ControlFlow::Continue(())
/// })?;
/// assert_eq!(seen, [(50, 5.0), (120, 12.0), (150, 15.0)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy)]
pub struct TypedTimeline<'t, F> {
    timeline: &'t Timeline,
    stores: F,
}

impl<'t, 's, S, F> TypedTimeline<'t, F>
where
    S: RangeStore + ?Sized + 's,
    F: Fn(&str) -> Option<&'s S> + Copy,
{
    /// Typed rows of `timeline`, its tables answered by name by `stores`.
    #[must_use]
    pub const fn new(timeline: &'t Timeline, stores: F) -> Self {
        Self { timeline, stores }
    }

    /// The store of a placed row's table.
    fn store(&self, table: &str) -> Result<&'s S, TypedError> {
        (self.stores)(table).ok_or_else(|| {
            TypedError::Store(StoreError::new(
                StoreErrorKind::Invalid,
                format!("no store for table {table:?}, which the timeline writes"),
            ))
        })
    }

    /// Puts a row at `time_ms` ([`Timeline::encode`]: the period in force then; with a time
    /// field, the field must agree), its value in the value format. Answers where it went.
    ///
    /// # Errors
    ///
    /// [`TypedError::Timeline`] for a time, values or key the timeline refuses;
    /// [`TypedError::Value`] for a value the format refuses (nothing is written);
    /// [`TypedError::Store`].
    pub fn put_at<V: Storable + ?Sized>(
        &self,
        time_ms: i64,
        values: &[Value],
        value: &V,
    ) -> Result<Placed<'t>, TypedError> {
        let placed = self.timeline.encode(time_ms, values)?;
        self.write(&placed, value)?;
        Ok(placed)
    }

    /// Puts a row placed by its own time field ([`Timeline::place`]), its value in the value
    /// format. Answers where it went.
    ///
    /// # Errors
    ///
    /// As [`TypedTimeline::put_at`]; [`TypedError::Timeline`] with
    /// [`TimelineError::NoTimeField`](crate::timeline::TimelineError::NoTimeField) for a
    /// timeline without a time field.
    pub fn put<V: Storable + ?Sized>(
        &self,
        values: &[Value],
        value: &V,
    ) -> Result<Placed<'t>, TypedError> {
        let placed = self.timeline.place(values)?;
        self.write(&placed, value)?;
        Ok(placed)
    }

    fn write<V: Storable + ?Sized>(
        &self,
        placed: &Placed<'_>,
        value: &V,
    ) -> Result<(), TypedError> {
        let bytes = value::to_bytes(value)?;
        self.store(placed.table)?.put(&placed.key, &bytes)?;
        Ok(())
    }

    /// The value of the row at `time_ms` with `values`, if any.
    ///
    /// # Errors
    ///
    /// As [`TypedTimeline::put_at`]; [`TypedError::Value`] for a stored value not of type `V`.
    pub fn get_at<V: DeserializeOwned>(
        &self,
        time_ms: i64,
        values: &[Value],
    ) -> Result<Option<V>, TypedError> {
        let placed = self.timeline.encode(time_ms, values)?;
        self.read(&placed)
    }

    /// The value of the row placed by its own time field, if any.
    ///
    /// # Errors
    ///
    /// As [`TypedTimeline::put`]; [`TypedError::Value`] for a stored value not of type `V`.
    pub fn get<V: DeserializeOwned>(&self, values: &[Value]) -> Result<Option<V>, TypedError> {
        let placed = self.timeline.place(values)?;
        self.read(&placed)
    }

    fn read<V: DeserializeOwned>(&self, placed: &Placed<'_>) -> Result<Option<V>, TypedError> {
        match self.store(placed.table)?.get(&placed.key)? {
            Some(bytes) => Ok(Some(value::from_bytes(&bytes)?)),
            None => Ok(None),
        }
    }

    /// Reads the rows of `visits` ([`Timeline::ranges`]) with [`scan_timeline`], in typed order
    /// across periods, calling `visit` with each row's values and value; paged and resumable as
    /// [`scan_timeline`] is.
    ///
    /// # Errors
    ///
    /// As [`scan_timeline`]; [`TypedError::StoredValue`] for a stored value not of type `V`,
    /// naming its key.
    pub fn scan<V: DeserializeOwned>(
        &self,
        visits: &[Visit],
        page: usize,
        cursor: Option<&TimelineCursor>,
        mut visit: impl FnMut(&[Value], V) -> ControlFlow<()>,
    ) -> Result<Option<TimelineCursor>, TypedError> {
        let mut failed = None;
        let next = scan_timeline(self.timeline, visits, self.stores, page, cursor, |row| {
            match value::from_bytes(row.value) {
                Ok(v) => visit(row.values, v),
                Err(error) => {
                    let mut key = row.visit.prefix().as_bytes().to_vec();
                    key.extend_from_slice(row.key);
                    failed = Some(TypedError::StoredValue { key, error });
                    ControlFlow::Break(())
                }
            }
        })?;
        match failed {
            Some(e) => Err(e),
            None => Ok(next),
        }
    }
}
