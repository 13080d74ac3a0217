//! What the tests share: how many cases a property runs, damaged keys, the `pk` binary, the
//! pieces of random layouts (delimiters, integer widths and limits, the rulebook's refusals).

/// The cases a property runs: `default`, or `default` times `PK_SOAK` when the environment sets
/// it, for a soak run (`PK_SOAK=100 cargo test --release --workspace`; README, "Tests"). An
/// unreadable `PK_SOAK` fails the run rather than quietly running the default.
#[allow(dead_code)] // The test files without properties do not count cases.
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

/// One edit of [`damage`]: where (an index into the bytes), which byte, and what to do (`0`
/// removes the byte there, `1` inserts the byte, anything else overwrites with it).
pub(crate) type Edit = (proptest::sample::Index, u8, u8);

/// Applies `edits` to `bytes` in order: how the properties damage a key to check that only
/// well-formed keys decode. Edits past the end insert at the end or do nothing.
#[allow(dead_code)] // Not every test file that shares this module damages keys.
pub(crate) fn damage(bytes: &mut Vec<u8>, edits: &[Edit]) {
    for (at, b, op) in edits {
        let i = at.index(bytes.len().max(1)).min(bytes.len());
        match op {
            0 if i < bytes.len() => {
                bytes.remove(i);
            }
            1 => bytes.insert(i, *b),
            _ if i < bytes.len() => bytes[i] = *b,
            _ => {}
        }
    }
}

/// The `pk` binary of this build, next to the test's `deps/` directory. Built (or brought up
/// to date) once per test run: the root package enables pk-codec's `cli` feature, but cargo
/// builds a dependency's binaries only for that package's own tests.
#[allow(dead_code)] // Only the test files that run the command line use it.
pub(crate) fn pk_binary() -> &'static std::path::Path {
    use std::path::PathBuf;
    use std::process::Command;
    use std::sync::OnceLock;

    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let exe = std::env::current_exe().unwrap();
        let dir = exe.parent().unwrap().parent().unwrap();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut build = Command::new(cargo);
        build
            .args([
                "build",
                "-q",
                "-p",
                "pk-codec",
                "--features",
                "cli",
                "--bin",
                "pk",
            ])
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        if dir.file_name().is_some_and(|n| n == "release") {
            build.arg("--release");
        }
        assert!(build.status().unwrap().success(), "building pk failed");
        dir.join(format!("pk{}", std::env::consts::EXE_SUFFIX))
    })
}

/// Runs the `pk` binary with `args`.
#[allow(dead_code)] // Only the test files that run the command line use it.
pub(crate) fn pk(args: &[&str]) -> std::process::Output {
    std::process::Command::new(pk_binary())
        .args(args)
        .output()
        .unwrap()
}

