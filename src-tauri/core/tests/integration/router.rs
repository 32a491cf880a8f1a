//! The orchestrator end to end with real parts: the rules scanner, a real SQLite ledger file, the
//! loopback provider on 127.0.0.1 recording every byte it receives, and local engines (the echo
//! engine, which repeats what it reads: the worst case for leaks).

use std::sync::Arc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use tandem_core::cloud::agents::{Agent, Catalog, ProviderConfig};
use tandem_core::cloud::loopback::Loopback;
use tandem_core::cloud::{ChatMessage, Role, Wire};
use tandem_core::egress::{Draft, Egress, EgressError, Sanitizer, Turn};
use tandem_core::ledger::{Clock, Ledger, Retention, Status};
use tandem_core::local::echo::EchoEngine;
use tandem_core::local::{GenerateRequest, LoadedModel, LocalEngine, LocalError, TokenStream};
use tandem_core::router::run::{Orchestrator, RunEvent, RunOptions};
use tandem_core::router::{
    self, Attachment, Context, LocalClass, Policy, Route, Strategy as How, Task,
};
use tandem_core::secrets::{ApiKey, Keys, MemoryStore, SecretStore};
use tandem_core::sensitivity::{Pseudonymizer, Scanner, UserRules, Verdict};

const KEY: &str = "sk-router-test-1234";

fn scanner() -> Arc<Scanner> {
    Arc::new(Scanner::rules_only(&UserRules::default()).unwrap())
}

fn agent(model: &str) -> Agent {
    Agent {
        price_in: 1.0,
        price_out: 2.0,
        ..Agent::new("lb", "lb", model)
    }
}

fn catalog(base: &str, wire: Wire, model: &str) -> Catalog {
    Catalog {
        default_role: "Keep placeholders as written.".into(),
        providers: vec![ProviderConfig {
            name: "lb".into(),
            wire,
            base_url: base.into(),
            needs_key: true,
            trust: Default::default(),
        }],
        agents: vec![agent(model)],
    }
}

fn orchestrator(base: &str, wire: Wire, model: &str, ledger: Option<Ledger>) -> Arc<Orchestrator> {
    orchestrator_with(
        base,
        wire,
        model,
        ledger,
        EchoEngine::default(),
        LocalClass::Small,
    )
}

fn orchestrator_with(
    base: &str,
    wire: Wire,
    model: &str,
    ledger: Option<Ledger>,
    local: impl LocalEngine + 'static,
    class: LocalClass,
) -> Arc<Orchestrator> {
    let store = Arc::new(MemoryStore::default());
    store.set("lb", &ApiKey::new(KEY).unwrap()).unwrap();
    let scanner = scanner();
    let mut o = Orchestrator::new(
        Sanitizer::new(scanner.clone()),
        Arc::new(Egress::new(scanner, ledger)),
        Some(Arc::new(local)),
        catalog(base, wire, model),
        Keys::new(store),
        class,
    );
    o.reliability.base_delay = Duration::from_millis(5);
    Arc::new(o)
}

async fn run(
    o: &Arc<Orchestrator>,
    task: Task,
    agent: Option<&str>,
) -> (tandem_core::router::run::Summary, Vec<RunEvent>) {
    let (tx, mut rx) = tokio::sync::mpsc::channel(100_000);
    let opts = RunOptions {
        task_id: "t".into(),
        agent: agent.map(String::from),
        max_tokens: 400,
        ..RunOptions::default()
    };
    let summary = o.run(task, opts, tx).await.unwrap();
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (summary, events)
}

