//! TDT queues (`acltdtCreateQueue`): bounded queues of messages in this process, named by small
//! ids, with routes that forward what reaches one queue into others.
//!
//! A message is a shared buffer (`acltdtBuf`, the runtime's mbufs of `runtime/mbuf.rs`, moved
//! in by `acltdtEnqueue`) or bytes copied in by `acltdtEnqueueData`; either end can take either
//! kind out. Every queue and route lives in one table under one lock, with one condition
//! variable notified on every change, so forwarding along routes is done under the same lock as
//! the enqueue that starts it: a message in a routed queue moves on as soon as every
//! destination has room, and waits in its queue (which may fill up) until then.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::CString;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use crate::error::acl_codes::{ACL_ERROR_FAILURE, ACL_ERROR_FEATURE_UNSUPPORTED, ACL_ERROR_INVALID_PARAM};
use crate::error::rt_codes::{
    ACL_ERROR_RT_PARAM_INVALID, ACL_ERROR_RT_QUEUE_EMPTY, ACL_ERROR_RT_QUEUE_FULL,
    ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
};
use crate::error::{AclError, AclResult};
use crate::handle::Handle;
use crate::runtime::mbuf;
use crate::runtime::tdt::{Wait, block};
use crate::sync;

/// Depth of a queue whose attributes do not say (the vendor's `RT_MQ_DEPTH_DEFAULT`).
pub const DEPTH_DEFAULT: u32 = 8;
/// Smallest depth (the vendor's `RT_MQ_DEPTH_MIN`).
pub const DEPTH_MIN: u32 = 2;
/// Largest depth: the vendor's documented channel capacity bound (its driver's is not public).
pub const DEPTH_MAX: u32 = 8192;
/// Most queues at once (an assumption; the driver's bound is not public).
pub const QUEUES_MAX: usize = 8192;
/// Longest name, its NUL included (the vendor's `RT_MQ_MAX_NAME_LEN`).
pub const NAME_MAX: usize = 128;
/// `ACL_TDT_QUEUE_PERMISSION_MANAGE | _DEQUEUE | _ENQUEUE`: what the creating process holds.
pub const PERMISSION_ALL: u32 = 7;

/// Route states of `acltdtGetQueueRouteParam` (`ACL_TDT_QUEUE_ROUTE_*`).
pub const ROUTE_UNBIND: i32 = 0;
pub const ROUTE_BIND: i32 = 1;

/// Query modes of `acltdtQueryQueueRoutes` (`acltdtQueueRouteQueryMode`).
pub const QUERY_SRC: i32 = 0;
pub const QUERY_DST: i32 = 1;
pub const QUERY_SRC_AND_DST: i32 = 2;
pub const QUERY_ABNORMAL: i32 = 100;

/// One message of a queue.
pub enum Message {
    /// A shared buffer (its handle): the queue owns it until it is dequeued.
    Buf(u64),
    /// Bytes and user data (at most `mbuf::USER_DATA_SIZE` bytes).
    Data { data: Vec<u8>, user: Vec<u8> },
}

impl Message {
    /// Its size as `acltdtDequeueData` reports it: the buffer's valid length, or the bytes.
    pub fn len(&self) -> usize {
        match self {
            Message::Buf(b) => mbuf::get(*b, "buf").map(|m| m.len()).unwrap_or(0),
            Message::Data { data, .. } => data.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A copy for a second destination: another reference to the buffer's block, or the bytes.
    fn duplicate(&self) -> AclResult<Message> {
        Ok(match self {
            Message::Buf(b) => Message::Buf(mbuf::copy_ref(*b)?),
            Message::Data { data, user } => Message::Data { data: data.clone(), user: user.clone() },
        })
    }

    /// Frees what the message owns.
    fn discard(self) {
        if let Message::Buf(b) = self {
            let _ = mbuf::free(b);
        }
    }
}

struct Queue {
    name: String,
    depth: usize,
    messages: VecDeque<Message>,
}

/// A route's ends (source and destination queue ids).
pub type Route = (u32, u32);

#[derive(Default)]
struct State {
    queues: BTreeMap<u32, Queue>,
    /// Bound routes, in binding order.
    routes: Vec<Route>,
}

static STATE: Mutex<State> = Mutex::new(State { queues: BTreeMap::new(), routes: Vec::new() });
/// Notified on every change of `STATE`.
static CHANGED: Condvar = Condvar::new();

fn state() -> MutexGuard<'static, State> {
    sync::lock(&STATE)
}

fn no_queue(qid: u32) -> AclError {
    AclError::new(ACL_ERROR_RT_PARAM_INVALID, format!("there is no queue {qid} (acltdtCreateQueue)"))
}

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, message)
}

