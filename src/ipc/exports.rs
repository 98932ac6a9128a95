//! The exporter's table: for each secret, what it gives, to whom, and how many imports of it
//! are live. Pure bookkeeping (no I/O), so the rules are tested without sockets.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use super::errors::param_invalid;
use super::importers::Importers;
use super::offer::{ExportKind, Offer};
use super::wire::{Reply, Status};
use crate::error::AclResult;
use crate::sys::memfd::MemFd;
use crate::sys::socket::PeerCredentials;

/// How many withdrawn secrets are remembered, so that importing one says "revoked" rather than
/// "unknown" (bounded, like the memory registry's freed ranges).
const RETIRED_REMEMBERED: usize = 4096;

struct Entry {
    kind: ExportKind,
    /// `None` once revoked: the exporter no longer holds the file open for importers.
    fd: Option<Arc<MemFd>>,
    offset: u64,
    len: u64,
    device: i32,
    notify_id: u32,
    validate_pid: bool,
    allowed: HashSet<i32>,
    importers: Arc<Importers>,
}

/// What the broker should answer an import request with.
pub(super) enum Decision {
    /// Send the reply with this descriptor. The import is already counted as a live import:
    /// call [`Exports::link_closed`] if it cannot be delivered.
    Grant(Arc<MemFd>, Reply),
    Refuse(Status),
}

#[derive(Default)]
pub(super) struct Exports {
    live: HashMap<u128, Entry>,
    /// Revoked entries that still have live links (kept for their callbacks and counts).
    revoked: HashMap<u128, Entry>,
    retired: VecDeque<u128>,
    /// Shareable ids (see `shareable.rs`) and the secrets they were published for, both ways;
    /// an id is forgotten with its secret (when the secret falls out of `retired`).
    ids: HashMap<u64, u128>,
    id_of: HashMap<u128, u64>,
}

impl Exports {
    pub fn contains(&self, secret: u128) -> bool {
        self.live.contains_key(&secret)
            || self.revoked.contains_key(&secret)
            || self.retired.contains(&secret)
    }

    pub fn insert(&mut self, secret: u128, offer: Offer) {
        let entry = Entry {
            kind: offer.kind,
            fd: Some(offer.fd),
            offset: offer.offset,
            len: offer.len,
            device: offer.device,
            notify_id: offer.notify_id,
            validate_pid: offer.validate_pid,
            allowed: HashSet::new(),
            importers: offer.importers,
        };
        self.live.insert(secret, entry);
    }

    /// Publishes the live export `secret` under shareable id `id`: false if `id` is taken (draw
    /// another) or the secret is not live or already has an id.
    pub fn publish(&mut self, secret: u128, id: u64) -> bool {
        if self.ids.contains_key(&id) || self.id_of.contains_key(&secret) || !self.live.contains_key(&secret)
        {
            return false;
        }
        self.ids.insert(id, secret);
        self.id_of.insert(secret, id);
        true
    }

    /// The secret shareable id `id` was published for, if it is remembered.
    pub fn secret_of(&self, id: u64) -> Option<u128> {
        self.ids.get(&id).copied()
    }

    pub fn allow(&mut self, secret: u128, pids: &[i32]) -> AclResult<()> {
        match self.live.get_mut(&secret) {
            Some(entry) => {
                entry.allowed.extend(pids.iter().copied());
                Ok(())
            }
            None => Err(self.not_exported(secret)),
        }
    }

    pub fn revoke(&mut self, secret: u128) -> AclResult<()> {
        let mut entry = self.live.remove(&secret).ok_or_else(|| self.not_exported(secret))?;
        entry.fd = None;
        entry.allowed.clear();
        if entry.importers.live() > 0 {
            self.revoked.insert(secret, entry);
        }
        self.retire(secret);
        Ok(())
    }

    /// Live import links of `secret` (revoked exports included).
    pub fn links(&self, secret: u128) -> usize {
        self.live.get(&secret).or_else(|| self.revoked.get(&secret)).map_or(0, |e| e.importers.live())
    }

    /// The verdict on a request for `secret` from `peer`; `own_uid` is the exporter's user.
    pub fn decide(&mut self, secret: u128, peer: PeerCredentials, own_uid: u32) -> Decision {
        let Some(entry) = self.live.get_mut(&secret) else {
            let revoked = self.revoked.contains_key(&secret) || self.retired.contains(&secret);
            return Decision::Refuse(if revoked { Status::Revoked } else { Status::UnknownKey });
        };
        if entry.validate_pid {
            if !entry.allowed.contains(&peer.pid) {
                return Decision::Refuse(Status::NotPermitted);
            }
        } else if peer.uid != own_uid && peer.uid != 0 {
            // Without a whitelist, the socket itself is the only gate, and abstract sockets
            // have no permissions: admit the exporter's user (and root, who could anyway).
            return Decision::Refuse(Status::OtherUser);
        }
        let Some(fd) = entry.fd.clone() else {
            return Decision::Refuse(Status::Revoked);
        };
        entry.importers.joined();
        let reply = Reply {
            status: Status::Ok,
            kind: Some(entry.kind),
            device: entry.device,
            notify_id: entry.notify_id,
            offset: entry.offset,
            len: entry.len,
        };
        Decision::Grant(fd, reply)
    }

    /// An import link of `secret` ended; `died` when the importer's process ended without
    /// releasing it.
    pub fn link_closed(&mut self, secret: u128, died: bool) {
        let (entry, revoked) = match self.live.get(&secret) {
            Some(e) => (e, false),
            None => match self.revoked.get(&secret) {
                Some(e) => (e, true),
                None => return,
            },
        };
        entry.importers.left(died);
        if revoked && entry.importers.live() == 0 {
            self.revoked.remove(&secret);
        }
    }