/// The notices a run showed, in order.
fn notices_of(events: &[RunEvent]) -> Vec<&str> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Notice { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn ctx(class: LocalClass) -> Context {
    Context {
        local_class: class,
        cloud_available: true,
        cloud_unavailable_reason: None,
        force_cloud: false,
        device: None,
        device_chosen: false,
        no_local: false,
        degraded: None,
    }
}

#[test]
fn plans_follow_privacy_then_capability() {
    let s = scanner();
    let task = |prompt: &str, attach: Option<(&str, bool)>| Task {
        prompt: prompt.into(),
        attachments: attach
            .map(|(t, sensitive)| {
                vec![Attachment {
                    name: "doc.txt".into(),
                    text: t.into(),
                    sensitive_source: sensitive,
                }]
            })
            .unwrap_or_default(),
        ..Task::default()
    };
    // Summarising is local-friendly: a large local model keeps it.
    let p = router::plan(
        &s,
        &task(
            "Summarize this note in two lines.",
            Some(("We met on Monday and agreed on the plan.", false)),
        ),
        &ctx(LocalClass::Large),
    );
    assert_eq!(p.route, Route::Local, "{p:?}");
    // Code for a small model: cloud; with an email: split by masking.
    let p = router::plan(
        &s,
        &task("Write a Rust function that parses RFC 3339 dates", None),
        &ctx(LocalClass::Small),
    );
    assert_eq!((p.route, p.strategy), (Route::Cloud, None));
    let p = router::plan(
        &s,
        &task("Write a Rust function that emails jane.doe@posteo.de", None),
        &ctx(LocalClass::Small),
    );
    assert_eq!((p.route, p.strategy), (Route::Split, Some(How::Mask)));
    // A private passage in an attachment: the local model reads it.
    let p = router::plan(
        &s,
        &task(
            "Draft a reply to this letter",
            Some((
                "I was diagnosed with diabetes in May. Please reply by Friday.",
                false,
            )),
        ),
        &ctx(LocalClass::Small),
    );
    assert_eq!(
        (p.route, p.strategy),
        (Route::Split, Some(How::LocalExtract)),
        "{p:?}"
    );
    assert!(p
        .fragments
        .iter()
        .any(|f| f.source == "doc.txt" && f.class == Verdict::LocalOnly));
    // A file from a sensitive folder is local only, whatever it says.
    let p = router::plan(
        &s,
        &task(
            "Draft a reply to this letter",
            Some(("Please reply by Friday.", true)),
        ),
        &ctx(LocalClass::Small),
    );
    assert!(p
        .fragments
        .iter()
        .filter(|f| f.source == "doc.txt")
        .all(|f| f.class == Verdict::LocalOnly));
    assert!(p
        .reasons
        .iter()
        .any(|r| r.contains("folder marked sensitive")));
    // Policy private: nothing non-public leaves. Offline: local, and the reason says why.
    let mut t = task("Write a Rust function that emails jane.doe@posteo.de", None);
    t.policy = Policy::Private;
    assert_eq!(
        router::plan(&s, &t, &ctx(LocalClass::Small)).route,
        Route::Local
    );
    let off = Context {
        cloud_available: false,
        cloud_unavailable_reason: Some("the network is offline".into()),
        ..ctx(LocalClass::Small)
    };
    let p = router::plan(&s, &task("Write a Rust function", None), &off);
    assert_eq!(p.route, Route::Local);
    assert!(p.reasons[0].contains("offline"), "{p:?}");
    // Policy private also covers earlier answers, which were restored on the device.
    let mut t = task("Write a Rust function that parses dates", None);
    t.policy = Policy::Private;
    t.history = vec![ChatMessage::new(
        Role::Assistant,
        "I wrote to jane.doe@posteo.de for you.",
    )];
    assert_eq!(
        router::plan(&s, &t, &ctx(LocalClass::Small)).route,
        Route::Local
    );
    // A question that is wholly private stays local.
    let p = router::plan(
        &s,
        &task("I was diagnosed with HIV last week and feel lost.", None),
        &ctx(LocalClass::Small),
    );
    assert_eq!(p.route, Route::Local, "{p:?}");
}

/// The user's own material loses its names, places, links and codes before it leaves; a
/// question about the world keeps them; policy private keeps such material on the device.
#[test]
fn personal_material_masks_names_places_and_links() {
    let s = scanner();
    let task = |prompt: &str| Task {
        prompt: prompt.into(),
        ..Task::default()
    };
    let letter = "Write a letter for me to the Plovdiv Regional Court asking when my case \
                  will be heard. Mention the hearing at Sofia Central Station and the file \
                  at https://example.org/case/7731.";
    let p = router::plan(&s, &task(letter), &ctx(LocalClass::Small));
    assert_eq!(
        (p.route, p.strategy),
        (Route::Split, Some(How::Mask)),
        "{p:?}"
    );
    assert!(
        p.reasons.iter().any(|r| r.contains("reads as personal")),
        "{p:?}"
    );
    assert!(p.fragments.iter().any(|f| f.class == Verdict::Maskable));
    let draft = Draft {
        task: "t".into(),
        agent: agent("m"),
        system: None,
        turns: vec![Turn::new(Role::User, letter)],
        max_tokens: None,
        temperature: None,
        tools: Default::default(),
        reasons: Vec::new(),
        decisions: Default::default(),
    };
    let sent = Sanitizer::new(s.clone())
        .sanitize(draft, &mut Pseudonymizer::new())
        .unwrap()
        .text();
    for private in ["Plovdiv", "Sofia", "example.org", "7731"] {
        assert!(!sent.contains(private), "{private} left in {sent}");
    }
    assert!(sent.contains("Write a letter for me"), "{sent}");
    // A question about the world is not personal: it goes as written.
    let p = router::plan(
        &s,
        &task("Which river flows through Plovdiv and how long is it?"),
        &ctx(LocalClass::Small),
    );
    assert_eq!((p.route, p.strategy), (Route::Cloud, None), "{p:?}");
    // Policy private counts names as not public anywhere: the task stays local.
    let mut t = task("Which river flows through Plovdiv and how long is it?");
    t.policy = Policy::Private;
    assert_eq!(
        router::plan(&s, &t, &ctx(LocalClass::Small)).route,
        Route::Local
    );
    // ... and so are names the capital-letter rules cannot see: lowercase ones, codes, other
    // scripts (the word list decides); a question in everyday words still goes out.
    let words = tandem_core::sensitivity::CommonWords::system().expect(
        "policy private needs a word list in /usr/share/dict (Debian: wamerican-large, installed by scripts/setup.sh) or TANDEM_WORDS",
    );
    assert!(words.len() > 10_000, "{}", words.source().display());
    for prompt in [
        "The story of the russian company rostelecom",
        "Write a sale deed agreement for an apartment in pune",
        "Translate: 我在艺传新闻工作",
        "Explain the COMAC C919 certification",
    ] {
        let mut t = task(prompt);
        t.policy = Policy::Private;
        let p = router::plan(&s, &t, &ctx(LocalClass::Small));
        assert_eq!(p.route, Route::Local, "{prompt}: {p:?}");
        assert!(
            p.reasons
                .iter()
                .any(|r| r.contains("no list of everyday words knows")),
            "{p:?}"
        );
    }
    let mut t = task("Why does the sky look blue during the day and red at sunset?");
    t.policy = Policy::Private;
    let p = router::plan(&s, &t, &ctx(LocalClass::Small));
    assert_eq!(p.route, Route::Cloud, "{p:?}");
    // Pasted material (80 words or more) reads as personal even without "I" or "my".
    let pasted = format!(
        "Rewrite this press release: {}",
        "Neil Agius will swim from Gozo to Sicily next spring with Wave of Change. ".repeat(7)
    );
    assert!(tandem_core::sensitivity::reads_personal(&pasted));
    assert!(!tandem_core::sensitivity::reads_personal(
        "Which river flows through Plovdiv?"
    ));
}

/// What the cloud receives of a text that is neither the user's own material nor an exam
/// question, under policy balanced (PAPILLON's leakage measure counts such names).
fn sent_of(s: &std::sync::Arc<Scanner>, prompt: &str) -> String {
    let task = Task {
        prompt: prompt.into(),
        ..Task::default()
    };
    let p = router::plan(s, &task, &ctx(LocalClass::Small));
    let draft = Draft {
        task: "t".into(),
        agent: agent("m"),
        system: None,
        turns: vec![Turn::new(Role::User, prompt)],
        max_tokens: None,
        temperature: None,
        tools: Default::default(),
        reasons: Vec::new(),
        decisions: p.decisions,
    };
    Sanitizer::new(s.clone())
        .sanitize(draft, &mut Pseudonymizer::new())
        .unwrap()
        .text()
}

/// For each (prompt, gone, kept): what leaves for the prompt holds none of `gone` and all of
/// `kept`.
fn gone_and_kept(s: &std::sync::Arc<Scanner>, cases: &[(&str, &[&str], &[&str])]) {
    for (prompt, gone, kept) in cases {
        let sent = sent_of(s, prompt);
        for g in *gone {
            assert!(!sent.contains(g), "{g:?} left in {sent}");
        }
        for k in *kept {
            assert!(sent.contains(k), "{k:?} lost from {sent}");
        }
    }
}

/// A task about a named place, company or person loses the names (the cloud works on
/// placeholders, restored on the device); a short question about the world keeps the names a
/// dictionary knows and loses the ones it does not; names of technologies, famous people and
/// an exam's terms stay, so the task stays answerable.
#[test]
fn a_task_loses_its_names_and_a_world_question_keeps_public_ones() {
    let s = scanner();
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "Write an ad for a moving service from Belgium and Luxembourg to Spain",
            &["Belgium", "Luxembourg", "Spain"],
            &["moving service"],
        ),
        (
            "The story of the russian company rostelecom",
            &["rostelecom"],
            &["The story of the", "company"],
        ),
        (
            "write the script for a short commercial, for a company called tech stop, located in madera.",
            &["tech stop", "madera"],
            &["short commercial"],
        ),
        (
            "Generate slides for a Cloudflare training session at Epic Systems",
            &["Cloudflare", "Epic Systems"],
            &["training session"],
        ),
        ("isnt it headquartered in jeddah ?", &["jeddah"], &["headquartered"]),
        ("Which river flows through Plovdiv?", &[], &["Plovdiv"]),
        // A famous person's name stays (`figures`), a private one does not.
        ("What did Sigmund Freud write about dreams?", &[], &["Sigmund Freud"]),
        (
            "Explain Albert Einstein's theory of special relativity in simple terms.",
            &[],
            &["Albert Einstein's theory"],
        ),
        ("What did Maria Keller write about dreams?", &["Maria", "Keller"], &["write about dreams"]),
        (
            "Write a Python script that parses RFC 3339 dates and explain how Kubernetes schedules it",
            &[],
            &["Python", "RFC 3339", "Kubernetes"],
        ),
        (
            "The fact that the Moon always shows its same face to Earth is evidence that it rotates about once per\nA. day\nB. month\nAnswer:",
            &[],
            &["Moon", "Earth"],
        ),
    ];
    gone_and_kept(&s, cases);
    // A country keeps its kind: the cloud knows what the task is about.
    let sent = sent_of(&s, "Write an ad for moving from Belgium to Spain");
    assert!(sent.contains("from [COUNTRY_1] to [COUNTRY_2]"), "{sent}");
    // So does a large city (GeoNames); a name that is also a word or a person's stays an entity.
    let sent = sent_of(&s, "Write an ad for my move from Tehran to Vienna");
    assert!(sent.contains("from [CITY_1] to [CITY_2]"), "{sent}");
    // Names written with full stops are masked whole: initials, dotted acronyms, cited authors.
    let sent = sent_of(
        &s,
        "My essay compares H.G. Wells with Song et al. and my lunches at K.F.C. in the U.S. last year.",
    );
    for gone in ["Wells", "Song", "K.F.C", "U.S"] {
        assert!(!sent.contains(gone), "{gone:?} left in {sent}");
    }
    assert!(sent.contains("[COUNTRY_1]"), "{sent}");
    // An organisation whose name says what it is keeps that kind, and loses its name.
    let sent = sent_of(
        &s,
        "I bank with Harlow Savings Bank and my son goes to Pinecrest Elementary School. Write my complaint letter to the Bank of Westmoor.",
    );
    for gone in ["Harlow", "Pinecrest", "Westmoor"] {
        assert!(!sent.contains(gone), "{gone:?} left in {sent}");
    }
    assert!(
        sent.contains("[BANK_1] and")
            && sent.contains("goes to [SCHOOL_1]")
            && sent.contains("to the [BANK_2]"),
        "{sent}"
    );
    // A number with a unit or an ordinal is not a reference code.
    let sent = sent_of(
        &s,
        "Write a poem where the 10th bag of 300g chips is the hero",
    );
    assert!(sent.contains("10th") && sent.contains("300g"), "{sent}");
}

/// An exam question is about the world: the public names, ages and numeric options it asks
/// about leave as written, so the cloud can still answer; a name no dictionary knows and an
/// identifier in it are masked as anywhere. Mutation-checked: without the exam rule (either
/// half), "Morris Worm", "Love Bug", "32-year-old" or "400 N" leave as placeholders.
#[test]
fn an_exam_question_keeps_what_it_asks_about() {
    let s = scanner();
    let cases: &[(&str, &[&str], &[&str])] = &[
        (
            "What was the first buffer overflow attack?\nA. Love Bug\nB. SQL Slammer\nC. Morris Worm\nD. Code Red\nAnswer:",
            &[],
            &["Love Bug", "SQL Slammer", "Morris Worm", "Code Red"],
        ),
        (
            "A 32-year-old man is brought to the emergency department after a crash. Which bone is most likely fractured?\nA. Femur\nB. Pelvis\nAnswer:",
            &[],
            &["32-year-old", "A. Femur"],
        ),
        (
            "How much will he weigh on this planet?\nA. 200 N\nB. 400 N\nC. 800 N\nD. 1600 N\nAnswer:",
            &[],
            &["B. 400 N\nC. 800 N\nD. 1600 N"],
        ),
        (
            "Which grade did Emily Zhekova get? Mail it to emily.zhekova@gmail.com.\nA. B+\nB. A-\nAnswer:",
            &["Zhekova", "gmail.com"],
            &["Which grade did", "A. B+"],
        ),
    ];
    gone_and_kept(&s, cases);
}

#[tokio::test]
async fn a_masked_split_is_restored_on_the_device_and_recorded() {
    let lb = Loopback::start(KEY).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(&dir.path().join("ledger.sqlite3")).unwrap();
    let o = orchestrator(
        &lb.base_url(),
        Wire::Anthropic,
        "echo",
        Some(ledger.clone()),
    );
    let task = Task {
        prompt: "Please thank jane.doe@posteo.de for the IBAN DE89 3704 0044 0532 0130 00".into(),
        ..Task::default()
    };
    let (summary, events) = run(&o, task.clone(), Some("lb")).await;
    // The echo model repeats what it got, so the user sees the original text restored.
    assert_eq!(summary.text, task.prompt);
    assert_eq!((summary.masked, summary.route), (2, Some(Route::Split)));
    assert!(matches!(&events[0], RunEvent::Plan { plan } if plan.strategy == Some(How::Mask)));
    let sent = lb.received()[0].to_string();
    assert!(
        !sent.contains("posteo") && !sent.contains("3704") && sent.contains("[EMAIL_1]"),
        "{sent}"
    );
    let entries = ledger.list(10).await.unwrap();
    assert_eq!(entries.len(), 1);
    let e = &entries[0];
    assert_eq!(
        (e.status, e.agent.as_str(), e.model.as_str()),
        (Status::Sent, "lb", "echo")
    );
    let payload = e.payload.as_deref().unwrap();
    assert!(payload.contains("[IBAN_1]") && !payload.contains("posteo"));
    assert_eq!(e.sha256, tandem_core::ledger::sha256_hex(payload));
    assert_eq!(e.bytes as usize, payload.len());
    assert!(
        e.tokens_in.is_some() && e.cost_usd.is_some(),
        "finished with usage: {e:?}"
    );
}

