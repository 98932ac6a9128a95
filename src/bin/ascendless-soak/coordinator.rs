//! The coordinator: starts the worker processes, hands each the others' addresses and keys,
//! lets them run for the duration while printing one line per worker every interval (its
//! counters, RSS and open descriptors), then stops them and has [`verdict`] judge the run.
//!
//! Every worker is killed (by its pid, through its `Child`) on any way out of [`run`],
//! including a panic; a worker also ends by itself when its stdin closes or at its deadline.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use crate::protocol::{Peer, Stats};
use crate::usage::{self, Sample};
use crate::verdict::{self, Ended};

/// How a run is shaped (the command line).
#[derive(Debug, Clone)]
pub struct Plan {
    pub duration_s: f64,
    pub interval_s: f64,
    pub procs: usize,
    pub threads: usize,
}

/// Time allowed for each phase outside the measured run (start, stop, check).
const PHASE: Duration = Duration::from_secs(60);

/// A message from a worker: a line, or `None` when its stdout ended.
type Said = (usize, Option<String>);

struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    transport: &'static str,
    region: &'static str,
    stats: Stats,
    samples: Vec<Sample>,
}

/// The workers; dropping it kills and reaps whichever are still running.
struct Workers(Vec<Worker>);

impl Drop for Workers {
    fn drop(&mut self) {
        for w in &mut self.0 {
            drop(w.stdin.take());
            if let Ok(None) = w.child.try_wait() {
                let _ = w.child.kill();
            }
            let _ = w.child.wait();
        }
    }
}

impl Workers {
    fn send(&mut self, i: usize, line: &str) -> Result<(), String> {
        let stdin = self.0[i].stdin.as_mut().ok_or("stdin already closed")?;
        writeln!(stdin, "{line}").and_then(|()| stdin.flush()).map_err(|e| format!("worker {i}: {e}"))
    }

    /// How worker `i` ended (it has closed its stdout), for a message.
    fn exit(&mut self, i: usize) -> String {
        let child = &mut self.0[i].child;
        for _ in 0..50 {
            if let Ok(Some(status)) = child.try_wait() {
                return format!(" ({status})");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        " (still running)".into()
    }

    fn send_all(&mut self, line: &str) -> Result<(), String> {
        (0..self.0.len()).try_for_each(|i| self.send(i, line))
    }
}

fn spawn(plan: &Plan, index: usize, deadline_s: u64) -> Result<Worker, String> {
    // Half the engines are forced to TCP, so links between them and to them use TCP while the
    // others share memory; half the regions are device memory.
    let transport = if index % 2 == 1 { "tcp" } else { "auto" };
    let region = if index % 4 < 2 { "device" } else { "host" };
    let mut child = Command::new(std::env::current_exe().map_err(|e| e.to_string())?)
        .args(["__worker", &index.to_string(), &plan.procs.to_string(), &plan.threads.to_string()])
        .args([transport, region, &deadline_s.to_string(), &(plan.interval_s / 2.0).to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("starting worker {index}: {e}"))?;
    let stdin = child.stdin.take();
    Ok(Worker { child, stdin, transport, region, stats: Stats::default(), samples: Vec::new() })
}

/// Forwards every line of each worker's stdout to one channel.
fn listen(workers: &mut Workers) -> Receiver<Said> {
    let (tx, rx) = channel();
    for (i, w) in workers.0.iter_mut().enumerate() {
        let out = w.child.stdout.take().expect("stdout is piped");
        let tx = tx.clone();
        ascendless::sync::spawn_named(format!("soak-listen-{i}"), move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send((i, Some(line))).is_err() {
                    return;
                }
            }
            let _ = tx.send((i, None));
        })
        .expect("cannot start a worker listener thread");
    }
    rx
}

/// Collects, from every worker, the lines up to and including one starting with `last`;
/// STAT lines update the worker's counters on the way.
fn collect(rx: &Receiver<Said>, workers: &mut Workers, last: &str) -> Result<Vec<Vec<String>>, String> {
    let deadline = Instant::now() + PHASE;
    let mut got: Vec<Vec<String>> = vec![Vec::new(); workers.0.len()];
    let mut done = vec![false; workers.0.len()];
    while done.iter().any(|d| !d) {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok((i, Some(line))) => {
                if let Some(s) = line.strip_prefix("STAT ").and_then(Stats::parse) {
                    workers.0[i].stats = s;
                    continue;
                }
                done[i] |= line.starts_with(last);
                got[i].push(line);
            }
            Ok((i, None)) if !done[i] => {
                return Err(format!("worker {i} ended before it said {last}{}", workers.exit(i)));
            }
            Ok((_, None)) => {}
            Err(RecvTimeoutError::Timeout) => {
                let late: Vec<usize> = (0..done.len()).filter(|&i| !done[i]).collect();
                return Err(format!("workers {late:?} did not say {last} within {PHASE:?}"));
            }
            Err(RecvTimeoutError::Disconnected) => return Err("every worker's output ended".into()),
        }
    }
    Ok(got)
}

