//! TDT channels (`acltdtChannelHandle`): bounded queues of datasets in this process, one per
//! (device, name).
//!
//! On the vendor's machine a channel is a queue between the host and a device; here both ends
//! are the host, so a send puts a deep copy of the dataset's items at the back and a receive
//! takes the front into the caller's dataset. Creating a channel whose (device, name) is open
//! already gives another handle to the same queue (a sender's and a receiver's handle meet);
//! the queue goes with its last handle.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Condvar, Mutex, Weak};

use crate::config::Settings;
use crate::error::acl_codes::{ACL_ERROR_FAILURE, ACL_ERROR_INVALID_PARAM};
use crate::error::rt_codes::{ACL_ERROR_RT_QUEUE_EMPTY, ACL_ERROR_RT_QUEUE_FULL};
use crate::error::{AclError, AclResult};
use crate::handle::Handle;
use crate::handle_kind;
use crate::runtime::device;
use crate::runtime::tdt::dataset::ItemCopy;
use crate::runtime::tdt::{Wait, block};
use crate::sync;

/// Capacities `acltdtCreateChannelWithCapacity` accepts (the vendor's documented range).
pub const CAPACITY_MIN: usize = 2;
pub const CAPACITY_MAX: usize = 8192;
/// The capacity of a channel made by `acltdtCreateChannel`: the vendor's is a TDT channel that
/// buffers on the device without a stated bound; here it is the largest capacity there is.
pub const DEFAULT_CAPACITY: usize = CAPACITY_MAX;
/// Longest name, its NUL included (the vendor's `RT_MQ_MAX_NAME_LEN`).
pub const NAME_MAX: usize = 128;

/// One sent dataset: its items, copied.
pub type Message = Vec<ItemCopy>;

struct Channel {
    key: Key,
    capacity: usize,
    state: Mutex<State>,
    /// Notified on every change of `state`.
    changed: Condvar,
}

struct State {
    messages: VecDeque<Message>,
    stopped: bool,
    /// Open handles (the channel leaves `OPEN` with its last).
    handles: usize,
}

/// What a handle names: the channel it opened.
pub struct ChannelHandle {
    channel: Arc<Channel>,
}

handle_kind!(pub static CHANNELS: TdtChannel => ChannelHandle, AclError);

/// The open channels by (device, name).
static OPEN: Mutex<Option<HashMap<Key, Weak<Channel>>>> = Mutex::new(None);

/// A channel's device and name.
type Key = (u32, String);

fn invalid(message: impl Into<String>) -> AclError {
    AclError::new(ACL_ERROR_INVALID_PARAM, message)
}

/// Opens the channel `name` of `device` (creating it with `capacity` if it is not open; an
/// open one keeps the capacity it was made with) and gives a handle to it.
pub fn create(device_id: u32, name: &str, capacity: Option<usize>, s: &Settings) -> AclResult<u64> {
    let id =
        i32::try_from(device_id).map_err(|_| invalid(format!("deviceId {device_id} is out of range")))?;
    device::check_id(id, s)?;
    if name.len() + 1 > NAME_MAX {
        return Err(invalid(format!("name is {} bytes long: at most {} may be", name.len(), NAME_MAX - 1)));
    }
    if let Some(c) = capacity
        && !(CAPACITY_MIN..=CAPACITY_MAX).contains(&c)
    {
        return Err(invalid(format!("capacity {c} is outside [{CAPACITY_MIN}, {CAPACITY_MAX}]")));
    }
    let key = (device_id, name.to_owned());
    let mut open = sync::lock(&OPEN);
    let open = open.get_or_insert_with(HashMap::new);
    let channel = match open.get(&key).and_then(Weak::upgrade) {
        Some(c) => {
            if capacity.is_some_and(|want| want != c.capacity) {
                log::info!(
                    target: crate::logging::TARGET,
                    "channel {name:?} of device {device_id} is open with capacity {}: the new handle shares it",
                    c.capacity
                );
            }
            c
        }
        None => {
            let c = Arc::new(Channel {
                key: key.clone(),
                capacity: capacity.unwrap_or(DEFAULT_CAPACITY),
                state: Mutex::new(State { messages: VecDeque::new(), stopped: false, handles: 0 }),
                changed: Condvar::new(),
            });
            open.insert(key, Arc::downgrade(&c));
            c
        }
    };
    sync::lock(&channel.state).handles += 1;
    Ok(CHANNELS.insert(ChannelHandle { channel }))
}