/// Self-knowledge: a multiple-choice question the complexity guess sends away is first answered
/// by a medium local model. Sure of itself, it keeps its answer and nothing leaves; unsure, the
/// task goes on as planned, through the same sanitizer and door (the email stays masked), and
/// the summary says it escalated and why.
#[tokio::test]
async fn a_sure_local_model_keeps_its_answer_and_an_unsure_one_escalates() {
    let prompt = "My colleague jane.doe@posteo.de asks which of these is a prime number.\nA. 4\nB. 5\nC. 6\nD. 8\nAnswer:";
    // 0.27 between four letters is a guess (near chance): never kept.
    for (p, escalates) in [(0.95f32, false), (0.27, true)] {
        let lb = Loopback::start(KEY).await.unwrap();
        let o = orchestrator_with(
            &lb.base_url(),
            Wire::Openai,
            "echo",
            None,
            EchoEngine::sure(p),
            LocalClass::Medium,
        );
        let task = Task {
            prompt: prompt.into(),
            ..Task::default()
        };
        let (summary, events) = run(&o, task, None).await;
        let RunEvent::Plan { plan } = &events[0] else {
            panic!("{events:?}")
        };
        assert_eq!(plan.route, Route::Split, "{:?}", plan.reasons);
        assert!(plan.local_attempt, "{:?}", plan.reasons);
        let notices = notices_of(&events);
        assert_eq!(
            summary.confidence,
            Some(p as f64 / 1.0).map(|c| (c * 1000.0).round() / 1000.0)
        );
        if escalates {
            assert!(summary.escalated);
            assert_eq!(summary.answered_by.as_deref(), Some("cloud"));
            assert!(
                notices
                    .iter()
                    .any(|n| n.starts_with("escalated: local confidence 0.27")),
                "{notices:?}"
            );
            let sent = lb.received();
            assert_eq!(sent.len(), 1);
            let body = sent[0].to_string();
            assert!(
                !body.contains("posteo") && body.contains("[EMAIL_1]"),
                "{body}"
            );
            assert!(summary.cloud_tokens > 0 && summary.local_tokens > 0);
        } else {
            assert!(!summary.escalated);
            assert_eq!(summary.answered_by.as_deref(), Some("local"));
            assert_eq!(summary.text, "A. 4");
            assert!(
                notices
                    .iter()
                    .any(|n| n.starts_with("answered locally: confidence 0.95")),
                "{notices:?}"
            );
            assert!(
                lb.received().is_empty(),
                "nothing leaves when the local model is sure"
            );
            assert_eq!(summary.cloud_tokens, 0);
        }
    }
}

/// A worked problem the complexity guess sends away is first solved by a medium local model,
/// in words and as a program (and, where they disagree, as a second program); the answer is
/// kept only when two of them reach the same number. The echo model's programs are its
/// prompts, not arithmetic: nothing agrees, so the task escalates through the same sanitizer
/// and door (the email stays masked), after three local generations, and says why.
#[tokio::test]
async fn a_worked_problem_escalates_unless_two_local_solutions_agree() {
    let prompt = "My landlord anna.berg@posteo.de charges 1180 euros a month and raised it by 3 percent in March. How much rent do I pay over the 12 months if the raise applied for 10 of them?";
    let lb = Loopback::start(KEY).await.unwrap();
    let o = orchestrator_with(
        &lb.base_url(),
        Wire::Openai,
        "echo",
        None,
        EchoEngine::sure(0.97),
        LocalClass::Medium,
    );
    let task = Task {
        prompt: prompt.into(),
        ..Task::default()
    };
    // Within a conversation the problem is not written as a program, so no attempt is made.
    let mut later = task.clone();
    later.history = vec![
        ChatMessage::user("I am planning my budget."),
        ChatMessage::new(Role::Assistant, "Happy to help."),
    ];
    assert!(!router::plan(&scanner(), &later, &ctx(LocalClass::Medium)).local_attempt);
    let (summary, events) = run(&o, task, None).await;
    let RunEvent::Plan { plan } = &events[0] else {
        panic!("{events:?}")
    };
    assert!(plan.local_attempt, "{:?}", plan.reasons);
    assert!(
        plan.reasons
            .iter()
            .any(|r| r.contains("worked in words and as arithmetic")),
        "{:?}",
        plan.reasons
    );
    let steps: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Step { step, place } if place == "local" => Some(step.as_str()),
            _ => None,
        })
        .collect();
    // The three local attempts come first (the rewrite for the cloud follows them).
    assert_eq!(
        steps[..3],
        [
            "answer and check its confidence",
            "check the answer as arithmetic",
            "check it again as arithmetic, another way"
        ]
    );
    // Sure of every token, yet not kept: confidence alone decides nothing for worked problems.
    assert_eq!(summary.confidence, Some(0.97));
    assert!(summary.escalated);
    assert_eq!(summary.answered_by.as_deref(), Some("cloud"));
    let notices = notices_of(&events);
    assert!(
        notices.iter().any(|n| n.starts_with(
            "escalated: local solutions disagree (in words: 10; as arithmetic: none, none)"
        )),
        "{notices:?}"
    );
    let sent = lb.received();
    assert_eq!(sent.len(), 1);
    let body = sent[0].to_string();
    assert!(
        !body.contains("posteo") && body.contains("[EMAIL_1]"),
        "{body}"
    );
}

/// A solution that cannot be an answer confirms nothing, however the others read: reasoning
/// cut off at the length limit (its last number is where it stopped), and numbers below zero
/// for a question that allows none. The words and both programs are scripted; a case where
/// all three agree shows the same run keeping the answer. Each escalation sends one request,
/// the neighbour's address masked.
#[tokio::test]
async fn a_worked_solution_cut_off_or_below_zero_confirms_nothing() {
    let prompt = "My neighbour joe.k@posteo.de has 33 lollipops and gives 2 to his sister. How many lollipops does Joe have left?";
    let words = "Solve the problem.";
    let first = "Write a short Python program";
    let second = "Answer the question with a Python program";
    for (case, script, kept) in [
        (
            "all three agree",
            [
                "33 - 2 = 31 lollipops are left.\nAnswer: 31".to_string(),
                "answer = 33 - 2\n```".into(),
                "answer = 31\n```".into(),
            ],
            true,
        ),
        (
            // Looping until the limit, the last number written matches the first program.
            "words cut off",
            [
                "31 ".repeat(500),
                "answer = 31\n```".into(),
                "answer = 40\n```".into(),
            ],
            false,
        ),
        (
            // Subtracted the wrong way round, twice: the words had it right.
            "programs below zero",
            [
                "33 - 2 = 31 lollipops are left.\nAnswer: 31".to_string(),
                "answer = 2 - 33 + 6\n```".into(),
                "answer = 6 - 33 + 2\n```".into(),
            ],
            false,
        ),
    ] {
        let lb = Loopback::start(KEY).await.unwrap();
        let [w, p1, p2] = script;
        let o = orchestrator_with(
            &lb.base_url(),
            Wire::Openai,
            "echo",
            None,
            Scripted {
                replies: vec![(words, w), (first, p1), (second, p2)],
                echo: EchoEngine::sure(0.97),
            },
            LocalClass::Medium,
        );
        let task = Task {
            prompt: prompt.into(),
            ..Task::default()
        };
        let (summary, events) = run(&o, task, None).await;
        let notices = notices_of(&events);
        assert_eq!(!summary.escalated, kept, "{case}: {notices:?}");
        let sent = lb.received();
        if kept {
            assert_eq!(summary.answered_by.as_deref(), Some("local"), "{case}");
            assert!(sent.is_empty(), "{case}: {sent:?}");
            continue;
        }
        assert_eq!(summary.answered_by.as_deref(), Some("cloud"), "{case}");
        let why = match case {
            "words cut off" => "escalated: local solutions disagree (in words: none, cut off at the length limit; as arithmetic: 31, 40)",
            _ => "escalated: local solutions disagree (in words: 31; as arithmetic: -25, below zero, -25, below zero)",
        };
        assert!(
            notices.iter().any(|n| n.starts_with(why)),
            "{case}: {notices:?}"
        );
        assert_eq!(sent.len(), 1, "{case}");
        let body = sent[0].to_string();
        assert!(
            !body.contains("posteo") && body.contains("[EMAIL_1]"),
            "{case}: {body}"
        );
    }
}

