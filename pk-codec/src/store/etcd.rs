//! [`EtcdStore`]: keys in an etcd cluster, through etcd's JSON gateway (`/v3/kv/...`).
//!
//! The gateway takes the same requests as etcd's gRPC API, in JSON with base64 keys and values,
//! over plain HTTP: a small blocking HTTP client (`ureq`, without TLS) is all it needs, where a
//! gRPC client would bring tonic, prost and a protobuf compiler. Requests go to one endpoint at
//! a time and move to the next when one cannot be reached, so a cluster that loses a node keeps
//! serving.

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value as Json, json};

use super::{
    CondWrite, Direction, RangePage, RangeQuery, RangeStore, StoreError, StoreErrorKind, WriteOp,
};

/// The most operations one etcd transaction takes (etcd's default `--max-txn-ops`).
const MAX_TXN_OPS: usize = 128;

/// A [`RangeStore`] in an etcd cluster (v3 API through its JSON gateway): keys in etcd's byte
/// order, range reads with `limit` and `range_end`, batches as one transaction (all or nothing).
///
/// Connection failures, timeouts (HTTP 408 too), answers cut off in flight and 5xx answers are
/// [`StoreErrorKind::Unavailable`] (after trying every endpoint once), "too many requests" is [`StoreErrorKind::Busy`], other refusals
/// [`StoreErrorKind::Invalid`].
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
/// # Ok::<(), pk_codec::store::StoreError>(())
/// ```
pub struct EtcdStore {
    endpoints: Vec<String>,
    current: AtomicUsize,
    agent: ureq::Agent,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore")
            .field("endpoints", &self.endpoints)
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

impl EtcdStore {
    /// A store on the cluster at `endpoints` (`http://host:port`, the client URLs), with a
    /// 5-second timeout per request.
    ///
    /// # Errors
    ///
    /// [`StoreErrorKind::Invalid`] without an endpoint, or for one that is not `http://`.
    pub fn new<S: Into<String>>(
        endpoints: impl IntoIterator<Item = S>,
    ) -> Result<Self, StoreError> {
        let endpoints: Vec<String> = endpoints
            .into_iter()
            .map(|e| e.into().trim_end_matches('/').to_owned())
            .collect();
        if endpoints.is_empty() {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                "an etcd store needs an endpoint",
            ));
        }
        if let Some(bad) = endpoints.iter().find(|e| !e.starts_with("http://")) {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                format!("etcd endpoint {bad:?}: only http:// is supported (the client has no TLS)"),
            ));
        }
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(5)))
            .http_status_as_error(false)
            .build()
            .into();
        Ok(Self {
            endpoints,
            current: AtomicUsize::new(0),
            agent,
        })
    }

    /// Posts `body` to `path` on the current endpoint, moving to the next one when an endpoint
    /// cannot be reached or answers 5xx.
    fn call(&self, path: &str, body: &Json) -> Result<Json, StoreError> {
        self.send(path, body)?
            .map_err(|too_large| StoreError::new(StoreErrorKind::Invalid, too_large))
    }

    /// [`EtcdStore::call`], with an answer larger than the client reads at once (ureq's 10 MB)
    /// as `Ok(Err(message))`: every endpoint would send the same, so a range read asks again
    /// for fewer rows instead.
    fn send(&self, path: &str, body: &Json) -> Result<Result<Json, String>, StoreError> {
        let body = body.to_string();
        let n = self.endpoints.len();
        let first = self.current.load(Relaxed);
        let mut last = None;
        for i in 0..n {
            let at = (first + i) % n;
            let url = format!("{}{path}", self.endpoints[at]);
            match self
                .agent
                .post(&url)
                .header("content-type", "application/json")
                .send(body.as_bytes())
            {
                Ok(mut response) => {
                    let status = response.status().as_u16();
                    let text = match response.body_mut().read_to_string() {
                        Ok(text) => text,
                        Err(ureq::Error::BodyExceedsLimit(limit)) => {
                            return Ok(Err(format!(
                                "{url}: HTTP {status}, the answer is larger than the {limit} \
                                 bytes the client reads"
                            )));
                        }
                        // The node went away while answering (the request may or may not have
                        // been applied; every request here is safe to repeat): try the next one.
                        Err(e) => {
                            last = Some(StoreError::new(
                                StoreErrorKind::Unavailable,
                                format!("{url}: HTTP {status}, the answer was cut off: {e}"),
                            ));
                            continue;
                        }
                    };
                    // 5xx, and 408 (the gateway's "the client connection is closing" while its
                    // node shuts down): this node cannot answer now; try the next one.
                    if status >= 500 || status == 408 {
                        last = Some(StoreError::new(
                            StoreErrorKind::Unavailable,
                            format!("{url}: HTTP {status}: {text}"),
                        ));
                        continue;
                    }
                    if status == 429 || text.contains("too many requests") {
                        return Err(StoreError::new(
                            StoreErrorKind::Busy,
                            format!("{url}: {text}"),
                        ));
                    }
                    if status != 200 {
                        return Err(StoreError::new(
                            StoreErrorKind::Invalid,
                            format!("{url}: HTTP {status}: {text}"),
                        ));
                    }
                    match serde_json::from_str(&text) {
                        Ok(json) => {
                            self.current.store(at, Relaxed);
                            return Ok(Ok(json));
                        }
                        // A 200 whose body is not JSON was cut off in flight: as above.
                        Err(e) => {
                            last = Some(StoreError::new(
                                StoreErrorKind::Unavailable,
                                format!("{url}: not JSON ({e}): {text}"),
                            ));
                        }
                    }
                }
                Err(e) => {
                    last = Some(StoreError::new(
                        StoreErrorKind::Unavailable,
                        format!("{url}: {e}"),
                    ));
                }
            }
        }
        Err(last.unwrap_or_else(|| {
            StoreError::new(StoreErrorKind::Unavailable, "no endpoint answered")
        }))
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
        )?;
        Ok(())
    }

    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let answer = self.call("/v3/kv/range", &json!({ "key": b64(key) }))?;
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
        let answer = self.call("/v3/kv/deleterange", &json!({ "key": b64(key) }))?;
        Ok(answer.get("deleted").is_some_and(|d| d != "0" && d != 0))
    }

    fn batch_write(&self, ops: &[WriteOp]) -> Result<Vec<Result<(), StoreError>>, StoreError> {
        if ops.len() > MAX_TXN_OPS {
            return Err(StoreError::new(
                StoreErrorKind::Invalid,
                format!(
                    "an etcd transaction takes at most {MAX_TXN_OPS} operations, not {}",
                    ops.len()
                ),
            ));
        }
        self.call("/v3/kv/txn", &json!({ "success": txn_ops(ops) }))?;
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
            match self.send("/v3/kv/range", &request)? {
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
