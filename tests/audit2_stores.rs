//! The second adversarial pass over the store bridges, the bucket merge, `BulkWriter` and the
//! `pk` command line: each test failed before the fix its comment names (CHANGELOG, "Fixed").

use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::time::Duration;

use pk_codec::KeyRange;
use pk_codec::Layout;
use pk_codec::store::{
    BulkOptions, BulkWriter, MemoryStore, RangePage, RangeQuery, RangeStore, ReaderThreads,
    StoreError, StoreErrorKind, WriteOp, scan_ranges,
};
use proptest::prelude::*;

mod support;

use support::{pk, stderr, stdout, temp_dir};

// ---- BulkWriter -------------------------------------------------------------------------------

/// A memory store whose batches hold at most `max_batch` rows and whose batch writes wait while
/// `closed` is set.
struct Gated {
    inner: MemoryStore,
    max_batch: usize,
    closed: AtomicBool,
}

impl RangeStore for Gated {
    fn max_batch(&self) -> usize {
        self.max_batch
    }
    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.inner.put(key, value)
    }
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key)
    }
    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        self.inner.delete(key)
    }
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        while self.closed.load(SeqCst) {
            std::thread::sleep(Duration::from_millis(1));
        }
        self.inner.batch_write(ops)
    }
    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.inner.range(query)
    }
}

/// A worker gathered rows until its queue held `BulkOptions::max_batch_rows`, where the batch it
/// writes is the smaller of that and the store's `max_batch()`: with options asking for more
/// rows than the store takes (`usize::MAX`: "as many as the store allows"), the worker drained
/// its channel into its own queue as fast as the producer filled it and wrote nothing until the
/// producer paused for a flush interval. `add` never waited: the back-pressure of `queue_rows`
/// was gone, and the whole import sat in memory. Now the worker writes as soon as it holds a
/// store-sized batch, and a producer ahead of a stuck store waits after a few batches.
#[test]
fn bulk_writer_backpressure_holds_when_the_store_takes_smaller_batches() {
    for max_batch_rows in [64, usize::MAX] {
        let store = Arc::new(Gated {
            inner: MemoryStore::default(),
            max_batch: 2,
            closed: AtomicBool::new(true),
        });
        let writer = BulkWriter::new(
            Arc::clone(&store),
            BulkOptions {
                workers: Some(1),
                max_batch_rows: Some(max_batch_rows),
                queue_rows: 2,
                flush_interval: Duration::from_millis(200),
                ..BulkOptions::default()
            },
        )
        .unwrap();
        let added = std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..1_000u32 {
                    writer.add(format!("{i:04}"), Vec::new()).unwrap();
                }
            });
            std::thread::sleep(Duration::from_millis(400));
            let added = writer.stats().rows_added;
            store.closed.store(false, SeqCst);
            added
        });
        let stats = writer.close();
        assert_eq!((stats.rows_written, stats.rows_lost()), (1_000, 0));
        // One batch in the worker's hands, one queued, one being staged (and the row of the
        // `add` that waits): 2 rows each.
        assert!(
            added <= 8,
            "max_batch_rows {max_batch_rows}: {added} rows were taken while the store wrote none"
        );
    }
}

/// A memory store whose batches fail row by row, as busy, on a seeded schedule (`busy_pct` in
/// 100): a store that reports per-row errors (Tablestore's BatchWriteRow does).
struct BusyRows {
    inner: MemoryStore,
    draws: AtomicU64,
    busy_pct: u64,
}