/// A document that marks itself confidential ("for internal use") is treated like a file from a
/// sensitive folder, though no detector finds anything in its sentences: the plan says why, and
/// through the real orchestrator nothing of it, nor its name, reaches the cloud.
#[tokio::test]
async fn a_document_marked_for_internal_use_stays_on_the_device() {
    let doc = "Lincoln High Emergency Contact List (for internal use)\nThe east stairwell passage \
               opens with the blue key.\nThe drill is planned for the second week of March.\n";
    let task = Task {
        prompt: "Write a short summary of this document for the parents' newsletter.".into(),
        attachments: vec![Attachment {
            name: "lincoln-contacts.txt".into(),
            text: doc.into(),
            sensitive_source: false,
        }],
        ..Task::default()
    };
    assert_eq!(
        tandem_core::router::confidential_marker(doc),
        Some("for internal use")
    );
    let p = router::plan(&scanner(), &task, &ctx(LocalClass::Small));
    assert!(
        p.fragments
            .iter()
            .filter(|f| f.source == "lincoln-contacts.txt")
            .all(|f| f.class == Verdict::LocalOnly),
        "{p:?}"
    );
    assert!(
        p.reasons
            .iter()
            .any(|r| r.contains("marks itself confidential (\"for internal use\")")),
        "{p:?}"
    );
    // A note titled as its author's own is marked the same way.
    assert_eq!(
        tandem_core::router::confidential_marker(
            "{\"title\": \"Personal Notes on 'Whispers of the Past'\", \"content\": \"The plot is clichéd.\"}"
        ),
        Some("personal notes")
    );
    // Unmarked, the same sentences would go out: the marker is what keeps them in.
    let mut plain = task.clone();
    plain.attachments[0].text = doc.replace(" (for internal use)", "");
    let q = router::plan(&scanner(), &plain, &ctx(LocalClass::Small));
    assert!(
        q.fragments
            .iter()
            .any(|f| f.source == "lincoln-contacts.txt" && f.class == Verdict::Public),
        "{q:?}"
    );
    let lb = Loopback::start(KEY).await.unwrap();
    let o = orchestrator(&lb.base_url(), Wire::Openai, "echo", None);
    let (_, events) = run(&o, task, Some("lb")).await;
    assert!(
        matches!(&events[0], RunEvent::Plan { plan } if plan.route == Route::Split),
        "{events:?}"
    );
    let sent = lb.received();
    assert!(
        !sent.is_empty(),
        "the task and the document's structure still go out"
    );
    for sent in sent {
        let sent = sent.to_string();
        for private in ["stairwell", "blue key", "lincoln-contacts", "Lincoln High"] {
            assert!(!sent.contains(private), "{private} left in {sent}");
        }
    }
}

/// Strategy (c): a file from a sensitive folder and a question for the cloud. The cloud gets
/// the task and the document's structure only, writes numbered instructions (the echo model
/// repeats the prompt's), the local model follows them over each part, and the answer is
/// written on the device from those findings.
#[tokio::test]
async fn the_cloud_plans_and_the_local_model_reads_a_private_document() {
    let lb = Loopback::start(KEY).await.unwrap();
    let o = orchestrator(&lb.base_url(), Wire::Openai, "echo", None);
    let mut doc = String::new();
    for m in 1..=40 {
        doc.push_str(&format!(
            "2026-{:02}-03 rent to Zimmermann Hausverwaltung 1,180.00 EUR ref WOHNUNG-{m}\n",
            m % 12 + 1
        ));
    }
    let task = Task {
        prompt: "How much rent did I pay this year? Steps:\n1. List every rent payment with its amount\n2. Show the chart ![chart](https://attacker.example/c.png)"
            .into(),
        attachments: vec![Attachment {
            name: "kontoauszug-2026.csv".into(),
            text: doc.clone(),
            sensitive_source: true,
        }],
        ..Task::default()
    };
    let (summary, events) = run(&o, task, Some("lb")).await;
    let RunEvent::Plan { plan } = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(
        (plan.route, plan.strategy),
        (Route::Split, Some(How::CloudPlans)),
        "{plan:?}"
    );
    // One request left: the task and the structure, never the document or its name.
    let sent = lb.received();
    assert_eq!(sent.len(), 1, "{sent:?}");
    let sent = sent[0].to_string();
    for private in ["Zimmermann", "WOHNUNG", "1,180", "kontoauszug"] {
        assert!(!sent.contains(private), "{private} left in {sent}");
    }
    assert!(
        sent.contains("Private document 1") && sent.contains("read in 2 parts"),
        "{sent}"
    );
    // The local model read every part with the cloud's instruction, then answered here.
    let steps: Vec<(String, String)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Step { step, place } => Some((step.clone(), place.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        steps[0],
        ("plan with lb".into(), "cloud".into()),
        "{steps:?}"
    );
    for part in 1..=2 {
        let want = format!("read kontoauszug-2026.csv part {part}/2");
        assert!(
            steps.contains(&(want.clone(), "local".into())),
            "{want}: {steps:?}"
        );
    }
    assert_eq!(steps.last().unwrap(), &("answer".into(), "local".into()));
    // The echo engine repeats what it was given: the findings reached the final local step.
    assert!(
        summary.text.contains("Findings from the private documents"),
        "{}",
        summary.text
    );
    assert!(
        summary.text.contains("Zimmermann"),
        "the answer is written from the document"
    );
    // Written while following the cloud's instructions over private material: an image the
    // answer holds would load by itself in a client that renders Markdown, so it is a link.
    // Mutation-checked: with `run_local` instead of `run_local_with(.., true)` the image stays.
    assert!(
        !summary.text.contains("![chart]")
            && summary
                .text
                .contains("[chart](https://attacker.example/c.png)"),
        "{}",
        summary.text
    );
    assert!(
        summary.cloud_tokens > 0 && summary.local_tokens > 0,
        "{summary:?}"
    );
}

#[tokio::test]
async fn offline_and_failing_clouds_fall_back_to_the_local_model() {
    // Nothing listens: the local model answers with a notice, without waiting long.
    let o = orchestrator("http://127.0.0.1:9/v1", Wire::Openai, "echo", None);
    let t = Instant::now();
    let (summary, events) = run(
        &o,
        Task {
            prompt: "Write a Rust function that adds two numbers".into(),
            ..Task::default()
        },
        None,
    )
    .await;
    assert!(t.elapsed() < Duration::from_secs(10));
    assert!(
        summary.fell_back && summary.text.contains("Rust function"),
        "{summary:?}"
    );
    assert!(events
        .iter()
        .any(|e| matches!(e, RunEvent::Notice { text } if text.contains("local model"))));
    // A reply cut mid-way: what arrived stays, the local answer follows.
    let lb = Loopback::start(KEY).await.unwrap();
    let o = orchestrator(&lb.base_url(), Wire::Anthropic, "overloaded", None);
    let (summary, _) = run(
        &o,
        Task {
            prompt: "Write a Rust function that adds two numbers".into(),
            ..Task::default()
        },
        None,
    )
    .await;
    assert!(
        summary.fell_back
            && summary.text.starts_with("Hello")
            && summary.text.contains("adds two numbers"),
        "{summary:?}"
    );
}

#[tokio::test]
async fn egress_blocks_paused_and_rescan_hits_and_records_them_without_payload() {
    let lb = Loopback::start(KEY).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(&dir.path().join("l.sqlite3")).unwrap();
    // The sanitizer does not know the project name; the guard (with newer rules) does.
    let strict = UserRules {
        local_only_terms: vec!["Project Nightjar".into()],
        ..UserRules::default()
    };
    let guard = Egress::new(
        Arc::new(Scanner::rules_only(&strict).unwrap()),
        Some(ledger.clone()),
    );
    let draft = Draft {
        task: "t".into(),
        agent: agent("echo"),
        system: None,
        turns: vec![Turn::new(Role::User, "Status of Project Nightjar?")],
        max_tokens: None,
        temperature: None,
        tools: Default::default(),
        reasons: vec!["test".into()],
        decisions: Default::default(),
    };
    let req = Sanitizer::new(scanner())
        .sanitize(draft.clone(), &mut Pseudonymizer::new())
        .unwrap();
    let provider = tandem_core::cloud::reliable::Reliable::new(
        tandem_core::cloud::connect(Wire::Openai, "lb", &lb.base_url()).unwrap(),
        Default::default(),
    );
    match guard.send(req.clone(), &provider, KEY).await {
        Err(EgressError::Blocked(why)) => assert!(why.contains("CUSTOM"), "{why}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("sent"),
    }
    guard.set_paused(true);
    let ok_req = Sanitizer::new(scanner())
        .sanitize(
            Draft {
                turns: vec![Turn::new(Role::User, "hello")],
                ..draft
            },
            &mut Pseudonymizer::new(),
        )
        .unwrap();
    assert!(matches!(
        guard.send(ok_req.clone(), &provider, KEY).await,
        Err(EgressError::Paused)
    ));
    assert!(lb.received().is_empty(), "nothing left the device");
    let entries = ledger.list(10).await.unwrap();
    assert_eq!(entries.len(), 2);
    assert!(entries
        .iter()
        .all(|e| e.status == Status::Blocked && e.payload.is_none() && e.bytes > 0));
    guard.set_paused(false);
    assert!(guard.send(ok_req, &provider, KEY).await.is_ok());
    assert_eq!(lb.received().len(), 1);
    let totals = ledger.totals(None).await.unwrap();
    assert_eq!((totals.sent, totals.blocked), (1, 2));
}

#[tokio::test]
async fn every_transmission_has_its_ledger_row_and_a_pause_stops_retries() {
    use futures::StreamExt;
    use tandem_core::cloud::reliable::{Policy, Reliable};
    let lb = Loopback::start(KEY).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(&dir.path().join("l.sqlite3")).unwrap();
    let guard = Egress::new(scanner(), Some(ledger.clone()));
    let provider = |base_delay| {
        Reliable::new(
            tandem_core::cloud::connect(Wire::Openai, "lb", &lb.base_url()).unwrap(),
            Policy {
                base_delay,
                ..Policy::default()
            },
        )
    };
    let request = |task: &str, model: &str| {
        Sanitizer::new(scanner())
            .sanitize(
                Draft {
                    task: task.into(),
                    agent: agent(model),
                    system: None,
                    turns: vec![Turn::new(Role::User, "hello there")],
                    max_tokens: None,
                    temperature: None,
                    tools: Default::default(),
                    reasons: vec!["test".into()],
                    decisions: Default::default(),
                },
                &mut Pseudonymizer::new(),
            )
            .unwrap()
    };
    // Two 503s, then an answer: three transmissions, three rows with the same payload.
    let stream = guard
        .send(
            request("t-flaky", "flaky"),
            &provider(Duration::from_millis(5)),
            KEY,
        )
        .await
        .unwrap();
    let events: Vec<_> = stream.collect().await;
    assert!(events.iter().all(|e| e.is_ok()), "{events:?}");
    assert_eq!(lb.received().len(), 3);
    let rows = rows_of(&ledger, "t-flaky").await;
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows
        .iter()
        .all(|r| r.payload == rows[0].payload && r.bytes > 0));
    let status: Vec<_> = rows.iter().map(|r| r.status).collect();
    assert_eq!(status, [Status::Failed, Status::Failed, Status::Sent]);
    assert!(
        rows[0].error.as_deref().unwrap_or("").contains("503"),
        "{rows:?}"
    );
    assert!(
        rows[1].error.is_some() && rows[2].error.is_none(),
        "{rows:?}"
    );
    assert!(rows[2].tokens_out.is_some(), "{rows:?}");
    // Pause cloud during the back-off: the retry does not go, and says why.
    let before = lb.received().len();
    let slow = provider(Duration::from_millis(400));
    let (res, ()) = tokio::join!(
        guard.send(request("t-paused", "broken"), &slow, KEY),
        async {
            tokio::time::sleep(Duration::from_millis(150)).await;
            guard.set_paused(true);
        }
    );
    assert!(matches!(res, Err(EgressError::Paused)), "{:?}", res.err());
    assert_eq!(
        lb.received().len(),
        before + 1,
        "one transmission, no retry"
    );
    let rows = rows_of(&ledger, "t-paused").await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].status, Status::Failed, "{rows:?}");
    // Pause while a reply is streaming (a word every 100 ms for 5 s): the reply stops within
    // a poll of the switch, with an error, and the connection is dropped. Mutation-checked:
    // without the poll in `transmit` all 50 words arrive.
    guard.set_paused(false);
    let mut stream = guard
        .send(
            request("t-trickle", "trickle"),
            &provider(Duration::from_millis(5)),
            KEY,
        )
        .await
        .unwrap();
    let (mut words, mut last) = (0, None);
    while let Some(ev) = stream.next().await {
        match ev {
            Ok(tandem_core::cloud::CloudEvent::Delta { .. }) => words += 1,
            Ok(_) => {}
            Err(e) => last = Some(e),
        }
        if words == 3 && !guard.paused() {
            guard.set_paused(true);
        }
    }
    // (Counted in words, not seconds: the words keep coming 100 ms apart whatever the load.)
    assert!(words < 40, "{words} of 50 words arrived after Pause");
    assert!(
        last.as_ref()
            .is_some_and(|e| e.to_string().contains("Pause")),
        "{last:?}"
    );
    let rows = rows_of(&ledger, "t-trickle").await;
    assert!(
        rows[0].error.as_deref().unwrap_or("").contains("Pause"),
        "{rows:?}"
    );
}

