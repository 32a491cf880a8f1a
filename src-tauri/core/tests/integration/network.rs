//! The network monitor against real sockets: a loopback provider (online), a slow one
//! (degraded), a closed port (offline, without hanging), and a provider that comes up later.

use std::time::Duration;

use axum::routing::any;
use tandem_core::cloud::loopback::Loopback;
use tandem_core::events::{Event, EventBus};
use tandem_core::network::{MonitorConfig, NetState, NetworkMonitor, Target};

fn target(name: &str, url: &str) -> Target {
    Target {
        provider: name.into(),
        url: url.parse().unwrap(),
    }
}

fn quick() -> MonitorConfig {
    MonitorConfig {
        interval: Duration::from_millis(100),
        timeout: Duration::from_millis(500),
        max_backoff: Duration::from_millis(400),
        window: 5,
        degraded_rtt: Duration::from_millis(150),
        degraded_error_rate: 0.2,
    }
}

/// A closed port on this machine: bind, note the port, let it go.
async fn free_port() -> u16 {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test]
async fn online_degraded_and_offline_are_told_apart() {
    let lb = Loopback::start("k").await.unwrap();
    let slow = {
        let app = axum::Router::new().fallback(any(|| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            "slow"
        }));
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = l.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
        format!("http://{addr}/v1/")
    };
    let dead = format!("http://127.0.0.1:{}/v1/", free_port().await);
    let targets = vec![
        target("fast", &(lb.base_url() + "/")),
        target("slow", &slow),
        target("dead", &dead),
    ];
    let bus = EventBus::new();
    let mut events = bus.subscribe();
    let started = std::time::Instant::now();
    let mon = NetworkMonitor::spawn(targets.clone(), quick(), Some(bus));
    // Before the first round: offline, not probed, and asking does not wait.
    assert!(!mon.status().probed);
    let mut rx = mon.subscribe();
    rx.wait_for(|s| s.probed).await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the first round finished promptly"
    );
    let s = mon.status();
    assert_eq!(s.state, NetState::Online);
    let fast = s.provider("fast").unwrap();
    assert_eq!(fast.state, NetState::Online);
    assert!(
        fast.rtt_ms.unwrap() < 150.0 && fast.error_rate == 0.0,
        "{fast:?}"
    );
    let slow = s.provider("slow").unwrap();
    assert_eq!(slow.state, NetState::Degraded, "{slow:?}");
    assert!(slow.rtt_ms.unwrap() >= 300.0);
    let dead = s.provider("dead").unwrap();
    assert_eq!(
        (dead.state, dead.error_rate),
        (NetState::Offline, 1.0),
        "{dead:?}"
    );
    assert_eq!(dead.last_error.as_deref(), Some("cannot connect"));
    match events.recv().await.unwrap() {
        Event::Network { status } => assert_eq!(status.state, NetState::Online),
        other => panic!("{other:?}"),
    }
    // A one-off check says the same without a running monitor.
    let once = NetworkMonitor::check(&targets, &quick()).await;
    assert_eq!(once.provider("dead").unwrap().state, NetState::Offline);
}

#[tokio::test]
async fn starting_offline_then_coming_online_is_reported() {
    let port = free_port().await;
    let url = format!("http://127.0.0.1:{port}/v1/");
    let bus = EventBus::new();
    let mut events = bus.subscribe();
    let mon = NetworkMonitor::spawn(vec![target("later", &url)], quick(), Some(bus));
    let mut rx = mon.subscribe();
    rx.wait_for(|s| s.probed).await.unwrap();
    assert_eq!(mon.status().state, NetState::Offline);
    // The provider appears on that port; the monitor (backing off at most 400 ms) notices.
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .unwrap();
    let _lb = Loopback::serve(listener, "k").unwrap();
    tokio::time::timeout(
        Duration::from_secs(5),
        rx.wait_for(|s| s.state == NetState::Online),
    )
    .await
    .expect("came online within 5 s")
    .unwrap();
    let mut states = Vec::new();
    while let Ok(Event::Network { status }) = events.try_recv() {
        states.push(status.state);
    }
    // Recovering passes through degraded while the failures are still in the recent window.
    assert_eq!(states.first(), Some(&NetState::Offline), "{states:?}");
    assert_eq!(states.last(), Some(&NetState::Online), "{states:?}");
    assert!(
        states[1..states.len() - 1]
            .iter()
            .all(|s| *s == NetState::Degraded),
        "{states:?}"
    );
}
