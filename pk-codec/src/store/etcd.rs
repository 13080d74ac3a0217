//! [`EtcdStore`]: keys in an etcd cluster, through etcd's JSON gateway (`/v3/kv/...`).
//!
//! The gateway takes the same requests as etcd's gRPC API, in JSON with base64 keys and values,
//! over plain HTTP: a small blocking HTTP client (`ureq`, without TLS) is all it needs, where a
//! gRPC client would bring tonic, prost and a protobuf compiler.
//!
//! # Faults, and what they cost
//!
//! Requests go to one endpoint at a time ([`EndpointPolicy`]) and move to the next (a
//! *failover*) when one cannot be reached within the connect timeout, does not answer within
//! the request timeout, or answers that it cannot serve now (5xx: etcd's "no leader", "leader
//! changed", "request timed out"; 408 while it shuts down), so a cluster that loses a node keeps
//! serving. The costly case is a lost leader: a write a follower forwarded to it is lost with
//! it, and the follower holds the request (up to etcd's own 7 s) without answering; only the
//! client's request timeout ends the wait. So the timeouts ([`EtcdBuilder`]) bound what a leader
//! loss costs: by default 500 ms to connect and 2 s to answer, about what etcd needs to notice
//! the loss and elect a new leader (one election timeout, 1 s by default, then a randomized
//! election of up to another), rather than the 5 s a request once waited.
//!
//! A request sent again after a timeout or a cut-off answer may have been applied the first
//! time: a put, a delete or a batch lands the same again, but a conditional write
//! ([`RangeStore::write_if`]) then finds its own write and answers `false`, as it would on any
//! store whose answer was lost. The shorter the request timeout, the more often a slow answer
//! is taken for a lost one and the request sent again: a caller of `write_if` that gets `false`
//! reads the keys again before it decides.
//!
//! Every failover and timeout is counted: in the store's own [`EtcdStore::stats`], and for a
//! batch in the [`Faults`] that [`RangeStore::batch_write_with_faults`] reports, which a
//! [`BulkWriter`](super::BulkWriter) shows per row ([`RowOutcome::faults`](super::RowOutcome))
//! and in its [`BulkStats`](super::BulkStats). BENCHMARKS.md ("etcd: a node lost during an
//! import") measures an import with the leader killed, a follower killed and neither.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value as Json, json};

use super::{
    CondWrite, Direction, Faults, RangePage, RangeQuery, RangeStore, StoreError, StoreErrorKind,
    WriteOp,
};

/// The most operations one etcd transaction takes (etcd's default `--max-txn-ops`).
const MAX_TXN_OPS: usize = 128;

/// The default connect timeout: far above a connection's setup inside a data centre (well under
/// 1 ms on a LAN), short enough that an endpoint whose host is gone costs little.
const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);

/// The default request timeout: twice etcd's default election timeout (1 s,
/// `--election-timeout`), the time its followers take to notice a lost leader and elect the next
/// one, so that a request lost with a leader is sent again about when a new leader can take it.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// Which endpoint an [`EtcdStore`] sends a request to first.
///
/// # Examples
///
/// ```
/// use pk_codec::store::{EndpointPolicy, EtcdStore};
///
/// let store = EtcdStore::builder(["127.0.0.1:2379", "127.0.0.1:22379"])
///     .endpoint_policy(EndpointPolicy::Leader)
///     .build()?;
/// assert_eq!(store.endpoints()[0], "http://127.0.0.1:2379");
/// # Ok::<(), pk_codec::store::StoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EndpointPolicy {
    /// The endpoint that answered last (the first endpoint at the start); after a failure, the
    /// next ones in the order given.
    #[default]
    LastGood,
    /// The cluster's leader, which serves a write without forwarding it to another node: found
    /// by asking each endpoint's `/v3/maintenance/status` before the first request and again
    /// after every failover; while no endpoint says it leads (an election), as
    /// [`EndpointPolicy::LastGood`].
    Leader,
}

