//! The egress ledger: every request that left the device (the exact payload, its size and
//! sha256, agent, reasons, tokens, cost), every blocked attempt (no payload: it held what must
//! not leave), and every local run (metrics only). SQLite in WAL mode, one connection owned by
//! one thread (an actor); each record is its own transaction, so a crash loses at most the
//! record being written. Old entries are pruned on open.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

/// The time source, a seam so retention can be tested without waiting.
pub trait Clock: Send + Sync + 'static {
    /// Milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0)
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    #[error("the ledger database failed: {0}")]
    Db(String),
    #[error("the ledger is closed")]
    Closed,
}

impl crate::ErrorCode for LedgerError {
    fn code(&self) -> &'static str {
        match self {
            LedgerError::Db(_) => "ledger.db",
            LedgerError::Closed => "ledger.closed",
        }
    }
}

impl From<rusqlite::Error> for LedgerError {
    fn from(e: rusqlite::Error) -> Self {
        LedgerError::Db(e.to_string())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(rename = "LedgerStatus")]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Sent; finished (tokens known) or still streaming.
    Sent,
    /// Stopped by the egress guard before anything left.
    Blocked,
    /// Sent, but the provider failed.
    Failed,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Sent => "sent",
            Status::Blocked => "blocked",
            Status::Failed => "failed",
        }
    }
    fn parse(s: &str) -> Self {
        match s {
            "blocked" => Status::Blocked,
            "failed" => Status::Failed,
            _ => Status::Sent,
        }
    }
}

/// Where a transmission went: a cloud provider, or a device the user owns (kept in the same
/// ledger, counted apart from cloud egress).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum Destination {
    #[default]
    Cloud,
    Device,
}

impl Destination {
    fn as_str(self) -> &'static str {
        match self {
            Destination::Cloud => "cloud",
            Destination::Device => "device",
        }
    }
}

/// One outbound request (or blocked attempt) as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
pub struct LedgerEntry {
    pub id: i64,
    pub ts_ms: i64,
    pub task: String,
    pub status: Status,
    pub destination: Destination,
    pub agent: String,
    pub provider: String,
    pub model: String,
    pub bytes: u64,
    pub sha256: String,
    /// The payload exactly as sent; `None` for blocked attempts.
    pub payload: Option<String>,
    /// sha256 and size of the exact HTTP request body written to the provider's socket (the
    /// payload above plus the wire format's own fields); `None` for blocked attempts and rows
    /// older than this field.
    pub wire_sha256: Option<String>,
    pub wire_bytes: Option<u64>,
    pub reasons: Vec<String>,
    pub tokens_in: Option<u64>,
    pub tokens_out: Option<u64>,
    pub cost_usd: Option<f64>,
    pub error: Option<String>,
}

/// What egress records before sending.
#[derive(Debug, Clone)]
pub struct Outbound {
    pub task: String,
    pub agent: String,
    pub provider: String,
    pub model: String,
    pub payload: String,
    pub reasons: Vec<String>,
    /// The exact request body that will be written (empty when not known: a blocked attempt).
    pub wire: Vec<u8>,
    pub destination: Destination,
}

/// A local model run: metrics only, never content.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LocalRun {
    pub task: String,
    pub model: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub millis: u64,
}

/// Totals over the ledger (or one task).
#[derive(Debug, Clone, Default, PartialEq, Serialize, ts_rs::TS)]
pub struct Totals {
    pub sent: u64,
    pub blocked: u64,
    pub bytes_sent: u64,
    pub cloud_tokens: u64,
    pub cost_usd: f64,
    pub local_runs: u64,
    pub local_tokens: u64,
    /// Transmissions to the user's own devices (not in the cloud figures above).
    pub device_sent: u64,
    pub device_bytes: u64,
}

#[derive(Debug, Clone)]
pub struct Retention {
    pub max_age: Duration,
    pub max_rows: u64,
}

impl Default for Retention {
    fn default() -> Self {
        Self {
            max_age: Duration::from_secs(180 * 24 * 3600),
            max_rows: 200_000,
        }
    }
}

pub fn sha256_hex(payload: &str) -> String {
    hex::encode(Sha256::digest(payload.as_bytes()))
}

type Reply<T> = oneshot::Sender<Result<T, LedgerError>>;