    fn retire(&mut self, secret: u128) {
        if self.retired.len() == RETIRED_REMEMBERED {
            if let Some(old) = self.retired.pop_front() {
                if let Some(id) = self.id_of.remove(&old) {
                    self.ids.remove(&id);
                }
            }
        }
        self.retired.push_back(secret);
    }

    fn not_exported(&self, secret: u128) -> crate::error::AclError {
        if self.revoked.contains_key(&secret) || self.retired.contains(&secret) {
            param_invalid("this IPC key was already revoked (its notify destroyed or its memory closed)")
        } else {
            param_invalid("this process does not export that IPC key")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn offer(validate_pid: bool, importers: Arc<Importers>) -> Offer {
        Offer {
            kind: ExportKind::Memory,
            fd: Arc::new(MemFd::create("ascendless-test", 4096).unwrap()),
            offset: 0,
            len: 4096,
            device: 3,
            notify_id: 0,
            validate_pid,
            importers,
        }
    }

    fn peer(pid: i32, uid: u32) -> PeerCredentials {
        PeerCredentials { pid, uid, gid: uid }
    }

    fn refused(d: Decision) -> Option<Status> {
        match d {
            Decision::Refuse(s) => Some(s),
            Decision::Grant(..) => None,
        }
    }

    #[test]
    fn the_whitelist_decides_when_pids_are_validated() {
        let mut t = Exports::default();
        t.insert(1, offer(true, Arc::default()));
        assert_eq!(refused(t.decide(1, peer(100, 5), 5)), Some(Status::NotPermitted));
        t.allow(1, &[100, 101]).unwrap();
        let Decision::Grant(_, reply) = t.decide(1, peer(100, 5), 5) else { panic!("refused") };
        assert_eq!((reply.kind, reply.device, reply.len), (Some(ExportKind::Memory), 3, 4096));
        assert_eq!(t.links(1), 1);
        // A whitelisted pid of another user was chosen by the exporter: admitted.
        assert!(refused(t.decide(1, peer(101, 6), 5)).is_none());
        assert_eq!(t.links(1), 2);
    }

    #[test]
    fn without_validation_only_the_same_user_or_root_may_import() {
        let mut t = Exports::default();
        t.insert(1, offer(false, Arc::default()));
        assert!(refused(t.decide(1, peer(100, 5), 5)).is_none());
        assert!(refused(t.decide(1, peer(100, 0), 5)).is_none());
        assert_eq!(refused(t.decide(1, peer(100, 6), 5)), Some(Status::OtherUser));
    }

    #[test]
    fn unknown_and_revoked_keys_are_told_apart() {
        let mut t = Exports::default();
        t.insert(1, offer(false, Arc::default()));
        assert_eq!(refused(t.decide(2, peer(100, 5), 5)), Some(Status::UnknownKey));
        t.revoke(1).unwrap();
        assert_eq!(refused(t.decide(1, peer(100, 5), 5)), Some(Status::Revoked));
        assert!(t.revoke(1).unwrap_err().message.contains("already revoked"));
        assert!(t.allow(1, &[5]).unwrap_err().message.contains("already revoked"));
        assert!(t.revoke(2).unwrap_err().message.contains("does not export"));
        assert!(t.contains(1) && !t.contains(2));
    }

    #[test]
    fn revoked_exports_keep_counting_their_importers_and_their_deaths() {
        let importers = Arc::new(Importers::default());
        let mut t = Exports::default();
        t.insert(1, offer(false, Arc::clone(&importers)));
        assert!(refused(t.decide(1, peer(100, 5), 5)).is_none());
        assert!(refused(t.decide(1, peer(101, 5), 5)).is_none());
        t.revoke(1).unwrap();
        assert_eq!((t.links(1), importers.live()), (2, 2));
        t.link_closed(1, true);
        assert!(!importers.orphaned(), "one importer is still alive");
        t.link_closed(1, false);
        assert!(importers.orphaned(), "an importer died and nobody is left");
        assert_eq!(t.links(1), 0);
        assert!(t.revoked.is_empty(), "the last link let go of the revoked entry");
        t.link_closed(1, true);
        assert_eq!(importers.live(), 0);
    }

    #[test]
    fn shareable_ids_name_one_live_export_and_are_forgotten_with_it() {
        let mut t = Exports::default();
        t.insert(1, offer(false, Arc::default()));
        t.insert(2, offer(false, Arc::default()));
        assert!(!t.publish(3, 10), "not an export");
        assert!(t.publish(1, 10));
        assert!(!t.publish(2, 10), "id taken");
        assert!(!t.publish(1, 11), "one id per export");
        assert_eq!((t.secret_of(10), t.secret_of(11)), (Some(1), None));
        t.revoke(1).unwrap();
        assert_eq!(t.secret_of(10), Some(1), "a revoked export's id still says revoked");
        for s in 100..(100 + RETIRED_REMEMBERED as u128) {
            t.insert(s, offer(false, Arc::default()));
            t.revoke(s).unwrap();
        }
        assert_eq!(t.secret_of(10), None, "forgotten with its secret");
        assert!(t.ids.len() <= RETIRED_REMEMBERED + t.live.len());
    }

    #[test]
    fn retired_secrets_are_bounded() {
        let mut t = Exports::default();
        for s in 0..(RETIRED_REMEMBERED as u128 + 10) {
            t.insert(s, offer(false, Arc::default()));
            t.revoke(s).unwrap();
        }
        assert_eq!(t.retired.len(), RETIRED_REMEMBERED);
        assert!(!t.contains(0) && t.contains(RETIRED_REMEMBERED as u128 + 9));
    }
}