impl RangeStore for BusyRows {
    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.inner.put(key, value)
    }
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key)
    }
    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        self.inner.delete(key)
    }
    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        Ok(ops
            .iter()
            .map(|op| {
                if mix(self.draws.fetch_add(1, SeqCst)) % 100 < self.busy_pct {
                    Err(StoreError::new(StoreErrorKind::Busy, "busy row"))
                } else {
                    self.inner.batch_write(std::slice::from_ref(op))?.remove(0)
                }
            })
            .collect())
    }
    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        self.inner.range(query)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(48), ..ProptestConfig::default() })]

    /// `BulkWriter` put a row refused as busy back at the end of its lane's queue, behind the
    /// rows of the same key added after it (in the same batch, already written, or queued):
    /// the retry then overwrote the key's later value, so an import that updates a key
    /// (`Dispatch::HashOfKey`, which sends one key's rows to one worker) could end with the
    /// key's older value, the last one lost. Now a retried row goes before its key's later rows
    /// (a later row already written is written again after it). The property: any rows over a
    /// few keys, any batch size and worker count, rows refused at random; once the writer is
    /// closed each key holds the value of its last row, and every row was reported once.
    #[test]
    fn bulk_writer_keeps_the_last_write_of_a_key_through_retries(
        rows in prop::collection::vec(0u8..6, 1..80),
        workers in 1usize..4,
        max_batch_rows in 1usize..9,
        busy_pct in 0u64..50,
        seed in any::<u64>(),
    ) {
        let store = Arc::new(BusyRows { inner: MemoryStore::default(), draws: AtomicU64::new(seed), busy_pct });
        let reported = Arc::new(AtomicU64::new(0));
        let writer = {
            let reported = Arc::clone(&reported);
            BulkWriter::with_callback(
                Arc::clone(&store),
                BulkOptions {
                    workers: Some(workers),
                    max_batch_rows: Some(max_batch_rows),
                    flush_interval: Duration::from_millis(1),
                    backoff: pk_codec::store::Backoff::Jittered {
                        base: Duration::from_micros(1),
                        cap: Duration::from_micros(50),
                    },
                    ..BulkOptions::default()
                },
                move |o| {
                    assert!(o.result.is_ok(), "{o:?}");
                    reported.fetch_add(1, SeqCst);
                },
            )
            .unwrap()
        };
        let mut last = std::collections::BTreeMap::new();
        for (i, &k) in rows.iter().enumerate() {
            let value = (i as u32).to_be_bytes().to_vec();
            writer.add(format!("k{k}"), value.clone()).unwrap();
            last.insert(format!("k{k}"), value);
        }
        let stats = writer.close();
        prop_assert_eq!((stats.rows_written, stats.rows_lost()), (rows.len() as u64, 0));
        prop_assert_eq!(reported.load(SeqCst), rows.len() as u64);
        for (k, v) in &last {
            let stored = store.inner.get(k).unwrap();
            prop_assert_eq!(stored.as_ref(), Some(v), "key {}", k);
        }
    }
}

// ---- scan_ranges ------------------------------------------------------------------------------

/// A memory store whose range reads fail as busy on a seeded schedule (`fail_pct` in 100).
struct Flaky {
    inner: MemoryStore,
    draws: AtomicU64,
    fail_pct: u64,
}

fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl RangeStore for Flaky {
    fn reads_wait_on_io(&self) -> bool {
        false
    }
    fn put(&self, key: &str, value: &[u8]) -> Result<(), StoreError> {
        self.inner.put(key, value)
    }
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.inner.get(key)
    }
    fn delete(&self, key: &str) -> Result<bool, StoreError> {
        self.inner.delete(key)
    }
    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        if mix(self.draws.fetch_add(1, SeqCst)) % 100 < self.fail_pct {
            return Err(StoreError::new(StoreErrorKind::Busy, "flaky"));
        }
        self.inner.range(query)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(96), ..ProptestConfig::default() })]

    /// `scan_ranges` documents that a `visit` returning `Break` makes the read return a cursor
    /// resuming right after the last row visited. It read the next page of the range whose row
    /// was just visited before looking at the `Break`: when that row ended its page and the
    /// read failed, the scan answered the store's error instead, the rows it had visited could
    /// only be read again, and a caller resuming from its last cursor saw them twice. Now a
    /// `Break` reads nothing more. The property: buckets holding the same natural keys (rows
    /// that tie across buckets), any page size, a visitor that stops every `stop` rows, reads
    /// that fail at random, inline or on reader threads; a caller that resumes from each
    /// cursor and restarts a failed call from its last cursor sees every row once, in order,
    /// and never an error after it stopped the read.
    #[test]
    fn a_scan_stopped_by_its_visitor_returns_its_cursor(
        rows in prop::collection::btree_set((0u8..4, 0u16..40), 0..60),
        buckets in 1u8..5,
        page in 1usize..6,
        stop in 1usize..8,
        fail_pct in 0u64..40,
        seed in any::<u64>(),
        threads in any::<bool>(),
    ) {
        let store = Flaky { inner: MemoryStore::default(), draws: AtomicU64::new(seed), fail_pct };
        let mut want: Vec<(u16, u8)> = Vec::new();
        for &(b, n) in &rows {
            if b < buckets {
                store.inner.put(&format!("{b},{n:03}"), &[b]).unwrap();
                want.push((n, b));
            }
        }
        // Natural key first, ties in range order.
        want.sort_unstable();
        let ranges: Vec<KeyRange> = (0..buckets)
            .map(|b| KeyRange { start: format!("{b},"), end: Some(format!("{b}-")) })
            .collect();
        let layout: Layout = "n: u16 width=3; buckets=4:mod(n):sep".parse().unwrap();
        let prefix = layout.shape().prefix();
        prop_assert_eq!(prefix.len(), 2);
        let threaded = ReaderThreads(&store);
        let mut seen: Vec<(u16, u8)> = Vec::new();
        let mut cursor = None;
        let mut finished = false;
        for _ in 0..10_000 {
            let mut call = Vec::new();
            let mut stopped = false;
            let visit = |key: &str, value: &[u8]| {
                call.push((key[2..].parse::<u16>().unwrap(), value[0]));
                if call.len() == stop {
                    stopped = true;
                    ControlFlow::Break(())
                } else {
                    ControlFlow::Continue(())
                }
            };
            let result = if threads {
                scan_ranges(&threaded, prefix, &ranges, page, cursor.as_ref(), visit)
            } else {
                scan_ranges(&store, prefix, &ranges, page, cursor.as_ref(), visit)
            };
            match result {
                Err(e) => prop_assert!(!stopped, "the visitor stopped the read, which answered {e}"),
                Ok(next) => {
                    seen.extend(call);
                    match next {
                        Some(c) => cursor = Some(c),
                        None => {
                            finished = true;
                            break;
                        }
                    }
                }
            }
        }
        prop_assert!(finished);
        prop_assert_eq!(seen, want);
    }
}

// ---- RangeStore implementations against the reference ----------------------------------------

/// Keys over an alphabet that makes prefixes, NUL bytes, DEL and multi-byte characters, which
/// sort bytewise in a way that differs from a character-wise order.
fn wide_key() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec!["\0", "a", "b", "\u{7f}", "\u{e9}", "\u{10ffff}", ","]),
        0..4,
    )
    .prop_map(|parts| parts.concat())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(64), ..ProptestConfig::default() })]

    /// The table model and redb answer each page of a range read as `MemoryStore` does, with
    /// keys that are prefixes of each other, NUL and non-ASCII bytes, the empty key, any
    /// bounds (empty and inverted ranges too), any resume key a caller may pass (not only one
    /// a page gave), limits of 1 to 4 and `usize::MAX`, forward and backward.
    #[test]
    fn every_store_pages_as_the_reference_over_wide_keys(
        keys in prop::collection::btree_set(wide_key(), 0..24),
        start in wide_key(),
        end in prop::option::of(wide_key()),
        resume in prop::option::of(wide_key()),
        limit in prop::sample::select(vec![1usize, 2, 3, 4, usize::MAX]),
        backward in any::<bool>(),
    ) {
        use pk_codec::store::{Direction, RedbStore};
        use pk_codec::table::{Table, TableOptions};
        let table = Table::single_string_key("pk", TableOptions::default().split_size_bytes(64)).unwrap();
        let redb = RedbStore::in_memory().unwrap();
        let memory = MemoryStore::default();
        for (i, k) in keys.iter().enumerate() {
            let value = if i % 3 == 0 { Vec::new() } else { k.as_bytes().to_vec() };
            memory.put(k, &value).unwrap();
            redb.put(k, &value).unwrap();
            RangeStore::put(&table, k, &value).unwrap();
        }
        let direction = if backward { Direction::Backward } else { Direction::Forward };
        let base = RangeQuery::new(&start, end.as_deref()).direction(direction).limit(limit);
        // Page by page from the given resume key, each page as the reference's.
        let mut at = resume.clone();
        for _ in 0..40 {
            let query = base.clone().resume(at.as_deref());
            let want = memory.range(&query).unwrap();
            prop_assert_eq!(&redb.range(&query).unwrap(), &want, "redb {:?}", query);
            prop_assert_eq!(&table.range(&query).unwrap(), &want, "table {:?}", query);
            at = want.next;
            if at.is_none() {
                break;
            }
        }
    }
}