/// Counts of what an [`EtcdStore`] met since it was built ([`EtcdStore::stats`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct EtcdStats {
    /// Requests made (each counted once, however many endpoints it tried).
    pub requests: u64,
    /// Moves of a request from one endpoint to the next.
    pub failovers: u64,
    /// Tries of an endpoint that timed out: no connection within the connect timeout, no answer
    /// within the request timeout, or etcd's own "request timed out".
    pub timeouts: u64,
}

/// The settings of an [`EtcdStore`] ([`EtcdStore::builder`]): its endpoints, timeouts and
/// [`EndpointPolicy`].
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use pk_codec::store::EtcdStore;
///
/// // A cluster whose --election-timeout is 5 s: wait longer for an answer.
/// let store = EtcdStore::builder(["http://10.0.0.1:2379", "http://10.0.0.2:2379"])
///     .request_timeout(Duration::from_secs(10))
///     .connect_timeout(Duration::from_secs(1))
///     .build()?;
/// assert_eq!(store.request_timeout(), Duration::from_secs(10));
/// # Ok::<(), pk_codec::store::StoreError>(())
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until it is built"]
pub struct EtcdBuilder {
    endpoints: Vec<String>,
    connect_timeout: Duration,
    request_timeout: Duration,
    policy: EndpointPolicy,
}

impl EtcdBuilder {
    /// How long a connection to an endpoint may take before the request moves to the next
    /// endpoint (the host's name looked up and the TCP connection made). 500 ms by default.
    pub const fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long an endpoint may take to answer a request (to start its answer, and then between
    /// any two reads of it: a large answer that keeps coming is never cut off) before the request
    /// moves to the next endpoint. 2 s by default: twice etcd's default election timeout, so
    /// that a write lost with a leader is sent again about when a new leader is elected. Set it
    /// to about twice the cluster's `--election-timeout`, and above the longest request it
    /// serves.
    pub const fn request_timeout(mut self, timeout: Duration) -> Self {
        self.request_timeout = timeout;
        self
    }

    /// Which endpoint a request goes to first ([`EndpointPolicy::LastGood`] by default).
    pub const fn endpoint_policy(mut self, policy: EndpointPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The store.
    ///
    /// # Errors
    ///
    /// [`StoreErrorKind::Invalid`] without an endpoint, for an endpoint that is not
    /// `http://host:port` or a bare `host:port` (read as `http://`; `https://` needs TLS, which
    /// this client does not have), and for a timeout of zero.
    pub fn build(self) -> Result<EtcdStore, StoreError> {
        if self.endpoints.is_empty() {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                "an etcd store needs an endpoint",
            ));
        }
        let endpoints = self
            .endpoints
            .iter()
            .map(|e| endpoint_url(e))
            .collect::<Result<Vec<_>, _>>()?;
        for (what, t) in [
            ("connect", self.connect_timeout),
            ("request", self.request_timeout),
        ] {
            if t.is_zero() {
                return Err(StoreError::new(
                    StoreErrorKind::Invalid,
                    format!("an etcd store's {what} timeout must be above 0"),
                ));
            }
        }
        let agent = ureq::Agent::config_builder()
            .timeout_resolve(Some(self.connect_timeout))
            .timeout_connect(Some(self.connect_timeout))
            .timeout_send_request(Some(self.request_timeout))
            .timeout_send_body(Some(self.request_timeout))
            .timeout_recv_response(Some(self.request_timeout))
            .timeout_per_read(Some(self.request_timeout))
            .timeout_per_write(Some(self.request_timeout))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(EtcdStore {
            endpoints,
            current: AtomicUsize::new(0),
            policy: self.policy,
            find_leader: AtomicBool::new(self.policy == EndpointPolicy::Leader),
            agent,
            connect_timeout: self.connect_timeout,
            request_timeout: self.request_timeout,
            counts: Counts::default(),
        })
    }
}

