//! `pk`: encode and decode keys from a text spec, and judge a dump of production keys or rows
//! under candidate key designs in the range-partitioned table model.
//!
//! Exit status: 0 on success, 1 on an error, 2 when `analyze --fail-above` finds a design
//! hotter than allowed.

mod analyze;
mod values;

use std::ffi::OsString;
use std::ops::Bound;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use pk_codec::{Form, HashAlg, Layout, Prefix};

/// Order-preserving text primary keys: encode, decode, hash, ranges, split points, and the
/// analysis of key dumps under candidate designs.
#[derive(Parser)]
#[command(name = "pk", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
#[allow(clippy::large_enum_variant)] // parsed once per run: its size does not matter
enum Command {
    /// Prints the key of VALUE... (one per field, parsed by the field's kind).
    // A negative number is a value (a signed field's), not a flag.
    #[command(allow_negative_numbers = true)]
    Encode {
        /// The key layout, e.g. 'device_id: u32 width=6; seller_id: str'.
        #[arg(long)]
        spec: String,
        /// The key form: text, or binary (keys printed and read as lower-case hex); the spec's
        /// `form=` (text unless given) when left out.
        #[arg(long)]
        form: Option<String>,
        /// One value per field.
        values: Vec<String>,
    },
    /// Prints the values of KEY as a JSON object.
    // The key of a negative number starts with `-`.
    #[command(allow_negative_numbers = true)]
    Decode {
        /// The key layout.
        #[arg(long)]
        spec: String,
        /// The key form: text, or binary (keys printed and read as lower-case hex); the spec's
        /// `form=` (text unless given) when left out.
        #[arg(long)]
        form: Option<String>,
        /// The key (hex in the binary form, as `pk encode` prints it or `0x...` as messages do).
        key: String,
    },
    /// Prints the first LEN hex characters of TEXT's hash.
    Hash {
        /// md5, xxh32, xxh64 or xxh3.
        #[arg(long, default_value = "md5")]
        alg: String,
        /// Hex characters.
        #[arg(long, default_value_t = 4)]
        len: u8,
        /// The text hashed.
        text: String,
    },
    /// Prints the key range(s), `START END` per line, holding the keys whose leading fields are
    /// VALUE... and whose next field lies within --from and --to (inclusive).
    ///
    /// Each range holds the keys k with START <= k < END, compared bytewise: END is the first key
    /// after the range, itself excluded (`0099-` ends after every key that starts `0099,`, `-`
    /// being the byte after the delimiter `,`); `(end)` means no upper bound. A bucketed layout
    /// prints one range per bucket that can hold such keys, in bucket order: one when VALUE...
    /// fixes the bucket (the modulo field, or every field of the bucket hash), the buckets of the
    /// values --from and --to leave the modulo field, every bucket otherwise. A note on standard
    /// error says how many ranges and buckets; standard output holds only the ranges.
    #[command(allow_negative_numbers = true)]
    Ranges {
        /// The key layout.
        #[arg(long)]
        spec: String,
        /// The key form: text, or binary (keys printed and read as lower-case hex); the spec's
        /// `form=` (text unless given) when left out.
        #[arg(long)]
        form: Option<String>,
        /// Values of the leading fields.
        values: Vec<String>,
        /// Lowest value of the next field (inclusive).
        #[arg(long, allow_hyphen_values = true)]
        from: Option<String>,
        /// Highest value of the next field (inclusive).
        #[arg(long, allow_hyphen_values = true)]
        to: Option<String>,
    },
    /// Prints the split points of a prefixed layout in its form (`Layout::split_points(N)`), one
    /// per line: text for a text layout, `0x` and hex for a binary one (the prefix's bytes).
    Splits {
        /// The key layout (with a hash or bucket prefix).
        #[arg(long)]
        spec: String,
        /// The key form: text, or binary; the spec's `form=` (text unless given) when left out.
        #[arg(long)]
        form: Option<String>,
        /// How many split points (N points cut the key space into N + 1 parts).
        #[arg(short, default_value_t = 16)]
        n: usize,
    },
    /// Replays a dump of keys or rows into the table model under one or more key designs and
    /// reports how hot each runs, and checks the table-design practices on the dump's rows.
    ///
    /// Findings (each names the column or design, an example line and the practices' fix; gate
    /// on them with --fail-on CODE,...):
    ///
    /// over-2mb: a value over the store's 2 MB limit, which the store refuses.
    /// wide-row: rows with more than 10,000 attribute columns.
    /// large-text: a text column averaging 1 KB or more, with a compression estimate.
    /// money-as-float: decimals that look like money (two fractional digits, or a name such as
    /// price, amount, cost or fee; the message says which), to store as a Long of cents.
    /// split-columns: a column averaging 10 times the others together (1 KB at least), to move
    /// to a second table.
    /// partition-volume: a partition-key value whose data crosses --partition-limit (10 GB)
    /// within --horizon-days (365) at the dump's own rate, with the date.
    /// table-size: a table past 20 billion rows within five years at the dump's rate.
    #[command(verbatim_doc_comment)]
    Analyze(analyze::Args),
}