// ---- pk -------------------------------------------------------------------------------------

/// The CSV reader ends a record at `\r`, `\n` or `\r\n`, but the cap on a line's length
/// (16 MiB, README) counted bytes since the last `\n` only: a dump with classic Mac line ends
/// (`\r` alone) larger than 16 MiB was refused as "a line is longer than 16777216 bytes" though
/// its every line was short. Now `\r` ends a line too for the cap of a CSV dump (with
/// `--lines`, where a line ends at `\n`, it does not).
#[test]
fn pk_analyze_reads_a_large_dump_whose_lines_end_with_cr() {
    let dir = temp_dir("cr");
    let filler = "x".repeat(1_000);
    let rows = 17_500;
    let mut body = String::with_capacity(rows * 1_020);
    body.push_str("k,pad\r");
    for i in 0..rows {
        body.push_str(&format!("{i:08},{filler}\r"));
    }
    assert!(body.len() > 16 << 20);
    let file = dir.join("cr.csv");
    std::fs::write(&file, &body).unwrap();
    let o = pk(&["analyze", file.to_str().unwrap(), "--key", "k", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["rows"], serde_json::json!(rows));
    assert_eq!(json["malformed_rows"], serde_json::json!(0));
    // A CR-only file of keys under --lines is still one line (lines end at `\n`), refused by
    // the cap rather than read whole.
    let o = pk(&["analyze", "--lines", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("longer than"), "{}", stderr(&o));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `pk encode` (and `pk analyze --design`) read an `f32` or `f64` field with Rust's float
/// parser, which rounds a finite number beyond the type's range to infinity: `1e40` for an
/// `f32` was encoded as the key of `inf`, without a word. A number too large for the field
/// is refused, naming the field; infinities written as such (`inf`, `-infinity`) still
/// encode.
#[test]
fn pk_encode_refuses_a_float_too_large_for_its_field() {
    for (spec, text) in [
        ("x: f32", "1e40"),
        ("x: f32", "-3.5e38"),
        ("x: f64", "1e309"),
        ("x: f64", "-1.8e308"),
    ] {
        let o = pk(&["encode", "--spec", spec, "--", text]);
        assert_eq!(o.status.code(), Some(1), "{spec} {text}: {}", stdout(&o));
        assert!(stderr(&o).contains("field x"), "{}", stderr(&o));
    }
    for (spec, text, inf) in [
        ("x: f32", "inf", "inf"),
        ("x: f32", "Infinity", "inf"),
        ("x: f64", "+inf", "inf"),
        ("x: f32", "3.4028235e38", "3.4028235e38"),
    ] {
        let o = pk(&["encode", "--spec", spec, text]);
        assert_eq!(o.status.code(), Some(0), "{spec} {text}: {}", stderr(&o));
        let back = pk(&["encode", "--spec", spec, inf]);
        assert_eq!(stdout(&o), stdout(&back));
    }
}

/// `pk analyze` found a design's bucket prefix by reading its spec text for `buckets=`, where
/// the spec parser takes spaces around the `=` (and inside `mod( ts )`): a design written
/// `buckets = 16:mod(ts)` was analyzed under its 16 buckets, but its report lost the bucket
/// occupancy and the "rows collapsed" diagnosis the README promises a bucketed design. The
/// prefix is now read from the parsed layout, so every spelling reports the same.
#[test]
fn pk_analyze_diagnoses_buckets_however_the_spec_is_spaced() {
    let dir = temp_dir("spaced");
    let mut body = String::from("ts,x\n");
    for i in 1..=200 {
        body.push_str(&format!("{},a\n", i * 60_000));
    }
    let file = dir.join("minutes.csv");
    std::fs::write(&file, body).unwrap();
    let diagnostics = |design: &str| {
        let o = pk(&[
            "analyze",
            file.to_str().unwrap(),
            "--time",
            "ts",
            "--design",
            design,
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{design}: {}", stderr(&o));
        let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        json["diagnostics"].clone()
    };
    let canonical = diagnostics("ts: u64 width=13; buckets=16:mod(ts)");
    let text = canonical.to_string();
    assert!(text.contains("buckets: 1 of 16 used"), "{text}");
    assert!(text.contains("rows collapsed"), "{text}");
    for spaced in [
        "ts: u64 width=13; buckets = 16:mod(ts)",
        "ts: u64 width=13; buckets =16:mod( ts )",
        " ts : u64 width=13 ;  buckets  =  16:mod(ts)  ",
    ] {
        assert_eq!(diagnostics(spaced), canonical, "{spaced}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- EtcdStore, against a model of etcd's JSON gateway ---------------------------------------

/// A model of etcd's JSON gateway (`/v3/kv/put` and `/v3/kv/range`) on loopback, as etcd
/// documents its range: no `range_end` reads the one key, `range_end` `"\0"` every key from
/// `key` on, otherwise `[key, range_end)`; `limit` 0 is no limit; keys sorted bytewise,
/// descending when asked. Enough to check the requests `EtcdStore` builds, without a cluster.
#[cfg(feature = "etcd")]
mod etcd_model {
    use std::collections::BTreeMap;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::{Arc, Mutex};

    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

    fn b64(bytes: &[u8]) -> String {
        let mut out = String::with_capacity(bytes.len() / 3 * 4 + 4);
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |n, (i, &b)| n | u32::from(b) << (16 - 8 * i));
            for i in 0..4 {
                if i <= chunk.len() {
                    out.push(B64[(n >> (18 - 6 * i) & 63) as usize] as char);
                } else {
                    out.push('=');
                }
            }
        }
        out
    }

    fn unb64(text: &str) -> Vec<u8> {
        let mut table = [u8::MAX; 256];
        for (i, &c) in B64.iter().enumerate() {
            table[usize::from(c)] = i as u8;
        }
        let mut bits = 0u32;
        let mut n = 0;
        let mut out = Vec::with_capacity(text.len() / 4 * 3);
        for c in text.bytes().filter(|&c| c != b'=') {
            let v = table[usize::from(c)];
            assert!(v < 64, "base64");
            bits = bits << 6 | u32::from(v);
            n += 6;
            if n >= 8 {
                n -= 8;
                out.push((bits >> n) as u8);
            }
        }
        out
    }

    /// Starts the gateway; its endpoint.
    pub(crate) fn start() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let kv: Arc<Mutex<BTreeMap<Vec<u8>, String>>> = Arc::default();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { return };
                let kv = Arc::clone(&kv);
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut path = String::new();
                    let mut length = 0;
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    path.push_str(line.split(' ').nth(1).unwrap_or(""));
                    loop {
                        line.clear();
                        reader.read_line(&mut line).unwrap();
                        if line.trim().is_empty() {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    let request: serde_json::Value = serde_json::from_slice(&body).unwrap();
                    let text = answer(&path, &request, &mut kv.lock().unwrap());
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
                        text.len()
                    );
                });
            }
        });
        endpoint
    }

    /// The answer to `request`, as the gateway's JSON text (built by hand: the values are
    /// kept as the base64 text they came in, and a large answer stays quick in a debug build).
    fn answer(
        path: &str,
        request: &serde_json::Value,
        kv: &mut BTreeMap<Vec<u8>, String>,
    ) -> String {
        let text = |name: &str| request.get(name).and_then(|v| v.as_str());
        let key = text("key").map(unb64).unwrap_or_default();
        match path {
            "/v3/kv/put" => {
                assert!(!key.is_empty(), "etcd: key is not provided");
                kv.insert(key, text("value").unwrap_or_default().to_owned());
                "{}".to_owned()
            }
            "/v3/kv/range" => {
                let end = text("range_end").map(unb64).unwrap_or_default();
                let mut rows: Vec<(&Vec<u8>, &String)> = if end.is_empty() {
                    kv.get_key_value(&key).into_iter().collect()
                } else if end == [0] {
                    kv.range(key..).collect()
                } else if key < end {
                    kv.range(key..end).collect()
                } else {
                    Vec::new()
                };
                if text("sort_order") == Some("DESCEND") {
                    rows.reverse();
                }
                let limit = request
                    .get("limit")
                    .and_then(serde_json::Value::as_u64)
                    .unwrap_or(0);
                if limit > 0 {
                    rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
                }
                let kvs: Vec<String> = rows
                    .into_iter()
                    .map(|(k, v)| format!("{{\"key\":\"{}\",\"value\":\"{v}\"}}", b64(k)))
                    .collect();
                format!("{{\"kvs\":[{}]}}", kvs.join(","))
            }
            other => panic!("the model has no {other}"),
        }
    }
}

/// `EtcdStore` translated a range's exclusive end `"\0"` (or the inclusive top `""` of a
/// backward read resumed at `""`) into etcd's `range_end` `"\0"`, which etcd reads as "every
/// key from `key` on": `RangeQuery::new("", Some("\0"))`, which holds no key etcd can store,
/// answered every key in the store, and so did a backward read resumed at `""`. A range whose
/// end is at or below its first key in etcd's terms (the empty start is sent as `"\0"`) is
/// now empty without a request. The property compares the adapter, against a model of the
/// gateway, with `MemoryStore` for keys and bounds near the bottom of the key space.
#[cfg(feature = "etcd")]
#[test]
fn etcd_ranges_at_the_bottom_of_the_key_space_hold_only_their_keys() {
    use pk_codec::store::{Direction, EtcdStore};
    let store = EtcdStore::new([etcd_model::start()]).unwrap();
    let memory = MemoryStore::default();
    let keys = ["\0", "\0\0", "\0a", "a", "a\0", "b"];
    for k in keys {
        store.put(k, k.as_bytes()).unwrap();
        memory.put(k, k.as_bytes()).unwrap();
    }
    let bounds = ["", "\0", "\0\0", "\0a", "a", "a\0", "b", "c"];
    for start in bounds {
        for end in bounds.iter().map(|e| Some(*e)).chain([None]) {
            for direction in [Direction::Forward, Direction::Backward] {
                for resume in bounds.iter().map(|r| Some(*r)).chain([None]) {
                    for limit in [1, usize::MAX] {
                        let q = RangeQuery::new(start, end)
                            .direction(direction)
                            .resume(resume)
                            .limit(limit);
                        assert_eq!(store.range(&q).unwrap(), memory.range(&q).unwrap(), "{q:?}");
                    }
                }
            }
        }
    }
}

/// The text `pk encode` reads back for a value `pk decode` printed: a JSON string as it is,
/// anything else as JSON.
fn as_argument(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: support::cases(24), ..ProptestConfig::default() })]

    /// `pk decode` prints a float as `pk encode` reads it back (its rustdoc: "what [`parse`]
    /// reads back"), but a value that starts with `-` and is not what clap takes for a negative
    /// number (`-inf`, `-NaN`, `-1e-5`, `-1e+300`, a string `-abc`) was refused as an unknown
    /// flag unless written after `--`: `pk encode --spec 'x: f64' -inf` failed with status 1.
    /// Now every argument that is not an option of the command is a value, wherever it stands,
    /// and `--from`/`--to` of `pk ranges` take such values too. The property: any `f64` (every
    /// bit pattern, so NaNs, infinities, subnormals and exponents of both signs) and a string
    /// led by `-` go through encode, decode and encode again, values before or after `--spec`.
    #[test]
    fn pk_encode_reads_back_every_value_pk_decode_prints(
        bits in any::<u64>(),
        // `-h` stays the help flag: the string `-h` is written after `--`.
        text in "-[a-z]{1,4}".prop_filter("-h is the help flag", |t| t != "-h"),
        spec_first in any::<bool>(),
    ) {
        let spec = "x: f64; s: str";
        let o = pk(&["encode", "--spec", spec, "--", &format!("NaN:{bits:#018x}"), &text]);
        let f = f64::from_bits(bits);
        let key = if f.is_nan() {
            prop_assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            stdout(&o).trim().to_owned()
        } else {
            let o = pk(&["encode", "--spec", spec, "--", &format!("{f:e}"), &text]);
            prop_assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            stdout(&o).trim().to_owned()
        };
        let o = pk(&["decode", "--spec", spec, &key]);
        prop_assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let out = stdout(&o);
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        // The number as printed: serde_json (without `float_roundtrip`) may read it a bit off.
        let rest = &out[out.find("\"x\":").unwrap() + 4..];
        let x = rest[..rest.find([',', '}']).unwrap()].trim_matches('"').to_owned();
        let s = as_argument(&json["s"]);
        let o = if spec_first {
            pk(&["encode", "--spec", spec, &x, &s])
        } else {
            pk(&["encode", &x, &s, "--spec", spec])
        };
        prop_assert_eq!(o.status.code(), Some(0), "{} {}: {}", x, s, stderr(&o));
        let again = stdout(&o);
        prop_assert_eq!(again.trim(), key.as_str());
    }
}