/// `endpoint` as the base URL requests go to: `http://host:port` as it is (a trailing `/`
/// dropped), a bare `host:port` as `http://host:port`, as etcdctl and etcd's Go client read it.
/// Refused, saying what is wrong: `https://` (TLS, which this client does not have), another
/// scheme, no host, and a bare host without a port (etcd's clients listen on 2379, not on
/// HTTP's 80: a port left out is a mistake).
fn endpoint_url(endpoint: &str) -> Result<String, StoreError> {
    let bad = |why: String| {
        Err(StoreError::new(
            StoreErrorKind::Invalid,
            format!("etcd endpoint {endpoint:?}: {why}"),
        ))
    };
    let (scheme, rest) = match endpoint.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest.trim_end_matches('/')),
        None => (None, endpoint.trim_end_matches('/')),
    };
    if rest.is_empty() {
        return bad("no host; write it as http://host:port, e.g. http://127.0.0.1:2379".into());
    }
    if rest.contains(char::is_whitespace) {
        return bad("a space in the host; write it as http://host:port".into());
    }
    match scheme.map(str::to_ascii_lowercase).as_deref() {
        Some("http") => Ok(format!("http://{rest}")),
        Some("https") => bad(format!(
            "https:// needs TLS, which this client does not have: reach the cluster over \
             plain http:// (a client URL etcd listens on without TLS, http://{rest}) or \
             through a proxy that ends TLS"
        )),
        Some(other) => bad(format!(
            "the scheme {other}:// is not one etcd's JSON gateway speaks; write \
             http://{rest}"
        )),
        None => {
            let port = rest.rsplit_once(':').map(|(_, p)| p);
            if port.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())) {
                Ok(format!("http://{rest}"))
            } else {
                bad(format!(
                    "no scheme and no port; write http://{rest}:2379 (etcd's client port is \
                     2379 by default)"
                ))
            }
        }
    }
}

/// The store's counts, bumped by every request ([`EtcdStats`]).
#[derive(Debug, Default)]
struct Counts {
    requests: AtomicU64,
    failovers: AtomicU64,
    timeouts: AtomicU64,
}

/// A [`RangeStore`] in an etcd cluster (v3 API through its JSON gateway): keys in etcd's byte
/// order, range reads with `limit` and `range_end`, batches as one transaction (all or nothing).
///
/// Connection failures, timeouts (HTTP 408 too), answers cut off in flight and 5xx answers are
/// [`StoreErrorKind::Unavailable`] (after trying every endpoint once), "too many requests" is
/// [`StoreErrorKind::Busy`], other refusals [`StoreErrorKind::Invalid`]. How a request moves
/// between endpoints, and what a lost node costs, is in the module's docs; [`EtcdStore::stats`]
/// counts the failovers and timeouts.
///
/// # Examples
///
/// ```no_run
/// use pk_codec::store::{EtcdStore, RangeQuery, RangeStore};
///
/// let store = EtcdStore::new(["http://127.0.0.1:2379", "http://127.0.0.1:22379"])?;
/// store.put(b"000054,a100", b"card")?;
/// let page = store.range(&RangeQuery::new("000054", Some("000055")))?;
/// assert_eq!(page.rows.len(), 1);
/// assert_eq!(store.stats().requests, 2);
/// # Ok::<(), pk_codec::store::StoreError>(())
/// ```
pub struct EtcdStore {
    endpoints: Vec<String>,
    current: AtomicUsize,
    policy: EndpointPolicy,
    /// Under [`EndpointPolicy::Leader`]: look the leader up before the next request.
    find_leader: AtomicBool,
    agent: ureq::Agent,
    connect_timeout: Duration,
    request_timeout: Duration,
    counts: Counts,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("endpoints", &self.endpoints)
            .field("policy", &self.policy)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .finish_non_exhaustive()
    }
}

fn b64(bytes: &[u8]) -> String {
    B64.encode(bytes)
}

fn unb64(field: Option<&Json>) -> Result<Vec<u8>, StoreError> {
    match field {
        None => Ok(Vec::new()),
        Some(Json::String(s)) => B64.decode(s).map_err(|e| {
            StoreError::new(StoreErrorKind::Other, format!("etcd sent bad base64: {e}"))
        }),
        Some(other) => Err(StoreError::new(
            StoreErrorKind::Other,
            format!("etcd sent {other} where base64 text belongs"),
        )),
    }
}