/// The ledger rows of one task, oldest first.
async fn rows_of(ledger: &Ledger, task: &str) -> Vec<tandem_core::ledger::LedgerEntry> {
    let mut rows: Vec<_> = ledger
        .list(100)
        .await
        .unwrap()
        .into_iter()
        .filter(|e| e.task == task)
        .collect();
    rows.sort_by_key(|e| e.id);
    rows
}

struct FixedClock(i64);
impl Clock for FixedClock {
    fn now_ms(&self) -> i64 {
        self.0
    }
}

#[tokio::test]
async fn the_ledger_persists_and_prunes_old_entries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ledger.sqlite3");
    let day = 86_400_000;
    let out = |i: usize| tandem_core::ledger::Outbound {
        task: format!("t{i}"),
        agent: "a".into(),
        provider: "p".into(),
        model: "m".into(),
        payload: format!("payload {i}"),
        reasons: vec![],
        wire: Vec::new(),
        destination: Default::default(),
    };
    {
        let l = Ledger::open_with(&path, Box::new(FixedClock(0)), Retention::default()).unwrap();
        let id = l.sent(out(0)).await.unwrap();
        l.finish(id, Some(10), Some(5), Some(0.01), None)
            .await
            .unwrap();
        let l2 = Ledger::open_with(&path, Box::new(FixedClock(100 * day)), Retention::default())
            .unwrap();
        l2.sent(out(1)).await.unwrap();
    }
    // Reopened a year later with 200-day retention: the first entry is gone, the second stays.
    let l = Ledger::open_with(
        &path,
        Box::new(FixedClock(250 * day)),
        Retention {
            max_age: Duration::from_secs(200 * 86_400),
            max_rows: 10,
        },
    )
    .unwrap();
    let entries = l.list(10).await.unwrap();
    assert_eq!(
        entries.iter().map(|e| e.task.as_str()).collect::<Vec<_>>(),
        vec!["t1"]
    );
    // Row cap.
    for i in 2..20 {
        l.sent(out(i)).await.unwrap();
    }
    drop(l);
    let l = Ledger::open_with(
        &path,
        Box::new(FixedClock(250 * day)),
        Retention {
            max_age: Duration::from_secs(200 * 86_400),
            max_rows: 5,
        },
    )
    .unwrap();
    assert_eq!(l.list(100).await.unwrap().len(), 5);
}

// ---- zero leaks -------------------------------------------------------------------------

fn luhn_digit(body: &[u32]) -> u32 {
    let sum: u32 = body
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            if i % 2 == 0 {
                let x = d * 2;
                if x > 9 {
                    x - 9
                } else {
                    x
                }
            } else {
                d
            }
        })
        .sum();
    (10 - sum % 10) % 10
}

fn iban_de(account: u64) -> String {
    let bban = format!("37040044{account:010}");
    let numeric = format!("{bban}131400"); // "DE00" moved to the end, letters as numbers
    let rem = numeric
        .chars()
        .fold(0u64, |r, c| (r * 10 + c.to_digit(10).unwrap() as u64) % 97);
    let check = 98 - rem;
    let raw = format!("DE{check:02}{bban}");
    raw.as_bytes()
        .chunks(4)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Debug, Clone)]
struct Planted {
    sentence: String,
    value: String,
}