fn get(raw: u64) -> AclResult<Arc<ChannelHandle>> {
    ChannelHandle::resolve(raw, "handle")
}

/// Closes a handle; the channel's last one also stops it (a thread still blocked in it returns)
/// and drops what it holds.
pub fn destroy(raw: u64) -> AclResult<()> {
    let h = ChannelHandle::release(raw, "handle")?;
    let mut open = sync::lock(&OPEN);
    let last = {
        let mut st = sync::lock(&h.channel.state);
        st.handles -= 1;
        st.handles == 0
    };
    if last {
        if let Some(m) = open.as_mut() {
            m.remove(&h.channel.key);
        }
        stop_channel(&h.channel);
        sync::lock(&h.channel.state).messages.clear();
    }
    Ok(())
}

fn stop_channel(c: &Channel) {
    let mut st = sync::lock(&c.state);
    st.stopped = true;
    c.changed.notify_all();
}

fn stopped(c: &Channel) -> AclError {
    AclError::new(
        ACL_ERROR_FAILURE,
        format!("channel {:?} of device {} is stopped (acltdtStopChannel)", c.key.1, c.key.0),
    )
}

/// `acltdtSendTensor`: appends `message`, waiting for room as `wait` says; full when the time
/// runs out: 207014 (`ACL_ERROR_RT_QUEUE_FULL`); stopped: 500001.
pub fn send(raw: u64, message: Message, wait: Wait) -> AclResult<()> {
    let h = get(raw)?;
    let c = &h.channel;
    let mut message = Some(message);
    block(
        &c.changed,
        sync::lock(&c.state),
        wait,
        |st| {
            if st.stopped {
                return Some(Err(stopped(c)));
            }
            if st.messages.len() < c.capacity {
                st.messages.push_back(message.take().unwrap_or_default());
                c.changed.notify_all();
                return Some(Ok(()));
            }
            None
        },
        || {
            AclError::benign(
                ACL_ERROR_RT_QUEUE_FULL,
                format!("channel {:?} is full ({} datasets)", c.key.1, c.capacity),
            )
        },
    )
}

/// `acltdtReceiveTensor`: takes the oldest dataset, waiting for one as `wait` says; empty when
/// the time runs out: 207013 (`ACL_ERROR_RT_QUEUE_EMPTY`); stopped: 500001.
pub fn receive(raw: u64, wait: Wait) -> AclResult<Message> {
    let h = get(raw)?;
    let c = &h.channel;
    block(
        &c.changed,
        sync::lock(&c.state),
        wait,
        |st| {
            if st.stopped {
                return Some(Err(stopped(c)));
            }
            let m = st.messages.pop_front()?;
            c.changed.notify_all();
            Some(Ok(m))
        },
        || AclError::benign(ACL_ERROR_RT_QUEUE_EMPTY, format!("channel {:?} is empty", c.key.1)),
    )
}

/// `acltdtStopChannel`: wakes every thread blocked in a send or receive of the channel, which
/// return 500001, as does every later send or receive.
pub fn stop(raw: u64) -> AclResult<()> {
    stop_channel(&get(raw)?.channel);
    Ok(())
}

/// `acltdtCleanChannel`: drops every dataset the channel holds.
pub fn clean(raw: u64) -> AclResult<()> {
    let h = get(raw)?;
    let mut st = sync::lock(&h.channel.state);
    st.messages.clear();
    h.channel.changed.notify_all();
    Ok(())
}

/// `acltdtQueryChannelSize`: how many datasets the channel holds.
pub fn size(raw: u64) -> AclResult<usize> {
    let h = get(raw)?;
    Ok(sync::lock(&h.channel.state).messages.len())
}