/// The smallest key above every key that starts with `key` followed by anything: `key` + NUL is
/// the smallest key above `key` itself, which is what an inclusive top needs.
fn just_above(key: &[u8]) -> Vec<u8> {
    let mut k = key.to_vec();
    k.push(0);
    k
}

/// How one try of one endpoint ended.
enum Try {
    /// An answer.
    Answer(Json),
    /// An answer larger than the client reads at once (every endpoint would send the same).
    TooLarge(String),
    /// A refusal every endpoint would give: not tried elsewhere.
    Refused(StoreError),
    /// This endpoint cannot answer now: the next one is tried. `timed_out` when it was a
    /// timeout (the client's, or etcd's own "request timed out").
    Failed { error: StoreError, timed_out: bool },
}

impl EtcdStore {
    /// A store on the cluster at `endpoints` (the client URLs, `http://host:port`, or a bare
    /// `host:port` read as `http://`), with the defaults of [`EtcdStore::builder`].
    ///
    /// # Errors
    ///
    /// As [`EtcdBuilder::build`].
    pub fn new<S: Into<String>>(
        endpoints: impl IntoIterator<Item = S>,
    ) -> Result<Self, StoreError> {
        Self::builder(endpoints).build()
    }

    /// The settings of a store on the cluster at `endpoints`, to change before
    /// [`EtcdBuilder::build`]: a 500 ms connect timeout, a 2 s request timeout, and
    /// [`EndpointPolicy::LastGood`].
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use pk_codec::store::EtcdStore;
    ///
    /// let store = EtcdStore::builder(["127.0.0.1:2379"]).build()?;
    /// assert_eq!(store.endpoints(), ["http://127.0.0.1:2379"]);
    /// assert_eq!(store.request_timeout(), Duration::from_secs(2));
    /// let err = EtcdStore::new(["https://127.0.0.1:2379"]).unwrap_err();
    /// assert!(err.message().contains("TLS"), "{err}");
    /// # Ok::<(), pk_codec::store::StoreError>(())
    /// ```
    pub fn builder<S: Into<String>>(endpoints: impl IntoIterator<Item = S>) -> EtcdBuilder {
        EtcdBuilder {
            endpoints: endpoints.into_iter().map(Into::into).collect(),
            connect_timeout: CONNECT_TIMEOUT,
            request_timeout: REQUEST_TIMEOUT,
            policy: EndpointPolicy::default(),
        }
    }

    /// The endpoints requests go to, as URLs, in the order given.
    #[must_use]
    pub fn endpoints(&self) -> &[String] {
        &self.endpoints
    }

    /// How long an endpoint may take to answer ([`EtcdBuilder::request_timeout`]).
    #[must_use]
    pub const fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// How long a connection may take ([`EtcdBuilder::connect_timeout`]).
    #[must_use]
    pub const fn connect_timeout(&self) -> Duration {
        self.connect_timeout
    }

    /// What the store met since it was built: requests, failovers and timeouts.
    #[must_use]
    pub fn stats(&self) -> EtcdStats {
        EtcdStats {
            requests: self.counts.requests.load(Relaxed),
            failovers: self.counts.failovers.load(Relaxed),
            timeouts: self.counts.timeouts.load(Relaxed),
        }
    }

    /// The index (in [`EtcdStore::endpoints`]) of the endpoint that is the cluster's leader,
    /// asking each endpoint's `/v3/maintenance/status` in turn; `None` when none says so (an
    /// election under way, or no endpoint answers).
    #[must_use]
    pub fn leader(&self) -> Option<usize> {
        (0..self.endpoints.len()).find(|&at| {
            match self.try_endpoint(at, "/v3/maintenance/status", "{}") {
                Try::Answer(status) => {
                    let leader = status.get("leader");
                    leader.is_some()
                        && status.get("header").and_then(|h| h.get("member_id")) == leader
                }
                _ => false,
            }
        })
    }

