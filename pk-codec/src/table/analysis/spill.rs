//! Rows put in time order in bounded memory: `pk analyze --time` replays a dump in the order of
//! its times (ties by key, then by the row's bytes), whatever the order of its lines, so that its
//! report does not depend on how the dump was exported.
//!
//! Rows gather in memory up to a byte budget, are sorted by `(time, key, bytes)` and, when more rows
//! follow, written to an anonymous temporary file as a sorted run; at the end the runs are
//! merged. A full buffer is sorted and written on a thread of its own while the next one fills
//! (the rows keep coming while a run is sorted), so each of the two takes half the budget.
//! Memory: the budget, plus a read buffer per run. A run's row is its time as the difference
//! from the row before (zigzagged), its bytes and its key's length as LEB128 varints, then its
//! key: a dump's run takes about half the disk (and page cache) of fixed-width fields.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};

/// The read buffer of each run while merging.
const RUN_BUFFER: usize = 64 << 10;

/// Rows to put in `(time, key)` order.
pub(super) struct Spill {
    /// The rows in memory.
    buffer: Buffer,
    /// Bytes of one buffer: half the budget (the other half is the run being written).
    budget: usize,
    runs: Vec<File>,
    /// The run being sorted and written, if any.
    writing: Option<std::thread::JoinHandle<Result<File, String>>>,
    /// Rows pushed in all.
    pushed: u64,
}

/// Rows in memory (the spill's, or a batch of merged rows): their keys one after the other, and
/// `(time, start, length, bytes)` of each row.
#[derive(Default)]
struct Buffer {
    keys: Vec<u8>,
    rows: Vec<Row>,
}

/// A row in memory: its time, where its key is, and the bytes it stands for.
type Row = (i64, u32, u32, u64);

/// Bytes a row in memory takes besides its key.
const ROW_BYTES: usize = std::mem::size_of::<Row>();

impl Spill {
    /// A spill that keeps about `budget` bytes of rows in memory (at least 1 MiB).
    pub(super) fn new(budget: usize) -> Self {
        Self {
            buffer: Buffer::default(),
            budget: budget.max(1 << 20) / 2,
            runs: Vec::new(),
            writing: None,
            pushed: 0,
        }
    }

    /// Rows pushed so far.
    #[cfg(test)]
    const fn len(&self) -> u64 {
        self.pushed
    }

    /// Adds a row.
    ///
    /// # Errors
    ///
    /// When a run cannot be written to the temporary directory.
    pub(super) fn push(&mut self, time: i64, key: &[u8], bytes: u64) -> Result<(), String> {
        let held = &self.buffer;
        if held.keys.len() + key.len() > u32::MAX as usize
            || held.keys.len() + held.rows.len() * ROW_BYTES + key.len() + ROW_BYTES > self.budget
        {
            self.spill()?;
        }
        self.buffer.push(time, key, bytes, "a run")?;
        self.pushed += 1;
        Ok(())
    }

    /// Hands the rows in memory to a thread that sorts them and writes them as a run to a
    /// temporary file, once the run before is written; the next rows fill a fresh buffer.
    fn spill(&mut self) -> Result<(), String> {
        if self.buffer.rows.is_empty() {
            return Ok(());
        }
        self.written()?;
        let next = Buffer {
            keys: Vec::with_capacity(self.buffer.keys.capacity()),
            rows: Vec::with_capacity(self.buffer.rows.capacity()),
        };
        let buffer = std::mem::replace(&mut self.buffer, next);
        self.writing = Some(std::thread::spawn(move || buffer.write_run()));
        Ok(())
    }

    /// Waits for the run being written, if any, and keeps it.
    fn written(&mut self) -> Result<(), String> {
        if let Some(writing) = self.writing.take() {
            let run = writing
                .join()
                .unwrap_or_else(|_| Err("the thread writing a sorted run panicked".to_owned()))?;
            self.runs.push(run);
        }
        Ok(())
    }