/// `pk ranges` takes a leading value and `--from`/`--to` that start with `-` in any order.
#[test]
fn pk_ranges_takes_values_led_by_a_minus_anywhere() {
    let spec = "a: str; b: f64";
    let want = pk(&[
        "ranges", "--spec", spec, "--from", "-1e-5", "--to", "1", "--", "-x",
    ]);
    assert_eq!(want.status.code(), Some(0), "{}", stderr(&want));
    for args in [
        &[
            "ranges", "--spec", spec, "-x", "--from", "-1e-5", "--to", "1",
        ][..],
        &["ranges", "-x", "--spec", spec, "--from=-1e-5", "--to", "1"][..],
        &[
            "ranges", "--from", "-1e-5", "-x", "--to", "1", "--spec", spec,
        ][..],
    ] {
        let o = pk(args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stdout(&o), stdout(&want), "{args:?}");
    }
    let o = pk(&["ranges", "--spec", spec, "--from", "-inf", "-x"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // An unknown option is still one, not a value.
    let o = pk(&["encode", "--spec", "x: str", "--frm", "a"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--frm"), "{}", stderr(&o));
}

/// The 16 MiB cap of `pk analyze` bounded a line, but the CSV reader holds a whole record, and
/// a quoted field spans lines: a quote left open in a column the command does not read took
/// every line after it into one field, held in memory whole (a 60 MB dump: 72 MB), and the
/// rows it swallowed vanished without a message (1 row read, 0 malformed). A record past
/// 16 MiB is now refused as a line is, naming the line it starts on, while quoted fields that
/// span a few lines, and quotes inside unquoted fields (`5" screen`), read as before.
#[test]
fn pk_analyze_bounds_a_record_that_a_quoted_field_runs_on() {
    let dir = temp_dir("record");
    let filler = "x".repeat(1_000);
    let rows = 17_500;
    // A quote left open in the unused column `v` on line 3.
    let mut open = String::from("k,v\na,fine\nb,\"open\n");
    for i in 0..rows {
        open.push_str(&format!("{i:08},{filler}\n"));
    }
    assert!(open.len() > 16 << 20);
    let file = dir.join("open.csv");
    std::fs::write(&file, &open).unwrap();
    let o = pk(&["analyze", file.to_str().unwrap(), "--key", "k"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("line 3"), "{}", stderr(&o));
    assert!(stderr(&o).contains("longer than"), "{}", stderr(&o));
    // Stray quotes inside unquoted fields, and short quoted fields over lines, in a large dump.
    let mut fine = String::from("k,v\n");
    for i in 0..rows {
        if i % 100 == 0 {
            fine.push_str(&format!("{i:08},\"two\nlines, \"\"quoted\"\"\"\n"));
        } else {
            fine.push_str(&format!("{i:08},a 5\" screen {filler}\n"));
        }
    }
    assert!(fine.len() > 16 << 20);
    let file = dir.join("fine.csv");
    std::fs::write(&file, &fine).unwrap();
    let o = pk(&["analyze", file.to_str().unwrap(), "--key", "k", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(json["rows"], serde_json::json!(rows));
    assert_eq!(json["malformed_rows"], serde_json::json!(0));
    std::fs::remove_dir_all(&dir).unwrap();
}

// ---- Typed ------------------------------------------------------------------------------------

/// `Typed::scan` and `scan_values` reported a stored value that does not deserialize as
/// `TypedError::Value` with serde's message only ("expected value at line 1 column 1"), not
/// the key of the row that holds it, though a scan reads many rows across buckets (a stored
/// key that does not decode names its key: `TypedError::StoredKey`). Now such a value is
/// `TypedError::StoredValue { key, error }`.
#[test]
fn a_typed_scan_names_the_key_of_a_value_it_cannot_read() {
    use pk_codec::store::{Typed, TypedError};
    let layout: Layout = "n: u16 width=3; buckets=4:mod(n):sep".parse().unwrap();
    let store = MemoryStore::default();
    let typed = Typed::new(&store);
    for n in 0..20u16 {
        typed
            .put_values(&layout, &[n.into()], &format!("row {n}"))
            .unwrap();
    }
    let bad = layout.encode(&[13u16.into()]).unwrap();
    store.put(&bad, b"not json").unwrap();
    let ranges = layout.prefix_ranges(&[]).unwrap();
    let e = typed
        .scan_values(&layout, &ranges, 5, None, |_, _: String| {
            ControlFlow::Continue(())
        })
        .unwrap_err();
    match &e {
        TypedError::StoredValue { key, .. } => assert_eq!(key, &bad),
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains(&bad), "{e}");
}

/// `EtcdStore` read every answer with ureq's `read_to_string`, which stops at 10 MB and
/// fails: a range read whose rows came to more (twelve values of 1 MB, read with the limit
/// `usize::MAX` or 12; a `scan_ranges` page of 10,000 rows of 1 KB) failed as "the answer was
/// cut off", `Unavailable`, at every endpoint, every time: retrying could never help. A range
/// read whose answer is too large now asks again for fewer rows (a store may answer fewer than
/// the limit), down to one.
#[cfg(feature = "etcd")]
#[test]
fn etcd_reads_a_range_whose_answer_is_larger_than_the_client_takes_at_once() {
    use pk_codec::store::EtcdStore;
    let store = EtcdStore::new([etcd_model::start()]).unwrap();
    let rows: Vec<(String, Vec<u8>)> = (0..12u8)
        .map(|i| (format!("k{i:02}"), vec![b'a' + i; 1 << 20]))
        .collect();
    for (k, v) in &rows {
        store.put(k, v).unwrap();
    }
    for limit in [usize::MAX, 12] {
        let mut read = Vec::new();
        let mut resume: Option<String> = None;
        for _ in 0..100 {
            let page = store
                .range(
                    &RangeQuery::new("", None)
                        .limit(limit)
                        .resume(resume.as_deref()),
                )
                .unwrap();
            assert!(!page.rows.is_empty());
            read.extend(page.rows);
            resume = page.next;
            if resume.is_none() {
                break;
            }
        }
        assert!(read == rows, "limit {limit}: {} rows read", read.len());
    }
}

/// `pk hash` hashed any text but one that starts with `-` (a negative order number, `-abc`),
/// which clap took for a flag: `pk hash -5` failed with status 1. Its text is a value as those
/// of `encode`, `decode` and `ranges` are.
#[test]
fn pk_hash_takes_a_text_led_by_a_minus() {
    for text in ["-5", "-abc", "-inf"] {
        let want = pk(&["hash", "--alg", "md5", "--len", "8", "--", text]);
        assert_eq!(want.status.code(), Some(0), "{}", stderr(&want));
        for args in [
            &["hash", text][..],
            &["hash", text, "--alg", "md5", "--len", "8"][..],
            &["hash", "--len", "8", text, "--alg=md5"][..],
        ] {
            let o = pk(args);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
            if args.len() > 2 {
                assert_eq!(stdout(&o), stdout(&want), "{args:?}");
            }
        }
    }
}