/// `acltdtCreateQueue`: a queue named `name` ("" for a name of the library's choosing; a name
/// in use is refused with 100000) holding up to `depth` messages; its id is the smallest free.
pub fn create(name: &str, depth: u32) -> AclResult<u32> {
    if !(DEPTH_MIN..=DEPTH_MAX).contains(&depth) {
        return Err(invalid(format!("depth {depth} is outside [{DEPTH_MIN}, {DEPTH_MAX}]")));
    }
    if name.len() + 1 > NAME_MAX {
        return Err(invalid(format!(
            "the name is {} bytes long: at most {} may be",
            name.len(),
            NAME_MAX - 1
        )));
    }
    let mut st = state();
    if st.queues.len() >= QUEUES_MAX {
        return Err(AclError::new(
            ACL_ERROR_RT_RESOURCE_ALLOC_FAIL,
            format!("{QUEUES_MAX} queues exist, the most there may be at once"),
        ));
    }
    if !name.is_empty() && st.queues.values().any(|q| q.name == name) {
        return Err(invalid(format!("a queue named {name:?} exists already")));
    }
    let qid = (0..).find(|id| !st.queues.contains_key(id)).unwrap_or(0);
    let mut name = name.to_owned();
    if name.is_empty() {
        let mut n = qid;
        while {
            name = format!("queue_{n}");
            st.queues.values().any(|q| q.name == name)
        } {
            n += QUEUES_MAX as u32;
        }
    }
    st.queues.insert(qid, Queue { name, depth: depth as usize, messages: VecDeque::new() });
    Ok(qid)
}

/// `acltdtDestroyQueue`: refused (500001, as the vendor's) while a route names the queue; the
/// buffers it still holds are freed, and a thread blocked in it returns 107000.
pub fn destroy(qid: u32) -> AclResult<()> {
    let mut st = state();
    if !st.queues.contains_key(&qid) {
        return Err(no_queue(qid));
    }
    if let Some((s, d)) = st.routes.iter().find(|(s, d)| *s == qid || *d == qid) {
        return Err(AclError::new(
            ACL_ERROR_FAILURE,
            format!("queue {qid} is on the route {s} -> {d}: unbind it (acltdtUnbindQueueRoutes) first"),
        ));
    }
    let q = st.queues.remove(&qid).map(|q| q.messages).unwrap_or_default();
    CHANGED.notify_all();
    drop(st);
    q.into_iter().for_each(Message::discard);
    Ok(())
}

/// Whether the queue exists.
pub fn exists(qid: u32) -> bool {
    state().queues.contains_key(&qid)
}

/// `acltdtEnqueue` / `acltdtEnqueueData`: appends `message`, waiting for room as `wait` says;
/// full when the time runs out: 207014. On failure the message is handed back untouched (a
/// buffer stays the caller's).
pub fn enqueue(qid: u32, message: Message, wait: Wait) -> Result<(), (AclError, Message)> {
    let mut message = Some(message);
    let r = block(
        &CHANGED,
        state(),
        wait,
        |st| {
            let q = match st.queues.get_mut(&qid) {
                Some(q) => q,
                None => return Some(Err(no_queue(qid))),
            };
            if q.messages.len() >= q.depth {
                return None;
            }
            q.messages.push_back(message.take()?);
            forward(st);
            CHANGED.notify_all();
            Some(Ok(()))
        },
        || AclError::benign(ACL_ERROR_RT_QUEUE_FULL, format!("queue {qid} is full")),
    );
    r.map_err(|e| (e, message.take().unwrap_or(Message::Data { data: Vec::new(), user: Vec::new() })))
}

