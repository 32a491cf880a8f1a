//! Conversations kept on this device: each question with its answer, route, plan and
//! metrics, in one SQLite file (`TANDEM_CONVERSATIONS` or `<data dir>/tandem/conversations.sqlite3`).
//! Answers hold restored originals, so this file is as private as the user's documents and
//! never leaves the machine; the orchestrator re-classifies history before any of it does.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension};
use serde::{Deserialize, Serialize};

use crate::local::{ChatMessage, Role};
use crate::sensitivity::pseudonym::VaultData;

#[derive(Debug, thiserror::Error)]
pub enum ConversationError {
    #[error("conversation store: {0}")]
    Db(String),
    #[error("no conversation {0}")]
    NotFound(String),
    #[error("a title must not be empty")]
    EmptyTitle,
}

impl crate::ErrorCode for ConversationError {
    fn code(&self) -> &'static str {
        match self {
            ConversationError::Db(_) => "conversations.db",
            ConversationError::NotFound(_) => "conversations.not_found",
            ConversationError::EmptyTitle => "conversations.empty_title",
        }
    }
}

impl From<rusqlite::Error> for ConversationError {
    fn from(e: rusqlite::Error) -> Self {
        ConversationError::Db(e.to_string())
    }
}

impl From<serde_json::Error> for ConversationError {
    fn from(e: serde_json::Error) -> Self {
        ConversationError::Db(e.to_string())
    }
}

/// How `Conversations::export` writes a conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    Markdown,
    Json,
}

/// A row of `SELECT id, title, created_ms, updated_ms, <turn count>` (list and search).
fn info_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ConversationInfo> {
    Ok(ConversationInfo {
        id: r.get(0)?,
        title: r.get(1)?,
        created_ms: r.get(2)?,
        updated_ms: r.get(3)?,
        turns: r.get(4)?,
    })
}

/// A `LIKE` pattern matching `word` anywhere (its `%`, `_` and `\` taken literally).
fn like_pattern(word: &str) -> String {
    let mut p = String::from("%");
    for c in word.chars() {
        if matches!(c, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(c);
    }
    p.push('%');
    p
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct ConversationInfo {
    pub id: String,
    pub title: String,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub turns: u32,
}

/// One question and what came of it. `plan` and `summary` are the orchestrator's own
/// serialized values, kept as JSON so older rows stay readable when those types grow.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
#[serde(default)]
pub struct Turn {
    /// The orchestrator's task id: the ledger's rows for this answer carry it.
    pub task: String,
    pub ts_ms: i64,
    pub question: String,
    /// Names of the attached files.
    pub attachments: Vec<String>,
    /// Their text as the router saw it (the first `DOCUMENT_KEEP` bytes of each), so "what left
    /// this device" can show the original beside the payload.
    pub documents: Vec<Document>,
    pub answer: String,
    // Stored as the JSON of a `router::Plan` / `run::Summary` (older turns keep theirs).
    #[ts(type = "Plan | null")]
    pub plan: Option<serde_json::Value>,
    #[ts(type = "Summary | null")]
    pub summary: Option<serde_json::Value>,
    pub notices: Vec<String>,
    /// Stable error code when the answer failed.
    pub error: Option<String>,
    /// The user pressed stop: `answer` is what had arrived.
    pub stopped: bool,
    /// From the question to the end of the answer.
    #[serde(default)]
    pub elapsed_ms: u64,
}

/// How much of each attached document a turn keeps.
pub const DOCUMENT_KEEP: usize = 64 * 1024;

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, ts_rs::TS)]
pub struct Document {
    pub name: String,
    pub text: String,
    /// The text was longer than `DOCUMENT_KEEP` and is cut (at a character boundary).
    pub truncated: bool,
}

impl Document {
    pub fn keep(name: &str, text: &str) -> Self {
        let mut end = text.len().min(DOCUMENT_KEEP);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        Self {
            name: name.to_string(),
            text: text[..end].to_string(),
            truncated: end < text.len(),
        }
    }
}