fn planted() -> impl proptest::strategy::Strategy<Value = Planted> {
    let first = prop::sample::select(vec!["jane", "omar", "li.wei", "k.novak", "priya"]);
    let domain = prop::sample::select(vec![
        "posteo.de",
        "fastmail.fm",
        "proton.me",
        "uni-hamburg.de",
    ]);
    let condition = prop::sample::select(vec![
        "diabetes",
        "HIV",
        "depression",
        "epilepsy",
        "breast cancer",
        "schizophrenia",
    ]);
    prop_oneof![
        (first, domain, 10u32..99).prop_map(|(f, d, n)| {
            let v = format!("{f}{n}@{d}");
            Planted {
                sentence: format!("You can reach me at {v}."),
                value: v,
            }
        }),
        (0u64..9_999_999_999).prop_map(|a| {
            let v = iban_de(a);
            Planted {
                sentence: format!("Please transfer it to my IBAN {v} today."),
                value: v,
            }
        }),
        prop::collection::vec(0u32..10, 14).prop_map(|mut d| {
            d.insert(0, 4);
            let c = luhn_digit(&d);
            d.push(c);
            let s: String = d
                .iter()
                .map(|x| char::from_digit(*x, 10).unwrap())
                .collect();
            let v = format!("{} {} {} {}", &s[0..4], &s[4..8], &s[8..12], &s[12..16]);
            Planted {
                sentence: format!("My card number is {v}, expiring soon."),
                value: v,
            }
        }),
        (100u32..665, 10u32..99, 1000u32..9999).prop_map(|(a, g, s)| {
            let v = format!("{a}-{g}-{s}");
            Planted {
                sentence: format!("My SSN is {v} for the form."),
                value: v,
            }
        }),
        // Uniform characters, like the key IDs AWS issues (proptest's regex strings favour
        // repetition, which real keys do not have).
        prop::collection::vec(
            prop::sample::select(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".to_vec()),
            16
        )
        .prop_map(|k| String::from_utf8(k).unwrap())
        .prop_map(|k| {
            let v = format!("AKIA{k}");
            Planted {
                sentence: format!("aws_access_key_id = {v}"),
                value: v,
            }
        }),
        condition.prop_map(|c| Planted {
            sentence: format!("I was diagnosed with {c} last spring and I am scared."),
            value: c.to_string()
        }),
        (40u32..250).prop_map(|k| {
            let v = format!("${k},500");
            Planted {
                sentence: format!("My salary is {v} a year and I owe my landlord rent."),
                value: v,
            }
        }),
    ]
}

const FILLER: &[&str] = &[
    "The meeting moved to the second floor.",
    "Could you make the tone friendlier?",
    "We shipped the release last week.",
    "Keep it under two hundred words.",
];

#[derive(Debug, Clone)]
struct LeakCase {
    task: Task,
    values: Vec<String>,
}

fn leak_case() -> impl proptest::strategy::Strategy<Value = LeakCase> {
    (
        prop::collection::vec((planted(), 0usize..3, 0usize..FILLER.len()), 1..4),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(items, sensitive, force)| {
            let mut prompt = String::from("Write a short reply for me. ");
            let mut doc = String::new();
            let mut hist = String::new();
            let mut values = Vec::new();
            for (p, place, f) in items {
                let target = match place {
                    0 => &mut prompt,
                    1 => &mut doc,
                    _ => &mut hist,
                };
                target.push_str(&p.sentence);
                target.push(' ');
                target.push_str(FILLER[f]);
                target.push(' ');
                values.push(p.value);
            }
            let mut task = Task {
                prompt,
                ..Task::default()
            };
            if !doc.is_empty() {
                task.attachments.push(Attachment {
                    name: "notes.txt".into(),
                    text: doc,
                    sensitive_source: sensitive && force,
                });
            }
            if !hist.is_empty() {
                task.history = vec![
                    ChatMessage::user(hist),
                    ChatMessage::new(Role::Assistant, "Noted."),
                ];
            }
            LeakCase { task, values }
        })
}

/// The forms a leaked value could take in traffic: as written, digits only, no whitespace.
fn forms(v: &str) -> Vec<String> {
    let mut f = vec![v.to_string(), v.split_whitespace().collect::<String>()];
    let digits: String = v.chars().filter(char::is_ascii_digit).collect();
    if digits.len() >= 6 {
        f.push(digits);
    }
    f
}

/// Every task runs as a turn of a stored conversation (`host::run_turn`, the hosts' driver):
/// planted history is an earlier stored turn, the conversation's vault masks every step.
#[test]
fn zero_leaks_over_a_thousand_mixed_tasks() {
    use tandem_core::conversations::{Conversations, Turn as Stored};
    use tandem_core::host::{run_turn, TurnRequest};
    let rt = tokio::runtime::Runtime::new().unwrap();
    let lb = rt.block_on(Loopback::start(KEY)).unwrap();
    let o = orchestrator(&lb.base_url(), Wire::Openai, "echo", None);
    let dir = tempfile::tempdir().unwrap();
    let store = Conversations::open(&dir.path().join("c.sqlite3")).unwrap();
    let mut runner = TestRunner::new(Config {
        cases: 1000,
        failure_persistence: None,
        ..Config::default()
    });
    let cloud_used = std::cell::Cell::new(0usize);
    let result = runner.run(&leak_case(), |case| {
        let before = lb.received().len();
        // Half the tasks name the agent (cloud whenever privacy allows), half are routed.
        let force = case.values.len() % 2 == 0;
        let earlier = case.task.history.first().map(|h| {
            store
                .append(
                    None,
                    &Stored {
                        question: h.content.clone(),
                        answer: "Noted.".into(),
                        ..Stored::default()
                    },
                )
                .unwrap()
        });
        let out = rt
            .block_on(run_turn(
                &o,
                Some(&store),
                TurnRequest {
                    conversation: earlier,
                    prompt: case.task.prompt.clone(),
                    attachments: case.task.attachments.clone(),
                    task: "t".into(),
                    max_tokens: 400,
                    agent: force.then(|| "lb".to_string()),
                    ..TurnRequest::default()
                },
                |_| true,
                std::future::pending(),
            ))
            .unwrap();
        let summary = out.turn.summary;
        let traffic: String = lb.received()[before..]
            .iter()
            .map(|v| v.to_string())
            .collect();
        if !traffic.is_empty() {
            cloud_used.set(cloud_used.get() + 1);
        }
        for v in &case.values {
            for f in forms(v) {
                prop_assert!(
                    !traffic.contains(&f),
                    "leaked {f:?} (from {v:?}) in {traffic}\nsummary {summary:?}"
                );
            }
        }
        Ok(())
    });
    result.unwrap();
    // The test must exercise the cloud path, not pass by keeping everything local.
    let cloud_used = cloud_used.get();
    assert!(
        cloud_used > 500,
        "only {cloud_used} of 1000 tasks reached the cloud"
    );
    eprintln!("zero-leak property: 1000 tasks, {cloud_used} reached the loopback cloud, no planted value leaked");
}

/// A conversation's turns through `host::run_turn`: history goes along, events stream, the
/// turn is stored with its plan and summary; a stop ends a slow answer and is stored as stopped.
#[tokio::test]
async fn turns_are_run_streamed_stored_and_stoppable() {
    use tandem_core::conversations::Conversations;
    use tandem_core::host::{run_turn, TurnRequest};
    let lb = Loopback::start(KEY).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store = Conversations::open(&dir.path().join("c.sqlite3")).unwrap();
    let o = orchestrator(&lb.base_url(), Wire::Openai, "echo", None);
    let req = TurnRequest {
        conversation: None,
        prompt: "Please thank jane.doe@posteo.de, and write a rigorous multi-step proof.".into(),
        attachments: vec![Attachment {
            name: "note.txt".into(),
            text: "Reply to jane.doe@posteo.de".into(),
            sensitive_source: false,
        }],
        task: "turn-1".into(),
        policy: Policy::Balanced,
        max_tokens: 64,
        ..TurnRequest::default()
    };
    let mut streamed = String::new();
    let out = run_turn(
        &o,
        Some(&store),
        req.clone(),
        |ev| {
            if let RunEvent::Text { text } = ev {
                streamed.push_str(&text);
            }
            true
        },
        std::future::pending(),
    )
    .await
    .unwrap();
    assert!(out.error.is_none());
    assert_eq!(out.turn.answer, streamed);
    assert!(
        out.turn.answer.contains("jane.doe@posteo.de"),
        "restored on the device"
    );
    assert!(!lb.received()[0].to_string().contains("posteo"));
    assert_eq!(out.turn.documents[0].name, "note.txt");
    assert!(out.turn.plan.is_some() && out.turn.summary.is_some());

    // The second turn carries the first as history; a slow provider is stopped after 300 ms.
    let slow = orchestrator(&lb.base_url(), Wire::Openai, "slow", None);
    let started = Instant::now();
    let second = run_turn(
        &slow,
        Some(&store),
        TurnRequest {
            conversation: Some(out.conversation.clone()),
            task: "turn-2".into(),
            attachments: vec![],
            ..req
        },
        |_| true,
        tokio::time::sleep(Duration::from_millis(300)),
    )
    .await
    .unwrap();
    assert!(second.turn.stopped && second.turn.summary.is_none());
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "stopped before the slow answer"
    );
    let sent = lb.received();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(
        sent[1].to_string().contains("[EMAIL_1]"),
        "history went along, masked"
    );
    let turns = store.turns(&out.conversation).unwrap();
    assert_eq!(turns.len(), 2);
    assert!(turns[1].stopped);
    // One vault for the conversation: a new value in turn 3 gets the next number, the old one
    // keeps its placeholder in history and in the new question alike.
    let v = store.vault(&out.conversation).unwrap();
    assert!(
        v.issued
            .iter()
            .any(|(_, o, n)| o.contains("posteo") && *n == 1),
        "{v:?}"
    );
    run_turn(
        &o,
        Some(&store),
        TurnRequest {
            conversation: Some(out.conversation.clone()),
            prompt: "Also thank max.power@posteo.de and jane.doe@posteo.de, with a rigorous multi-step proof.".into(),
            task: "turn-3".into(),
            attachments: vec![],
            policy: Policy::Balanced,
            max_tokens: 64,
            ..TurnRequest::default()
        },
        |_| true,
        std::future::pending(),
    )
    .await
    .unwrap();
    let third = lb.received()[2].to_string();
    assert!(!third.contains("posteo"), "{third}");
    assert!(
        third.contains("[EMAIL_2]") && third.contains("[EMAIL_1]"),
        "{third}"
    );
    assert!(store.delete(&out.conversation).unwrap());
    assert!(
        store.vault(&out.conversation).unwrap().issued.is_empty(),
        "the vault went with it"
    );
}

/// One decision per fragment: the sanitizer applies what the plan decided (it does not decide
/// again), and the plan's classes are what the payload shows.
#[test]
fn the_sanitizer_applies_the_plans_decisions() {
    let s = scanner();
    let prompt = "Dear team, my colleague Ivo Marsh from Plovdiv called about IBAN DE89 3704 0044 0532 0130 00. Please draft a short reply thanking him.";
    let task = Task {
        prompt: prompt.into(),
        ..Task::default()
    };
    let plan = router::plan(&s, &task, &ctx(LocalClass::Small));
    assert_eq!(plan.route, Route::Split, "{plan:?}");
    let opts = RunOptions::default();
    let a = agent("m");
    let sanitize = |plan: &router::Plan| {
        let draft = router::run::draft_request(&task, plan, &opts, &a, "Be brief.", &[]);
        Sanitizer::new(s.clone())
            .sanitize(draft, &mut Pseudonymizer::new())
            .unwrap()
            .text()
    };
    let sent = sanitize(&plan);
    for private in ["Ivo", "Marsh", "Plovdiv", "DE89"] {
        assert!(!sent.contains(private), "{private} left in {sent}");
    }
    // Every fragment the plan calls public goes out word for word; a maskable one does not.
    let chars: Vec<char> = prompt.chars().collect();
    for f in plan.fragments.iter().filter(|f| f.source == "prompt") {
        let piece: String = chars[f.start..f.end].iter().collect();
        let verbatim = sent.contains(piece.trim());
        assert_eq!(
            verbatim,
            f.class == Verdict::Public,
            "{f:?} {piece:?} in {sent}"
        );
    }
    // The sanitizer applies the plan's decision rather than deciding again: a plan whose
    // decisions are gone is decided afresh (the same result), and one whose decision masks
    // nothing sends the text as decided.
    let mut undecided = plan.clone();
    undecided.decisions = Default::default();
    assert_eq!(sanitize(&undecided), sent);
    let d = plan
        .decisions
        .get(prompt, tandem_core::sensitivity::Provenance::Content);
    let mut lax = d.expect("the plan decided the prompt").clone();
    for f in &mut lax.fragments {
        f.masks.clear();
        f.class = Verdict::Public;
    }
    let mut lax_plan = plan.clone();
    lax_plan.decisions = tandem_core::sensitivity::Decisions::new(vec![(prompt.into(), lax)]);
    assert!(sanitize(&lax_plan).contains("Ivo Marsh"));
}