    /// Calls `each` with every row (time, key, bytes) in `(time, key, bytes)` order.
    ///
    /// # Errors
    ///
    /// When a run cannot be written or read back, or `each` fails.
    pub(super) fn drain(
        mut self,
        mut each: impl FnMut(i64, &[u8], u64) -> Result<(), String>,
    ) -> Result<(), String> {
        if self.runs.is_empty() && self.writing.is_none() {
            self.buffer.sort();
            for (t, key, b) in self.buffer.iter() {
                each(t, key, b)?;
            }
            return Ok(());
        }
        self.spill()?;
        self.written()?;
        // Memory is only the heap of run heads, their buffers and the batches in flight from
        // here. The runs are merged on a thread of their own, beside the caller's work on the
        // rows (two cores: the drain takes the longer of the two).
        self.buffer = Buffer::default();
        let runs = std::mem::take(&mut self.runs);
        let (tx, rx) = std::sync::mpsc::sync_channel::<Buffer>(4);
        std::thread::scope(|s| {
            let merger = s.spawn(move || merge(runs, &tx));
            // Each batch in order; a failure of `each` stops the merge (its sends then fail).
            let mut consumed = Ok(());
            for batch in rx.iter() {
                for (t, key, b) in batch.iter() {
                    consumed = each(t, key, b);
                    if consumed.is_err() {
                        break;
                    }
                }
                if consumed.is_err() {
                    break;
                }
            }
            drop(rx);
            let merged = merger
                .join()
                .unwrap_or_else(|_| Err("the merge of the sorted runs panicked".to_owned()));
            consumed.and(merged)
        })
    }
}

impl Buffer {
    /// Adds a row; `whole` names the buffer in the error when it would pass 4 GiB.
    fn push(&mut self, time: i64, key: &[u8], bytes: u64, whole: &str) -> Result<(), String> {
        let start = u32::try_from(self.keys.len()).map_err(|_| format!("{whole} past 4 GiB"))?;
        let len = u32::try_from(key.len()).map_err(|_| "a key past 4 GiB")?;
        self.keys.extend_from_slice(key);
        self.rows.push((time, start, len, bytes));
        Ok(())
    }

    /// The key of `row`.
    fn key(&self, &(_, start, len, _): &Row) -> &[u8] {
        &self.keys[start as usize..(start + len) as usize]
    }

    /// Each row's time, key and bytes, in the buffer's order.
    fn iter(&self) -> impl Iterator<Item = (i64, &[u8], u64)> {
        self.rows.iter().map(|row| (row.0, self.key(row), row.3))
    }