/// A failure to report: its message, and the exit status.
pub(crate) struct Failure {
    pub(crate) message: String,
    pub(crate) status: u8,
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Self {
            message: e.to_string(),
            status: 1,
        }
    }
}

/// The command line with the values of `encode`, `decode`, `ranges` and `hash` after a `--`, so
/// that a value may start with `-` (`-inf`, `-NaN`, `-1e-5`, a string `-abc`: what `pk decode`
/// prints, which clap would take for a flag): every argument that is not one of the command's
/// options, nor an option's value, is a value, wherever it stands. Arguments that start with
/// `--` and `-h` stay clap's, so an unknown option is still named as one.
fn values_escaped(args: Vec<OsString>) -> Vec<OsString> {
    let options: &[&str] = match args.get(1).and_then(|a| a.to_str()) {
        Some("encode" | "decode") => &["--spec", "--form"],
        Some("ranges") => &["--spec", "--form", "--from", "--to"],
        Some("hash") => &["--alg", "--len"],
        _ => return args,
    };
    let mut args = args.into_iter();
    let mut front: Vec<OsString> = args.by_ref().take(2).collect();
    let mut values = Vec::new();
    while let Some(arg) = args.next() {
        let text = arg.to_str().unwrap_or_default();
        if text == "--" {
            values.extend(args.by_ref());
        } else if options.contains(&text) {
            front.push(arg);
            front.extend(args.next());
        } else if text.starts_with("--") || text == "-h" {
            front.push(arg);
        } else {
            values.push(arg);
        }
    }
    if !values.is_empty() {
        front.push("--".into());
        front.extend(values);
    }
    front
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse_from(values_escaped(std::env::args_os().collect())) {
        Ok(cli) => cli,
        Err(e) => {
            // Usage and help go where clap sends them. A bad argument is bad input, status 1
            // like every other (clap's own 2 is `analyze --fail-above`'s "too hot").
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match run(cli.command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            if !f.message.is_empty() {
                note(format_args!("pk: {}", f.message));
            }
            ExitCode::from(f.status)
        }
    }
}

/// Writes `text` to standard output. A reader that stopped reading (`pk ... | head -1`: a
/// closed pipe) ends the output quietly, as it asked; any other write error is a failure.
pub(crate) fn out_text(text: &str) -> Result<(), Failure> {
    use std::io::Write as _;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(format!("cannot write to standard output: {e}").into())
        }
        _ => Ok(()),
    }
}

/// [`out_text`] of one line.
pub(crate) fn out_line(line: impl std::fmt::Display) -> Result<(), Failure> {
    out_text(&format!("{line}\n"))
}