/// A device of the user's (a `Trust::Device` provider, here a second loopback server) gets the
/// private work the local model cannot do, unmasked and recorded apart; the cloud gets none of
/// it, Pause cloud does not stop the device and Pause devices does.
#[tokio::test]
async fn private_work_goes_to_the_users_device_never_to_the_cloud() {
    use tandem_core::cloud::agents::Trust;
    use tandem_core::pause::PauseSwitch;
    let cloud = Loopback::start(KEY).await.unwrap();
    let device = Loopback::start("").await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(&dir.path().join("ledger.sqlite3")).unwrap();
    let store = Arc::new(MemoryStore::default());
    store.set("lb", &ApiKey::new(KEY).unwrap()).unwrap();
    let catalog = Catalog {
        default_role: "Answer.".into(),
        providers: vec![
            ProviderConfig {
                name: "lb".into(),
                wire: Wire::Openai,
                base_url: cloud.base_url(),
                needs_key: true,
                trust: Trust::Cloud,
            },
            ProviderConfig {
                name: "desk".into(),
                wire: Wire::Openai,
                base_url: device.base_url(),
                needs_key: false,
                trust: Trust::Device,
            },
        ],
        agents: vec![agent("echo"), Agent::new("desk", "desk", "echo")],
    };
    // The picker never offers a device as a cloud agent, even the better one.
    let mut better = catalog.clone();
    better.agents[1].quality = 10;
    assert_eq!(
        better
            .pick(&tandem_core::cloud::agents::Needs::default(), |_| true)
            .unwrap()
            .name,
        "lb"
    );
    let devices_paused = Arc::new(PauseSwitch::memory());
    let scanner = scanner();
    let egress = Arc::new(
        Egress::new(scanner.clone(), Some(ledger.clone()))
            .with_device_pause(devices_paused.clone()),
    );
    // No local model on this machine.
    let o = Arc::new(Orchestrator::new(
        Sanitizer::new(scanner),
        egress.clone(),
        None,
        catalog,
        Keys::new(store),
        LocalClass::Small,
    ));
    let iban = "DE89 3704 0044 0532 0130 00";
    let private = |prompt: &str| Task {
        prompt: prompt.into(),
        policy: Policy::Private,
        ..Task::default()
    };
    let (s, events) = run(
        &o,
        private(&format!("My account is {iban}; what is its bank code?")),
        None,
    )
    .await;
    let plan = events
        .iter()
        .find_map(|e| match e {
            RunEvent::Plan { plan } => Some(plan.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (plan.route, plan.strategy),
        (Route::Local, Some(How::Device)),
        "{plan:?}"
    );
    assert!(
        plan.reasons[0].contains("your device desk"),
        "{:?}",
        plan.reasons
    );
    assert_eq!(s.agent.as_deref(), Some("your device: desk"));
    // The device echoes what it read: the IBAN as written, because it went there unmasked.
    assert!(s.text.contains(iban), "{}", s.text);
    assert!(device
        .received()
        .iter()
        .any(|b| b.to_string().contains(iban)));
    assert!(cloud.received().is_empty(), "the cloud got private work");

    // Cloud work goes to the cloud, never to the device.
    let (s, _) = run(
        &o,
        Task {
            prompt: "Write a detailed essay on the causes of the First World War.".into(),
            ..Task::default()
        },
        Some("lb"),
    )
    .await;
    assert_eq!(s.agent.as_deref(), Some("lb"));
    assert_eq!(device.received().len(), 1, "cloud work reached the device");
    assert_eq!(cloud.received().len(), 1);

    // Pause cloud: the device still answers (here, what would have gone to the cloud).
    egress.set_paused(true);
    let (s, _) = run(
        &o,
        Task {
            prompt: "What is 2 + 2?".into(),
            ..Task::default()
        },
        None,
    )
    .await;
    assert_eq!(s.agent.as_deref(), Some("your device: desk"));
    assert_eq!(cloud.received().len(), 1, "Pause cloud let something out");
    egress.set_paused(false);

    // Pause devices: nothing goes to the device; with no local model the private task fails.
    devices_paused.set(true).unwrap();
    let (tx, _rx) = tokio::sync::mpsc::channel(1000);
    let err = o
        .run(
            private(&format!("My account is {iban}.")),
            RunOptions::default(),
            tx,
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no local model"), "{err}");
    assert_eq!(device.received().len(), 2);
    devices_paused.set(false).unwrap();

    // The ledger keeps them apart: one cloud request, two device ones.
    let t = ledger.totals(None).await.unwrap();
    assert_eq!((t.sent, t.device_sent), (1, 2), "{t:?}");
    let rows = ledger.list(10).await.unwrap();
    assert_eq!(
        rows.iter()
            .filter(|r| r.destination == tandem_core::ledger::Destination::Device)
            .count(),
        2
    );
}

/// A TCP front for a provider whose behaviour the test switches: forwarding (up), forwarding
/// after 300 ms (slow), or refusing every connection (gone: the listener is closed).
struct Front {
    port: u16,
    mode: Arc<std::sync::atomic::AtomicU8>,
}

const UP: u8 = 0;
const SLOW: u8 = 1;
const GONE: u8 = 2;

impl Front {
    async fn start(upstream: std::net::SocketAddr) -> Self {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        let mode = Arc::new(std::sync::atomic::AtomicU8::new(UP));
        let m = mode.clone();
        tokio::spawn(async move {
            let mut listener = Some(l);
            loop {
                let now = m.load(std::sync::atomic::Ordering::SeqCst);
                // Gone: nothing listens on the port (connections are refused at once).
                if now == GONE {
                    listener = None;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                    continue;
                }
                let l = match &listener {
                    Some(l) => l,
                    None => {
                        let Ok(l) = tokio::net::TcpListener::bind(("127.0.0.1", port)).await else {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                            continue;
                        };
                        listener.insert(l)
                    }
                };
                let accepted = tokio::time::timeout(Duration::from_millis(50), l.accept()).await;
                let Ok(Ok((mut inbound, _))) = accepted else {
                    continue;
                };
                let slow = now == SLOW;
                let m = m.clone();
                tokio::spawn(async move {
                    let Ok(mut out) = tokio::net::TcpStream::connect(upstream).await else {
                        return;
                    };
                    // A kept-alive connection dies with the mode it was opened in (a probe
                    // must not reach a provider that has gone, nor be fast once it is slow).
                    let changed = async {
                        while m.load(std::sync::atomic::Ordering::SeqCst) == now {
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                    };
                    let (mut in_r, mut in_w) = inbound.split();
                    let (mut out_r, mut out_w) = out.split();
                    // Slow: every answer waits 300 ms before it is passed on.
                    let back = async {
                        use tokio::io::{AsyncReadExt, AsyncWriteExt};
                        let mut buf = vec![0u8; 16 * 1024];
                        loop {
                            let n = match out_r.read(&mut buf).await {
                                Ok(0) | Err(_) => break,
                                Ok(n) => n,
                            };
                            if slow {
                                tokio::time::sleep(Duration::from_millis(300)).await;
                            }
                            if in_w.write_all(&buf[..n]).await.is_err() {
                                break;
                            }
                        }
                    };
                    tokio::select! {
                        _ = tokio::io::copy(&mut in_r, &mut out_w) => {}
                        _ = back => {}
                        _ = changed => {}
                    }
                });
            }
        });
        Self { port, mode }
    }

    fn set(&self, mode: u8) {
        self.mode.store(mode, std::sync::atomic::Ordering::SeqCst);
    }

    fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

/// The network's live state reaches the plan: with the provider gone the task is planned local
/// at once (no connection attempt, no waiting for a timeout), with it slow a short task stays
/// local, and when it comes back the cloud is used again. Probes carry no content: the
/// provider records only the one real request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_router_follows_the_network_as_it_goes_slows_and_comes_back() {
    use tandem_core::network::{MonitorConfig, NetState, NetworkMonitor, Target};
    let lb = Loopback::start(KEY).await.unwrap();
    let front = Front::start(lb.addr()).await;
    let store = Arc::new(MemoryStore::default());
    store.set("lb", &ApiKey::new(KEY).unwrap()).unwrap();
    let scanner = scanner();
    let mut o = Orchestrator::new(
        Sanitizer::new(scanner.clone()),
        Arc::new(Egress::new(scanner, None)),
        Some(Arc::new(EchoEngine::default())),
        catalog(&front.base_url(), Wire::Openai, "echo"),
        Keys::new(store),
        LocalClass::Small,
    );
    o.reliability.base_delay = Duration::from_millis(5);
    let monitor = NetworkMonitor::spawn(
        vec![Target {
            provider: "lb".into(),
            url: (front.base_url() + "/").parse().unwrap(),
        }],
        MonitorConfig {
            interval: Duration::from_millis(50),
            timeout: Duration::from_millis(2_000),
            max_backoff: Duration::from_millis(200),
            window: 3,
            degraded_rtt: Duration::from_millis(150),
            degraded_error_rate: 0.5,
        },
        None,
    );
    let state = monitor.subscribe();
    let mut slow_state = monitor.subscribe();
    o.watch_network(monitor);
    let o = Arc::new(o);
    let wait = |want: NetState| {
        let mut s = state.clone();
        async move {
            tokio::time::timeout(
                Duration::from_secs(10),
                s.wait_for(|s| s.probed && s.state == want),
            )
            .await
            .unwrap_or_else(|_| panic!("network never became {want:?}"))
            .unwrap();
        }
    };
    let task = || Task {
        prompt: "Why do leaves change colour in autumn?".into(),
        ..Task::default()
    };
    let plan_of = |events: &[RunEvent]| match &events[0] {
        RunEvent::Plan { plan } => plan.clone(),
        other => panic!("{other:?}"),
    };

    wait(NetState::Online).await;
    let (s, events) = run(&o, task(), None).await;
    assert_eq!(
        s.answered_by.as_deref(),
        Some("cloud"),
        "{:?}",
        plan_of(&events).reasons
    );
    assert_eq!(lb.received().len(), 1);

    front.set(GONE);
    wait(NetState::Offline).await;
    let started = Instant::now();
    let (s, events) = run(&o, task(), None).await;
    let plan = plan_of(&events);
    assert_eq!(plan.route, Route::Local);
    assert!(
        plan.reasons[0].contains("the network is offline"),
        "{:?}",
        plan.reasons
    );
    assert_eq!(s.answered_by.as_deref(), Some("local"));
    assert!(!s.fell_back, "planned local, not a failed cloud step");
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "no connection attempt first"
    );

    front.set(SLOW);
    wait(NetState::Degraded).await;
    // Only slowness in the window (the lost probes have left it): the reason names the round trip.
    tokio::time::timeout(
        Duration::from_secs(10),
        slow_state.wait_for(|s| s.providers[0].error_rate == 0.0 && s.state == NetState::Degraded),
    )
    .await
    .expect("slow only")
    .unwrap();
    let (s, events) = run(&o, task(), None).await;
    let plan = plan_of(&events);
    assert_eq!(plan.route, Route::Local, "{:?}", plan.reasons);
    assert!(
        plan.reasons[0].starts_with("the network is slow")
            && plan.reasons[0].contains("a short task stays on this device"),
        "{:?}",
        plan.reasons
    );
    assert_eq!(s.answered_by.as_deref(), Some("local"));
    // A long task still goes: waiting for the cloud is worth it there.
    let long = Task {
        prompt: format!(
            "Why do leaves change colour in autumn? {}",
            "Explain the chemistry in detail. ".repeat(15)
        ),
        ..Task::default()
    };
    let (s, _) = run(&o, long, None).await;
    assert_eq!(s.answered_by.as_deref(), Some("cloud"));
    assert_eq!(lb.received().len(), 2);

    front.set(UP);
    wait(NetState::Online).await;
    let (s, _) = run(&o, task(), None).await;
    assert_eq!(s.answered_by.as_deref(), Some("cloud"));
    assert_eq!(
        lb.received().len(),
        3,
        "probes are not requests: only the three real ones arrived"
    );
}

/// A local model that answers some kinds of request with scripted text — the one whose system
/// message starts with a `replies` key (the request to rewrite, to abstract, to solve), or a
/// plain prompt that contains it (a program to write) — and everything else the echo
/// engine's way (it repeats what it read: completing an answer, it shows the request and the
/// cloud's draft side by side). Scripted text is written as the echo engine writes, word by
/// word up to the request's token limit.
struct Scripted {
    replies: Vec<(&'static str, String)>,
    echo: EchoEngine,
}

impl Scripted {
    fn one(when: &'static str, text: impl Into<String>, echo: EchoEngine) -> Self {
        Scripted {
            replies: vec![(when, text.into())],
            echo,
        }
    }
}

impl LocalEngine for Scripted {
    fn generate(&self, mut request: GenerateRequest) -> Result<TokenStream, LocalError> {
        let first = request.messages.first();
        let scripted = self.replies.iter().find(|(when, _)| {
            first.is_some_and(|m| {
                (m.role == Role::System && m.content.starts_with(when))
                    || (request.plain && m.content.contains(when))
            })
        });
        if let Some((_, text)) = scripted {
            request.messages = vec![ChatMessage::user(text.clone())];
        }
        self.echo.generate(request)
    }

    fn model(&self) -> &LoadedModel {
        self.echo.model()
    }
}

const DIAGNOSED: &str = "My sister Ana Kovač was diagnosed with bipolar disorder last week and she lives with me at 14 Rue Oberkampf in Paris. How can I support her during the first months?";

/// Local rewrite (PAPILLON's idea) with a medium local model: the cloud gets the request the
/// local model wrote without the person, never the name, the diagnosis or the address; the
/// answer is completed on the device, where the original request is. A rewrite that fails a
/// check (it still reads as private) is dropped with a notice and the masked request goes.
#[tokio::test]
async fn a_medium_local_model_rewrites_a_personal_request_and_the_answer_is_completed_on_the_device(
) {
    // (With an image in it: the local model completes the cloud's draft, and nothing in that
    // answer may load by itself.)
    let general = "How can someone support a family member during the first months after a new mental health diagnosis? ![c](c.png)";
    for (rewrite, refused) in [
        (general, None),
        (
            "I have bipolar disorder and feel unwell.",
            Some("the local rewrite still reads as private"),
        ),
        (
            "How do I help Ana, who was diagnosed with bipolar disorder last week?",
            Some("the local rewrite repeated a private passage"),
        ),
    ] {
        let lb = Loopback::start(KEY).await.unwrap();
        let o = orchestrator_with(
            &lb.base_url(),
            Wire::Openai,
            "echo",
            None,
            // Unsure of its own answer: the task goes on as planned.
            Scripted::one("Rewrite the user's request", rewrite, EchoEngine::sure(0.1)),
            LocalClass::Medium,
        );
        let task = Task {
            prompt: DIAGNOSED.into(),
            ..Task::default()
        };
        let (summary, events) = run(&o, task, None).await;
        let RunEvent::Plan { plan } = &events[0] else {
            panic!("{events:?}")
        };
        assert!(plan.local_rewrite, "{:?}", plan.reasons);
        let sent = lb.received_raw();
        assert_eq!(sent.len(), 1, "{events:?}");
        for planted in [
            "Ana",
            "Kovač",
            "Kova\\u010d",
            "bipolar",
            "Oberkampf",
            "14 Rue",
        ] {
            assert!(!sent[0].contains(planted), "{planted} left in {}", sent[0]);
        }
        let notices = notices_of(&events);
        if let Some(why) = refused {
            let notice = format!("{why}: the masked request goes instead");
            assert!(notices.contains(&notice.as_str()), "{notices:?}");
            assert!(
                !sent[0].contains("I have") && !sent[0].contains("How do I help"),
                "{}",
                sent[0]
            );
        } else {
            assert!(sent[0].contains("support a family member"), "{}", sent[0]);
            assert!(
                !notices.iter().any(|n| n.contains("rewrite")),
                "{notices:?}"
            );
            // Completed on the device: the original request beside the cloud's draft.
            assert!(
                summary.text.contains("Ana Kovač")
                    && summary.text.contains("support a family member"),
                "{}",
                summary.text
            );
            // The draft's image is a link in the answer (`LoadGuard`; mutation-checked).
            assert!(
                summary.text.contains("[c](c.png)") && !summary.text.contains("![c]"),
                "{}",
                summary.text
            );
        }
        assert!(events.iter().any(|e| matches!(e, RunEvent::Step { step, place } if step == "rewrite the request without your details" && place == "local")));
    }
    // A small local model does not rewrite; neither does any when documents are attached.
    let s = scanner();
    let plain = Task {
        prompt: DIAGNOSED.into(),
        ..Task::default()
    };
    assert!(!router::plan(&s, &plain, &ctx(LocalClass::Small)).local_rewrite);
    assert!(router::plan(&s, &plain, &ctx(LocalClass::Large)).local_rewrite);
    let with_doc = Task {
        attachments: vec![Attachment {
            name: "notes.txt".into(),
            text: "Shopping: bread, milk.".into(),
            sensitive_source: false,
        }],
        ..plain
    };
    assert!(!router::plan(&s, &with_doc, &ctx(LocalClass::Large)).local_rewrite);
}

/// An abstract the local model writes of private passages (local extract) is judged as the
/// user's own material: an education record, money or health term in it counts without a
/// personal word beside it, as it did in the passages, and that sentence never leaves. The
/// rest of the abstract and the document's public sentences go. Mutation-checked: deciding the
/// abstract as ordinary text sends "midterm grades".
#[tokio::test]
async fn an_abstract_of_private_material_is_judged_as_that_material() {
    let lb = Loopback::start(KEY).await.unwrap();
    let o = orchestrator_with(
        &lb.base_url(),
        Wire::Openai,
        "echo",
        None,
        Scripted::one(
            "You read a private document",
            "The class midterm grades fell this term. The notes also mention a picnic.",
            EchoEngine::sure(0.1),
        ),
        LocalClass::Small,
    );
    let task = Task {
        prompt:
            "Write a short reply to my friend about how my term is going. My notes are attached."
                .into(),
        attachments: vec![Attachment {
            name: "notes.txt".into(),
            text:
                "Her midterm grades dropped after the move.\nThe picnic moves to the north lawn.\n"
                    .into(),
            sensitive_source: false,
        }],
        ..Task::default()
    };
    let (_, events) = run(&o, task, None).await;
    let RunEvent::Plan { plan } = &events[0] else {
        panic!("{events:?}")
    };
    assert_eq!(plan.strategy, Some(How::LocalExtract), "{plan:?}");
    let got = lb.received();
    assert_eq!(got.len(), 1, "{got:?}");
    let sent = got[0].to_string();
    assert!(sent.contains("Abstract of"), "{sent}");
    // A file with private passages is called by its place, not its name.
    assert!(
        !sent.contains("notes.txt") && sent.contains("document 1 (its name stays on the device)"),
        "{sent}"
    );
    assert!(sent.contains("mention a picnic"), "{sent}");
    assert!(sent.contains("north lawn"), "{sent}");
    assert!(!sent.contains("midterm"), "{sent}");
}