    /// Sorts the rows by `(time, key, bytes)`.
    fn sort(&mut self) {
        let mut rows = std::mem::take(&mut self.rows);
        rows.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| self.key(a).cmp(self.key(b)))
                .then(a.3.cmp(&b.3))
        });
        self.rows = rows;
    }

    /// The rows, sorted, as a run in a temporary file, read from its start.
    fn write_run(mut self) -> Result<File, String> {
        self.sort();
        let why = |e: std::io::Error| {
            format!(
                "cannot write a sorted run to the temporary directory {} ({e}); set TMPDIR to a directory with room for about the size of the keys",
                std::env::temp_dir().display()
            )
        };
        let file = tempfile::tempfile().map_err(why)?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        let mut previous = 0i64;
        let mut head = Vec::with_capacity(30);
        for (t, key, b) in self.iter() {
            head.clear();
            put_varint(&mut head, zigzag(t.wrapping_sub(previous)));
            put_varint(&mut head, b);
            put_varint(&mut head, key.len() as u64);
            previous = t;
            out.write_all(&head).map_err(why)?;
            out.write_all(key).map_err(why)?;
        }
        let mut file = out.into_inner().map_err(|e| why(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(why)?;
        Ok(file)
    }
}

/// Rows handed from the merge to the caller at once.
const MERGED_ROWS: usize = 8_192;

/// Merges sorted runs into batches sent to `tx`, in `(time, key, bytes)` order; stops quietly when
/// the receiver is gone.
fn merge(runs: Vec<File>, tx: &std::sync::mpsc::SyncSender<Buffer>) -> Result<(), String> {
    let why = |e: std::io::Error| format!("cannot read back a sorted run: {e}");
    let mut readers: Vec<BufReader<File>> = runs
        .into_iter()
        .map(|f| BufReader::with_capacity(RUN_BUFFER, f))
        .collect();
    let mut heap = BinaryHeap::with_capacity(readers.len());
    // Each run's last time read (its rows' times are differences from the row before).
    let mut previous = vec![0i64; readers.len()];
    for (i, r) in readers.iter_mut().enumerate() {
        if let Some((t, key, b)) = read_row(r, previous[i], Vec::new()).map_err(why)? {
            previous[i] = t;
            heap.push(Reverse((t, key, b, i)));
        }
    }
    let mut batch = Buffer::default();
    while let Some(Reverse((t, key, b, i))) = heap.pop() {
        batch.push(t, &key, b, "a merged batch")?;
        if let Some((t, key, b)) = read_row(&mut readers[i], previous[i], key).map_err(why)? {
            previous[i] = t;
            heap.push(Reverse((t, key, b, i)));
        }
        if batch.rows.len() == MERGED_ROWS && tx.send(std::mem::take(&mut batch)).is_err() {
            return Ok(());
        }
    }
    if !batch.rows.is_empty() {
        let _ = tx.send(batch);
    }
    Ok(())
}

/// The next row of a run whose row before was at `previous`, its key read into `key`'s buffer;
/// `None` at the end of the run.
fn read_row(
    r: &mut impl Read,
    previous: i64,
    mut key: Vec<u8>,
) -> std::io::Result<Option<(i64, Vec<u8>, u64)>> {
    let Some(delta) = get_varint(r)? else {
        return Ok(None);
    };
    let t = previous.wrapping_add(unzigzag(delta));
    let truncated = || std::io::Error::from(std::io::ErrorKind::UnexpectedEof);
    let b = get_varint(r)?.ok_or_else(truncated)?;
    let len = get_varint(r)?.ok_or_else(truncated)?;
    let len = usize::try_from(len).map_err(|_| std::io::Error::other("a key past memory"))?;
    key.clear();
    key.resize(len, 0);
    r.read_exact(&mut key)?;
    Ok(Some((t, key, b)))
}

/// `v` with its sign in the low bit: small magnitudes, either sign, make small numbers.
const fn zigzag(v: i64) -> u64 {
    (v << 1 ^ v >> 63) as u64
}

const fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// Appends `v` as a LEB128 varint: seven bits a byte, low first, the high bit set on all but
/// the last.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A LEB128 varint from `r`; `None` at the end of the input before its first byte.
fn get_varint(r: &mut impl Read) -> std::io::Result<Option<u64>> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let mut byte = [0u8; 1];
        match r.read_exact(&mut byte) {
            Ok(()) => {}
            Err(e) if shift == 0 && e.kind() == std::io::ErrorKind::UnexpectedEof => {
                return Ok(None);
            }
            Err(e) => return Err(e),
        }
        v |= u64::from(byte[0] & 0x7f) << shift;
        if byte[0] & 0x80 == 0 {
            return Ok(Some(v));
        }
    }
    Err(std::io::Error::other("a varint longer than 64 bits"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every row of `spill`, in the order it gives them.
    fn drained(spill: Spill) -> Vec<(i64, Vec<u8>, u64)> {
        let mut got = Vec::new();
        spill
            .drain(|t, k, b| {
                got.push((t, k.to_vec(), b));
                Ok(())
            })
            .unwrap();
        got
    }

    /// Times, bytes and keys at their extremes come back from the runs as they went in: the
    /// differences between times wrap, the varints take every bit.
    #[test]
    fn extreme_rows_survive_the_runs() {
        let times = [i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX];
        let bytes = [0, 1, 127, 128, 16_383, 16_384, u64::MAX - 1, u64::MAX];
        let keys: Vec<Vec<u8>> = vec![vec![], vec![0], vec![0xff; 127], vec![7; 300]];
        let mut rows = Vec::new();
        for (i, &t) in times.iter().enumerate() {
            for (j, &b) in bytes.iter().enumerate() {
                rows.push((t, keys[(i + j) % keys.len()].clone(), b));
            }
        }
        // Many times over, so that the rows fill several runs of the smallest budget.
        let rows: Vec<_> = (0..400).flat_map(|_| rows.iter().cloned()).collect();
        let mut expected = rows.clone();
        expected.sort();
        let mut spill = Spill::new(0);
        for (t, k, b) in rows.iter().rev() {
            spill.push(*t, k, *b).unwrap();
        }
        assert!(spill.runs.len() + usize::from(spill.writing.is_some()) > 1);
        assert_eq!(drained(spill), expected);
        for v in times {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        for v in bytes {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(get_varint(&mut out.as_slice()).unwrap(), Some(v));
        }
    }

    /// Rows come out in `(time, key, bytes)` order whether they stayed in memory or went through
    /// many runs.
    #[test]
    fn rows_come_out_sorted_through_runs() {
        let mut next = 7u64;
        let mut draw = move || {
            next = next
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            next >> 33
        };
        let rows: Vec<(i64, Vec<u8>, u64)> = (0..200_000)
            .map(|_| {
                let t = (draw() % 1_000) as i64 - 500;
                let key = format!("k{}", draw() % 5_000).into_bytes();
                (t, key, draw() % 3)
            })
            .collect();
        let mut expected = rows.clone();
        expected.sort();
        for budget in [0, usize::MAX] {
            let mut spill = Spill::new(budget);
            for (t, k, b) in &rows {
                spill.push(*t, k, *b).unwrap();
            }
            assert_eq!(spill.len(), rows.len() as u64);
            let spilled = !spill.runs.is_empty() || spill.writing.is_some();
            assert_eq!(spilled, budget == 0, "budget {budget}");
            assert_eq!(drained(spill), expected, "budget {budget}");
        }
    }
}