/// Writes a message line to standard error, ignoring a failure to write it (`eprintln!` would
/// panic on a closed pipe, and there is nowhere left to report that).
pub(crate) fn note(line: impl std::fmt::Display) {
    use std::io::Write as _;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// What `pk ranges` says on standard error: how many ranges of how many buckets, and what the
/// two keys of a line mean.
fn ranges_note(layout: &Layout, ranges: usize) -> String {
    let s = if ranges == 1 { "" } else { "s" };
    let what = match layout.shape().prefix() {
        Prefix::Bucket { count, .. } if ranges < count as usize => format!(
            "{ranges} range{s}, in {ranges} of {count} buckets: the others cannot hold these keys"
        ),
        Prefix::Bucket { .. } => format!("{ranges} range{s}, one per bucket"),
        _ => format!("{ranges} range{s}"),
    };
    format!(
        "{what}. Each line is START END: the keys from START (included) up to END (excluded); \
         (end) means no upper bound."
    )
}

fn layout(spec: &str) -> Result<Layout, Failure> {
    spec.parse::<Layout>()
        .map_err(|e| Failure::from(format!("bad spec {spec:?}: {e}")))
}

/// The layout in `form` (`text` or `binary`), or as its spec says when `None`.
fn with_form(layout: Layout, form: Option<&str>) -> Result<Layout, Failure> {
    match form {
        None => Ok(layout),
        Some(name) => Form::from_name(name)
            .map(|f| layout.with_form(f))
            .ok_or_else(|| format!("unknown --form {name:?}: use text or binary").into()),
    }
}

/// A key as `pk` prints it: the text itself, or lower-case hex in the binary form.
fn key_text(layout: &Layout, key: &[u8]) -> String {
    match layout.form() {
        Form::Text => String::from_utf8_lossy(key).into_owned(),
        // Plain hex, without the `0x` of messages (`pk decode` reads either).
        Form::Binary => Form::Binary.show_key(key).split_off(2),
    }
}

fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Encode { spec, form, values } => {
            let layout = with_form(layout(&spec)?, form.as_deref())?;
            let values = values::parse_all(&layout, &values)?;
            out_line(key_text(&layout, &layout.encode_bytes(&values)?))?;
        }
        Command::Decode { spec, form, key } => {
            let layout = with_form(layout(&spec)?, form.as_deref())?;
            // A binary key as `pk encode` prints it (plain hex) or as messages do (`0x...`).
            let bytes = layout
                .form()
                .parse_key(&key)
                .map_err(|e| format!("cannot read key {key:?}: {e}"))?;
            let values = layout
                .decode_bytes(&bytes)
                .map_err(|e| format!("cannot decode {key:?}: {e}"))?;
            let object: serde_json::Map<String, serde_json::Value> = layout
                .fields()
                .iter()
                .zip(&values)
                .map(|(f, v)| (f.name().to_owned(), values::to_json(v)))
                .collect();
            out_line(serde_json::Value::Object(object))?;
        }
        Command::Hash { alg, len, text } => {
            let alg = match alg.as_str() {
                "md5" => HashAlg::Md5,
                "xxh32" => HashAlg::Xxh32,
                "xxh64" => HashAlg::Xxh64,
                "xxh3" => HashAlg::Xxh3,
                other => {
                    return Err(
                        format!("unknown hash {other:?}: use md5, xxh32, xxh64 or xxh3").into(),
                    );
                }
            };
            if len == 0 || len > alg.max_len() {
                return Err(format!("--len must be 1 to {} for {alg:?}", alg.max_len()).into());
            }
            out_line(alg.hex_prefix(text.as_bytes(), len))?;
        }
        Command::Ranges {
            spec,
            form,
            values,
            from,
            to,
        } => {
            let layout = with_form(layout(&spec)?, form.as_deref())?;
            let prefix = values::parse_all_prefix(&layout, &values)?;
            let next = layout.fields().get(prefix.len());
            let bound = |v: Option<String>| -> Result<Option<pk_codec::Value>, Failure> {
                match (v, next) {
                    (None, _) => Ok(None),
                    (Some(_), None) => {
                        Err("--from/--to need a field after the leading values".into())
                    }
                    (Some(v), Some(f)) => Ok(Some(values::parse(f, &v)?)),
                }
            };
            let (lo, hi) = (bound(from)?, bound(to)?);
            let lower = lo.as_ref().map_or(Bound::Unbounded, Bound::Included);
            let upper = hi.as_ref().map_or(Bound::Unbounded, Bound::Included);
            let ranges = layout.byte_ranges(&prefix, lower, upper)?;
            note(ranges_note(&layout, ranges.len()));
            for r in ranges {
                out_line(format_args!(
                    "{} {}",
                    key_text(&layout, &r.start),
                    r.end
                        .as_deref()
                        .map_or_else(|| "(end)".to_owned(), |e| key_text(&layout, e))
                ))?;
            }
        }
        Command::Splits { spec, form, n } => {
            let layout = with_form(layout(&spec)?, form.as_deref())?;
            for p in layout.split_points(n)? {
                // Binary points as `0x` hex: a text point such as `04` could read as hex.
                out_line(layout.form().show_key(&p))?;
            }
        }
        Command::Analyze(args) => analyze::run(&args)?,
    }
    Ok(())
}