/// A command's standard output, as text.
#[allow(dead_code)]
pub(crate) fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A command's standard error, as text.
#[allow(dead_code)]
pub(crate) fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Batches of writes under `prefix` that write keys twice or more (puts over puts, deletes over
/// puts, puts over deletes): applied in order they leave `c`, `d` and `e` (and `f`, `g` when
/// `all`), as any store's `batch_write` must.
#[allow(dead_code)]
pub(crate) fn batches_writing_keys_twice(prefix: &str) -> Vec<Vec<pk_codec::store::WriteOp>> {
    use pk_codec::store::WriteOp;
    let put = |k: &str, v: &str| WriteOp::put(format!("{prefix}{k}"), v);
    let del = |k: &str| WriteOp::delete(format!("{prefix}{k}"));
    vec![
        vec![put("a", "1"), put("a", "2"), put("b", "1"), put("c", "1")],
        vec![
            put("b", "2"),
            del("b"),
            del("c"),
            put("c", "3"),
            put("d", "1"),
            put("d", "2"),
        ],
        vec![del("a"), put("a", "4"), del("a"), put("e", "1")],
    ]
}

/// A new directory of this test process under the system's temporary directory, for the files
/// a test of `pk` writes (`name` tells the tests of one process apart).
#[allow(dead_code)] // Only the tests of `pk` write files.
pub(crate) fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("pk-test-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The CPU time this thread has used (user and system), from `/proc/thread-self/stat` in clock
/// ticks of 10 ms; `None` where that file does not exist. A guard against quadratic time measures
/// this rather than the wall clock: other processes on a busy machine take wall time from the
/// thread, not CPU time, so the bound holds under load.
#[allow(dead_code)] // Only the files with complexity guards measure time.
pub(crate) fn thread_cpu_time() -> Option<std::time::Duration> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    // The command name (field 2) is in parentheses and may hold spaces: count from after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // Fields 14 and 15 of the whole line (utime, stime) are 12 and 13 after the name.
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(std::time::Duration::from_millis(ticks * 10))
}

/// Runs `f` and returns its result with the CPU time it took on this thread
/// ([`thread_cpu_time`]), or the wall time where CPU time cannot be read.
#[allow(dead_code)] // Only the files with complexity guards measure time.
pub(crate) fn cpu_timed<T>(f: impl FnOnce() -> T) -> (T, std::time::Duration) {
    let wall = std::time::Instant::now();
    let before = thread_cpu_time();
    let out = f();
    let took = match (before, thread_cpu_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => wall.elapsed(),
    };
    (out, took)
}

/// The bytes next to the floors of the forms (`-` `0` `=` `a`) and the ends of ASCII, where a
/// delimiter stops keeping some field's order.
#[allow(dead_code)] // Only the files with random layouts draw delimiters.
pub(crate) const BOUNDARY_DELIMITERS: &[u8] = b"\0\x01 +,-./:<=>?@[\\]^_`{|}~\x7f";

/// Every ASCII delimiter: the low ones (which every field accepts), the ones at the floors of the
/// forms, and any other (a layout the rulebook refuses for it: [`unless_delimiter_refused`]).
#[allow(dead_code)]
pub(crate) fn delimiter_gen() -> impl proptest::strategy::Strategy<Value = char> {
    use proptest::prelude::*;
    prop_oneof![
        1 => (0u8..=b',').prop_map(char::from),
        2 => prop::sample::select(BOUNDARY_DELIMITERS).prop_map(char::from),
        1 => (0u8..0x80).prop_map(char::from),
    ]
}

/// Every size of integer a field may have.
#[allow(dead_code)]
pub(crate) const INT_BITS: [pk_codec::IntBits; 5] = {
    use pk_codec::IntBits::{B8, B16, B32, B64, B128};
    [B8, B16, B32, B64, B128]
};

/// A random field's spec: `kind` at `width` (declared when given), descending when `desc`,
/// escaped when `escaped` and a string, optional when `optional`.
#[allow(dead_code)]
pub(crate) fn field_spec(
    kind: pk_codec::Kind,
    width: Option<u8>,
    desc: bool,
    escaped: bool,
    optional: bool,
) -> pk_codec::FieldSpec {
    let mut spec = pk_codec::FieldSpec::new(kind);
    if let Some(width) = width {
        spec = spec.with_width(width);
    }
    if desc {
        spec = spec.descending();
    }
    if escaped && kind == pk_codec::Kind::Str {
        spec = spec.escaped();
    }
    if optional {
        spec = spec.optional();
    }
    spec
}

/// A width for an integer field of `kind` made from `w`: `w` within the narrowest (1 digit; a
/// sign and a digit for signed kinds) and the kind's default width. `None` for other kinds.
#[allow(dead_code)]
pub(crate) fn narrowed_width(kind: pk_codec::Kind, w: u8) -> Option<u8> {
    let narrowest = if matches!(
        kind,
        pk_codec::Kind::Int { .. } | pk_codec::Kind::Decimal { .. }
    ) {
        2
    } else {
        1
    };
    kind.default_width()
        .map(|default| narrowest.max(w.min(default)))
}

/// The largest value an unsigned integer field holds: its type's, within its width.
#[allow(dead_code)]
pub(crate) fn uint_max(spec: &pk_codec::FieldSpec) -> u128 {
    let pk_codec::Kind::Uint { bits } = spec.kind() else {
        panic!("not an unsigned integer field: {spec:?}")
    };
    let type_max = u128::MAX >> (128 - u32::from(bits.get()));
    pow10(spec.width()).map_or(type_max, |p| type_max.min(p - 1))
}

/// The smallest and largest values a signed integer field holds: its type's, within its width
/// (a sign and `width - 1` digits).
#[allow(dead_code)]
pub(crate) fn int_range(spec: &pk_codec::FieldSpec) -> (i128, i128) {
    let pk_codec::Kind::Int { bits } = spec.kind() else {
        panic!("not a signed integer field: {spec:?}")
    };
    let shift = 128 - u32::from(bits.get());
    let (type_min, type_max) = (i128::MIN >> shift, i128::MAX >> shift);
    match pow10(spec.width() - 1).and_then(|p| i128::try_from(p).ok()) {
        Some(p) => (type_min.max(-p), type_max.min(p - 1)),
        None => (type_min, type_max),
    }
}

/// The smallest and largest units (`value × 10^scale`) a decimal field holds: a sign and
/// `width - 1` digits, within an `i128`.
#[allow(dead_code)]
pub(crate) fn decimal_units_range(spec: &pk_codec::FieldSpec) -> (i128, i128) {
    match pow10(spec.width() - 1).and_then(|p| i128::try_from(p).ok()) {
        Some(p) => (-p, p - 1),
        None => (i128::MIN, i128::MAX),
    }
}

/// A decimal kind of at most `scale` digits after the point that a field of `width` characters
/// (the kind's default when `None`) accepts: the scale is at most the width's digits.
#[allow(dead_code)]
pub(crate) fn decimal_kind(scale: u8, width: Option<u8>) -> pk_codec::Kind {
    let digits = width.unwrap_or(40).saturating_sub(1);
    pk_codec::Kind::Decimal {
        scale: scale.min(digits).min(pk_codec::Decimal::MAX_SCALE),
    }
}

/// `10^n`, if a `u128` holds it.
fn pow10(n: u8) -> Option<u128> {
    10u128.checked_pow(u32::from(n))
}

/// A random layout as the builder answered it: the layout, or `None` when the rulebook refused
/// it for its delimiter (the only rules the generated fields can break). Any other refusal
/// fails the test.
#[allow(dead_code)]
pub(crate) fn unless_delimiter_refused(
    built: pk_codec::Result<pk_codec::Layout>,
) -> Option<pk_codec::Layout> {
    use pk_codec::{Error, Rule};
    match built {
        Ok(layout) => Some(layout),
        Err(Error::BrokenRule {
            rule:
                Rule::DelimiterFloor { .. }
                | Rule::DelimiterAlphanumeric { .. }
                | Rule::DelimiterTooHigh { .. },
            ..
        }) => None,
        Err(other) => panic!("a generated layout was refused for another reason: {other}"),
    }
}

/// SplitMix64: well-mixed draws from a counter (the seeded schedules of the stores that fail on
/// purpose, and of generated dumps).
#[allow(dead_code)] // Only the files with seeded schedules draw.
pub(crate) fn mix(i: u64) -> u64 {
    let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The typed order of two rows of `layout`: field by field, descending fields reversed (the
/// order the keys of an order-preserving layout must have).
#[allow(dead_code)] // Only the files that check the order of a runtime layout's keys use it.
pub(crate) fn typed_cmp(
    layout: &pk_codec::Layout,
    a: &[pk_codec::Value],
    b: &[pk_codec::Value],
) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    for ((def, x), y) in layout.fields().iter().zip(a).zip(b) {
        let ord = x.cmp(y);
        let ord = if def.spec().is_descending() {
            ord.reverse()
        } else {
            ord
        };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    Ordering::Equal
}

/// The `RangeStore` methods a test store passes on to the store it wraps (its field `$inner`),
/// written once for the test stores that fail, gate or watch some requests and leave the rest to
/// the reference store: `forward_to!(inner)` in an `impl RangeStore` writes `put`, `get` and
/// `delete`; `forward_to!(inner, range)` writes `range` too.
#[allow(unused_macros)] // Only the files with wrapping test stores use it.
macro_rules! forward_to {
    ($inner:tt) => {
        fn put(&self, key: &[u8], value: &[u8]) -> Result<(), pk_codec::store::StoreError> {
            self.$inner.put(key, value)
        }

        fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, pk_codec::store::StoreError> {
            self.$inner.get(key)
        }

        fn delete(&self, key: &[u8]) -> Result<bool, pk_codec::store::StoreError> {
            self.$inner.delete(key)
        }
    };
    ($inner:tt, range) => {
        $crate::support::forward_to!($inner);

        fn range(
            &self,
            query: &pk_codec::store::RangeQuery<'_>,
        ) -> Result<pk_codec::store::RangePage, pk_codec::store::StoreError> {
            self.$inner.range(query)
        }
    };
}
#[allow(unused_imports)] // As the macro.
pub(crate) use forward_to;

/// What a scan's visitor answers once it has seen `seen` rows: stop at the `stop`-th.
#[allow(dead_code)] // Only the files whose scans stop early use it.
pub(crate) fn stop_after(seen: usize, stop: usize) -> std::ops::ControlFlow<()> {
    if seen == stop {
        std::ops::ControlFlow::Break(())
    } else {
        std::ops::ControlFlow::Continue(())
    }
}

/// The keys a scatter-gather read of `ranges` visits (`page` rows per store read, from `cursor`),
/// in the order it visits them, stopping after `stop` rows (`usize::MAX`: never), and what it
/// answered: the cursor to resume from, or `None` when it is done. The keys are a text layout's,
/// so UTF-8.
#[allow(dead_code)] // Only the files that read bucket ranges use it.
pub(crate) fn scan_keys(
    store: &dyn pk_codec::store::RangeStore,
    layout: &pk_codec::Layout,
    ranges: &[pk_codec::KeyRange],
    page: usize,
    cursor: Option<&pk_codec::store::ScanCursor>,
    stop: usize,
) -> (Vec<String>, Option<pk_codec::store::ScanCursor>) {
    let mut keys = Vec::new();
    let next = pk_codec::store::scan_ranges(store, layout, ranges, page, cursor, |key, _| {
        keys.push(String::from_utf8(key.to_vec()).expect("a text layout's key"));
        stop_after(keys.len(), stop)
    })
    .unwrap();
    (keys, next)
}

/// The newcomer's key of issue 32: a device's readings in time order, spread over 16 buckets by
/// a hash of the device (which one device fixes).
#[derive(pk_codec::PartitionKey, Debug, Clone, PartialEq)]
#[pk(buckets(count = 16, hash(device_id), separator))]
#[allow(dead_code)] // Only the files that read one device's readings use it.
pub(crate) struct Reading {
    #[pk(width = 6)]
    pub(crate) device_id: u32,
    #[pk(width = 13)]
    pub(crate) ts: u64,
}

/// The byte ranges that read every row of a binary layout: its typed ranges with nothing fixed
/// (one per bucket of a bucket prefix).
#[allow(dead_code)] // Only the files that read binary layouts use it.
pub(crate) fn binary_bucket_ranges(layout: &pk_codec::Layout) -> Vec<pk_codec::ByteRange> {
    layout
        .byte_ranges(&[], std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)
        .expect("a layout without a whole-key hash reads its whole key space")
}