fn print_row(at: f64, i: usize, w: &Worker, s: Option<Sample>) {
    let st = &w.stats;
    let (rss, fds) = s.map_or(("gone".into(), "-".into()), |s| {
        (format!("{:.1}", s.rss_kib as f64 / 1024.0), s.fds.to_string())
    });
    println!(
        "{at:7.1}s  p{i} {:>4}/{:<6} transfers {:>8}  {:>9.1} MiB  ring {:>7}  notifies {:>5}/{:<5}  errors {}  corrupt {}  RSS {rss} MiB  fds {fds}",
        w.transport,
        w.region,
        st.transfers,
        st.bytes as f64 / (1 << 20) as f64,
        st.notifies,
        st.adxl_sent,
        st.adxl_received,
        st.errors,
        st.corrupt,
    );
}

/// Runs the soak; `Ok(false)` when it ran to the end but found something wrong.
pub fn run(plan: &Plan) -> Result<bool, String> {
    let deadline_s = (plan.duration_s + 4.0 * PHASE.as_secs_f64()).ceil() as u64;
    let mut workers = Workers(Vec::new());
    for i in 0..plan.procs {
        workers.0.push(spawn(plan, i, deadline_s)?);
    }
    let rx = listen(&mut workers);
    println!(
        "ascendless-soak: {} processes x {} initiator threads for {} s (a line per process every {} s)",
        plan.procs, plan.threads, plan.duration_s, plan.interval_s
    );

    let ready = collect(&rx, &mut workers, "READY")?;
    let peers: Vec<Peer> = ready
        .iter()
        .enumerate()
        .map(|(i, l)| Peer::from_ready(i, l.last().expect("collected")))
        .collect::<Result<_, _>>()?;
    workers.send_all(&Peer::line(&peers))?;
    collect(&rx, &mut workers, "ALLOWED")?;
    workers.send_all("START")?;

    let start = Instant::now();
    let interval = Duration::from_secs_f64(plan.interval_s);
    let mut next_print = start + interval;
    while start.elapsed().as_secs_f64() < plan.duration_s {
        let wait = next_print.saturating_duration_since(Instant::now());
        match rx.recv_timeout(wait) {
            Ok((i, Some(line))) => match line.strip_prefix("STAT ").and_then(Stats::parse) {
                Some(s) => workers.0[i].stats = s,
                None => return Err(format!("worker {i} said {line:?} while running")),
            },
            Ok((i, None)) => {
                return Err(format!("worker {i} ended in the middle of the run{}", workers.exit(i)));
            }
            Err(RecvTimeoutError::Timeout) => {
                let at = start.elapsed().as_secs_f64();
                for (i, w) in workers.0.iter_mut().enumerate() {
                    let s = usage::sample(w.child.id(), at);
                    w.samples.extend(s);
                    print_row(at, i, w, s);
                }
                next_print += interval;
            }
            Err(RecvTimeoutError::Disconnected) => return Err("every worker's output ended".into()),
        }
    }
    let run_s = start.elapsed().as_secs_f64();

    workers.send_all("STOP")?;
    let stopped = collect(&rx, &mut workers, "STOPPED")?;
    workers.send_all("CHECK")?;
    let checked = collect(&rx, &mut workers, "DONE")?;
    let mut ended = Vec::new();
    for (i, (w, (stopped, checked))) in workers.0.iter_mut().zip(stopped.into_iter().zip(checked)).enumerate()
    {
        drop(w.stdin.take());
        let status = w.child.wait().map_err(|e| e.to_string())?;
        let done = checked.last().and_then(|l| l.strip_prefix("DONE ")).and_then(Stats::parse);
        let stats = done.ok_or_else(|| format!("worker {i}: no final counters"))?;
        ended.push(Ended { stats, samples: std::mem::take(&mut w.samples), stopped, checked, status });
    }
    Ok(verdict::judge(&ended, run_s))
}