    /// Posts `body` to `path`, moving from endpoint to endpoint when one cannot answer now
    /// (adding each move and timeout to `faults`).
    fn call(&self, path: &str, body: &Json, faults: &mut Faults) -> Result<Json, StoreError> {
        self.send(path, body, faults)?
            .map_err(|too_large| StoreError::new(StoreErrorKind::Invalid, too_large))
    }

    /// [`EtcdStore::call`], with an answer larger than the client reads at once (ureq's 10 MB)
    /// as `Ok(Err(message))`: every endpoint would send the same, so a range read asks again
    /// for fewer rows instead.
    fn send(
        &self,
        path: &str,
        body: &Json,
        faults: &mut Faults,
    ) -> Result<Result<Json, String>, StoreError> {
        let body = body.to_string();
        self.counts.requests.fetch_add(1, Relaxed);
        if self.policy == EndpointPolicy::Leader
            && self.find_leader.swap(false, Relaxed)
            && let Some(leader) = self.leader()
        {
            self.current.store(leader, Relaxed);
        }
        let n = self.endpoints.len();
        let first = self.current.load(Relaxed);
        let mut last = None;
        for i in 0..n {
            let at = (first + i) % n;
            match self.try_endpoint(at, path, &body) {
                Try::Answer(json) => {
                    self.current.store(at, Relaxed);
                    return Ok(Ok(json));
                }
                Try::TooLarge(message) => return Ok(Err(message)),
                Try::Refused(error) => return Err(error),
                Try::Failed { error, timed_out } => {
                    if timed_out {
                        faults.timeouts += 1;
                        self.counts.timeouts.fetch_add(1, Relaxed);
                    }
                    if i + 1 < n {
                        faults.failovers += 1;
                        self.counts.failovers.fetch_add(1, Relaxed);
                    }
                    if self.policy == EndpointPolicy::Leader {
                        self.find_leader.store(true, Relaxed);
                    }
                    last = Some(error);
                }
            }
        }
        Err(last.unwrap_or_else(|| {
            StoreError::new(StoreErrorKind::Unavailable, "no endpoint answered")
        }))
    }

    /// Posts `body` to `path` at endpoint `at`, once.
    fn try_endpoint(&self, at: usize, path: &str, body: &str) -> Try {
        let url = format!("{}{path}", self.endpoints[at]);
        let unavailable = |message: String, timed_out: bool| Try::Failed {
            error: StoreError::new(StoreErrorKind::Unavailable, message),
            timed_out,
        };
        let mut response = match self
            .agent
            .post(&url)
            .header("content-type", "application/json")
            .send(body.as_bytes())
        {
            Ok(response) => response,
            Err(e) => {
                let timed_out = is_timeout(&e);
                return unavailable(format!("{url}: {e}"), timed_out);
            }
        };
        let status = response.status().as_u16();
        let text = match response.body_mut().read_to_string() {
            Ok(text) => text,
            Err(ureq::Error::BodyExceedsLimit(limit)) => {
                return Try::TooLarge(format!(
                    "{url}: HTTP {status}, the answer is larger than the {limit} bytes the \
                     client reads"
                ));
            }
            // The node went away while answering (the request may or may not have been
            // applied; every request here is safe to repeat): try the next one.
            Err(e) => {
                let timed_out = is_timeout(&e);
                return unavailable(
                    format!("{url}: HTTP {status}, the answer was cut off: {e}"),
                    timed_out,
                );
            }
        };
        // 5xx (etcd's "no leader", "leader changed", "request timed out": gRPC's Unavailable),
        // and 408 (the gateway's "the client connection is closing" while its node shuts down):
        // this node cannot answer now; try the next one.
        if status >= 500 || status == 408 {
            let timed_out = text.contains("request timed out");
            return unavailable(format!("{url}: HTTP {status}: {text}"), timed_out);
        }
        if status == 429 || text.contains("too many requests") {
            return Try::Refused(StoreError::new(
                StoreErrorKind::Busy,
                format!("{url}: {text}"),
            ));
        }
        if status != 200 {
            return Try::Refused(StoreError::new(
                StoreErrorKind::Invalid,
                format!("{url}: HTTP {status}: {text}"),
            ));
        }
        match serde_json::from_str(&text) {
            Ok(json) => Try::Answer(json),
            // A 200 whose body is not JSON was cut off in flight: as above.
            Err(e) => unavailable(format!("{url}: not JSON ({e}): {text}"), false),
        }
    }
}