enum Cmd {
    Sent(Outbound, Reply<i64>),
    Blocked(Outbound, String, Reply<i64>),
    Finish {
        id: i64,
        tokens_in: Option<u64>,
        tokens_out: Option<u64>,
        cost: Option<f64>,
        error: Option<String>,
        reply: Reply<()>,
    },
    Local(LocalRun, Reply<()>),
    List(usize, Option<String>, Reply<Vec<LedgerEntry>>),
    Totals(Option<String>, Reply<Totals>),
}

/// A handle to the ledger actor; cheap to clone. The thread ends when the last handle drops.
#[derive(Clone)]
pub struct Ledger {
    tx: mpsc::Sender<Cmd>,
    path: PathBuf,
}

/// `TANDEM_LEDGER`, else `<data dir>/tandem/ledger.sqlite3`.
pub fn default_path() -> PathBuf {
    crate::config::data_file("TANDEM_LEDGER", "ledger.sqlite3")
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS egress (
  id INTEGER PRIMARY KEY,
  ts_ms INTEGER NOT NULL,
  task TEXT NOT NULL,
  status TEXT NOT NULL,
  agent TEXT NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  bytes INTEGER NOT NULL,
  sha256 TEXT NOT NULL,
  payload TEXT,
  reasons TEXT NOT NULL,
  tokens_in INTEGER,
  tokens_out INTEGER,
  cost_usd REAL,
  error TEXT
);
CREATE INDEX IF NOT EXISTS egress_ts ON egress(ts_ms);
CREATE INDEX IF NOT EXISTS egress_task ON egress(task);
CREATE TABLE IF NOT EXISTS local_runs (
  id INTEGER PRIMARY KEY,
  ts_ms INTEGER NOT NULL,
  task TEXT NOT NULL,
  model TEXT NOT NULL,
  prompt_tokens INTEGER NOT NULL,
  completion_tokens INTEGER NOT NULL,
  millis INTEGER NOT NULL
);
";

impl Ledger {
    /// Opens (creating) the database and starts its thread.
    pub fn open(path: &Path) -> Result<Self, LedgerError> {
        Self::open_with(path, Box::new(SystemClock), Retention::default())
    }

    pub fn open_with(
        path: &Path,
        clock: Box<dyn Clock>,
        retention: Retention,
    ) -> Result<Self, LedgerError> {
        crate::private_fs::prepare_db(path)
            .map_err(|e| LedgerError::Db(format!("cannot create {}: {e}", path.display())))?;
        let conn = Connection::open(path)?;
        crate::private_fs::secure_pragmas(&conn)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.busy_timeout(Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        // Ledgers made before the wire-body hash existed gain its columns.
        let has_wire: bool = conn
            .prepare("SELECT 1 FROM pragma_table_info('egress') WHERE name = 'wire_sha256'")?
            .exists([])?;
        if !has_wire {
            conn.execute_batch(
                "ALTER TABLE egress ADD COLUMN wire_sha256 TEXT; ALTER TABLE egress ADD COLUMN wire_bytes INTEGER;",
            )?;
        }
        // And the destination (rows before it were all cloud).
        let has_destination: bool = conn
            .prepare("SELECT 1 FROM pragma_table_info('egress') WHERE name = 'destination'")?
            .exists([])?;
        if !has_destination {
            conn.execute_batch(
                "ALTER TABLE egress ADD COLUMN destination TEXT NOT NULL DEFAULT 'cloud';",
            )?;
        }
        prune(&conn, clock.as_ref(), &retention)?;
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("tandem-ledger".into())
            .spawn(move || actor(conn, clock, retention, rx))
            .map_err(|e| LedgerError::Db(format!("cannot start the ledger thread: {e}")))?;
        Ok(Self {
            tx,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn ask<T>(&self, make: impl FnOnce(Reply<T>) -> Cmd) -> Result<T, LedgerError> {
        let (reply, rx) = oneshot::channel();
        self.tx.send(make(reply)).map_err(|_| LedgerError::Closed)?;
        rx.await.map_err(|_| LedgerError::Closed)?
    }

    /// Records a request about to be sent; returns its id for `finish`.
    pub async fn sent(&self, o: Outbound) -> Result<i64, LedgerError> {
        self.ask(|r| Cmd::Sent(o, r)).await
    }

    /// Records a blocked attempt: size and hash of what would have gone, the reason, no payload.
    pub async fn blocked(&self, o: Outbound, reason: String) -> Result<i64, LedgerError> {
        self.ask(|r| Cmd::Blocked(o, reason, r)).await
    }

    pub async fn finish(
        &self,
        id: i64,
        tokens_in: Option<u64>,
        tokens_out: Option<u64>,
        cost: Option<f64>,
        error: Option<String>,
    ) -> Result<(), LedgerError> {
        self.ask(|reply| Cmd::Finish {
            id,
            tokens_in,
            tokens_out,
            cost,
            error,
            reply,
        })
        .await
    }

    pub async fn local_run(&self, run: LocalRun) -> Result<(), LedgerError> {
        self.ask(|r| Cmd::Local(run, r)).await
    }

    /// The newest `limit` entries, newest first.
    pub async fn list(&self, limit: usize) -> Result<Vec<LedgerEntry>, LedgerError> {
        self.ask(|r| Cmd::List(limit, None, r)).await
    }

    /// Every entry of one task, oldest first: what "What left this device" shows for an answer.
    pub async fn for_task(&self, task: &str) -> Result<Vec<LedgerEntry>, LedgerError> {
        let mut rows = self
            .ask(|r| Cmd::List(10_000, Some(task.to_string()), r))
            .await?;
        rows.reverse();
        Ok(rows)
    }

    pub async fn totals(&self, task: Option<String>) -> Result<Totals, LedgerError> {
        self.ask(|r| Cmd::Totals(task, r)).await
    }
}

fn prune(conn: &Connection, clock: &dyn Clock, r: &Retention) -> Result<(), LedgerError> {
    let cutoff = clock.now_ms() - r.max_age.as_millis() as i64;
    for table in ["egress", "local_runs"] {
        conn.execute(
            &format!("DELETE FROM {table} WHERE ts_ms < ?1"),
            params![cutoff],
        )?;
        conn.execute(
            &format!("DELETE FROM {table} WHERE id <= (SELECT id FROM {table} ORDER BY id DESC LIMIT 1 OFFSET ?1)"),
            params![r.max_rows as i64],
        )?;
    }
    Ok(())
}

/// Records between two prunings while the ledger stays open (a long-running app).
const PRUNE_EVERY: u32 = 1000;

fn actor(conn: Connection, clock: Box<dyn Clock>, retention: Retention, rx: mpsc::Receiver<Cmd>) {
    let mut since_prune = 0u32;
    for cmd in rx {
        if matches!(cmd, Cmd::Sent(..) | Cmd::Blocked(..) | Cmd::Local(..)) {
            since_prune += 1;
            if since_prune >= PRUNE_EVERY {
                since_prune = 0;
                if let Err(e) = prune(&conn, clock.as_ref(), &retention) {
                    tracing::warn!(error = %e, "could not prune the ledger");
                }
            }
        }
        match cmd {
            Cmd::Sent(o, r) => {
                let _ = r.send(insert(&conn, clock.now_ms(), &o, Status::Sent, None));
            }
            Cmd::Blocked(o, reason, r) => {
                let _ = r.send(insert(
                    &conn,
                    clock.now_ms(),
                    &o,
                    Status::Blocked,
                    Some(reason),
                ));
            }
            Cmd::Finish {
                id,
                tokens_in,
                tokens_out,
                cost,
                error,
                reply,
            } => {
                let status = if error.is_some() {
                    Status::Failed
                } else {
                    Status::Sent
                };
                let res = conn
                    .execute(
                        "UPDATE egress SET tokens_in = ?2, tokens_out = ?3, cost_usd = ?4, error = ?5, status = ?6 WHERE id = ?1",
                        params![id, tokens_in.map(|t| t as i64), tokens_out.map(|t| t as i64), cost, error, status.as_str()],
                    )
                    .map(|_| ())
                    .map_err(LedgerError::from);
                let _ = reply.send(res);
            }
            Cmd::Local(run, r) => {
                let res = conn
                    .execute(
                        "INSERT INTO local_runs (ts_ms, task, model, prompt_tokens, completion_tokens, millis) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        params![clock.now_ms(), run.task, run.model, run.prompt_tokens as i64, run.completion_tokens as i64, run.millis as i64],
                    )
                    .map(|_| ())
                    .map_err(LedgerError::from);
                let _ = r.send(res);
            }
            Cmd::List(limit, task, r) => {
                let _ = r.send(list(&conn, limit, task.as_deref()));
            }
            Cmd::Totals(task, r) => {
                let _ = r.send(totals(&conn, task.as_deref()));
            }
        }
    }
}

fn insert(
    conn: &Connection,
    ts: i64,
    o: &Outbound,
    status: Status,
    block_reason: Option<String>,
) -> Result<i64, LedgerError> {
    let blocked = status == Status::Blocked;
    let mut reasons = o.reasons.clone();
    if let Some(r) = &block_reason {
        reasons.push(r.clone());
    }
    let reasons = serde_json::to_string(&reasons).unwrap_or_else(|_| "[]".into());
    conn.execute(
        "INSERT INTO egress (ts_ms, task, status, agent, provider, model, bytes, sha256, payload, reasons, error, wire_sha256, wire_bytes, destination)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
        params![
            ts,
            o.task,
            status.as_str(),
            o.agent,
            o.provider,
            o.model,
            o.payload.len() as i64,
            // A blocked payload's hash could confirm a guessed secret offline: none is kept.
            if blocked { String::new() } else { sha256_hex(&o.payload) },
            (!blocked).then_some(&o.payload),
            reasons,
            block_reason,
            (!blocked && !o.wire.is_empty()).then(|| hex::encode(Sha256::digest(&o.wire))),
            (!blocked && !o.wire.is_empty()).then_some(o.wire.len() as i64),
            o.destination.as_str(),
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

fn list(
    conn: &Connection,
    limit: usize,
    task: Option<&str>,
) -> Result<Vec<LedgerEntry>, LedgerError> {
    let mut st = conn.prepare(
        "SELECT id, ts_ms, task, status, agent, provider, model, bytes, sha256, payload, reasons,
                tokens_in, tokens_out, cost_usd, error, wire_sha256, wire_bytes, destination FROM egress
         WHERE ?2 IS NULL OR task = ?2 ORDER BY id DESC LIMIT ?1",
    )?;
    let rows = st.query_map(params![limit as i64, task], |r| {
        let reasons: String = r.get(10)?;
        let status: String = r.get(3)?;
        Ok(LedgerEntry {
            id: r.get(0)?,
            ts_ms: r.get(1)?,
            task: r.get(2)?,
            status: Status::parse(&status),
            agent: r.get(4)?,
            provider: r.get(5)?,
            model: r.get(6)?,
            bytes: r.get::<_, i64>(7)? as u64,
            sha256: r.get(8)?,
            payload: r.get(9)?,
            reasons: serde_json::from_str(&reasons).unwrap_or_default(),
            tokens_in: r.get::<_, Option<i64>>(11)?.map(|t| t as u64),
            tokens_out: r.get::<_, Option<i64>>(12)?.map(|t| t as u64),
            cost_usd: r.get(13)?,
            error: r.get(14)?,
            wire_sha256: r.get(15)?,
            wire_bytes: r.get::<_, Option<i64>>(16)?.map(|b| b as u64),
            destination: if r.get::<_, String>(17)? == "device" {
                Destination::Device
            } else {
                Destination::Cloud
            },
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

fn totals(conn: &Connection, task: Option<&str>) -> Result<Totals, LedgerError> {
    let filter = if task.is_some() {
        "WHERE task = ?1"
    } else {
        "WHERE ?1 IS NULL"
    };
    let (sent, blocked, bytes, tokens, cost, dsent, dbytes) = conn.query_row(
        &format!(
            "SELECT COALESCE(SUM(status != 'blocked' AND destination = 'cloud'), 0),
                    COALESCE(SUM(status = 'blocked' AND destination = 'cloud'), 0),
                    COALESCE(SUM(CASE WHEN status != 'blocked' AND destination = 'cloud' THEN bytes END), 0),
                    COALESCE(SUM(CASE WHEN destination = 'cloud' THEN COALESCE(tokens_in, 0) + COALESCE(tokens_out, 0) END), 0),
                    COALESCE(SUM(CASE WHEN destination = 'cloud' THEN cost_usd END), 0.0),
                    COALESCE(SUM(status != 'blocked' AND destination = 'device'), 0),
                    COALESCE(SUM(CASE WHEN status != 'blocked' AND destination = 'device' THEN bytes END), 0)
             FROM egress {filter}"
        ),
        params![task],
        |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, f64>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, i64>(6)?,
            ))
        },
    )?;
    let (runs, ltokens) = conn
        .query_row(
            &format!("SELECT COUNT(*), COALESCE(SUM(prompt_tokens + completion_tokens), 0) FROM local_runs {filter}"),
            params![task],
            |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)),
        )
        .optional()?
        .unwrap_or((0, 0));
    Ok(Totals {
        sent: sent as u64,
        blocked: blocked as u64,
        bytes_sent: bytes as u64,
        cloud_tokens: tokens as u64,
        cost_usd: cost,
        local_runs: runs as u64,
        local_tokens: ltokens as u64,
        device_sent: dsent as u64,
        device_bytes: dbytes as u64,
    })
}