/// `TANDEM_CONVERSATIONS`, else `<data dir>/tandem/conversations.sqlite3`.
pub fn default_path() -> PathBuf {
    crate::config::data_file("TANDEM_CONVERSATIONS", "conversations.sqlite3")
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS conversations (
  id TEXT PRIMARY KEY,
  title TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS turns (
  id INTEGER PRIMARY KEY,
  conversation TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS turns_conv ON turns(conversation, id);
-- One pseudonym vault per conversation: the same value keeps the same placeholder in every
-- turn. It holds originals, as the turns do; deleting the conversation deletes it.
CREATE TABLE IF NOT EXISTS vaults (
  conversation TEXT PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
  data TEXT NOT NULL
);
";

/// A handle to the store; cheap to clone. Calls touch the disk: hosts call them from
/// blocking threads (`spawn_blocking`), never from async workers.
#[derive(Clone)]
pub struct Conversations {
    conn: Arc<Mutex<Connection>>,
}

fn new_id() -> String {
    let mut b = [0u8; 8];
    // An id only needs to be unique on this device; fall back to the clock if the OS RNG fails.
    if getrandom::fill(&mut b).is_err() {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        b = t.to_le_bytes();
    }
    hex::encode(b)
}

/// The title of a conversation: its first question, cut at a word near 60 characters.
fn title_of(question: &str) -> String {
    let q = question.split_whitespace().collect::<Vec<_>>().join(" ");
    if q.chars().count() <= 60 {
        return q;
    }
    let cut: String = q.chars().take(60).collect();
    let cut = cut.rsplit_once(' ').map(|(a, _)| a).unwrap_or(&cut);
    format!("{cut}…")
}

impl Conversations {
    pub fn open(path: &Path) -> Result<Self, ConversationError> {
        crate::private_fs::prepare_db(path)
            .map_err(|e| ConversationError::Db(format!("cannot create {}: {e}", path.display())))?;
        let conn = Connection::open(path)?;
        crate::private_fs::secure_pragmas(&conn)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        conn.execute_batch(SCHEMA)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves SQLite consistent (each write is one statement
        // or transaction), so a poisoned lock is still usable.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Newest first.
    pub fn list(&self) -> Result<Vec<ConversationInfo>, ConversationError> {
        let conn = self.conn();
        let mut st = conn.prepare(
            "SELECT c.id, c.title, c.created_ms, c.updated_ms,
                    (SELECT COUNT(*) FROM turns t WHERE t.conversation = c.id)
             FROM conversations c ORDER BY c.updated_ms DESC, c.rowid DESC",
        )?;
        let rows = st.query_map([], info_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The turns of a conversation, oldest first.
    pub fn turns(&self, id: &str) -> Result<Vec<Turn>, ConversationError> {
        let conn = self.conn();
        let exists: Option<i64> = conn
            .query_row(
                "SELECT 1 FROM conversations WHERE id = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()?;
        if exists.is_none() {
            return Err(ConversationError::NotFound(id.to_string()));
        }
        let mut st = conn.prepare("SELECT body FROM turns WHERE conversation = ?1 ORDER BY id")?;
        let bodies = st
            .query_map(params![id], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        // A row this version cannot read is skipped, not fatal: the rest stays visible.
        Ok(bodies
            .iter()
            .filter_map(|b| serde_json::from_str(b).ok())
            .collect())
    }

    /// Adds a turn; `conversation: None` starts a new conversation titled by the question.
    /// Returns the conversation's id. One transaction: a crash keeps all or nothing.
    pub fn append(
        &self,
        conversation: Option<&str>,
        turn: &Turn,
    ) -> Result<String, ConversationError> {
        let body = serde_json::to_string(turn)?;
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let id = match conversation {
            Some(id) => {
                let n = tx.execute(
                    "UPDATE conversations SET updated_ms = MAX(updated_ms, ?2) WHERE id = ?1",
                    params![id, turn.ts_ms],
                )?;
                if n == 0 {
                    return Err(ConversationError::NotFound(id.to_string()));
                }
                id.to_string()
            }
            None => {
                let id = new_id();
                tx.execute(
                    "INSERT INTO conversations (id, title, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)",
                    params![id, title_of(&turn.question), turn.ts_ms],
                )?;
                id
            }
        };
        tx.execute(
            "INSERT INTO turns (conversation, body) VALUES (?1, ?2)",
            params![id, body],
        )?;
        tx.commit()?;
        Ok(id)
    }

    /// Deletes the conversation, its turns and its vault (rows are overwritten on disk:
    /// `secure_delete`).
    pub fn delete(&self, id: &str) -> Result<bool, ConversationError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        tx.execute("DELETE FROM vaults WHERE conversation = ?1", params![id])?;
        tx.execute("DELETE FROM turns WHERE conversation = ?1", params![id])?;
        let n = tx.execute("DELETE FROM conversations WHERE id = ?1", params![id])?;
        tx.commit()?;
        Ok(n > 0)
    }

    /// Renames a conversation (spaces collapsed; at most 200 characters).
    pub fn rename(&self, id: &str, title: &str) -> Result<(), ConversationError> {
        let title: String = title
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .chars()
            .take(200)
            .collect();
        if title.is_empty() {
            return Err(ConversationError::EmptyTitle);
        }
        let n = self.conn().execute(
            "UPDATE conversations SET title = ?2 WHERE id = ?1",
            params![id, title],
        )?;
        if n == 0 {
            return Err(ConversationError::NotFound(id.to_string()));
        }
        Ok(())
    }

    /// Conversations whose title, questions or answers contain every word of `query`
    /// (case-insensitive for ASCII letters), newest first. Local only: nothing leaves.
    pub fn search(&self, query: &str) -> Result<Vec<ConversationInfo>, ConversationError> {
        let words: Vec<String> = query.split_whitespace().map(like_pattern).collect();
        if words.is_empty() {
            return self.list();
        }
        // Each word must appear in the title or in some turn's question or answer.
        let mut sql = String::from(
            "SELECT c.id, c.title, c.created_ms, c.updated_ms,
                    (SELECT COUNT(*) FROM turns t WHERE t.conversation = c.id)
             FROM conversations c WHERE 1",
        );
        for i in 1..=words.len() {
            sql.push_str(&format!(
                " AND (c.title LIKE ?{i} ESCAPE '\\' OR EXISTS (SELECT 1 FROM turns t WHERE t.conversation = c.id
                   AND (json_extract(t.body, '$.question') LIKE ?{i} ESCAPE '\\'
                        OR json_extract(t.body, '$.answer') LIKE ?{i} ESCAPE '\\')))"
            ));
        }
        sql.push_str(" ORDER BY c.updated_ms DESC, c.rowid DESC");
        let conn = self.conn();
        let mut st = conn.prepare(&sql)?;
        let rows = st.query_map(rusqlite::params_from_iter(words.iter()), info_row)?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// One conversation as a document: Markdown (a heading, then each question and answer) or
    /// JSON (its info and turns as stored). It holds originals: write it with
    /// `private_fs::write_private`.
    pub fn export(&self, id: &str, format: ExportFormat) -> Result<String, ConversationError> {
        let info = self
            .list()?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or_else(|| ConversationError::NotFound(id.to_string()))?;
        let turns = self.turns(id)?;
        Ok(match format {
            ExportFormat::Json => serde_json::to_string_pretty(&serde_json::json!({
                "conversation": info,
                "turns": turns,
            }))?,
            ExportFormat::Markdown => {
                let mut md = format!(
                    "# {}
",
                    info.title
                );
                for t in &turns {
                    md.push_str("\n## Question\n\n");
                    md.push_str(t.question.trim());
                    md.push('\n');
                    if !t.attachments.is_empty() {
                        md.push_str(&format!("\nAttached: {}\n", t.attachments.join(", ")));
                    }
                    md.push_str("\n## Answer\n\n");
                    md.push_str(t.answer.trim());
                    md.push('\n');
                }
                md
            }
        })
    }

    /// Deletes conversations (turns and vaults) not updated since `before_ms`; how many went.
    pub fn prune(&self, before_ms: i64) -> Result<usize, ConversationError> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let old = "SELECT id FROM conversations WHERE updated_ms < ?1";
        tx.execute(
            &format!("DELETE FROM vaults WHERE conversation IN ({old})"),
            params![before_ms],
        )?;
        tx.execute(
            &format!("DELETE FROM turns WHERE conversation IN ({old})"),
            params![before_ms],
        )?;
        let n = tx.execute(
            "DELETE FROM conversations WHERE updated_ms < ?1",
            params![before_ms],
        )?;
        tx.commit()?;
        Ok(n)
    }

    /// Applies the retention setting (`keep_conversations_days`): called by hosts when they open
    /// the store.
    pub fn apply_retention(&self, days: Option<u64>) -> Result<usize, ConversationError> {
        let Some(days) = days else { return Ok(0) };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        self.prune(now.saturating_sub(days.saturating_mul(86_400_000) as i64))
    }

    /// The conversation whose id is `name`, else the most recent one titled `name`.
    pub fn find(&self, name: &str) -> Result<Option<String>, ConversationError> {
        Ok(self
            .conn()
            .query_row(
                "SELECT id FROM conversations WHERE id = ?1 OR title = ?1
                 ORDER BY (id = ?1) DESC, updated_ms DESC LIMIT 1",
                params![name],
                |r| r.get(0),
            )
            .optional()?)
    }

    /// A new, empty conversation titled `title`; returns its id.
    pub fn create(&self, title: &str, ts_ms: i64) -> Result<String, ConversationError> {
        let id = new_id();
        self.conn().execute(
            "INSERT INTO conversations (id, title, created_ms, updated_ms) VALUES (?1, ?2, ?3, ?3)",
            params![id, title, ts_ms],
        )?;
        Ok(id)
    }

    /// The conversation's pseudonym vault (empty when it has none yet).
    pub fn vault(&self, id: &str) -> Result<VaultData, ConversationError> {
        let data: Option<String> = self
            .conn()
            .query_row(
                "SELECT data FROM vaults WHERE conversation = ?1",
                params![id],
                |r| r.get(0),
            )
            .optional()?;
        Ok(match data {
            Some(d) => serde_json::from_str(&d)?,
            None => VaultData::default(),
        })
    }

    pub fn save_vault(&self, id: &str, vault: &VaultData) -> Result<(), ConversationError> {
        self.conn().execute(
            "INSERT INTO vaults (conversation, data) VALUES (?1, ?2)
             ON CONFLICT(conversation) DO UPDATE SET data = excluded.data",
            params![id, serde_json::to_string(vault)?],
        )?;
        Ok(())
    }
}

/// Earlier turns as chat history for the next question (failed turns left out).
pub fn history(turns: &[Turn]) -> Vec<ChatMessage> {
    turns
        .iter()
        .filter(|t| t.error.is_none() && !t.answer.is_empty())
        .flat_map(|t| {
            [
                ChatMessage::user(t.question.clone()),
                ChatMessage {
                    derived_private: derived_from_private(t),
                    ..ChatMessage::new(Role::Assistant, t.answer.clone())
                },
            ]
        })
        .collect()
}

/// Whether the local model wrote this turn's answer while reading material the plan kept on the
/// device (a sensitive file, a confidential block, private passages): such an answer carries
/// that material's provenance and never goes out as history, whatever it says.
pub fn derived_from_private(t: &Turn) -> bool {
    let Some(plan) = &t.plan else {
        return false;
    };
    let private = plan["fragments"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f["class"] == "local_only"));
    let s = t.summary.as_ref();
    // (Under a local rewrite the local model completes the cloud's draft from the whole
    // request, the withheld passages included.)
    let local_wrote = s.is_none_or(|s| s["agent"].is_null() || s["fell_back"] == true)
        || plan["route"] == "local"
        || plan["strategy"] == "cloud_plans"
        || plan["local_rewrite"] == true;
    private && local_wrote
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversations_are_renamed_searched_and_exported() {
        let d = tempfile::tempdir().unwrap();
        let s = Conversations::open(&d.path().join("c.sqlite3")).unwrap();
        let a = s
            .append(
                None,
                &turn("How do I bake rye bread?", "Use a sourdough starter.", 1),
            )
            .unwrap();
        let b = s
            .append(
                None,
                &turn("Plan a trip to Plovdiv", "Take the train from Sofia.", 2),
            )
            .unwrap();
        s.rename(&a, "  Baking   notes ").unwrap();
        assert_eq!(
            s.list().unwrap().iter().find(|c| c.id == a).unwrap().title,
            "Baking notes"
        );
        assert!(matches!(
            s.rename(&a, "   "),
            Err(ConversationError::EmptyTitle)
        ));
        assert!(matches!(
            s.rename("nope", "x"),
            Err(ConversationError::NotFound(_))
        ));
        let ids =
            |q: &str| -> Vec<String> { s.search(q).unwrap().into_iter().map(|c| c.id).collect() };
        assert_eq!(ids("SOURDOUGH"), vec![a.clone()]);
        assert_eq!(ids("baking"), vec![a.clone()]);
        assert_eq!(ids("train plovdiv"), vec![b.clone()]);
        assert!(ids("train rye").is_empty());
        assert!(ids("100%").is_empty());
        assert_eq!(ids("").len(), 2);
        let md = s.export(&b, ExportFormat::Markdown).unwrap();
        assert!(md.starts_with("# Plan a trip to Plovdiv\n"), "{md}");
        assert!(
            md.contains("## Question\n\nPlan a trip to Plovdiv\n")
                && md.contains("## Answer\n\nTake the train from Sofia.\n"),
            "{md}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&s.export(&b, ExportFormat::Json).unwrap()).unwrap();
        assert_eq!(json["turns"][0]["answer"], "Take the train from Sofia.");
        assert_eq!(json["conversation"]["id"], b.as_str());
        assert!(matches!(
            s.export("nope", ExportFormat::Json),
            Err(ConversationError::NotFound(_))
        ));
    }

    #[test]
    fn retention_deletes_old_conversations_with_their_vaults() {
        let d = tempfile::tempdir().unwrap();
        let s = Conversations::open(&d.path().join("c.sqlite3")).unwrap();
        let old = s.append(None, &turn("old question", "a", 1_000)).unwrap();
        s.save_vault(
            &old,
            &VaultData {
                issued: vec![("EMAIL".into(), "a@b.c".into(), 1)],
                reserved: vec![],
            },
        )
        .unwrap();
        let new = s.append(None, &turn("new question", "a", 10_000)).unwrap();
        assert_eq!(s.prune(5_000).unwrap(), 1);
        assert!(s.find(&old).unwrap().is_none());
        assert!(s.vault(&old).unwrap().issued.is_empty());
        assert_eq!(s.find(&new).unwrap(), Some(new.clone()));
        assert_eq!(s.apply_retention(None).unwrap(), 0);
    }

    #[test]
    fn answers_written_locally_from_private_material_stay_out_of_history() {
        let mut t = turn("Summarise my lab file", "Your HbA1c was 8.4.", 1);
        t.plan = Some(
            serde_json::json!({"route": "split", "strategy": "cloud_plans",
            "fragments": [{"source": "lab.txt", "start": 0, "end": 9, "class": "local_only"}]}),
        );
        t.summary = Some(serde_json::json!({"agent": "lb", "fell_back": false}));
        let h = history(&[t.clone()]);
        assert!(h[1].derived_private, "kept for the local model, never sent");
        // Under a local rewrite the local model completes the answer from the whole request,
        // the withheld sentence included: the answer carries it.
        t.plan = Some(serde_json::json!({"route": "split", "strategy": "mask",
            "local_rewrite": true,
            "fragments": [{"source": "prompt", "start": 0, "end": 9, "class": "local_only"}]}));
        assert!(history(&[t.clone()])[1].derived_private);
        // The cloud's own answer to a masked question goes on as usual.
        t.plan = Some(serde_json::json!({"route": "split", "strategy": "mask",
            "fragments": [{"source": "prompt", "start": 0, "end": 9, "class": "maskable"}]}));
        assert!(!history(&[t])[1].derived_private);
    }

    fn turn(q: &str, a: &str, ts: i64) -> Turn {
        Turn {
            task: format!("t{ts}"),
            ts_ms: ts,
            question: q.into(),
            answer: a.into(),
            ..Turn::default()
        }
    }

    #[test]
    fn conversations_persist_across_reopen_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.sqlite3");
        let store = Conversations::open(&path).unwrap();
        let a = store
            .append(
                None,
                &turn("What is on my statement this month?", "Two payments.", 1),
            )
            .unwrap();
        store
            .append(Some(&a), &turn("And last month?", "One.", 3))
            .unwrap();
        let b = store.append(None, &turn("Hello", "Hi", 2)).unwrap();
        drop(store);
        let store = Conversations::open(&path).unwrap();
        let list = store.list().unwrap();
        assert_eq!(
            list.iter()
                .map(|c| (c.id.as_str(), c.turns))
                .collect::<Vec<_>>(),
            [(a.as_str(), 2), (b.as_str(), 1)]
        );
        assert_eq!(list[0].title, "What is on my statement this month?");
        let turns = store.turns(&a).unwrap();
        assert_eq!(turns[1].question, "And last month?");
        let h = history(&turns);
        assert_eq!(h.len(), 4);
        assert_eq!(h[3].content, "One.");
        assert!(matches!(
            store.append(Some("nope"), &turn("x", "y", 4)),
            Err(ConversationError::NotFound(_))
        ));
        assert!(store.delete(&a).unwrap());
        assert!(matches!(
            store.turns(&a),
            Err(ConversationError::NotFound(_))
        ));
    }

    #[test]
    fn documents_are_kept_up_to_the_cap_at_a_char_boundary() {
        let d = Document::keep("a.txt", &"é".repeat(DOCUMENT_KEEP));
        assert!(d.truncated && d.text.len() <= DOCUMENT_KEEP && d.text.len() % 2 == 0);
        assert!(!Document::keep("b", "short").truncated);
    }

    #[test]
    fn long_titles_are_cut_at_a_word() {
        let t = title_of(&"word ".repeat(30));
        assert!(t.ends_with('…') && t.chars().count() <= 61, "{t}");
        assert_eq!(title_of("  a\n b "), "a b");
    }
}