/// `acltdtDequeue` / `acltdtDequeueData`: takes the oldest message, waiting for one as `wait`
/// says; empty when the time runs out: 207013. `accept` looks at the message first: if it
/// refuses (a buffer too small for it), the message stays and its error is the result.
pub fn dequeue(qid: u32, wait: Wait, accept: impl Fn(&Message) -> AclResult<()>) -> AclResult<Message> {
    block(
        &CHANGED,
        state(),
        wait,
        |st| {
            let q = match st.queues.get_mut(&qid) {
                Some(q) => q,
                None => return Some(Err(no_queue(qid))),
            };
            let front = q.messages.front()?;
            if let Err(e) = accept(front) {
                return Some(Err(e));
            }
            let m = q.messages.pop_front();
            // Room in this queue may let a message waiting upstream move on.
            forward(st);
            CHANGED.notify_all();
            m.map(Ok)
        },
        || AclError::benign(ACL_ERROR_RT_QUEUE_EMPTY, format!("queue {qid} is empty")),
    )
}

/// Moves messages along the bound routes while every destination of a source has room: the
/// last destination gets the message, the others a copy (another reference to a buffer).
fn forward(st: &mut State) {
    loop {
        let mut moved = false;
        let mut sources: Vec<u32> = st.routes.iter().map(|r| r.0).collect();
        sources.sort_unstable();
        sources.dedup();
        for src in sources {
            let dsts: Vec<u32> = st.routes.iter().filter(|r| r.0 == src).map(|r| r.1).collect();
            loop {
                let room = dsts.iter().all(|d| st.queues.get(d).is_some_and(|q| q.messages.len() < q.depth));
                let Some(m) =
                    (if room { st.queues.get_mut(&src).and_then(|q| q.messages.pop_front()) } else { None })
                else {
                    break;
                };
                let (last, others) = dsts.split_last().unwrap_or((&src, &[]));
                for d in others {
                    match m.duplicate() {
                        Ok(copy) => {
                            if let Some(q) = st.queues.get_mut(d) {
                                q.messages.push_back(copy);
                            }
                        }
                        Err(e) => log::warn!(
                            target: crate::logging::TARGET,
                            "route {src} -> {d}: a message was not forwarded: {}",
                            e.message
                        ),
                    }
                }
                if let Some(q) = st.queues.get_mut(last) {
                    q.messages.push_back(m);
                }
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
}

/// Whether binding `route` would make the routes go round in a circle.
fn closes_a_cycle(routes: &[Route], (src, dst): Route) -> bool {
    // A path dst -> ... -> src among the bound routes.
    let mut seen = vec![dst];
    let mut todo = vec![dst];
    while let Some(q) = todo.pop() {
        if q == src {
            return true;
        }
        for &(s, d) in routes {
            if s == q && !seen.contains(&d) {
                seen.push(d);
                todo.push(d);
            }
        }
    }
    false
}

/// `acltdtBindQueueRoutes`: binds each route it can, setting its status (1 bound, 0 not); the
/// first failure is the result (the others are still bound, as the vendor's). A route's queues
/// must exist and differ, and it may not close a circle; binding a bound route again is fine.
/// Messages already in a source move on at once.
pub fn bind(routes: &mut [(Route, i32)]) -> AclResult<()> {
    let mut st = state();
    let mut first = None;
    for (route, status) in routes.iter_mut() {
        let (s, d) = *route;
        let why = if !st.queues.contains_key(&s) {
            Some(no_queue(s))
        } else if !st.queues.contains_key(&d) {
            Some(no_queue(d))
        } else if s == d {
            Some(invalid(format!("route {s} -> {d}: a queue cannot forward to itself")))
        } else if !st.routes.contains(route) && closes_a_cycle(&st.routes, *route) {
            Some(invalid(format!("route {s} -> {d} would close a circle of routes")))
        } else {
            None
        };
        match why {
            Some(e) => {
                *status = ROUTE_UNBIND;
                first.get_or_insert(e);
            }
            None => {
                if !st.routes.contains(route) {
                    st.routes.push(*route);
                }
                *status = ROUTE_BIND;
            }
        }
    }
    forward(&mut st);
    CHANGED.notify_all();
    first.map_or(Ok(()), Err)
}

/// `acltdtUnbindQueueRoutes`: unbinds each route (status 0); a route that is not bound is a
/// failure (100000), reported after the others are unbound.
pub fn unbind(routes: &mut [(Route, i32)]) -> AclResult<()> {
    let mut st = state();
    let mut first = None;
    for (route, status) in routes.iter_mut() {
        match st.routes.iter().position(|r| r == route) {
            Some(i) => {
                st.routes.remove(i);
            }
            None => {
                first
                    .get_or_insert_with(|| invalid(format!("route {} -> {} is not bound", route.0, route.1)));
            }
        }
        *status = ROUTE_UNBIND;
    }
    CHANGED.notify_all();
    first.map_or(Ok(()), Err)
}

/// `acltdtQueryQueueRoutes`: the bound routes from `src`, to `dst`, or both, by `mode`; none is
/// abnormal here (a queue on a route cannot be destroyed), so that mode finds nothing.
pub fn query(mode: i32, src: u32, dst: u32) -> AclResult<Vec<(Route, i32)>> {
    let st = state();
    let keep = |&(s, d): &Route| match mode {
        QUERY_SRC => s == src,
        QUERY_DST => d == dst,
        QUERY_SRC_AND_DST => s == src && d == dst,
        _ => false,
    };
    if ![QUERY_SRC, QUERY_DST, QUERY_SRC_AND_DST, QUERY_ABNORMAL].contains(&mode) {
        return Err(invalid(format!("mode {mode} is not an acltdtQueueRouteQueryMode")));
    }
    Ok(st.routes.iter().filter(|r| keep(r)).map(|r| (*r, ROUTE_BIND)).collect())
}

/// `acltdtGrantQueue`: queues are this process's; the creating process holds every permission
/// already, so granting to itself is checked and done, and granting to another process is not
/// supported (200006, the header's code): no other process can reach a queue of this one.
pub fn grant(qid: u32, pid: i32, permission: u32, own_pid: i32) -> AclResult<()> {
    if !exists(qid) {
        return Err(no_queue(qid));
    }
    if permission == 0 || permission & !PERMISSION_ALL != 0 {
        return Err(invalid(format!(
            "permission {permission:#x}: it is an OR of ACL_TDT_QUEUE_PERMISSION_MANAGE, _DEQUEUE and _ENQUEUE"
        )));
    }
    if pid != own_pid {
        return Err(AclError::new(
            ACL_ERROR_FEATURE_UNSUPPORTED,
            format!(
                "queue {qid} cannot be granted to process {pid}: queues are local to the process that made them"
            ),
        ));
    }
    Ok(())
}

/// `acltdtAttachQueue`: the permissions this process holds on its queue (all of them).
pub fn attach(qid: u32) -> AclResult<u32> {
    if !exists(qid) {
        return Err(no_queue(qid));
    }
    Ok(PERMISSION_ALL)
}

/// How many messages the queue holds (for tests and logs).
pub fn len(qid: u32) -> AclResult<usize> {
    state().queues.get(&qid).map(|q| q.messages.len()).ok_or_else(|| no_queue(qid))
}

/// A queue's attributes as `acltdtSetQueueAttr` sets them (`acltdtQueueAttr`).
pub struct QueueAttr {
    state: Mutex<AttrState>,
}

struct AttrState {
    /// Every name set, the current one last: `acltdtGetQueueAttr` hands out a pointer to the
    /// current one, which then stays valid as long as the attributes do.
    names: Vec<CString>,
    depth: u32,
}

crate::handle_kind!(pub static QUEUE_ATTRS: TdtQueueAttr => QueueAttr, AclError);

/// `acltdtCreateQueueAttr`: no name (one is chosen at creation), depth 8.
pub fn create_attr() -> u64 {
    QUEUE_ATTRS.insert(QueueAttr {
        state: Mutex::new(AttrState { names: vec![CString::default()], depth: DEPTH_DEFAULT }),
    })
}

pub fn attr(raw: u64) -> AclResult<Arc<QueueAttr>> {
    QueueAttr::resolve(raw, "attr")
}

pub fn destroy_attr(raw: u64) -> AclResult<()> {
    QueueAttr::release(raw, "attr").map(drop)
}

impl QueueAttr {
    /// Sets the name (at most 127 bytes).
    pub fn set_name(&self, name: CString) -> AclResult<()> {
        if name.as_bytes().len() + 1 > NAME_MAX {
            return Err(invalid(format!(
                "the queue name is {} bytes long: at most {} may be",
                name.as_bytes().len(),
                NAME_MAX - 1
            )));
        }
        sync::lock(&self.state).names.push(name);
        Ok(())
    }

    /// The current name's address (NUL-terminated, valid while the attributes live).
    pub fn name_ptr(&self) -> *const std::ffi::c_char {
        sync::lock(&self.state).names.last().map_or(std::ptr::null(), |n| n.as_ptr())
    }

    pub fn set_depth(&self, depth: u32) {
        sync::lock(&self.state).depth = depth;
    }

    pub fn depth(&self) -> u32 {
        sync::lock(&self.state).depth
    }

    /// The queue these attributes describe: its name and depth.
    pub fn values(&self) -> AclResult<(String, u32)> {
        let st = sync::lock(&self.state);
        let name = st
            .names
            .last()
            .map(|n| n.to_str())
            .transpose()
            .map_err(|_| invalid("the queue name is not UTF-8"))?;
        Ok((name.unwrap_or_default().to_owned(), st.depth))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(b: u8) -> Message {
        Message::Data { data: vec![b], user: Vec::new() }
    }

    fn byte(m: Message) -> u8 {
        match m {
            Message::Data { data, .. } => data[0],
            Message::Buf(_) => panic!("a buffer"),
        }
    }

    #[test]
    fn routes_fan_out_and_wait_for_room() {
        let (a, b, c) = (create("", 2).unwrap(), create("", 2).unwrap(), create("", 2).unwrap());
        let mut r = [((a, b), 0), ((a, c), 0)];
        bind(&mut r).unwrap();
        assert_eq!(r.map(|x| x.1), [ROUTE_BIND, ROUTE_BIND]);
        for i in 0..4 {
            enqueue(a, data(i), Wait::No).map_err(|e| e.0).unwrap();
        }
        // b and c are full (2 each), a holds the other two.
        assert_eq!((len(a).unwrap(), len(b).unwrap(), len(c).unwrap()), (2, 2, 2));
        assert!(enqueue(a, data(9), Wait::No).is_err());
        assert_eq!(byte(dequeue(b, Wait::No, |_| Ok(())).unwrap()), 0);
        // Room in b alone is not enough: c is still full.
        assert_eq!(len(a).unwrap(), 2);
        assert_eq!(byte(dequeue(c, Wait::No, |_| Ok(())).unwrap()), 0);
        assert_eq!(len(a).unwrap(), 1);
        assert_eq!(query(QUERY_SRC, a, 0).unwrap().len(), 2);
        assert_eq!(query(QUERY_SRC_AND_DST, a, c).unwrap(), vec![((a, c), ROUTE_BIND)]);
        assert!(closes_a_cycle(&[(a, b), (b, c)], (c, a)));
        let mut back = [((c, a), 0)];
        assert!(bind(&mut back).is_err());
        assert_eq!(destroy(a).unwrap_err().code, ACL_ERROR_FAILURE);
        unbind(&mut r).unwrap();
        for q in [a, b, c] {
            destroy(q).unwrap();
        }
    }

    #[test]
    fn names_are_unique_and_ids_small() {
        let a = create("tdt-unit-name", 2).unwrap();
        assert_eq!(create("tdt-unit-name", 2).unwrap_err().code, ACL_ERROR_INVALID_PARAM);
        assert!(create("x", 1).is_err());
        assert!(a < QUEUES_MAX as u32);
        destroy(a).unwrap();
        assert_eq!(destroy(a).unwrap_err().code, ACL_ERROR_RT_PARAM_INVALID);
    }
}