/// Whether the client gave up waiting (a connect, a read or a write timed out).
fn is_timeout(e: &ureq::Error) -> bool {
    match e {
        ureq::Error::Timeout(_) => true,
        ureq::Error::Io(io) => matches!(
            io.kind(),
            std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
        ),
        _ => false,
    }
}

/// A batch's writes as a transaction's operations. etcd refuses a transaction that names a key
/// twice ("duplicate key given in txn request"), where a batch applies its writes in order: the
/// last write to a key is the one that stands (a put over a put, a delete over a put, a put over
/// a delete), so only it is sent.
fn txn_ops(ops: &[WriteOp]) -> Vec<Json> {
    let mut last = std::collections::HashMap::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        last.insert(op.key(), i);
    }
    ops.iter()
        .enumerate()
        .filter(|&(i, op)| last.get(op.key()) == Some(&i))
        .map(|(_, op)| match op {
            WriteOp::Put { key, value } => {
                json!({ "request_put": { "key": b64(key), "value": b64(value) } })
            }
            WriteOp::Delete { key } => {
                json!({ "request_delete_range": { "key": b64(key) } })
            }
        })
        .collect()
}

impl RangeStore for EtcdStore {
    fn max_batch(&self) -> usize {
        MAX_TXN_OPS
    }

    fn put(&self, key: &[u8], value: &[u8]) -> Result<(), StoreError> {
        self.call(
            "/v3/kv/put",
            &json!({ "key": b64(key), "value": b64(value) }),
            &mut Faults::default(),
        )?;
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let answer = self.call(
            "/v3/kv/range",
            &json!({ "key": b64(key) }),
            &mut Faults::default(),
        )?;
        match answer
            .get("kvs")
            .and_then(Json::as_array)
            .and_then(|kvs| kvs.first())
        {
            Some(kv) => Ok(Some(unb64(kv.get("value"))?)),
            None => Ok(None),
        }
    }

