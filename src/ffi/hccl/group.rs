//! `HcclGroupStart` / `HcclGroupEnd` (`hccl/hccl_comm.h`): between the two, this thread's
//! operations are held, not queued; the end queues them in their order, each run of sends and
//! receives of one communicator on one stream as one `HcclBatchSendRecv` (so that two ranks may
//! each send to the other and then receive, as a group allows), everything else as it came.
//! Groups nest: only the outermost end queues.

use std::cell::RefCell;
use std::sync::Arc;

use crate::error::hccl_codes::HcclError;
use crate::ffi::hccl::hccl_types::vouch;
use crate::hccl::comm::Comm;
use crate::hccl::ops::{Item, Op};
use crate::runtime::stream::Stream;

/// The operations of this thread's open group, and how deep it is.
#[derive(Default)]
struct Group {
    depth: usize,
    held: Vec<(Arc<Comm>, Arc<Stream>, Op)>,
}

thread_local! {
    static GROUP: RefCell<Group> = RefCell::new(Group::default());
}

/// Queues `op` on `stream`, or holds it while this thread has a group open.
pub(crate) fn submit(comm: Arc<Comm>, op: Op, stream: Arc<Stream>) -> Result<(), HcclError> {
    let held = GROUP.with(|g| {
        let mut g = g.borrow_mut();
        if g.depth == 0 {
            return None;
        }
        g.held.push((Arc::clone(&comm), Arc::clone(&stream), op.clone()));
        Some(())
    });
    match held {
        Some(()) => Ok(()),
        None => comm.submit(op, &stream, vouch),
    }
}

pub(crate) fn start() {
    GROUP.with(|g| g.borrow_mut().depth += 1);
}

pub(crate) fn is_open() -> bool {
    GROUP.with(|g| g.borrow().depth > 0)
}

/// Ends a group: at the outermost end, queues what it held. `HCCL_E_PARA` without a start.
pub(crate) fn end() -> Result<(), HcclError> {
    let held = GROUP.with(|g| {
        let mut g = g.borrow_mut();
        if g.depth == 0 {
            return Err(HcclError::para("HcclGroupEnd without HcclGroupStart"));
        }
        g.depth -= 1;
        Ok(if g.depth == 0 { std::mem::take(&mut g.held) } else { Vec::new() })
    })?;
    let mut first_error = None;
    for (comm, stream, op) in batches(held) {
        if let Err(e) = comm.submit(op, &stream, vouch) {
            first_error.get_or_insert(e);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// The point-to-point item an operation is, if it is one.
fn item(op: &Op) -> Option<Item> {
    match *op {
        Op::Send { buf, count, data_type, peer } => Some(Item { send: true, buf, count, data_type, peer }),
        Op::Recv { buf, count, data_type, peer } => Some(Item { send: false, buf, count, data_type, peer }),
        _ => None,
    }
}

/// The held operations with each run of sends and receives of one communicator and stream
/// merged into one batch (a batch has one send and one receive per peer at most, so a second
/// one starts the next batch); a run of one stays the operation it was.
fn batches(held: Vec<(Arc<Comm>, Arc<Stream>, Op)>) -> Vec<(Arc<Comm>, Arc<Stream>, Op)> {
    type Run = (Arc<Comm>, Arc<Stream>, Vec<Item>, Op);
    let mut out = Vec::new();
    let mut run: Option<Run> = None;
    let flush = |run: &mut Option<Run>, out: &mut Vec<(Arc<Comm>, Arc<Stream>, Op)>| {
        if let Some((comm, stream, items, first)) = run.take() {
            let op = if items.len() == 1 { first } else { Op::BatchSendRecv { items } };
            out.push((comm, stream, op));
        }
    };
    for (comm, stream, op) in held {
        let Some(it) = item(&op) else {
            flush(&mut run, &mut out);
            out.push((comm, stream, op));
            continue;
        };
        let joins = run.as_ref().is_some_and(|(c, s, items, _)| {
            Arc::ptr_eq(c, &comm)
                && Arc::ptr_eq(s, &stream)
                && !items.iter().any(|o| o.send == it.send && o.peer == it.peer)
        });
        if joins {
            run.as_mut().expect("a run to join").2.push(it);
        } else {
            flush(&mut run, &mut out);
            run = Some((comm, stream, vec![it], op));
        }
    }
    flush(&mut run, &mut out);
    out
}