    fn delete(&self, key: &[u8]) -> Result<bool, StoreError> {
        let answer = self.call(
            "/v3/kv/deleterange",
            &json!({ "key": b64(key) }),
            &mut Faults::default(),
        )?;
        Ok(answer.get("deleted").is_some_and(|d| d != "0" && d != 0))
    }

    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        self.batch_write_with_faults(ops, &mut Faults::default())
    }

    /// One transaction; `faults` counts the endpoints it moved past and the timeouts it met.
    fn batch_write_with_faults(
        &self,
        ops: &[WriteOp],
        faults: &mut Faults,
    ) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        if ops.len() > MAX_TXN_OPS {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                format!(
                    "an etcd transaction takes at most {MAX_TXN_OPS} operations, not {}",
                    ops.len()
                ),
            ));
        }
        self.call("/v3/kv/txn", &json!({ "success": txn_ops(ops) }), faults)?;
        Ok(ops.iter().map(|_| Ok(())).collect())
    }

    /// One transaction: a compare per expectation (a value compared equal; an absent key as a
    /// create revision of 0, since etcd fails a value compare on a missing key), the ops as its
    /// success branch.
    fn write_if(&self, write: &CondWrite) -> Result<bool, StoreError> {
        if write.expect.len() + write.ops.len() > MAX_TXN_OPS {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                format!(
                    "an etcd transaction takes at most {MAX_TXN_OPS} compares and operations, \
                     not {}",
                    write.expect.len() + write.ops.len()
                ),
            ));
        }
        let compare: Vec<Json> = write
            .expect
            .iter()
            .map(|e| match &e.value {
                Some(v) => json!({
                    "key": b64(&e.key), "target": "VALUE", "result": "EQUAL",
                    "value": b64(v),
                }),
                None => json!({
                    "key": b64(&e.key), "target": "CREATE", "result": "EQUAL",
                    "create_revision": "0",
                }),
            })
            .collect();
        let answer = self.call(
            "/v3/kv/txn",
            &json!({ "compare": compare, "success": txn_ops(&write.ops) }),
            &mut Faults::default(),
        )?;
        // The gateway leaves out a field at its default: no `succeeded` is false.
        Ok(answer.get("succeeded").and_then(Json::as_bool) == Some(true))
    }

    fn range(&self, query: &RangeQuery<'_>) -> Result<RangePage, StoreError> {
        if query.limit == 0 {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                "a range read needs a limit of at least 1",
            ));
        }
        let (from, to, to_inclusive) = query.remaining();
        let end: Vec<u8> = match to {
            Some(t) if to_inclusive => just_above(t),
            Some(t) => t.to_vec(),
            // etcd's "every key from `key` on".
            None => vec![0],
        };
        // etcd takes no empty key; NUL is the smallest key there is, so it starts the same range.
        let key: &[u8] = if from.is_empty() { &[0] } else { from };
        // Nothing at or above the end: empty. Compared with the key sent, not `from`: an end of
        // `"\0"` above an empty `from` is no range in etcd's terms, and sent as `range_end` it
        // would mean "every key from `key` on".
        if to.is_some() && end.as_slice() <= key {
            return Ok(RangePage::default());
        }
        // The rows to answer: etcd's limit is an int64, and a larger one (`usize::MAX` for
        // "every row") is refused, so it is capped.
        let mut want = query.limit.min(i64::MAX as usize - 1);
        let mut request = json!({
            "key": b64(key),
            "range_end": b64(&end),
        });
        if query.direction == Direction::Backward {
            request["sort_order"] = json!("DESCEND");
            request["sort_target"] = json!("KEY");
        }
        let answer = loop {
            // One row more than answered: it tells where the next page starts.
            request["limit"] = json!(want + 1);
            match self.send("/v3/kv/range", &request, &mut Faults::default())? {
                Ok(answer) => break answer,
                // Larger than the client reads at once: fewer rows (a store may answer fewer
                // than the limit), down to one.
                Err(_) if want > 1 => want /= 2,
                Err(too_large) => return Err(StoreError::new(StoreErrorKind::Invalid, too_large)),
            }
        };
        let kvs = answer
            .get("kvs")
            .and_then(Json::as_array)
            .cloned()
            .unwrap_or_default();
        let mut rows = Vec::with_capacity(kvs.len().min(want));
        let mut next = None;
        for kv in kvs {
            let key = unb64(kv.get("key"))?;
            if rows.len() == want {
                next = Some(key);
                break;
            }
            rows.push((key, unb64(kv.get("value"))?));
        }
        Ok(RangePage { rows, next })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(endpoint: &str) -> String {
        let e = EtcdStore::new([endpoint]).unwrap_err();
        assert_eq!(e.kind(), StoreErrorKind::Invalid, "{e}");
        e.message().to_owned()
    }

    /// A bare `host:port` was refused with "only http:// is supported (the client has no TLS)",
    /// which named the wrong problem. It is read as `http://`, as etcdctl and etcd's Go client
    /// read it: this client has no TLS, so plain HTTP is the only thing it can mean.
    #[test]
    fn a_bare_host_and_port_is_read_as_http() {
        let store =
            EtcdStore::new(["127.0.0.1:2379", "[::1]:22379", "etcd-0.local:2379/"]).unwrap();
        assert_eq!(
            store.endpoints(),
            [
                "http://127.0.0.1:2379",
                "http://[::1]:22379",
                "http://etcd-0.local:2379"
            ]
        );
        let plain = EtcdStore::new(["HTTP://127.0.0.1:2379/"]).unwrap();
        assert_eq!(plain.endpoints(), ["http://127.0.0.1:2379"]);
    }

    #[test]
    fn https_is_refused_naming_tls() {
        let message = refusal("https://127.0.0.1:2379");
        assert!(message.contains("\"https://127.0.0.1:2379\""), "{message}");
        assert!(message.contains("needs TLS"), "{message}");
        assert!(message.contains("http://127.0.0.1:2379"), "{message}");
    }

    /// What is wrong with each endpoint, said for it: a host without a port (without a scheme
    /// too, it cannot be told from a typo), another scheme, no host at all.
    #[test]
    fn an_endpoint_that_cannot_be_read_says_what_is_wrong() {
        let message = refusal("127.0.0.1");
        assert!(message.contains("no scheme and no port"), "{message}");
        assert!(message.contains("http://127.0.0.1:2379"), "{message}");
        let message = refusal("unix:///run/etcd.sock");
        assert!(message.contains("the scheme unix://"), "{message}");
        for empty in ["", "http://", "/"] {
            assert!(refusal(empty).contains("no host"), "{empty:?}");
        }
        assert!(refusal("http://a b:2379").contains("a space"));
        let none: [&str; 0] = [];
        assert!(refusal_of(none).contains("needs an endpoint"));
    }

    fn refusal_of(endpoints: [&str; 0]) -> String {
        EtcdStore::new(endpoints).unwrap_err().message().to_owned()
    }

    #[test]
    fn a_zero_timeout_is_refused() {
        for builder in [
            EtcdStore::builder(["127.0.0.1:2379"]).request_timeout(Duration::ZERO),
            EtcdStore::builder(["127.0.0.1:2379"]).connect_timeout(Duration::ZERO),
        ] {
            let e = builder.build().unwrap_err();
            assert!(e.message().contains("timeout must be above 0"), "{e}");
        }
    }

    /// An endpoint that accepts the connection and never answers costs the request timeout,
    /// counted as a timeout and a failover, and the request goes on to the next endpoint; the
    /// store then sticks to the endpoint that answered.
    #[test]
    fn a_silent_endpoint_costs_the_request_timeout_and_is_counted() {
        use std::io::{BufRead, BufReader, Write};
        use std::net::TcpListener;
        // Accepts and reads, answers nothing (its connections kept open until the test ends).
        let silent = TcpListener::bind("127.0.0.1:0").unwrap();
        let silent_at = format!("http://{}", silent.local_addr().unwrap());
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for stream in silent.incoming().flatten() {
                held.push(stream);
            }
        });
        // Answers every request with an empty JSON object.
        let good = TcpListener::bind("127.0.0.1:0").unwrap();
        let good_at = format!("http://{}", good.local_addr().unwrap());
        std::thread::spawn(move || {
            for mut stream in good.incoming().flatten() {
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0;
                let mut line = String::new();
                while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                    if line.trim().is_empty() {
                        break;
                    }
                    if let Some((name, value)) = line.split_once(':')
                        && name.eq_ignore_ascii_case("content-length")
                    {
                        length = value.trim().parse().unwrap();
                    }
                    line.clear();
                }
                let mut body = vec![0; length];
                std::io::Read::read_exact(&mut reader, &mut body).unwrap();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{{}}"
                );
            }
        });
        let timeout = Duration::from_millis(300);
        let store = EtcdStore::builder([silent_at, good_at])
            .request_timeout(timeout)
            .build()
            .unwrap();
        let mut faults = Faults::default();
        let started = std::time::Instant::now();
        let results = store
            .batch_write_with_faults(&[WriteOp::put("k", b"v")], &mut faults)
            .unwrap();
        let took = started.elapsed();
        assert_eq!(results, vec![Ok(())]);
        assert_eq!((faults.failovers, faults.timeouts), (1, 1));
        assert!(took >= timeout, "{took:?}");
        let stats = store.stats();
        assert_eq!((stats.requests, stats.failovers, stats.timeouts), (1, 1, 1));
        // The next request goes to the endpoint that answered: no fault.
        let mut again = Faults::default();
        store
            .batch_write_with_faults(&[WriteOp::put("k", b"v")], &mut again)
            .unwrap();
        assert!(!again.any(), "{again:?}");
        assert_eq!(store.stats().failovers, 1);
    }
}
